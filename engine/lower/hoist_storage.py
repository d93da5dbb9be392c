"""Pass: hoisted storage (Halide's Func.hoist_storage). The allocation of a Func moves from
its store level out to the loop the schedule names (or outside all loops), so it is made
once per iteration of that loop instead of once per iteration of every loop in between.

Only the allocation moves: the storage's mins, extents and strides are still computed at
the store level for the region each iteration needs, so every value is computed and read
exactly as before. The hoisted allocation is sized for the largest region: the size at the
store level with the lets between substituted and each loop between bounded over its
range, innermost first (as Halide's StorageFlattening does). A size that cannot be bounded
from what is known at the hoist level is a ScheduleError.

Runs right after storage flattening, on Allocate statements; schedule_functions.py chose the
loop (ctx.hoisted) and refused levels inside the store level or outside a parallel loop.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Type
from pixelweave.engine.ir.visit import find_variables, substitute
from pixelweave.engine.lower.allocation_bounds import storage_size_check, widen
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.flatten import storage_placement, value_buffer
from pixelweave.engine.lower.intervals import SymInterval, interval_of
from pixelweave.engine.lower.loop_names import describe_loop
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.stmt import Allocate, AssertStmt, Block, For, LetStmt, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator


def hoist_storage(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    for name, loop in ctx.hoisted.items():
        info = ctx.by_name(name)
        tuple_types = {name: info.types} if len(info.types) > 1 else {}
        for i, t in enumerate(info.types):
            hoist = _Hoist(info, value_buffer(name, i, tuple_types), t, loop)
            stmt = hoist.into_root(stmt) if loop is None else hoist.mutate(stmt)
    return stmt


class _Hoist(StmtMutator):
    """Move the allocations of one buffer to the top of the body of `loop` (None: the root)."""

    def __init__(self, info: FuncInfo, buffer: str, t: Type, loop: str | None) -> None:
        self.info, self.buffer, self.type, self.loop = info, buffer, t, loop

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        if s.name != self.loop:
            return self.default(s)
        return For(s.name, s.min, s.extent, s.for_type, self.hoisted(s.body))

    def into_root(self, s: Stmt) -> Stmt:
        """Outside all loops, after the pipeline's checks and the lets that begin it."""
        if isinstance(s, LetStmt):
            return LetStmt(s.name, s.value, self.into_root(s.body))
        if isinstance(s, Block) and s.stmts and all(isinstance(c, AssertStmt) for c in s.stmts[:-1]):
            return make_block([*s.stmts[:-1], self.into_root(s.stmts[-1])])
        return self.hoisted(s)

    def hoisted(self, body: Stmt) -> Stmt:
        collect = _TakeAllocations(self)
        body = collect.mutate(body)
        if not collect.sizes:
            return body
        size = collect.sizes[0]
        for other in collect.sizes[1:]:
            size = simplify(E.Max(size, other))
        constant = as_const_int(size)
        size_check = storage_size_check(self.buffer, self.type, [simplify(widen(size))])
        on_stack, stack_check = storage_placement(
            self.info.func.name(), self.info.schedule.memory_type, self.type, constant, size
        )
        return make_block([size_check, stack_check, Allocate(self.buffer, self.type, size, on_stack, body)])

    def where(self) -> str:
        return "the root" if self.loop is None else describe_loop(self.loop)

    def directive(self) -> str:
        level = self.info.schedule.hoist_level
        if level.is_root():
            return "hoist_storage_root()"
        return f"hoist_storage(`{level.func.name()}`, {level.var})"


class _TakeAllocations(StmtMutator):
    """Remove the allocations of the buffer below a hoist level, keeping for each an upper
    bound of its size in terms of what is known at that level."""

    def __init__(self, hoist: _Hoist) -> None:
        self.hoist = hoist
        self.bindings: list[tuple[str, E.Expr, E.Expr | None]] = []  # (name, let value | loop min, loop extent)
        self.sizes: list[E.Expr] = []

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        self.bindings.append((s.name, s.value, None))
        body = self.mutate(s.body)
        self.bindings.pop()
        return s if body is s.body else LetStmt(s.name, s.value, body)

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        self.bindings.append((s.name, s.min, s.extent))
        body = self.mutate(s.body)
        self.bindings.pop()
        return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)

    def visit_Allocate(self, s: Allocate) -> Stmt:  # noqa: N802
        if s.name != self.hoist.buffer:
            return self.default(s)
        self.sizes.append(self.bound(s.size))
        return self.mutate(s.body)

    def bound(self, size: E.Expr) -> E.Expr:
        """The largest value of `size` over the lets and loops between the hoist level and it."""
        e = size
        for name, value, extent in reversed(self.bindings):
            if extent is None:
                e = simplify(substitute(e, {name: value}))
                continue
            hi = interval_of(e, {name: SymInterval(value, simplify(value + extent - 1))}).hi
            if hi is None:
                raise self.unbounded(name)
            e = simplify(hi)
        inner = {name for name, _, _ in self.bindings}
        late = [v.name for v in find_variables(e) if v.name in inner]
        if late:
            raise self.unbounded(late[0])
        return e

    def unbounded(self, name: str) -> ScheduleError:
        hoist = self.hoist
        what = describe_loop(name) if any(n == name and x is not None for n, _, x in self.bindings) else name
        return ScheduleError(
            f"{hoist.directive()} of Func `{hoist.info.func.name()}`: the size of its storage varies with {what} "
            f"and cannot be bounded from what is known at {hoist.where()}, where the allocation would be made "
            "(Halide also refuses a size it cannot bound); give the Func's dimensions a bound() or bound_extent(), "
            "or hoist it to an inner loop"
        )
