"""The pipeline document: editing model, canonical JSON, atomic save, loading with every
problem reported, version migration, and documents run against a NumPy box blur."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pixelweave.nodes.document import IMAGES, MIGRATIONS, VERSION, Document, load_document, migrate, resolve_sample
from pixelweave.nodes.errors import DocumentError, NodeError, ParameterError
from pixelweave.nodes.pipeline_build import build_document, open_document

from tests.nodes.document_samples import blur_document, node, numpy_box_blur, write_document, write_samples
from tests.nodes.harness import assert_same


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_samples(tmp_path)
    return tmp_path


def _problems(path: Path) -> list[str]:
    with pytest.raises(DocumentError) as info:
        load_document(path)
    return info.value.problems


# ---------------------------------------------------------------------------- model and JSON


def _edited_document() -> Document:
    doc = Document(name="Edited", description="made with the editing API")
    doc.add_node("image_input", params={"layout": "gray", "sample": "gray.png"}, position=(0, 10))
    doc.add_node("box_blur", "blur", {"radius": 3}, position=(200, 10))
    doc.add_node("output", "result", position=(400, 10))
    doc.connect("image_input", "blur", "image")
    doc.connect("blur", "result", "image")
    doc.set_schedule("result", "out", [["split", "y", "y", "yi", 8], ["parallel", "y"]])
    return doc


def test_editing_api_builds_a_document_that_runs(folder):
    doc = _edited_document()
    assert [n.id for n in doc.nodes] == ["image_input", "blur", "result"]
    assert doc.node("blur").params == {"radius": 3, "boundary": "clamp"}  # complete: defaults filled in
    path = doc.save(folder / "edited.json")
    built = open_document(path)
    image = built.sample_inputs()["image_input"]
    compiled = built.run({"image_input": image})["result"]
    assert_same(compiled, built.run({"image_input": image}, target="reference")["result"])
    np.testing.assert_array_equal(compiled, numpy_box_blur(image, 3))


def test_saved_text_is_canonical_and_round_trips(folder):
    doc = _edited_document()
    path = doc.save(folder / "edited.json")
    text = path.read_text()
    data = json.loads(text)
    assert list(data) == ["format", "version", "name", "description", "nodes"]
    assert list(data["nodes"][1]) == ["id", "type", "params", "inputs", "position"]
    assert '\n      "position": [200, 10]\n' in text  # short lists on one line, 2-space indents
    assert '\n          ["split", "y", "y", "yi", 8],\n' in text  # one directive per line
    assert text.endswith("}\n")
    again = load_document(path)
    assert again == doc
    assert again.dumps() == text
    assert sorted(p.name for p in folder.iterdir()) == ["colour.png", "edited.json", "gray.png"]  # no temp files


def test_save_is_atomic_when_writing_fails(folder, monkeypatch):
    path = _edited_document().save(folder / "doc.json")
    before = path.read_text()
    doc = load_document(path)
    doc.name = "changed"

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("pixelweave.nodes.document.os.replace", broken)
    with pytest.raises(OSError, match="disk full"):
        doc.save()
    assert path.read_text() == before
    assert sorted(p.name for p in folder.iterdir()) == ["colour.png", "doc.json", "gray.png"]


def test_remove_and_rename_keep_connections_consistent():
    doc = _edited_document()
    doc.set_schedule("blur", "rows", [["compute_at", "result.out", "y"]])
    doc.rename_node("result", "final")
    assert doc.node("blur").schedule["rows"] == [["compute_at", "final.out", "y"]]
    assert doc.node("final").inputs == {"image": "blur.out"}
    doc.remove_node("blur")
    assert doc.node("final").inputs == {}
    assert "input `image` is not connected" in " ".join(doc.validate())


def test_editing_api_checks_what_it_is_given():
    doc = _edited_document()
    with pytest.raises(ParameterError, match=r"node `blur`: parameter `radius` is 99 px, outside its range \[1, 50\]"):
        doc.set_param("blur", "radius", 99)
    with pytest.raises(ParameterError, match="has no parameter `sigma`"):
        doc.set_param("blur", "sigma", 1.0)
    with pytest.raises(NodeError, match="unknown directive `paralel`; did you mean parallel"):
        doc.set_schedule("blur", "out", [["paralel", "y"]])
    with pytest.raises(NodeError, match="has no input `img`"):
        doc.connect("image_input", "blur", "img")
    with pytest.raises(NodeError, match="already used"):
        doc.add_node("box_blur", "blur")
    with pytest.raises(NodeError, match="reserved"):
        doc.add_node("scalar_parameter", "x")
    with pytest.raises(NodeError, match="unknown node type `box_blr`; did you mean box_blur"):
        doc.add_node("box_blr")
    assert doc.add_node("box_blur").id == "box_blur"
    assert doc.add_node("box_blur").id == "box_blur_2"


# ---------------------------------------------------------------------------- loading: every problem


def test_every_problem_is_reported_with_its_node(folder):
    data = blur_document()
    data["nodes"] += [
        node("blurry", "box_blr", {}),
        node("strange", "box_blur", {"radius": "big", "boundary": "clamp", "colour": 1}, {"image": "nowhere.out"}),
        node("far", "box_blur", {"radius": 80, "boundary": "clamp"}, {"image": "input.result", "mask": "input.out"}),
        node("loop_a", "box_blur", {"radius": 1, "boundary": "clamp"}, {"image": "loop_b.out"}),
        node("loop_b", "box_blur", {"radius": 1, "boundary": "clamp"}, {"image": "loop_a.out"}),
        node("scalar", "constant", {"value": 2.0, "element": "f32"}),
        node("typed", "box_blur", {"radius": 1, "boundary": "clamp"}, {"image": "scalar.out"}),
        node("2nd", "box_blur", {"radius": 1}, {"image": "input.out"}, {"out": [["vectorize", "x", "eight"]]}),
        node("input", "output", {"element": "u8", "scale": True}, {"image": "blur.out"}),
    ]
    problems = _problems(write_document(folder / "doc.json", data))
    expected = [
        "node `input`: the id is used by 2 nodes; ids must be unique",
        "node `blurry`: unknown node type `box_blr`; did you mean box_blur?",
        "node `strange`: unknown parameter `colour` for a box_blur node (its parameters: radius, boundary)",
        "node `strange`: parameter `radius` needs an integer, got 'big'",
        "node `strange`: input `image` is connected to node `nowhere`, which does not exist",
        "node `far`: parameter `radius` is 80 px, outside its range [1, 50]",
        "node `far`: input `image` is connected to output `result` of node `input`, which has only out",
        "node `far`: a box_blur node has no input `mask` (its inputs: image)",
        "node `loop_a`: the connections form a cycle: loop_a -> loop_b -> loop_a",
        "node `typed`: input `image` takes a gray or colour image of number, but output `out` of node `scalar` "
        "gives a scalar value",
        "node `2nd`: node id '2nd' must be letters, digits and underscores, not starting with a digit",
        'node `2nd`: missing parameter `boundary` (its default is "clamp")',
        "node `2nd`: schedule of `out`, directive 1: argument 2 (width) of `vectorize` must be an integer, got 'eight'",
    ]
    for e in expected:
        assert e in problems, f"{e!r} not in {problems}"
    assert len(problems) == len(expected)


def test_build_problems_are_reported_with_structure_problems(folder):
    data = blur_document()
    data["nodes"] += [
        node("limits", "scalar_parameter", {"value": 5.0, "minimum": 0.0, "maximum": 1.0, "element": "f32"}),
        node("odd", "constant", {"value": 0.5, "element": "u8"}),
        node("bad", "box_blur", {"radius": 0, "boundary": "clamp"}, {"image": "input.out"}),
    ]
    problems = _problems(write_document(folder / "doc.json", data))
    # conditions on several values (NodeType.check_values) are checked with the parameters, in node order
    assert problems == [
        "node `limits`: the value 5 is outside [0, 1]",
        "node `odd`: the value 0.5 is not an integer, but the element type is u8",
        "node `bad`: parameter `radius` is 0 px, outside its range [1, 50]",
    ]


def test_no_output_node(folder):
    data = blur_document()
    data["nodes"] = data["nodes"][:2]
    assert _problems(write_document(folder / "doc.json", data)) == [
        "the pipeline has no output node; add an output node and connect it"
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"format": "something.else"}, 'not a Pixelweave pipeline: "format" must be "pixelweave.pipeline"'),
        ({"version": 3}, "written by a newer Pixelweave: format version 3, this version reads up to 1"),
        ({"version": "1"}, "\"version\" must be a format version number, got '1'"),
        ({"nodes": {}}, '"nodes" must be a list of nodes, got {}'),
        ({"name": 5, "extra": True}, "unknown key 'extra' at the top level"),
    ],
)
def test_top_level_problems(folder, change, expected):
    data = {**blur_document(), **change}
    problems = _problems(write_document(folder / "doc.json", data))
    assert any(expected in p for p in problems), problems


def test_node_structure_problems(folder):
    data = blur_document()
    data["nodes"][0]["colour"] = "red"
    data["nodes"][1]["position"] = [1, "2"]
    data["nodes"][2]["inputs"] = ["blur.out"]
    data["nodes"].append("a node")
    data["nodes"].append({"type": "output"})
    problems = _problems(write_document(folder / "doc.json", data))
    assert problems == [
        "node `input`: unknown key 'colour' (known: id, type, params, inputs, schedule, schedules, position)",
        "node `blur`: \"position\" must be [x, y] numbers, got [1, '2']",
        'node `result`: "inputs" must be an object mapping ports to "node.port", got [\'blur.out\']',
        "node 4 must be an object, got 'a node'",
        'node 5 needs an "id" string, got None',
    ]


def test_malformed_json_reports_line_and_column(folder):
    path = write_document(
        folder / "doc.json", '{\n  "format": "pixelweave.pipeline",\n  "version": 1\n  "nodes": []\n}'
    )
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert str(info.value) == f"{path}: malformed JSON at line 4, column 3: Expecting ',' delimiter"


def test_missing_file(tmp_path):
    with pytest.raises(DocumentError, match="cannot read the document: No such file or directory"):
        load_document(tmp_path / "nothing.json")


# ---------------------------------------------------------------------------- versions


def _version_0(data: dict) -> dict:
    """The document in the version 0 format this project defines (docs/document-format.md)."""
    old = json.loads(json.dumps(data))
    old["version"] = 0
    for n in old["nodes"]:
        for port, ref in n.get("inputs", {}).items():
            src, out = ref.split(".")
            n["inputs"][port] = {"node": src, "port": out}
        n["position"] = {"x": n["position"][0], "y": n["position"][1]}
    return old


def test_version_0_is_migrated(folder):
    new = blur_document(out_schedule={"out": [["parallel", "y"]]})
    path = write_document(folder / "old.json", _version_0(new))
    doc = load_document(path)
    assert doc == Document.from_json(new)
    assert json.loads(doc.dumps())["version"] == VERSION
    image = write_samples(folder)["gray"]
    out = build_document(doc).run({"input": image})["result"]
    np.testing.assert_array_equal(out, numpy_box_blur(image, 2))


def test_migrations_run_in_a_chain(monkeypatch):
    calls = []
    monkeypatch.setitem(MIGRATIONS, -1, lambda d: calls.append(d["version"]) or {**d, "renamed": True})
    data = migrate({"version": -1, "nodes": []})
    assert calls == [-1] and data["renamed"] and data["version"] == VERSION


# ---------------------------------------------------------------------------- samples


def test_samples_resolve_beside_the_document_then_in_the_bundled_images(folder):
    assert resolve_sample("gray.png", folder) == folder / "gray.png"
    assert resolve_sample("camera.png", folder) == IMAGES / "camera.png"
    assert resolve_sample("missing.png", folder) is None
    assert resolve_sample("", folder) is None
    path = write_document(folder / "doc.json", blur_document("camera.png"))
    built = open_document(path)
    assert built.input_path("input") == IMAGES / "camera.png"
    assert built.sample_inputs()["input"].shape == (512, 512)


def test_missing_sample_is_reported_when_inputs_are_needed(folder):
    built = open_document(write_document(folder / "doc.json", blur_document("nowhere.png")))
    with pytest.raises(NodeError, match=r"no image for input `input`: its sample image 'nowhere.png' was not found"):
        built.sample_inputs()


def test_saved_documents_and_images_get_the_usual_file_mode(tmp_path):
    import os

    import numpy as np
    from pixelweave.nodes.document import Document
    from pixelweave.nodes.images import write_image

    mask = os.umask(0o022)
    try:
        doc = Document(name="empty")
        saved = doc.save(tmp_path / "doc.json")
        write_image(tmp_path / "out.png", np.zeros((4, 4), np.uint8))
    finally:
        os.umask(mask)
    assert saved.stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "out.png").stat().st_mode & 0o777 == 0o644
