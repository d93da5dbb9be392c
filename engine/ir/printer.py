"""Text of expressions in the notation Halide users know (`(x + 1)`, `uint8(x)`, `f(x, y)`)."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E


def const_to_string(c: E.Const) -> str:
    t = c.type()
    if t.is_bool():
        return "true" if c.value else "false"
    if t.is_float():
        text = f"{c.value:f}"
        return text + "f" if t.bits == 32 else f"(float64){text}"
    if t.is_int() and t.bits == 32:
        return str(c.value)
    return f"({t}){c.value}"


def expr_to_string(e: E.Expr, names: dict[tuple, str] | None = None) -> str:
    """e as text; `names` maps subexpressions (by structural key) to the names that
    stand for them (the statement printer's shared lets)."""
    if names:
        return _with_names(e, names)
    return _to_string(e)


def _with_names(e: E.Expr, names: dict[tuple, str]) -> str:
    def go(node: E.Expr) -> str:
        if node.children():
            name = names.get(node.key())
            if name is not None:
                return name
        return _format(node, go)

    return go(e)


def _to_string(e: E.Expr) -> str:
    return _format(e, _to_string)


def _format(e: E.Expr, expr_to_string) -> str:
    if isinstance(e, E.Const):
        return const_to_string(e)
    if isinstance(e, E.Variable):
        return e.name
    if isinstance(e, E.Cast):
        return f"{e.type()}({expr_to_string(e.value)})"
    if isinstance(e, (E.Min, E.Max)):
        return f"{e.symbol}({expr_to_string(e.a)}, {expr_to_string(e.b)})"
    if isinstance(e, E.BinaryOp):
        return f"({expr_to_string(e.a)} {e.symbol} {expr_to_string(e.b)})"
    if isinstance(e, E.Not):
        return f"!{expr_to_string(e.a)}"
    if isinstance(e, E.Select):
        parts = ", ".join(expr_to_string(c) for c in e.children())
        return f"select({parts})"
    if isinstance(e, E.Let):
        return f"(let {e.name} = {expr_to_string(e.value)} in {expr_to_string(e.body)})"
    if isinstance(e, E.Call):
        args = ", ".join(expr_to_string(a) for a in e.args)
        element = f"[{e.value_index}]" if e.call_kind == "func" and _is_tuple_func(e.target) else ""
        return f"{e.name}({args}){element}"
    printer = getattr(e, "to_string", None)
    if printer is not None:
        return printer(expr_to_string)
    return f"<{type(e).__name__}>"


def _is_tuple_func(target: object) -> bool:
    outputs = getattr(target, "outputs", None)
    return callable(outputs) and outputs() > 1
