"""The Trace tab: a traced run of the document on a small corner of its sample images
(nodes.schedule_trace), played back as an animation of every Func's storage, the way
Halide's HalideTraceViz draws it: a point lights up when it is stored and fades to the
Func's colour, flashes green when it is read, and the realizations open at that moment are
outlined in orange, so the order a schedule computes pixels in, and what it recomputes or reuses, can
be watched and compared between schedules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.app.editor.jobs import CancelToken, JobRunner, build_copied_document
from pixelweave.nodes.document import Document
from pixelweave.nodes.schedule_trace import DEFAULT_SIDE, MAX_SIDE, ScheduleTrace, state_at, trace_document
from PySide6 import QtCore, QtGui, QtWidgets

LANE = "trace"
FRAME_MS = 33
SPEEDS = {"Slow": 900, "Normal": 300, "Fast": 90}  # frames for the whole trace
_FUNC_COLOURS = [(70, 110, 200), (200, 110, 60), (80, 160, 90), (160, 90, 170), (60, 160, 170), (170, 150, 60)]
_NEVER = (36, 36, 40)
_STORED_NOW = np.array((255, 240, 120), dtype=np.float32)
_LOADED_NOW = np.array((90, 255, 120), dtype=np.float32)
TITLE_HEIGHT = 16
GAP = 10
MIN_CELL, MAX_CELL = 24, 240  # pixels: the square each Func's picture is fitted into


def _trace_job(data: dict[str, Any], path: Path | None, side: int, loads: bool, token: CancelToken) -> Any:
    """Worker-thread work: build the copied document and trace one run."""
    built = build_copied_document(data, path, token)
    return trace_document(built, built.sample_inputs(), side=side, loads=loads, should_stop=token.check)


def frame_image(trace: ScheduleTrace, position: int, func: int) -> tuple[np.ndarray, list[tuple]]:
    """The RGB picture (height, width, 3, uint8) of Func `func` after `position` events, and
    its open realizations: never stored points dark, stored ones fading from bright yellow
    to the Func's colour, recently read ones green."""
    stored, loaded, boxes = state_at(trace, position, func)
    fade = max(1.0, len(trace) / 40)
    colour = np.array(_FUNC_COLOURS[func % len(_FUNC_COLOURS)], dtype=np.float32)
    rgb = np.empty((*stored.shape, 3), dtype=np.float32)
    rgb[...] = _NEVER
    done = stored >= 0
    age = np.clip((position - stored) / fade, 0.0, 1.0)[..., None]
    rgb[done] = (_STORED_NOW * (1 - age) + colour * age)[done]
    read = loaded >= 0
    recent = np.clip(1.0 - (position - loaded) / fade, 0.0, 1.0)[..., None]
    rgb[read] = (rgb * (1 - recent) + _LOADED_NOW * recent)[read]
    return np.ascontiguousarray(rgb.astype(np.uint8)), boxes


class TraceCanvas(QtWidgets.QWidget):
    """Every traced Func's storage, side by side, at the current position of the trace."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: ScheduleTrace | None = None
        self.position = 0
        self.setMinimumSize(200, 120)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)

    def set_trace(self, trace: ScheduleTrace | None) -> None:
        self.trace = trace
        self.position = 0
        self.update()

    def set_position(self, position: int) -> None:
        self.position = position
        self.update()

    def layout_panels(self) -> list[tuple[QtCore.QRectF, float]]:
        """Each Func's rectangle and pixels per point: equal square cells, as large as lets
        them all fit the widget, each Func's box scaled to fill its cell (a deep pyramid's
        small levels stay visible next to full-size images)."""
        trace = self.trace
        if trace is None or not trace.funcs:
            return []
        width, height = max(self.width(), 1), max(self.height(), 1)
        count = len(trace.funcs)
        cell = MIN_CELL
        for size in range(MAX_CELL, MIN_CELL - 1, -4):
            columns = max(1, (width - GAP) // (size + GAP))
            rows = -(-count // columns)
            if GAP + rows * (size + TITLE_HEIGHT + GAP) <= height:
                cell = size
                break
        columns = max(1, (width - GAP) // (cell + GAP))
        placed = []
        for i, f in enumerate(trace.funcs):
            row, column = divmod(i, columns)
            scale = min(cell / f.width, cell / f.height)
            left = GAP + column * (cell + GAP)
            top = GAP + row * (cell + TITLE_HEIGHT + GAP) + TITLE_HEIGHT
            rect = QtCore.QRectF(left, top, max(2.0, f.width * scale), max(2.0, f.height * scale))
            placed.append((rect, scale))
        return placed

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QtGui.QPainter(self)
        painter.fillRect(self.rect(), self.palette().color(QtGui.QPalette.ColorRole.Base))
        trace = self.trace
        if trace is None:
            painter.drawText(self.rect(), QtCore.Qt.AlignmentFlag.AlignCenter, "Press Trace to record a run.")
            return
        placed = self.layout_panels()
        painter.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform, False)
        metrics = painter.fontMetrics()
        outline = QtGui.QPen(QtGui.QColor(234, 88, 12), 2)
        for i, (f, (rect, scale)) in enumerate(zip(trace.funcs, placed, strict=True)):
            rgb, boxes = frame_image(trace, self.position, i)
            image = QtGui.QImage(
                rgb.data, rgb.shape[1], rgb.shape[0], rgb.strides[0], QtGui.QImage.Format.Format_RGB888
            )
            painter.drawImage(rect, image)
            painter.setPen(self.palette().color(QtGui.QPalette.ColorRole.Text))
            cell = max(int(rect.width()), int(rect.height()), MIN_CELL)
            label = metrics.elidedText(f.label, QtCore.Qt.TextElideMode.ElideMiddle, cell)
            painter.drawText(QtCore.QPointF(rect.left(), rect.top() - 4), label)
            painter.setPen(outline)
            for bx, by, bw, bh in boxes:
                painter.drawRect(
                    QtCore.QRectF(
                        rect.left() + (bx - f.x0) * scale, rect.top() + (by - f.y0) * scale, bw * scale, bh * scale
                    )
                )
        painter.end()


class TracePanel(QtWidgets.QWidget):
    """Controls, the canvas and the event under the cursor; runs traces on the job runner."""

    finished = QtCore.Signal(object)

    def __init__(self, jobs: JobRunner, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self._document: Document | None = None
        self._running = False
        self.trace: ScheduleTrace | None = None

        self.run_button = QtWidgets.QPushButton("Trace")
        self.run_button.setToolTip("Run the pipeline on a corner of its sample images and record every store")
        self.side = QtWidgets.QSpinBox()
        self.side.setRange(8, MAX_SIDE)
        self.side.setValue(DEFAULT_SIDE)
        self.side.setSuffix(" px")
        self.side.setToolTip("The corner of the input images the traced run computes (doubled if tiles need more)")
        self.loads = QtWidgets.QCheckBox("Loads")
        self.loads.setChecked(False)
        self.loads.setToolTip(
            "Also record reads of each Func (shows reuse; often 10-200 times more events, slow on deep pipelines)"
        )
        self.play_button = QtWidgets.QPushButton("Play")
        self.speed = QtWidgets.QComboBox()
        self.speed.addItems(list(SPEEDS))
        self.speed.setCurrentText("Normal")
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        controls = QtWidgets.QHBoxLayout()
        for w in (self.run_button, QtWidgets.QLabel("Corner"), self.side, self.loads, self.play_button, self.speed):
            controls.addWidget(w)
        controls.addWidget(self.slider, 1)

        self.status = QtWidgets.QLabel("No trace yet.")
        self.status.setMinimumWidth(1)
        self.status.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00020;")
        self.message.hide()
        self.canvas = TraceCanvas()

        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.message)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.status)

        self._timer = QtCore.QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._advance)
        self.run_button.clicked.connect(self.start)
        self.play_button.clicked.connect(self.toggle_play)
        self.slider.valueChanged.connect(self._on_slider)
        self._update_buttons()

    # ------------------------------------------------------------------ public API
    def set_document(self, document: Document | None) -> None:
        """The document Trace will run (copied when a trace starts)."""
        self._document = document
        self._update_buttons()

    def is_running(self) -> bool:
        return self._running

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        """Records a traced run of the current document on the job runner."""
        if self._document is None:
            self._show_error("Open or create a document first: there is nothing to trace.")
            return
        data = copy.deepcopy(self._document.to_json())
        path, side, loads = self._document.path, self.side.value(), self.loads.isChecked()
        self.pause()
        self._running = True
        self.message.hide()
        self.status.setText(f"Tracing a {side}x{side} corner…")
        self._update_buttons()
        self.jobs.submit(
            LANE,
            lambda token, _progress: _trace_job(data, path, side, loads, token),
            done=self._on_done,
            failed=self._on_failed,
        )

    def cancel(self) -> None:
        if self._running:
            self.jobs.cancel(LANE)
            self._running = False
            self.status.setText("Trace cancelled.")
            self._update_buttons()

    def clear(self) -> None:
        """Another document: the last trace no longer applies."""
        self.pause()
        self.trace = None
        self.canvas.set_trace(None)
        self.slider.setRange(0, 0)
        self.status.setText("No trace yet.")
        self.message.hide()
        self._update_buttons()

    def set_position(self, position: int) -> None:
        """Show the state after the first `position` events."""
        self.slider.setValue(position)

    def position(self) -> int:
        return self.slider.value()

    def play(self) -> None:
        if self.trace is None or len(self.trace) == 0:
            return
        if self.position() >= len(self.trace):
            self.set_position(0)
        self._timer.start()
        self.play_button.setText("Pause")

    def pause(self) -> None:
        self._timer.stop()
        self.play_button.setText("Play")

    def toggle_play(self) -> None:
        self.pause() if self.is_playing() else self.play()

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        trace = self.trace
        if trace is None:
            self.pause()
            return
        step = max(1, len(trace) // SPEEDS[self.speed.currentText()])
        position = min(len(trace), self.position() + step)
        self.set_position(position)
        if position >= len(trace):
            self.pause()

    def _on_slider(self, position: int) -> None:
        self.canvas.set_position(position)
        trace = self.trace
        if trace is None:
            return
        if position == 0:
            self.status.setText(f"{len(trace)} events recorded; before the first one.")
        else:
            self.status.setText(f"Event {position} of {len(trace)}: {trace.describe(position - 1)}")

    def _on_done(self, trace: ScheduleTrace) -> None:
        self._running = False
        self.trace = trace
        self.canvas.set_trace(trace)
        self.slider.setRange(0, len(trace))
        self.slider.setValue(0)
        self._on_slider(0)
        width, height = trace.input_size
        note = f"Traced a {width}x{height} corner: {trace.counts['store']} stores, {trace.counts['load']} loads"
        if trace.truncated:
            note += f"; the first {len(trace)} events are shown"
        if trace.left_out:
            note += f"; not traced (too many points for one trace): {', '.join(trace.left_out)}"
            self.status.setToolTip(note)
        self.status.setText(note + ".")
        self._update_buttons()
        self.finished.emit(trace)

    def _on_failed(self, error: BaseException, _traceback_text: str) -> None:
        self._running = False
        problems = getattr(error, "problems", None)
        if problems:
            self._show_error("The document cannot be traced:\n" + "\n".join(f"• {p}" for p in problems))
        else:
            self._show_error(f"The trace failed: {error}")
        self.status.setText("No trace.")
        self._update_buttons()

    def _show_error(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    def _update_buttons(self) -> None:
        self.run_button.setEnabled(self._document is not None and not self._running)
        has_trace = self.trace is not None and len(self.trace) > 0
        self.play_button.setEnabled(has_trace)
        self.slider.setEnabled(has_trace)
