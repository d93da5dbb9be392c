"""Background work for the editor: compiling, running and benchmarking off the GUI thread.

Jobs are submitted to a *lane* ("preview", "analysis", "benchmark", ...): a new job in a
lane cancels the lane's older jobs, so a burst of edits only ever computes the newest state.
Lanes run on worker threads of their own where waiting would hurt: previews never queue
behind an inspection or a benchmark, and neither printing a long statement nor compiling
the fused pipeline nor a minute of schedule tuning holds up anything else (LANE_THREADS);
the other lanes share one background thread, in submission order. (The engine serializes
what must be: linking into the JIT; LLVM compiles in private contexts.)
Cancelling sets the job's token; work checks it between steps (`token.check()`), and the
result of a cancelled job is dropped.
Results, errors and progress reach the GUI thread through a queued Qt signal.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pixelweave.app.editor import gui_gc
from PySide6 import QtCore

Progress = Callable[[int, int, str], None]

# lane -> its worker thread; the other lanes share "background"
LANE_THREADS = {"preview": "preview", "statement": "statement", "fused": "fused", "autoschedule": "autoschedule"}


def thread_of(lane: str) -> str:
    """The worker thread a lane's jobs run on."""
    return LANE_THREADS.get(lane, "background")


Work = Callable[["CancelToken", Progress], Any]


class Cancelled(Exception):
    """Raised by `CancelToken.check()` inside a job whose result is no longer wanted."""


class CancelToken:
    """Set when a job's result is no longer wanted."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled


@dataclass
class _Job:
    lane: str
    work: Work | None  # None once delivered
    done: Callable[[Any], None] | None
    failed: Callable[[BaseException, str], None] | None
    progress: Callable[[int, int, str], None] | None
    token: CancelToken = field(default_factory=CancelToken)


class JobRunner(QtCore.QObject):
    """Runs jobs on worker threads (one per group of lanes); callbacks run on the GUI thread."""

    busy_changed = QtCore.Signal(bool)
    _deliver = QtCore.Signal(object)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._queues: dict[str, queue.Queue[_Job | None]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._live: list[_Job] = []  # submitted, not yet delivered (GUI thread only)
        self._closed = False  # after shutdown, jobs are refused (a closing window's timers)
        self._deliver.connect(self._on_deliver, QtCore.Qt.ConnectionType.QueuedConnection)

    def _queue_of(self, lane: str) -> queue.Queue[_Job | None]:
        """The queue of the lane's worker thread, started on first use."""
        name = thread_of(lane)
        if name not in self._queues:
            if not self._queues:
                gui_gc.hold()  # from now on, cycles are collected on the GUI thread only
            self._queues[name] = queue.Queue()
            thread = threading.Thread(
                target=self._loop, args=(self._queues[name],), name=f"pixelweave-{name}", daemon=True
            )
            self._threads[name] = thread
            thread.start()
        return self._queues[name]

    # ------------------------------------------------------------------ GUI thread
    def submit(
        self,
        lane: str,
        work: Work,
        *,
        done: Callable[[Any], None] | None = None,
        failed: Callable[[BaseException, str], None] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> CancelToken:
        """Queues `work(token, progress)`; cancels older jobs of the same lane. `done(result)`
        or `failed(error, traceback_text)` is called on the GUI thread unless cancelled.
        After `shutdown` nothing runs: the returned token is already cancelled."""
        if self._closed:
            token = CancelToken()
            token.cancel()
            return token
        self.cancel(lane)
        job = _Job(lane, work, done, failed, progress)
        was_busy = self.is_busy()
        self._live.append(job)
        self._queue_of(lane).put(job)
        if not was_busy:
            self.busy_changed.emit(True)
        return job.token

    def cancel(self, lane: str | None = None) -> None:
        """Cancels the pending and running jobs of a lane (of every lane if None)."""
        for job in self._live:
            if lane is None or job.lane == lane:
                job.token.cancel()

    def is_busy(self, lane: str | None = None) -> bool:
        return any(lane is None or job.lane == lane for job in self._live)

    def wait_idle(self, timeout_ms: int = 60_000) -> bool:
        """Processes events until every job has been delivered (for tests and shutdown)."""
        deadline = QtCore.QDeadlineTimer(timeout_ms)
        app = QtCore.QCoreApplication.instance()
        while self._live and not deadline.hasExpired():
            if app is not None:
                app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
            QtCore.QThread.msleep(2)
        return not self._live

    def shutdown(self) -> None:
        """Cancels everything and stops the worker threads (waits for their running steps);
        the runner takes no more jobs."""
        self._closed = True
        self.cancel()
        for q in self._queues.values():
            q.put(None)
        for thread in self._threads.values():
            thread.join(timeout=30)
        if self._queues:
            gui_gc.release()
        self._queues.clear()
        self._threads.clear()

    # ------------------------------------------------------------------ worker thread
    def _loop(self, jobs: queue.Queue[_Job | None]) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if job.token.cancelled:
                self._deliver.emit((job, "cancelled", None))
                continue

            def report(done: int, total: int, text: str, job: _Job = job) -> None:
                if not job.token.cancelled:
                    self._deliver.emit((job, "progress", (done, total, text)))

            try:
                assert job.work is not None  # only a delivered job has none
                result = job.work(job.token, report)
                outcome = ("cancelled", None) if job.token.cancelled else ("done", result)
            except Cancelled:
                outcome = ("cancelled", None)
            except BaseException as e:  # a job's failure is reported, never fatal to the editor
                outcome = ("failed", (e, traceback.format_exc()))
            self._deliver.emit((job, *outcome))
            del job, report, outcome  # the GUI thread drops the job's callbacks, never this one

    # ------------------------------------------------------------------ delivery (GUI thread)
    def _on_deliver(self, message: tuple[_Job, str, Any]) -> None:
        job, kind, payload = message
        if kind == "progress":
            if job.progress is not None and not job.token.cancelled:
                job.progress(*payload)
            return
        if job in self._live:
            self._live.remove(job)
        # The work and callbacks may be the last references to widgets: drop them here, on
        # the GUI thread, rather than let the worker's reference be the last.
        callbacks = job.done, job.failed
        job.work = job.done = job.failed = job.progress = None
        done, failed = callbacks
        try:
            if job.token.cancelled or kind == "cancelled":
                return
            if kind == "done" and done is not None:
                done(payload)
            elif kind == "failed" and failed is not None:
                failed(*payload)
        finally:
            if not self._live:
                self.busy_changed.emit(False)


def build_copied_document(data: dict[str, Any], path: Any, token: CancelToken, target: str = "host") -> Any:
    """Worker-thread work of the panels that run a copy of the document: build what its
    outputs read (a scratch node not connected yet is no reason to refuse) with the
    schedules of `target`, with sample images found relative to `path`, the original
    document's file."""
    from pixelweave.nodes.document import Document
    from pixelweave.nodes.output_part import output_part
    from pixelweave.nodes.pipeline_build import build_document

    doc = Document.from_json(data)
    doc.path = path
    token.check()
    built = build_document(output_part(doc)[0], target=target)
    token.check()
    return built

