"""Pass: a fast path for boundary conditions in vectorized loops.

A boundary condition clamps coordinates (`max(min(x, hi), lo)`) or tests them
(`x >= lo && x <= hi`). Inside the image both are no-ops, but a clamp on a vector of
consecutive coordinates turns a dense vector load into a gather. For each vectorized loop
whose body clamps, this pass adds a test, evaluated once per vector: if every clamped
coordinate of this vector lies inside its bounds, a copy of the loop without clamps and
tests runs (dense loads); otherwise the original does. The same effect as Halide's loop
partitioning of `likely` clamps, at the granularity of one vector.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import find_variables, mutate, substitute, walk
from pixelweave.engine.lower.intervals import SymInterval, interval_of
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.stmt import For, ForType, IfThenElse, LetStmt, Stmt
from pixelweave.engine.stmt_visit import StmtMutator, map_exprs, stmt_exprs, walk_stmt

MAX_CLAMPS = 64


def boundary_fast_path(stmt: Stmt) -> Stmt:
    return _FastPath().mutate(stmt)


def _clamp_parts(node: E.Expr) -> tuple[E.Expr, E.Expr, E.Expr] | None:
    """(e, lo, hi) when node is max(min(e, hi), lo); for the coordinate of a wrapping or
    mirroring boundary condition, max(min(select(lo <= e && e <= hi, e, outside), hi), lo),
    (e, lo, hi) too: inside the bounds it is e, whatever `outside` computes."""
    if isinstance(node, E.Max) and isinstance(node.a, E.Min) and not node.type().is_float():
        arg, lo, hi = node.a.a, node.b, node.a.b
        inner = _inside_select(arg, lo, hi)
        return (inner, lo, hi) if inner is not None else (arg, lo, hi)
    return None


def _inside_select(e: E.Expr, lo: E.Expr, hi: E.Expr) -> E.Expr | None:
    """v when e is select(v >= lo && v <= hi, v, outside), else None."""
    if not (isinstance(e, E.Select) and isinstance(e.cond, E.And)):
        return None
    low, high = e.cond.a, e.cond.b
    v = e.true_value
    if (
        isinstance(low, E.GE)
        and isinstance(high, E.LE)
        and low.a.key() == v.key() == high.a.key()
        and low.b.key() == lo.key()
        and high.b.key() == hi.key()
    ):
        return v
    return None


def _outside_branches(e: E.Expr) -> set[tuple]:
    """Keys of the nodes inside the `outside` branch of boundary selects (see _clamp_parts):
    the fast path drops those branches, so their clamps need no test of their own."""
    keys: set[tuple] = set()
    for n in walk(e):
        if _clamp_parts(n) is not None and _inside_select(n.a.a, n.b, n.a.b) is not None:
            keys.update(m.key() for m in walk(n.a.a.false_value))
    return keys


class _FastPath(StmtMutator):
    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        loop = s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)
        if s.for_type != ForType.VECTORIZED:
            return loop
        inner = {s.name} | {n.name for n in walk_stmt(body) if isinstance(n, (LetStmt, For))}
        lets: list[tuple[str, E.Expr]] = []
        node: Stmt = body
        while isinstance(node, LetStmt):
            lets.append((node.name, node.value))
            node = node.body
        clamps: dict[tuple, tuple[E.Expr, E.Expr, E.Expr]] = {}
        for e in stmt_exprs(body):
            dropped = _outside_branches(e)
            for n in walk(e):
                parts = _clamp_parts(n)
                if parts is None or n.key() in clamps or n.key() in dropped:
                    continue
                arg, lo, hi = parts
                if _uses(lo, inner) or _uses(hi, inner) or not _uses(arg, inner):
                    continue
                clamps[n.key()] = parts
        if not clamps or len(clamps) > MAX_CLAMPS:
            return loop
        scope = {s.name: SymInterval(s.min, simplify(s.min + s.extent - 1))}
        conditions: list[E.Expr] = []
        removable: dict[tuple, E.Expr] = {}
        for key, (arg, lo, hi) in clamps.items():
            resolved = arg
            for name, value in reversed(lets):
                resolved = substitute(resolved, {name: value})
            if _uses(resolved, inner - {s.name}):
                continue  # depends on something computed deeper inside: keep the clamp
            iv = interval_of(resolved, scope)
            if not iv.is_bounded():
                continue
            conditions.append(E.And(E.GE(iv.lo, lo), E.LE(iv.hi, hi)))
            removable[key] = arg
        if not conditions:
            return loop
        inside = conditions[0]
        for c in conditions[1:]:
            inside = E.And(inside, c)
        fast = map_exprs(body, lambda e: _drop_clamps(e, removable, clamps))
        return IfThenElse(simplify(inside), For(s.name, s.min, s.extent, s.for_type, fast), loop, fast_path=True)


def _uses(e: E.Expr, names: set[str]) -> bool:
    return any(v.name in names for v in find_variables(e))


def _drop_clamps(e: E.Expr, removable: dict[tuple, E.Expr], clamps: dict) -> E.Expr:
    """Inside the bounds: clamps are their argument, and range tests of it are true."""
    ranges = {(clamps[k][0].key(), clamps[k][1].key(), clamps[k][2].key()) for k in removable}
    lows = {(a, lo) for a, lo, _ in ranges}
    highs = {(a, hi) for a, _, hi in ranges}

    def fn(node: E.Expr) -> E.Expr | None:
        hit = removable.get(node.key()) if isinstance(node, E.Max) else None
        if hit is not None:
            return mutate(hit, fn)
        if isinstance(node, E.GE) and (node.a.key(), node.b.key()) in lows:
            return E.Const(node.type(), True)
        if isinstance(node, E.LE) and (node.a.key(), node.b.key()) in highs:
            return E.Const(node.type(), True)
        return None

    try:
        return simplify(mutate(e, fn))
    finally:
        fn = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)
