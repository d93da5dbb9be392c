"""Outputs whose schedule writes beyond the size asked for (a ShiftInwards or Auto split
wider than the output, an update over a fixed RDom) are computed as Halide's realize does:
allocated over everything written, with the requested window returned. Oracles: the
reference evaluator and Halide realizing the same schedule."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure

import pixelweave as pw


def _narrow(m, tail_name: str):
    x, y = m.Var("x"), m.Var("y")
    xo, xi = m.Var("xo"), m.Var("xi")
    f = m.Func("f")
    f[x, y] = x * 3 + y * 100
    tail = getattr(m.TailStrategy, tail_name)
    f.split(x, xo, xi, 8, tail).vectorize(xi)
    return f


@pytest.mark.parametrize(("ours", "halide"), [("SHIFT_INWARDS", "ShiftInwards"), ("AUTO", "Auto")])
@pytest.mark.parametrize("checked", [False, True])
def test_an_output_narrower_than_its_vector_width(ours, halide, checked):
    f = _narrow(pw, ours)
    pipeline = pw.Pipeline(f)
    got = pipeline.compile(level="fast", checked=checked)([3, 2])
    assert got.shape == (2, 3) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, pipeline.realize_reference([3, 2]))
    np.testing.assert_array_equal(got, np.asarray(_narrow(hl, halide).realize([3, 2])))


def _split_of_a_split(m):
    x, y = m.Var("x"), m.Var("y")
    out = m.Func("out")
    out[x, y] = x + y
    out.tile(x, y, m.Var("xo"), m.Var("yo"), m.Var("xi"), m.Var("yi"), 2, 2).vectorize(m.Var("yi"), 4)
    return out


def test_a_split_wider_than_the_split_it_splits_is_refused_as_by_halide():
    """yi has 2 iterations and a vector of 4 shifts below every tile's start: no window
    holds what it writes (Halide's bounds query does not converge either)."""
    fn = pw.Pipeline(_split_of_a_split(pw)).compile(level="fast")
    with pytest.raises(RuntimeFailure, match=r"output `out` is accessed at y = -2, .* splits .*y.yi by 4 \(tail AUTO\)"):
        fn([5, 3])
    with pytest.raises(hl.HalideError, match="before the min"):
        _split_of_a_split(hl).realize([5, 3])


def test_nested_splits_of_a_narrow_output_grow_the_window_until_it_fits():
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    clamped = pw.BoundaryConditions.repeat_edge(image)
    out = pw.Func("out")
    out[x, y] = clamped[x - 1, y] + clamped[x + 1, y + 1]
    out.split(x, "xo", "xi", 4).split("xo", "xoo", "xoi", 3).vectorize("xi")
    pipeline = pw.Pipeline(out)
    inputs = {"image": np.arange(35, dtype=np.uint16).reshape(5, 7)}
    got = pipeline.compile(level="fast", checked=True)([2, 3], inputs)
    np.testing.assert_array_equal(got, pipeline.realize_reference([2, 3], inputs))


def _scan(m):
    x, y = m.Var("x"), m.Var("y")
    f = m.Func("f")
    f[x, y] = x + y * 10
    r = m.RDom([(1, 11)])
    f[r.x, y] = f[r.x - 1, y] + f[r.x, y]
    return f


def test_a_scan_output_narrower_than_its_rdom():
    f = _scan(pw)
    pipeline = pw.Pipeline(f)
    got = pipeline.compile(level="fast", checked=True)([5, 2])
    np.testing.assert_array_equal(got, pipeline.realize_reference([5, 2]))
    np.testing.assert_array_equal(got, np.asarray(_scan(hl).realize([5, 2])))


def test_two_outputs_one_of_them_widened():
    x, y = pw.Var("x"), pw.Var("y")
    a, b = pw.Func("a"), pw.Func("b")
    a[x, y] = x - y
    b[x, y] = x * y
    a.vectorize(x, 8)
    pipeline = pw.Pipeline([a, b])
    got = pipeline.compile(level="fast")([3, 4])
    for mine, ref in zip(got, pipeline.realize_reference([3, 4]), strict=True):
        np.testing.assert_array_equal(mine, ref)


def test_out_arrays_of_the_requested_size_are_refused_with_the_way_out():
    f = _narrow(pw, "SHIFT_INWARDS")
    fn = pw.Pipeline(f).compile(level="fast")
    with pytest.raises(RuntimeFailure, match=r"call it without out= .* or use splits with tail=TailStrategy"):
        fn([3, 2], out=np.zeros((2, 3), np.int32))
    np.testing.assert_array_equal(fn([9, 2], out=np.zeros((2, 9), np.int32)), pw.Pipeline(f).realize_reference([9, 2]))
