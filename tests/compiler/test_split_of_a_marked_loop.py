"""Splitting a loop already vectorized or unrolled: as in Halide, both new loops keep the
mark (Pixelweave refused it: the schedule fuzzer found Halide accepting such schedules).
Oracles: Halide's loop nest and the reference evaluator."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def _stencil(m, mark: str, inner: int, outer_split: int, tail):
    """out(x, y) = 2 in(x, y) + 3 in(x + 1, y) + y, x split by `inner`, the inner loop
    marked, then split again by `outer_split`."""
    x, y = m.Var("x"), m.Var("y")
    xo, xi, xio, xii = m.Var("xo"), m.Var("xi"), m.Var("xio"), m.Var("xii")
    image = m.ImageParam(m.Int(32), 2, "image")
    out = m.Func("out")
    out[x, y] = image[x, y] * 2 + image[x + 1, y] * 3 + y
    getattr(out.split(x, xo, xi, inner), mark)(xi)
    out.split(xi, xio, xii, outer_split, tail)
    return out


@pytest.mark.parametrize("mark", ["vectorize", "unroll"])
def test_both_loops_keep_the_mark_as_in_halide(mark, capfd):
    word = {"vectorize": "vectorized", "unroll": "unrolled"}[mark]
    nest = pw.Pipeline(_stencil(pw, mark, 8, 4, pw.TailStrategy.AUTO)).loop_nest()
    assert f"{word} x.xi.xio" in nest and f"{word} x.xi.xii" in nest
    capfd.readouterr()
    _stencil(hl, mark, 8, 4, hl.TailStrategy.Auto).print_loop_nest()
    printed = capfd.readouterr()
    halide_nest = printed.out + printed.err
    assert f"{word} x.xi.xio" in halide_nest and f"{word} x.xi.xii" in halide_nest


@pytest.mark.parametrize("mark", ["vectorize", "unroll"])
@pytest.mark.parametrize(("inner", "outer_split"), [(8, 4), (8, 3), (6, 2)])
@pytest.mark.parametrize("tail", [pw.TailStrategy.AUTO, pw.TailStrategy.GUARD_WITH_IF, pw.TailStrategy.SHIFT_INWARDS])
@pytest.mark.parametrize("width", [37, 8])
def test_the_split_marked_loop_computes_the_reference(mark, inner, outer_split, tail, width):
    pipeline = pw.Pipeline(_stencil(pw, mark, inner, outer_split, tail))
    image = (np.arange(5 * (width + 1)) % 1000).astype(np.int32).reshape(5, width + 1)
    got = pipeline.compile(level="fast", checked=True)([width, 5], {"image": image})
    np.testing.assert_array_equal(got, pipeline.realize_reference([width, 5], {"image": image}))


def test_a_split_vectorized_loop_of_unknown_extent_is_refused_when_lowered():
    x, y = pw.Var("x"), pw.Var("y")
    out = pw.Func("out")
    out[x, y] = x + y
    out.vectorize(x).split(x, pw.Var("xo"), pw.Var("xi"), 4)
    with pytest.raises(pw.ScheduleError, match=r"cannot vectorize loop x\.xo of Func `out`: its extent .* not a constant"):
        pw.Pipeline(out).realize([16, 4])


def test_a_gpu_loop_is_still_split_before_it_is_mapped():
    x, y = pw.Var("x"), pw.Var("y")
    out = pw.Func("out")
    out[x, y] = x + y
    out.gpu_blocks(x)
    with pytest.raises(pw.ScheduleError, match=r"already a gpu_block loop; split first, then map the new loops"):
        out.split(x, pw.Var("xo"), pw.Var("xi"), 4)
