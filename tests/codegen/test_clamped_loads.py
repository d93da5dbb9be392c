"""Vector loads of a ramp clamped by min and max (a row's first and last vectors reading an
image with its edge repeated) are one masked dense load with the edge values in the clamped
lanes, not gathers: the values of the reference evaluator at widths and mins that put the
clamps inside vectors, with inputs between two inaccessible pages, so that a load touching
one element outside the lanes' indices would crash; and clamps whose bounds cross."""

from __future__ import annotations

import ctypes
import mmap

import numpy as np
import pytest

import pixelweave as pw

_PAGE = mmap.PAGESIZE
_TYPES = {np.uint8: pw.UInt(8), np.uint16: pw.UInt(16), np.int32: pw.Int(32), np.float32: pw.Float(32)}


@pytest.fixture(scope="module")
def guarded_bytes() -> np.ndarray:
    """Three pages, the first and the last inaccessible; the middle one returned."""
    memory = mmap.mmap(-1, 3 * _PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    everything = np.frombuffer(memory, dtype=np.uint8)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for page in (0, 2):
        assert libc.mprotect(ctypes.c_void_p(everything.ctypes.data + page * _PAGE), _PAGE, 0) == 0
    return everything[_PAGE : 2 * _PAGE]


def _blur(dtype, lanes: int) -> pw.Pipeline:
    x = pw.Var("x")
    inp = pw.ImageParam(_TYPES[dtype], 1, "inp")
    edge = pw.BoundaryConditions.repeat_edge(inp)
    wide = pw.Int(32) if dtype != np.float32 else pw.Float(32)
    f = pw.Func("f")
    f[x] = pw.cast(_TYPES[dtype], (pw.cast(wide, edge[x - 2]) + edge[x] * 2 + edge[x + 3]) / 4)
    f.vectorize(x, lanes)
    return pw.Pipeline(f)


def test_a_repeated_edge_is_a_masked_load_not_a_gather(tmp_path):
    path = tmp_path / "f.ll"
    _blur(np.uint8, 32).compile_to_llvm_assembly(str(path))
    ir = path.read_text()
    assert "masked.gather" not in ir
    assert "llvm.masked.load.v32i8" in ir


@pytest.mark.parametrize(("dtype", "lanes"), [(np.uint8, 32), (np.uint16, 16), (np.int32, 8), (np.float32, 16)])
@pytest.mark.parametrize("at_start", [True, False])
def test_edges_match_the_reference_between_guard_pages(guarded_bytes, dtype, lanes, at_start):
    pipeline = _blur(dtype, lanes)
    compiled = pipeline.compile(level="full")
    itemsize = np.dtype(dtype).itemsize
    for size in (lanes + 3, 3 * lanes - 1, 5):
        values = (np.arange(size) * 29 % 113 + 3).astype(dtype)
        nbytes = size * itemsize
        raw = guarded_bytes[:nbytes] if at_start else guarded_bytes[_PAGE - nbytes :]
        data = raw.view(dtype)
        data[:] = values
        for first, width in ((-5, size + 11), (0, size), (2, 2 * lanes + 1), (-lanes - 4, 3 * lanes)):
            width = max(width, lanes)  # a vector at least
            ours = compiled([width], {"inp": data}, mins=[first])
            expected = pipeline.realize_reference([width], {"inp": values}, mins=[first])
            np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize(("low", "high"), [(3, 40), (40, 3), (-6, 100), (17, 17)])
@pytest.mark.parametrize("min_first", [True, False])
def test_clamps_with_run_time_bounds_in_either_order(low, high, min_first):
    """max(min(x, high), low) and min(max(x, low), high), bounds that may cross (every lane
    then reads the same element)."""
    x = pw.Var("x")
    inp = pw.ImageParam(pw.UInt(8), 1, "inp")
    lo, hi = pw.Param(pw.Int(32), "lo"), pw.Param(pw.Int(32), "hi")
    f = pw.Func("f")
    index = pw.max(pw.min(x, hi), lo) if min_first else pw.min(pw.max(x, lo), hi)
    f[x] = inp[index + 7]
    f.vectorize(x, 32)
    pipeline = pw.Pipeline(f)
    compiled = pipeline.compile(level="full")
    values = (np.arange(200) * 31 % 251).astype(np.uint8)
    for first, width in ((-10, 70), (0, 32), (5, 97)):
        inputs = {"inp": values, "lo": low, "hi": high}
        ours = compiled([width], inputs, mins=[first])
        np.testing.assert_array_equal(ours, pipeline.realize_reference([width], inputs, mins=[first]))
