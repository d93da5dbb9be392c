"""Every example document in resources/examples/: it loads, it is written canonically, its
compiled output on (a crop of) its own sample images equals the reference evaluator's,
and its hand schedule changes the loop nest (parallel, vectorized). A new example is
tested by dropping it into the folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.engine.stmt_printer import loop_nest_to_string
from pixelweave.nodes.document import read_document, resolve_sample
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document, open_document

from tests.conftest import ROOT

EXAMPLES_DIR = ROOT / "resources" / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.json"))
CROP_W, CROP_H = 128, 96


def test_there_are_examples():
    assert len(EXAMPLES) >= 11


@pytest.fixture(scope="module", params=EXAMPLES, ids=lambda p: p.stem)
def example(request) -> tuple[Path, BuiltDocument]:
    """The document read, checked and built with its schedules applied. (Lowering it to
    check the schedules, as open_document does, is left to the compilation below: it takes
    seconds for the deep pyramids.)"""
    return request.param, build_document(read_document(request.param), check_lowering=False)


def centre_crop(images: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A CROP_W x CROP_H window from the middle of every input, the same window for all and
    at even offsets (a Bayer mosaic keeps its pattern); the full images when their sizes
    differ or they are smaller than the window."""
    sizes = {a.shape[-2:] for a in images.values()}
    if len(sizes) != 1:
        return images
    h, w = sizes.pop()
    if h < CROP_H or w < CROP_W:
        return images
    top, left = (h - CROP_H) // 4 * 2, (w - CROP_W) // 4 * 2
    return {k: np.ascontiguousarray(a[..., top : top + CROP_H, left : left + CROP_W]) for k, a in images.items()}


def assert_agree(compiled: np.ndarray, reference: np.ndarray, what: str) -> None:
    """Floats within 1e-4 relative; integers within one level on at most 0.1 % of the values
    (compiled code fuses multiply-adds, the reference evaluator does not)."""
    assert compiled.shape == reference.shape and compiled.dtype == reference.dtype, what
    if np.issubdtype(compiled.dtype, np.floating):
        np.testing.assert_allclose(compiled, reference, rtol=1e-4, atol=1e-6, err_msg=what)
        return
    diff = np.abs(compiled.astype(np.int64) - reference.astype(np.int64))
    assert diff.max(initial=0) <= 1, f"{what}: compiled and reference differ by up to {diff.max()}"
    assert np.count_nonzero(diff) <= max(1, diff.size // 1000), f"{what}: {np.count_nonzero(diff)} values differ"


def test_example_is_described_and_canonical(example):
    path, built = example
    doc = built.document
    assert doc.name and doc.name != "Untitled" and len(doc.description) > 40
    assert path.read_text(encoding="utf-8") == doc.dumps(), "not in canonical form: load and save it"
    for node_id in built.input_ids:
        sample = doc.node(node_id).params["sample"]
        assert resolve_sample(sample, path.parent) is not None, f"input {node_id}: sample {sample!r} not found"


def test_example_is_laid_out_left_to_right(example):
    _, built = example
    doc = built.document
    x = {n.id: n.position[0] for n in doc.nodes}
    for node in doc.nodes:
        for port in node.inputs:
            source, _ = node.source(port)
            assert x[source] < x[node.id], f"node {node.id} is not right of its input {source}"


def test_example_compiled_equals_reference_and_is_scheduled(example):
    """On crops of its samples, the compiled pipeline computes what the reference evaluator
    does, and the loops it runs are the hand-scheduled ones (defaults are never parallel
    or vectorized)."""
    path, built = example
    images = centre_crop(built.sample_inputs())
    compiled = built.run(images)
    reference = built.run(images, target="reference")
    assert set(compiled) == set(built.output_ids)
    for node_id in built.output_ids:
        assert compiled[node_id].size > 0
        assert_agree(compiled[node_id], reference[node_id], f"{path.stem}: output {node_id}")
    for ids, _, fn in built.runner.compile(built.output_sizes(images)):  # cached by run() above
        nest = loop_nest_to_string(fn.lowering.loop_nest)
        assert "parallel" in nest and "vectorized" in nest, f"{path.stem}: outputs {ids} are not scheduled"
    # odd sizes, smaller than the tiles in y: the schedules guard or shift their tails
    odd = {k: np.ascontiguousarray(a[..., :45, :70]) for k, a in images.items()}
    compiled, reference = built.run(odd), built.run(odd, target="reference")
    for node_id in built.output_ids:
        assert_agree(compiled[node_id], reference[node_id], f"{path.stem}: output {node_id} of a 70x45 input")


def test_schedules_change_the_loop_nest():
    """The same check as above, made against the document without its schedules."""
    path = EXAMPLES_DIR / "blur.json"
    scheduled = open_document(path).loop_nest()
    plain = read_document(path)
    for node in plain.nodes:
        node.schedule = {}
    default = build_document(plain).loop_nest()
    assert "parallel" in scheduled and "vectorized" in scheduled
    assert "parallel" not in default and "vectorized" not in default


def test_every_node_type_used_in_examples_exists():
    """A misspelt type would be caught by loading too; this names the file at once."""
    from pixelweave.nodes.node_type import node_types

    types = node_types()
    for path in EXAMPLES:
        for node in read_document(path).nodes:
            assert node.type in types, f"{path.name}: node {node.id} has unknown type {node.type}"


def test_small_inputs_really_are_small():
    """The crop used above applies to documents whose inputs share a size."""
    images = {"a": np.zeros((3, 300, 451), np.uint8), "b": np.zeros((3, 300, 451), np.uint8)}
    cropped = centre_crop(images)
    assert all(a.shape == (3, CROP_H, CROP_W) for a in cropped.values())
    assert centre_crop({"a": images["a"], "b": np.zeros((300, 400), np.uint8)})["a"].shape == (3, 300, 451)


def test_command_line_runs_an_example_end_to_end(tmp_path):
    """`python -m pixelweave run` on the blur example with a small input writes the PNG that the
    in-process run computes."""
    path = EXAMPLES_DIR / "blur.json"
    built = open_document(path)
    (input_id,) = built.input_ids
    photo = iio.imread(ROOT / "resources" / "images" / "astronaut.png")[100:196, 200:328]
    iio.imwrite(tmp_path / "photo.png", photo)
    out = tmp_path / "out.png"
    result = subprocess.run(
        [sys.executable, "-m", "pixelweave", "run", str(path), "--input", f"{input_id}={tmp_path / 'photo.png'}", "--output",
         str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    written = iio.imread(out)
    assert written.shape == (96, 128, 3) and written.dtype == np.uint8
    expected = built.run({input_id: built.read_input(input_id, tmp_path / "photo.png")})[built.output_ids[0]]
    np.testing.assert_array_equal(written, np.moveaxis(expected, 0, -1))
