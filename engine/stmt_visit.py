"""Generic traversal of statements: rebuild a tree with functions applied to its parts."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.stmt import Load, Stmt


def walk_stmt(s: Stmt) -> Iterator[Stmt]:
    """Every statement in s, parents first."""
    stack = [s]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed([c for c in node.children() if isinstance(c, Stmt)]))


def stmt_exprs(s: Stmt) -> Iterator[E.Expr]:
    """Every top-level expression held by statements in s."""
    for node in walk_stmt(s):
        for c in node.children():
            if isinstance(c, E.Expr):
                yield c


def reads_memory(e: E.Expr) -> bool:
    """Whether e loads from a buffer or calls a function: two evaluations of it may differ
    (a store or a call may come between them), so it cannot be moved or merged freely."""
    return any(isinstance(n, (Load, E.Call)) for n in walk(e))


_UNKNOWN = object()
_visit_methods: dict[type, dict[type, Callable | None]] = {}


class StmtMutator:
    """Rebuilds statements bottom-up; override `visit_<Class>` or `mutate_expr`.

    A `visit_X(self, node)` method returns the replacement for a node of class X; the
    default rebuilds the node from its mutated children.
    """

    def mutate_expr(self, e: E.Expr) -> E.Expr:
        return e

    def mutate(self, s: Stmt | None) -> Stmt | None:
        if s is None:
            return None
        # The method for each statement class is looked up once per mutator class (a
        # getattr with a formatted name per node was a visible part of every pass).
        methods = _visit_methods.get(type(self))
        if methods is None:
            methods = _visit_methods[type(self)] = {}
        cls = type(s)
        visit = methods.get(cls, _UNKNOWN)
        if visit is _UNKNOWN:
            visit = methods[cls] = getattr(type(self), f"visit_{cls.__name__}", None)
        if visit is not None:
            return visit(self, s)
        return self.default(s)

    def default(self, s: Stmt) -> Stmt:
        # A plain loop with a changed flag: every pass rebuilds through here, and a
        # generator plus a zip of old and new children per statement was a visible cost.
        old = s.children()
        new = []
        changed = False
        mutate, mutate_expr = self.mutate, self.mutate_expr
        for c in old:
            m = mutate(c) if isinstance(c, Stmt) else mutate_expr(c)
            if m is not c:
                changed = True
            new.append(m)
        return s.with_children(tuple(new)) if changed else s


def map_exprs(s: Stmt, fn: Callable[[E.Expr], E.Expr]) -> Stmt:
    """Apply fn to every top-level expression of every statement in s."""

    class _Map(StmtMutator):
        def mutate_expr(self, e: E.Expr) -> E.Expr:
            return fn(e)

    return _Map().mutate(s)
