"""Which region of a Func or image a statement touches: interval analysis over a loop nest.

Walking down from a statement, loop variables range over their loops and lets take the
interval of their values; what stays symbolic is what is fixed outside the statement.
Let intervals are computed only when a use needs them, and subtrees that never mention
the name are skipped, which keeps this fast on large pipelines.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.ir import expr as E
from engine.ir.visit import walk
from engine.lower.intervals import SymInterval, interval_of
from engine.lower.simplify import simplify
from engine.stmt import For, LetStmt, Provide, Stmt

Box = list[SymInterval]


class Scope:
    """Variable intervals as a chain of bindings; a binding may be computed lazily."""

    __slots__ = ("name", "parent", "thunk", "value")

    def __init__(self, parent: Scope | None = None, name: str | None = None, value=None, thunk=None) -> None:
        self.parent, self.name, self.value, self.thunk = parent, name, value, thunk

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


def clear_cache() -> None:
    _names_cache.clear()


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
            for node in walk(c):
                if isinstance(node, E.Call) and node.call_kind != "intrinsic":
                    names.add(node.name)
    result = frozenset(names)
    _names_cache[id(s)] = (s, result)
    return result


def box_touched(
    stmt: Stmt,
    name: str,
    *,
    calls: bool = True,
    provides: bool = False,
) -> Box | None:
    """The box of `name` read (calls) and/or written (provides) by stmt; None if untouched."""
    result: list[Box | None] = [None]

    def exprs_box(e: E.Expr, sc: Scope) -> None:
        for node in walk(e):
            if isinstance(node, E.Call) and node.call_kind != "intrinsic" and node.name == name:
                result[0] = union_box(result[0], [interval_of(a, sc) for a in node.args])

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

            visit(s.body, sc.bind_lazy(s.name, loop_interval))
            return
        if isinstance(s, LetStmt):
            if calls:
                exprs_box(s.value, sc)
            visit(s.body, sc.bind_lazy(s.name, lambda v=s.value, sc=sc: interval_of(v, sc)))
            return
        if isinstance(s, Provide) and provides and s.name == name:
            result[0] = union_box(result[0], [interval_of(a, sc) for a in s.args])
        for c in s.children():
            if isinstance(c, Stmt):
                visit(c, sc)
            elif calls:
                exprs_box(c, sc)

    visit(stmt, Scope())
    return simplify_box(result[0]) if result[0] is not None else None
