"""Loads and stores: dense, strided, reversed, gathered, scattered, bools, 2-D strides."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import InputError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Float, Int, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Block, Broadcast, For, ForType, Load, Ramp, Store

from tests.codegen.builders import buffer, i32, scalar, var

LANES = 8
N = 64  # vector iterations


def strided_loads_pipeline() -> tuple[LoweredPipeline, list[int], list[str]]:
    """out_k[8x + j] = inp[base_k(x) + j * stride_k] for several constant strides."""
    x = var("x")
    f32 = Float(32)
    stores = []
    strides = [1, 2, 3, 4, 5, -1, -2, -4]
    for k, s in enumerate(strides):
        # Start far enough in for negative strides to stay inside [0, 8 * N * 5).
        base = E.Add(E.Mul(x, i32(LANES * abs(s))), i32(0 if s > 0 else (LANES - 1) * abs(s)))
        stores.append(Store(f"out{k}", Load(f32.with_lanes(LANES), "inp", Ramp(base, i32(s), LANES)), _dense(x)))
    # A gather through an index buffer, and a broadcast (all lanes read one element).
    indices = Load(Int(32).with_lanes(LANES), "idx", _dense(x))
    stores.append(Store("gathered", Load(f32.with_lanes(LANES), "inp", indices), _dense(x)))
    stores.append(Store("broadcast", Load(f32.with_lanes(LANES), "inp", Broadcast(x, LANES)), _dense(x)))
    # A ramp with a run-time stride (a gather of lanes base + k * step).
    step = var("step")
    stores.append(Store("runtime_stride", Load(f32.with_lanes(LANES), "inp", Ramp(x, step, LANES)), _dense(x)))
    body = For("x", i32(0), i32(N), ForType.SERIAL, Block(stores))
    outs = [*[f"out{k}" for k in range(len(strides))], "gathered", "broadcast", "runtime_stride"]
    args = [buffer("inp", f32), buffer("idx", Int(32))]
    args.append(scalar("step", Int(32)))
    args += [buffer(o, f32, 1, True) for o in outs]
    return LoweredPipeline("strided_loads", args, body), strides, outs


def _dense(x: E.Expr) -> Ramp:
    return Ramp(E.Mul(x, i32(LANES)), i32(1), LANES)


def test_dense_strided_reversed_and_gathered_loads(rng) -> None:
    lowered, strides, outs = strided_loads_pipeline()
    fn = compile_pipeline(lowered)
    inp = rng.standard_normal(LANES * N * 5).astype(np.float32)
    idx = rng.integers(0, inp.size, LANES * N).astype(np.int32)
    outputs = {o: np.zeros(LANES * N, np.float32) for o in outs}
    fn({"inp": inp, "idx": idx, "step": 3}, outputs)
    xs, js = np.arange(N)[:, None], np.arange(LANES)[None, :]
    for k, s in enumerate(strides):
        base = xs * LANES * abs(s) + (0 if s > 0 else (LANES - 1) * abs(s))
        np.testing.assert_array_equal(outputs[f"out{k}"], inp[base + js * s].ravel(), err_msg=f"stride {s}")
    np.testing.assert_array_equal(outputs["gathered"], inp[idx])
    np.testing.assert_array_equal(outputs["broadcast"], np.repeat(inp[:N], LANES))
    np.testing.assert_array_equal(outputs["runtime_stride"], inp[xs + js * 3].ravel())


def test_strided_and_scattered_stores_touch_only_their_elements(rng) -> None:
    x = var("x")
    u16 = UInt(16)
    value = Load(u16.with_lanes(LANES), "inp", _dense(x))
    body = For(
        "x",
        i32(0),
        i32(N),
        ForType.SERIAL,
        Block(
            [
                Store("every_third", value, Ramp(E.Mul(x, i32(LANES * 3)), i32(3), LANES)),
                Store("scattered", value, Load(Int(32).with_lanes(LANES), "idx", _dense(x))),
            ]
        ),
    )
    args = [buffer("inp", u16), buffer("idx", Int(32)), buffer("every_third", u16, 1, True)]
    args.append(buffer("scattered", u16, 1, True))
    fn = compile_pipeline(LoweredPipeline("strided_stores", args, body))
    inp = rng.integers(0, 60000, LANES * N).astype(np.uint16)
    idx = rng.permutation(LANES * N * 2)[: LANES * N].astype(np.int32)
    every_third = np.full(LANES * N * 3, 7, np.uint16)
    scattered = np.full(LANES * N * 2, 7, np.uint16)
    fn({"inp": inp, "idx": idx}, {"every_third": every_third, "scattered": scattered})
    want = np.full_like(every_third, 7)
    want[::3] = inp
    np.testing.assert_array_equal(every_third, want)
    want = np.full_like(scattered, 7)
    want[idx] = inp
    np.testing.assert_array_equal(scattered, want)


def test_bool_vectors_are_bytes_in_memory(rng) -> None:
    x = var("x")
    flags = Load(Bool().with_lanes(LANES), "flags", _dense(x))
    positive = E.GT(Load(Float(32).with_lanes(LANES), "v", _dense(x)), Broadcast(E.Const(Float(32), 0), LANES))
    # (engine.ir.expr gives vector comparisons a scalar bool type, so E.And would refuse them.)
    both = E.Select(positive, flags, Broadcast(E.Const(Bool(), 0), LANES))
    body = For("x", i32(0), i32(N), ForType.SERIAL, Store("out", both, _dense(x)))
    args = [buffer("flags", Bool()), buffer("v", Float(32)), buffer("out", Bool(), 1, True)]
    fn = compile_pipeline(LoweredPipeline("bool_vectors", args, body))
    flags_in = rng.integers(0, 2, LANES * N).astype(bool)
    v = rng.standard_normal(LANES * N).astype(np.float32)
    out = np.zeros(LANES * N, bool)
    fn({"flags": flags_in, "v": v}, {"out": out})
    np.testing.assert_array_equal(out, flags_in & (v > 0))
    assert set(np.unique(out.view(np.uint8))) <= {0, 1}


def two_d_pipeline(vectorized: bool) -> LoweredPipeline:
    """out(x, y) = inp(x, y) * 2 + y over the output's region, honouring mins and strides."""
    f32 = Float(32)
    x, y = var("x"), var("y")

    def offset(b: str, xe: E.Expr) -> E.Expr:
        return E.Add(
            E.Mul(E.Sub(xe, var(f"{b}.min.0")), var(f"{b}.stride.0")),
            E.Mul(E.Sub(y, var(f"{b}.min.1")), var(f"{b}.stride.1")),
        )

    if vectorized:
        xv = E.Add(var("out.min.0"), E.Mul(x, i32(LANES)))
        lanes_of = lambda b: Ramp(offset(b, xv), var(f"{b}.stride.0"), LANES)  # noqa: E731
        value = E.Add(
            E.Mul(Load(f32.with_lanes(LANES), "inp", lanes_of("inp")), Broadcast(E.Const(f32, 2.0), LANES)),
            Broadcast(E.Cast(f32, y), LANES),
        )
        inner = For("x", i32(0), E.Div(var("out.extent.0"), i32(LANES)), ForType.SERIAL,
                    Store("out", value, lanes_of("out")))  # fmt: skip
    else:
        value = E.Add(E.Mul(Load(f32, "inp", offset("inp", x)), E.Const(f32, 2.0)), E.Cast(f32, y))
        inner = For("x", var("out.min.0"), var("out.extent.0"), ForType.SERIAL, Store("out", value, offset("out", x)))
    body = For("y", var("out.min.1"), var("out.extent.1"), ForType.SERIAL, inner)
    name = "two_d_vector" if vectorized else "two_d"
    return LoweredPipeline(name, [buffer("inp", f32, 2), buffer("out", f32, 2, True)], body)


@pytest.mark.parametrize("vectorized", [False, True])
def test_2d_loop_with_non_contiguous_input_and_mins(vectorized: bool, rng) -> None:
    fn = compile_pipeline(two_d_pipeline(vectorized))
    base = rng.standard_normal((40, 99)).astype(np.float32)
    inp = base[::2, 1::3]  # (20, 33) with strides (198, 3) elements
    assert not inp.flags.c_contiguous
    big_out = np.zeros((20, 33 * 2), np.float32)
    out = big_out[:, :32]  # non-contiguous output rows are written in place
    fn({"inp": inp[:, :32]}, {"out": out}, mins={"inp": (5, -3), "out": (5, -3)})
    ys = np.arange(-3, 17, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(out, inp[:, :32] * 2 + ys)
    assert not big_out[:, 32:].any()


def test_views_the_code_cannot_address(rng) -> None:
    fn = compile_pipeline(two_d_pipeline(False))
    inp = rng.standard_normal((6, 8)).astype(np.float32)
    out = np.zeros((6, 8), np.float32)
    fn({"inp": inp[::-1]}, {"out": out})  # a reversed input is copied
    np.testing.assert_array_equal(out, inp[::-1] * 2 + np.arange(6, dtype=np.float32)[:, None])
    with pytest.raises(InputError, match="negative stride"):
        fn({"inp": inp}, {"out": out[::-1]})
    raw = np.zeros(6 * 8 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(6, 8)  # misaligned
    with pytest.raises(InputError, match="not aligned"):
        fn({"inp": inp}, {"out": raw})
    with pytest.raises(InputError, match="read-only"):
        ro = np.zeros((6, 8), np.float32)
        ro.flags.writeable = False
        fn({"inp": inp}, {"out": ro})
