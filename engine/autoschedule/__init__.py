"""Automatic schedules: `auto_schedule(pipeline)` chooses inlining, grouping, tiling,
vectorization and parallelism for a pipeline from estimates of its sizes
(`set_estimate`), applies the schedule and returns it as Halide-style text.

`method="analytic"` uses reuse analysis and a cost model with no measurement
(`analytic.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pixelweave.engine.autoschedule.analytic import AnalyticScheduler, Plan
from pixelweave.engine.autoschedule.directives import Directive, apply_directives, clear_schedules, schedule_text
from pixelweave.engine.autoschedule.machine import Machine, host_machine
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.pipeline import Pipeline

METHODS = ("analytic",)


@dataclass
class AutoSchedule:
    """A schedule chosen automatically: its directives, their text and how long the choice took."""

    directives: list[Directive]
    text: str
    method: str
    search_seconds: float
    plan: Plan | None = None

    def __str__(self) -> str:
        return self.text


def analytic_schedule(pipeline: Pipeline, machine: Machine | None = None, target: str = "host") -> AutoSchedule:
    """The analytic schedule of pipeline (not applied); ScheduleError if estimates are missing."""
    start = time.perf_counter()
    plan = AnalyticScheduler(pipeline, machine or host_machine(target)).plan()
    return AutoSchedule(plan.directives, schedule_text(plan.directives), "analytic", time.perf_counter() - start, plan)


def auto_schedule(pipeline: Pipeline, target: str = "host", method: str = "analytic") -> AutoSchedule:
    """Choose a schedule for every Func of pipeline, apply it (replacing any schedule the
    Funcs had) and check that it lowers; returns the schedule."""
    if method not in METHODS:
        raise ScheduleError(f"unknown scheduling method `{method}`; legal methods are {', '.join(METHODS)}")
    if target != "host":
        raise ScheduleError(f"the automatic scheduler plans for CPUs: target must be 'host', got {target!r}")
    clear_schedules(pipeline)
    result = analytic_schedule(pipeline, target=target)
    apply_directives(pipeline, result.directives)
    pipeline.loop_nest(target)  # lowering checks the schedule is legal
    return result


__all__ = ["AutoSchedule", "Machine", "analytic_schedule", "auto_schedule", "host_machine"]
