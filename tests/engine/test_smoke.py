"""A first check that the oracle harness itself works end to end."""

import numpy as np

from tests.engine.oracle import compare_with_halide


def test_blur_matches_halide(camera):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        clamped = m.BoundaryConditions.repeat_edge(inp)
        bx = m.Func("bx")
        bx[x, y] = (m.cast(m.UInt(16), clamped[x - 1, y]) + clamped[x, y] + clamped[x + 1, y]) / 3
        by = m.Func("by")
        by[x, y] = m.cast(m.UInt(8), (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3)
        return by, {"input": inp}

    (out,) = compare_with_halide(build, [512, 512], {"input": camera})
    assert out.shape == (512, 512)
    assert 0 < np.abs(out.astype(int) - camera).mean() < 20
