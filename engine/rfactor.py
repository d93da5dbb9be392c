"""rfactor (Halide's Stage::rfactor): split an associative reduction into an intermediate
Func that reduces over the RVars not preserved, one result per value of the preserved
RVars (which become pure Vars of it, so they can be parallelized or vectorized), and an
update of the original Func that merges those results over the preserved RVars."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir import ops
from pixelweave.engine.ir.coerce import operands, to_expr
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.tuple import Tuple
from pixelweave.engine.ir.types import Type
from pixelweave.engine.ir.var import RDom, RVar, Var
from pixelweave.engine.ir.visit import find_variables, mutate, substitute, walk
from pixelweave.engine.self_reference import is_self_call, reads_func

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


class _Reduction:
    """An associative update: identity values and how to combine old values with new ones."""

    def __init__(self, terms: list[E.Expr], identity: list[E.Expr], combine) -> None:
        self.terms = terms  # the new values, free of the Func
        self.identity = identity  # one Expr per value
        self.combine = combine  # (old values, new values) -> one Expr per value


def _scalar_reduction(f: Func, d: Any) -> _Reduction | None:
    """f[L] = f[L] op e with op one of +, *, min, max."""
    v = d.value
    if d.extra_values or type(v) not in _OPS:
        return None
    op = type(v)
    for self_side, other in ((v.a, v.b), (v.b, v.a)):
        if is_self_call(self_side, f, d) and not reads_func(other, f):
            return _Reduction([other], [_identity(op, other.type())], lambda old, new: [_OPS[op](old[0], new[0])])
    return None


def _new_term(v: E.Expr, f: Func, d: Any, i: int) -> E.Expr | None:
    """The new value element i of a Tuple update combines with the old one f[L][i]."""
    if isinstance(v, E.Select):
        if is_self_call(v.false_value, f, d, i):
            return v.true_value
        if is_self_call(v.true_value, f, d, i):
            return v.false_value
    if isinstance(v, (E.Min, E.Max)):
        if is_self_call(v.b, f, d, i):
            return v.a
        if is_self_call(v.a, f, d, i):
            return v.b
    return None


def _arg_reduction(f: Func, d: Any) -> _Reduction | None:
    """A Tuple reduction whose every value picks the old or the new element, such as an
    argmin (`select(e < f[L][1], Tuple(r.x, e), f[L])`, or Halide's form `(min(e, f[L][0]),
    select(f[L][0] < e, f[L][1], r.x))`): it is rewritten as a template of old and new
    values and accepted only if that template is associative on every triple of a small
    set of values with ties (the template only compares and chooses, so that set tells)."""
    values = d.all_values()
    if len(values) < 2:
        return None
    terms = [_new_term(v, f, d, i) for i, v in enumerate(values)]
    if any(t is None or reads_func(t, f) for t in terms):
        return None
    old = [E.Variable(f"old${i}", v.type(), "let") for i, v in enumerate(values)]
    new = [E.Variable(f"new${i}", v.type(), "let") for i, v in enumerate(values)]

    def to_template(node: E.Expr) -> E.Expr | None:
        for i, t in enumerate(terms):
            if node.same_as(t):
                return new[i]
        if isinstance(node, E.Call) and is_self_call(node, f, d, node.value_index):
            return old[node.value_index]
        return None

    templates = [mutate(v, to_template) for v in values]
    allowed = {v.name for v in (*old, *new)}
    for t in templates:
        for node in walk(t):
            if isinstance(node, E.Variable) and node.name not in allowed:
                return None
            if isinstance(node, E.Call):
                return None
    compared = {
        int(v.name.split("$")[1])
        for t in templates
        for node in walk(t)
        if isinstance(node, (E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE, E.Min, E.Max))
        for v in find_variables(node)
    }
    if len(compared) != 1:
        return None
    k = compared.pop()
    smaller_wins = _check_associative(templates, k)
    if smaller_wins is None:
        return None
    identity = [E.Const(t.type(), 0) for t in terms]
    identity[k] = _identity(E.Min if smaller_wins else E.Max, terms[k].type())

    def combine(old_values: list, new_values: list) -> list[E.Expr]:
        bound = {**{o.name: x for o, x in zip(old, old_values, strict=True)}}
        bound.update({n.name: x for n, x in zip(new, new_values, strict=True)})
        return [substitute(t, bound) for t in templates]

    return _Reduction(terms, identity, combine)


def _check_associative(templates: list[E.Expr], k: int) -> bool | None:
    """Whether combining by the templates is associative, where element k is compared and the
    others are carried along; True if the smaller element k wins, False if the larger, None
    if it is not associative. Elements are labelled so that a wrong pick shows."""
    n = len(templates)
    points = [tuple(value if i == k else 10 * label + i for i in range(n)) for label, value in enumerate((0, 1, 1, 2))]

    def combine(a: tuple, b: tuple) -> tuple:
        env = {f"old${i}": a[i] for i in range(n)} | {f"new${i}": b[i] for i in range(n)}
        return tuple(_evaluate(t, env) for t in templates)

    try:
        for a in points:
            for b in points:
                for c in points:
                    if combine(combine(a, b), c) != combine(a, combine(b, c)):
                        return None
        low, high = points[0], points[3]
        picked = combine(low, high)
    except _NotComparison:
        return None
    if picked not in (low, high) or combine(high, low) != picked:
        return None
    return picked == low


def _evaluate(e: E.Expr, env: dict[str, int]) -> Any:
    if isinstance(e, E.Variable):
        return env[e.name]
    if isinstance(e, E.Const):
        return e.value
    if isinstance(e, E.Select):
        return _evaluate(e.true_value, env) if _evaluate(e.cond, env) else _evaluate(e.false_value, env)
    a, b = (_evaluate(c, env) for c in e.children()) if len(e.children()) == 2 else (None, None)
    table = {
        E.Min: lambda: min(a, b),
        E.Max: lambda: max(a, b),
        E.LT: lambda: a < b,
        E.LE: lambda: a <= b,
        E.GT: lambda: a > b,
        E.GE: lambda: a >= b,
        E.EQ: lambda: a == b,
        E.NE: lambda: a != b,
        E.And: lambda: a and b,
        E.Or: lambda: a or b,
    }
    if type(e) in table:
        return table[type(e)]()
    if isinstance(e, E.Not):
        return not _evaluate(e.a, env)
    raise _NotComparison(type(e).__name__)


class _NotComparison(Exception):
    """A template does more than compare and choose: rfactor does not try to prove it associative."""


def _reduction(f: Func, d: Any, where: str) -> _Reduction:
    found = _scalar_reduction(f, d) or _arg_reduction(f, d)
    if found is None:
        values = ", ".join(str(v) for v in d.all_values())
        raise ScheduleError(
            f"rfactor of {where} needs an associative reduction: f[...] = f[...] op e with op one of +, *, min, "
            f"max, or an argmin/argmax written as select(e < f[...][k], Tuple(...), f[...]); its value is {values}"
        )
    return found


def _rdom_named(bounds: list[tuple[E.Expr, E.Expr]], names: list[str], rdom_name: str) -> RDom:
    """An RDom whose variables keep the names they had, so the user's RVars schedule it."""
    r = RDom(list(bounds), name=rdom_name)
    r.vars = [RVar(n, v.type(), "rvar", owner=(r, i)) for i, (n, v) in enumerate(zip(names, r.vars, strict=True))]
    return r


@dataclass(frozen=True)
class _SplitLoop:
    """A loop of the update's schedule made by splitting RDom variable `index` once by
    `factor`: the inner loop runs over [0, factor), the outer over the steps of it."""

    index: int
    inner: bool
    factor: int
    other: str  # the other loop of the split


def _split_loops(d: Any, names: list[str]) -> dict[str, _SplitLoop]:
    """The loops made by splitting one of the update's RDom variables once (and neither
    split nor fused again)."""
    loops: dict[str, _SplitLoop] = {}
    splits = d.schedule.splits if d.schedule is not None else []
    for s in splits:
        if s.kind == "split" and s.old in names:
            i = names.index(s.old)
            loops[s.outer] = _SplitLoop(i, False, s.factor, s.inner)
            loops[s.inner] = _SplitLoop(i, True, s.factor, s.outer)
    for s in splits:
        touched = {s.old} if s.kind == "split" else {s.old, s.inner, s.outer}
        for name in touched & set(loops):
            loops.pop(loops[name].other, None)
            loops.pop(name, None)
    return loops


def _resolve(rvar: RVar, names: list[str], loops: dict[str, _SplitLoop], where: str, rdom: str) -> str:
    """The RDom variable or split loop a preserved RVar names (a loop also by its last part)."""
    if rvar.name in names or rvar.name in loops:
        return rvar.name
    matches = [n for n in loops if n.rsplit(".", 1)[-1] == rvar.name]
    if len(matches) == 1:
        return matches[0]
    raise ScheduleError(
        f"rfactor of {where}: {rvar.name} is not a variable of its RDom {rdom} ({', '.join(sorted(names))}) "
        "nor a loop made by splitting one of them once"
    )


def _identity_is_neutral(d: Any, terms: list[E.Expr]) -> bool:
    """Whether combining the identity leaves any value unchanged, bit for bit: integer +, *,
    min and max (not floats, where -0.0 + 0.0 is +0.0, nor Tuple reductions, whose ties
    could pick the identity's position)."""
    t = terms[0].type() if len(terms) == 1 else None
    return t is not None and not d.extra_values and type(d.value) in _OPS and (t.is_int() or t.is_uint())


def _steps(extent: E.Expr, factor: int) -> E.Expr:
    """How many steps of `factor` cover `extent` (the outer loop of a split)."""
    return ops.div(ops.add(extent, factor - 1), factor)


def rfactor(f: Func, index: int, preserved: Any) -> Func:
    """Apply rfactor to update `index` of f and return the intermediate Func.

    A preserved RVar may also be one loop of a split of an RDom variable rx by F (Halide's
    `split(rx, rxo, rxi, F).rfactor(rxi, u)`): rx is min + rxo * F + rxi, the intermediate
    reduces over the other loop, guarded to stay inside rx's extent (points it skips keep
    the identity), and the merge runs over the preserved loop's range."""
    where = f"update {index} of Func `{f.name()}`"
    d = f.updates()[index]
    if d.rdom is None:
        raise ScheduleError(f"rfactor of {where} needs a reduction over an RDom; this update has none")
    reduction = _reduction(f, d, where)
    pairs = _pairs(preserved, where)
    names = [v.name for v in d.rdom.vars]
    loops = _split_loops(d, names)
    pure_names = {a.name for a in f.args()}
    seen: set[str] = set()
    resolved: list[tuple[str, Var]] = []
    for rvar, var in pairs:
        name = _resolve(rvar, names, loops, where, d.rdom.name)
        if var.name in pure_names or var.name in seen or name in seen:
            raise ScheduleError(f"rfactor of {where}: {var.name} or {rvar.name} is used twice or names a pure Var")
        seen.update((name, var.name))
        resolved.append((name, var))
    split_of: dict[int, tuple[_SplitLoop, Var]] = {}  # RDom variable -> its preserved loop
    for name, var in resolved:
        if name in loops:
            loop = loops[name]
            if loop.index in split_of or names[loop.index] in seen:
                raise ScheduleError(
                    f"rfactor of {where}: preserve one loop of the split of {names[loop.index]}, not both, and not "
                    f"{names[loop.index]} itself"
                )
            split_of[loop.index] = (loop, var)
    bounds = d.rdom.bounds
    plain = {name: var for name, var in resolved if name in names}
    # The intermediate reduces over the RDom variables not preserved, and over the other
    # loop of each split whose one loop is preserved.
    kept: list[tuple[int, str, tuple[E.Expr, E.Expr]]] = []
    for i, v in enumerate(d.rdom.vars):
        if i in split_of:
            loop = split_of[i][0]
            other_extent = _steps(bounds[i][1], loop.factor) if loop.inner else to_expr(loop.factor)
            kept.append((i, loop.other, (to_expr(0), other_extent)))
        elif v.name not in plain:
            kept.append((i, v.name, bounds[i]))
    replacements: dict[str, E.Expr] = dict(plain)
    guards: list[E.Expr] = []
    if kept:
        inner = _rdom_named([b for _, _, b in kept], [n for _, n, _ in kept], d.rdom.name)
        for j, (i, _, _) in enumerate(kept):
            if i not in split_of:
                replacements[names[i]] = inner.vars[j]
                continue
            loop, var = split_of[i]
            outer, within = (inner.vars[j], var) if loop.inner else (var, inner.vars[j])
            offset = ops.add(ops.mul(outer, loop.factor), within)
            replacements[names[i]] = ops.add(bounds[i][0], offset)
            guards.append(E.LT(*operands(offset, bounds[i][1])))
    pure = f.args()
    new_vars = [var for _, var in resolved]
    intm = Func(f"{f.name()}_intm")
    intm[(*pure, *new_vars)] = _values(reduction.identity)
    lhs = tuple(substitute(a, replacements) for a in d.args) + tuple(new_vars)
    new = [substitute(t, replacements) for t in reduction.terms]
    if guards and _identity_is_neutral(d, new):
        # An integer +, *, min or max: a point outside the split variable's extent adds the
        # identity instead of being skipped, the same result as a select the vectorizer
        # keeps in lanes and loop partitioning lifts out of all but the last vector.
        inside = guards[0]
        for guard in guards[1:]:
            inside = ops.logical_and(inside, guard)
        new = [ops.select(inside, new[0], reduction.identity[0])]
        guards = []
    intm[lhs] = _values(reduction.combine(_elements(intm[lhs]), new))
    predicate = substitute(d.predicate, replacements) if d.predicate is not None else None
    for guard in guards:
        predicate = guard if predicate is None else ops.logical_and(predicate, guard)
    if predicate is not None:
        # The predicate may now read the preserved RVars as pure Vars: it guards the store.
        intm.replace_update(0, replace(intm.updates()[0], predicate=predicate))

    def position(name: str) -> int:
        return loops[name].index if name in loops else names.index(name)

    order = sorted(resolved, key=lambda p: position(p[0]))  # the RDom's own order: r.x innermost

    def merged_bounds(name: str) -> tuple[E.Expr, E.Expr]:
        if name not in loops:
            return bounds[names.index(name)]
        loop = loops[name]
        return (to_expr(0), to_expr(loop.factor) if loop.inner else _steps(bounds[loop.index][1], loop.factor))

    # With nothing preserved, the intermediate does the whole reduction and the merge is a
    # pure update (as in Halide).
    outer = _rdom_named([merged_bounds(n) for n, _ in order], [n for n, _ in order], d.rdom.name) if order else None
    merged = {n: outer.vars[j] for j, (n, _) in enumerate(order)} if outer is not None else {}
    call = intm[(*pure, *(merged[n] for n, _ in resolved))]
    # f's update becomes f[pure] = combine(f[pure], intm[pure, preserved RVars]).
    merged_values = reduction.combine(_elements(f[tuple(pure)]), _elements(call))
    values = [to_expr(v) for v in merged_values]
    f.replace_update(
        index,
        Definition(
            tuple(pure),
            values[0],
            outer,
            None,
            pure_vars=tuple(a.name for a in pure),
            extra_values=tuple(values[1:]),
        ),
    )
    return intm


def _elements(ref: Any) -> list[E.Expr]:
    """The values at a reference: each element of a Func returning a Tuple, else the one value."""
    return ref.elements() if ref.is_tuple() else [to_expr(ref)]


def _values(values: list[E.Expr]) -> Any:
    return values[0] if len(values) == 1 else Tuple(values)
