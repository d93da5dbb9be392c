"""Inline reductions (Halide's sum, product, minimum, maximum, argmin, argmax): an
anonymous Func over the free Vars of the expression, reduced over its RDom, called in place."""

from __future__ import annotations

from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir import ops
from pixelweave.engine.ir.coerce import to_expr
from pixelweave.engine.ir.tuple import Tuple
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.ir.var import RDom, Var
from pixelweave.engine.ir.visit import walk


def _arguments(what: str, args: tuple[Any, ...], name: str | None) -> tuple[RDom | None, E.Expr, str]:
    """(rdom, expression, name) from Halide's two forms: f(e, name) and f(rdom, e, name)."""
    if args and isinstance(args[0], RDom):
        if len(args) not in (2, 3):
            raise CompileError(f"{what} takes (rdom, expression) or (expression), with an optional name")
        rdom, e = args[0], args[1]
        name = args[2] if len(args) == 3 else name
    else:
        if len(args) not in (1, 2):
            raise CompileError(f"{what} takes (rdom, expression) or (expression), with an optional name")
        rdom, e = None, args[0]
        name = args[1] if len(args) == 2 else name
    if not isinstance(name, str) or not name:
        raise CompileError(f"the name of a {what} must be a non-empty string, got {name!r}")
    return rdom, to_expr(e), name


def _free_vars_and_rdom(what: str, e: E.Expr, rdom: RDom | None) -> tuple[list[Var], RDom]:
    """The pure Vars e uses (in order of first use) and the RDom it reduces over."""
    free: dict[str, Var] = {}
    found: RDom | None = rdom
    for node in walk(e):
        if isinstance(node, E.Variable) and node.kind == "var":
            free.setdefault(node.name, Var(node.name))
        elif isinstance(node, E.Variable) and node.kind == "rvar":
            if found is None:
                found = node.rdom
            elif node.rdom is not found:
                raise CompileError(
                    f"the expression passed to {what} uses {node.name} of reduction domain {node.rdom.name}, "
                    f"which is not the reduction domain {found.name} it reduces over"
                )
    if found is None:
        raise CompileError(f"Expression passed to {what} must reference a reduction domain: {e}")
    return list(free.values()), found


def _lowest(t: Type) -> E.Expr:
    return E.Const(t, -float("inf")) if t.is_float() else E.Const(t, t.min())


def _highest(t: Type) -> E.Expr:
    return E.Const(t, float("inf")) if t.is_float() else E.Const(t, t.max())


def _fold(what: str, args: tuple, name: str, initial, combine) -> E.Expr:
    from pixelweave.engine.ir.func import Func

    rdom, e, name = _arguments(what, args, name)
    free, rdom = _free_vars_and_rdom(what, e, rdom)
    f = Func(name)
    t = e.type()
    f[tuple(free)] = initial(t)
    f[tuple(free)] = combine(f[tuple(free)], e)
    return f[tuple(free)]


def sum(*args: Any, name: str = "sum") -> E.Expr:  # noqa: A001 - Halide's name
    """The sum of e over its RDom, in e's type (it wraps as e's type does)."""
    return _fold("sum", args, name, lambda t: E.Const(t, 0), ops.add)


def product(*args: Any, name: str = "product") -> E.Expr:
    """The product of e over its RDom, in e's type."""
    return _fold("product", args, name, lambda t: E.Const(t, 1), ops.mul)


def maximum(*args: Any, name: str = "maximum") -> E.Expr:
    """The largest value of e over its RDom (the lowest value of its type if the RDom is empty)."""
    return _fold("maximum", args, name, _lowest, ops.max)


def minimum(*args: Any, name: str = "minimum") -> E.Expr:
    """The smallest value of e over its RDom (the highest value of its type if the RDom is empty)."""
    return _fold("minimum", args, name, _highest, ops.min)


def _arg_extreme(what: str, args: tuple, name: str, initial, better) -> Tuple:
    from pixelweave.engine.ir.func import Func

    rdom, e, name = _arguments(what, args, name)
    free, rdom = _free_vars_and_rdom(what, e, rdom)
    f = Func(name)
    t = e.type()
    n = len(rdom.vars)
    f[tuple(free)] = Tuple([*(E.Const(Int(32), 0) for _ in range(n)), initial(t)])
    current = f[tuple(free)]
    update = ops.select(better(e, current[n]), Tuple([*rdom.vars, e]), current)
    f[tuple(free)] = update
    return Tuple(f[tuple(free)])


def argmin(*args: Any, name: str = "argmin") -> Tuple:
    """(coordinates..., value) of the first point of the RDom (in its iteration order) where
    e is smallest; the Tuple of zeros and the highest value of e's type if none is smaller."""
    return _arg_extreme("argmin", args, name, _highest, lambda e, best: e < best)


def argmax(*args: Any, name: str = "argmax") -> Tuple:
    """(coordinates..., value) of the first point of the RDom where e is largest."""
    return _arg_extreme("argmax", args, name, _lowest, lambda e, best: e > best)
