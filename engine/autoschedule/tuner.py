"""The measured tuner: a search from the analytic schedule, timing candidates on real inputs.

Each candidate is the analytic scheduler run with some of its decisions forced
(`Overrides`): a Func inlined or not, kept out of its consumer's strips, a strip height,
a tile width (2-D tiles, or strips of the whole width), a member computed per strip
instead of sliding per row, a vector width, strips serial instead of parallel, channel
loops unrolled. The schedule the pipeline came with (a hand schedule) competes too, at
the start and once more at the end. A (1+1) evolutionary search mutates the best
configuration so far one or two decisions at a time, compiles the candidate (compiled
code is cached by schedule), checks its output against the reference evaluator on a
crop, times it and keeps it if it is faster. The few fastest candidates measured
(FINALISTS) are timed once more at the end, side by side in interleaved rounds (time for
these rounds is kept out of the search's budget), and the fastest of them is timed in
fresh rounds against the pipeline's own schedule, which it replaces only if clearly
faster (`acceptance.clearly_faster`: median, least and CPU time, beyond the spread of
the runs): a lucky measurement on a loaded machine does not decide the result.
The candidates proposed follow from the seed (which of them win depends on the
measured times).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from pixelweave.engine.autoschedule.acceptance import (
    Clock,
    Timings,
    Verdict,
    clearly_faster,
    interleaved_timings,
    wall_and_cpu_clock,
)
from pixelweave.engine.autoschedule.analysis import PipelineAnalysis
from pixelweave.engine.autoschedule.analytic import AnalyticScheduler, Overrides, Plan
from pixelweave.engine.autoschedule.directives import apply_directives, clear_schedules, func_labels
from pixelweave.engine.autoschedule.estimates import output_boxes, parameter_scope
from pixelweave.engine.autoschedule.machine import Machine
from pixelweave.engine.errors import PixelweaveError, ScheduleError
from pixelweave.engine.ir.param import ImageParam
from pixelweave.engine.pipeline import Pipeline

Progress = Callable[[float, int], None]  # (best seconds so far, candidates tried)
CROP = 48  # the side of the corner of the output checked against the reference
TIMED_RUNS = 3  # at least; more (up to 4x) while they take under TIMING_BUDGET_S together
TIMING_BUDGET_S = 0.3
CONFIRM_RUNS = 4
SELECT_RUNS = 6  # interleaved rounds that pick the fastest finalist
DECIDE_RUNS = 15  # fresh interleaved rounds of that one against the own schedule (the benchmark's --runs 15)
FINALISTS = 3  # the fastest candidates of the search kept for the final comparison
MARGIN = 0.98  # a candidate must be at least 2% faster to replace the best


@dataclass
class Finalist:
    """A candidate among the fastest measured: its decisions, plan, time and runner."""

    seconds: float
    overrides: Overrides
    plan: Plan
    run: Callable[[], object]


@dataclass
class TuneResult:
    plan: Plan
    overrides: Overrides
    best_seconds: float
    start_seconds: float
    tried: int
    rejected: int
    kept_own: bool = False  # the schedule the pipeline came with was the fastest
    final_seconds: dict[str, float] | None = None  # the final rounds: "candidate k" / "winner" / "own" -> median
    finalists: list[Plan] | None = None  # the plans of the final round's candidates, fastest in the search first
    verdict: Verdict | None = None  # the final decision between the winner and the own schedule, and why


def synthetic_inputs(pipeline: Pipeline, seed: int) -> dict[str, Any]:
    """Random inputs of the estimated sizes (when no real ones are given)."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, Any] = {}
    for image in pipeline.images:
        given = image.estimates()
        if len(given) != image.dimensions():
            raise ScheduleError(
                f"the tuner needs the size of input image `{image.name()}` to make test inputs: call "
                f"{image.name()}.set_estimates(...), or pass inputs="
            )
        shape = tuple(given[i][1] for i in reversed(range(image.dimensions())))
        inputs[image.name()] = _random_array(image, shape, rng)
    return inputs


def _random_array(image: ImageParam, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dtype = image.type().numpy()
    if image.type().is_float():
        return (rng.random(shape) * 0.9 + 0.05).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, 0), min(info.max, 1 << 12), shape, endpoint=True).astype(dtype)


def output_sizes(pipeline: Pipeline) -> list[int]:
    boxes = output_boxes(pipeline)
    sizes = {tuple(int(b.hi - b.lo + 1) for b in boxes[id(f)]) for f in pipeline.outputs}
    if len(sizes) != 1:
        raise ScheduleError("the tuner runs the pipeline once for all outputs: their estimates must be equal")
    return list(sizes.pop())


class Tuner:
    def __init__(
        self,
        pipeline: Pipeline,
        machine: Machine,
        inputs: dict[str, Any] | None = None,
        seed: int = 0,
        own_schedule: dict[int, Any] | None = None,
        clock: Clock = wall_and_cpu_clock,
    ) -> None:
        self.clock = clock  # (wall, CPU) seconds now: the final decision's timer, replaceable in tests
        self.pipeline = pipeline
        self.own_schedule = own_schedule  # Func id -> schedule_snapshot(), a hand schedule to beat
        self.machine = machine
        self.rng = random.Random(seed)
        self.inputs = dict(inputs) if inputs is not None else synthetic_inputs(pipeline, seed)
        self.sizes = output_sizes(pipeline)
        self.analysis = PipelineAnalysis(pipeline, parameter_scope(pipeline), output_boxes(pipeline))
        crop = [min(s, CROP) if s > 4 else s for s in self.sizes]
        self.crop = crop
        ref = pipeline.realize_reference(crop, self.inputs)
        self.reference = ref if isinstance(ref, list) else [ref]

    # ------------------------------------------------------------------ one candidate
    def plan(self, overrides: Overrides) -> Plan:
        return AnalyticScheduler(self.pipeline, self.machine, overrides, self.analysis).plan()

    def measure(self, plan: Plan, give_up_after: float) -> tuple[float, Callable[[], object]] | None:
        """Seconds per run of the plan's schedule and a callable that runs it again, or None
        if it is wrong or does not compile."""
        clear_schedules(self.pipeline)
        try:
            apply_directives(self.pipeline, plan.directives)
        except PixelweaveError:
            return None
        return self._measure_applied(give_up_after)

    def _measure_applied(self, give_up_after: float) -> tuple[float, Callable[[], object]] | None:
        try:
            fn = self.pipeline.compile()
            outs = fn(self.sizes, self.inputs)
        except PixelweaveError:
            return None
        outs = outs if isinstance(outs, list) else [outs]
        for got, want in zip(outs, self.reference, strict=True):
            corner = got[tuple(slice(0, n) for n in reversed(self.crop))]
            if not outputs_match(corner, want):
                return None
        out = outs if len(outs) > 1 else outs[0]

        def run() -> object:
            return fn(self.sizes, self.inputs, out=out)

        best, spent, runs = float("inf"), 0.0, 0
        while runs < TIMED_RUNS or (runs < 4 * TIMED_RUNS and spent < TIMING_BUDGET_S):
            seconds = _timed(run)
            best, spent, runs = min(best, seconds), spent + seconds, runs + 1
            if best > give_up_after:
                break
        return best, run

    def compare(self, runs: list[Callable[[], object]], rounds: int) -> list[float]:
        """Least time of each callable over rounds in which each runs once, in turn (noise
        on a shared machine then falls on all of them alike)."""
        best = [float("inf")] * len(runs)
        for _ in range(rounds):
            for k, run in enumerate(runs):
                best[k] = min(best[k], _timed(run))
        return best

    def timings(self, runs: list[Callable[[], object]], rounds: int) -> list[Timings]:
        """Wall and CPU time of every run of each callable over interleaved rounds."""
        return interleaved_timings(runs, rounds, self.clock)

    def confirm(
        self, candidate: Callable[[], object], incumbent: Callable[[], object], runs: int = 0
    ) -> tuple[float, float]:
        """Least times of candidate and incumbent over runs alternating between them: a
        candidate that looked faster once is kept only if it still is (noise on a shared
        machine makes single measurements flatter the lucky)."""
        a, b = self.compare([candidate, incumbent], runs or CONFIRM_RUNS)
        return a, b

    # ------------------------------------------------------------------ mutations
    def mutate(self, overrides: Overrides, plan: Plan) -> Overrides:
        choices = []
        pure = [f for f in self.pipeline.funcs if not f.has_update_definition() and f not in self.pipeline.outputs]
        labels = func_labels(self.pipeline)
        computed = [f for f in pure if labels[id(f)] not in plan.inlined]
        members = [m for g in plan.groups for m in g.members]
        roots = [g for g in plan.groups if g.root.dimensions() >= 2 and not g.root.has_update_definition()]
        if pure:
            choices.append("inline")
        if computed:
            choices.append("keep_root")
        if roots:
            choices += ["strip", "strip"]
        if members:
            choices.append("sliding")
        if roots:
            choices += ["parallel", "width"]
        with_channels = [f for f in self.pipeline.funcs if len(f.args()) > 2 and labels[id(f)] not in plan.inlined]
        if with_channels:
            choices.append("unroll")
        choices.append("lanes")
        kind = self.rng.choice(choices)
        if kind == "inline":
            f = self.rng.choice(pure)
            return replace(overrides, inline={**overrides.inline, labels[id(f)]: labels[id(f)] not in plan.inlined})
        if kind == "keep_root":
            name = labels[id(self.rng.choice(computed))]
            return replace(overrides, keep_root=overrides.keep_root ^ {name})
        if kind == "strip":
            g = self.rng.choice(roots)
            strip = max(1, min(1024, int(g.strip * self.rng.choice((0.25, 0.5, 2, 4)))))
            return replace(overrides, strips={**overrides.strips, labels[id(g.root)]: strip})
        if kind == "width":
            g = self.rng.choice(roots)
            width = self.rng.choice([w for w in (0, 64, 128, 256, 512) if w != g.width])
            return replace(overrides, widths={**overrides.widths, labels[id(g.root)]: width})
        if kind == "parallel":
            name = labels[id(self.rng.choice(roots).root)]
            return replace(overrides, serial=overrides.serial ^ {name})
        if kind == "unroll":
            name = labels[id(self.rng.choice(with_channels))]
            return replace(overrides, unroll={**overrides.unroll, name: name not in plan.unrolled})
        if kind == "sliding":
            name = labels[id(self.rng.choice(members))]
            return replace(overrides, no_sliding=overrides.no_sliding ^ {name})
        f = self.rng.choice(self.pipeline.funcs)
        scale = self.rng.choice((0.5, 1.0, 2.0))
        return replace(overrides, lanes_scale={**overrides.lanes_scale, labels[id(f)]: scale})

    # ------------------------------------------------------------------ the search
    def run(
        self,
        budget_s: float,
        progress: Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> TuneResult:
        deadline = time.perf_counter() + budget_s
        fastest_reported = float("inf")

        def report() -> None:
            # Re-timing the incumbent beside a challenger can move its time up: the
            # callback gets the fastest time measured so far, which never gets worse.
            nonlocal fastest_reported
            fastest_reported = min(fastest_reported, best)
            if progress is not None:
                progress(fastest_reported, tried)

        best_overrides = Overrides()
        best_plan = self.plan(best_overrides)
        measured = self.measure(best_plan, float("inf"))
        if measured is None:
            raise ScheduleError("internal error: the analytic schedule does not reproduce the reference")
        best, best_run = measured
        start_seconds, tried, rejected = best, 1, 0
        finalists = [Finalist(best, best_overrides, best_plan, best_run)]
        seen = {_key(best_plan)}
        family_plan = best_plan  # mutations start from the best of the analytic family
        kept_own = False
        own = None
        if self.own_schedule is not None:
            own = self.measure_own()
            tried += 1
            if own is None:
                rejected += 1
            else:
                own_seconds, analytic_seconds = self.confirm(own[1], best_run)
                if own_seconds < analytic_seconds:
                    best, best_run, kept_own = own_seconds, own[1], True
                else:
                    best = analytic_seconds
        report()
        own_seconds = own[0] if own is not None else 0.0

        def final_rounds_seconds() -> float:
            # The time the final rounds will take (a warm-up run each included), kept out of
            # the search so that the whole tuning stays within its budget.
            select = (SELECT_RUNS + 1) * sum(f.seconds for f in finalists) if len(finalists) > 1 else 0.0
            decide = (DECIDE_RUNS + 1) * (finalists[0].seconds + own_seconds) if own is not None else 0.0
            return select + decide

        while time.perf_counter() + final_rounds_seconds() < deadline and not (
            should_stop is not None and should_stop()
        ):
            candidate = best_overrides
            for _ in range(self.rng.choice((1, 1, 2))):
                candidate = self.mutate(candidate, family_plan)
            try:
                plan = self.plan(candidate)
            except PixelweaveError:
                rejected += 1
                continue
            key = _key(plan)
            if key in seen:
                continue
            seen.add(key)
            tried += 1
            measured = self.measure(plan, best * 1.5)
            if measured is None:
                rejected += 1
                continue
            keep_fastest(finalists, Finalist(measured[0], candidate, plan, measured[1]))
            if measured[0] < best * MARGIN:
                seconds, incumbent = self.confirm(measured[1], best_run)
                if seconds < incumbent * MARGIN:
                    best, best_run, best_overrides, best_plan = seconds, measured[1], candidate, plan
                    family_plan, kept_own = plan, False
                else:
                    best = min(best, incumbent)
            report()
        stopped = should_stop is not None and should_stop()
        final_seconds, verdict = None, None
        if not stopped and (len(finalists) > 1 or (own is not None and not kept_own)):
            winner = 0
            if len(finalists) > 1:
                # The finalists side by side with more runs: the fastest median wins.
                times = [t.median for t in self.timings([f.run for f in finalists], SELECT_RUNS)]
                final_seconds = {f"candidate {k + 1}": t for k, t in enumerate(times)}
                winner = min(range(len(finalists)), key=lambda k: times[k])
                best = times[winner]
            best_overrides, best_plan = finalists[winner].overrides, finalists[winner].plan
            kept_own = False
            if own is not None:
                # Fresh rounds of the winner against the own schedule (the rounds that chose
                # the winner flatter it): it replaces the own schedule only if clearly faster.
                mine, theirs = self.timings([finalists[winner].run, own[1]], DECIDE_RUNS)
                verdict = clearly_faster(mine, theirs)
                final_seconds = {**(final_seconds or {}), "winner": mine.median, "own": theirs.median}
                best, kept_own = (mine.median, False) if verdict.accepted else (theirs.median, True)
            report()
        clear_schedules(self.pipeline)
        if kept_own:
            self.restore_own()
        else:
            apply_directives(self.pipeline, best_plan.directives)
        plans = [f.plan for f in finalists]
        return TuneResult(
            best_plan, best_overrides, best, start_seconds, tried, rejected, kept_own, final_seconds, plans, verdict
        )

    def restore_own(self) -> None:
        assert self.own_schedule is not None
        for f in self.pipeline.funcs:
            f.restore_schedule(self.own_schedule[id(f)])

    def measure_own(self) -> tuple[float, Callable[[], object]] | None:
        """Time the schedule the pipeline came with, like a candidate."""
        self.restore_own()
        return self._measure_applied(float("inf"))


def outputs_match(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether a candidate's output matches the reference evaluator's: to 1e-3 for floats;
    for integers to one unit, since a float intermediate close to a rounding boundary may
    round either way after compiled (float32, vector math) and reference arithmetic."""
    integer = np.issubdtype(np.asarray(want).dtype, np.integer)
    rtol, atol = (0.0, 1.0) if integer else (1e-3, 1e-3)
    return bool(np.allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol,
                            equal_nan=True))  # fmt: skip


def keep_fastest(finalists: list[Finalist], candidate: Finalist) -> None:
    """Add candidate to the finalists if it is among the FINALISTS fastest measured."""
    finalists.append(candidate)
    finalists.sort(key=lambda f: f.seconds)
    del finalists[FINALISTS:]


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _key(plan: Plan) -> tuple:
    return tuple((d.func, d.stage, d.name, tuple(str(a) for a in d.args)) for d in plan.directives)
