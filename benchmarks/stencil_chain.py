"""A hand-lowered pipeline for backend benchmarks: a chain of 5-point stencils.

Each stage reads the previous one (the input first) and writes a heap intermediate (the
last writes the output): out(x, y) = (p(x-1,y) + p(x,y) + p(x+1,y) + p(x,y-1) + p(x,y+1)) * 0.2
over the interior, 16 float32 lanes per vector, rows in parallel. It exercises what the
backend sees from real schedules (parallel outlining, heap Allocate, dense unaligned vector
loads) without depending on the lowering passes.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int, UInt
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.stmt import Allocate, Block, Broadcast, For, ForType, Load, ProducerConsumer, Ramp, Stmt, Store

F32, I32 = Float(32), Int(32)
LANES = 16


def _var(name: str) -> E.Variable:
    return E.Variable(name, I32)


def _c(v: int) -> E.Const:
    return E.Const(I32, v)


def _stage(source: str, target: str) -> Stmt:
    width, height = _var("out.extent.0"), _var("out.extent.1")
    y, xo = _var(f"{target}.y"), _var(f"{target}.xo")
    base = E.Add(E.Mul(y, width), E.Add(_c(LANES), E.Mul(xo, _c(LANES))))

    def tap(offset: E.Expr) -> E.Expr:
        return Load(F32.with_lanes(LANES), source, Ramp(E.Add(base, offset), _c(1), LANES))

    total = tap(_c(-1))
    for offset in (_c(0), _c(1), E.Sub(_c(0), width), width):
        total = E.Add(total, tap(offset))
    value = E.Mul(total, Broadcast(E.Const(F32, 0.2), LANES))
    columns = E.Div(E.Sub(width, _c(2 * LANES)), _c(LANES))
    row = For(f"{target}.xo", _c(0), columns, ForType.SERIAL, Store(target, value, Ramp(base, _c(1), LANES)))
    return ProducerConsumer(target, True, For(f"{target}.y", _c(1), E.Sub(height, _c(2)), ForType.PARALLEL, row))


def stencil_chain(stages: int = 10, name: str = "stencil_chain") -> LoweredPipeline:
    """`stages` stencils from `input` to `out` (both width x height float32, width a
    multiple of 16); intermediates live on the heap for the rest of the pipeline."""
    names = ["input", *[f"s{k}" for k in range(stages - 1)], "out"]
    body: Stmt = Block([_stage(names[k], names[k + 1]) for k in range(stages)])
    for k in reversed(range(stages - 1)):
        size = E.Mul(_var("out.extent.0"), _var("out.extent.1"))
        body = Allocate(names[k + 1], F32, size, False, body)
    args = [Argument("input", "buffer", F32, 2), Argument("out", "buffer", F32, 2, is_output=True)]
    return LoweredPipeline(name, args, body, profile_names=names[1:])


def box_blur_u16(name: str = "box_blur_u16", lanes: int = 32) -> LoweredPipeline:
    """Halide's apps/blur, hand-lowered: a 3x3 box blur of uint16 with integer division by 3
    (blur_x over the whole image into a heap buffer, then blur_y), rows in parallel. The
    input is 2 pixels larger than the output in x and y; widths are multiples of lanes."""
    u16 = UInt(16)
    width, height = _var("out.extent.0"), _var("out.extent.1")
    in_stride = _var("input.stride.1")
    three = Broadcast(E.Const(u16, 3), lanes)

    def stage(source: str, stride: E.Expr, target: str, rows: E.Expr, taps: list[E.Expr]) -> Stmt:
        y, xo = _var(f"{target}.y"), _var(f"{target}.xo")
        base = E.Add(E.Mul(y, stride), E.Mul(xo, _c(lanes)))
        total = None
        for offset in taps:
            load = Load(u16.with_lanes(lanes), source, Ramp(E.Add(base, offset), _c(1), lanes))
            total = load if total is None else E.Add(total, load)
        out_index = Ramp(E.Add(E.Mul(y, width), E.Mul(xo, _c(lanes))), _c(1), lanes)
        row = For(
            f"{target}.xo",
            _c(0),
            E.Div(width, _c(lanes)),
            ForType.SERIAL,
            Store(target, E.Div(total, three), out_index),
        )
        return ProducerConsumer(target, True, For(f"{target}.y", _c(0), rows, ForType.PARALLEL, row))

    blur_x = stage("input", in_stride, "blur_x", E.Add(height, _c(2)), [_c(0), _c(1), _c(2)])
    blur_y = stage("blur_x", width, "out", height, [_c(0), width, E.Mul(width, _c(2))])
    size = E.Mul(width, E.Add(height, _c(2)))
    body = Allocate("blur_x", u16, size, False, Block([blur_x, blur_y]))
    args = [Argument("input", "buffer", u16, 2), Argument("out", "buffer", u16, 2, is_output=True)]
    return LoweredPipeline(name, args, body, profile_names=["blur_x", "out"])
