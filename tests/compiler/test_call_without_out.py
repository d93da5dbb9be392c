"""A compiled pipeline called without `out=` on plain inputs (Compiled's fresh-output path):
each call returns a new array equal to the reference's, widened as the general path widens
it, and refuses wrong sizes with the general path's messages."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import InputError

import pixelweave as pw


def _total():
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    r = pw.RDom([(0, inp.width()), (0, inp.height())])
    total = pw.Func("total")
    total[()] = pw.u32(0)
    total[()] += pw.u32(inp[r.x, r.y])
    return total


def test_a_whole_image_sum_returns_a_fresh_zero_dimensional_array_per_call(rng):
    compiled = pw.Pipeline(_total()).compile()
    first_image = rng.integers(0, 256, (37, 53), dtype=np.uint8)
    second_image = rng.integers(0, 256, (5, 3), dtype=np.uint8)
    first = compiled([], {"input": first_image})
    second = compiled([], {"input": second_image})
    assert first is not second
    assert first.shape == () and first.dtype == np.uint32
    assert int(first) == int(first_image.sum()) and int(second) == int(second_image.sum())
    reference = pw.Pipeline(_total()).realize_reference([], {"input": first_image})
    assert int(first) == int(reference)


def _narrow_offset():
    """An output narrower than its vector width (its loops write beyond the requested size)
    that reads an input, so the call takes the plain-inputs path."""
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    x, y, xo, xi = pw.Var("x"), pw.Var("y"), pw.Var("xo"), pw.Var("xi")
    f = pw.Func("f")
    f[x, y] = inp[pw.clamp(x, 0, inp.width() - 1), y] + pw.u16(x * 3)
    f.split(x, xo, xi, 8, pw.TailStrategy.SHIFT_INWARDS).vectorize(xi)
    return f


@pytest.mark.parametrize("width", [1, 3, 8, 13])
def test_an_output_the_schedule_writes_beyond_is_widened_and_cut_back(rng, width):
    image = rng.integers(0, 60000, (4, 21), dtype=np.uint16)
    pipeline = pw.Pipeline(_narrow_offset())
    got = pipeline.compile()([width, 4], {"input": image})
    assert got.shape == (4, width) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, pipeline.realize_reference([width, 4], {"input": image}))


def test_outputs_of_any_size_match_the_reference_and_are_writable(rng):
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = inp[x, y] // 2 + inp[x, y] // 3
    f.vectorize(x, 16, pw.TailStrategy.GUARD_WITH_IF)
    image = rng.integers(0, 256, (9, 40), dtype=np.uint8)
    compiled = pw.Pipeline(f).compile()
    for sizes in ([1, 1], [2, 1], [16, 3], [33, 9], [0, 4]):
        got = compiled(sizes, {"input": image})
        assert got.shape == (sizes[1], sizes[0]) and got.flags.writeable
        np.testing.assert_array_equal(got, pw.Pipeline(f).realize_reference(sizes, {"input": image}))


def test_wrong_sizes_are_refused_as_by_the_general_path(rng):
    compiled = pw.Pipeline(_total()).compile()
    image = rng.integers(0, 256, (4, 4), dtype=np.uint8)
    with pytest.raises(InputError, match="has 0 dimensions, but 1 size was given"):
        compiled([4], {"input": image})
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = inp[x, y]
    two_d = pw.Pipeline(f).compile()
    with pytest.raises(InputError, match="negative"):
        two_d([-1, 2], {"input": image})
    got = two_d((np.int64(3), 2), {"input": image})  # sizes as a tuple of NumPy ints: the general path
    np.testing.assert_array_equal(got, image[:2, :3])
