"""Loop names in lowered code are `FUNC.sSTAGE.VAR` (loop_synthesis makes them); errors
about a loop read better in the schedule's own terms: the Func, the stage and the var."""

from __future__ import annotations

import re

_LOOP = re.compile(r"^(?P<func>.+?)\.s(?P<stage>\d+)\.(?P<var>.+)$")
_COMPUTED_COPY = re.compile(r"^(?P<output>.+)_computed_*$")


def split_loop_name(name: str) -> tuple[str, int, str] | None:
    """(Func, stage, var) of a lowered loop name `FUNC.sSTAGE.VAR`; None for other names."""
    m = _LOOP.match(name)
    return None if m is None else (m["func"], int(m["stage"]), m["var"])


def describe_loop(name: str) -> str:
    """`loop x.xo of Func `f`` or `loop r.x of update 0 of Func `f``; the raw name if it
    does not follow the convention."""
    m = _LOOP.match(name)
    if m is None:
        return f"loop {name}"
    stage = int(m["stage"])
    func = f"`{m['func']}`"
    internal = _COMPUTED_COPY.match(m["func"])
    if internal is not None:  # an output computed into scratch storage (context.py): the name its author gave
        func = f"`{internal['output']}`"
    where = f"Func {func}" if stage == 0 else f"update {stage - 1} of Func {func}"
    return f"loop {m['var']} of {where}"
