"""What the person sees while the editor works: the last picture stays, dimmed, with a
progress bar, until the new one arrives; the inspector and the time label say they are out
of date until the document's new results arrive; previews never wait behind inspection."""

import threading

import numpy as np
from pixelweave.app.editor.jobs import JobRunner, thread_of
from pixelweave.app.editor.main_window import EXAMPLES, INSPECTOR_OUT_OF_DATE, OUT_OF_DATE
from pixelweave.app.editor.preview_panel import PreviewPanel


def test_a_stale_picture_is_dimmed_and_labelled_until_the_next_result(qtbot):
    panel = PreviewPanel()
    qtbot.addWidget(panel)
    picture = np.linspace(0, 1, 64 * 48, dtype=np.float32).reshape(48, 64)
    panel.show_result(picture, "blur")
    assert panel.opacity() == 1.0 and not panel.is_stale() and panel.stale_label.isHidden()
    panel.set_busy(True)
    panel.set_stale(True, "the document changed")
    assert panel.opacity() < 1.0
    assert panel.current_array() is picture  # the last picture stays while the new one is computed
    assert panel.stale_label.text() == "(the document changed — updating…)" and not panel.stale_label.isHidden()
    panel.set_progress(3, 10)
    assert (panel.busy_indicator.value(), panel.busy_indicator.maximum()) == (3, 10)
    panel.show_result(picture * 2, "blur")
    assert panel.opacity() == 1.0 and not panel.is_stale() and panel.stale_label.isHidden()
    panel.set_stale(True)
    panel.show_message("input `image` is not connected", error=True)
    assert not panel.is_stale()  # a message is current too


def test_previews_do_not_wait_behind_a_long_inspection(qtbot):
    runner = JobRunner()
    release = threading.Event()
    order = []
    assert thread_of("preview") != thread_of("analysis") and thread_of("statement") != thread_of("analysis")

    def long_inspection(token, progress):
        release.wait(20)
        return "inspection"

    runner.submit("statement", long_inspection, done=order.append)
    runner.submit("preview", lambda token, progress: "picture", done=order.append)
    qtbot.waitUntil(lambda: order == ["picture"], timeout=10_000)
    release.set()
    assert runner.wait_idle(10_000)
    assert order == ["picture", "inspection"]
    runner.shutdown()


def test_an_edit_marks_preview_inspector_and_time_out_of_date_until_they_update(window):
    window.open_example(EXAMPLES / "blur.json")
    assert window.wait_idle()
    assert window.preview.current_array() is not None and window.loop_nest_text()
    assert window.inspector_dock.windowTitle() == "Inspector" and OUT_OF_DATE not in window.timing.text()
    before = window.preview.current_array()
    node = next(n.id for n in window.session.document.nodes if n.type == "gaussian_blur")
    sigma = window.session.document.node(node).params["sigma"]
    window.session.set_param(node, "sigma", sigma + 2.0)
    assert window.preview.is_stale() and window.preview.opacity() < 1.0
    assert window.preview.current_array() is before  # still the last picture, dimmed
    assert window.inspector_dock.windowTitle() == INSPECTOR_OUT_OF_DATE
    assert window.timing.text().endswith(OUT_OF_DATE)
    assert window.wait_idle()
    assert not window.preview.is_stale() and window.preview.opacity() == 1.0
    assert window.inspector_dock.windowTitle() == "Inspector"
    assert OUT_OF_DATE not in window.timing.text() and "ms" in window.timing.text()
    assert not np.array_equal(window.preview.current_array(), before)
