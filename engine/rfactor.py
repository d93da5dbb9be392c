"""rfactor (Halide's Stage::rfactor): split an associative reduction into an intermediate
Func that reduces over the RVars not preserved, one result per value of the preserved
RVars (which become pure Vars of it, so they can be parallelized or vectorized), and an
update of the original Func that merges those results over the preserved RVars."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir import ops
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.types import Type
from pixelweave.engine.ir.var import RDom, RVar, Var
from pixelweave.engine.ir.visit import substitute, walk

_OPS = {E.Add: ops.add, E.Mul: ops.mul, E.Min: ops.min, E.Max: ops.max}


def _identity(op: type, t: Type) -> E.Expr:
    if op is E.Add:
        return E.Const(t, 0)
    if op is E.Mul:
        return E.Const(t, 1)
    if op is E.Min:
        return E.Const(t, float("inf")) if t.is_float() else E.Const(t, t.max())
    return E.Const(t, -float("inf")) if t.is_float() else E.Const(t, t.min())


def _pairs(preserved: Any, where: str) -> list[tuple[RVar, Var]]:
    if isinstance(preserved, tuple) and len(preserved) == 2 and isinstance(preserved[0], RVar):
        preserved = [preserved]
    pairs = []
    for item in preserved if isinstance(preserved, (list, tuple)) else [preserved]:
        if not (isinstance(item, (list, tuple)) and len(item) == 2):
            raise ScheduleError(f"rfactor of {where} takes (RVar, Var) pairs, got {item!r}")
        rvar, var = item
        if not isinstance(rvar, RVar) or not isinstance(var, Var):
            raise ScheduleError(f"rfactor of {where} takes (RVar, Var) pairs, got ({rvar!r}, {var!r})")
        pairs.append((rvar, var))
    return pairs


def _split_reduction(f: Func, d: Any, where: str) -> tuple[type, E.Expr]:
    """(operation, the term reduced) of `f[L] = op(f[L], term)`, or ScheduleError."""
    v = d.value
    if d.extra_values or type(v) not in _OPS:
        raise ScheduleError(
            f"rfactor of {where} needs an associative reduction f[...] = f[...] op e with op one of +, *, min, max; "
            f"its value is {v}"
        )
    for self_side, other in ((v.a, v.b), (v.b, v.a)):
        if (
            isinstance(self_side, E.Call)
            and self_side.call_kind == "func"
            and self_side.target is f
            and all(x.same_as(y) for x, y in zip(self_side.args, d.args, strict=True))
            and not any(isinstance(n, E.Call) and n.call_kind == "func" and n.target is f for n in walk(other))
        ):
            return type(v), other
    raise ScheduleError(
        f"rfactor of {where} needs an associative reduction f[...] = f[...] op e, with e not reading the Func; "
        f"its value is {v}"
    )


def _rdom_named(bounds: list[tuple[E.Expr, E.Expr]], names: list[str], rdom_name: str) -> RDom:
    """An RDom whose variables keep the names they had, so the user's RVars schedule it."""
    r = RDom(list(bounds), name=rdom_name)
    r.vars = [RVar(n, v.type(), "rvar", owner=(r, i)) for i, (n, v) in enumerate(zip(names, r.vars, strict=True))]
    return r


def rfactor(f: Func, index: int, preserved: Any) -> Func:
    """Apply rfactor to update `index` of f and return the intermediate Func."""
    where = f"update {index} of Func `{f.name()}`"
    d = f.updates()[index]
    if d.rdom is None:
        raise ScheduleError(f"rfactor of {where} needs a reduction over an RDom; this update has none")
    op, term = _split_reduction(f, d, where)
    pairs = _pairs(preserved, where)
    names = {v.name for v in d.rdom.vars}
    pure_names = {a.name for a in f.args()}
    seen: set[str] = set()
    for rvar, var in pairs:
        if rvar.name not in names:
            raise ScheduleError(
                f"rfactor of {where}: {rvar.name} is not a variable of its RDom {d.rdom.name} "
                f"({', '.join(sorted(names))})"
            )
        if var.name in pure_names or var.name in seen or rvar.name in seen:
            raise ScheduleError(f"rfactor of {where}: {var.name} or {rvar.name} is used twice or names a pure Var")
        seen.update((rvar.name, var.name))
    preserved_names = [r.name for r, _ in pairs]
    kept = [(i, v) for i, v in enumerate(d.rdom.vars) if v.name not in preserved_names]
    bounds = d.rdom.bounds
    replacements: dict[str, E.Expr] = {r.name: var for r, var in pairs}
    if kept:
        inner = _rdom_named([bounds[i] for i, _ in kept], [v.name for _, v in kept], d.rdom.name)
        replacements.update({v.name: inner.vars[j] for j, (_, v) in enumerate(kept)})
    t = term.type()
    pure = f.args()
    new_vars = [var for _, var in pairs]
    intm = Func(f"{f.name()}_intm")
    intm[(*pure, *new_vars)] = _identity(op, t)
    lhs = tuple(substitute(a, replacements) for a in d.args) + tuple(new_vars)
    intm[lhs] = _OPS[op](intm[lhs], substitute(term, replacements))
    if d.predicate is not None:
        # The predicate may now read the preserved RVars as pure Vars: it guards the store.
        intm.replace_update(0, replace(intm.updates()[0], predicate=substitute(d.predicate, replacements)))
    order = sorted(pairs, key=lambda p: preserved_names.index(p[0].name))
    outer_bounds = [bounds[next(i for i, v in enumerate(d.rdom.vars) if v.name == r.name)] for r, _ in order]
    outer = _rdom_named(outer_bounds, [r.name for r, _ in order], d.rdom.name)
    merged = {r.name: outer.vars[j] for j, (r, _) in enumerate(order)}
    call = intm[(*pure, *(merged[r.name] for r, _ in pairs))]
    f.replace_update(index, _merge_definition(op, f[tuple(pure)], call, pure, outer))
    return intm


def _merge_definition(op: type, current: Any, call: Any, pure: list, outer: RDom) -> Definition:
    """f's update after rfactor: f[pure] = op(f[pure], intm[pure, preserved RVars])."""
    value = _OPS[op](current, call)
    return Definition(tuple(pure), value, outer, None, pure_vars=tuple(a.name for a in pure))
