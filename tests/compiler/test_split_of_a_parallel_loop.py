"""Splitting a loop already marked parallel: as in Halide, both new loops stay parallel
(Pixelweave refused it). Oracles: the reference evaluator, and Halide's loop nest."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def _blur(m):
    x, y = m.Var("x"), m.Var("y")
    image = m.ImageParam(m.UInt(16), 2, "image")
    clamped = m.BoundaryConditions.repeat_edge(image)
    out = m.Func("out")
    out[x, y] = clamped[x - 1, y] / 2 + clamped[x + 1, y + 1] / 2
    out.parallel(y).split(y, m.Var("yo"), m.Var("yi"), 4)
    return out, image


def test_both_loops_of_the_split_stay_parallel_as_in_halide(capfd):
    out, _ = _blur(pw)
    nest = pw.Pipeline(out).loop_nest()
    assert "parallel y.yo" in nest and "parallel y.yi" in nest
    h_out, _ = _blur(hl)
    capfd.readouterr()
    h_out.print_loop_nest()
    printed = capfd.readouterr()
    halide_nest = printed.out + printed.err
    assert "parallel y.yo" in halide_nest and "parallel y.yi" in halide_nest


@pytest.mark.parametrize("height", [3, 9, 16])
def test_a_split_parallel_loop_computes_the_reference(height):
    out, _ = _blur(pw)
    pipeline = pw.Pipeline(out)
    inputs = {"image": (np.arange(17 * 21) % 1000).astype(np.uint16).reshape(17, 21)}
    got = pipeline.compile(level="fast", checked=True)([21, height], inputs)
    np.testing.assert_array_equal(got, pipeline.realize_reference([21, height], inputs))


def test_an_update_loop_split_after_parallel():
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = x + y
    f[x, y] += 3
    f.update(0).parallel(y).split(y, pw.Var("yo"), pw.Var("yi"), 2, pw.TailStrategy.GUARD_WITH_IF)
    pipeline = pw.Pipeline(f)
    got = pipeline.compile(level="fast", checked=True)([5, 7])
    np.testing.assert_array_equal(got, pipeline.realize_reference([5, 7]))
