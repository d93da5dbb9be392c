"""The compositor path of the preview: stage-by-stage images equal the fused pipeline's, an
edit recomputes only what changed and what lies downstream, an undo is answered from the
caches, images live under a memory budget, and compiled kernels survive the process."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.isolate import isolate
from pixelweave.engine.lower import lowering_count
from pixelweave.engine.runtime.jit import clear_memory_cache
from pixelweave.nodes.compositor import Compositor
from pixelweave.nodes.document import Document, load_document
from pixelweave.nodes.editing import EditSession
from pixelweave.nodes.image_cache import ImageCache, default_budget
from pixelweave.nodes.inspection import inspect_document
from pixelweave.nodes.pipeline_build import build_document
from pixelweave.nodes.preview import PreviewComputer

import pixelweave as pw
from tests.nodes.document_samples import blur_gamma_session

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "resources" / "examples"
SCALE = 4  # every example at a quarter of its sample images' size


def _downstream(doc: Document, node_id: str) -> set[str]:
    found, grew = {node_id}, True
    while grew:
        grew = False
        for n in doc.nodes:
            if n.id not in found and any((n.source(p) or ("",))[0] in found for p in n.inputs):
                found.add(n.id)
                grew = True
    return found


def _fused(doc: Document, compositor: Compositor) -> dict[str, np.ndarray]:
    """The fused, scheduled pipeline's outputs (compiled as test_examples.py compiles it, so
    in one session the code comes from the cache keyed before lowering)."""
    built = build_document(doc, check_lowering=False)
    images = {i: compositor.input_image(doc, i, *built.input_format(i), SCALE)[0] for i in built.input_ids}
    return built.run(images)


@pytest.mark.parametrize("example", sorted(p.stem for p in EXAMPLES.glob("*.json")))
def test_stage_by_stage_equals_the_fused_pipeline(example: str) -> None:
    doc = load_document(EXAMPLES / f"{example}.json")
    compositor = Compositor()
    fused = _fused(doc, compositor)
    for output_id, expected in fused.items():
        image, _ = compositor.compute(doc, output_id, scale=SCALE)
        assert image.dtype == expected.dtype and image.shape == expected.shape
        np.testing.assert_array_equal(image, expected, err_msg=f"{example}: output `{output_id}`")



def test_an_edit_reruns_only_the_changed_node_and_downstream_and_undo_hits_the_cache() -> None:
    session = blur_gamma_session()
    computer = PreviewComputer()
    stats = computer.compositor.stats
    first = computer.compute(session.document, "output", scale=SCALE)
    assert first.runs >= 4 and first.compiles + stats.kernel_hits >= 4
    assert computer.compute(session.document, "output", scale=SCALE).runs == 0  # nothing changed

    session.set_schedule("gamma", {"out": [["vectorize", "x", 4]]})
    scheduled = computer.compute(session.document, "output", scale=SCALE)
    assert scheduled.runs == 0 and scheduled.compiles == 0  # a schedule never changes the picture
    np.testing.assert_array_equal(scheduled.array, first.array)

    def nodes_run(result) -> set[str]:
        return {name.split(".", 1)[0] for name in stats.ran[len(stats.ran) - result.runs :]}

    session.set_param("gamma", "gamma", 1.5)
    regamma = computer.compute(session.document, "output", scale=SCALE)
    assert nodes_run(regamma) == _downstream(session.document, "gamma") == {"gamma", "output"}
    assert regamma.compiles <= 1  # the gamma's value may be a constant of its kernel or a Param

    session.set_param("box_blur", "radius", 3)
    blurred = computer.compute(session.document, "output", scale=SCALE)
    assert nodes_run(blurred) == {"box_blur", "gamma", "output"}
    assert not np.array_equal(blurred.array, regamma.array)

    for _ in range(3):
        session.undo()
    undone = computer.compute(session.document, "output", scale=SCALE)
    assert undone.runs == 0 and undone.compiles == 0
    np.testing.assert_array_equal(undone.array, first.array)


def test_runtime_param_values_key_the_image_not_the_kernel() -> None:
    session = EditSession()
    session.add_node("image_input", (0, 0), {"sample": "camera.png", "element": "f32", "layout": "gray"})
    session.add_node("scalar_parameter", (0, 100), {"value": 0.5, "maximum": 2.0})
    session.add_node("arithmetic", (200, 0), {"operation": "multiply"})
    session.add_node("output", (400, 0))
    session.connect("image_input", "out", "arithmetic", "a")
    session.connect("scalar_parameter", "out", "arithmetic", "b")
    session.connect("arithmetic", "out", "output", "image")
    computer = PreviewComputer()
    half = computer.compute(session.document, "output", scale=SCALE)
    session.set_param("scalar_parameter", "value", 1.5)
    more = computer.compute(session.document, "output", scale=SCALE)
    assert more.compiles == 0 and more.runs >= 2  # new values, same kernels
    assert not np.array_equal(more.array, half.array)
    session.undo()
    assert computer.compute(session.document, "output", scale=SCALE).runs == 0


def test_images_are_evicted_least_recently_used_under_the_budget() -> None:
    cache = ImageCache(budget=3000)
    box = ((0, 10), (0, 10))
    for name in "abc":
        cache.put(name, np.zeros((10, 10), np.float64), box)  # 800 bytes each
    assert cache.get("a", box) is not None  # a is now the most recently used
    cache.put("d", np.zeros((10, 10), np.float64), box)
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    assert cache.bytes <= 3000 and cache.evictions == 1
    assert cache.get("a", ((2, 3), (4, 5))).shape == (5, 3)  # a window inside is a view
    assert cache.get("a", ((0, 11), (0, 10))) is None  # one reaching outside is not there
    cache.put("huge", np.zeros(1000, np.float64), ((0, 1000),))  # larger than the budget: not kept
    assert "huge" not in cache


def test_a_tiny_budget_recomputes_but_gives_the_same_picture(monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_PREVIEW_MEMORY", "0.001")  # MiB
    assert default_budget() == 1048
    computer = PreviewComputer()
    session = blur_gamma_session()
    first = computer.compute(session.document, "output", scale=SCALE)
    again = computer.compute(session.document, "output", scale=SCALE)
    assert again.runs == first.runs and again.compiles == 0
    assert computer.compositor.images.bytes <= 1048
    np.testing.assert_array_equal(again.array, first.array)
    monkeypatch.setenv("PIXELWEAVE_PREVIEW_MEMORY", "lots")
    with pytest.raises(ValueError, match="PIXELWEAVE_PREVIEW_MEMORY must be a number of MiB"):
        default_budget()
    monkeypatch.delenv("PIXELWEAVE_PREVIEW_MEMORY")
    assert 0 < default_budget() < os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_kernels_come_from_the_disk_cache_in_a_new_process(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    program = (
        "import json\n"
        "from pixelweave.engine.lower import lowering_count\n"
        "from pixelweave.nodes.document import read_document\n"
        "from pixelweave.nodes.preview import PreviewComputer\n"
        f"doc = read_document({str(EXAMPLES / 'unsharp_mask.json')!r})\n"
        f"result = PreviewComputer().compute(doc, 'result', scale={SCALE})\n"
        "print(json.dumps({'compiles': result.compiles, 'runs': result.runs, 'lowerings': lowering_count(),"
        " 'sum': float(result.array.astype('float64').sum())}))\n"
    )
    reports = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ),
            check=True,
        )
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = reports
    assert cold["compiles"] >= 1 and cold["lowerings"] >= 1
    assert warm["compiles"] == 0 and warm["lowerings"] == 0 and warm["runs"] == cold["runs"]
    assert warm["sum"] == cold["sum"]


def test_isolated_stages_with_equal_definitions_share_a_kernel_key() -> None:
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.Float(32), 2, "picture")
    down = []
    source: object = image
    for level in range(3):
        f = pw.Func(f"level{level}")
        f[x, y] = (source[2 * x, y] + source[2 * x + 1, y]) * 0.5  # type: ignore[index]
        down.append(f)
        source = f
    keys = [isolate(f).pipeline.structural_key() for f in down]
    assert keys[1] == keys[2]  # both read a Func of the same type: one kernel
    assert keys[0] == keys[1]  # reading an image or a Func: the same input to the stage
    wider = pw.Func("wider")
    wider[x, y] = (down[0][2 * x, y] + down[0][2 * x + 2, y]) * 0.5
    assert isolate(wider).pipeline.structural_key() != keys[0]


def test_the_inspector_takes_the_loop_nest_of_compiled_code_without_lowering(tmp_path, monkeypatch):
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    doc = load_document(EXAMPLES / "unsharp_mask.json")
    fresh = inspect_document(doc)  # nothing compiled yet: it lowers
    built = build_document(doc, check_lowering=False)
    images = built.sample_inputs()
    built.runner.compile(built.output_sizes(images))  # what the editor does in the background
    clear_memory_cache()  # as after reopening: the record comes from disk
    before = lowering_count()
    again = inspect_document(doc, statement=False)
    assert lowering_count() == before
    invented = re.compile(r"\bv\d+\b")  # split names the engine numbers as it goes
    assert again.ok and invented.sub("v", again.loop_nest) == invented.sub("v", fresh.loop_nest)


def test_funcs_the_fused_pipeline_inlines_are_inlined_within_their_node() -> None:
    session = blur_gamma_session()
    computer = PreviewComputer()
    compositor = computer.compositor
    result = computer.compute(session.document, "output", scale=SCALE)
    graph, _ = compositor.built_graph(session.document, "output")
    funcs = {f.name(): f for f in pw.Pipeline([graph.nodes["output"].outputs["out"].func]).funcs}
    # the box blur's boundary condition and its rows are inline in the fused pipeline: no
    # image of their own, computed inside the kernel of the blur's output
    assert {n for n, f in funcs.items() if compositor.inlined(f)} == {"box_blur.bounded", "box_blur.rows"}
    assert compositor.stats.ran == ["image_input.out", "box_blur.out", "gamma.out", "output.out"]
    funcs["box_blur.rows"].compute_root()  # scheduled at root: an image of its own
    assert not compositor.inlined(funcs["box_blur.rows"])
    fused = _fused(session.document, compositor)["output"]
    np.testing.assert_array_equal(result.array, fused)


def test_a_box_narrower_than_a_vector_falls_back_to_guarded_tails() -> None:
    session = blur_gamma_session()
    session.set_schedule("gamma", {"out": [["vectorize", "x", 64]]})
    computer = PreviewComputer()
    compositor = computer.compositor
    image, note = compositor.compute(session.document, "output", scale=64)  # 8x8: narrower than 64 lanes
    assert image.shape == (8, 8) and "gamma" not in note  # the schedule is still used, with guarded tails
    session.set_schedule("gamma", {})
    unscheduled, _ = Compositor().compute(session.document, "output", scale=64)
    np.testing.assert_array_equal(image, unscheduled)


def test_a_computation_cancelled_while_kernels_compile_leaves_a_usable_compositor() -> None:
    class Stop(Exception):
        pass

    session = blur_gamma_session()
    compositor = Compositor()
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) == 3:  # after the first stage ran, while later kernels may still compile
            raise Stop

    with pytest.raises(Stop):
        compositor.compute(session.document, "output", scale=SCALE, check=check)
    before = compositor.stats.compiles + compositor.stats.kernel_hits
    image, _ = compositor.compute(session.document, "output", scale=SCALE)
    fresh, _ = Compositor().compute(session.document, "output", scale=SCALE)
    np.testing.assert_array_equal(image, fresh)
    assert compositor.stats.runs == len(compositor.stats.ran) and before >= 1


def test_a_runtime_parameter_the_previewed_node_does_not_read_is_left_out():
    """A clamp boundary condition keeps its `constant` run-time parameter, which its Func does
    not read: the preview passes only the Params the node's pipeline has."""
    doc = Document("Clamp")
    doc.add_node("image_input", "photo", {"element": "u8", "layout": "gray", "sample": "camera.png"}, (0, 0))
    doc.add_node("boundary_condition", "edge", {"mode": "clamp"}, (200, 0))
    doc.add_node("output", "result", {"element": "u8"}, (400, 0))
    doc.connect("photo", "edge", "image")
    doc.connect("edge", "result", "image")
    built = build_document(doc)
    expected = built.run(built.sample_inputs())["result"]
    previews = PreviewComputer()
    for node_id in ("edge", "result"):
        assert np.array_equal(previews.compute(doc, node_id).array, expected)


def _kernel_keys(compositor: Compositor, doc: Document, node_id: str) -> set[str]:
    """The structural keys of the stage kernels that computing node_id needs (with shifted tails)."""
    graph, _ = compositor.built_graph(doc, node_id)
    funcs = pw.Pipeline([next(iter(graph.nodes[node_id].outputs.values())).func]).funcs
    return {
        isolate(f, guard_tails=False, inline=compositor.inlined).pipeline.structural_key()
        for f in funcs
        if not compositor.inlined(f)
    }


def test_a_structural_edit_compiles_only_the_kernels_whose_structure_is_new(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    session = blur_gamma_session()
    computer = PreviewComputer()
    opened = computer.compute(session.document, "output", scale=SCALE)
    before = _kernel_keys(computer.compositor, session.document, "output")
    assert opened.compiles == len(before)  # a fresh cache: every kernel once

    session.set_param("box_blur", "radius", 3)
    edited = computer.compute(session.document, "output", scale=SCALE)
    after = _kernel_keys(computer.compositor, session.document, "output")
    new = after - before
    assert len(new) == 1 and len(after) == len(before)  # only the blur's kernel changed
    assert edited.compiles == len(new) and edited.runs == 3  # the blur and what reads it run again

    session.set_param("box_blur", "radius", 2)
    back = computer.compute(session.document, "output", scale=SCALE)
    assert back.compiles == 0 and back.runs == 0  # both kernels and images are kept
    np.testing.assert_array_equal(back.array, opened.array)


def test_two_overlapping_computations_each_use_their_own_run_time_values() -> None:
    """Building the graph sets the kept nodes' Params; a second call (another thread) that
    builds before the first has read its values must not change what the first computes.
    The first call is held right after its build until the second has built (or 2 s)."""
    import threading

    session = blur_gamma_session()
    first_doc = Document.from_json(session.document.to_json())
    session.set_param("gamma", "gamma", 2.0)
    second_doc = Document.from_json(session.document.to_json())
    expected = [Compositor().compute(d, "output", scale=SCALE)[0] for d in (first_doc, second_doc)]

    compositor = Compositor()
    compositor.compute(first_doc, "output", scale=SCALE)  # both share the kept nodes from now on
    compositor.images.clear()
    first_built, second_built = threading.Event(), threading.Event()
    plain = compositor.input_image

    def held_input_image(doc, *args):
        if doc is first_doc and not first_built.is_set():
            first_built.set()
            second_built.wait(2.0)
        elif doc is second_doc:
            second_built.set()
        return plain(doc, *args)

    compositor.input_image = held_input_image
    results: dict[str, np.ndarray] = {}

    def compute(name: str, doc: Document) -> None:
        results[name] = compositor.compute(doc, "output", scale=SCALE)[0]

    first = threading.Thread(target=compute, args=("first", first_doc))
    first.start()
    assert first_built.wait(60)
    second = threading.Thread(target=compute, args=("second", second_doc))
    second.start()
    first.join(120)
    second.join(120)
    np.testing.assert_array_equal(results["first"], expected[0])
    np.testing.assert_array_equal(results["second"], expected[1])
    assert not np.array_equal(expected[0], expected[1])
