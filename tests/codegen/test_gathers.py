"""Gathers and scatters are single LLVM intrinsics (not one load or store per lane), and
keep the per-lane semantics: every lane's address, and lane order when lanes collide."""

from __future__ import annotations

import numpy as np
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import For, ForType, Load, Ramp, Store

from tests.codegen.builders import buffer, i32, var

LANES = 16
N = 32


def ir_of(lowered: LoweredPipeline) -> str:
    spec = resolve_target("host")
    return generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec)).ir


def _dense(x: E.Expr) -> Ramp:
    return Ramp(E.Mul(x, i32(LANES)), i32(1), LANES)


def lookup_pipeline() -> LoweredPipeline:
    """out[16x + j] = table[idx[16x + j]]: a lookup table read in a vectorized loop."""
    x = var("x")
    f32 = Float(32)
    indices = Load(Int(32).with_lanes(LANES), "idx", _dense(x))
    body = For(
        "x", i32(0), i32(N), ForType.SERIAL, Store("out", Load(f32.with_lanes(LANES), "table", indices), _dense(x))
    )
    args = [buffer("table", f32), buffer("idx", Int(32)), buffer("out", f32, 1, True)]
    return LoweredPipeline("lookup", args, body)


def test_a_gather_is_one_intrinsic_call():
    ir = ir_of(lookup_pipeline())
    assert ir.count("call <16 x float> @llvm.masked.gather.v16f32.v16p0(") == 1
    assert "insertelement" not in ir.split("@llvm.masked.gather", 1)[1].split("\n}", 1)[0]


def test_gathered_lookup_reads_every_lane(rng):
    fn = compile_pipeline(lookup_pipeline(), level="full", cache=False)
    table = rng.standard_normal(1000).astype(np.float32)
    idx = rng.integers(0, table.size, LANES * N).astype(np.int32)
    out = np.zeros(LANES * N, np.float32)
    fn({"table": table, "idx": idx}, {"out": out})
    np.testing.assert_array_equal(out, table[idx])


def test_colliding_scatter_lanes_keep_the_last_lane():
    x = var("x")
    u8 = UInt(8)
    value = Load(u8.with_lanes(LANES), "inp", _dense(x))
    store = Store("out", value, Load(Int(32).with_lanes(LANES), "idx", _dense(x)))
    body = For("x", i32(0), i32(N), ForType.SERIAL, store)
    args = [buffer("inp", u8), buffer("idx", Int(32)), buffer("out", u8, 1, True)]
    lowered = LoweredPipeline("scatter", args, body)
    assert "@llvm.masked.scatter.v16i8.v16p0(" in ir_of(lowered)
    fn = compile_pipeline(lowered, cache=False)
    inp = np.arange(LANES * N, dtype=np.uint8)
    idx = (np.arange(LANES * N) // 4).astype(np.int32)  # four lanes per address
    out = np.zeros(LANES * N // 4, np.uint8)
    fn({"inp": inp, "idx": idx}, {"out": out})
    np.testing.assert_array_equal(out, inp[3::4])
