"""Storage sizes are computed in 64 bits and checked: a region too large for 32-bit indexing
is an error naming the Func (at compile time when constant, at run time otherwise), never a
wrapped size that would allocate too little."""

from __future__ import annotations

import numpy as np
import pytest

import pixelweave as pw


def test_a_constant_absurd_region_is_refused_when_compiling():
    x, y = pw.Var("x"), pw.Var("y")
    f, g = pw.Func("huge"), pw.Func("g")
    f[x, y] = x + y
    r = pw.RDom([(0, 2**28), (0, 3)])
    g[x, y] = 0
    g[x, y] += f[r.x, r.y]
    f.compute_root()
    with pytest.raises(pw.BoundsError) as err:
        pw.Pipeline(g).compile(level="fast")
    assert str(err.value).startswith(
        "the storage of `huge` would need at least 2147483648 bytes (268435456 x 3 elements of int32), "
        "more than the 2147483647 bytes that 32-bit indexing addresses; bound the region"
    )


def test_a_region_too_large_for_the_requested_size_fails_at_run_time():
    """f's region is 70000 times g's width: 40000 columns need 2.8e9 int32 elements, whose
    32-bit product would wrap; the call fails before allocating."""
    x, y = pw.Var("x"), pw.Var("y")
    f, g = pw.Func("wide"), pw.Func("g")
    f[x, y] = x
    g[x, y] = f[x * 70000, y]
    f.compute_root()
    fn = pw.Pipeline(g).compile(level="fast")
    with pytest.raises(pw.RuntimeFailure) as err:
        fn([40000, 1])
    assert str(err.value).startswith(
        "the storage of `wide` would need at least 2147483648 bytes (2799930001 x 1 elements of int32), more than"
    )
    assert fn([3, 2]).tolist() == [[0, 70000, 140000], [0, 70000, 140000]]


def test_a_region_whose_32_bit_size_would_wrap_is_refused_before_allocating():
    """2 rows of 2^30 + 1 columns: 2^31 + 2 elements, negative as an int32 product (an
    allocation of nothing, then writes far outside it); in 64 bits it is refused."""
    x, y = pw.Var("x"), pw.Var("y")
    f, g = pw.Func("spread"), pw.Func("g")
    f[x, y] = x
    g[x, y] = f[pw.clamp(x, 0, 10) * 2**30, y]
    f.compute_root()
    fn = pw.Pipeline(g).compile(level="fast", checked=True)
    with pytest.raises(pw.RuntimeFailure, match=r"storage of `spread` would need at least 2147483648 bytes \(1073741825 x 2 "):
        fn([2, 2])


def test_ordinary_sizes_still_run():
    x, y = pw.Var("x"), pw.Var("y")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = x * 3 + y
    g[x, y] = f[x + 1, y] - f[x, y]
    f.compute_root()
    assert np.all(pw.Pipeline(g).compile(level="fast")([5, 4]) == 3)
