"""Pass 1: inline every Func scheduled inline into its consumers, and name calls uniquely.

After this pass, the definitions held by the lowering context call only Funcs that get
storage of their own, by their unique names.
"""

from __future__ import annotations

from dataclasses import replace

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.lerp import lower_lerp
from pixelweave.engine.ir.visit import mutate, substitute
from pixelweave.engine.lower.context import LoweringContext


def inline_functions(ctx: LoweringContext) -> None:
    """Rewrite each stage's expressions in place (in realization order, so callees first),
    with user objects (Param, Var, RVar) replaced by plain variables and lerp expanded."""
    inlined_bodies: dict[int, tuple[list[str], tuple[E.Expr, ...]]] = {}
    names = {id(info.func): info.name for info in ctx.funcs}

    def rewrite(e: E.Expr) -> E.Expr:
        def fn(node: E.Expr) -> E.Expr | None:
            if isinstance(node, E.Variable) and type(node) is not E.Variable:
                # Param, Var and RVar objects become plain variables of lowered code.
                return E.Variable(node.name, node.type(), node.kind)
            if isinstance(node, E.Call) and node.call_kind == "intrinsic" and node.name == "lerp":
                # Backends see lerp as the basic operations of Halide's rounding rules.
                return rewrite(lower_lerp(*node.args))
            if isinstance(node, E.Call) and node.call_kind == "func":
                args = tuple(rewrite(a) for a in node.args)
                body = inlined_bodies.get(id(node.target))
                if body is not None:
                    params, values = body
                    return substitute(values[node.value_index], dict(zip(params, args, strict=True)))
                return E.Call(node.type(), names[id(node.target)], args, "func", node.target, node.value_index)
            return None

        return mutate(e, fn)

    for info in ctx.funcs:
        for stage in info.stages:
            d = stage.definition
            stage.definition = replace(
                d,
                value=rewrite(d.value),
                extra_values=tuple(rewrite(v) for v in d.extra_values),
                args=tuple(rewrite(a) for a in d.args),
                predicate=rewrite(d.predicate) if d.predicate is not None else None,
            )
        if info.is_inlined():
            inlined_bodies[id(info.func)] = (info.pure_vars, info.stages[0].definition.all_values())
    ctx.funcs = [info for info in ctx.funcs if not info.is_inlined()]
    rewrite = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)


def plain(e: E.Expr) -> E.Expr:
    """e with Param, Var and RVar objects replaced by plain variables of lowered code."""

    def fn(node: E.Expr) -> E.Expr | None:
        if isinstance(node, E.Variable) and type(node) is not E.Variable:
            return E.Variable(node.name, node.type(), node.kind)
        return None

    return mutate(e, fn)
