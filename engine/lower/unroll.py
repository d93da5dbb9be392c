"""Pass 7: unroll loops scheduled with unroll() into copies of their body."""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import substitute, walk
from pixelweave.engine.lower.loop_names import describe_loop
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.stmt import For, ForType, LetStmt, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator

MAX_UNROLL = 256
# Nested unrolled loops multiply: 16 x 16 x 2 copies of a small gather took 85 s to
# compile, 16 x 16 x 16 many minutes. Beyond this many copies of one body the schedule is
# refused at once (Halide's apps unroll a body into at most a few dozen copies).
MAX_UNROLLED_COPIES = 256


def unroll_loops(stmt: Stmt) -> Stmt:
    return _Unroll().mutate(stmt)


class _Unroll(StmtMutator):
    def __init__(self) -> None:
        self.lets: dict[str, E.Expr] = {}  # the values of the lets around the statement visited
        self.copies = 1  # the most copies of one body the unrolled loops visited so far make

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        outer = self.lets.get(s.name)
        self.lets[s.name] = s.value
        body = self.mutate(s.body)
        if outer is None:
            del self.lets[s.name]
        else:
            self.lets[s.name] = outer
        return s if body is s.body else LetStmt(s.name, s.value, body)

    def _constant_extent(self, extent: E.Expr) -> int | None:
        """The extent as a constant, looking through the lets around the loop: a region's
        bounds are lets (min(...) - 1, min(...) + 2) whose difference is constant."""
        value = as_const_int(extent)
        for _ in range(8):
            if value is not None:
                return value
            names = {n.name for n in walk(extent) if isinstance(n, E.Variable)} & self.lets.keys()
            if not names:
                return None
            extent = simplify(substitute(extent, {n: self.lets[n] for n in names}))
            value = as_const_int(extent)
        return value

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        hidden = self.lets.pop(s.name, None)  # the loop's variable is not an outer let of its name
        before, self.copies = self.copies, 1
        body = self.mutate(s.body)
        inner, self.copies = self.copies, max(before, self.copies)
        if hidden is not None:
            self.lets[s.name] = hidden
        if s.for_type != ForType.UNROLLED:
            return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)
        extent = self._constant_extent(s.extent)
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
        if extent * inner > MAX_UNROLLED_COPIES:
            raise ScheduleError(
                f"refusing to unroll {describe_loop(s.name)} {extent} times around {inner} copies that the "
                f"unrolled loops inside it make: {extent * inner} copies of one body (at most "
                f"{MAX_UNROLLED_COPIES}); unroll fewer of the nested loops, or by smaller factors"
            )
        self.copies = max(before, extent * inner)
        copies = [LetStmt(s.name, simplify(s.min + E.Const(Int(32), i)), body) for i in range(extent)]
        return make_block(copies)
