"""Region lets computed once, by name: a helper of bounds inference (not a pass of its own).

Bounds inference gives each Func `let f.s0.x.min = ...` at its compute site and derives a
producer's region from the loops of its consumers. When a consumer's lets sat inside the
producer's consume block, interval analysis had to substitute their values into the
producer's bounds, so along a chain of root stages every let carried the whole chain of
its consumers (quadratic size, and cubic time in the passes that analyse it). As in
Halide, lets that depend only on the pipeline's parameters and on other such lets ("root
lets") are instead moved out in front of the producer's own lets, where the producer's
bounds can name them. Constant and single-variable lets stay where they are.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import find_variables
from pixelweave.engine.stmt import LetStmt, Stmt
from pixelweave.engine.stmt_visit import StmtMutator


def depends_only_on_root(value: E.Expr, root_lets: set[str]) -> bool:
    """True when every variable of value is a parameter or a root let."""
    return all(v.kind == "param" or v.name in root_lets for v in find_variables(value))


def note_root_lets(lets: list[tuple[str, E.Expr]], root_lets: set[str]) -> None:
    """Record a Func's region lets as root lets when they all are; a Func's lets move
    together or not at all (sliding window reads them as one chain)."""
    if lets and all(depends_only_on_root(value, root_lets) for _, value in lets):
        root_lets.update(name for name, _ in lets)


def hoist_root_lets(stmt: Stmt, consume: Stmt, root_lets: set[str]) -> tuple[Stmt, Stmt, list[tuple[str, E.Expr]]]:
    """Take the root lets out of `consume` (a block of stmt): returns the new stmt, the new
    consume block and the lets removed, outermost first (so each is defined before use)."""
    if not root_lets:
        return stmt, consume, []
    remover = _RemoveRootLets(root_lets)
    new_consume = remover.mutate(consume)
    if not remover.removed:
        return stmt, consume, []
    return _Replace(consume, new_consume).mutate(stmt), new_consume, remover.removed


class _RemoveRootLets(StmtMutator):
    def __init__(self, root_lets: set[str]) -> None:
        self.root_lets = root_lets
        self.removed: list[tuple[str, E.Expr]] = []

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        # A constant or a plain variable stays: interval analysis and final simplification
        # see through it, and a realize whose extent it makes constant stays on the stack.
        if s.name in self.root_lets and not isinstance(s.value, (E.Const, E.Variable)):
            self.removed.append((s.name, s.value))
            return self.mutate(s.body)
        return self.default(s)


class _Replace(StmtMutator):
    """stmt with one node (found by identity) replaced."""

    def __init__(self, old: Stmt, new: Stmt) -> None:
        self.old, self.new = old, new

    def mutate(self, s: Stmt | None) -> Stmt | None:
        if s is self.old:
            return self.new
        return super().mutate(s)
