"""A fuzz campaign: many cases from one seed, counted, with failures shrunk and written out.

Case i of a campaign with seed S is `draw_case(S * 1_000_000 + i)` (on target "opencl",
`draw_gpu_case(S * 1_000_000 + i)`: the same pipeline with a GPU schedule), so any case can
be drawn again from its number. Cases shaped like a known bug (known_bugs.py) are counted as
excluded and not run. The summary (summary.json in the output folder) is rewritten as the
campaign goes, so a run that is stopped still leaves its counts.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pixelweave.engine.fuzz.cases import Case, draw_case, render_script
from pixelweave.engine.fuzz.driver import CaseRunner, Request
from pixelweave.engine.fuzz.execute import FAILURES
from pixelweave.engine.fuzz.gpu import draw_gpu_case
from pixelweave.engine.fuzz.known_bugs import known_bug
from pixelweave.engine.fuzz.shrink import shrink

SEED_STRIDE = 1_000_000


@dataclass
class Campaign:
    """The settings of a run (seed, case count, time budget, workers, Halide share, per-case
    timeout, checked code, shrinking, output folder, target) and, as it goes, its counts."""

    seed: int = 0
    cases: int = 1000
    time_budget: float | None = None
    workers: int = 1
    halide_every: int = 5  # compare the reference with Halide on every n-th case (0: never)
    timeout: float = 60.0
    checked: bool = True
    shrink_failures: bool = True
    out: Path = Path("fuzz-results")
    progress: bool = True
    target: str = "host"  # "opencl": GPU schedules (gpu.py), compiled unchecked for OpenCL
    counts: Counter = field(default_factory=Counter)
    excluded: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    halide: Counter = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    # directive kind -> outcomes of the cases that have it (what share a refusal stopped)
    directive_outcomes: dict[str, Counter] = field(default_factory=dict)
    refused_halide_accepts: list[int] = field(default_factory=list)  # seeds of such refusals
    halide_crashes: list[int] = field(default_factory=list)  # seeds on which Halide's JIT died
    started: float = 0.0
    drawn: int = 0
    in_flight: int = field(default=0, init=False)  # cases handed to workers, not yet counted

    # ------------------------------------------------------------------ running
    def run(self) -> dict[str, Any]:
        self.out.mkdir(parents=True, exist_ok=True)
        self.started = time.perf_counter()
        lock = threading.Lock()
        threads = [threading.Thread(target=self._work, args=(lock,), daemon=True) for _ in range(self.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        summary = self.summary()
        self._write_summary(summary)
        return summary

    def _next(self, lock: threading.Lock) -> Request | None:
        with lock:
            while True:
                if self.ran() + self.in_flight >= self.cases or self._out_of_time():
                    return None
                number = self.drawn
                self.drawn += 1
                case = self.draw(self.seed * SEED_STRIDE + number)
                bug = known_bug(case)
                if bug is not None:
                    self.excluded[bug.name] += 1
                    continue
                self.in_flight += 1
                return Request(case, halide=bool(self.halide_every) and number % self.halide_every == 0)

    def draw(self, seed: int) -> Case:
        """Case `seed` of this campaign's target (GPU cases are unchecked: checked access is
        a CPU feature)."""
        if self.target == "opencl":
            return draw_gpu_case(seed)
        return draw_case(seed, checked=self.checked)

    def _out_of_time(self) -> bool:
        return self.time_budget is not None and time.perf_counter() - self.started > self.time_budget

    def ran(self) -> int:
        return sum(self.counts.values())

    def _work(self, lock: threading.Lock) -> None:
        with CaseRunner(timeout=self.timeout, with_halide=self.halide_every > 0) as runner:
            while True:
                request = self._next(lock)
                if request is None:
                    return
                result = runner.run(request)
                with lock:
                    self.in_flight -= 1
                    self._record(request, result)
                if result["outcome"] in FAILURES:
                    self._report_failure(request, result)

    def _record(self, request: Request, result: dict[str, Any]) -> None:
        outcome = result["outcome"]
        self.counts[outcome] += 1
        for kind in {d.kind for d in request.case.directives}:
            self.directive_outcomes.setdefault(kind, Counter())[outcome] += 1
        if outcome == "refused":
            self.refusals[result.get("signature", "")] += 1
            if result.get("halide_schedule") == "accepted":  # a refusal to look at: Halide computes it
                self.halide["refused, halide accepts the schedule"] += 1
                self.refused_halide_accepts.append(request.case.seed)
            elif result.get("halide_schedule") == "refused":
                self.halide["refused, halide refuses too"] += 1
        if result.get("halide_crashed"):
            self.halide["halide crashed (its JIT, on the case's schedule)"] += 1
            self.halide_crashes.append(request.case.seed)
        elif request.halide:
            self.halide["same" if result.get("halide") == "same" else "refused by halide"] += (
                1 if outcome == "ok" else 0
            )
            if outcome == "halide_mismatch":
                self.halide["mismatch"] += 1
        n = self.ran()
        if self.progress and n % 100 == 0:
            rate = n / max(time.perf_counter() - self.started, 1e-9)
            print(f"{n} cases, {rate:.2f}/s: {dict(self.counts)}", flush=True)
        if n % 50 == 0:
            self._write_summary(self.summary())

    # ------------------------------------------------------------------ failures
    def _report_failure(self, request: Request, result: dict[str, Any]) -> None:
        case, outcome = request.case, result["outcome"]
        stem = f"{outcome}_seed{case.seed}"
        halide = outcome == "halide_mismatch"
        (self.out / f"{stem}_original.py").write_text(render_script(case, f"Original case: {outcome}.", halide))
        small, attempts = case, 0
        if self.shrink_failures:
            with CaseRunner(timeout=self.timeout, with_halide=request.halide) as runner:

                def attempt(c: Case) -> str:
                    return runner.run(Request(c, halide=request.halide))["outcome"]

                small, attempts = shrink(case, outcome, attempt)
        message = " ".join(str(result.get("message", "")).split())[:400]
        title = f"Shrunk case ({attempts} attempts): {outcome}: {message}"
        path = self.out / f"{stem}.py"
        path.write_text(render_script(small, title, halide))
        print(f"FAILURE {outcome} seed {case.seed}: {message}\n  reproducer: {path}", flush=True)
        self.failures.append({"outcome": outcome, "seed": case.seed, "message": message, "reproducer": str(path)})

    # ------------------------------------------------------------------ summary
    def summary(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.started
        ran = self.ran()
        refused = self.counts.get("refused", 0)
        return {
            "seed": self.seed,
            "target": self.target,
            "checked": self.checked and self.target == "host",
            "cases_run": ran,
            "cases_drawn": self.drawn,
            "elapsed_seconds": round(elapsed, 1),
            "cases_per_second": round(ran / elapsed, 3) if elapsed > 0 else None,
            "outcomes": dict(self.counts),
            "failures": sum(self.counts.get(k, 0) for k in FAILURES),
            "refused_share": round(refused / ran, 4) if ran else None,
            "excluded_known_bugs": dict(self.excluded),
            "halide_compared": dict(self.halide),
            "refusal_kinds": dict(self.refusals.most_common(40)),
            "directive_outcomes": {k: dict(v) for k, v in sorted(self.directive_outcomes.items())},
            "refused_but_halide_accepts": self.refused_halide_accepts[:100],
            "halide_crashed_on": self.halide_crashes[:100],
            "failure_list": list(self.failures),
        }

    def _write_summary(self, summary: dict[str, Any]) -> None:
        path = self.out / "summary.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(summary, indent=1))
        tmp.replace(path)
