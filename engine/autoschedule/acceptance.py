"""Whether a tuned schedule may replace the schedule a pipeline came with (a hand schedule).

On a shared machine one schedule's run time moves by tens of percent from run to run, so
a search that keeps whatever measured fastest keeps noise wins: a candidate that won a
race once and then loses to the hand schedule in the benchmark. The final decision of the
tuner therefore times the candidate and the hand schedule in interleaved rounds (each
round runs each once, so load that comes and goes falls on both), takes wall and CPU time
of every run, and lets the candidate replace the hand schedule only if it is faster on
every statistic a benchmark might report, by a margin beyond the spread of the runs:

- its median wall time is below the hand schedule's by at least MARGIN, and its upper
  quartile is below the hand schedule's lower quartile (the gap exceeds the spread);
- its least wall time (what `benchmarks/autoschedule.py` reports) is below the hand
  schedule's by at least MARGIN;
- it wins at least WIN_FRACTION of the rounds, pairwise;
- its median CPU time (all threads) is not above the hand schedule's: a schedule that wins
  wall time only by keeping more cores busy loses when other jobs take those cores.

Anything less keeps the hand schedule, so the tuned schedule is never slower than it by
more than the noise between two runs of the same code.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MARGIN = 0.03  # the least relative gain, on median and least wall time, that replaces a hand schedule
WIN_FRACTION = 0.75  # of the interleaved rounds the candidate must win
MIN_ROUNDS = 5  # fewer rounds than this never replace a hand schedule

Clock = Callable[[], tuple[float, float]]  # (wall seconds, CPU seconds of the process) now


def wall_and_cpu_clock() -> tuple[float, float]:
    """Wall time and the process's CPU time (every thread: the runtime's workers included)."""
    return time.perf_counter(), time.process_time()


@dataclass(frozen=True)
class Timings:
    """Wall and CPU seconds of each run of one schedule, in the order of the rounds."""

    wall: tuple[float, ...]
    cpu: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def least(self) -> float:
        return min(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def interleaved_timings(
    runs: Sequence[Callable[[], object]], rounds: int, clock: Clock = wall_and_cpu_clock
) -> list[Timings]:
    """Time each callable once per round, in turn, for rounds rounds (after one untimed
    warm-up run each): the Timings of each, in the order given."""
    for run in runs:
        run()
    walls: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for k, run in enumerate(runs):
            wall0, cpu0 = clock()
            run()
            wall1, cpu1 = clock()
            walls[k].append(wall1 - wall0)
            cpus[k].append(cpu1 - cpu0)
    return [Timings(tuple(w), tuple(c)) for w, c in zip(walls, cpus, strict=True)]


@dataclass(frozen=True)
class Verdict:
    """The decision and, for the report, why."""

    accepted: bool
    reason: str


def clearly_faster(candidate: Timings, incumbent: Timings) -> Verdict:
    """Whether candidate beats incumbent beyond the noise (the rules in the module's
    docstring); both timed in the same interleaved rounds."""
    rounds = min(len(candidate.wall), len(incumbent.wall))
    if rounds < MIN_ROUNDS:
        return Verdict(False, f"only {rounds} rounds measured (at least {MIN_ROUNDS} decide)")
    ratio = candidate.median / incumbent.median
    if ratio > 1 - MARGIN:
        return Verdict(False, f"median wall time {ratio:.3f}x the incumbent's (needs < {1 - MARGIN:.2f})")
    cand_upper = _quartiles(candidate.wall)[2]
    inc_lower = _quartiles(incumbent.wall)[0]
    if cand_upper >= inc_lower:
        return Verdict(
            False,
            f"the gap is within the spread: upper quartile {cand_upper * 1e3:.3f} ms >= the incumbent's "
            f"lower quartile {inc_lower * 1e3:.3f} ms",
        )
    least_ratio = candidate.least / incumbent.least
    if least_ratio > 1 - MARGIN:
        return Verdict(False, f"least wall time {least_ratio:.3f}x the incumbent's (needs < {1 - MARGIN:.2f})")
    wins = sum(c < i for c, i in zip(candidate.wall[:rounds], incumbent.wall[:rounds], strict=True))
    if wins < WIN_FRACTION * rounds:
        return Verdict(False, f"won only {wins} of {rounds} rounds (needs {WIN_FRACTION:.0%})")
    cpu_ratio = candidate.median_cpu / incumbent.median_cpu if incumbent.median_cpu > 0 else 1.0
    if cpu_ratio > 1.0:
        return Verdict(False, f"median CPU time {cpu_ratio:.3f}x the incumbent's (wins only by using more cores)")
    return Verdict(
        True, f"median {ratio:.3f}x, least {least_ratio:.3f}x, CPU {cpu_ratio:.3f}x, won {wins}/{rounds} rounds"
    )


def _quartiles(values: Sequence[float]) -> list[float]:
    return statistics.quantiles(values, n=4, method="inclusive")
