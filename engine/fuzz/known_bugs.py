"""THE ONE PLACE listing bugs that are known and being fixed elsewhere (branch trust-bugs).

The fuzzer redraws any case whose shape matches one of these, so a run reports new bugs
only. When the fix lands, delete its entry (or the whole list): the fuzzer then draws those
shapes again and checks the fix. Each entry is (name, what goes wrong, predicate on a Case).
Shapes the generator never draws (the `ref = f[x]; ref += 10` idiom, a float coordinate
converted with i32()) need no predicate and are listed in NOT_DRAWN for the record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pixelweave.engine.fuzz.cases import Case, Directive


@dataclass(frozen=True)
class KnownBug:
    name: str
    description: str
    matches: Callable[[Case], bool]


def _kinds(case: Case, func: str, stage: int | None = None) -> list[Directive]:
    return [d for d in case.directives if d.func == func and (stage is None or d.stage == stage)]


def _has(case: Case, func: str, kind: str) -> bool:
    return any(d.kind == kind for d in _kinds(case, func))


def _compute_root_store_root(case: Case) -> bool:
    return any(_has(case, s.name, "compute_root") and _has(case, s.name, "store_root") for s in case.stages)


def _rounding_tail_on_update(case: Case) -> bool:
    """Also an AUTO tail on a split of a derived loop of an update (the inner or outer loop
    of a split, a fused loop), which resolves to ShiftInwards there and applies the update
    twice to the tail: fuzzer seeds 2000180 and 20261124014611. vectorize and unroll with a
    width split too."""
    derived: set[tuple[str, int, str]] = set()
    for d in case.directives:
        if d.stage == 0:
            continue
        if d.kind in ("split", "tile") and d.args[-1] in ("ROUND_UP", "SHIFT_INWARDS"):
            return True
        if d.kind == "split":
            if (d.func, d.stage, d.args[0]) in derived:
                return True
            derived |= {(d.func, d.stage, d.args[1]), (d.func, d.stage, d.args[2])}
        elif d.kind == "tile":
            derived |= {(d.func, d.stage, v) for v in d.args[2:6]}
        elif d.kind == "fuse":
            derived.add((d.func, d.stage, d.args[2]))
        elif d.kind in ("unroll", "vectorize") and len(d.args) > 1 and (d.func, d.stage, d.args[0]) in derived:
            return True
    return False


def _vectorized_update_of_output(case: Case) -> bool:
    for d in case.directives:
        if d.stage > 0 and d.kind == "vectorize" and d.func in case.outputs:
            width = d.args[1] if len(d.args) > 1 else None
            dim = 0 if d.args[0] == "x" else 1 if d.args[0] == "y" else None
            if width is None or dim is None or case.sizes[dim] % width != 0:
                return True
    return False


def _fuse_in_compute_at(case: Case) -> bool:
    return any(_has(case, s.name, "fuse") and _has(case, s.name, "compute_at") for s in case.stages)


def _store_outside_parallel(case: Case) -> bool:
    for s in case.stages:
        at = [d for d in _kinds(case, s.name) if d.kind == "compute_at"]
        stored = [d for d in _kinds(case, s.name) if d.kind in ("store_root", "store_at")]
        if at and stored and any(d.kind == "parallel" for d in _kinds(case, at[0].args[0], 0)):
            return True
    return False


def _bound_smaller_than_output(case: Case) -> bool:
    return any(
        d.kind == "bound" and d.func in case.outputs and d.args[2] < case.sizes[0 if d.args[0] == "x" else 1]
        for d in case.directives
    )


def _compute_at_read_by_pure_and_update(case: Case) -> bool:
    for s in case.stages:
        if not _has(case, s.name, "compute_at"):
            continue
        for c in case.consumers(s.name):
            if c.kind == "reduce" and c.lines and "{0}" in c.lines[0] and any("{0}" in x for x in c.lines[2:]):
                return True
    return False


KNOWN_BUGS: list[KnownBug] = [
    KnownBug(
        "compute_root_store_root", "compute_root().store_root() fails with an internal error", _compute_root_store_root
    ),
    KnownBug(
        "rounding_tail_on_update",
        "ShiftInwards/RoundUp tails on an update stage's split (AUTO picks ShiftInwards for a nested one)",
        _rounding_tail_on_update,
    ),
    KnownBug(
        "vectorized_update_of_output",
        "a vectorized update of an output whose size is not a multiple of the vector width",
        _vectorized_update_of_output,
    ),
    KnownBug(
        "fuse_in_compute_at",
        "fuse inside a compute_at Func gives a +-2^31 region (the wrapped size crashed)",
        _fuse_in_compute_at,
    ),
    KnownBug(
        "store_outside_parallel",
        "store_at/store_root outside a parallel loop with the compute inside it",
        _store_outside_parallel,
    ),
    KnownBug(
        "bound_smaller_than_output", "bound() on an output smaller than the realization", _bound_smaller_than_output
    ),
    KnownBug(
        "compute_at_read_by_pure_and_update",
        "compute_at of a Func read by both the pure definition and an update of its consumer",
        _compute_at_read_by_pure_and_update,
    ),
]

NOT_DRAWN = [
    "`ref = f[x]; ref += 10` (an update through a saved FuncRef): updates are written f[x, y] += ...",
    "reference interval analysis missing float rounding before i32(): coordinates are never converted floats",
]


def known_bug(case: Case) -> KnownBug | None:
    """The first known bug whose shape the case has, or None."""
    for bug in KNOWN_BUGS:
        if bug.matches(case):
            return bug
    return None
