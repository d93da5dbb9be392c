"""Pass 6: tracing. Loads and stores of Funcs (and images) with `trace_loads` /
`trace_stores`, and realizations of Funcs with `trace_realizations`, report events to
the runtime (engine/tracing.py). Runs before flattening, while stores and loads still
name their Func and coordinates."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.debug_calls import TRACE_PREFIX
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import mutate
from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.stmt import Evaluate, Provide, Realize, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator
from pixelweave.engine.tracing import trace_site


def add_tracing(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    traced: dict[str, set[str]] = {}
    for f in ctx.pipeline.funcs:
        if f.traced():
            traced[f.name()] = set(f.traced())
    for image in ctx.images:
        if image.traces_loads():
            traced[image.name()] = {"loads"}
    if not traced:
        return stmt
    return _Trace(traced).mutate(stmt)


def _event_call(event: str, name: str, value: E.Expr, coords: tuple[E.Expr, ...], value_index: int = 0) -> E.Call:
    number = trace_site(event, name, value.type(), len(coords), value_index)
    return E.Call(value.type(), f"{TRACE_PREFIX}{number}", (value, *coords), "intrinsic")


class _Trace(StmtMutator):
    def __init__(self, traced: dict[str, set[str]]) -> None:
        self.traced = traced

    def mutate_expr(self, e: E.Expr) -> E.Expr:
        def fn(node: E.Expr) -> E.Expr | None:
            traced = isinstance(node, E.Call) and node.call_kind in ("func", "image")
            if traced and "loads" in self.traced.get(node.name, ()):
                args = tuple(self.mutate_expr(a) for a in node.args)
                call = E.Call(node.type(), node.name, args, node.call_kind, node.target, node.value_index)
                return _event_call("load", node.name, call, args, node.value_index)
            return None

        return mutate(e, fn)

    def visit_Provide(self, s: Provide) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        args = tuple(self.mutate_expr(a) for a in s.args)
        if "stores" in self.traced.get(s.name, ()):
            value = _event_call("store", s.name, value, args, s.value_index)
        return Provide(s.name, value, args, s.value_index, s.atomic)

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if "realizations" in self.traced.get(s.name, ()):
            bounds = tuple(e for b in s.bounds for e in b)
            zero = E.Const(Int(32), 0)
            body = make_block(
                [
                    Evaluate(_event_call("begin_realization", s.name, zero, bounds)),
                    body,
                    Evaluate(_event_call("end_realization", s.name, zero, bounds)),
                ]
            )
        return Realize(s.name, s.type, s.bounds, body, s.folds)
