"""Mistakes caught when a compiled pipeline is called: each raises a Python exception with
a clear message, and the process carries on (nothing is read or written out of bounds)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import InputError, RuntimeFailure

import pixelweave as pw


def unclamped_blur() -> pw.Pipeline:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    f = pw.Func("f")
    f[x, y] = (pw.u16(inp[x - 1, y]) + inp[x + 1, y + 2]) / 2
    f.vectorize(x, 8).parallel(y)
    return pw.Pipeline(f)


def test_input_too_small_below():
    fn = unclamped_blur().compile(level="fast")
    with pytest.raises(RuntimeFailure, match=r"input `input` is read at x = -1, below its minimum 0"):
        fn([16, 8], {"input": np.zeros((20, 30), np.uint8)})


def test_input_too_small_beyond():
    fn = shifted_blur().compile(level="fast")
    with pytest.raises(RuntimeFailure, match=r"input `input` is read at x = 17, beyond its maximum 16 in x"):
        fn([16, 8], {"input": np.zeros((20, 17), np.uint8)})


def shifted_blur() -> pw.Pipeline:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    f = pw.Func("f")
    f[x, y] = (pw.u16(inp[x, y]) + inp[x + 2, y + 2]) / 2
    f.vectorize(x, 8)
    return pw.Pipeline(f)


def test_input_too_small_in_y_reports_the_row():
    fn = shifted_blur().compile(level="fast")
    with pytest.raises(RuntimeFailure, match=r"input `input` is read at y = 9, beyond its maximum 8 in y"):
        fn([16, 8], {"input": np.zeros((9, 30), np.uint8)})
    # The same callable still works on a large enough input afterwards.
    out = fn([16, 8], {"input": np.full((10, 30), 4, np.uint8)})
    assert (out == 4).all()


def test_wrong_dtype_and_dimensionality():
    fn = shifted_blur().compile(level="fast")
    with pytest.raises(InputError, match=r"input `input` has element type uint8 .* dtype float32"):
        fn([4, 4], {"input": np.zeros((10, 10), np.float32)})
    with pytest.raises(InputError, match=r"input `input` has 2 dimensions, but the array given has 3"):
        fn([4, 4], {"input": np.zeros((10, 10, 3), np.uint8)})


def test_wrong_out_array():
    fn = shifted_blur().compile(level="fast")
    with pytest.raises(InputError, match=r"out= for output `f` must have shape \(4, 4\) and dtype uint16"):
        fn([4, 4], {"input": np.zeros((10, 10), np.uint8)}, out=np.zeros((4, 4), np.uint8))


def test_missing_input_and_unknown_name():
    fn = shifted_blur().compile(level="fast")
    with pytest.raises(InputError, match=r"no array given for input image `input`"):
        fn([4, 4])
    with pytest.raises(InputError, match=r"`inptu` is not an input of this pipeline"):
        fn([4, 4], {"inptu": np.zeros((10, 10), np.uint8)})


def test_failure_inside_parallel_loop_many_times():
    """A bound violated inside parallel work: reported every time, and nothing leaks or crashes."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Int(32), 1, "offsets")
    lut, out = pw.Func("lut"), pw.Func("out")
    lut[x] = x * 2
    out[x, y] = lut[pw.clamp(inp[y], 0, 1000)] + x
    lut.compute_root().bound(x, 0, 100)
    out.parallel(y)
    fn = pw.Pipeline(out).compile(level="fast")
    offsets = np.arange(16, dtype=np.int32) * 10  # reads lut up to 150: beyond its bound of 100
    for _ in range(50):
        with pytest.raises(RuntimeFailure, match=r"Func `lut` is read over \[0, 1000\] in x .*outside the bound"):
            fn([8, 16], {"offsets": offsets})


def test_request_outside_the_bound_of_an_output():
    x, y = pw.Var("x"), pw.Var("y")
    out = pw.Func("out")
    out[x, y] = x + y
    out.bound(y, 0, 4)
    fn = pw.Pipeline(out).compile(level="fast")
    np.testing.assert_array_equal(fn([3, 4], {}), np.add.outer(np.arange(4), np.arange(3)))
    with pytest.raises(
        RuntimeFailure,
        match=r"Func `out` is requested or read over \[0, 5\] in y .*bound\(y, ...\) it was given, \[0, 3\]; "
        r"legal: a bound\(y, min, extent\)",
    ):
        fn([3, 6], {})


def test_an_output_narrower_than_an_unguarded_split_into_out_arrays_names_the_split_and_the_remedies():
    """Without out= the call widens the outputs as Halide's realize does (test_output_window.py);
    out= arrays of the requested size cannot take the shifted iteration."""
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = x + y
    f.vectorize(x, 8)
    fn = pw.Pipeline(f).compile(level="fast")
    with pytest.raises(RuntimeFailure) as err:
        fn([5, 2], out=np.zeros((2, 5), np.int32))
    assert str(err.value) == (
        "output `f` is accessed at x = -3, below its minimum 0 in x (dimension 0); the schedule of `f` splits x by 8 "
        "(tail AUTO), which computes whole multiples of the factor: give the output at least the factor in that "
        "dimension (a multiple of it for ROUND_UP), or split with tail=TailStrategy.GUARD_WITH_IF; its schedule "
        "writes `f` over [-3, 4] x [0, 1], beyond the size [5, 2] of the out= arrays: call it without out= (it then "
        "allocates outputs over what the schedule writes and returns the requested size), or use splits with "
        "tail=TailStrategy.GUARD_WITH_IF"
    )
    assert fn([8, 2]).tolist() == [list(range(8)), list(range(1, 9))]
