"""One Func taken out of its pipeline: its definitions, with every Func and image it reads
replaced by an input of a small pipeline of its own.

This is what a compositor-style preview compiles: the kernel of one stage, whose inputs are
the already computed images of the stages it reads. Inputs are named by order of first
appearance (`in0`, `in1` for Funcs and images read, `dim0`... for image sizes it uses,
`param0`... for run-time Params) and the copy is named `out`, so two stages with the same
definitions (the levels of a pyramid, the same node in two documents) have the same
structural key and share one compiled kernel. Param values stay run-time arguments.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.var import RDom
from pixelweave.engine.ir.visit import mutate, substitute, walk
from pixelweave.engine.pipeline import Pipeline, func_definitions
from pixelweave.engine.schedule import TailStrategy
from pixelweave.engine.stmt import ForType

OUTPUT_NAME = "out"


@dataclass(frozen=True)
class Source:
    """What an input of the isolated pipeline stands for: kind "func" (a Func's values, an
    image or, for a Func of no dimensions, a scalar), "image" (an input image read directly),
    "image_dim" (a min/extent/stride of an input image, a scalar) or "param" (a Param)."""

    kind: str
    name: str  # the Func, image, image variable ("in.extent.0") or Param it stands for
    param: Param | None = field(default=None, compare=False)  # the Param itself (kind "param")


@dataclass
class Isolated:
    func: Func
    pipeline: Pipeline
    sources: dict[str, Source]  # argument name -> what to pass for it
    scheduled: bool
    guarded: bool = True  # every split of its schedule guards its tail


def isolate(
    f: Func, *, schedule: bool = True, guard_tails: bool = True, inline: Callable[[Func], bool] | None = None
) -> Isolated:
    """A pipeline computing only f, reading its callees as inputs. With `schedule`, f's loop
    schedules (splits, reorders, vectorize, parallel) are kept and no loop unrolled; where f
    is computed is not kept (it is the output now). The copy computes, and reads for, no more
    than the box it is asked for: with `guard_tails` every split guards its tail; without,
    the splits of the pure definition shift their last iteration inwards instead, which runs
    several times faster in vectorized loops (no per-lane guard) but needs a box at least
    each split's factor wide (a narrower one fails the output check before anything runs).
    Update splits always guard theirs (shifting would apply an update twice). The Funcs for
    which `inline` is true (pure ones, as the fused pipeline inlines them) are substituted
    into the copy instead of read as inputs, and their callees read in their place."""
    if f.outputs() > 1 or any(
        isinstance(n, E.Call) and n.call_kind == "func" and n.target.outputs() > 1
        for e in (v for d in func_definitions(f) for v in d.all_values())
        for n in walk(e)
    ):
        raise CompileError(
            f"Func `{f.name()}` returns or reads a Tuple of values, which cannot be isolated into a pipeline of "
            "its own yet; preview the pipeline's output instead"
        )
    sources: dict[str, Source] = {}
    calls: dict[tuple[str, str], E.Expr | ImageParam] = {}  # (kind, name) -> replacement
    clone = Func(OUTPUT_NAME)

    def stand_in_for_call(node: E.Call) -> ImageParam | Param:
        kind = "func" if node.call_kind == "func" else "image"
        key = (kind, node.name)
        if key not in calls:
            arg = f"in{sum(1 for k in calls if k[0] in ('func', 'image'))}"
            dims = len(node.args)
            calls[key] = Param(node.type(), arg) if dims == 0 else ImageParam(node.type(), dims, arg)
            sources[arg] = Source(kind, node.name)
        return calls[key]  # type: ignore[return-value]

    def scalar_for(node: E.Variable) -> Param:
        owner = node.owner
        kind = "param" if isinstance(owner, Param) else "image_dim"
        key = (kind, node.name)
        if key not in calls:
            arg = f"{'param' if kind == 'param' else 'dim'}{sum(1 for k in calls if k[0] == kind)}"
            calls[key] = Param(node.type() if kind == "param" else Int(32), arg)
            sources[arg] = Source(kind, node.name, owner if isinstance(owner, Param) else None)
        return calls[key]  # type: ignore[return-value]

    rdoms: dict[int, RDom] = {}
    inlined: dict[int, tuple[tuple[str, ...], E.Expr]] = {}  # id(Func) -> (pure vars, rewritten value)

    def inlined_call(node: E.Call) -> E.Expr:
        """The value of a call of a Func that is inlined, its arguments substituted."""
        target = node.target
        if id(target) not in inlined:
            definition = target.definition()
            names = tuple(a.name for a in definition.args)
            inlined[id(target)] = (names, rewrite(definition.value))
        names, value = inlined[id(target)]
        args = tuple(rewrite(a) for a in node.args)
        return substitute(value, dict(zip(names, args, strict=True)))

    def rdom_for(old: RDom) -> RDom:
        """A copy of a reduction domain whose bounds and predicates read the copy's inputs."""
        if id(old) not in rdoms:
            new = RDom([(rewrite(lo), rewrite(extent)) for lo, extent in old.bounds], name=old.name)
            rdoms[id(old)] = new
            for predicate in old.predicates:
                new.where(rewrite(predicate))
        return rdoms[id(old)]

    def rewrite(e: E.Expr) -> E.Expr:
        def fn(node: E.Expr) -> E.Expr | None:
            if isinstance(node, E.Variable) and node.kind == "rvar":
                rdom, index = node.owner
                return rdom_for(rdom).vars[index]
            if isinstance(node, E.Call) and node.call_kind in ("func", "image"):
                if node.call_kind == "func" and node.target is f:
                    return E.Call(node.type(), OUTPUT_NAME, tuple(rewrite(a) for a in node.args), "func", clone)
                if node.call_kind == "func" and inline is not None and inlinable(node.target) and inline(node.target):
                    return inlined_call(node)
                stand_in = stand_in_for_call(node)
                if isinstance(stand_in, Param):
                    return stand_in
                return stand_in[tuple(rewrite(a) for a in node.args)]
            if isinstance(node, E.Variable) and node.kind == "param" and isinstance(node.owner, (Param, ImageParam)):
                return scalar_for(node)
            return None

        return mutate(e, fn)

    pure = f.definition()
    clone[tuple(pure.args)] = rewrite(pure.value)  # type: ignore[index]
    for d in f.updates():
        lhs = tuple(rewrite(a) for a in d.args)
        clone[lhs] = rewrite(d.value)
    if schedule:
        _copy_loop_schedules(f, clone, guard_tails)
        _copy_storage_schedule(f, clone)
    return Isolated(clone, Pipeline([clone]), sources, schedule, guard_tails or not schedule)


def _copy_loop_schedules(f: Func, clone: Func, guard_tails: bool) -> None:
    """f's loop schedules onto the copy, with tails that keep it within the box asked for."""
    for stage, (original, copied) in enumerate(zip(func_definitions(f), func_definitions(clone), strict=True)):
        if original.schedule is None:
            continue
        copied.schedule = copy.deepcopy(original.schedule)
        copied.schedule.fuse_level = None  # compute_with() places it with another Func, which the copy lacks
        tail = TailStrategy.SHIFT_INWARDS if stage == 0 and not guard_tails else TailStrategy.GUARD_WITH_IF
        schedules = copied.schedule.all_schedules()
        for split in (sp for sched in schedules for sp in sched.splits):
            # Only the box asked for is computed, so only what it needs is read.
            if split.kind == "split":
                split.tail = tail
        for dim in (d for sched in schedules for d in sched.dims):
            # The copy's extents are known only when it runs (in the pipeline, bounds
            # inference may make them constants): its loops are not unrolled.
            if dim.for_type == ForType.UNROLLED:
                dim.for_type = ForType.SERIAL


def inlinable(g: Func) -> bool:
    """Whether g can be substituted into its callers: a pure definition of plain variables."""
    definition = g.definition()
    return not g.updates() and all(isinstance(a, E.Variable) and a.kind == "var" for a in definition.args)


def _copy_storage_schedule(f: Func, clone: Func) -> None:
    """Explicit bounds and storage order still describe the copy; placement does not."""
    original = f.schedule_of()
    target = clone.schedule_of()
    target.bounds = dict(original.bounds)
    target.bound_extents = dict(original.bound_extents)
    target.alignments = dict(original.alignments)
    target.storage_alignments = dict(original.storage_alignments)
    target.storage_order = list(original.storage_order) if original.storage_order is not None else None


__all__ = ["OUTPUT_NAME", "Isolated", "Source", "inlinable", "isolate"]
