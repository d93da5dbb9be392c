"""Which region of a Func or image a statement touches: interval analysis over a loop nest.

Walking down from a statement, loop variables range over their loops and lets take the
interval of their values; what stays symbolic is what is fixed outside the statement.
Let intervals are computed only when a use needs them, and subtrees that never mention
the name are skipped, which keeps this fast on large pipelines.
"""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower.intervals import SymInterval, fixed_before_running, interval_of
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.stmt import For, IfThenElse, LetStmt, Provide, Stmt

Box = list[SymInterval]


class Scope:
    """Variable intervals as a chain of bindings; a binding may be computed lazily."""

    __slots__ = ("memo", "name", "parent", "thunk", "value")

    def __init__(self, parent: Scope | None = None, name: str | None = None, value=None, thunk=None) -> None:
        self.parent, self.name, self.value, self.thunk = parent, name, value, thunk
        self.memo: dict[int, SymInterval] | None = None

    def interval_memo(self) -> dict[int, SymInterval]:
        """interval_of's results in this scope by node identity, shared by every expression
        read in it (the statements of one block index with the same subexpressions)."""
        if self.memo is None:
            self.memo = {}
        return self.memo

    def bind(self, name: str, value: SymInterval) -> Scope:
        return Scope(self, name, value)

    def bind_lazy(self, name: str, thunk: Callable[[], SymInterval]) -> Scope:
        return Scope(self, name, None, thunk)

    def get(self, name: str, default: SymInterval | None = None) -> SymInterval | None:
        node: Scope | None = self
        while node is not None:
            if node.name == name:
                if node.value is None:
                    node.value = node.thunk()
                    node.thunk = None
                return node.value
            node = node.parent
        return default


class Scopes:
    """The scopes of the statements below one root, shared by every box_touched call of a
    pass that passes it: a loop's or let's interval, and the intervals of the expressions
    read under it (Scope.interval_memo), do not depend on which Func a call asks about, so
    the second Func asked about a loop nest finds them computed.

    A scope is filed under (its parent scope, the statement that binds it); the statements
    given to box_touched are kept alive with it, so no identity is reused while it lives
    (statements are immutable: a pass that rewrites one builds a new object)."""

    def __init__(self) -> None:
        self.root = Scope()
        self._children: dict[tuple[int, int], Scope] = {}
        self._kept: list[Stmt] = []

    def keep(self, s: Stmt) -> None:
        self._kept.append(s)

    def child(self, parent: Scope, s: Stmt, make: Callable[[], Scope]) -> Scope:
        """The scope below statement s in parent, made by make() the first time."""
        key = (id(parent), id(s))
        hit = self._children.get(key)
        if hit is None:
            hit = self._children[key] = make()
        return hit


def union_box(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return [x.union(y) for x, y in zip(a, b, strict=True)]


def simplify_box(box: Box) -> Box:
    return [
        SymInterval(simplify(iv.lo) if iv.lo is not None else None, simplify(iv.hi) if iv.hi is not None else None)
        for iv in box
    ]


_names_cache: dict[int, tuple[Stmt, frozenset[str]]] = {}
_calls_cache: dict[int, tuple[E.Expr, dict[str, list[E.Call]]]] = {}


def clear_cache() -> None:
    _names_cache.clear()
    _calls_cache.clear()


def calls_by_name(e: E.Expr) -> dict[str, list[E.Call]]:
    """The Func and image calls in e by name, in walk order (memoized: the box of every
    Func stored around an expression is asked of it, one walk serves them all)."""
    hit = _calls_cache.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    calls: dict[str, list[E.Call]] = {}
    for node in walk(e):
        if isinstance(node, E.Call) and node.call_kind != "intrinsic":
            calls.setdefault(node.name, []).append(node)
    _calls_cache[id(e)] = (e, calls)
    return calls


def names_used(s: Stmt) -> frozenset[str]:
    """Names of the Funcs and images that statement s calls or provides (memoized)."""
    hit = _names_cache.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    names: set[str] = set()
    if isinstance(s, Provide):
        names.add(s.name)
    for c in s.children():
        if isinstance(c, Stmt):
            names |= names_used(c)
        else:
            names.update(calls_by_name(c))
    result = frozenset(names)
    _names_cache[id(s)] = (s, result)
    return result


def _narrow(cond: E.Expr, sc: Scope) -> Scope:
    """The scope inside `if (cond)`: a bound like `v < e` narrows v's interval (guards of
    GuardWithIf splits keep the region a stage writes exact)."""
    if isinstance(cond, E.And):
        return _narrow(cond.b, _narrow(cond.a, sc))
    if not isinstance(cond, (E.LT, E.LE, E.GT, E.GE)):
        return sc
    a, b = cond.a, cond.b
    for var, other, op in ((a, b, type(cond)), (b, a, _FLIP.get(type(cond)))):
        if isinstance(var, E.Variable) and var.type() == Int(32) and op is not None:
            current = sc.get(var.name)
            if current is None:
                return sc
            bound = interval_of(other, sc)
            lo, hi = current.lo, current.hi
            if op in (E.LT, E.LE) and bound.hi is not None:
                limit = bound.hi if op is E.LE else simplify(bound.hi - 1)
                hi = limit if hi is None else simplify(E.Min(hi, limit))
            elif op in (E.GT, E.GE) and bound.lo is not None:
                limit = bound.lo if op is E.GE else simplify(bound.lo + 1)
                lo = limit if lo is None else simplify(E.Max(lo, limit))
            return sc.bind(var.name, SymInterval(lo, hi))
    return sc


_FLIP = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE}


def _chosen_box(cond: E.Expr, then_box: Box | None, else_box: Box | None) -> Box | None:
    """The box of `if (cond) then else else`: the branch's that runs; where one branch
    touches nothing, the other's (a box may not be empty)."""
    if then_box is None or else_box is None:
        return then_box if else_box is None else else_box

    def pick(a: E.Expr | None, b: E.Expr | None) -> E.Expr | None:
        return None if a is None or b is None else simplify(E.Select(cond, a, b))

    return [SymInterval(pick(t.lo, e.lo), pick(t.hi, e.hi)) for t, e in zip(then_box, else_box, strict=True)]


def box_touched(
    stmt: Stmt,
    name: str,
    *,
    calls: bool = True,
    provides: bool = False,
    scopes: Scopes | None = None,
) -> Box | None:
    """The box of `name` read (calls) and/or written (provides) by stmt; None if untouched.
    A pass asking about several Funcs below the same statements passes one `scopes`."""
    result: list[Box | None] = [None]
    if scopes is None:
        scopes = Scopes()
    scopes.keep(stmt)

    def exprs_box(e: E.Expr, sc: Scope) -> None:
        calls = calls_by_name(e).get(name)
        if not calls:
            return
        memo = sc.interval_memo()  # the calls read in one scope share subtrees (the same loop variables)
        for node in calls:
            result[0] = union_box(result[0], [interval_of(a, sc, memo) for a in node.args])

    def visit(s: Stmt, sc: Scope) -> None:
        if name not in names_used(s):
            return
        if isinstance(s, For):
            if calls:
                exprs_box(s.min, sc)
                exprs_box(s.extent, sc)

            def loop_interval(s: For = s, sc: Scope = sc) -> SymInterval:
                lo = interval_of(s.min, sc).lo
                hi = interval_of(simplify(s.min + s.extent - 1), sc).hi
                return SymInterval(lo, hi)

            visit(s.body, scopes.child(sc, s, lambda: sc.bind_lazy(s.name, loop_interval)))
            return
        if isinstance(s, LetStmt):
            if calls:
                exprs_box(s.value, sc)
            inner = scopes.child(sc, s, lambda: sc.bind_lazy(s.name, lambda v=s.value, sc=sc: interval_of(v, sc)))
            visit(s.body, inner)
            return
        if isinstance(s, IfThenElse):
            if calls:
                exprs_box(s.condition, sc)
            if s.else_case is not None and fixed_before_running(s.condition):
                # A specialization: only one branch runs, chosen before any loop, so the
                # box is the chosen branch's (an input need not cover a branch not taken).
                outside, result[0] = result[0], None
                visit(s.then_case, sc)
                then_box, result[0] = result[0], None
                visit(s.else_case, sc)
                chosen = _chosen_box(s.condition, then_box, result[0])
                result[0] = outside if chosen is None else union_box(outside, chosen)
                return
            visit(s.then_case, scopes.child(sc, s, lambda: _narrow(s.condition, sc)))
            if s.else_case is not None:
                visit(s.else_case, sc)
            return
        if isinstance(s, Provide) and provides and s.name == name:
            result[0] = union_box(result[0], [interval_of(a, sc) for a in s.args])
        for c in s.children():
            if isinstance(c, Stmt):
                visit(c, sc)
            elif calls:
                exprs_box(c, sc)

    try:
        visit(stmt, scopes.root)
    finally:
        visit = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)
    return simplify_box(result[0]) if result[0] is not None else None
