"""Fusing two loops with other loops between them: as in Halide, the fused loop takes the
inner loop's place and the loops between stay outside it (Pixelweave refused it: the
schedule fuzzer found Halide accepting it). Oracles: Halide's loop nest and the
reference evaluator."""

from __future__ import annotations

import re

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def _planar(m):
    x, y, c = m.Var("x"), m.Var("y"), m.Var("c")
    image = m.ImageParam(m.Int(32), 3, "image")
    out = m.Func("out")
    out[x, y, c] = image[x, y, c] * 3 + x - y * c
    out.fuse(x, c, m.Var("xc"))
    return out


def _loops(nest: str) -> list[str]:
    """The loop variables of a printed loop nest, outermost first, without Func prefixes."""
    return [name.rsplit(".", 1)[-1] for name in re.findall(r"^\s*(?:for|parallel|vectorized|unrolled) (\S+?):?$", nest, re.M)]


def test_the_fused_loop_takes_the_inner_loops_place_as_in_halide(capfd):
    ours = _loops(pw.Pipeline(_planar(pw)).loop_nest())
    capfd.readouterr()
    _planar(hl).print_loop_nest()
    printed = capfd.readouterr()
    assert ours == _loops(printed.out + printed.err) == ["y", "xc"]


@pytest.mark.parametrize("size", [(5, 4, 3), (1, 2, 1), (7, 1, 4)])
def test_the_fused_loop_computes_the_reference(size):
    pipeline = pw.Pipeline(_planar(pw))
    image = (np.arange(int(np.prod(size))) % 97).astype(np.int32).reshape(size[::-1])
    got = pipeline.compile(level="fast", checked=True)(list(size), {"image": image})
    np.testing.assert_array_equal(got, pipeline.realize_reference(list(size), {"image": image}))


def test_reduction_variables_apart_fuse_in_an_update():
    """An update's two reduction variables with a pure loop between them (reordered so)."""
    x, y = pw.Var("x"), pw.Var("y")
    r = pw.RDom([(0, 3), (0, 4)], "r")
    f = pw.Func("f")
    f[x, y] = x + y
    f[x, y] += r.x * 10 + r.y + x
    f.update(0).reorder(r.x, y, r.y, x).fuse(r.x, r.y, pw.RVar("rxy"))
    pipeline = pw.Pipeline(f)
    assert "rxy" in pipeline.loop_nest()
    got = pipeline.compile(level="fast", checked=True)([6, 5])
    np.testing.assert_array_equal(got, pipeline.realize_reference([6, 5]))


def test_a_refused_fuse_of_loops_apart_leaves_the_loop_order():
    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    out = pw.Func("out")
    out[x, y, c] = x + y + c
    before = pw.Pipeline(out).loop_nest()
    with pytest.raises(pw.ScheduleError, match=r"already has a dimension named y"):
        out.fuse(x, c, y)
    assert pw.Pipeline(out).loop_nest() == before
