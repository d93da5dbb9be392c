"""Lifted functions as pipeline documents (nodes/lift/to_document.py): C corpus functions and
Python prototypes lift to a document of lifted_stage nodes whose JSON text, loaded and built,
computes bit for bit what the lifted pipeline and the original C compute; a malformed
definition is refused with the entry at fault; `pixelweave lift -o` writes such a document."""

from __future__ import annotations

import copy
import importlib.util
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from pixelweave.app.cli import main
from pixelweave.nodes.document import Document, read_document
from pixelweave.nodes.errors import DocumentError
from pixelweave.nodes.lift.python_frontend import lift_python
from pixelweave.nodes.lift.report import lift_report
from pixelweave.nodes.lift.to_document import c_document, functions_in, lift_document, run_like_c
from pixelweave.nodes.lift.verify import call_original, compile_original, random_case
from pixelweave.nodes.pipeline_build import build_document

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
_spec = importlib.util.spec_from_file_location("lift_prototypes_doc", HERE / "prototypes.py")
prototypes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prototypes)

SAMPLE = [
    ("blend8.c", "blend_lighten_rgba8_opacity"),  # 8-bit interleaved, opacity
    ("blend8.c", "blend_average_rgba8_mask"),  # 8-bit interleaved, mask
    ("blend16.c", "blend_darken_plane16_mask"),  # 16-bit planar, mask
    ("blend16.c", "blend_normal_rgb16_opacity"),  # 16-bit interleaved in place, u32 opacity
    ("filters.c", "gaussian3x3"),  # a fixed 3x3 radius
    ("filters.c", "box_radius_horizontal"),  # a radius parameter: a reduction per pixel
    ("pipelines.c", "separable_blur"),  # two stages through a temporary
    ("pipelines.c", "row_buffer_blur"),  # a line buffer expanded over the rows
    ("pipelines.c", "histogram"),  # a scatter over an RDom, u32 bins
    ("pipelines.c", "last_position"),  # a last write that wins: a scatter in C's order
    ("pipelines.c", "equalize_lut"),  # a lookup table widened to 32 bits, sized as the output
    ("pipelines.c", "sum_image"),  # a returned value
    ("point.c", "planar_rgb_to_gray"),  # three planes in
    ("sse2.c", "sse2_add_saturate"),  # SSE2 intrinsics with a scalar tail
]


def _reloaded(doc: Document) -> Document:
    """The document through its JSON text, as a file would give it back."""
    return Document.loads(doc.dumps())


@pytest.mark.parametrize(("file", "name"), SAMPLE, ids=lambda v: v)
def test_c_function_document_computes_what_the_c_computes(file: str, name: str):
    report = lift_report(CORPUS / file, name, trials=1)
    lifted = c_document(report)
    doc = _reloaded(lifted.document)
    assert doc.group(name).nodes == [n.id for n in doc.nodes if n.type == "lifted_stage"]
    for node in doc.nodes_of_type("lifted_stage"):
        assert "differential: held on 1 random cases" in node.params["verification"]
        assert node.params["source"].startswith(file)
    assert "differential: held" in doc.description
    built = build_document(doc, check_lowering=False)
    lib = compile_original(CORPUS / file)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(2):
        scalars, buffers = random_case(report.lift, rng, report.lift.lifted.ranges)
        c_buffers = {k: v.copy() for k, v in buffers.items()}
        engine_buffers = {k: v.copy() for k, v in buffers.items()}
        doc_buffers = {k: v.copy() for k, v in buffers.items()}
        expected = call_original(lib, report.lift, scalars, c_buffers)
        engine_value = report.lift.engine.run(engine_buffers, scalars)
        doc_value = run_like_c(lifted, report.lift, built, doc_buffers, scalars)
        for k in buffers:
            assert np.array_equal(doc_buffers[k], engine_buffers[k]), (k, scalars)
            assert np.array_equal(doc_buffers[k], c_buffers[k]), (k, scalars)
        if report.lift.lifted.result_type is not None:
            assert doc_value == engine_value == expected


def test_conversions_are_stated():
    lifted = c_document(lift_report(CORPUS / "pipelines.c", "histogram", trials=1))
    assert lifted.document.node(lifted.inputs["hist_in"]).params["element"] == "f32"
    assert any("`hist_in` (u32) is read from a f32 image" in n for n in lifted.notes)
    assert "Note: input `hist_in` (u32)" in lifted.document.description


@pytest.mark.parametrize("name", ["composite", "blur"])
def test_python_prototype_document_computes_what_the_lifted_pipeline_computes(name: str):
    args = prototypes.examples(8)[name]
    lifted = lift_document(HERE / "prototypes.py", name)
    doc = _reloaded(lifted.document)
    built = build_document(doc, check_lowering=False)
    pipeline = lift_python(getattr(prototypes, name), args, approximate=True)
    images = {}
    for (arg, _), value in zip(pipeline.inputs.items(), args, strict=True):
        a = np.asarray(value, dtype=np.float32)
        images[lifted.inputs[arg]] = np.ascontiguousarray(np.moveaxis(a, -1, 0) if a.ndim == 3 else a)
    out = built.run(images)[lifted.outputs["result"]]
    expected = pipeline.run(*args)
    if expected.ndim == 3:  # a colour output is planar in the document
        out = np.moveaxis(out, 0, -1)
    assert out.dtype == expected.dtype and np.array_equal(out, expected)
    assert any("float64 is computed as float32" in n for n in lifted.notes)
    assert len(lifted.pipeline().outputs) == 1
    stage = doc.nodes_of_type("lifted_stage")[0]
    assert "checked against CPython" in stage.params["verification"]


def test_python_scalar_parameters_become_parameter_nodes():
    lifted = lift_document(HERE / "prototypes.py", "mandelbrot")
    doc = _reloaded(lifted.document)
    assert sorted(lifted.params) == ["height", "width", "zoom"]
    assert doc.node(lifted.params["zoom"]).params["element"] == "f32"
    built = build_document(doc, check_lowering=False)
    out = built.run({}, {"width": 12, "height": 8, "zoom": 0.5})[lifted.outputs["result"]]
    expected = lift_python(prototypes.mandelbrot, (12, 8, 0.5), approximate=True).run(12, 8, 0.5)
    assert out.shape == (8, 12) and np.array_equal(out, expected)


# ---------------------------------------------------------------------------- malformed definitions


@pytest.fixture(scope="module")
def threshold_doc() -> Document:
    return c_document(lift_report(CORPUS / "point.c", "threshold", trials=1)).document


def _with_definition(doc: Document, change) -> str:
    data = json.loads(doc.dumps())
    stage = next(n for n in data["nodes"] if n["type"] == "lifted_stage")
    change(stage["params"]["definition"])
    return json.dumps(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["pure"]["exprs"].append(["eval", "__import__('os')"]),
            "the pure definition entry {n}: unknown operation 'eval'",
        ),
        (lambda d: d["pure"]["exprs"].append(["add", 0, 99]), "operand 99 is not the index of an earlier entry"),
        (
            lambda d: d["pure"]["exprs"].extend([["const", "u8", 1], ["const", "f32", 1.0], ["add", -2 + 0, -1 + 0]]),
            "is not the index of an earlier entry",
        ),
        (lambda d: d["pure"]["exprs"].append(["const", "u8", 300]), "300 does not fit u8"),
        (lambda d: d["pure"]["exprs"].append(["intrinsic", "system", "u8"]), "unknown intrinsic 'system'"),
        (lambda d: d["pure"]["exprs"].append(["call", "z", "u8"]), "unknown input port 'z'"),
        (lambda d: d.update(layout="cube"), "unknown layout 'cube'"),
        (lambda d: d.pop("pure"), "the definition lacks 'pure'"),
        (lambda d: d["extents"]["roots"].pop(), "a gray stage needs 2 extents"),
        (lambda d: d["pure"].update(value=0), "the pure definition's value is not u8"),
    ],
)
def test_malformed_definition_is_refused_with_the_entry_at_fault(threshold_doc, change, message):
    n = len(next(n for n in threshold_doc.nodes if n.type == "lifted_stage").params["definition"]["pure"]["exprs"])
    text = _with_definition(threshold_doc, change)
    with pytest.raises(DocumentError) as e:
        build_document(Document.loads(text))
    assert message.format(n=n) in str(e.value)
    assert "parameter `definition`" in str(e.value)


def test_mismatched_operand_types_are_refused(threshold_doc):
    def change(d):
        d["pure"]["exprs"] += [["const", "u8", 1], ["const", "f32", 1.0]]
        k = len(d["pure"]["exprs"])
        d["pure"]["exprs"].append(["add", k - 2, k - 1])

    with pytest.raises(DocumentError, match="`add` needs operands of one type, got u8 and f32"):
        build_document(Document.loads(_with_definition(threshold_doc, change)))


def test_a_port_the_definition_reads_must_be_connected(threshold_doc):
    doc = copy.deepcopy(threshold_doc)
    stage = doc.nodes_of_type("lifted_stage")[0]
    doc.disconnect(stage.id, "a")
    with pytest.raises(DocumentError, match="input `a` is not connected, but the definition reads it"):
        build_document(doc)


# ---------------------------------------------------------------------------- command line


def test_cli_writes_a_document_and_prints_what_was_verified(tmp_path, capsys):
    out = tmp_path / "box.json"
    status = main(["lift", str(CORPUS / "filters.c"), "--function", "box3x3", "--trials", "2", "-o", str(out)])
    printed = capsys.readouterr().out
    assert status == 0
    assert "differential: held on 2 random cases" in printed and f"wrote {out}" in printed
    doc = read_document(out)
    assert doc.name == "box3x3" and doc.nodes_of_type("lifted_stage")
    built = build_document(doc)
    src = np.arange(12 * 10, dtype=np.uint8).reshape(10, 12)
    dst = np.zeros_like(src)
    result = built.run({"src": src, "dst_in": dst}, {"width": 12, "height": 10})[doc.nodes_of_type("output")[0].id]
    expected = (
        sum(src[1 + dy : 9 + dy, 1 + dx : 11 + dx].astype(int) for dy in (-1, 0, 1) for dx in (-1, 0, 1)) // 9
    ).astype(np.uint8)
    assert np.array_equal(result[1:9, 1:11], expected)


def test_cli_writes_a_document_of_a_prototype(tmp_path, capsys):
    out = tmp_path / "blur.json"
    assert main(["lift", str(HERE / "prototypes.py"), "--function", "blur", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "checked against CPython" in printed and "float64 is computed as float32" in printed
    assert read_document(out).nodes_of_type("lifted_stage")


def test_functions_in_lists_what_can_be_imported():
    assert "threshold" in functions_in(CORPUS / "point.c") and "float_gain" in functions_in(CORPUS / "point.c")
    assert functions_in(HERE / "prototypes.py") == ["composite", "mandelbrot", "blur", "harris"]


def test_a_lifted_stage_added_by_hand_copies_its_input_and_keeps_its_default():
    from pixelweave.nodes.catalogue.lifted import IDENTITY

    doc = Document("By hand")
    doc.add_node("image_input", "photo", {"element": "u8", "layout": "gray"}, (0, 0))
    doc.add_node("lifted_stage", "stage", position=(200, 0))
    doc.add_node("output", "result", {"element": "same", "scale": False}, (400, 0))
    doc.connect("photo", "stage", "a")
    doc.connect("stage", "result", "image")
    doc.node("stage").params["definition"]["reads"]["a"] = "a photograph"
    assert IDENTITY["reads"]["a"] == "the input"  # the default is not shared with the node
    image = np.arange(35, dtype=np.uint8).reshape(5, 7)
    out = build_document(_reloaded(doc)).run({"photo": image})["result"]
    assert np.array_equal(out, image)


NINE_INPUTS = """#include <stdint.h>
void sum9(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d, const uint8_t *e,
          const uint8_t *f, const uint8_t *g, const uint8_t *h, const uint8_t *k, uint8_t *out, int n) {
    for (int i = 0; i < n; i++) {
        out[i] = (uint8_t)(a[i] + b[i] + c[i] + d[i] + e[i] + f[i] + g[i] + h[i] + k[i]);
    }
}
"""


def test_a_stage_reading_more_than_a_node_takes_is_refused_clearly(tmp_path, capsys):
    source = tmp_path / "nine.c"
    source.write_text(NINE_INPUTS)
    out = tmp_path / "nine.json"
    assert main(["lift", str(source), "--function", "sum9", "--trials", "1", "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert "differential: held" in captured.out
    assert "cannot write `sum9` as a pipeline document: stage `out_v1` reads more than 8" in captured.err
    assert not out.exists()
