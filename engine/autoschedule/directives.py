"""A schedule as a list of directives: applied to the Funcs through the public scheduling
API (so the engine checks each one) and written as Halide-style text.

    blur_y.split(y, y, yi, 8).vectorize(x, 16).parallel(y)
    blur_x.store_at(blur_y, y).compute_at(blur_y, yi).vectorize(x, 16)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.ir.func import Func
from pixelweave.engine.pipeline import Pipeline


@dataclass(frozen=True)
class FuncRef:
    """A Func named as an argument (compute_at(f, ...))."""

    name: str


@dataclass(frozen=True)
class Directive:
    """One scheduling call: `func[.update(stage - 1)].name(*args)`."""

    func: str
    stage: int  # 0: the pure definition; k: update k - 1
    name: str
    args: tuple[Any, ...] = ()


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _name_text(name: str) -> str:
    return name if _IDENT.fullmatch(name) else '"' + name.replace('"', "") + '"'


def _arg_text(a: Any) -> str:
    if isinstance(a, FuncRef):
        return _name_text(a.name)
    return str(a)


def _head(d: Directive) -> str:
    head = _name_text(d.func)
    return head if d.stage == 0 else f"{head}.update({d.stage - 1})"


def schedule_text(directives: list[Directive]) -> str:
    """Halide-style text, one chained statement per Func (and per update)."""
    chains: dict[tuple[str, int], list[str]] = {}
    for d in directives:
        chains.setdefault((d.func, d.stage), []).append(f"{d.name}({', '.join(_arg_text(a) for a in d.args)})")
    lines = []
    for (func, stage), calls in chains.items():
        lines.append(_head(Directive(func, stage, "")) + "".join(f".{c}" for c in calls))
    return "\n".join(lines) + ("\n" if lines else "")


def apply_directives(pipeline: Pipeline, directives: list[Directive]) -> None:
    """Apply each directive through the scheduling API (which refuses illegal ones)."""
    funcs: dict[str, Func] = {f.name(): f for f in pipeline.funcs}
    for d in directives:
        func = funcs[d.func]
        target: Any = func if d.stage == 0 else func.update(d.stage - 1)
        args = [funcs[a.name] if isinstance(a, FuncRef) else a for a in d.args]
        getattr(target, d.name)(*args)


def clear_schedules(pipeline: Pipeline) -> None:
    """Return every Func of the pipeline to the default schedule."""
    for f in pipeline.funcs:
        f.clear_schedule()
