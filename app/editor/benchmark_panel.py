"""The benchmark panel: times the current document on its sample inputs off the GUI thread
(nodes.benchmark.run_benchmark on the job runner's "benchmark" lane), shows the numbers and
a per-node bar chart, and keeps every run in a history whose rows can be compared side by
side or used to restore the schedule that produced them."""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from pixelweave.app.editor.jobs import CancelToken, JobRunner, build_copied_document
from pixelweave.nodes.benchmark import (
    BenchmarkResult,
    compare_per_node,
    differing_lines,
    run_benchmark,
    schedule_summary,
)
from pixelweave.nodes.document import Document
from PySide6 import QtCore, QtGui, QtWidgets

LANE = "benchmark"
_DIFFERENT = QtGui.QColor(255, 236, 160)
_BETTER = QtGui.QColor(200, 235, 200)
_WORSE = QtGui.QColor(245, 205, 205)
WIDE_COMPARE = 760  # pixels: from this width the Compare tab puts the times beside the loop nests


@dataclass
class HistoryEntry:
    """One finished benchmark: when, on which document and schedule, and what it measured."""

    finished_at: str  # time of day, HH:MM:SS
    document_name: str
    schedule: str  # one-line summary of the schedules
    document_json: dict[str, Any]
    result: BenchmarkResult


def _benchmark_job(
    data: dict[str, Any],
    path: Path | None,
    runs: int,
    token: CancelToken,
    progress: Any,
    target: str = "host",
    device: str | None = None,
) -> Any:
    """Worker-thread work: build the copied document for target, read its samples, time it
    (on the OpenCL device for "opencl": no per-node times there)."""
    built = build_copied_document(data, path, token, target)
    images = built.sample_inputs()
    return run_benchmark(
        built, images, runs=runs, progress=progress, should_stop=token.check, target=target, device=device
    )


def thread_count() -> int:
    """The threads parallel loops run on: the runtime's pool size (PIXELWEAVE_NUM_THREADS,
    else one per CPU)."""
    from pixelweave.engine.runtime.thread_pool import NUM_THREADS_ENV

    given = os.environ.get(NUM_THREADS_ENV, "")
    return int(given) if given.isdigit() and int(given) > 0 else os.cpu_count() or 1


def per_node_note(result: BenchmarkResult, threads: int) -> str:
    """What the per-node bars measure against the run's wall time, in words: they are CPU time
    summed over the threads of parallel loops, so together they can exceed the median."""
    if not result.per_node_ms:
        return ""
    total, median = sum(result.per_node_ms.values()), result.median * 1e3
    text = (
        f"The bars add up to {total:.1f} ms of CPU time per run; a run took {median:.1f} ms of wall time "
        f"(median, the dashed line)."
    )
    if total > median * 1.05:
        text += (
            f" Parallel loops run on up to {threads} threads at once, and each thread's time counts, "
            f"so the bars together exceed the wall time ({total / median:.1f}x)."
        )
    return text


def _error_text(error: BaseException) -> str:
    problems = getattr(error, "problems", None)
    if problems:
        return "The document cannot be benchmarked:\n" + "\n".join(f"• {p}" for p in problems)
    return f"The benchmark failed: {error}"


class _CompareView(QtWidgets.QWidget):
    """Two history entries side by side: their times, per-node times and loop nests, with
    the loop-nest lines that differ highlighted."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QtWidgets.QLabel("Select two runs in the history and press Compare.")
        # two lines at most (A and B), clipped rather than wrapped; the whole text in the tooltip
        self.heading.setMinimumWidth(1)
        self.heading.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.times = QtWidgets.QTableWidget(0, 4)
        self.times.setHorizontalHeaderLabels(["", "A", "B", "B vs A"])
        self.times.verticalHeader().setVisible(False)
        self.times.verticalHeader().setDefaultSectionSize(22)
        self.times.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.nest_a, self.nest_b = QtWidgets.QPlainTextEdit(), QtWidgets.QPlainTextEdit()
        for nest in (self.nest_a, self.nest_b):
            nest.setReadOnly(True)
            nest.setFont(font)
            nest.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.times.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.times.horizontalHeader().setStretchLastSection(True)
        # the times beside the loop nests where the panel is wide (the inspector dock is wide and
        # short: stacked, the table showed two rows and each nest three lines), above them where
        # it is narrow; the two nests always side by side
        nests = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        for title, nest in (("A", self.nest_a), ("B", self.nest_b)):
            box = QtWidgets.QWidget()
            column = QtWidgets.QVBoxLayout(box)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(1)
            column.addWidget(QtWidgets.QLabel(f"Loop nest of {title}"))
            column.addWidget(nest, 1)
            nests.addWidget(box)
        panes = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        panes.addWidget(self.times)
        panes.addWidget(nests)
        panes.setStretchFactor(0, 3)
        panes.setStretchFactor(1, 8)
        panes.setChildrenCollapsible(False)
        self.panes = panes
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(panes, 1)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Times beside the nests from WIDE_COMPARE pixels on, above them in a narrower panel."""
        super().resizeEvent(event)
        wide = event.size().width() >= WIDE_COMPARE
        orientation = QtCore.Qt.Orientation.Horizontal if wide else QtCore.Qt.Orientation.Vertical
        if self.panes.orientation() != orientation:
            self.panes.setOrientation(orientation)
            self._share_room()

    def _share_room(self) -> None:
        """The times get what they need to show every column (beside the nests) or every row
        (above them), at most half; the loop nests the rest."""
        table = self.times
        if self.panes.orientation() == QtCore.Qt.Orientation.Horizontal:
            needed = sum(table.columnWidth(c) for c in range(table.columnCount())) + 2 * table.frameWidth() + 18
        else:
            rows = sum(table.rowHeight(r) for r in range(table.rowCount())) or 5 * 22
            needed = rows + table.horizontalHeader().height() + 2 * table.frameWidth() + 18
        total = sum(self.panes.sizes())
        first = min(needed, total // 2)
        self.panes.setSizes([first, total - first])

    def show_entries(self, a: HistoryEntry, b: HistoryEntry) -> None:
        text = "\n".join(f"{k}: {e.finished_at} {e.document_name} — {e.schedule}" for k, e in (("A", a), ("B", b)))
        self.heading.setText(text)
        self.heading.setToolTip(text)
        ra, rb = a.result, b.result
        rows: list[tuple[str, float | None, float | None, bool]] = [
            ("median ms", ra.median * 1e3, rb.median * 1e3, True),
            ("min ms", ra.minimum * 1e3, rb.minimum * 1e3, True),
            ("max ms", ra.maximum * 1e3, rb.maximum * 1e3, True),
            ("megapixels/s", ra.megapixels_per_second, rb.megapixels_per_second, False),
            ("compile ms", ra.compile_seconds * 1e3, rb.compile_seconds * 1e3, True),
        ]
        rows += [(f"node {n} ms", x, y, True) for n, x, y in compare_per_node(ra, rb)]
        self.times.setRowCount(len(rows))
        for i, (label, x, y, lower_is_better) in enumerate(rows):
            change, colour = "", None
            if x is not None and y is not None and x > 0:
                ratio = y / x
                better = ratio < 1 if lower_is_better else ratio > 1
                verdict = "same" if ratio == 1 else ("better" if better else "worse")
                change = f"{ratio:.2f}x ({verdict})"
                colour = {"better": _BETTER, "worse": _WORSE}.get(verdict)
            elif x is None or y is None:
                change, colour = "only in " + ("B" if x is None else "A"), _DIFFERENT
            cells = [label, "—" if x is None else f"{x:.3f}", "—" if y is None else f"{y:.3f}", change]
            for j, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                if j == 3 and colour is not None:
                    item.setBackground(colour)
                self.times.setItem(i, j, item)
        self.times.resizeColumnsToContents()
        self._share_room()
        only_a, only_b = differing_lines(ra.loop_nest, rb.loop_nest)
        self._show_nest(self.nest_a, ra.loop_nest, only_a)
        self._show_nest(self.nest_b, rb.loop_nest, only_b)

    @staticmethod
    def _show_nest(view: QtWidgets.QPlainTextEdit, text: str, marked: set[int]) -> None:
        view.setPlainText(text)
        selections = []
        for line in sorted(marked):
            block = view.document().findBlockByNumber(line)
            selection = QtWidgets.QTextEdit.ExtraSelection()
            selection.cursor = QtGui.QTextCursor(block)
            selection.format.setBackground(_DIFFERENT)
            selection.format.setProperty(QtGui.QTextFormat.Property.FullWidthSelection, True)
            selections.append(selection)
        view.setExtraSelections(selections)

    def highlighted_lines(self, view: QtWidgets.QPlainTextEdit) -> list[int]:
        """Line numbers highlighted as different in a loop-nest view (what a user sees marked)."""
        return [s.cursor.blockNumber() for s in view.extraSelections()]


class BenchmarkPanel(QtWidgets.QWidget):
    """Run the document N times and keep a history of the runs.

    Signals: `finished(BenchmarkResult)` after a run; `restore_requested(dict)` with the
    document JSON of the history row the user wants back; `room_wanted()` when Compare is shown.
    """

    finished = QtCore.Signal(object)
    restore_requested = QtCore.Signal(dict)
    room_wanted = QtCore.Signal()  # Compare is shown: the panel would like more height

    def __init__(self, jobs: JobRunner, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self._document: Document | None = None
        self._running = False
        self._history: list[HistoryEntry] = []
        self._pending: tuple[dict[str, Any], str] | None = None
        self.target, self.device = "host", None  # what Run times: the editor's target

        self.runs = QtWidgets.QSpinBox()
        self.runs.setRange(1, 10_000)
        self.runs.setValue(10)
        self.runs.setToolTip("Timed runs after one warm-up run; the median is reported")
        self.run_button = QtWidgets.QPushButton("Run")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        controls = QtWidgets.QHBoxLayout()
        controls.addWidget(QtWidgets.QLabel("Runs"))
        controls.addWidget(self.runs)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        controls.addWidget(self.progress, 1)

        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet("color: #b00020;")
        self.message.hide()

        self.tabs = QtWidgets.QTabWidget()
        self.tabs.addTab(self._make_results(), "Results")
        self.tabs.addTab(self._make_history(), "History")
        self.compare_view = _CompareView()
        self.tabs.addTab(self.compare_view, "Compare")

        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.message)
        layout.addWidget(self.tabs, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.history_table.itemSelectionChanged.connect(self._update_buttons)
        self._update_buttons()

    # ------------------------------------------------------------------ construction
    def _make_results(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        form = QtWidgets.QFormLayout()
        self.value_labels: dict[str, QtWidgets.QLabel] = {}
        for key, title in (("median", "Median"), ("minimum", "Minimum"), ("maximum", "Maximum"),
                           ("throughput", "Throughput"), ("compile", "Compile time")):  # fmt: skip
            label = QtWidgets.QLabel("—")
            label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            self.value_labels[key] = label
            form.addRow(title, label)
        self.chart = pg.PlotWidget()
        self.chart.setBackground("w")
        self.chart.setLabel("bottom", "CPU ms per run, summed over threads")
        self.chart.getAxis("bottom").enableAutoSIPrefix(False)
        self.chart.setMouseEnabled(x=False, y=False)
        self.chart.hideButtons()
        self.chart.setMinimumHeight(140)
        self._bars: pg.BarGraphItem | None = None
        self._bar_labels: list[str] = []
        dashed = pg.mkPen("#c2410c", width=2, style=QtCore.Qt.PenStyle.DashLine)
        self._median_line = pg.InfiniteLine(angle=90, movable=False, pen=dashed)
        self._median_line.hide()
        self.chart.addItem(self._median_line)
        self.bars_note = QtWidgets.QLabel()
        self.bars_note.setWordWrap(True)
        self.bars_note.setStyleSheet("color: palette(mid);")
        self.bars_note.setMinimumWidth(1)
        self.bars_note.setMaximumWidth(340)
        numbers = QtWidgets.QVBoxLayout()
        numbers.addLayout(form)
        numbers.addWidget(self.bars_note)
        numbers.addStretch(1)
        layout = QtWidgets.QHBoxLayout(page)
        layout.addLayout(numbers)
        layout.addWidget(self.chart, 1)
        return page

    def _make_history(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        self.history_table = QtWidgets.QTableWidget(0, 5)
        self.history_table.setHorizontalHeaderLabels(["Time", "Document", "Schedule", "Median ms", "MP/s"])
        self.history_table.verticalHeader().setVisible(False)
        self.history_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.history_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.history_table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        header = self.history_table.horizontalHeader()
        header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.compare_button = QtWidgets.QPushButton("Compare")
        self.compare_button.setToolTip("Select two runs to see their times and loop nests side by side")
        self.restore_button = QtWidgets.QPushButton("Restore schedule")
        self.restore_button.setToolTip("Bring back the document (and its schedules) that the selected run timed")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.compare_button)
        buttons.addWidget(self.restore_button)
        buttons.addStretch(1)
        layout = QtWidgets.QVBoxLayout(page)
        layout.addWidget(self.history_table, 1)
        layout.addLayout(buttons)
        self.compare_button.clicked.connect(self.compare_selected)
        self.restore_button.clicked.connect(self.restore_selected)
        return page

    # ------------------------------------------------------------------ public API
    def set_document(self, document: Document | None) -> None:
        """The document Run will time (copied when a run starts, so later edits do not leak in)."""
        self._document = document
        self._update_buttons()

    def set_target(self, target: str, device: str | None = None) -> None:
        """Time the document for target ("host" or "opencl", on `device`) from the next Run."""
        self.target, self.device = target, device

    def clear_results(self) -> None:
        """Another document: the Results tab no longer shows the last one's numbers (the history
        keeps every run, with its document's name)."""
        for label in self.value_labels.values():
            label.setText("—")
        if self._bars is not None:
            self.chart.removeItem(self._bars)
            self._bars = None
        self._bar_labels = []
        self.chart.getAxis("left").setTicks([[]])
        self._median_line.hide()
        self.bars_note.clear()
        self.message.hide()

    def is_running(self) -> bool:
        return self._running

    def history(self) -> list[HistoryEntry]:
        return list(self._history)

    def start(self) -> None:
        """Starts a benchmark of the current document on the job runner."""
        if self._document is None:
            self._show_error("Open or create a document first: there is nothing to benchmark.")
            return
        data = copy.deepcopy(self._document.to_json())
        path, runs = self._document.path, self.runs.value()
        target, device = self.target, self.device
        self._pending = (data, self._document.name)
        self._running = True
        self.message.hide()
        self.progress.setRange(0, runs)
        self.progress.setValue(0)
        self.progress.setFormat("starting…")
        self._update_buttons()
        self.jobs.submit(
            LANE,
            lambda token, progress: _benchmark_job(data, path, runs, token, progress, target, device),
            done=self._on_done,
            failed=self._on_failed,
            progress=self._on_progress,
        )

    def cancel(self) -> None:
        """Stops the running benchmark; its result is dropped."""
        if not self._running:
            return
        self.jobs.cancel(LANE)
        self._running = False
        self._pending = None
        self.progress.setValue(0)
        self.progress.setFormat("cancelled")
        self._update_buttons()

    def compare_selected(self) -> None:
        rows = self._selected_rows()
        if len(rows) != 2:
            self._show_error("Select exactly two runs in the history to compare them.")
            return
        self.compare(rows[0], rows[1])

    def compare(self, row_a: int, row_b: int) -> None:
        """Shows history rows row_a and row_b side by side in the Compare tab."""
        self.tabs.setCurrentWidget(self.compare_view)
        self.room_wanted.emit()
        self.compare_view.show_entries(self._history[row_a], self._history[row_b])

    def restore_selected(self) -> None:
        rows = self._selected_rows()
        if len(rows) != 1:
            self._show_error("Select one run in the history to restore its schedule.")
            return
        self.restore_requested.emit(copy.deepcopy(self._history[rows[0]].document_json))

    # ------------------------------------------------------------------ job callbacks (GUI thread)
    def _on_progress(self, done: int, total: int, text: str) -> None:
        if self._running:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat(f"{text} (%v/%m)" if done else text)

    def _on_done(self, result: BenchmarkResult) -> None:
        pending = self._pending
        self._running = False
        self._pending = None
        self.progress.setValue(self.progress.maximum())
        self.progress.setFormat(f"done: {result.runs} runs")
        self._update_buttons()
        self._show_result(result)
        if pending is not None:
            data, name = pending
            summary = schedule_summary(data, result.target)
            self._add_history(HistoryEntry(time.strftime("%H:%M:%S"), name, summary, data, result))
        self.finished.emit(result)

    def _on_failed(self, error: BaseException, traceback_text: str) -> None:
        self._running = False
        self._pending = None
        self.progress.setValue(0)
        self.progress.setFormat("failed")
        self._update_buttons()
        self._show_error(_error_text(error))

    # ------------------------------------------------------------------ display
    def _show_error(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    def _show_result(self, result: BenchmarkResult) -> None:
        self.value_labels["median"].setText(f"{result.median * 1e3:.3f} ms")
        self.value_labels["minimum"].setText(f"{result.minimum * 1e3:.3f} ms")
        self.value_labels["maximum"].setText(f"{result.maximum * 1e3:.3f} ms")
        self.value_labels["throughput"].setText(
            f"{result.megapixels_per_second:.1f} MP/s ({result.megapixels:.3f} MP per run)"
        )
        self.value_labels["compile"].setText(f"{result.compile_seconds * 1e3:.1f} ms ({result.target})")
        self._show_bars(result)

    def _show_bars(self, result: BenchmarkResult) -> None:
        if self._bars is not None:
            self.chart.removeItem(self._bars)
            self._bars = None
        # slowest at the top: pyqtgraph's y grows upwards
        items = sorted(result.per_node_ms.items(), key=lambda kv: kv[1])
        self.bars_note.setText(per_node_note(result, thread_count()))
        if not items:
            self.chart.getAxis("left").setTicks([[]])
            self._median_line.hide()
            return
        median_ms = result.median * 1e3
        self._median_line.setValue(median_ms)
        self._median_line.setToolTip(f"wall-clock median of a run: {median_ms:.1f} ms")
        self._median_line.show()
        self._bars = pg.BarGraphItem(
            x0=0, y=list(range(len(items))), height=0.6, width=[ms for _, ms in items], brush="#4a7ebb"
        )
        self.chart.addItem(self._bars)
        self._bar_labels = [node_id for node_id, _ in items]
        self.chart.getAxis("left").setTicks([[(i, node_id) for i, (node_id, _) in enumerate(items)]])
        self.chart.setXRange(0, max(median_ms, *(ms for _, ms in items)) * 1.05 or 1.0)
        self.chart.setYRange(-0.5, len(items) - 0.5)

    def bar_values(self) -> dict[str, float]:
        """The bar chart's data: node id -> bar length in ms (what the chart draws)."""
        if self._bars is None:
            return {}
        widths = self._bars.opts["width"]
        return {label: float(w) for label, w in zip(self._bar_labels, widths, strict=True)}

    def _add_history(self, entry: HistoryEntry) -> None:
        self._history.append(entry)
        row = self.history_table.rowCount()
        self.history_table.insertRow(row)
        cells = [entry.finished_at, entry.document_name, entry.schedule, f"{entry.result.median * 1e3:.3f}",
                 f"{entry.result.megapixels_per_second:.1f}"]  # fmt: skip
        for column, text in enumerate(cells):
            item = QtWidgets.QTableWidgetItem(text)
            item.setToolTip(text)
            if column >= 3:
                item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
            self.history_table.setItem(row, column, item)

    def _selected_rows(self) -> list[int]:
        return sorted({index.row() for index in self.history_table.selectionModel().selectedRows()})

    def _update_buttons(self) -> None:
        self.run_button.setEnabled(not self._running and self._document is not None)
        self.cancel_button.setEnabled(self._running)
        self.runs.setEnabled(not self._running)
        selected = len(self._selected_rows())
        self.compare_button.setEnabled(selected == 2)
        self.restore_button.setEnabled(selected == 1)
