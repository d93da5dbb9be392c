"""Auto-schedule in the editor's schedule panel, clicked as a person would: the analytic
schedule and the tuner change the document's schedule in one undoable edit, show the change
in directives and loop nest, plot the tuner's best time, and Cancel stops the tuner."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from pixelweave.nodes.pipeline_build import build_document
from PySide6 import QtCore

from tests.nodes.document_samples import blur_document, numpy_box_blur, write_document, write_samples

LEFT = QtCore.Qt.MouseButton.LeftButton


def _open_blur(window, tmp_path: Path) -> np.ndarray:
    gray = write_samples(tmp_path)["gray"]
    assert window.open_path(write_document(tmp_path / "blur.json", blur_document("gray.png", "gray", 2)))
    assert window.wait_idle()
    return gray


def _schedules(window) -> dict[str, dict]:
    return {n.id: dict(n.schedule) for n in window.session.document.nodes}


def _choose(panel, method: str, scope: int = 0, budget: int = 30) -> None:
    panel.method_combo.setCurrentIndex(["analytic", "tune"].index(method))
    panel.scope_combo.setCurrentIndex(scope)
    panel.budget_spin.setValue(budget)


def test_analytic_auto_schedule_is_one_undoable_edit_shown_as_a_change(window, qtbot, tmp_path):
    gray = _open_blur(window, tmp_path)
    panel = window.schedule.auto
    assert _schedules(window) == {"input": {}, "blur": {}, "result": {}}
    _choose(panel, "analytic")
    qtbot.mouseClick(panel.run_button, LEFT)
    assert window.wait_idle() and not panel.is_running()
    after = _schedules(window)
    assert any(d[0] == "parallel" for d in after["result"]["out"])
    assert any(d[0] == "compute_at" for ds in after["blur"].values() for d in ds)
    assert "+# result" in panel.directives_diff.toPlainText()
    assert "+  parallel" in panel.loop_nest_diff.toPlainText()  # the strips' loop, new in the nest
    assert "parallel" in window.loop_nest_text() and "vectorized" in window.loop_nest_text()
    out = build_document(window.session.document).run({"input": gray})["result"]
    np.testing.assert_array_equal(out, numpy_box_blur(gray, 2))
    assert window.undo_action.text() == "&Undo Auto-schedule pipeline"
    window.undo_action.trigger()
    assert _schedules(window) == {"input": {}, "blur": {}, "result": {}}
    window.redo_action.trigger()
    assert _schedules(window) == after


def test_auto_schedule_of_the_selected_node_leaves_the_others(window, qtbot, tmp_path):
    _open_blur(window, tmp_path)
    window.canvas.select(["blur"])
    assert window.wait_idle()
    panel = window.schedule.auto
    assert panel.scope_combo.model().item(1).isEnabled()
    _choose(panel, "analytic", scope=1)
    qtbot.mouseClick(panel.run_button, LEFT)
    assert window.wait_idle()
    after = _schedules(window)
    assert after["result"] == {} and after["blur"]  # the output keeps its (default) schedule
    assert all(d[0] != "compute_at" for ds in after["blur"].values() for d in ds)  # not in result's loops
    assert window.inspection.ok, window.inspection.problems
    window.canvas.select([])
    assert not panel.scope_combo.model().item(1).isEnabled() and panel.scope_combo.currentIndex() == 0


def test_tuning_plots_the_best_time_and_applies_the_result(window, qtbot, tmp_path):
    gray = _open_blur(window, tmp_path)
    panel = window.schedule.auto
    _choose(panel, "tune", budget=2)
    assert panel.budget_spin.isEnabled()
    qtbot.mouseClick(panel.run_button, LEFT)
    assert panel.is_running() and panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    assert window.wait_idle() and not panel.is_running()
    points = panel.points()
    assert points and all(best > 0 for _, best in points)
    xs, ys = panel.curve.getData()
    assert len(xs) == len(points) and list(ys) == [best for _, best in points]
    assert "ms" in panel.status.text() and "candidates" in panel.status.text()
    assert window.session.can_undo()
    out = build_document(window.session.document).run({"input": gray})["result"]
    np.testing.assert_array_equal(out, numpy_box_blur(gray, 2))


def test_cancel_stops_the_tuner_and_changes_nothing(window, qtbot, tmp_path):
    _open_blur(window, tmp_path)
    panel = window.schedule.auto
    _choose(panel, "tune", budget=600)
    qtbot.mouseClick(panel.run_button, LEFT)
    qtbot.waitUntil(lambda: len(panel.points()) > 0, timeout=60_000)  # the tuner is searching
    started = time.perf_counter()
    qtbot.mouseClick(panel.cancel_button, LEFT)
    assert window.jobs.wait_idle(30_000)  # long before the 600 s budget ends
    assert time.perf_counter() - started < 30
    assert not panel.is_running() and "Cancelled" in panel.status.text()
    assert _schedules(window) == {"input": {}, "blur": {}, "result": {}}
    assert not window.session.can_undo()
