"""Zero-dimensional Funcs (whole-image reductions) compile and match the reference."""

import numpy as np

import pixelweave as pw


def test_zero_dimensional_sum_and_max(rng):
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    r = pw.RDom([(0, inp.width()), (0, inp.height())])
    total, peak = pw.Func("total"), pw.Func("peak")
    total[()] = pw.u32(0)
    total[()] += pw.u32(inp[r.x, r.y])
    peak[()] = pw.u8(0)
    peak[()] = pw.max(peak[()], inp[r.x, r.y])
    image = rng.integers(0, 256, (37, 53), dtype=np.uint8)
    p = pw.Pipeline([total, peak])
    compiled = p.realize([], {"input": image})
    reference = p.realize_reference([], {"input": image})
    for got, want, expected in zip(compiled, reference, (image.sum(), image.max()), strict=True):
        assert got.shape == () and want.shape == ()
        assert int(got) == int(want) == int(expected)
