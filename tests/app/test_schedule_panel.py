"""The schedule panel: controls, directive list, presets and raw text each emit the whole new
schedule of the node (or show, in place, why not)."""

from __future__ import annotations

from pixelweave.app.editor.schedule_panel import SchedulePanel
from PySide6 import QtCore

LEFT = QtCore.Qt.MouseButton.LeftButton
FUNCS = {"blur_x": ["x", "y", "c"], "out": ["x", "y", "c"]}
# where each Func may be computed: the Func using it, with its loops outermost first
LEVELS = {"blur_x": [("out", ["c", "y", "x"])], "out": [("result.out", ["c", "y", "x"])]}


def make(qtbot, schedule=None) -> SchedulePanel:
    panel = SchedulePanel()
    qtbot.addWidget(panel)
    panel.resize(640, 620)
    panel.show()
    panel.show_node("sharpen", FUNCS, schedule or {}, LEVELS)
    return panel


def emitted(qtbot, panel, action) -> tuple[str, dict]:
    with qtbot.waitSignal(panel.schedule_edited, timeout=1000) as blocker:
        action()
    return blocker.args[0], blocker.args[1]


def test_starts_empty_and_disabled(qtbot):
    panel = SchedulePanel()
    qtbot.addWidget(panel)
    assert not any(p.isEnabled() for p in panel.node_pages) and panel.title.text() == "No node selected"
    assert panel.auto.isEnabled()  # the whole pipeline can be auto-scheduled without a selection
    panel.show_node("sharpen", FUNCS, {}, LEVELS)
    assert all(p.isEnabled() for p in panel.node_pages) and panel.current_key() == "out"
    panel.clear()
    assert not any(p.isEnabled() for p in panel.node_pages)


def test_compute_at_a_consumer_loop(qtbot):
    panel = make(qtbot)
    panel.func_combo.setCurrentText("blur_x")
    labels = [panel.compute_combo.itemText(i) for i in range(panel.compute_combo.count())]
    # only the loops of the Func that uses it: its own node's `out`, not the consumer's consumer
    assert labels == ["inline", "root", "at out loop c", "at out loop y", "at out loop x"]
    panel.compute_combo.setCurrentText("at out loop y")
    node, schedule = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.compute_button, LEFT))
    assert node == "sharpen" and schedule == {"blur_x": [["compute_at", "out", "y"]]}
    assert panel.compute_combo.currentText() == "at out loop y"
    panel.store_combo.setCurrentText("root")
    _, schedule = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.store_button, LEFT))
    assert schedule == {"blur_x": [["compute_at", "out", "y"], ["store_root"]]}
    panel.compute_combo.setCurrentText("root")  # replaces the compute level, keeps the rest
    _, schedule = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.compute_button, LEFT))
    assert schedule == {"blur_x": [["compute_root"], ["store_root"]]}
    panel.func_combo.setCurrentText("out")
    labels = [panel.compute_combo.itemText(i) for i in range(panel.compute_combo.count())]
    assert "at result.out loop y" in labels and not any("at out" in t for t in labels)


def test_the_compute_level_shown_is_the_schedules_own_even_where_not_offered(qtbot):
    panel = make(qtbot, {"blur_x": [["compute_at", "result.out", "xo"], ["vectorize", "x", 8]]})
    panel.func_combo.setCurrentText("blur_x")
    assert panel.compute_combo.currentText() == "at result.out loop xo"  # never "inline"
    assert panel.compute_combo.currentData() == ["compute_at", "result.out", "xo"]
    # the loops offered are the engine's, by stable names: vectorize(x, 8) made v0 inside x
    assert panel.reorder_edit.text() == "v0, x, y, c"
    assert [panel.vector_loop.itemText(i) for i in range(panel.vector_loop.count())] == ["v0", "x", "y", "c"]


def test_split_tile_vectorize_parallel_unroll_reorder_gpu(qtbot):
    panel = make(qtbot)
    panel.split_loop.setCurrentText("y")
    panel.split_factor.setValue(16)
    panel.split_tail.setCurrentText("guard_with_if")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.split_button, LEFT))
    assert s == {"out": [["split", "y", "yo", "yi", 16, "guard_with_if"]]}
    loops = [panel.parallel_loop.itemText(i) for i in range(panel.parallel_loop.count())]
    assert loops == ["x", "yi", "yo", "c"]
    panel.parallel_loop.setCurrentText("yo")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.parallel_button, LEFT))
    assert s["out"][-1] == ["parallel", "yo"]
    panel.vector_loop.setCurrentText("x")
    panel.vector_width.setCurrentText("16")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.vector_button, LEFT))
    assert s["out"][-1] == ["vectorize", "x", 16]
    panel.unroll_loop.setCurrentText("c")
    panel.unroll_factor.setCurrentText("no split")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.unroll_button, LEFT))
    assert s["out"][-1] == ["unroll", "c"]
    panel.reorder_edit.setText("x, c, yi, yo")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.reorder_button, LEFT))
    assert s["out"][-1] == ["reorder", "x", "c", "yi", "yo"]
    assert len(s["out"]) == 5 and panel.directive_list.count() == 5

    panel.func_combo.setCurrentText("blur_x")
    panel.tile_xsize.setValue(32)
    panel.tile_ysize.setValue(8)
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.tile_button, LEFT))
    assert s["blur_x"] == [["tile", "x", "y", "xo", "yo", "xi", "yi", 32, 8]]
    assert len(s["out"]) == 5  # the whole schedule of the node is emitted
    assert not panel.gpu_button.isEnabled()  # GPU mapping is for the OpenCL schedules
    panel.set_target("opencl")
    panel.gpu_x.setCurrentText("xo")
    panel.gpu_y.setCurrentText("yo")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.gpu_button, LEFT))
    assert s["blur_x"][-1] == ["gpu_tile", "xo", "yo", "bx", "by", "tx", "ty", 16, 16]


def test_gpu_controls_are_live_for_the_opencl_target_only(qtbot):
    panel = make(qtbot)
    assert not panel.gpu_button.isEnabled() and not panel.threads_button.isEnabled()
    assert panel.preset_button.isEnabled() and panel.tabs.isTabEnabled(2)
    panel.set_target("opencl")
    assert panel.title.text() == "OpenCL schedule of `sharpen`"
    assert panel.gpu_button.isEnabled() and panel.threads_button.isEnabled()
    assert not panel.preset_button.isEnabled() and not panel.tabs.isTabEnabled(2)  # they write CPU schedules
    panel.func_combo.setCurrentText("blur_x")
    assert (panel.threads_x.currentText(), panel.threads_y.currentText()) == ("x", "y")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.threads_button, LEFT))
    assert s == {"blur_x": [["gpu_threads", "x", "y"]]}
    panel.threads_y.setCurrentText("(none)")
    panel.threads_x.setCurrentText("c")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.threads_button, LEFT))
    assert s["blur_x"][-1] == ["gpu_threads", "c"]
    panel.set_target("host")
    assert panel.title.text() == "Schedule of `sharpen`" and not panel.gpu_button.isEnabled()


def test_directive_list_remove_and_move(qtbot):
    schedule = {"out": [["split", "y", "yo", "yi", 8], ["parallel", "yo"], ["vectorize", "x", 8]]}
    panel = make(qtbot, schedule)
    items = [panel.directive_list.item(i).text() for i in range(panel.directive_list.count())]
    assert items == ["split(y, yo, yi, 8)", "parallel(yo)", "vectorize(x, 8)"]
    panel.directive_list.setCurrentRow(2)
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.up_button, LEFT))
    assert s["out"] == [["split", "y", "yo", "yi", 8], ["vectorize", "x", 8], ["parallel", "yo"]]
    assert panel.directive_list.currentRow() == 1
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.remove_button, LEFT))
    assert s["out"] == [["split", "y", "yo", "yi", 8], ["parallel", "yo"]]
    panel.directive_list.setCurrentRow(0)
    assert not panel.up_button.isEnabled()
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.down_button, LEFT))
    assert s["out"] == [["parallel", "yo"], ["split", "y", "yo", "yi", 8]]
    panel.directive_list.setCurrentRow(1)
    qtbot.mouseClick(panel.remove_button, LEFT)
    panel.directive_list.setCurrentRow(0)
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.remove_button, LEFT))
    assert s == {}


def test_preset_request(qtbot):
    panel = make(qtbot)
    panel.preset_combo.setCurrentText("sliding window")
    with qtbot.waitSignal(panel.preset_requested, timeout=1000) as blocker:
        qtbot.mouseClick(panel.preset_button, LEFT)
    assert blocker.args == ["sharpen", "sliding window"]


def test_raw_text_applies_on_ctrl_enter(qtbot):
    panel = make(qtbot, {"out": [["parallel", "y"]]})
    panel.tabs.setCurrentIndex(1)
    assert panel.text_edit.toPlainText() == "out.parallel(y)\n"
    panel.text_edit.setPlainText("")
    panel.text_edit.setFocus()
    qtbot.keyClicks(panel.text_edit, "blur_x.compute_at(result.out, y).vectorize(x, 8)")
    with qtbot.waitSignal(panel.schedule_edited, timeout=1000) as blocker:
        qtbot.keyClick(panel.text_edit, QtCore.Qt.Key.Key_Return, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert blocker.args == ["sharpen", {"blur_x": [["compute_at", "result.out", "y"], ["vectorize", "x", 8]]}]


def test_raw_text_error_is_underlined_in_place(qtbot):
    panel = make(qtbot)
    panel.tabs.setCurrentIndex(1)
    panel.text_edit.setPlainText("out.parallel(y)\nout.vectorise(x, 8)\n")
    with qtbot.assertNotEmitted(panel.schedule_edited):
        qtbot.mouseClick(panel.text_apply, LEFT)
    assert panel.text_error.isVisible()
    assert "line 2, column 5" in panel.text_error.text() and "did you mean `vectorize`" in panel.text_error.text()
    (sel,) = panel.text_edit.extraSelections()
    assert sel.cursor.selectedText() == "vectorise"
    panel.text_edit.setPlainText("out.parallel(y)\nout.vectorize(x, 8)\n")
    emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.text_apply, LEFT))
    assert not panel.text_error.isVisible() and panel.text_edit.extraSelections() == []


def test_static_problems_are_shown_before_emitting(qtbot):
    panel = make(qtbot)
    panel.reorder_edit.setText("x, zz")
    with qtbot.assertNotEmitted(panel.schedule_edited):
        qtbot.mouseClick(panel.reorder_button, LEFT)
    assert panel.problem.isVisible() and "unknown loop zz" in panel.problem.text()
    panel.set_problem("the engine refuses the schedule: Func `sharpen.blur_x` cannot be computed at ...")
    assert "engine refuses" in panel.problem.text()
    panel.set_problem(None)
    assert not panel.problem.isVisible()


def test_update_keys_cannot_take_compute_levels(qtbot):
    panel = SchedulePanel()
    qtbot.addWidget(panel)
    panel.show_node("equalize", {"hist": ["i"], "hist.update(0)": ["rx", "ry"]}, {}, {})
    panel.func_combo.setCurrentText("hist.update(0)")
    assert not panel.compute_button.isEnabled() and panel.parallel_loop.itemText(1) == "ry"
    panel.parallel_loop.setCurrentText("ry")
    _, s = emitted(qtbot, panel, lambda: qtbot.mouseClick(panel.parallel_button, LEFT))
    assert s == {"hist.update(0)": [["parallel", "ry"]]}


def test_screenshot(qtbot):
    panel = make(qtbot, {"out": [["split", "y", "yo", "yi", 8], ["parallel", "yo"]]})
    panel.set_problem("the engine refuses the schedule: an example of the verdict shown in place")
    qtbot.wait(50)
    panel.grab().save("/tmp/schedule_panel.png")
    panel.tabs.setCurrentIndex(1)
    qtbot.wait(20)
    panel.grab().save("/tmp/schedule_panel_text.png")


def test_the_controls_scroll_instead_of_widening_the_dock(qtbot):
    panel = make(qtbot)
    panel.set_problem("the engine refuses it: " + "a long reason " * 40)
    hint = panel.minimumSizeHint()
    assert hint.width() < 400 and hint.height() < 300
