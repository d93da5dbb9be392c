"""Automatic schedules: `auto_schedule(pipeline)` chooses inlining, grouping, tiling,
vectorization and parallelism for a pipeline from estimates of its sizes
(`set_estimate`), applies the schedule and returns it as Halide-style text.

`method="analytic"` uses reuse analysis and a cost model with no measurement
(`analytic.py`); `method="tune"` starts there and searches for `budget_s` seconds,
timing candidates on real (or, without `inputs`, random) inputs (`tuner.py`), and keeps
the pipeline's own schedule unless a candidate is clearly faster (`acceptance.py`).
`target="opencl"` maps the analytic schedule to GPU blocks and threads (`gpu.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.autoschedule.analytic import AnalyticScheduler, Plan
from pixelweave.engine.autoschedule.directives import (
    Directive,
    apply_directives,
    clear_schedules,
    current_schedule_text,
    schedule_text,
)
from pixelweave.engine.autoschedule.gpu import gpu_directives
from pixelweave.engine.autoschedule.machine import Machine, host_machine
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.pipeline import Pipeline

METHODS = ("analytic", "tune")
GPU_TARGETS = ("opencl",)


@dataclass
class AutoSchedule:
    """A schedule chosen automatically: its directives, their text and how long the choice took."""

    directives: list[Directive]
    text: str
    method: str
    search_seconds: float
    plan: Plan | None = None
    tuning: Any = None  # the tuner's TuneResult (times, candidates tried) for method "tune"

    def __str__(self) -> str:
        return self.text


def analytic_schedule(pipeline: Pipeline, machine: Machine | None = None, target: str = "host") -> AutoSchedule:
    """The analytic schedule of pipeline (not applied); ScheduleError if estimates are missing.
    For target "opencl" its GPU mapping: kernels tiled into blocks and threads (gpu.py)."""
    start = time.perf_counter()
    scheduler = AnalyticScheduler(pipeline, machine or host_machine("host" if target in GPU_TARGETS else target))
    plan = scheduler.plan()
    if target in GPU_TARGETS:
        plan.directives = gpu_directives(pipeline, plan, scheduler.analysis)
    return AutoSchedule(plan.directives, schedule_text(plan.directives), "analytic", time.perf_counter() - start, plan)


def tuned_schedule(
    pipeline: Pipeline,
    budget_s: float = 60.0,
    inputs: dict[str, Any] | None = None,
    seed: int = 0,
    progress: Callable[[float, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    machine: Machine | None = None,
) -> AutoSchedule:
    """The best schedule the tuner finds in budget_s seconds (applied to the pipeline); the
    schedule the pipeline already has (a hand schedule) competes and is kept if fastest."""
    from pixelweave.engine.autoschedule.tuner import Tuner

    if not budget_s > 0:
        raise ScheduleError(f"the tuning budget must be a positive number of seconds, got {budget_s!r}")
    start = time.perf_counter()
    own = {id(f): f.schedule_snapshot() for f in pipeline.funcs} if current_schedule_text(pipeline) else None
    clear_schedules(pipeline)
    tuner = Tuner(pipeline, machine or host_machine(), inputs, seed, own)
    result = tuner.run(budget_s, progress, should_stop)
    if result.kept_own:
        text = "# the pipeline's own schedule was the fastest found; kept\n" + current_schedule_text(pipeline)
        return AutoSchedule([], text, "tune", time.perf_counter() - start, None, result)
    directives = result.plan.directives
    return AutoSchedule(
        directives, schedule_text(directives), "tune", time.perf_counter() - start, result.plan, result
    )


def auto_schedule(
    pipeline: Pipeline, target: str = "host", method: str = "analytic", **options: Any
) -> AutoSchedule:
    """Choose a schedule for every Func of pipeline, apply it (replacing any schedule the
    Funcs had) and check that it lowers; returns the schedule. Options of "tune":
    budget_s, inputs, seed, progress(best_seconds, tried), should_stop()."""
    if method not in METHODS:
        raise ScheduleError(f"unknown scheduling method `{method}`; legal methods are {', '.join(METHODS)}")
    if target not in ("host", *GPU_TARGETS):
        raise ScheduleError(f"the automatic scheduler plans for target 'host' or 'opencl', got {target!r}")
    if method == "tune" and target != "host":
        raise ScheduleError("the tuner measures CPU schedules only: for target 'opencl' use method='analytic'")
    if method == "tune":
        result = tuned_schedule(pipeline, **options)
        pipeline.loop_nest(target)
        return result
    if options:
        raise ScheduleError(f"the analytic scheduler takes no options, got {', '.join(sorted(options))}")
    clear_schedules(pipeline)
    result = analytic_schedule(pipeline, target=target)
    apply_directives(pipeline, result.directives)
    pipeline.loop_nest(target)  # lowering checks the schedule is legal
    return result


__all__ = ["AutoSchedule", "Machine", "analytic_schedule", "auto_schedule", "host_machine", "tuned_schedule"]
