"""Lowering paces Python's cycle collector (its youngest generation's threshold raised while
a lowering runs) and gives the thresholds back as it found them: after a lowering, after
one that fails, after overlapping ones, never over a threshold someone set meanwhile, and
never turning automatic collection on (threshold 0) or off."""

from __future__ import annotations

import gc
import threading

import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.lower import lower, lower_loop_nest
from pixelweave.engine.lower.collector_pace import LOWERING_THRESHOLD, paced_collector

from tests.lowering.schedules import blur


def test_raised_while_lowering_and_restored_after(default_gc_thresholds):
    pipeline, _ = blur("tiled")
    seen: list[tuple[int, ...]] = []
    lower(pipeline, check=lambda: seen.append(gc.get_threshold()))
    assert seen and all(t == (LOWERING_THRESHOLD, 10, 10) for t in seen)
    assert gc.get_threshold() == (700, 10, 10)
    lower_loop_nest(pipeline)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_a_failed_lowering(default_gc_thresholds):
    pipeline, _ = blur("tiled")

    def cancel() -> None:
        raise ScheduleError("cancelled")

    with pytest.raises(ScheduleError):
        lower(pipeline, check=cancel)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_set_meanwhile_is_kept(default_gc_thresholds):
    pipeline, _ = blur("tiled")
    lower(pipeline, check=lambda: gc.set_threshold(500, 5, 5))
    assert gc.get_threshold() == (500, 5, 5)


def test_collection_turned_off_by_threshold_zero_stays_off(default_gc_thresholds):
    gc.set_threshold(0, 10, 10)
    pipeline, _ = blur("tiled")
    seen: list[int] = []
    lower(pipeline, check=lambda: seen.append(gc.get_threshold()[0]))
    assert set(seen) == {0} and gc.get_threshold() == (0, 10, 10)


def test_overlapping_lowerings_restore_when_the_last_leaves(default_gc_thresholds):
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with paced_collector():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert inside.wait(10)
        with paced_collector():
            assert gc.get_threshold()[0] == LOWERING_THRESHOLD
        assert gc.get_threshold()[0] == LOWERING_THRESHOLD  # the other is still inside
    finally:
        leave.set()
        thread.join(10)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.isenabled()
