"""Schedule presets: every preset on every node of every example either gives a schedule the
engine accepts or is refused with a NodeError that says why; a sample of them compiles to
the same image as the reference evaluator."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document, open_document
from pixelweave.nodes.schedule_presets import PRESETS, preset_schedule

EXAMPLES = sorted(Path("resources/examples").glob("*.json"))


@cache
def built(stem: str) -> BuiltDocument:
    return open_document(f"resources/examples/{stem}.json")


def applied(base: BuiltDocument, node_id: str, schedule: dict, lower: bool) -> BuiltDocument:
    doc = Document.from_json(base.document.to_json())
    doc.path = base.document.path
    doc.node(node_id).schedule = {}
    for key, directives in schedule.items():
        doc.set_schedule(node_id, key, directives)
    return build_document(doc, check_lowering=lower)


def test_presets_are_listed_with_descriptions():
    assert list(PRESETS) == ["breadth-first", "fully fused", "tiled", "sliding window", "parallel+vectorized"]
    assert all(len(text) > 20 for text in PRESETS.values())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_preset_on_every_node_applies_or_says_why(path):
    """Without lowering (seconds per build on the large examples): static checks and the
    engine's verdict when each directive is applied."""
    base = built(path.stem)
    for node_id in base.graph.nodes:
        for preset in PRESETS:
            try:
                schedule = preset_schedule(base, node_id, preset, verify=False)
            except NodeError as e:
                assert e.node_id == node_id and len(e.detail) > 30, str(e)
                continue
            assert set(schedule) <= set(base.funcs()[node_id])
            applied(base, node_id, schedule, lower=False)  # DocumentError would fail the test


@pytest.mark.parametrize("stem", ["unsharp_mask", "harris_corners", "histogram_equalization"])
def test_verified_presets_lower_or_give_the_engines_reason(stem):
    base = built(stem)
    for node_id in base.graph.nodes:
        for preset in PRESETS:
            try:
                schedule = preset_schedule(base, node_id, preset)
            except NodeError as e:
                assert e.node_id == node_id, str(e)
                continue
            assert applied(base, node_id, schedule, lower=True).loop_nest()


def test_a_preset_that_collides_with_another_nodes_schedule_is_refused_with_the_engines_reason():
    """sharpen computes blur_x inside result.out's xo loop: plain loops for result remove it."""
    with pytest.raises(NodeError) as caught:
        preset_schedule(built("unsharp_mask"), "result", "breadth-first")
    assert "does not fit this pipeline" in caught.value.detail
    assert "has no loop named xo" in caught.value.detail


def test_unknown_preset_and_unfusable_node():
    with pytest.raises(NodeError, match="unknown schedule preset 'fastest'; presets: breadth-first"):
        preset_schedule(built("unsharp_mask"), "sharpen", "fastest")
    with pytest.raises(NodeError, match="fully fused, each output pixel would evaluate"):
        preset_schedule(built("canny_edges"), "canny", "fully fused", verify=False)


def test_preset_shapes():
    base = built("unsharp_mask")
    tiled = preset_schedule(base, "sharpen", "tiled")
    assert tiled["out"] == [["compute_root"], ["tile", "x", "y", "xo", "yo", "xi", "yi", 64, 32, "guard_with_if"]]
    assert tiled["blur_x"] == [["compute_at", "out", "xo"]]
    sliding = preset_schedule(base, "sharpen", "sliding window")
    assert sliding["blur_x"] == [["store_root"], ["compute_at", "out", "y"]]
    fast = preset_schedule(base, "sharpen", "parallel+vectorized")
    assert fast["out"] == [["compute_root"], ["parallel", "y"], ["vectorize", "x", 8]]
    first = preset_schedule(base, "sharpen", "breadth-first")
    assert all(first[name] == [["compute_root"]] for name in base.funcs()["sharpen"])


def small(base: BuiltDocument) -> dict[str, np.ndarray]:
    """Each input as a 70x45 image of seeded noise in its element's range."""
    rng = np.random.default_rng(5)
    images = {}
    for node_id in base.input_ids:
        layout, element = base.input_format(node_id)
        shape = (3, 45, 70) if layout == "colour" else (45, 70)
        if element == "f32":
            images[node_id] = rng.random(shape, dtype=np.float32)
        else:
            top = 255 if element == "u8" else 65535
            images[node_id] = rng.integers(0, top + 1, shape).astype(np.uint8 if top == 255 else np.uint16)
    return images


@pytest.mark.parametrize(
    ("stem", "node_id", "preset"),
    [
        ("unsharp_mask", "sharpen", "tiled"),
        ("unsharp_mask", "sharpen", "sliding window"),
        ("blur", "blur", "parallel+vectorized"),
        ("histogram_equalization", "equalize", "breadth-first"),
        ("blur", "blur", "fully fused"),
    ],
)
def test_compiled_preset_equals_the_reference(stem, node_id, preset):
    base = built(stem)
    try:
        result = applied(base, node_id, preset_schedule(base, node_id, preset), lower=True)
    except (NodeError, DocumentError) as e:
        pytest.fail(f"{stem}/{node_id}/{preset} should apply: {e}")
    images = small(result)
    compiled, reference = result.run(images), result.run(images, target="reference")
    for out_id, image in reference.items():
        got = compiled[out_id]
        assert got.shape == image.shape and got.dtype == image.dtype
        diff = np.abs(got.astype(np.float64) - image.astype(np.float64))
        assert diff.max(initial=0) <= (1 if image.dtype.kind in "ui" else 1e-4), f"{stem}/{node_id}/{preset}"
