"""Generators as node types: a file of @pixelweave.generator classes loaded as node types,
used in documents (two nodes of one generator, colour and multi-output generators), its
InputScalars edited at run time without compiling, and the errors a bad file or a
generator that cannot be a node gives."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.errors import CompileError
from pixelweave.engine.runtime.jit import compile_statistics
from pixelweave.engine.stmt import ForType
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.generator_nodes import generator_type_name, load_generator_nodes
from pixelweave.nodes.node_type import forget_node_type, node_type, node_types
from pixelweave.nodes.pipeline_build import build_document

from tests.nodes.document_samples import GENERATORS, numpy_soften


@pytest.fixture
def generator_file(tmp_path: Path):
    """The generator file above, loaded; its node types are forgotten afterwards (the
    catalogue tests list every registered type)."""
    path = tmp_path / "gens.py"
    path.write_text(GENERATORS)
    types = load_generator_nodes(path)
    yield path
    for t in types:
        forget_node_type(t.type_name)


def _doc(nodes: list[dict]) -> Document:
    for n in nodes:
        n.setdefault("position", [0, 0])
        n["params"] = {**node_type(n["type"]).default_params(), **n.get("params", {})}
    return Document.from_json({"format": "pixelweave.pipeline", "version": 1, "nodes": nodes})


def _input(node_id: str, layout: str) -> dict:
    return {"id": node_id, "type": "image_input", "params": {"element": "u8", "layout": layout, "sample": ""}}


def _output(node_id: str, source: str) -> dict:
    return {"id": node_id, "type": "output", "params": {"element": "same"}, "inputs": {"image": source}}


GRAY = ((np.arange(24 * 37) * 7) % 251).astype(np.uint8).reshape(24, 37)
COLOUR = ((np.arange(3 * 20 * 30) * 13) % 256).astype(np.uint8).reshape(3, 20, 30)


def _chain() -> Document:
    return _doc(
        [
            _input("input", "gray"),
            {"id": "first", "type": "generator_soften", "params": {"gain": 2, "offset": 7},
             "inputs": {"input": "input.out"}},
            {"id": "second", "type": "generator_soften", "params": {"gain": 1, "offset": -20},
             "inputs": {"input": "first.output"}, "schedule": {"blur": [["vectorize", "x", 8]]}},
            _output("result", "second.output"),
        ]
    )  # fmt: skip


def test_a_generator_becomes_a_node_type_with_its_ports_and_parameters(generator_file):
    soften = node_types()[generator_type_name("soften")]
    assert soften.category == "Custom" and soften.title == "soften"
    assert [(p.name, p.layout, p.element) for p in soften.inputs] == [("input", "gray", "u8")]
    assert [(p.name, p.layout, p.element) for p in soften.outputs] == [("output", "gray", "u8")]
    params = {p.name: p for p in soften.params}
    assert params["gain"].kind == "int" and not params["gain"].runtime and params["gain"].default == 2
    # an InputScalar is a run-time parameter whose default is the estimate generate() sets
    assert params["offset"].runtime and params["offset"].default == 5
    split = node_types()["generator_split_tone"]
    assert [(p.name, p.layout) for p in split.outputs] == [("gray", "gray"), ("scaled", "colour")]
    work = next(p for p in split.params if p.name == "work")
    assert work.kind == "choice" and work.default == "f32"
    assert "Splits a colour image" in split.tooltip()


def test_two_nodes_of_one_generator_compute_what_numpy_does(generator_file):
    built = build_document(_chain())
    expected = numpy_soften(numpy_soften(GRAY, 2, 7), 1, -20)
    np.testing.assert_array_equal(built.run({"input": GRAY})["result"], expected)
    np.testing.assert_array_equal(built.run({"input": GRAY}, target="reference")["result"], expected)
    names = {f.name() for f in built.pipeline().funcs}
    # each node's Funcs carry its id: the generator's own names do not collide
    assert {"first.blur", "second.blur", "first.output", "second.output"} <= names


def test_the_generators_schedule_and_the_documents_schedule_both_apply(generator_file):
    built = build_document(_chain())
    second_blur = next(f for f in built.pipeline().funcs if f.name() == "second.blur")
    assert second_blur.schedule_of().compute_level.kind == "root"  # from generate()
    loops = second_blur.definition().schedule.dims
    assert [d.for_type for d in loops].count(ForType.VECTORIZED) == 1  # from the document


def test_editing_an_input_scalar_runs_the_compiled_code_again(generator_file):
    doc = _chain()
    built = build_document(doc)
    built.run({"input": GRAY})
    edited = copy.deepcopy(doc)
    edited.set_param("second", "offset", 30)
    compiles = compile_statistics()
    assert built.update(edited)
    after = built.run({"input": GRAY})["result"]
    assert compile_statistics() == compiles, "editing an InputScalar compiled a pipeline"
    np.testing.assert_array_equal(after, numpy_soften(numpy_soften(GRAY, 2, 7), 1, 30))
    # a GeneratorParam is structural: the build cannot take it without rebuilding
    structural = copy.deepcopy(doc)
    structural.set_param("second", "gain", 3)
    assert not built.update(structural)


def test_a_colour_generator_with_two_outputs(generator_file):
    doc = _doc(
        [
            _input("input", "colour"),
            {"id": "tone", "type": "generator_split_tone", "params": {"strength": 1.5, "weights": "flat"},
             "inputs": {"input": "input.out"}},
            _output("luma", "tone.gray"),
            _output("bright", "tone.scaled"),
        ]
    )  # fmt: skip
    results = build_document(doc).run({"input": COLOUR})
    v = COLOUR.astype(np.float32)
    gray = v[0] * np.float32(0.25) + v[1] * np.float32(0.5) + v[2] * np.float32(0.25)
    np.testing.assert_array_equal(results["luma"], np.clip(gray + 0.5, 0, 255).astype(np.uint8))
    np.testing.assert_array_equal(results["bright"], np.clip(v * np.float32(1.5), 0, 255).astype(np.uint8))


def test_a_document_using_a_generator_that_is_not_loaded_says_how_to_load_it():
    with pytest.raises(NodeError, match="load the Python file that defines the generator"):
        node_type("generator_nowhere")


def test_a_file_that_fails_is_reported_with_its_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import pixelweave as pw\nraise ValueError('broken on purpose')\n")
    with pytest.raises(CompileError, match=r"bad\.py: ValueError: broken on purpose"):
        load_generator_nodes(bad)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(CompileError, match="defines no generator"):
        load_generator_nodes(empty)


def test_generators_that_cannot_be_nodes_are_refused(tmp_path):
    path = tmp_path / "sizeless.py"
    path.write_text(
        textwrap.dedent(
            """
            import pixelweave as pw

            @pw.generator(name="ramp")
            class Ramp:
                out = pw.OutputBuffer(pw.Float(32), 2)

                def generate(g):
                    x, y = pw.Var("x"), pw.Var("y")
                    g.out[x, y] = pw.f32(x + y)
            """
        )
    )
    with pytest.raises(CompileError, match="no input buffer has as many"):
        load_generator_nodes(path)


def test_a_generator_reading_an_input_stride_is_refused_with_the_node(tmp_path):
    path = tmp_path / "stride.py"
    path.write_text(
        textwrap.dedent(
            """
            import pixelweave as pw

            @pw.generator(name="stride_reader")
            class StrideReader:
                input = pw.InputBuffer(pw.UInt(8), 2)
                output = pw.OutputBuffer(pw.UInt(8), 2)

                def generate(g):
                    x, y = pw.Var("x"), pw.Var("y")
                    g.output[x, y] = g.input[x, y] + pw.u8(g.input.dim(1).stride())
            """
        )
    )
    (t,) = load_generator_nodes(path)
    try:
        doc = _doc([
            _input("input", "gray"),
            {"id": "node", "type": t.type_name, "inputs": {"input": "input.out"}},
            _output("result", "node.output"),
        ])  # fmt: skip
        with pytest.raises(DocumentError, match=r"node `node`.*stride of input `input`"):
            build_document(doc)
    finally:
        forget_node_type(t.type_name)


def test_built_in_node_types_cannot_be_forgotten():
    with pytest.raises(NodeError, match="built-in"):
        forget_node_type("box_blur")


def test_specializations_on_input_scalars_and_sizes_are_bound_too(tmp_path):
    path = tmp_path / "specialized.py"
    path.write_text(
        textwrap.dedent(
            """
            import pixelweave as pw

            @pw.generator(name="gain_specialized")
            class GainSpecialized:
                input = pw.InputBuffer(pw.UInt(8), 2)
                gain = pw.InputScalar(pw.Int(32))
                output = pw.OutputBuffer(pw.UInt(8), 2)

                def generate(g):
                    x, y = pw.Var("x"), pw.Var("y")
                    scaled = pw.Func("scaled")
                    scaled[x, y] = pw.min(pw.i32(g.input[x, y]) * g.gain, 255)
                    g.output[x, y] = pw.u8(scaled[x, y])
                    scaled.compute_root()
                    scaled.specialize(g.gain == 1)
                    scaled.specialize(g.input.width() >= 16).vectorize(x, 8)
            """
        )
    )
    (t,) = load_generator_nodes(path)
    try:
        assert t.tooltip().startswith("The generator `gain_specialized`")  # no docstring: not the base class's
        doc = _doc([
            _input("input", "gray"),
            {"id": "node", "type": t.type_name, "params": {"gain": 2}, "inputs": {"input": "input.out"}},
            _output("result", "node.output"),
        ])  # fmt: skip
        for gain in (2, 1):
            doc.set_param("node", "gain", gain)
            out = build_document(doc).run({"input": GRAY})["result"]
            np.testing.assert_array_equal(out, np.minimum(GRAY.astype(np.int64) * gain, 255).astype(np.uint8))
    finally:
        forget_node_type(t.type_name)
