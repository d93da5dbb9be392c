"""Pass: give every `realize f` the bounds of everything f's stages write or read below
it, for every iteration of the loops between its store level and its compute level.

It runs after sliding window, whose narrower regions it measures, and before storage
folding, which may then shrink a dimension to a circular buffer.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.lower.region import box_touched
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.reference import dim_label
from pixelweave.engine.stmt import Realize, Stmt
from pixelweave.engine.stmt_visit import StmtMutator


def allocation_bounds(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    for info in ctx.funcs:
        if not info.is_output:
            stmt = _SizeRealize(info.name).mutate(stmt)
    return stmt


class _SizeRealize(StmtMutator):
    """Give `realize f` the bounds of everything f's stages write below it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if s.name != self.name:
            return s if body is s.body else Realize(s.name, s.type, s.bounds, body, s.folds)
        box = box_touched(body, self.name, calls=True, provides=True)
        if box is None:
            raise ScheduleError(f"`{self.name}` is stored but never computed")
        bounds = []
        for i, iv in enumerate(box):
            if not iv.is_bounded():
                raise ScheduleError(
                    f"cannot bound the storage of `{self.name}` in {dim_label(i)}: a coordinate it is computed or "
                    "read at has no bounds; clamp it, give the Func a bound(), or store it where it is computed"
                )
            bounds.append((iv.lo, simplify(iv.hi - iv.lo + 1)))
        return Realize(s.name, s.type, tuple(bounds), body, s.folds)
