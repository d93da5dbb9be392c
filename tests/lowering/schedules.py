"""The blur schedules of the Halide paper's section 3, and a reduction, as reusable builders."""

from __future__ import annotations

from collections.abc import Callable

import pixelweave as pw


def blur(schedule: str) -> tuple[pw.Pipeline, pw.ImageParam]:
    """A 3x3 box blur of a u16 image (edges repeated) in two passes, scheduled one of the paper's ways."""
    x, y = pw.Var("x"), pw.Var("y")
    xi, yi = pw.Var("xi"), pw.Var("yi")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    blur_x, blur_y = pw.Func("blur_x"), pw.Func("blur_y")
    blur_x[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3
    BLUR_SCHEDULES[schedule](blur_x, blur_y, x, y, xi, yi)
    return pw.Pipeline(blur_y), inp


def _breadth_first(bx, by, x, y, xi, yi):
    bx.compute_root()


def _total_fusion(bx, by, x, y, xi, yi):
    bx.compute_at(by, x)


def _sliding_window(bx, by, x, y, xi, yi):
    bx.store_root().compute_at(by, y)


def _tiled(bx, by, x, y, xi, yi):
    by.tile(x, y, xi, yi, 32, 8)
    bx.compute_at(by, x)


def _sliding_in_tiles(bx, by, x, y, xi, yi):
    yo = pw.Var("yo")
    by.split(y, yo, yi, 16).parallel(yo)
    bx.store_at(by, yo).compute_at(by, yi)


def _parallel_vectorized(bx, by, x, y, xi, yi):
    by.tile(x, y, xi, yi, 64, 16).vectorize(xi, 8).parallel(y)
    bx.compute_at(by, x).vectorize(x, 8)


BLUR_SCHEDULES: dict[str, Callable] = {
    "breadth_first": _breadth_first,
    "total_fusion": _total_fusion,
    "sliding_window": _sliding_window,
    "tiled": _tiled,
    "sliding_in_tiles": _sliding_in_tiles,
    "parallel_vectorized": _parallel_vectorized,
}

PAPER_SCHEDULES = ["breadth_first", "total_fusion", "sliding_window", "tiled", "sliding_in_tiles"]


def histogram_equalize() -> tuple[pw.Pipeline, pw.ImageParam]:
    """Histogram, CDF scan and remap of a u8 image: reductions with update definitions."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    r = pw.RDom([(0, inp.width()), (0, inp.height())], name="r")
    hist = pw.Func("hist")
    hist[x] = 0
    hist[pw.i32(inp[r.x, r.y])] += 1
    ri = pw.RDom([(1, 255)], name="ri")
    cdf = pw.Func("cdf")
    cdf[x] = hist[x]
    cdf[ri] = cdf[ri - 1] + hist[ri]
    out = pw.Func("equalized")
    out[x, y] = pw.u8(cdf[pw.i32(inp[x, y])] * 255 / (inp.width() * inp.height()))
    hist.compute_root()
    cdf.compute_root()
    return pw.Pipeline(out), inp
