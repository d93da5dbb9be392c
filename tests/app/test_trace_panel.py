"""The Trace tab driven like a user: click Trace, wait, scrub and play the recorded run; the
canvas shows each Func's storage filling in the order the schedule computes it."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.app.editor.trace_panel import TracePanel, frame_image
from pixelweave.nodes.document import Document
from pixelweave.nodes.schedule_trace import STORE
from PySide6 import QtCore, QtGui

from tests.nodes.document_samples import sample_document


@pytest.fixture
def panel(qtbot, jobs):
    widget = TracePanel(jobs)
    widget.resize(900, 320)
    qtbot.addWidget(widget)
    return widget


def _document(folder, **schedules) -> Document:
    return sample_document(folder, **schedules)


def _trace(qtbot, panel: TracePanel, side: int = 16):
    panel.side.setValue(side)
    with qtbot.waitSignal(panel.finished, timeout=120_000) as blocker:
        qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
        assert panel.is_running() and not panel.run_button.isEnabled()
    return blocker.args[0]


def _grab(panel: TracePanel) -> np.ndarray:
    image = panel.canvas.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB888)
    data = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    return data[:, : image.width() * 3].reshape(image.height(), image.width(), 3).copy()


def test_trace_then_scrub_and_play(qtbot, panel, tmp_path):
    assert not panel.play_button.isEnabled()
    panel.set_document(_document(tmp_path, blur_schedule={"out": [["compute_root"]]}))
    trace = _trace(qtbot, panel)
    assert len(trace) > 0 and panel.slider.maximum() == len(trace)
    assert "Traced a 16x16 corner" in panel.status.text()
    assert panel.play_button.isEnabled()
    empty = _grab(panel)
    panel.set_position(len(trace))
    full = _grab(panel)
    assert np.abs(full.astype(int) - empty.astype(int)).sum() > 0  # stored points light up
    assert panel.status.text().startswith(f"Event {len(trace)} of {len(trace)}: ")
    # every stored point of every Func is drawn in colour at the end, none at the start
    for i in range(len(trace.funcs)):
        start, _ = frame_image(trace, 0, i)
        end, _ = frame_image(trace, len(trace), i)
        stored = np.zeros(end.shape[:2], dtype=bool)
        f = trace.funcs[i]
        mine = (trace.kind == STORE) & (trace.func == i)
        stored[trace.y[mine] - f.y0, trace.x[mine] - f.x0] = True
        assert (start == start[0, 0]).all()
        assert (end[stored] != start[0, 0]).any(axis=-1).all()
    panel.set_position(0)
    qtbot.mouseClick(panel.play_button, QtCore.Qt.MouseButton.LeftButton)
    assert panel.is_playing() and panel.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: panel.position() > 0, timeout=5_000)
    qtbot.mouseClick(panel.play_button, QtCore.Qt.MouseButton.LeftButton)
    assert not panel.is_playing()


def test_errors_are_shown_in_the_panel(qtbot, panel, tmp_path):
    panel.start()
    assert "nothing to trace" in panel.message.text()
    panel.set_document(_document(tmp_path, blur_schedule={"out": [["compute_at", "result.out", "nowhere"]]}))
    panel.start()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=60_000)
    assert panel.message.text().startswith("The document cannot be traced:")
    assert "nowhere" in panel.message.text()
    assert panel.status.text() == "No trace."
    assert panel.run_button.isEnabled() and not panel.play_button.isEnabled()
