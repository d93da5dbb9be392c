"""Pass 2: build each Func's loop nest from its schedule (the domain order).

Each stage of Func f iterates over the region `[f.sK.v.min, f.sK.v.max]` of each of its
variables v; those bounds are symbols that bounds inference defines later. Splits and
fuses turn the variables into loops, and lets innermost recover each variable from its
loops, exactly as the split's tail strategy says.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition
from pixelweave.engine.ir.types import Bool, Int
from pixelweave.engine.ir.visit import mutate, substitute
from pixelweave.engine.lower.context import FuncInfo
from pixelweave.engine.lower.inline import plain
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.schedule import SPECIALIZE_FAIL_MESSAGE, Split, StageSchedule, TailStrategy, resolve_tail
from pixelweave.engine.self_reference import atomic_form
from pixelweave.engine.stmt import (
    AssertStmt,
    For,
    ForType,
    IfThenElse,
    LetStmt,
    ProducerConsumer,
    Provide,
    Stmt,
    make_block,
)

I32 = Int(32)


def var(name: str) -> E.Variable:
    return E.Variable(name, I32)


def stage_prefix(fname: str, stage: int) -> str:
    return f"{fname}.s{stage}."


def region_min(fname: str, stage: int, v: str) -> E.Variable:
    return var(f"{fname}.s{stage}.{v}.min")


def region_max(fname: str, stage: int, v: str) -> E.Variable:
    return var(f"{fname}.s{stage}.{v}.max")


def constant_extents(info: FuncInfo) -> dict[str, int]:
    """Pure dimensions whose every stage iterates a constant number of points: those given
    bound_extent(v, n) with an int n (bounds inference makes the regions match)."""
    return {v: n for v, n in info.schedule.bound_extents.items() if isinstance(n, int)}


def build_produce(info: FuncInfo) -> Stmt:
    """produce f { stage 0 loops; stage 1 loops; ... }"""
    nests = [build_stage(info, k) for k in range(len(info.stages))]
    return ProducerConsumer(info.name, True, make_block(nests))


def build_stage(info: FuncInfo, k: int) -> Stmt:
    """The loop nest of stage k; with specializations, `if (c1) nest1 else if (c2) ... else
    default` (or the specialize_fail() failure)."""
    return _specialized(info, k, info.stages[k].schedule, [])


def _specialized(info: FuncInfo, k: int, sched: StageSchedule, facts: list[tuple[E.Expr, bool]]) -> Stmt:
    """The nest of one schedule and its specializations, each built under what is known
    there: its own condition holds and the earlier ones' do not (as Halide's
    specializations, tried in order)."""
    specs = sched.specializations
    conditions = [s.condition for s in specs if s.condition is not None]
    failed = [s.failure_message for s in specs if s.failure_message is not None]
    if failed:
        stmt: Stmt = AssertStmt(E.Const(Bool(), 0), SPECIALIZE_FAIL_MESSAGE + failed[0].replace("{}", "{ }"))
    else:
        stmt = _loop_nest(info, k, sched, [*facts, *((c, False) for c in conditions)])
    for i in reversed(range(len(conditions))):
        earlier = [(c, False) for c in conditions[:i]]
        then = _specialized(info, k, specs[i].schedule, [*facts, *earlier, (conditions[i], True)])
        stmt = IfThenElse(plain(conditions[i]), then, stmt)
    return stmt


def _loop_nest(info: FuncInfo, k: int, sched: StageSchedule, facts: list[tuple[E.Expr, bool]]) -> Stmt:
    body, loops = stage_body_and_loops(info, k, sched, facts)
    for loop in loops:  # innermost first
        body = For(loop.name, loop.min, loop.extent, loop.for_type, body)
    return body


@dataclass
class StageLoop:
    """One loop of a stage's nest, before it is built: compute_with fuses these."""

    dim: str  # the schedule's name of the dimension (x, y.yo, ...)
    name: str  # the loop variable (f.s0.y.yo)
    min: E.Expr
    extent: E.Expr
    for_type: ForType


def stage_body_and_loops(
    info: FuncInfo, k: int, sched: StageSchedule | None = None, facts: list[tuple[E.Expr, bool]] | None = None
) -> tuple[Stmt, list[StageLoop]]:
    """The body of stage k (lets recovering its variables, guards, the store) and its
    loops, innermost first, under one schedule (the stage's own by default) and what its
    specialization knows (`facts`)."""
    sched = info.stages[k].schedule if sched is None else sched
    d = specialized_definition(info.stages[k].definition, facts or [])
    prefix = stage_prefix(info.name, k)
    originals = [*(v.name for v in d.rdom.vars)] if d.rdom is not None else []
    is_rvar = set(originals)
    originals += list(d.pure_vars)
    # Loop bounds (min, extent) of every dim, original and derived.
    bounds: dict[str, tuple[E.Expr, E.Expr]] = {}
    fixed = constant_extents(info)
    for v in originals:
        lo, hi = region_min(info.name, k, v), region_max(info.name, k, v)
        bounds[v] = (lo, E.Const(I32, fixed[v]) if v in fixed and v not in is_rvar else simplify(hi - lo + 1))
    lets: list[tuple[str, E.Expr]] = []  # in split order: the first split's let is innermost
    guards: dict[str, E.Expr] = {}  # GuardWithIf: split variable -> its condition
    for split in sched.splits:
        _apply_split(split, bounds, lets, guards, k, split.is_rvar or split.old in is_rvar)
    # The innermost statement: the definition with variables renamed to loop names.
    renames = {v: var(prefix + v) for v in originals}
    values = [substitute(v, renames) for v in d.all_values()]
    args = tuple(substitute(a, renames) for a in d.args)
    if sched.atomic:
        # atomic(): the store combines the new term into the point in one atomic operation
        form = atomic_form(info.func, d)
        if form is None:
            raise ScheduleError(f"atomic() of update {k - 1} of `{info.name}`: its definition is no longer f = f op e")
        body: Stmt = Provide(info.name, substitute(form[1], renames), args, 0, form[0])
    else:
        body = _provide(info.name, prefix, values, args)
    if d.predicate is not None:
        body = IfThenElse(substitute(d.predicate, renames), body)
    # Each guard goes just inside the let of the variable it tests, outside the lets
    # computed from that variable, so interval analysis (region.py) sees them narrowed too.
    for name, value_expr in lets:
        if name in guards:
            body = IfThenElse(_prefixed(guards[name], prefix, bounds), body)
        body = LetStmt(prefix + name, _prefixed(value_expr, prefix, bounds), body)
    loops = []
    for dim in sched.dims:  # innermost first
        lo, extent = bounds[dim.name]
        lo, extent = _prefixed(lo, prefix, bounds), _prefixed(extent, prefix, bounds)
        loops.append(StageLoop(dim.name, prefix + dim.name, lo, extent, dim.for_type))
    return body, loops


def specialized_definition(d: Definition, facts: list[tuple[E.Expr, bool]]) -> Definition:
    """The definition simplified under what a specialization knows (as Halide's
    SimplifySpecializations): a bool Param condition is true in its branch and false after
    it, `p == c` puts c for p in its branch (and for a bool p, not c after it), and any other
    condition is replaced by true or false where it appears."""
    if not facts:
        return d
    names: dict[str, E.Expr] = {}
    exprs: list[tuple[E.Expr, E.Expr]] = []
    for cond, holds in facts:
        truth = E.Const(Bool(), int(holds))
        if isinstance(cond, E.Variable):
            names[cond.name] = truth
            continue
        if isinstance(cond, E.EQ):
            for a, b in ((cond.a, cond.b), (cond.b, cond.a)):
                if isinstance(a, E.Variable) and a.kind == "param" and isinstance(b, E.Const):
                    if holds:
                        names[a.name] = b
                    elif b.type().is_bool():
                        names[a.name] = E.Const(Bool(), 1 - int(b.value))
                    break
        exprs.append((cond, truth))

    def assume(e: E.Expr) -> E.Expr:
        out = substitute(e, names)
        if exprs:
            out = mutate(out, lambda n: next((t for c, t in exprs if n.same_as(c)), None))
        return out if out is e else simplify(out)

    values = tuple(assume(v) for v in d.all_values())
    return replace(
        d,
        args=tuple(assume(a) for a in d.args),
        value=values[0],
        extra_values=values[1:],
        predicate=None if d.predicate is None else assume(d.predicate),
    )


def _provide(name: str, prefix: str, values: list[E.Expr], args: tuple[E.Expr, ...]) -> Stmt:
    """The store of one point. The values of a Tuple are all computed (from the old values,
    which they may read) before any is stored, so they are bound to lets first."""
    if len(values) == 1:
        return Provide(name, values[0], args)
    temps = [E.Variable(f"{prefix}value.{i}", v.type()) for i, v in enumerate(values)]
    body: Stmt = make_block([Provide(name, t, args, i) for i, t in enumerate(temps)])
    for t, v in reversed(list(zip(temps, values, strict=True))):
        body = LetStmt(t.name, v, body)
    return body


def _prefixed(e: E.Expr, prefix: str, bounds: dict) -> E.Expr:
    """Loop-variable references inside split expressions use bare dim names; qualify them."""
    names = {v.name for v in _free_dims(e, bounds)}
    return substitute(e, {n: var(prefix + n) for n in names})


def _free_dims(e: E.Expr, bounds: dict) -> list[E.Variable]:
    from pixelweave.engine.ir.visit import find_variables

    return [v for v in find_variables(e) if v.name in bounds and v.kind == "loop"]


def loop_var(name: str) -> E.Variable:
    """A reference to a loop of the stage being built (qualified by _prefixed)."""
    return E.Variable(name, I32, "loop")


def _apply_split(split: Split, bounds: dict, lets: list, guards: list, stage: int, is_rvar: bool) -> None:
    if split.kind == "split":
        old_min, old_extent = bounds[split.old]
        factor = split.factor
        bounds[split.inner] = (E.Const(I32, 0), E.Const(I32, factor))
        bounds[split.outer] = (E.Const(I32, 0), simplify((old_extent + (factor - 1)) / factor))
        outer, inner = loop_var(split.outer), loop_var(split.inner)
        tail = resolve_tail(split.tail, stage, is_rvar, split.bounded)
        if tail == TailStrategy.SHIFT_INWARDS:
            base = E.Min(simplify(old_min + outer * factor), simplify(old_min + old_extent - factor))
            value = simplify(base + inner)
        else:
            value = simplify(old_min + outer * factor + inner)
            if tail == TailStrategy.GUARD_WITH_IF:
                guards[split.old] = E.LT(loop_var(split.old), simplify(old_min + old_extent))
        lets.append((split.old, value))
    elif split.kind == "fuse":
        inner_min, inner_extent = bounds[split.inner]
        outer_min, outer_extent = bounds[split.outer]
        fused = loop_var(split.old)
        bounds[split.old] = (E.Const(I32, 0), simplify(inner_extent * outer_extent))
        # The clamps never change a value; they tell interval analysis (bounds inference,
        # allocation sizes) the exact range of each recovered loop, which it cannot derive
        # from a division and a modulo by an extent known only at run time.
        inner = _within(simplify(inner_min + fused % inner_extent), inner_min, inner_extent)
        outer = _within(simplify(outer_min + fused / inner_extent), outer_min, outer_extent)
        lets.append((split.inner, inner))
        lets.append((split.outer, outer))
    else:
        raise ScheduleError(f"unknown split kind {split.kind}")


def _within(value: E.Expr, lo: E.Expr, extent: E.Expr) -> E.Expr:
    return simplify(E.Min(E.Max(value, lo), simplify(lo + extent - 1)))


def is_gpu(for_type: ForType) -> bool:
    return for_type in (ForType.GPU_BLOCK, ForType.GPU_THREAD)
