"""A small pipeline built the same way in the test process and in a child process."""

import pixelweave as pw


def blur(name: str, vector: int = 8, gain_default: float = 2.0, offset: int = 0) -> pw.Pipeline:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    gain = pw.Param(pw.Float(32), "gain", gain_default)
    bx, by = pw.Func(name + "_x"), pw.Func(name + "_y")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y + offset]) / 3
    by[x, y] = pw.cast(pw.UInt(16), pw.f32(bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) * gain)
    by.vectorize(x, vector)
    return pw.Pipeline(by)
