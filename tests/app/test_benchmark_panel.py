"""The benchmark panel driven like a user: set the runs, click Run, wait for the result;
cancel a long run; compare two runs with different schedules; restore an earlier schedule;
see errors in the panel."""

from __future__ import annotations

import difflib

import numpy as np
import pytest
from pixelweave.app.editor.benchmark_panel import BenchmarkPanel, HistoryEntry
from pixelweave.nodes.benchmark import BenchmarkResult
from pixelweave.nodes.document import Document
from PySide6 import QtCore

from tests.nodes.document_samples import sample_document


@pytest.fixture
def panel(qtbot, jobs):
    widget = BenchmarkPanel(jobs)
    qtbot.addWidget(widget)
    return widget


def _document(folder, **schedules) -> Document:
    return sample_document(folder, **schedules)


def _run(qtbot, panel: BenchmarkPanel, runs: int):
    panel.runs.setValue(runs)
    with qtbot.waitSignal(panel.finished, timeout=60_000) as blocker:
        qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
        assert panel.is_running()
    return blocker.args[0]


def _select(panel: BenchmarkPanel, rows: list[int]) -> None:
    table = panel.history_table
    table.clearSelection()
    flags = QtCore.QItemSelectionModel.SelectionFlag.Select | QtCore.QItemSelectionModel.SelectionFlag.Rows
    for row in rows:
        table.selectionModel().select(table.model().index(row, 0), flags)


def test_run_shows_times_chart_and_history(qtbot, panel, tmp_path):
    panel.set_document(_document(tmp_path, blur_schedule={"out": [["compute_root"]]}))
    panel.runs.clear()
    qtbot.keyClicks(panel.runs, "3")
    result = _run(qtbot, panel, panel.runs.value())
    assert not panel.is_running()
    assert len(result.times) == 3
    times_ms = np.array(result.times) * 1e3
    assert panel.value_labels["median"].text() == f"{np.median(times_ms):.3f} ms"
    assert panel.value_labels["minimum"].text() == f"{times_ms.min():.3f} ms"
    assert panel.value_labels["maximum"].text() == f"{times_ms.max():.3f} ms"
    mp_per_s = 200 * 240 / 1e6 / np.median(result.times)
    assert panel.value_labels["throughput"].text().startswith(f"{mp_per_s:.1f} MP/s")
    assert panel.progress.value() == panel.progress.maximum() == 3
    bars = panel.bar_values()
    assert set(bars) == {"blur", "result"} and all(v > 0 for v in bars.values())
    assert bars == pytest.approx(result.per_node_ms)
    table = panel.history_table
    assert table.rowCount() == 1
    assert table.item(0, 1).text() == "Box blur"
    assert table.item(0, 2).text() == "blur.out: compute_root"
    assert table.item(0, 3).text() == f"{np.median(times_ms):.3f}"
    panel.resize(900, 420)
    panel.show()
    qtbot.wait(50)
    panel.grab().save(str(tmp_path / "benchmark_panel.png"))


def test_cancel_stops_a_long_run(qtbot, panel, jobs, tmp_path):
    panel.set_document(_document(tmp_path))
    panel.runs.setValue(10_000)
    qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.progress.value() >= 1, timeout=60_000)
    assert panel.is_running() and panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    with qtbot.assertNotEmitted(panel.finished):
        qtbot.mouseClick(panel.cancel_button, QtCore.Qt.MouseButton.LeftButton)
        assert not panel.is_running()
        assert jobs.wait_idle(30_000)
    assert panel.progress.format() == "cancelled"
    assert panel.history_table.rowCount() == 0
    assert panel.run_button.isEnabled()


def test_compare_two_schedules_and_restore_the_first(qtbot, panel, tmp_path):
    doc = _document(tmp_path, blur_schedule={"out": [["compute_root"]]})
    panel.set_document(doc)
    first_json = doc.to_json()
    first = _run(qtbot, panel, 2)
    doc.set_schedule("result", "out", [["split", "y", "y", "yi", 8], ["parallel", "y"]])
    second = _run(qtbot, panel, 2)
    assert panel.history_table.item(1, 2).text() == "blur.out: compute_root; result.out: split, parallel"

    _select(panel, [0, 1])
    assert panel.compare_button.isEnabled() and not panel.restore_button.isEnabled()
    qtbot.mouseClick(panel.compare_button, QtCore.Qt.MouseButton.LeftButton)
    view = panel.compare_view
    assert panel.tabs.currentWidget() is view
    assert view.times.item(0, 0).text() == "median ms"
    assert view.times.item(0, 1).text() == f"{np.median(first.times) * 1e3:.3f}"
    assert view.times.item(0, 2).text() == f"{np.median(second.times) * 1e3:.3f}"
    assert view.nest_a.toPlainText() == first.loop_nest and view.nest_b.toPlainText() == second.loop_nest
    lines_a, lines_b = first.loop_nest.splitlines(), second.loop_nest.splitlines()
    added = [line for line in difflib.ndiff(lines_a, lines_b) if line.startswith("+ ")]
    marked_b = [lines_b[i] for i in view.highlighted_lines(view.nest_b)]
    assert len(marked_b) == len(added) and any("parallel" in line for line in marked_b)
    assert not any("parallel" in line for line in lines_a)
    panel.resize(1000, 600)
    panel.show()
    qtbot.wait(50)
    panel.grab().save(str(tmp_path / "benchmark_compare.png"))

    _select(panel, [0])
    assert panel.restore_button.isEnabled() and not panel.compare_button.isEnabled()
    with qtbot.waitSignal(panel.restore_requested) as blocker:
        qtbot.mouseClick(panel.restore_button, QtCore.Qt.MouseButton.LeftButton)
    assert blocker.args[0] == first_json


def test_errors_are_shown_in_the_panel(qtbot, panel, jobs, tmp_path):
    assert not panel.run_button.isEnabled()
    panel.start()
    assert "nothing to benchmark" in panel.message.text()

    doc = _document(tmp_path, out_schedule={"out": [["vectorize", "zz", 8]]})
    panel.set_document(doc)
    qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
    assert jobs.wait_idle(60_000)
    assert not panel.is_running() and panel.progress.format() == "failed"
    assert panel.message.isVisibleTo(panel)
    assert "cannot be benchmarked" in panel.message.text() and "node `result`" in panel.message.text()
    assert "zz" in panel.message.text()

    doc = _document(tmp_path)
    doc.node("input").params["sample"] = "missing.png"
    panel.set_document(doc)
    qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
    assert jobs.wait_idle(60_000)
    assert "no image for input `input`" in panel.message.text()
    assert panel.history_table.rowCount() == 0


def _measured(median_ms: float, per_node_ms: dict[str, float], nest: str = "") -> BenchmarkResult:
    """A result as run_benchmark gives it (the numbers of the unsharp-mask run in the issue)."""
    seconds = median_ms / 1e3
    return BenchmarkResult(
        document_name="Unsharp mask", target="host", runs=3, times=[seconds] * 3, median=seconds,
        minimum=seconds, maximum=seconds, megapixels=0.24, megapixels_per_second=0.24 / seconds,
        compile_seconds=0.5, output_count=1, per_node_ms=per_node_ms, loop_nest=nest,
    )  # fmt: skip


def test_per_node_bars_are_labelled_as_cpu_time_beside_the_wall_median(qtbot, panel, monkeypatch):
    monkeypatch.setenv("PIXELWEAVE_NUM_THREADS", "2")
    panel._show_result(_measured(549.6, {"sharpen": 1070.0, "result": 12.0}))
    note = panel.bars_note.text()
    assert "1082.0 ms of CPU time" in note and "549.6 ms of wall time" in note
    assert "2 threads" in note and "exceed the wall time (2.0x)" in note
    assert "summed over threads" in panel.chart.getAxis("bottom").labelText
    assert panel._median_line.isVisible() and panel._median_line.value() == pytest.approx(549.6)
    assert panel.chart.getViewBox().viewRange()[0][1] >= 1070.0  # the longest bar and the line both show
    # a run whose bars fit in the wall time says nothing about threads
    panel._show_result(_measured(20.0, {"blur": 15.0}))
    assert "threads" not in panel.bars_note.text() and "15.0 ms of CPU time" in panel.bars_note.text()
    panel.clear_results()
    assert panel.bars_note.text() == "" and not panel._median_line.isVisible()


def test_compare_has_room_for_its_rows_and_loop_nests_in_a_short_dock(qtbot, panel):
    nest = "\n".join(f"{'  ' * k}for x{k}:" for k in range(14))
    for median, ms in ((549.6, 1070.0), (300.0, 580.0)):
        entry = HistoryEntry("12:00:00", "Unsharp mask", "sharpen: tile", {}, _measured(median, {"sharpen": ms}, nest))
        panel._add_history(entry)
    panel.resize(1200, 280)  # the inspector dock's size in a 1600x1000 window
    panel.show()
    panel.compare(0, 1)
    qtbot.wait(50)
    view = panel.compare_view
    table_rows = view.times.viewport().height() // view.times.rowHeight(0)
    assert view.times.rowCount() == 6 and table_rows >= 6  # every row of times in view
    line_height = view.nest_a.fontMetrics().lineSpacing()
    assert view.nest_a.viewport().height() // line_height >= 8 and view.nest_b.viewport().height() // line_height >= 8

    # a narrow panel puts the times above the nests, still with room for both
    panel.resize(560, 420)
    qtbot.wait(50)
    assert view.panes.orientation() == QtCore.Qt.Orientation.Vertical
    assert view.times.viewport().height() // view.times.rowHeight(0) >= 4
    assert view.nest_a.viewport().height() // line_height >= 5 and view.nest_a.viewport().width() > 150
