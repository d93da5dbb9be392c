"""Run-time parameters: editing any of them re-runs the compiled code without compiling.

For every run-time parameter of every shipped node type, a small document is built and
run, the parameter is edited to another valid value, the build takes the new value
(`BuiltDocument.update`) and runs again: no pipeline is lowered or compiled, and the image
equals that of a fresh build in which the parameters are constants; a fresh build with the
new value has the engine's structural key of the old one (so its compile cache answers).
Structural edits need a new build with a different key.
"""

from __future__ import annotations

import copy
from typing import Any

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.engine.runtime.jit import compile_statistics
from pixelweave.engine.structural_key import structural_key
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError, ParameterError
from pixelweave.nodes.node_type import node_type, node_types
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document
from pixelweave.nodes.preview import PreviewComputer
from pixelweave.nodes.runtime_params import runtime_values, structure_key

from tests.conftest import IMAGES
from tests.nodes.harness import assert_same

WIDTH, HEIGHT = 32, 24


def _images() -> dict[str, np.ndarray]:
    gray = iio.imread(IMAGES / "camera.png")[200 : 200 + HEIGHT, 230 : 230 + WIDTH]
    colour = iio.imread(IMAGES / "astronaut.png")[40 : 40 + HEIGHT, 200 : 200 + WIDTH, :3]
    planar = np.ascontiguousarray(np.moveaxis(colour, -1, 0))
    return {
        "gray": np.ascontiguousarray(gray),
        "colour": planar,
        "gray_f32": (gray / np.float32(255)).astype(np.float32),
        "gray_u16": (gray.astype(np.uint16) * 257).astype(np.uint16),
        "colour_f32": (planar / np.float32(255)).astype(np.float32),
    }


IMAGES_BY_ID = _images()
INPUTS = {
    "gray": ("u8", "gray"),
    "colour": ("u8", "colour"),
    "gray_f32": ("f32", "gray"),
    "gray_u16": ("u16", "gray"),
    "colour_f32": ("f32", "colour"),
}


def _doc(*nodes: tuple[str, str, dict[str, Any], dict[str, str]]) -> Document:
    """Input nodes for every image named in a connection, the given nodes, and an Output
    (element kept) of the node called `node` (or of `then` when there is one)."""
    used = {ref.split(".")[0] for *_, inputs in nodes for ref in inputs.values()} & set(INPUTS)
    data = []
    for image_id in sorted(used):
        element, layout = INPUTS[image_id]
        data.append({"id": image_id, "type": "image_input", "params": {"element": element, "layout": layout}})
    for node_id, type_name, params, inputs in nodes:
        data.append({"id": node_id, "type": type_name, "params": params, "inputs": inputs})
    last = "then" if any(n[0] == "then" for n in nodes) else "node"
    data.append({"id": "result", "type": "output", "params": {"element": "same"}, "inputs": {"image": f"{last}.out"}})
    doc = Document.from_json({"format": "pixelweave.pipeline", "version": 1, "nodes": data})
    for node in doc.nodes:  # parameters not given take their defaults
        node.params = {**node_type(node.type).default_params(), **node.params}
        node.params = {k: list(v) if isinstance(v, tuple) else v for k, v in node.params.items()}
    return doc


def one(type_name: str, params: dict[str, Any] | None = None, image: str = "gray", port: str = "image") -> Document:
    return _doc(("node", type_name, dict(params or {}), {port: f"{image}.out"}))


# (node type, parameter, document, new value): every run-time parameter of the catalogue
CASES: list[tuple[str, str, Document, Any]] = [
    ("arithmetic_constant", "value", one("arithmetic_constant", {"value": 0.0}), 20.0),
    ("brightness_contrast", "brightness", one("brightness_contrast", image="colour"), 0.2),
    ("brightness_contrast", "contrast", one("brightness_contrast", image="gray_f32"), 1.7),
    ("gamma", "gamma", one("gamma", {"gamma": 2.2}), 1.4),
    ("levels", "in_black", one("levels"), 0.2),
    ("levels", "in_white", one("levels", image="colour_f32"), 0.7),
    ("levels", "gamma", one("levels"), 1.8),
    ("levels", "out_black", one("levels"), 0.1),
    ("levels", "out_white", one("levels"), 0.85),
    ("threshold", "threshold", one("threshold"), 0.3),
    ("threshold", "threshold", one("threshold", image="gray_f32"), 0.65),
    (
        "lookup_table",
        "curve",
        one("lookup_table", {"curve": [[0, 0], [0.5, 0.5], [1, 1]]}),
        [[0, 0.1], [0.4, 0.7], [1, 0.9]],
    ),
    ("lookup_table", "curve", one("lookup_table", image="colour_f32"), [[0.1, 0.0], [0.9, 1.0]]),
    ("white_balance", "red", one("white_balance", image="colour"), 1.6),
    ("white_balance", "green", one("white_balance", image="colour"), 0.7),
    ("white_balance", "blue", one("white_balance", image="colour_f32"), 1.3),
    (
        "colour_matrix",
        "matrix",
        one("colour_matrix", image="colour"),
        [[0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]],
    ),
    (
        "colour_matrix",
        "matrix",
        one("colour_matrix", {"matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}, image="colour_f32"),
        [[0.9, 0.1, 0.0, 0.05], [0.0, 1.0, 0.0, -0.02], [0.1, 0.0, 0.9, 0.0]],
    ),
    ("sharpen", "amount", one("sharpen"), 2.5),
    ("convolution", "kernel", one("convolution", image="colour"), [[1, 1, 1], [1, 4, 1], [1, 1, 1]]),
    (
        "convolution",
        "kernel",
        one("convolution", {"kernel": [[0, -1, 0], [-1, 5, -1], [0, -1, 0]], "normalize": False}, image="gray_f32"),
        [[0, -1, 0], [-1, 6, -1], [0, -1, 0.5]],
    ),
    ("unsharp_mask", "amount", one("unsharp_mask", {"sigma": 1.0}), 2.0),
    ("unsharp_mask", "threshold", one("unsharp_mask", {"sigma": 1.0}, image="gray_f32"), 0.05),
    ("emboss", "strength", one("emboss", image="colour"), 2.5),
    ("harris_corners", "k", one("harris_corners"), 0.2),
    ("canny_edges", "low", one("canny_edges", {"low": 0.3, "high": 0.6, "hysteresis_steps": 2}), 0.05),
    ("canny_edges", "high", one("canny_edges", {"low": 0.05, "high": 0.2, "hysteresis_steps": 1}), 0.6),
    (
        "blend",
        "opacity",
        _doc(("node", "blend", {"mode": "multiply"}, {"base": "colour.out", "blend": "gray.out"})),
        0.4,
    ),
    (
        "boundary_condition",
        "constant",
        _doc(
            ("node", "boundary_condition", {"mode": "constant"}, {"image": "gray.out"}),
            ("then", "box_blur", {"radius": 2, "boundary": "none"}, {"image": "node.out"}),
        ),
        0.8,
    ),
    ("pad", "fill", one("pad", {"boundary": "constant", "left": 3, "right": 2, "top": 1, "bottom": 4}), 0.5),
    ("crop", "x", one("crop", {"x": 2, "y": 1, "width": 16, "height": 12}, image="colour"), 9),
    ("crop", "y", one("crop", {"x": 2, "y": 1, "width": 16, "height": 12}), 7),
    ("local_laplacian", "alpha", one("local_laplacian", {"levels": 2, "intensity_levels": 3}), 3.0),
    ("local_laplacian", "beta", one("local_laplacian", {"levels": 2, "intensity_levels": 3}, image="colour"), 0.5),
    (
        "constant",
        "value",
        _doc(
            ("node", "constant", {"value": 0.5}, {}),
            ("then", "arithmetic", {"operation": "multiply"}, {"a": "gray.out", "b": "node.out"}),
        ),
        1.5,
    ),
    (
        "scalar_parameter",
        "value",
        _doc(
            ("node", "scalar_parameter", {"value": 0.5, "minimum": 0.0, "maximum": 2.0}, {}),
            ("then", "arithmetic", {"operation": "add"}, {"a": "gray_f32.out", "b": "node.out"}),
        ),
        1.25,
    ),
]


def _edited(doc: Document, param: str, value: Any) -> Document:
    edited = Document.from_json(copy.deepcopy(doc.to_json()))
    edited.set_param("node", param, value)
    return edited


def _run(built: BuiltDocument) -> np.ndarray:
    return built.runner.run(IMAGES_BY_ID, level="fast")["result"]


def test_every_runtime_parameter_of_the_catalogue_is_edited_below():
    shipped = {
        name: cls for name, cls in node_types().items() if cls.__module__.startswith("pixelweave.nodes.catalogue.")
    }
    declared = {(name, p.name) for name, cls in shipped.items() for p in cls.runtime_params()}
    assert declared == {(t, p) for t, p, _, _ in CASES}


@pytest.mark.parametrize(("type_name", "param", "doc", "value"), CASES, ids=[f"{t}.{p}" for t, p, _, _ in CASES])
def test_editing_a_runtime_parameter_runs_the_compiled_code_again(type_name, param, doc, value):
    built = build_document(doc)
    before = _run(built)
    edited = _edited(doc, param, value)
    compiles = compile_statistics()
    assert built.update(edited)
    after = _run(built)
    assert compile_statistics() == compiles, "a run-time edit lowered or compiled a pipeline"
    assert built.document is edited
    # a fresh build with the new value has the same code (the compile cache's key)
    assert structural_key(build_document(edited).pipeline()) == structural_key(built.pipeline())
    # the picture is that of a pipeline built with the new value as a constant
    constant = build_document(edited, runtime_params=False)
    assert not constant.graph.scalar_params or type_name == "scalar_parameter"
    assert_same(after, _run(constant))
    assert not np.array_equal(after, before), f"editing {type_name}.{param} did not change the picture"
    # and the document's own value is back after undoing the edit
    compiles = compile_statistics()
    assert built.update(doc)
    np.testing.assert_array_equal(_run(built), before)
    assert compile_statistics() == compiles


def test_numpy_agrees_after_edits_of_gamma_and_white_balance():
    gray, colour = IMAGES_BY_ID["gray"], IMAGES_BY_ID["colour"]
    doc = one("gamma", {"gamma": 2.2})
    built = build_document(doc)
    _run(built)
    built.update(_edited(doc, "gamma", 0.5))
    expected = np.rint(np.power(gray / 255.0, 1 / 0.5) * 255)
    assert np.abs(_run(built).astype(int) - expected).max() <= 1
    doc = one("white_balance", image="colour")
    built = build_document(doc)
    _run(built)
    edited = _edited(_edited(doc, "red", 1.5), "blue", 0.5)
    built.update(edited)
    gains = np.array([1.5, 1.0, 0.5], np.float32)[:, None, None]
    np.testing.assert_array_equal(_run(built), np.clip(np.rint(colour * gains), 0, 255))


def test_params_are_named_stably_after_node_and_parameter():
    doc = _doc(
        ("node", "levels", {}, {"image": "gray.out"}),
        ("then", "colour_matrix", {}, {"image": "tint.out"}),
        ("tint", "gray_to_rgb", {}, {"image": "node.out"}),
    )
    first, second = build_document(doc), build_document(doc)
    names = first.param_ids
    assert names[:5] == ["node__in_black", "node__in_white", "node__gamma", "node__out_black", "node__out_white"]
    assert names[5:8] == ["then__matrix_0_0", "then__matrix_0_1", "then__matrix_0_2"] and len(names) == 14
    assert second.param_ids == names
    assert first.loop_nest() == second.loop_nest()
    assert runtime_values(doc)["then__matrix_1_1"] == 1.0


def test_structure_key_ignores_runtime_values_and_positions_only():
    doc = one("lookup_table")
    moved = Document.from_json(doc.to_json())
    moved.node("node").position = (300, 40)
    moved.set_param("node", "curve", [[0, 0.5], [1, 0.5]])
    assert structure_key(moved) == structure_key(doc)
    more_points = _edited(doc, "curve", [[0, 0], [0.5, 0.2], [1, 1]])
    assert structure_key(more_points) != structure_key(doc)


STRUCTURAL = [
    ("box blur radius", one("box_blur", {"radius": 1}), "radius", 2),
    ("points of a curve", one("lookup_table"), "curve", [[0, 0], [0.5, 0.3], [1, 1]]),
    ("matrix columns", one("colour_matrix", image="colour"), "matrix", [[1, 0, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, 0]]),
    ("element type", one("convert_type", {"element": "f32"}), "element", "u16"),
    ("boundary kind", one("sharpen", {"boundary": "clamp"}), "boundary", "mirror"),
    (
        "weights needing coarser rounding",
        one("convolution", {"kernel": [[0, 0, 0], [0, 1, 0], [0, 0, 0]], "normalize": False}, image="gray_u16"),
        "kernel",
        [[0, 0, 0], [0, 5000, 0], [0, 0, 0]],
    ),
]


@pytest.mark.parametrize(("what", "doc", "param", "value"), STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_structural_edits_need_a_new_build_which_compiles(what, doc, param, value):
    built = build_document(doc)
    _run(built)
    edited = _edited(doc, param, value)
    kept = built.document
    assert not built.update(edited)
    assert built.document is kept
    # a new build, whose code differs: the engine's compile cache cannot hand back the old code
    assert structural_key(build_document(edited).pipeline()) != structural_key(built.pipeline())


def test_a_bad_runtime_value_is_refused_and_changes_nothing():
    doc = one("levels", {"in_black": 0.1, "in_white": 0.9})
    built = build_document(doc)
    before = _run(built)
    bad = _edited(doc, "in_black", 0.95)
    with pytest.raises(ParameterError, match=r"input white point \(0.9\) must be above the input black point"):
        built.update(bad)
    assert built.graph.scalar_params["node__in_black"].get() == pytest.approx(0.1)
    np.testing.assert_array_equal(_run(built), before)
    assert any("input white point" in line for line in _problems(bad))


def _problems(doc: Document) -> list[str]:
    try:
        build_document(doc)
    except DocumentError as e:
        return e.problems
    return []


def test_constant_builds_hold_no_runtime_params_and_do_not_take_updates():
    doc = one("gamma")
    constant = build_document(doc, runtime_params=False)
    assert constant.param_ids == []
    assert not constant.update(_edited(doc, "gamma", 1.2))


def test_preview_of_an_edited_runtime_parameter_runs_no_llvm(tmp_path):
    iio.imwrite(tmp_path / "gray.png", IMAGES_BY_ID["gray"])
    doc = _doc(("node", "gamma", {}, {"image": "gray.out"}))
    doc.node("gray").params["sample"] = "gray.png"
    doc.path = tmp_path / "doc.json"
    computer = PreviewComputer()
    before = computer.compute(doc, "node").array
    edited = _edited(doc, "gamma", 1.3)
    edited.path = doc.path
    objects = compile_statistics()["objects_compiled"]
    after = computer.compute(edited, "node").array
    assert compile_statistics()["objects_compiled"] == objects
    expected = np.rint(np.power(IMAGES_BY_ID["gray"] / 255.0, 1 / 1.3) * 255)
    assert np.abs(after.astype(int) - expected).max() <= 1
    assert not np.array_equal(after, before)


def test_a_node_id_equal_to_another_nodes_param_name_is_a_clear_problem():
    doc = _doc(
        ("node", "gamma", {}, {"image": "gray.out"}),
        ("node__gamma", "scalar_parameter", {}, {}),
        ("then", "arithmetic", {"operation": "add"}, {"a": "node.out", "b": "node__gamma.out"}),
    )
    assert _problems(doc) == [
        "node `node__gamma`: its input `node__gamma` has the name of an input of node `node`; rename one"
    ]
