"""The one place that lists bugs known and not yet fixed, so that a run reports new ones only.

The fuzzer redraws any case whose shape matches an entry. Every bug the fuzzer found while it
was built (compute_root().store_root(), tails of update splits, vectorized updates of outputs,
fuse inside a compute_at Func, storage outside a parallel loop, bound() on an output, a Func
read by a pure definition and an update) is fixed and has a regression test in
tests/compiler/test_trust_regressions.py, so the list is empty and those shapes are drawn
again. Add an entry (name, what goes wrong, predicate on a Case) only while a fix is pending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pixelweave.engine.fuzz.cases import Case


@dataclass(frozen=True)
class KnownBug:
    name: str
    description: str
    matches: Callable[[Case], bool]


KNOWN_BUGS: list[KnownBug] = []

# Shapes the generator never draws; their fixes are covered by regression tests instead.
NOT_DRAWN = [
    "`ref = f[x]; ref += 10` (an update through a saved FuncRef): updates are written f[x, y] += ...",
    "a float coordinate rounded and converted with i32(): coordinates are never converted floats",
]


def known_bug(case: Case) -> KnownBug | None:
    """The first known bug whose shape the case has, or None."""
    for bug in KNOWN_BUGS:
        if bug.matches(case):
            return bug
    return None
