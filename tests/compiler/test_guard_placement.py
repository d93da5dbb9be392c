"""A GuardWithIf split of a loop that an earlier split made: its guard tests the split
variable before the variables computed from it, so the region the stage writes is exact.
(The guard used to sit inside every let, where interval analysis saw the unguarded range:
the output check then refused every size. Halide accepts the schedule.)"""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def _nested(m):
    x, y = m.Var("x"), m.Var("y")
    yo, yi, yio, yii = m.Var("yo"), m.Var("yi"), m.Var("yio"), m.Var("yii")
    out = m.Func("out")
    out[x, y] = x + y * 7
    out.split(y, yo, yi, 16).split(yi, yio, yii, 3, m.TailStrategy.GuardWithIf if m is hl else pw.TailStrategy.GUARD_WITH_IF)
    out.unroll(yio, 3)
    return out


@pytest.mark.parametrize("height", [4, 16, 32, 37])
def test_a_guarded_split_of_an_inner_loop_writes_only_the_output(height):
    pipeline = pw.Pipeline(_nested(pw))
    got = pipeline.compile(level="fast", checked=True)([5, height])
    np.testing.assert_array_equal(got, pipeline.realize_reference([5, height]))
    np.testing.assert_array_equal(got, np.asarray(_nested(hl).realize([5, height])))
    if height >= 16:  # the output holds what the schedule writes: out= arrays of the size are fine
        out = np.zeros((height, 5), np.int32)
        pipeline.compile(level="fast")([5, height], out=out)
        np.testing.assert_array_equal(out, got)
