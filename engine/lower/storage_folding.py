"""Pass: storage folding. A Func computed by sliding window along a serial loop only needs
the last few rows (or columns) it computed: its storage in that dimension becomes a
circular buffer of a power-of-two size at least as large as what one iteration touches.
"""

from __future__ import annotations

from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.lower.region import Scopes, box_touched
from pixelweave.engine.lower.simplify import as_const_int, constant_difference
from pixelweave.engine.stmt import For, Realize, Stmt
from pixelweave.engine.stmt_visit import StmtMutator, walk_stmt


def storage_folding(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    # One Scopes for every Func: the intervals of a loop body's loops, lets and expressions
    # do not depend on the Func asked about, and the folds keep the loop bodies they pass.
    scopes = Scopes()
    for name, info in getattr(ctx, "sliding", {}).items():
        stmt = _Fold(name, info.loop, info.dim, scopes).mutate(stmt)
    return stmt


class _Fold(StmtMutator):
    def __init__(self, name: str, loop: str, dim: int, scopes: Scopes) -> None:
        self.name, self.loop, self.dim = name, loop, dim
        self.scopes = scopes

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if s.name != self.name or self.dim in s.folds:  # (a fold_storage() of this dimension wins)
            return s if body is s.body else Realize(s.name, s.type, s.bounds, body, s.folds)
        loop = next((n for n in walk_stmt(body) if isinstance(n, For) and n.name == self.loop), None)
        if loop is None:
            return Realize(s.name, s.type, s.bounds, body, s.folds)
        box = box_touched(loop.body, self.name, calls=True, provides=True, scopes=self.scopes)
        if box is None:
            return Realize(s.name, s.type, s.bounds, body, s.folds)
        iv = box[self.dim]
        span = constant_difference(iv.hi, iv.lo) if iv.is_bounded() else None
        if span is None:
            return Realize(s.name, s.type, s.bounds, body, s.folds)
        factor = 1
        while factor < span + 1:
            factor *= 2
        extent = as_const_int(s.bounds[self.dim][1])
        if extent is not None and extent <= factor:
            return Realize(s.name, s.type, s.bounds, body, s.folds)
        return Realize(s.name, s.type, s.bounds, body, {**s.folds, self.dim: factor})
