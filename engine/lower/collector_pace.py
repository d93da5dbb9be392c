"""Python's cycle collector paced for lowering: its youngest generation collected every
LOWERING_THRESHOLD allocations instead of every 700 (the interpreter's default).

Lowering makes hundreds of thousands of nodes, intervals and memo entries that stay alive
until a pass ends, and leaves no reference cycles (tests/lowering/test_cyclic_garbage.py),
so each collection during it finds nothing and its cost is the traversal: at the default
pace the collector ran ~270 times in local Laplacian's lowering, 57 ms of its ~420 ms,
two of them full collections of everything the lowering held.

The thresholds are process-wide. Lowerings on several threads (the editor) share one
raise, restored when the last one leaves, and only if nobody changed them meanwhile. A
threshold of 0 (automatic collection off) or one already above the pace is left alone,
and automatic collection is never turned on or off here (the editor turns it off while
its workers run, see app/editor/gui_gc.py).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOWERING_THRESHOLD = 10_000


class _Pace:
    """The lowerings inside, and the thresholds they replaced and set (None: untouched)."""

    lock = threading.Lock()
    users = 0
    saved: tuple[int, ...] | None = None
    raised: tuple[int, ...] | None = None


@contextmanager
def paced_collector() -> Iterator[None]:
    """Within: the youngest generation's threshold at least LOWERING_THRESHOLD."""
    with _Pace.lock:
        if _Pace.users == 0:
            current = gc.get_threshold()
            if 0 < current[0] < LOWERING_THRESHOLD:
                _Pace.saved, _Pace.raised = current, (LOWERING_THRESHOLD, *current[1:])
                gc.set_threshold(*_Pace.raised)
        _Pace.users += 1
    try:
        yield
    finally:
        with _Pace.lock:
            _Pace.users -= 1
            if _Pace.users == 0 and _Pace.raised is not None:
                if gc.get_threshold() == _Pace.raised and _Pace.saved is not None:
                    gc.set_threshold(*_Pace.saved)
                _Pace.saved = _Pace.raised = None
