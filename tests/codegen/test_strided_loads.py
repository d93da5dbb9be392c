"""Small-stride vector loads (f[2x], f[3x + 1], f[-x]) read the span of their lanes as
full vectors of the result's width, the last one ending exactly at the span's end, and
pick their lanes with one shuffle: the values of the reference evaluator at every
stride, type and width, with inputs exactly as large as the lanes need."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.stmt import For, ForType, Load, Ramp, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, var


def _every_other(lanes: int) -> LoweredPipeline:
    """out[16x + k] = inp[32x + 2k]: a stride-2 load of 16 floats per iteration."""
    x = var("x")
    f32 = Float(32)
    read = Load(f32.with_lanes(lanes), "inp", Ramp(E.Mul(x, i32(2 * lanes)), i32(2), lanes))
    store = Store("out", read, Ramp(E.Mul(x, i32(lanes)), i32(1), lanes))
    body = For("x", i32(0), var("out.extent.0"), ForType.SERIAL, store)
    return LoweredPipeline("every_other", [buffer("inp", f32), buffer("out", f32, 1, True)], body)


def test_a_stride_2_load_is_two_full_vectors_and_one_shuffle():
    spec = resolve_target("host")
    ir = generate_module(_every_other(16), triple=spec.triple, datalayout=data_layout(spec)).ir
    assert "load <31 x float>" not in ir
    assert ir.count("load <16 x float>") == 2
    assert re.search(r"shufflevector <16 x float> %[\w.]+, <16 x float> %[\w.]+, <16 x i32>", ir)


@pytest.mark.parametrize("stride", [2, 3, 4, -1, -2, -3])
@pytest.mark.parametrize(("dtype", "lanes"), [(np.float32, 16), (np.uint8, 32), (np.uint16, 8), (np.int32, 4)])
def test_strided_reads_match_the_reference_up_to_the_last_element(stride, dtype, lanes):
    """The input holds exactly the elements the output reads (the span of the last vector
    ends at its last element), and the output width leaves a shifted last vector."""
    width = 3 * lanes + 1
    x = pw.Var("x")
    t = {np.float32: pw.Float(32), np.uint8: pw.UInt(8), np.uint16: pw.UInt(16), np.int32: pw.Int(32)}[dtype]
    inp = pw.ImageParam(t, 1, "inp")
    f = pw.Func("f")
    last = abs(stride) * (width - 1)
    f[x] = inp[stride * x + (last if stride < 0 else 0)]
    f.vectorize(x, lanes)
    data = (np.arange(last + 1) * 7 % 251).astype(dtype)
    pipeline = pw.Pipeline(f)
    ours = pipeline.compile(level="full")([width], {"inp": data})
    np.testing.assert_array_equal(ours, pipeline.realize_reference([width], {"inp": data}))
