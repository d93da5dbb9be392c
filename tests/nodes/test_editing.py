"""The editor's model: undoable edits, connection checks, clipboard, inspection and previews."""

import json
from pathlib import Path

import numpy as np
import pytest
from pixelweave.nodes.document import Document, load_document
from pixelweave.nodes.editing import EditSession, connection_problem
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.inspection import inspect_document, split_problem
from pixelweave.nodes.preview import PreviewComputer
from scipy import ndimage

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def _chain() -> EditSession:
    session = EditSession()
    session.add_node("image_input", (0, 0), {"sample": "camera.png", "element": "f32", "layout": "gray"})
    session.add_node("box_blur", (200, 0))
    session.add_node("output", (400, 0))
    session.connect("image_input", "out", "box_blur", "image")
    session.connect("box_blur", "out", "output", "image")
    return session


def test_every_edit_is_undone_and_redone_exactly():
    session = _chain()
    states = []
    session.subscribe(lambda reason: states.append(reason))
    before = session.document.dumps()
    session.set_param("box_blur", "radius", 4)
    session.move_nodes({"box_blur": (250, 30)})
    session.set_schedule("box_blur", {"out": [["compute_root"], ["vectorize", "x", 8]]})
    session.rename_node("box_blur", "soft")
    after = session.document.dumps()
    for _ in range(4):
        session.undo()
    assert session.document.dumps() == before
    for _ in range(4):
        session.redo()
    assert session.document.dumps() == after
    assert states == ["edit"] * 4 + ["undo"] * 4 + ["redo"] * 4
    assert session.document.node("output").inputs == {"image": "soft.out"}


def test_dragged_slider_values_merge_into_one_step():
    session = _chain()
    steps = len(session._undo)
    for radius in (2, 3, 4, 5):
        session.set_param("box_blur", "radius", radius, merge=True)
    session.end_merge()
    session.set_param("box_blur", "radius", 7, merge=True)
    assert len(session._undo) == steps + 2
    session.undo()
    assert session.document.node("box_blur").params["radius"] == 5
    session.undo()
    assert session.document.node("box_blur").params["radius"] == 1


def test_a_failed_edit_leaves_the_document_untouched():
    session = _chain()
    before = session.document.dumps()
    with pytest.raises(NodeError, match="radius"):
        session.set_param("box_blur", "radius", -3)
    with pytest.raises(NodeError, match=r"unknown directive|vectorise"):
        session.set_schedule("box_blur", {"out": [["vectorise", "x", 8]]})
    assert session.document.dumps() == before
    assert not session.can_redo()


def test_dirty_follows_the_saved_state(tmp_path):
    session = _chain()
    session.save(tmp_path / "p.json")
    assert not session.dirty
    session.set_param("box_blur", "radius", 3)
    assert session.dirty
    session.undo()
    assert not session.dirty
    assert Document.load(tmp_path / "p.json").dumps() == session.document.dumps()


def test_connections_that_types_or_cycles_forbid_are_refused_with_the_reason():
    session = _chain()
    session.add_node("histogram", (200, 200))
    session.connect("image_input", "out", "histogram", "image")
    doc = session.document
    # a histogram (array) cannot feed an image port
    why = connection_problem(doc, "histogram", "out", "box_blur", "image")
    assert why is not None and "array" in why
    # the blur reads the input: feeding the blur back into the input's consumer chain is a cycle
    session.add_node("invert", (300, 200))
    session.connect("box_blur", "out", "invert", "image")
    why = connection_problem(session.document, "invert", "out", "box_blur", "image")
    assert why is not None and "cycle" in why
    assert connection_problem(doc, "box_blur", "out", "box_blur", "image") == "a node cannot read its own output"
    with pytest.raises(NodeError, match=r"cannot connect `histogram\.out` to `box_blur\.image`"):
        session.connect("histogram", "out", "box_blur", "image")
    assert session.document.node("box_blur").inputs == {"image": "image_input.out"}


def test_copy_paste_and_duplicate_give_fresh_ids_and_keep_inner_connections():
    session = _chain()
    text = session.copy(["image_input", "box_blur"])
    new_ids = session.paste(text, offset=(10, 20))
    assert new_ids == ["image_input_2", "box_blur_2"]
    assert session.document.node("box_blur_2").inputs == {"image": "image_input_2.out"}
    assert session.document.node("box_blur_2").position == (210, 20)
    again = session.duplicate(["box_blur"])
    assert again == ["box_blur_3"]
    assert session.document.node("box_blur_3").inputs == {}  # its source was not copied
    with pytest.raises(NodeError, match="does not hold Pixelweave nodes"):
        session.paste("hello")


def test_restoring_a_whole_document_is_one_undoable_step():
    session = _chain()
    other = Document.from_json(session.document.to_json())
    other.set_schedule("box_blur", "out", [["compute_root"]])
    session.replace(other, "Restore")
    assert session.document.node("box_blur").schedule == {"out": [["compute_root"]]}
    session.undo()
    assert session.document.node("box_blur").schedule == {}


def test_inspection_reports_loop_nest_loops_consumers_and_problems():
    doc = _chain().document
    doc.set_schedule("box_blur", "out", [["compute_root"], ["split", "y", "yo", "yi", 8]])
    result = inspect_document(doc)
    assert result.ok
    assert "box_blur" in result.loop_nest and "produce" in result.statement
    assert result.loops["box_blur"]["out"] == ["x", "y"]  # the stage's own loops, innermost first
    assert result.levels["box_blur"]["out"] == [("output.out", ["y", "x"])]  # where it may be computed
    doc.set_schedule("box_blur", "out", [["compute_at", "output.out", "nowhere"]])
    bad = inspect_document(doc)
    assert not bad.ok and bad.problems_of("box_blur")
    assert split_problem("node `a`: broken") == ("a", "broken")


def test_preview_of_an_inner_node_matches_an_independent_box_blur():
    doc = _chain().document
    doc.set_param("box_blur", "radius", 2)
    doc.set_schedule("box_blur", "out", [["compute_at", "output.out", "y"]])  # refers outside the preview
    result = PreviewComputer().compute(doc, "box_blur")
    assert result.reference_title == "image_input" and result.scale == 1
    camera = result.reference.astype(np.float64)
    expected = ndimage.uniform_filter(camera, size=5, mode="nearest")
    assert result.array.shape == camera.shape
    assert np.allclose(result.array, expected, atol=1e-4)


def test_reduced_resolution_preview_and_multi_output_nodes():
    doc = load_document(EXAMPLES / "histogram_equalization.json")
    computer = PreviewComputer()
    small = computer.compute(doc, "ycbcr", scale=2)
    full = computer.compute(doc, "ycbcr")
    assert small.scale == 2 and "1/2 resolution" in small.note
    assert small.array.shape[-2:] == tuple((s + 1) // 2 for s in full.array.shape[-2:])
    first_port = computer.compute(doc, "channels")  # several outputs: the first one is shown
    assert first_port.port == "r"


def test_preview_of_a_broken_node_names_the_problem():
    session = _chain()
    session.disconnect("box_blur", "image")
    with pytest.raises(DocumentError, match="input `image` is not connected"):
        PreviewComputer().compute(session.document, "box_blur")


def test_clipboard_text_is_plain_json():
    session = _chain()
    data = json.loads(session.copy(["box_blur"]))
    assert data["format"] == "pixelweave.fragment" and data["nodes"][0]["type"] == "box_blur"
