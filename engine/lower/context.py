"""The state lowering works on: each Func of the pipeline with a unique name, its
definitions (after inlining) and its schedule, in realization order."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.pipeline import Pipeline
from pixelweave.engine.schedule import (
    Dim,
    FuncSchedule,
    LoopLevel,
    MemoryType,
    Split,
    StageSchedule,
    TailStrategy,
    resolve_tail,
)
from pixelweave.engine.stmt import ForType

if TYPE_CHECKING:
    from pixelweave.engine.lower.compute_with import FusedGroup


@dataclass
class StageInfo:
    definition: Definition
    schedule: StageSchedule


@dataclass
class FuncInfo:
    func: Func
    name: str
    stages: list[StageInfo]
    schedule: FuncSchedule
    is_output: bool
    pure_vars: list[str]
    computes_output: bool = False  # scratch storage whose requested region is copied to an output

    @property
    def type(self):
        return self.stages[0].definition.value.type()

    @property
    def types(self) -> list:
        """The type of each value; more than one for a Func that returns a Tuple."""
        return [v.type() for v in self.stages[0].definition.all_values()]

    def compute_level(self) -> LoopLevel:
        if self.is_output:
            return LoopLevel.root()
        level = self.schedule.compute_level
        if level.is_inline() and len(self.stages) > 1:
            # Halide cannot inline a reduction either; computing it first is always legal.
            return LoopLevel.root()
        return level

    def store_level(self) -> LoopLevel:
        return self.schedule.store_level or self.compute_level()

    def is_inlined(self) -> bool:
        return self.compute_level().is_inline()


@dataclass
class LoweringContext:
    pipeline: Pipeline
    target: str
    funcs: list[FuncInfo] = field(default_factory=list)  # realization order
    images: list[ImageParam] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    sliding: dict = field(default_factory=dict)
    computed_per_stage: set[str] = field(default_factory=set)  # Funcs computed at several sites
    hoisted: dict[str, str | None] = field(default_factory=dict)  # hoist_storage(): Func -> its loop (None: root)
    fused_groups: list[FusedGroup] = field(default_factory=list)  # compute_with (lower/compute_with.py)
    output_regions: dict[str, list[tuple[E.Expr, E.Expr]]] = field(default_factory=dict)  # written, per output
    output_names: list[str] = field(
        default_factory=list
    )  # in the order of pipeline.outputs  # Func name -> SlidingInfo, from the sliding window pass
    # a single-valued output computed into storage of its own and copied: that Func -> the output
    output_copies: dict[str, str] = field(default_factory=dict)

    def info(self, func: Func) -> FuncInfo:
        for f in self.funcs:
            if f.func is func:
                return f
        raise KeyError(func.name())

    def fused_group(self, name: str) -> FusedGroup | None:
        """The compute_with group the Func is in, or None."""
        return next((g for g in self.fused_groups if name in g.names()), None)

    def by_name(self, name: str) -> FuncInfo:
        for f in self.funcs:
            if f.name == name:
                return f
        raise KeyError(name)


def build_context(pipeline: Pipeline, target: str) -> LoweringContext:
    """Give every Func a unique name and snapshot its definitions and schedule."""
    ctx = LoweringContext(pipeline, target, images=list(pipeline.images), params=list(pipeline.params))
    used: set[str] = {im.name() for im in pipeline.images} | {p.name for p in pipeline.params}
    outputs = {id(f) for f in pipeline.outputs}
    for f in pipeline.funcs:
        name = f.name()
        n = 1
        while name in used:
            name = f"{f.name()}${n}"
            n += 1
        used.add(name)
        defs = [f.definition(), *f.updates()]
        stages = []
        for d in defs:
            if d.schedule is None:
                d.schedule = StageSchedule.for_definition(d)
            stages.append(StageInfo(d, d.schedule))
        sched = f.schedule_of()
        ctx.funcs.append(FuncInfo(f, name, stages, sched, id(f) in outputs, [a.name for a in f.args()]))
    for info in ctx.funcs:
        _validate_call_schedule(ctx, info)
    ctx.output_names = [ctx.info(f).name for f in pipeline.outputs]
    _copy_consumed_outputs(ctx, used)
    return ctx


class _OutputCopy:
    """Stands in for the Func of a synthetic output stage (see _copy_consumed_outputs)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


def _copy_consumed_outputs(ctx: LoweringContext, used: set[str]) -> None:
    """An output may be computed over more than the requested region: when other stages
    also read it, when a bound() fixes its region, or when a RoundUp split (explicit, or
    Auto on a pure variable of an update) iterates past the end. Compute it into scratch
    storage over everything it covers, and copy the requested region into the output
    buffer (as Halide's realize does with a bounds query)."""
    called = {
        id(call.target)
        for info in ctx.funcs
        for stage in info.stages
        for e in (*stage.definition.all_values(), *stage.definition.args)
        for call in call_targets(e)
        if call.target is not info.func
    }
    for info in list(ctx.funcs):
        if not info.is_output:
            continue
        is_tuple = len(info.types) > 1
        widened = info.schedule.bounds or info.schedule.bound_extents or info.schedule.alignments
        if id(info.func) not in called and not widened and not _rounds_up(info) and not is_tuple:
            continue
        out_name = info.name
        internal = f"{out_name}_computed"
        while internal in used:
            internal += "_"
        used.add(internal)
        info.name = internal
        info.is_output = False
        info.computes_output = True
        info.schedule = replace(info.schedule, compute_level=LoopLevel.root(), store_level=None)
        args = tuple(E.Variable(v, Int(32), "var") for v in info.pure_vars)
        # A Func returning a Tuple has one output buffer per value, `f.0`, `f.1`, ... (as in
        # Halide): each is a copy of its value.
        copies = [(out_name, 0)] if not is_tuple else [(f"{out_name}.{i}", i) for i in range(len(info.types))]
        if not is_tuple:
            ctx.output_copies[internal] = out_name
        for copy_name, index in copies:
            call = E.Call(info.types[index], internal, args, "func", info.func, index)
            d = Definition(args, call, pure_vars=tuple(info.pure_vars))
            d.schedule = StageSchedule.for_definition(d)
            if ctx.target != "opencl":
                _schedule_copy(d.schedule, info.types[index])
            copy = FuncInfo(
                _OutputCopy(copy_name), copy_name, [StageInfo(d, d.schedule)], FuncSchedule(), True, info.pure_vars
            )
            ctx.funcs.append(copy)
        if is_tuple:
            at = ctx.output_names.index(out_name)
            ctx.output_names[at : at + 1] = [name for name, _ in copies]


# Bytes a vector of an output copy spans: a cache line, which a streaming store writes whole.
COPY_VECTOR_BYTES = 64


def _schedule_copy(schedule: StageSchedule, t: Type) -> None:
    """An output's copy from its scratch storage: vectors along the innermost dimension
    (guarded, so any width: the steady state is vectors alone), the outermost dimension's
    rows in parallel. Unscheduled it was one element at a time on one thread."""
    dims = schedule.dims  # innermost first
    if not dims:
        return
    if len(dims) > 1:
        dims[-1].for_type = ForType.PARALLEL
    inner = dims[0]
    lanes = max(COPY_VECTOR_BYTES // max(t.bits // 8, 1), 1)
    lane_name = f"{inner.name}.v0"
    schedule.splits.append(Split("split", inner.name, inner.name, lane_name, lanes, TailStrategy.GUARD_WITH_IF))
    dims[0:1] = [Dim(lane_name, ForType.VECTORIZED, bounded=True), Dim(inner.name)]


def _rounds_up(info: FuncInfo) -> bool:
    """Whether a split of one of its pure variables may iterate beyond the region asked for."""
    for k, stage in enumerate(info.stages):
        for split in (sp for sched in stage.schedule.all_schedules() for sp in sched.splits):
            rounds_up = resolve_tail(split.tail, k, split.is_rvar, split.bounded) == TailStrategy.ROUND_UP
            if split.kind == "split" and not split.is_rvar and rounds_up:
                return True
    return False


def _validate_call_schedule(ctx: LoweringContext, info: FuncInfo) -> None:
    sched = info.schedule
    name = info.name
    if info.is_output and not sched.compute_level.is_inline() and not sched.compute_level.is_root():
        raise ScheduleError(
            f"Func `{name}` is an output of the pipeline, so it is always computed at the root; "
            f"remove its compute_at({sched.compute_level.func.name()}, {sched.compute_level.var})"
        )
    if sched.memory_type is not MemoryType.AUTO:
        where = f"store_in(MemoryType.{sched.memory_type.halide_name}) of Func `{name}`"
        if info.is_output:
            raise ScheduleError(
                f"{where}: it is an output of the pipeline, whose storage is the output buffer; remove the store_in()"
            )
        if info.is_inlined():
            raise ScheduleError(
                f"{where}: it is computed inline, so it has no storage; give it compute_root() or compute_at()"
            )
        if ctx.target != "opencl" and sched.memory_type is MemoryType.GPU_SHARED:
            raise ScheduleError(
                f"{where}: GPUShared is the local memory of a GPU work-group, placed on target='opencl' only; "
                "on a CPU target use MemoryType.Heap, Stack, Register or Auto"
            )
    _validate_storage_placement(ctx, info)
    if info.is_inlined():
        if any(stage.schedule.specializations for stage in info.stages):
            raise ScheduleError(
                f"Func `{name}` is scheduled inline, so it must not have any specializations (specialize() or "
                "specialize_fail()); specialize a Func that is computed (compute_root() or compute_at()) instead"
            )
        if sched.store_level is not None and not sched.store_level.is_inline():
            raise ScheduleError(
                f"Func `{name}` is computed inline, so it has no storage to place with store_at/store_root; "
                "give it compute_root() or compute_at() first"
            )
        for stage in info.stages:
            touched = [d.name for d in stage.schedule.dims if d.for_type.value != "for"] + [
                s.old for s in stage.schedule.splits
            ]
            if touched:
                raise ScheduleError(
                    f"Func `{name}` is computed inline, so its loops cannot be scheduled (it has a "
                    f"schedule on {touched[0]}); give it compute_root() or compute_at() first"
                )
    for level in (sched.compute_level, sched.store_level):
        if level is not None and level.kind == "at":
            try:
                ctx.info(level.func)
            except KeyError:
                raise ScheduleError(
                    f"Func `{name}` is scheduled at a loop of `{level.func.name()}`, which is not part of this "
                    "pipeline; legal levels are the root or a loop of a Func of the pipeline that uses it"
                ) from None


def call_targets(e: E.Expr) -> list[E.Call]:
    from pixelweave.engine.ir.visit import walk

    return [n for n in walk(e) if isinstance(n, E.Call) and n.call_kind == "func"]


def _validate_storage_placement(ctx: LoweringContext, info: FuncInfo) -> None:
    """fold_storage() and hoist_storage() need storage of the Func's own, as in Halide."""
    sched = info.schedule
    name = info.name
    hoisted = sched.hoist_level is not None and not sched.hoist_level.is_root()
    if info.is_output and (sched.storage_folds or hoisted):
        level = sched.hoist_level
        what = "fold_storage()" if sched.storage_folds else f"hoist_storage(`{level.func.name()}`, {level.var})"
        raise ScheduleError(
            f"{what} of Func `{name}`: it is an output of the pipeline, whose storage is the output buffer "
            "(Halide keeps an output's storage at the root too); remove it"
        )
    if info.is_inlined() and (sched.storage_folds or sched.hoist_level is not None):
        what = "fold_storage()" if sched.storage_folds else "hoist_storage()"
        raise ScheduleError(
            f"{what} of Func `{name}`: it is computed inline, so it has no storage; give it compute_root() or "
            "compute_at() first"
        )
    if ctx.target == "opencl" and not info.is_output and (sched.storage_folds or sched.hoist_level is not None):
        what = "fold_storage()" if sched.storage_folds else "hoist_storage()"
        raise ScheduleError(f"{what} of Func `{name}`: Pixelweave applies it on CPU targets only, not target='opencl'")
