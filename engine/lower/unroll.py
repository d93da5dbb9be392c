"""Pass 7: unroll loops scheduled with unroll() into copies of their body."""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.loop_names import describe_loop
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.stmt import For, ForType, LetStmt, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator

MAX_UNROLL = 256


def unroll_loops(stmt: Stmt) -> Stmt:
    return _Unroll().mutate(stmt)


class _Unroll(StmtMutator):
    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if s.for_type != ForType.UNROLLED:
            return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)
        extent = as_const_int(s.extent)
        if extent is None:
            raise ScheduleError(
                f"cannot unroll {describe_loop(s.name)}: its extent (the size of the region "
                "computed) is not a constant; "
                "use unroll(var, factor) to split it by a constant first"
            )
        if extent > MAX_UNROLL:
            raise ScheduleError(
                f"refusing to unroll {describe_loop(s.name)} {extent} times (at most {MAX_UNROLL}); use "
                f"unroll(var, factor) with a factor of at most {MAX_UNROLL}"
            )
        copies = [LetStmt(s.name, simplify(s.min + E.Const(Int(32), i)), body) for i in range(extent)]
        return make_block(copies)
