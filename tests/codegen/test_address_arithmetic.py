"""Scalar buffer indices are computed in i64 from sign-extended terms (so LLVM can step a
pointer through a loop instead of re-extending a wrapped 32-bit sum every iteration),
and still address exactly the elements the 32-bit index names: at the edges of buffers
with nonzero mins, through clamps, with negative-stride reads, and where a 32-bit
intermediate wraps but the index itself fits."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import For, ForType, LetStmt, Load, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, scalar, var


def _ir(lowered: LoweredPipeline) -> str:
    spec = resolve_target("host")
    return generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec)).ir


def _offset_copy() -> LoweredPipeline:
    """out[x] = inp[x + a * b - c] for x in [0, n): the index is a loop variable plus terms."""
    x, a, b, c = var("x"), var("a"), var("b"), var("c")
    index = E.Sub(E.Add(x, E.Mul(a, b)), c)
    u8 = UInt(8)
    body = For("x", i32(0), var("out.extent.0"), ForType.SERIAL, Store("out", Load(u8, "inp", index), x))
    args = [buffer("inp", u8), scalar("a", Int(32)), scalar("b", Int(32)), scalar("c", Int(32)), buffer("out", u8, 1, True)]
    return LoweredPipeline("offset_copy", args, body)


def test_a_scalar_load_index_is_summed_in_64_bits():
    ir = _ir(_offset_copy())
    load_block = ir.split("load i8", 1)[0].rsplit("\n\n", 1)[-1]
    assert re.search(r"mul i64 ", load_block) and re.search(r"sub i64 ", load_block)
    assert not re.search(r"(add|sub|mul) i32 ", load_block.split("for.x", 1)[-1])


def _let_offset_copy() -> LoweredPipeline:
    """out[x] = inp[t - c] with `let t = x + a * b` (as a split binds x.base) around the store."""
    x, a, b, c, t = var("x"), var("a"), var("b"), var("c"), var("t")
    u8 = UInt(8)
    store = Store("out", Load(u8, "inp", E.Sub(t, c)), x)
    body = For("x", i32(0), var("out.extent.0"), ForType.SERIAL, LetStmt("t", E.Add(x, E.Mul(a, b)), store))
    args = [buffer("inp", u8), scalar("a", Int(32)), scalar("b", Int(32)), scalar("c", Int(32)), buffer("out", u8, 1, True)]
    return LoweredPipeline("let_offset_copy", args, body)


def test_an_index_through_an_int32_let_is_summed_in_64_bits_too():
    ir = _ir(_let_offset_copy())
    assert "sext i32 %t" not in ir  # the let's i64 form, not the 32-bit let extended
    loop = ir.split("for.x", 1)[1].split("load i8", 1)[0]
    assert re.search(r"sub i64 ", loop) and re.search(r"mul i64 ", loop)


@pytest.mark.parametrize(
    ("a", "b", "c", "start"),
    [(3, 5, 15, 0), (-7, 9, -70, 7), (65536, 32768, (1 << 31) - 1, 1), (-65536, 32768, -(1 << 31), 0)],
)
def test_the_64_bit_index_reads_the_element_the_32_bit_index_names(a, b, c, start):
    """In the last two cases a * b - c wraps in 32 bits on the way (2**31 is -2**31 there)
    but the index fits: the 64-bit sum reads the same element."""
    for lowered in (_offset_copy(), _let_offset_copy()):
        fn = compile_pipeline(lowered, level="full", cache=False)
        inp = np.arange(64, dtype=np.uint8)
        out = np.zeros(20, np.uint8)
        fn({"inp": inp, "a": a, "b": b, "c": c}, {"out": out})
        np.testing.assert_array_equal(out, inp[start : start + 20])


@pytest.mark.parametrize("size", [(1, 1), (7, 3), (16, 17), (33, 9)])
@pytest.mark.parametrize("mins", [(0, 0), (-5, 3), (1000, -1000)])
def test_clamped_reversed_and_strided_reads_match_the_reference(size, mins):
    """Reads through clamps (min/max in the index), a reversed read (negative stride) and
    a strided one, scalar and vectorized with tails, over outputs at several origins."""
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.Int(16), 2, "image")
    w, h = image.width(), image.height()
    cx, cy = pw.clamp(x - 2, 0, w - 1), pw.clamp(y + 1, 0, h - 1)
    rx, sx = pw.clamp(w - 1 - x, 0, w - 1), pw.clamp(2 * x, 0, w - 1)
    scalar_reads = pw.Func("scalar_reads")
    scalar_reads[x, y] = image[cx, cy] + 2 * image[rx, pw.clamp(y, 0, h - 1)] - image[sx, cy]
    out = pw.Func("out")
    out[x, y] = scalar_reads[x, y] + image[rx, cy] * 3 - image[sx, pw.clamp(y, 0, h - 1)]
    scalar_reads.compute_root()
    out.vectorize(x, 8, pw.TailStrategy.GUARD_WITH_IF)
    data = np.random.default_rng(7).integers(-1000, 1000, (size[1] + 4, size[0] + 4)).astype(np.int16)
    pipeline = pw.Pipeline(out)
    ours = pipeline.compile(level="full")(list(size), {"image": data}, mins=list(mins))
    np.testing.assert_array_equal(ours, pipeline.realize_reference(list(size), {"image": data}, mins=list(mins)))


def _three_tap_sum() -> LoweredPipeline:
    """out[x] = inp[x + a * b - 1] + inp[x + a * b] + inp[x + a * b + 1]: three loads whose
    indices share the terms x and a * b."""
    x, a, b = var("x"), var("a"), var("b")
    row = E.Add(x, E.Mul(a, b))
    u8 = UInt(8)
    value = E.Add(E.Add(Load(u8, "inp", E.Sub(row, i32(1))), Load(u8, "inp", row)), Load(u8, "inp", E.Add(row, i32(1))))
    body = For("x", i32(0), var("out.extent.0"), ForType.SERIAL, Store("out", value, x))
    args = [buffer("inp", u8), scalar("a", Int(32)), scalar("b", Int(32)), buffer("out", u8, 1, True)]
    return LoweredPipeline("three_tap_sum", args, body)


def test_loads_of_one_expression_share_their_64_bit_index_terms():
    """The i64 forms of the terms the three indices share are emitted once, not per load
    (local Laplacian's IR was 39 % index arithmetic, most of it repeated)."""
    lowered = _three_tap_sum()
    loop = _ir(lowered).split("for.x:", 1)[1].split("next.x:", 1)[0]
    assert len(re.findall(r"= sext i32 %a\b", loop)) <= 1 and len(re.findall(r"= sext i32 %b\b", loop)) <= 1
    assert len(re.findall(r"= mul i64 ", loop)) == 1
    fn = compile_pipeline(lowered, level="full", cache=False)
    inp = np.arange(64, dtype=np.uint8)
    out = np.zeros(20, np.uint8)
    fn({"inp": inp, "a": 3, "b": 5}, {"out": out})
    expected = inp[14:34].astype(np.int32) + inp[15:35] + inp[16:36]
    np.testing.assert_array_equal(out, expected.astype(np.uint8))
