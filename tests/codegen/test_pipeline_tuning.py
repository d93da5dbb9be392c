"""Level "full" runs LLVM's -O3 pipeline without loop interleaving and unrolling (the
schedule decides unrolling; the copies of loop bodies cost compile time): a loop the
schedule leaves scalar is vectorized by LLVM's loop vectorizer once, not interleaved into
several vector copies. The results stay exact at sizes with tails."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import create_target_machine, data_layout, optimize_module, resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import For, ForType, Load, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, var


def scalar_loop(n: int) -> LoweredPipeline:
    """out[x] = in[x] * 3 + 1 for x in [0, n): a loop the schedule left serial and scalar."""
    x = var("x")
    f32 = Float(32)
    value = E.Add(E.Mul(Load(f32, "inp", x), E.Const(f32, 3.0)), E.Const(f32, 1.0))
    body = For("x", i32(0), i32(n), ForType.SERIAL, Store("out", value, x))
    return LoweredPipeline("scalar_loop", [buffer("inp", f32), buffer("out", f32, 1, True)], body)


def optimized_ir(lowered: LoweredPipeline, level: str) -> str:
    spec = resolve_target("host")
    ir = generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec)).ir
    module = llvm.parse_assembly(ir, context=llvm.create_context())
    module.triple = spec.triple
    optimize_module(module, create_target_machine(spec, level), level)
    return str(module)


def test_full_level_vectorizes_a_scalar_loop_without_interleaving_it() -> None:
    ir = optimized_ir(scalar_loop(1000), "full")
    vector_multiplies = re.findall(r"fmul <\d+ x float>", ir)
    assert len(vector_multiplies) == 1, "one vector body: no interleaved or unrolled copies"
    assert re.search(r"fmul float", ir)  # the scalar remainder


def test_scalar_loop_at_full_level_computes_every_element() -> None:
    n = 1003  # not a multiple of any vector width: every element is a would-be tail
    compiled = compile_pipeline(scalar_loop(n), level="full", cache=False)
    inp = np.linspace(-2.0, 5.0, n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    compiled({"inp": inp}, {"out": out})
    np.testing.assert_array_equal(out, inp * np.float32(3.0) + np.float32(1.0))


def test_unvectorized_stage_matches_the_reference_at_full_level() -> None:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "inp")
    scalar = pw.Func("scalar")
    scalar[x, y] = inp[x, y] * 0.5 + inp[x + 1, y]
    out = pw.Func("out")
    out[x, y] = scalar[x, y] - scalar[x, y + 1]
    scalar.compute_root()  # serial and scalar: only LLVM could have vectorized it
    out.vectorize(x, 8)
    data = np.random.default_rng(3).random((21, 38), dtype=np.float32)
    size = [37, 20]  # 37 = 4 * 8 + 5: a tail in the vectorized consumer too
    pipeline = pw.Pipeline(out)
    compiled = pipeline.compile("host", level="full")
    ours = np.asarray(compiled(size, {"inp": data}))
    expected = np.asarray(pipeline.realize_reference(size, {"inp": data}))
    np.testing.assert_array_equal(ours, expected)
