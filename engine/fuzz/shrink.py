"""Reduce a failing case to a smaller one that fails the same way.

Greedy passes until none helps (or the attempt budget is spent): drop each schedule
directive; bypass each stage (its consumers read its first input instead); shrink the
output and input sizes. A candidate is kept when it still fails with the same outcome.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

from pixelweave.engine.fuzz.cases import Case

Attempt = Callable[[Case], str]  # runs a case (in a worker) and returns its outcome


def _without_directive(case: Case, i: int) -> Case:
    c = copy.deepcopy(case)
    del c.directives[i]
    return c


def _bypass_stage(case: Case, name: str) -> Case | None:
    """The case with stage `name` removed: readers of it read its first input instead."""
    stage = case.stage(name)
    if stage.kind == "boundary" or not stage.inputs:
        return None
    replacement = stage.inputs[0]
    c = copy.deepcopy(case)
    c.stages = [s for s in c.stages if s.name != name]
    for s in c.stages:
        s.inputs = [replacement if i == name else i for i in s.inputs]
    outputs = []
    for o in c.outputs:
        o = replacement if o == name else o
        if o not in outputs:
            outputs.append(o)
    if any(c.stage(o).kind == "boundary" for o in outputs):
        return None
    c.outputs = outputs
    c.directives = [
        d
        for d in c.directives
        if d.func != name
        and not (d.kind in ("compute_at", "store_at", "hoist_storage", "compute_with") and d.args[0] == name)
    ]
    c.directives = [d for d in c.directives if not (d.func in outputs and d.kind in ("compute_at", "store_at"))]
    c.directives = [d for d in c.directives if not (d.func in outputs and d.kind in ("compute_root", "store_root"))]
    return c


def _smaller_sizes(case: Case) -> Iterator[Case]:
    for field, index in (("sizes", 0), ("sizes", 1), ("input_shape", 0), ("input_shape", 1)):
        value = getattr(case, field)[index]
        for smaller in sorted({1, value // 2, value - 1}):
            if 1 <= smaller < value:
                c = copy.deepcopy(case)
                getattr(c, field)[index] = smaller
                yield c


def shrink(case: Case, outcome: str, attempt: Attempt, budget: int = 120) -> tuple[Case, int]:
    """The smallest case found that still gives `outcome`, and the attempts spent."""
    spent = 0

    def still_fails(candidate: Case) -> bool:
        nonlocal spent
        spent += 1
        return attempt(candidate) == outcome

    progress = True
    while progress and spent < budget:
        progress = False
        i = len(case.directives) - 1
        while i >= 0 and spent < budget:
            candidate = _without_directive(case, i)
            if still_fails(candidate):
                case, progress = candidate, True
            i -= 1
        for name in [s.name for s in reversed(case.stages)]:
            if spent >= budget or name not in {s.name for s in case.stages}:
                continue
            candidate = _bypass_stage(case, name)
            if candidate is not None and still_fails(candidate):
                case, progress = candidate, True
        for candidate in _smaller_sizes(case):
            if spent >= budget:
                break
            if still_fails(candidate):
                case, progress = candidate, True
                break
    return case, spent
