"""Hand-built lowered pipelines for backend tests (no lowering passes involved)."""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.stmt import Block, Broadcast, For, ForType, Load, Ramp, Stmt, Store


def var(name: str, t: Type | None = None) -> E.Variable:
    return E.Variable(name, t if t is not None else Int(32))


def i32(value: int) -> E.Const:
    return E.Const(Int(32), value)


def buffer(name: str, t: Type, dims: int = 1, output: bool = False) -> Argument:
    return Argument(name, "buffer", t, dims, output)


def scalar(name: str, t: Type) -> Argument:
    return Argument(name, "scalar", t)


def vector_index(x: E.Expr, lanes: int) -> E.Expr:
    """The flat index of lanes consecutive elements starting at x*lanes."""
    if lanes == 1:
        return x
    return Ramp(E.Mul(x, i32(lanes)), i32(1), lanes)


def elementwise(
    name: str,
    inputs: dict[str, Type],
    outputs: dict[str, tuple[Type, Callable[[dict[str, E.Expr]], E.Expr]]],
    lanes: int = 1,
    scalars: dict[str, Type] | None = None,
) -> LoweredPipeline:
    """out_k[i] = fn_k(inputs[i]) over 1-D buffers, `lanes` elements per iteration; a scalar
    argument is visible to fn as a Broadcast to the vector width."""
    x = var("x")
    first_out = next(iter(outputs))
    index = vector_index(x, lanes)
    loads: dict[str, E.Expr] = {n: Load(t.with_lanes(lanes), n, index) for n, t in inputs.items()}
    for n, t in (scalars or {}).items():
        loads[n] = var(n, t) if lanes == 1 else Broadcast(var(n, t), lanes)
    stores: list[Stmt] = [Store(o, fn(loads), index) for o, (_, fn) in outputs.items()]
    extent = E.Div(var(f"{first_out}.extent.0"), i32(lanes)) if lanes > 1 else var(f"{first_out}.extent.0")
    body = For("x", i32(0), extent, ForType.SERIAL, Block(stores))
    args = [buffer(n, t) for n, t in inputs.items()]
    args += [Argument(n, "scalar", t) for n, t in (scalars or {}).items()]
    args += [buffer(o, t, 1, True) for o, (t, _) in outputs.items()]
    return LoweredPipeline(name, args, body)
