"""Which region of a Func or image a statement touches: interval analysis over a loop nest.

Walking down from a statement, loop variables range over their loops and lets take the
interval of their values; what stays symbolic is what is fixed outside the statement.
"""

from __future__ import annotations

from engine.ir import expr as E
from engine.ir.visit import walk
from engine.lower.intervals import SymInterval, interval_of
from engine.lower.simplify import simplify
from engine.stmt import For, LetStmt, Provide, Stmt

Box = list[SymInterval]


def union_box(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return [x.union(y) for x, y in zip(a, b, strict=True)]


def simplify_box(box: Box) -> Box:
    return [
        SymInterval(simplify(iv.lo) if iv.lo is not None else None, simplify(iv.hi) if iv.hi is not None else None)
        for iv in box
    ]


def box_touched(
    stmt: Stmt,
    name: str,
    *,
    calls: bool = True,
    provides: bool = False,
    scope: dict[str, SymInterval] | None = None,
) -> Box | None:
    """The box of `name` read (calls) and/or written (provides) by stmt; None if untouched."""
    result: list[Box | None] = [None]

    def exprs_box(e: E.Expr, sc: dict[str, SymInterval]) -> None:
        for node in walk(e):
            if isinstance(node, E.Call) and node.call_kind != "intrinsic" and node.name == name:
                result[0] = union_box(result[0], [interval_of(a, sc) for a in node.args])

    def visit(s: Stmt, sc: dict[str, SymInterval]) -> None:
        if isinstance(s, For):
            lo = interval_of(s.min, sc).lo
            hi = interval_of(simplify(s.min + s.extent - 1), sc).hi
            if calls:
                exprs_box(s.min, sc)
                exprs_box(s.extent, sc)
            inner = dict(sc)
            inner[s.name] = SymInterval(lo, hi)
            visit(s.body, inner)
            return
        if isinstance(s, LetStmt):
            if calls:
                exprs_box(s.value, sc)
            inner = dict(sc)
            inner[s.name] = interval_of(s.value, sc)
            visit(s.body, inner)
            return
        if isinstance(s, Provide) and provides and s.name == name:
            result[0] = union_box(result[0], [interval_of(a, sc) for a in s.args])
        for c in s.children():
            if isinstance(c, Stmt):
                visit(c, sc)
            elif calls:
                exprs_box(c, sc)

    visit(stmt, dict(scope or {}))
    return simplify_box(result[0]) if result[0] is not None else None
