"""A vectorized lookup into a small byte table (a constant-size allocation, an index whose
range fits in a window of at most 1024 of its bytes) is byte permutes on CPUs with AVX-512
VBMI, not a gather: the reference evaluator's values for tables of 10 to 1024 bytes, windows
that start inside the table and end at its last byte (masked table loads), 8 to 256 lanes,
tables read inside parallel loops, and lookups that do not qualify (still gathers)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm_table_lookup import constant_interval, supports_table_lookup, table_window
from pixelweave.engine.codegen.target import resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.reference import realize_reference
from pixelweave.engine.stmt import Broadcast, Ramp

import pixelweave as pw

HOST_PERMUTES = supports_table_lookup(resolve_target("host").features)


def _ir(pipeline: pw.Pipeline, tmp_path) -> str:
    path = tmp_path / "lookup.ll"
    pipeline.compile_to_llvm_assembly(str(path))
    return path.read_text()


def _lookup(table_size: int, index_of, index_type, lanes: int, *, parallel: bool = False) -> pw.Pipeline:
    """out(x, y) = table(index_of(inp(x, y))), table(i) a byte function of i over its
    inferred region, computed at root (a constant-size allocation)."""
    x, y, i = pw.Var("x"), pw.Var("y"), pw.Var("i")
    inp = pw.ImageParam(index_type, 2, "inp")
    table = pw.Func("table")
    table[i] = pw.cast(pw.UInt(8), (i * 37 + 11) % 251)
    out = pw.Func("out")
    out[x, y] = table[index_of(inp[x, y])]
    table.compute_root().bound(i, 0, table_size)
    out.vectorize(x, lanes)
    if parallel:
        out.parallel(y)
    return pw.Pipeline(out)


def _uses_permutes(pipeline: pw.Pipeline, tmp_path) -> bool:
    return "@llvm.x86.avx512.vpermi2var.qi.512" in _ir(pipeline, tmp_path)


def _check(pipeline: pw.Pipeline, inp: np.ndarray) -> None:
    height, width = inp.shape
    got = pipeline.realize([width, height], {"inp": inp})
    want = realize_reference(pipeline, [width, height], {"inp": inp})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lanes", [8, 16, 32, 64, 128, 256])
def test_a_byte_indexed_table_matches_the_reference(rng, tmp_path, lanes):
    pipeline = _lookup(256, lambda v: pw.cast(pw.Int(32), v), pw.UInt(8), lanes, parallel=True)
    assert _uses_permutes(pipeline, tmp_path) == HOST_PERMUTES
    for width, height in ((lanes * 3 + 5, 7), (lanes + 1, 3), (lanes, 2)):
        _check(pipeline, rng.integers(0, 256, size=(height, width), dtype=np.uint8))


@pytest.mark.parametrize(
    ("table_size", "lo", "hi"),
    [(10, 0, 9), (300, 40, 299), (1024, 0, 1023), (700, 3, 620), (129, 1, 128), (64, 0, 63)],
)
def test_clamped_windows_match_the_reference(rng, tmp_path, table_size, lo, hi):
    """A clamped 16-bit index: windows of 10 to 1024 bytes, the last register of the window
    past the table's end (masked), windows not starting at the table's first byte."""
    pipeline = _lookup(table_size, lambda v: pw.clamp(pw.cast(pw.Int(32), v), lo, hi), pw.UInt(16), 32, parallel=True)
    _check(pipeline, rng.integers(0, 1100, size=(9, 101), dtype=np.uint16))
    _check(pipeline, np.full((2, 40), 65535, dtype=np.uint16))


def test_a_signed_byte_with_an_offset_matches_the_reference(rng, tmp_path):
    pipeline = _lookup(256, lambda v: pw.cast(pw.Int(32), v) + 128, pw.Int(8), 16)
    assert _uses_permutes(pipeline, tmp_path) == HOST_PERMUTES
    _check(pipeline, rng.integers(-128, 128, size=(5, 77), dtype=np.int8))


def test_a_table_lookup_is_permutes_where_the_cpu_has_them(tmp_path):
    ir = _ir(_lookup(256, lambda v: pw.cast(pw.Int(32), v), pw.UInt(8), 16), tmp_path)
    if HOST_PERMUTES:
        assert "@llvm.x86.avx512.vpermi2var.qi.512" in ir
        assert "masked.gather" not in ir
    else:
        assert "vpermi2var" not in ir
        assert "masked.gather" in ir


def test_portable_targets_keep_gathers(tmp_path):
    """x86-64-v4 (no VBMI) must not use the permutes, whatever this CPU has."""
    pipeline = _lookup(256, lambda v: pw.cast(pw.Int(32), v), pw.UInt(8), 16)
    path = tmp_path / "v4.ll"
    pipeline.compile_to_llvm_assembly(str(path), target="x86-64-v4")
    ir = path.read_text()
    assert "vpermi2var" not in ir
    assert "masked.gather" in ir


def test_lookups_that_do_not_fit_stay_gathers(rng, tmp_path):
    """An index range wider than 1024 bytes, and a 16-bit table: gathers, same values."""
    wide = _lookup(2048, lambda v: pw.clamp(pw.cast(pw.Int(32), v), 0, 2047), pw.UInt(16), 16)
    assert "vpermi2var" not in _ir(wide, tmp_path)
    _check(wide, rng.integers(0, 4000, size=(3, 50), dtype=np.uint16))
    x, i = pw.Var("x"), pw.Var("i")
    inp = pw.ImageParam(pw.UInt(8), 1, "inp")
    table = pw.Func("table16")
    table[i] = pw.cast(pw.UInt(16), i * 257)
    out = pw.Func("out")
    out[x] = table[pw.cast(pw.Int(32), inp[x])]
    table.compute_root()
    out.vectorize(x, 16)
    pipeline = pw.Pipeline(out)
    assert "vpermi2var" not in _ir(pipeline, tmp_path)
    values = rng.integers(0, 256, size=70, dtype=np.uint8)
    np.testing.assert_array_equal(
        pipeline.realize([70], {"inp": values}), realize_reference(pipeline, [70], {"inp": values})
    )


def test_checked_builds_still_check_table_reads(rng):
    pipeline = _lookup(256, lambda v: pw.cast(pw.Int(32), v), pw.UInt(8), 32)
    compiled = pipeline.compile(level="full", checked=True)
    inp = rng.integers(0, 256, size=(4, 90), dtype=np.uint8)
    out = np.zeros_like(inp)
    compiled([90, 4], {"inp": inp}, out=out)
    np.testing.assert_array_equal(out, realize_reference(pipeline, [90, 4], {"inp": inp}))


def test_constant_interval_of_index_expressions():
    u8 = pw.UInt(8)
    i32 = pw.Int(32)
    byte = E.Variable("v", u8.with_lanes(16))
    widened = E.Cast(i32.with_lanes(16), byte)
    assert constant_interval(widened) == (0, 255)
    shifted = E.Add(widened, Broadcast(E.Const(i32, 7), 16))
    assert constant_interval(shifted) == (7, 262)
    clamped = E.Min(E.Max(E.Cast(i32.with_lanes(16), E.Variable("w", pw.UInt(16).with_lanes(16))),
                          Broadcast(E.Const(i32, 5), 16)), Broadcast(E.Const(i32, 900), 16))  # fmt: skip
    assert constant_interval(clamped) == (5, 900)
    assert constant_interval(Ramp(E.Const(i32, 3), E.Const(i32, 2), 8)) == (3, 17)
    assert constant_interval(E.Variable("n", i32.with_lanes(16))) is None
    assert table_window(shifted, 16, 263) == table_window(shifted, 16, 300)
    assert table_window(shifted, 16, 262) is None  # reaches past the table
    assert table_window(clamped, 16, 2000) is not None
    assert table_window(clamped, 48 * 2, 2000) is None  # 96 lanes: not a power-of-two multiple of 64


def test_random_lookups_match_the_reference(tmp_path):
    """Random tables, index expressions, vector widths and placements of the table."""
    rng = np.random.default_rng(20261128)
    permuted = 0
    for case in range(24):
        table_size = int(rng.integers(1, 1100))
        lanes = int(rng.choice([8, 16, 32, 64, 128]))
        lo = int(rng.integers(0, table_size))
        hi = int(rng.integers(lo, min(table_size, lo + 1100)))
        offset = int(rng.integers(-300, 300))
        kind = case % 4
        index_type = [pw.UInt(8), pw.Int(8), pw.UInt(16), pw.Int(16)][kind]
        x, y, i = pw.Var("x"), pw.Var("y"), pw.Var("i")
        inp = pw.ImageParam(index_type, 2, "inp")
        table = pw.Func("table")
        table[i, y] = pw.cast(pw.Int(8) if case % 3 == 0 else pw.UInt(8), i * 13 - y * 3 + 7)
        out = pw.Func("out")
        out[x, y] = table[pw.clamp(pw.cast(pw.Int(32), inp[x, y]) + offset, lo, hi), y]
        table.bound(i, 0, table_size)
        if case % 2:
            table.compute_at(out, y)
        else:
            table.compute_root()
        out.vectorize(x, lanes).parallel(y)
        pipeline = pw.Pipeline(out)
        permuted += _uses_permutes(pipeline, tmp_path)
        width, height = lanes + int(rng.integers(0, 3 * lanes)), int(rng.integers(1, 5))
        info = np.iinfo(index_type.numpy())
        values = rng.integers(info.min, info.max + 1, size=(height, width)).astype(index_type.numpy())
        got = pipeline.realize([width, height], {"inp": values})
        want = realize_reference(pipeline, [width, height], {"inp": values})
        np.testing.assert_array_equal(got, want, err_msg=f"case {case}: table {table_size} [{lo}, {hi}] lanes {lanes}")
    assert (permuted >= 6) == HOST_PERMUTES, permuted
