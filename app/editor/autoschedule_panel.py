"""The "Auto-schedule" tab of the schedule panel: choose a schedule automatically for the
whole pipeline or the selected node, analytically at once or by the measured tuner within a
time budget; the tuner's best time so far is plotted live, and the result is shown as the
change in directives and in the loop nest.

It only asks (`requested`, `cancel_requested`) and shows; the main window runs the work
(nodes.autoschedule.auto_schedule_change) on its job runner and applies the result as one
undoable edit."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

WHOLE, SELECTED = "Whole pipeline", "Selected node"
METHODS = {"Analytic (at once)": "analytic", "Tune (measured)": "tune"}
DEFAULT_BUDGET_S = 30


class AutoSchedulePanel(QtWidgets.QWidget):
    """Emits requested(node id or "" for the whole pipeline, method, budget seconds) and
    cancel_requested(); shows progress (`add_point`) and the outcome (`show_change`,
    `show_failure`, `show_cancelled`)."""

    requested = QtCore.Signal(str, str, float)
    cancel_requested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.node_id: str | None = None
        self._times: list[float] = []  # seconds since the start, per progress report
        self._best_ms: list[float] = []

        self.scope_combo = QtWidgets.QComboBox()
        self.scope_combo.addItems([WHOLE, SELECTED])
        self.scope_combo.setToolTip("Schedule every node, or only the selected one (the others keep theirs)")
        self.method_combo = QtWidgets.QComboBox()
        self.method_combo.addItems(list(METHODS))
        self.method_combo.setToolTip(
            "Analytic: reuse analysis and a cost model, no measurement (under a second).\n"
            "Tune: search from the analytic schedule, timing candidates on the sample images"
        )
        self.method_combo.currentTextChanged.connect(self._update_controls)
        self.budget_spin = QtWidgets.QSpinBox()
        self.budget_spin.setRange(1, 3600)
        self.budget_spin.setValue(DEFAULT_BUDGET_S)
        self.budget_spin.setSuffix(" s")
        self.budget_spin.setToolTip("How long the tuner searches")
        self.run_button = QtWidgets.QPushButton("Auto-schedule", clicked=self._request)
        self.cancel_button = QtWidgets.QPushButton("Cancel", clicked=self._cancel)
        self.status = QtWidgets.QLabel(wordWrap=True)
        self.status.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.setLabel("bottom", "seconds tuning")
        self.plot.setLabel("left", "best ms")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setMinimumHeight(90)
        self.curve = self.plot.plot([], [], pen=pg.mkPen("#2563eb", width=2), symbol="o", symbolSize=5)
        fixed = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.directives_diff = QtWidgets.QPlainTextEdit(readOnly=True)
        self.loop_nest_diff = QtWidgets.QPlainTextEdit(readOnly=True)
        for view in self.directives_diff, self.loop_nest_diff:
            view.setFont(fixed)
            view.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
            view.setPlaceholderText("The change the last automatic schedule made appears here")
        self.views = QtWidgets.QTabWidget()
        self.views.addTab(self.plot, "Tuning")
        self.views.addTab(self.directives_diff, "Directives changed")
        self.views.addTab(self.loop_nest_diff, "Loop nest changed")
        self.views.setMinimumHeight(140)

        layout = QtWidgets.QVBoxLayout(self)
        for row in ((self.scope_combo, self.method_combo), (self.budget_spin, self.run_button, self.cancel_button)):
            line = QtWidgets.QHBoxLayout()
            for w in row:
                line.addWidget(w)
            line.addStretch(1)
            layout.addLayout(line)
        layout.addWidget(self.status)
        layout.addWidget(self.views, 1)
        self._running = False
        self._update_controls()

    # ------------------------------------------------------------------ public
    def set_node(self, node_id: str | None) -> None:
        """The selected node (None: only the whole pipeline can be scheduled)."""
        self.node_id = node_id
        item = self.scope_combo.model().item(1)
        item.setEnabled(node_id is not None)
        item.setText(f"{SELECTED} ({node_id})" if node_id else SELECTED)
        if node_id is None:
            self.scope_combo.setCurrentIndex(0)

    def method(self) -> str:
        return METHODS[self.method_combo.currentText()]

    def is_running(self) -> bool:
        return self._running

    def add_point(self, seconds: float, best_seconds: float) -> None:
        """One progress report of the tuner: the best time found after `seconds` of search."""
        self._times.append(seconds)
        self._best_ms.append(best_seconds * 1e3)
        self.curve.setData(self._times, self._best_ms)
        self.status.setText(f"Tuning: best {best_seconds * 1e3:.2f} ms after {seconds:.1f} s…")

    def points(self) -> list[tuple[float, float]]:
        """The plotted (seconds, best ms) points."""
        return list(zip(self._times, self._best_ms, strict=True))

    def show_change(self, summary: str, directives_diff: str, loop_nest_diff: str) -> None:
        self._set_running(False)
        self.status.setText(summary)
        self.directives_diff.setPlainText(directives_diff or "(no directive changed)")
        self.loop_nest_diff.setPlainText(loop_nest_diff or "(the loop nest did not change)")
        self.views.setCurrentWidget(self.directives_diff)

    def show_failure(self, text: str) -> None:
        self._set_running(False)
        self.status.setText(f'<span style="color:#b91c1c">{_escape(text)}</span>')

    def show_cancelled(self) -> None:
        self._set_running(False)
        self.status.setText("Cancelled; the schedule was not changed")

    # ------------------------------------------------------------------ private
    def _request(self) -> None:
        node = self.node_id if self.scope_combo.currentIndex() == 1 and self.node_id else ""
        method = self.method()
        self._times, self._best_ms = [], []
        self.curve.setData([], [])
        self._set_running(True)
        what = f"`{node}`" if node else "the whole pipeline"
        if method == "tune":
            self.status.setText(f"Tuning {what} for up to {self.budget_spin.value()} s…")
            self.views.setCurrentWidget(self.plot)
        else:
            self.status.setText(f"Scheduling {what}…")
        self.requested.emit(node, method, float(self.budget_spin.value()))

    def _cancel(self) -> None:
        self.cancel_requested.emit()
        self.show_cancelled()

    def _set_running(self, running: bool) -> None:
        self._running = running
        self._update_controls()

    def _update_controls(self) -> None:
        self.budget_spin.setEnabled(self.method() == "tune" and not self._running)
        for w in self.scope_combo, self.method_combo, self.run_button:
            w.setEnabled(not self._running)
        self.cancel_button.setEnabled(self._running)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
