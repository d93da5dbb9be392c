"""A pipeline of several outputs called with a list of `out=` arrays on plain inputs
(Compiled's common call): the arrays receive the reference's images, and wrong arrays are
refused with the general path's messages."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import InputError, RuntimeFailure

import pixelweave as pw


def _low_high(width: int = 16, fused: bool = True):
    a, b = pw.ImageParam(pw.UInt(8), 2, "a"), pw.ImageParam(pw.UInt(8), 2, "b")
    x, y = pw.Var("x"), pw.Var("y")
    low, high = pw.Func("low"), pw.Func("high")
    low[x, y] = pw.min(a[x, y], b[x, y])
    high[x, y] = pw.u16(pw.max(a[x, y], b[x, y])) * 3
    low.vectorize(x, width)
    high.vectorize(x, width)
    if fused:
        high.compute_with(low, y)
    return pw.Pipeline([low, high])


@pytest.mark.parametrize("sizes", [[16, 3], [37, 5], [64, 1]])
def test_several_out_arrays_receive_the_reference_images(rng, sizes):
    a = rng.integers(0, 256, (6, 70), dtype=np.uint8)
    b = rng.integers(0, 256, (6, 70), dtype=np.uint8)
    pipeline = _low_high()
    low = np.zeros((sizes[1], sizes[0]), np.uint8)
    high = np.zeros((sizes[1], sizes[0]), np.uint16)
    got = pipeline.compile()(sizes, {"a": a, "b": b}, out=[low, high])
    assert got[0] is low and got[1] is high
    for array, want in zip(got, pipeline.realize_reference(sizes, {"a": a, "b": b}), strict=True):
        np.testing.assert_array_equal(array, want)


def test_wrong_out_arrays_are_refused_with_the_general_messages(rng):
    a = rng.integers(0, 256, (4, 20), dtype=np.uint8)
    compiled = _low_high().compile()
    low, high = np.zeros((4, 20), np.uint8), np.zeros((4, 20), np.uint16)
    with pytest.raises(InputError, match="out= for output `high` must have shape"):
        compiled([20, 4], {"a": a, "b": a}, out=[low, np.zeros((4, 20), np.uint8)])
    with pytest.raises(InputError, match="needs 2 array"):
        compiled([20, 4], {"a": a, "b": a}, out=[low])
    high.flags.writeable = False
    with pytest.raises(InputError, match="read-only"):
        compiled([20, 4], {"a": a, "b": a}, out=[low, high])


def test_out_arrays_narrower_than_the_vectors_are_refused_with_the_way_out(rng):
    a = rng.integers(0, 256, (4, 20), dtype=np.uint8)
    compiled = _low_high(width=16, fused=False).compile()
    with pytest.raises(RuntimeFailure, match="call it without out="):
        compiled([5, 4], {"a": a, "b": a}, out=[np.zeros((4, 5), np.uint8), np.zeros((4, 5), np.uint16)])
