"""Cyclic garbage is collected on the GUI thread while the editor has worker threads.

Python's cycle collector runs in whichever thread happens to allocate when a threshold is
crossed. With compiles running on worker threads, that is usually a worker; a widget that
became unreachable inside a reference cycle (a lambda connected to its own signal, say) would
then be destroyed off the GUI thread, which Qt does not survive (a segmentation fault in the
middle of a compile). So while any `JobRunner` has worker threads, automatic collection is
off and a timer on the GUI thread collects with the interpreter's own thresholds instead.
"""

from __future__ import annotations

import gc

from PySide6 import QtCore

CHECK_INTERVAL_MS = 200


class _Collector(QtCore.QObject):
    """The timer that collects; lives in the GUI thread."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(CHECK_INTERVAL_MS)
        self.timer.timeout.connect(collect_due)


_holders = [0]
_collector: list[_Collector] = []


def collect_due() -> int:
    """Collects the oldest generation whose count passed its threshold, as the interpreter
    would have; returns the number of unreachable objects found."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    generation = -1
    for g in range(3):
        if thresholds[g] and counts[g] > thresholds[g]:
            generation = g
    return gc.collect(generation) if generation >= 0 else 0


def hold() -> None:
    """Turns automatic collection off and starts collecting on the GUI thread (call from it)."""
    if _holders[0] == 0:
        if not _collector:
            _collector.append(_Collector())
        gc.disable()
        _collector[0].timer.start()
    _holders[0] += 1


def release() -> None:
    """Undoes one `hold`; the last one collects now and turns automatic collection back on."""
    if _holders[0] == 0:
        return
    _holders[0] -= 1
    if _holders[0] == 0:
        _collector[0].timer.stop()
        gc.collect()
        gc.enable()


def is_held() -> bool:
    return _holders[0] > 0
