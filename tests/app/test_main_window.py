"""The editor window driven as a person would: open examples, add and connect nodes, change a
parameter and a schedule, undo/redo, save and reopen, benchmark, export — asserting on what
the preview, the inspector, the canvas and the files show."""

from pathlib import Path

import numpy as np
import pytest
from pixelweave.app.editor.main_window import EXAMPLES, MainWindow
from pixelweave.nodes.document import Document, read_document
from PySide6 import QtCore, QtGui, QtTest, QtWidgets
from scipy import ndimage

ANSWERS: list[str] = []


def _answer(_parent, _name) -> str:
    return ANSWERS.pop(0) if ANSWERS else "discard"


@pytest.fixture
def window(qtbot):
    w = MainWindow(ask_unsaved=_answer)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.session.load(Document())  # nothing unsaved: closing asks nothing
    w.jobs.shutdown()


def _blur_document(tmp_path: Path) -> Path:
    doc = Document("Blur test")
    doc.add_node("image_input", "photo", {"sample": "camera.png", "element": "f32", "layout": "gray"}, (0, 0))
    doc.add_node("output", "result", {"element": "f32"}, (400, 0))
    doc.connect("photo", "result", "image")
    path = tmp_path / "blur.json"
    doc.save(path)
    return path


DEEP = ("pyramids.json", "local_laplacian.json")  # slow to lower: opened by the test after this one


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.json") if p.name not in DEEP))
def test_every_example_opens_with_its_loop_nest_and_output_preview(window, example):
    window.open_example(EXAMPLES / example)
    assert window.wait_idle()
    doc = read_document(EXAMPLES / example)
    assert window.inspection.ok, window.inspection.problems
    assert "produce" in window.loop_nest_text()
    assert window.current is not None and window.current in [n.id for n in doc.nodes]
    shown = window.preview.current_array()
    assert shown is not None and shown.size > 0
    assert sorted(window.canvas._views) == sorted(n.id for n in doc.nodes)
    assert window.log.messages("error") == []


def test_the_deepest_examples_open_too(window):
    for example in DEEP:
        window.open_example(EXAMPLES / example)
        assert window.wait_idle(300_000)
        assert window.inspection.ok and "produce" in window.loop_nest_text()
        assert window.preview.current_array() is not None


def test_build_a_pipeline_change_a_parameter_and_a_schedule(window, qtbot, tmp_path):
    assert window.open_path(_blur_document(tmp_path))
    # add a blur through the palette and wire it in through the canvas's connection gesture
    window.palette.node_requested.emit("box_blur")
    assert window.session.document.has_node("box_blur")
    views = window.canvas._views
    window.canvas.change_connections([], [[views["box_blur"].inputs()["image"].view, views["photo"].outputs()["out"].view]])
    window.canvas.change_connections(
        [[views["result"].inputs()["image"].view, views["photo"].outputs()["out"].view]],
        [[views["result"].inputs()["image"].view, views["box_blur"].outputs()["out"].view]],
    )
    assert window.session.document.node("result").inputs == {"image": "box_blur.out"}
    window.canvas.select(["box_blur"])
    assert window.wait_idle()
    camera = window.preview.current_array()
    # the parameter through its editor: radius 3
    window.properties.editor("radius").set_value(3)
    window.properties.param_edited.emit("box_blur", "radius", 3, True)
    assert window.wait_idle()
    reference = window.previews.compute(window.session.document, "photo").array.astype(np.float64)
    expected = ndimage.uniform_filter(reference, size=7, mode="nearest")
    assert np.allclose(window.preview.current_array(), expected, atol=1e-4)
    assert camera.shape == expected.shape
    # the schedule: compute the blur at root, split rows; the loop nest shows it
    window.schedule.schedule_edited.emit("box_blur", {"out": [["compute_root"], ["split", "y", "yo", "yi", 16]]})
    assert window.wait_idle()
    text = window.loop_nest_text()
    assert "produce box_blur.out" in text and "y.yo" in text
    assert np.allclose(window.preview.current_array(), expected, atol=1e-4)
    # an impossible schedule is explained on the node before anything runs
    window.schedule.schedule_edited.emit("box_blur", {"out": [["compute_at", "result.out", "nowhere"]]})
    assert window.wait_idle()
    assert any("no loop named nowhere" in m for m in window.inspection.problems_of("box_blur"))
    assert "no loop named nowhere" in window.canvas.view_of("box_blur").view.toolTip()
    # undo twice: back to the good schedule and its loop nest
    window.session_undo()
    assert window.wait_idle()
    assert window.inspection.ok and "y.yo" in window.loop_nest_text()
    window.session_undo()
    window.session_redo()
    assert window.session.document.node("box_blur").schedule == {"out": [["compute_root"], ["split", "y", "yo", "yi", 16]]}


def test_a_forbidden_connection_is_refused_with_a_reason(window, tmp_path):
    assert window.open_path(_blur_document(tmp_path))
    window.palette.node_requested.emit("histogram")
    views = window.canvas._views
    window.canvas.change_connections([], [[views["histogram"].inputs()["image"].view, views["photo"].outputs()["out"].view]])
    before = window.session.document.node("result").inputs
    # the output of a histogram (array) into the image port of a blur
    window.palette.node_requested.emit("box_blur")
    window.canvas.change_connections([], [[views["box_blur"].inputs()["image"].view, views["histogram"].outputs()["out"].view]])
    assert "image" not in window.session.document.node("box_blur").inputs
    assert any("cannot connect `histogram.out` to `box_blur.image`" in m for m in window.log.messages("error"))
    assert window.session.document.node("result").inputs == before
    # the view shows no pipe for the refused connection
    assert views["box_blur"].inputs()["image"].connected_ports() == []


def test_save_reopen_dirty_marker_and_prompt(window, tmp_path):
    path = _blur_document(tmp_path)
    assert window.open_path(path)
    assert not window.isWindowModified()
    window.session.set_param("result", "element", "u8")
    assert window.isWindowModified()
    ANSWERS[:] = ["cancel"]
    assert not window.open_path(path)  # the user cancelled: the edit is still there
    assert window.session.document.node("result").params["element"] == "u8"
    target = tmp_path / "copy.json"
    assert window.save_as(target)
    assert not window.isWindowModified()
    assert window.recent_files()[0] == target.resolve()
    saved = window.session.document.dumps()
    assert window.open_path(path)
    assert window.open_path(target)
    assert window.session.document.dumps() == saved
    assert read_document(target).node("result").params["element"] == "u8"


def test_copy_paste_duplicate_delete_and_group(window, tmp_path):
    assert window.open_path(_blur_document(tmp_path))
    window.canvas.select(["photo"])
    window.copy()
    window.paste()
    assert window.session.document.has_node("photo_2")
    assert window.canvas.selected_ids() == ["photo_2"]
    window.duplicate()
    copies = window.canvas.selected_ids()
    assert len(copies) == 1 and copies[0] not in ("photo", "photo_2")
    assert window.session.document.node(copies[0]).type == "image_input"
    window.delete_selected()
    assert not window.session.document.has_node(copies[0])
    window.canvas.select(["photo", "result"])
    window.group_selection()
    assert [g.nodes for g in window.session.document.groups] == [["photo", "result"]]
    assert len(window.canvas._groups) == 1
    window.session_undo()
    assert window.session.document.groups == [] and window.canvas._groups == {}


def test_autosave_and_recovery_after_a_crash(window, tmp_path, isolated_settings):
    assert window.open_path(_blur_document(tmp_path))
    window.session.set_param("result", "element", "u16")
    window.write_autosave()
    written = window.autosave.path
    assert written.exists()
    # pretend the file was left by a process that died: rename it to a pid that is not running
    left = written.with_name("autosave-999999.json")
    written.rename(left)
    assert window.autosave.leftovers() == [left]
    window.session.load(Document())
    window.recover(left)
    assert window.session.document.node("result").params["element"] == "u16"
    assert window.isWindowModified()
    assert not left.exists()


def test_benchmark_and_export_from_the_window(window, qtbot, tmp_path):
    window.open_example(EXAMPLES / "blur.json")
    assert window.wait_idle()
    window.benchmark.runs.setValue(3)
    with qtbot.waitSignal(window.benchmark.finished, timeout=120_000) as blocker:
        window.run_benchmark()
    result = blocker.args[0]
    assert len(result.times) == 3 and result.median > 0
    assert set(result.per_node_ms) <= {n.id for n in window.session.document.nodes}
    assert len(window.benchmark.history()) == 1
    window.export_dialog()
    dialog = window.last_export_dialog
    dialog.set_folder(tmp_path / "lib")
    with qtbot.waitSignal(dialog.exported, timeout=120_000) as exported:
        dialog.start_export()
    files = [Path(f).name for f in exported.args[0].files]
    assert any(f.endswith(".so") for f in files) and any(f.endswith(".h") for f in files)
    assert all((tmp_path / "lib" / f).exists() for f in files)


def test_a_node_dragged_from_the_palette_is_dropped_onto_the_canvas(window, tmp_path):
    from pixelweave.app.editor.palette import node_type_mime_data
    from PySide6 import QtCore

    assert window.open_path(_blur_document(tmp_path))
    viewer = window.canvas.graph.viewer()
    viewer.data_dropped.emit(node_type_mime_data("gaussian_blur"), QtCore.QPoint(120, 240))
    node = window.session.document.node("gaussian_blur")
    assert node.position == (120, 240)
    assert window.canvas.selected_ids() == ["gaussian_blur"]
    window.session_undo()
    assert not window.session.document.has_node("gaussian_blur")


def test_a_long_preview_note_never_widens_the_window_and_reset_layout_restores_the_docks(window, qtbot, monkeypatch):
    window.resize(1200, 760)
    qtbot.wait(50)
    width, palette = window.width(), window.palette_dock.width()
    note = "schedule not usable for this preview (" + "Func `harris.gray` is computed inline; " * 30 + ")"
    window.preview.set_note(note)
    window.preview.show_result(np.zeros((40, 60), np.float32), "a very long title " * 20)
    qtbot.wait(50)
    assert window.width() == width and window.palette_dock.width() == palette
    assert window.minimumSizeHint().width() < 1200
    assert window.preview.note_label.toolTip() == note  # the whole text stays readable
    # the window never opens (or resets) larger than the screen
    screen = window.screen().availableGeometry()
    fitted = window._fitted_size(QtCore.QSize(5000, 5000))
    assert fitted.width() <= screen.width() and fitted.height() <= screen.height()
    # the offscreen screen is small: let the reset use the full default size to see the docks' sizes
    monkeypatch.setattr(MainWindow, "_fitted_size", lambda self, wanted: wanted)
    window.resizeDocks([window.palette_dock], [60], QtCore.Qt.Orientation.Horizontal)
    window.properties_dock.setFloating(True)
    qtbot.wait(50)
    assert window.palette_dock.width() < 100
    reset = next(a for a in window.findChildren(QtGui.QAction) if a.text() == "Reset &Layout")
    reset.trigger()
    qtbot.wait(50)
    assert window.width() == 1600
    assert 180 <= window.palette_dock.width() <= 260 and not window.properties_dock.isFloating()


def test_ctrl_z_undoes_while_the_canvas_has_focus(window, qtbot, tmp_path):
    assert window.open_path(_blur_document(tmp_path))
    window.palette.node_requested.emit("box_blur")
    assert window.session.document.has_node("box_blur")
    window.activateWindow()
    viewer = window.canvas.graph.viewer()
    viewer.setFocus()
    qtbot.waitUntil(viewer.hasFocus, timeout=2000)
    qtbot.keyClick(viewer, QtCore.Qt.Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert not window.session.document.has_node("box_blur")
    QtTest.QTest.keySequence(viewer, QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.Redo))
    assert window.session.document.has_node("box_blur")
    # no other action anywhere in the window claims the undo or redo keys
    for keys in (QtGui.QKeySequence.StandardKey.Undo, QtGui.QKeySequence.StandardKey.Redo):
        wanted = set(QtGui.QKeySequence.keyBindings(keys))
        owners = [a for a in window.findChildren(QtGui.QAction) if wanted & set(a.shortcuts())]
        owners += [a for a in viewer.findChildren(QtGui.QAction) if wanted & set(a.shortcuts()) and a not in owners]
        assert len(owners) == 1, [a.text() for a in owners]


def test_the_ctrl_hint_leaves_the_canvas_when_focus_does(window, qtbot):
    viewer = window.canvas.graph.viewer()
    window.activateWindow()
    viewer.setFocus()
    qtbot.waitUntil(viewer.hasFocus, timeout=2000)
    # a key pressed with Ctrl held, as the viewer sees it (a bare Ctrl press arrives without its modifier offscreen)
    held = QtGui.QKeyEvent(QtCore.QEvent.Type.KeyPress, QtCore.Qt.Key.Key_Space, QtCore.Qt.KeyboardModifier.ControlModifier)
    QtWidgets.QApplication.sendEvent(viewer, held)
    assert "Deselect" in window.canvas.key_hint()
    window.palette.search_field.setFocus()  # e.g. a dialog or another panel takes the key release
    qtbot.waitUntil(lambda: not viewer.hasFocus(), timeout=2000)
    assert window.canvas.key_hint() == ""


class _Release:
    """The scene position of a mouse release, as NodeGraphQt's connection gesture reads it."""

    def __init__(self, point):
        self._point = point

    def scenePos(self):
        return self._point


def _drag_pipe(viewer, out_port, in_port) -> None:
    """Drags a pipe from an output port item and releases it on an input port item."""
    viewer._origin_pos = viewer._previous_pos = viewer.mapFromScene(out_port.sceneBoundingRect().center())
    viewer.start_live_connection(out_port)
    viewer.apply_live_connection(_Release(in_port.sceneBoundingRect().center()))


def test_a_connection_that_would_make_a_cycle_is_refused_with_the_reason(window, tmp_path):
    assert window.open_path(_blur_document(tmp_path))
    views = window.canvas._views
    window.palette.node_requested.emit("box_blur")
    window.palette.node_requested.emit("gaussian_blur")
    window.session.move_nodes({"box_blur": (0, 300), "gaussian_blur": (400, 300)})
    viewer = window.canvas.graph.viewer()
    _drag_pipe(viewer, views["photo"].outputs()["out"].view, views["box_blur"].inputs()["image"].view)
    _drag_pipe(viewer, views["box_blur"].outputs()["out"].view, views["gaussian_blur"].inputs()["image"].view)
    assert window.session.document.node("gaussian_blur").inputs == {"image": "box_blur.out"}
    # gaussian_blur -> box_blur would close the loop box_blur -> gaussian_blur -> box_blur
    _drag_pipe(viewer, views["gaussian_blur"].outputs()["out"].view, views["box_blur"].inputs()["image"].view)
    assert window.session.document.node("box_blur").inputs == {"image": "photo.out"}
    reason = "`gaussian_blur` already reads from `box_blur`"
    assert any(reason in m and "cycle" in m for m in window.log.messages("error")), window.log.messages("error")
    assert reason in window.statusBar().currentMessage()
    assert [p.node().name() for p in views["box_blur"].inputs()["image"].connected_ports()] == ["photo"]


def test_examples_open_with_readable_titles_and_new_clears_what_was_measured(window, qtbot):
    from pixelweave.app.editor.graph_canvas import READABLE_SCALE

    window.resize(1200, 760)
    qtbot.wait(50)
    window.open_example(EXAMPLES / "camera_pipeline.json")
    assert window.wait_idle()
    assert window.canvas.zoom_scale() >= READABLE_SCALE * 0.95  # a long chain is not shrunk to specks
    viewer = window.canvas.graph.viewer()
    shown = viewer.mapToScene(viewer.viewport().rect()).boundingRect()
    assert shown.intersects(window.canvas.view_of("result").view.sceneBoundingRect())  # the output end is in view
    assert window.timing.text() and window.preview.note_label.text()
    window.new_document()
    assert window.wait_idle()
    assert window.timing.text() == "" and window.preview.note_label.text() == ""
    # an empty document is a starting point, not a pipeline with problems
    assert window.inspection.ok and "empty" in window.loop_nest.message.text()
    assert "problems" not in window.loop_nest.message.text() and window.loop_nest_text() == ""
    assert window.log.messages("error") == []


def test_a_scratch_node_leaves_the_other_nodes_schedule_controls_alone(window, tmp_path):
    window.open_example(EXAMPLES / "unsharp_mask.json")
    window.canvas.select(["sharpen"])
    assert window.wait_idle()
    window.palette.node_requested.emit("gaussian_blur")  # a scratch node, not connected
    assert window.wait_idle()
    assert any("not connected" in m for m in window.inspection.problems_of("gaussian_blur"))
    assert "not connected" in window.canvas.view_of("gaussian_blur").view.toolTip()
    window.canvas.select(["sharpen"])
    assert window.wait_idle()
    panel = window.schedule
    panel.func_combo.setCurrentText("blur_x")
    # the schedule's own level, offered among the loops that enclose every use, by stable names
    assert panel.compute_combo.currentText() == "at result.out loop xo"
    levels = [panel.compute_combo.itemText(i) for i in range(panel.compute_combo.count())]
    assert levels == ["inline", "root", *(f"at result.out loop {n}" for n in ("yo", "xo", "c", "yi", "xi"))]
    assert panel.reorder_edit.text() == "v0, x, y, c"  # vectorize(x, 8) made v0, the same in every build
    assert "produce result.out" in window.loop_nest_text() and window.loop_nest.editor.isEnabled()
    # the scratch node itself says why it has nothing to schedule
    window.canvas.select(["gaussian_blur"])
    assert window.wait_idle()
    assert "not connected" in panel.problem.text()


def test_compare_gives_the_inspector_room(window, qtbot):
    from pixelweave.app.editor.benchmark_panel import HistoryEntry
    from pixelweave.nodes.benchmark import BenchmarkResult

    nest = "\n".join(f"{'  ' * k}for x{k}:" for k in range(14))
    for median in (0.5496, 0.3):
        result = BenchmarkResult("Unsharp mask", "host", 2, [median] * 2, median, median, median, 0.24, 0.24 / median,
                                 0.5, 1, {"sharpen": median * 2e3}, nest)  # fmt: skip
        window.benchmark._add_history(HistoryEntry("12:00:00", "Unsharp mask", "sharpen: tile", {}, result))
    window.resize(1600, 1000)  # the size the issue was seen at
    qtbot.wait(50)
    assert window.inspector_dock.height() < 1000 * 0.4
    window.benchmark.compare(0, 1)
    qtbot.wait(50)
    assert window.inspector_dock.height() >= 1000 * 0.4 and window.bottom_tabs.currentWidget() is window.benchmark
    view = window.benchmark.compare_view
    assert view.times.viewport().height() // view.times.rowHeight(0) >= 6
    assert view.nest_a.viewport().height() // view.nest_a.fontMetrics().lineSpacing() >= 8


def test_trace_schedule_from_the_run_menu(window, qtbot):
    window.open_example(EXAMPLES / "blur.json")
    assert window.wait_idle()
    action = next(a for a in window.findChildren(QtGui.QAction) if a.text() == "&Trace Schedule")
    assert action.shortcut().toString() == "Ctrl+T"
    window.trace.side.setValue(16)
    with qtbot.waitSignal(window.trace.finished, timeout=120_000) as blocker:
        action.trigger()
    assert window.bottom_tabs.currentWidget() is window.trace
    labels = {f.label for f in blocker.args[0].funcs}
    assert {"blur: blur_x", "result: out"} <= labels
    window.new_document()
    assert window.trace.trace is None and window.trace.status.text() == "No trace yet."


def test_generator_nodes_loaded_from_a_file_join_the_palette_and_preview(window, tmp_path):
    from pixelweave.nodes.node_type import forget_node_type

    from tests.nodes.document_samples import GENERATORS, numpy_soften

    broken = tmp_path / "broken.py"
    broken.write_text("this is not python\n")
    assert not window.load_generator_nodes(broken)
    assert "cannot load generator nodes" in window.log.messages("error")[-1]
    gens = tmp_path / "gens.py"
    gens.write_text(GENERATORS)
    try:
        assert window.load_generator_nodes(gens)
        window.palette.set_filter("soften")
        assert window.palette.visible_type_names() == ["generator_soften"]
        doc = Document("Generator test")
        doc.add_node("image_input", "photo", {"sample": "camera.png", "element": "u8", "layout": "gray"}, (0, 0))
        doc.add_node("generator_soften", "soft", {"gain": 1, "offset": 0}, (200, 0))
        doc.add_node("output", "result", {"element": "u8"}, (400, 0))
        doc.connect("photo", "soft", "input")
        doc.connect("soft", "result", "image", "output")
        path = tmp_path / "soft.json"
        doc.save(path)
        assert window.open_path(path)
        window.canvas.select(["result"])
        assert window.wait_idle()
        photo = window.previews.compute(window.session.document, "photo").array
        assert np.array_equal(window.preview.current_array(), numpy_soften(photo, 1, 0))
        assert "produce soft.blur" in window.loop_nest_text()
    finally:
        forget_node_type("generator_soften")
        forget_node_type("generator_split_tone")
        window.palette.reload()
