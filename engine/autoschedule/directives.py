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


def func_labels(pipeline: Pipeline) -> dict[int, str]:
    """A distinct label per Func (by id) for directives to name it by: its name, or NAME$1,
    NAME$2, ... for later Funcs sharing a name (as Halide's unique names and the lowering do),
    so that pipelines which make several Funcs with one name can be scheduled."""
    labels: dict[int, str] = {}
    used: set[str] = set()
    for f in pipeline.funcs:
        label, n = f.name(), 1
        while label in used:
            label, n = f"{f.name()}${n}", n + 1
        used.add(label)
        labels[id(f)] = label
    return labels


def apply_directives(pipeline: Pipeline, directives: list[Directive]) -> None:
    """Apply each directive through the scheduling API (which refuses illegal ones)."""
    labels = func_labels(pipeline)
    funcs: dict[str, Func] = {labels[id(f)]: f for f in pipeline.funcs}
    for d in directives:
        func = funcs[d.func]
        target: Any = func if d.stage == 0 else func.update(d.stage - 1)
        args = [funcs[a.name] if isinstance(a, FuncRef) else a for a in d.args]
        getattr(target, d.name)(*args)


def clear_schedules(pipeline: Pipeline) -> None:
    """Return every Func of the pipeline to the default schedule."""
    for f in pipeline.funcs:
        f.clear_schedule()


def current_schedule_text(pipeline: Pipeline) -> str:
    """Halide-style text of the schedule the Funcs carry now, whoever wrote it (for a hand
    schedule the tuner kept); loop names are shown by their last part, as Halide shows Vars."""
    lines = []
    labels = func_labels(pipeline)
    for f in pipeline.funcs:
        calls = []
        state = f.schedule_of()
        for kind, level in (("compute", state.compute_level), ("store", state.store_level)):
            if level is None or level.kind == "inline":
                continue
            if level.kind == "root":
                calls.append(f"{kind}_root()")
            else:
                calls.append(f"{kind}_at({_name_text(labels.get(id(level.func), level.func.name()))}, {level.var})")
        for var, (lo, extent) in state.bounds.items():
            calls.append(f"bound({var}, {lo}, {extent})")
        for var, extent in state.bound_extents.items():
            calls.append(f"bound_extent({var}, {extent})")
        if state.memory_type.value != "auto":
            calls.append(f"store_in(MemoryType.{state.memory_type.halide_name})")
        for var, alignment in state.storage_alignments.items():
            calls.append(f"align_storage({var}, {alignment})")
        for var, (modulus, remainder) in state.alignments.items():
            calls.append(f"align_extent({var}, {modulus})" if remainder is None else
                         f"align_bounds({var}, {modulus}, {remainder})")  # fmt: skip
        if state.storage_order is not None:
            calls.append(f"reorder_storage({', '.join(state.storage_order)})")
        for var, (factor, forward) in state.storage_folds.items():
            calls.append(f"fold_storage({var}, {factor})" if forward else f"fold_storage({var}, {factor}, False)")
        if state.hoist_level is not None:
            level = state.hoist_level
            calls.append("hoist_storage_root()" if level.is_root() else
                         f"hoist_storage({_name_text(level.func.name())}, {level.var})")  # fmt: skip
        stages = [f.definition(), *f.updates()]
        for k, d in enumerate(stages):
            stage_calls = calls if k == 0 else []
            stage_calls += _stage_calls(d)
            if stage_calls:
                head = _head(Directive(labels[id(f)], k, ""))
                lines.append(head + "".join(f".{c}" for c in stage_calls))
    return "\n".join(lines) + ("\n" if lines else "")


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _stage_calls(definition: Any) -> list[str]:
    from pixelweave.engine.schedule import StageSchedule, TailStrategy
    from pixelweave.engine.stmt import ForType

    schedule = definition.schedule
    if schedule is None:
        return []
    dims = [d.name for d in StageSchedule.for_definition(definition).dims]
    calls = ["atomic()"] if schedule.atomic else []
    for s in schedule.splits:
        if s.kind == "split":
            tail = "" if s.tail is TailStrategy.AUTO else f", TailStrategy.{s.tail.name.title().replace('_', '')}"
            calls.append(f"split({_short(s.old)}, {_short(s.outer)}, {_short(s.inner)}, {s.factor}{tail})")
            i = dims.index(s.old)
            dims[i : i + 1] = [s.inner, s.outer]
        else:
            calls.append(f"fuse({_short(s.inner)}, {_short(s.outer)}, {s.old})")
            i = min(dims.index(s.inner), dims.index(s.outer))
            dims = [n for n in dims if n not in (s.inner, s.outer)]
            dims.insert(i, s.old)
    final = [d.name for d in schedule.dims]
    if final != dims:
        calls.append(f"reorder({', '.join(_short(n) for n in final)})")
    marks = {ForType.VECTORIZED: "vectorize", ForType.PARALLEL: "parallel", ForType.UNROLLED: "unroll",
             ForType.GPU_BLOCK: "gpu_blocks", ForType.GPU_THREAD: "gpu_threads"}  # fmt: skip
    calls += [f"{marks[d.for_type]}({_short(d.name)})" for d in schedule.dims if d.for_type in marks]
    return calls
