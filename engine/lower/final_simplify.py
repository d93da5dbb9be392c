"""Last pass: simplify every expression, substitute trivial lets, and drop statements that
cannot matter (asserts that always hold, loops that never run)."""

from __future__ import annotations

from engine.ir import expr as E
from engine.ir.visit import substitute
from engine.lower.simplify import simplify
from engine.stmt import AssertStmt, Broadcast, For, IfThenElse, LetStmt, ProducerConsumer, Ramp, Stmt, make_block, no_op
from engine.stmt_visit import StmtMutator, map_exprs


def simplify_stmt(stmt: Stmt) -> Stmt:
    return _Simplify().mutate(stmt)


class _Simplify(StmtMutator):
    def mutate_expr(self, e: E.Expr) -> E.Expr:
        return simplify(e)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        value = simplify(s.value)
        if isinstance(value, (Ramp, Broadcast)):
            # Keep the scalar part in a let and the vector shape visible at every use.
            base_name = f"{s.name}.base"
            scalar = value.base if isinstance(value, Ramp) else value.value
            base = E.Variable(base_name, scalar.type())
            shaped = Ramp(base, value.stride, value.lanes) if isinstance(value, Ramp) else Broadcast(base, value.lanes)
            body = map_exprs(s.body, lambda e: substitute(e, {s.name: shaped}))
            return self.mutate(LetStmt(base_name, scalar, body))
        if isinstance(value, (E.Const, E.Variable)) and not value.type().is_vector():
            body = map_exprs(s.body, lambda e: substitute(e, {s.name: value}))
            return self.mutate(body)
        return LetStmt(s.name, value, self.mutate(s.body))

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:  # noqa: N802
        cond = simplify(s.condition)
        if isinstance(cond, E.Const) and cond.value:
            return no_op()
        return AssertStmt(cond, s.message, tuple(simplify(a) for a in s.args))

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        extent = simplify(s.extent)
        if isinstance(extent, E.Const) and extent.value <= 0:
            return no_op()
        body = self.mutate(s.body)
        if isinstance(extent, E.Const) and extent.value == 1:
            return self.mutate(LetStmt(s.name, simplify(s.min), body))
        return For(s.name, simplify(s.min), extent, s.for_type, body)

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
        cond = simplify(s.condition)
        if isinstance(cond, E.Const):
            chosen = s.then_case if cond.value else s.else_case
            return self.mutate(chosen) if chosen is not None else no_op()
        return IfThenElse(cond, self.mutate(s.then_case), self.mutate(s.else_case))

    def visit_ProducerConsumer(self, s: ProducerConsumer) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if _is_no_op(body) and not s.is_producer:
            return no_op()
        return ProducerConsumer(s.name, s.is_producer, body)

    def visit_Block(self, s) -> Stmt:  # noqa: N802
        kept = [self.mutate(c) for c in s.stmts]
        return make_block([c for c in kept if not _is_no_op(c)]) if kept else s


def _is_no_op(s: Stmt) -> bool:
    from engine.stmt import Evaluate

    return isinstance(s, Evaluate) and isinstance(s.value, E.Const)
