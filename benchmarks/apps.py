"""The benchmark pipelines, written once against the API Pixelweave shares with Halide.

Each `build_*(m)` takes the module (`engine` or `halide`) and returns (output Func,
{input name: ImageParam/Param}); with `schedule=False` the Funcs keep the default schedule
(for the automatic schedulers). Algorithm and schedule are identical for both, and the
schedules are the CPU schedules of Halide's own apps/ folder (minus directives Pixelweave
does not have, e.g. compute_with and store_in, left out on both sides).
"""

from __future__ import annotations

import math
from typing import Any

VECTOR_F32 = 16  # natural vector width for float32 with AVX-512 (8 with AVX2)
VECTOR_U16 = 32


def build_blur(m: Any, vec: int = VECTOR_U16, schedule: bool = True) -> tuple[Any, dict]:
    """apps/blur: 3x3 box blur of a u16 image (the input is 2 pixels larger in x and y),
    sliding window within strips of 8 rows."""
    x, y, yi = m.Var("x"), m.Var("y"), m.Var("yi")
    inp = m.ImageParam(m.UInt(16), 2, "input")
    blur_x, blur_y = m.Func("blur_x"), m.Func("blur_y")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    blur_y[x, y] = (blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]) / 3
    if not schedule:
        return blur_y, {"input": inp}
    blur_y.split(y, y, yi, 8).parallel(y).vectorize(x, vec)
    blur_x.store_at(blur_y, y).compute_at(blur_y, yi).vectorize(x, vec)
    return blur_y, {"input": inp}


def build_unsharp(m: Any, vec: int = VECTOR_F32, schedule: bool = True) -> tuple[Any, dict]:
    """apps/unsharp: Gaussian unsharp mask on planar RGB float."""
    x, y, c, yo, yi = m.Var("x"), m.Var("y"), m.Var("c"), m.Var("yo"), m.Var("yi")
    sigma = 1.5
    inp = m.ImageParam(m.Float(32), 3, "input")
    k = [math.exp(-i * i / (2 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma) for i in range(4)]
    bounded = m.BoundaryConditions.repeat_edge(inp)
    gray, blur_y, blur_x = m.Func("gray"), m.Func("blur_y"), m.Func("blur_x")
    sharpen, ratio, output = m.Func("sharpen"), m.Func("ratio"), m.Func("output")
    gray[x, y] = 0.299 * bounded[x, y, 0] + 0.587 * bounded[x, y, 1] + 0.114 * bounded[x, y, 2]
    blur_y[x, y] = k[0] * gray[x, y] + sum(k[i] * (gray[x, y - i] + gray[x, y + i]) for i in (1, 2, 3))
    blur_x[x, y] = k[0] * blur_y[x, y] + sum(k[i] * (blur_y[x - i, y] + blur_y[x + i, y]) for i in (1, 2, 3))
    sharpen[x, y] = 2 * gray[x, y] - blur_x[x, y]
    ratio[x, y] = sharpen[x, y] / gray[x, y]
    output[x, y, c] = ratio[x, y] * inp[x, y, c]
    if not schedule:
        return output, {"input": inp}
    output.split(y, yo, yi, 32).vectorize(x, vec).parallel(yo).reorder(x, c, yi, yo)
    for f in (gray, blur_y, ratio):
        f.compute_at(output, yi).store_at(output, yo).vectorize(x, vec)
    return output, {"input": inp}


def build_harris(m: Any, vec: int = VECTOR_F32, schedule: bool = True) -> tuple[Any, dict]:
    """apps/harris: Harris corner response of planar RGB float (output 6 pixels smaller)."""
    x, y, yi = m.Var("x"), m.Var("y"), m.Var("yi")
    inp = m.ImageParam(m.Float(32), 3, "input")

    def sum3x3(f: Any) -> Any:
        return sum(f[x + i, y + j] for i in (-1, 0, 1) for j in (-1, 0, 1))

    gray, ix, iy = m.Func("gray"), m.Func("Ix"), m.Func("Iy")
    ixx, iyy, ixy = m.Func("Ixx"), m.Func("Iyy"), m.Func("Ixy")
    sxx, syy, sxy = m.Func("Sxx"), m.Func("Syy"), m.Func("Sxy")
    det, trace, output = m.Func("det"), m.Func("trace"), m.Func("output")
    gray[x, y] = 0.299 * inp[x + 3, y + 3, 0] + 0.587 * inp[x + 3, y + 3, 1] + 0.114 * inp[x + 3, y + 3, 2]
    iy[x, y] = (
        gray[x - 1, y - 1] * (-1.0 / 12) + gray[x - 1, y + 1] * (1.0 / 12)
        + gray[x, y - 1] * (-2.0 / 12) + gray[x, y + 1] * (2.0 / 12)
        + gray[x + 1, y - 1] * (-1.0 / 12) + gray[x + 1, y + 1] * (1.0 / 12)
    )  # fmt: skip
    ix[x, y] = (
        gray[x - 1, y - 1] * (-1.0 / 12) + gray[x + 1, y - 1] * (1.0 / 12)
        + gray[x - 1, y] * (-2.0 / 12) + gray[x + 1, y] * (2.0 / 12)
        + gray[x - 1, y + 1] * (-1.0 / 12) + gray[x + 1, y + 1] * (1.0 / 12)
    )  # fmt: skip
    ixx[x, y] = ix[x, y] * ix[x, y]
    iyy[x, y] = iy[x, y] * iy[x, y]
    ixy[x, y] = ix[x, y] * iy[x, y]
    sxx[x, y] = sum3x3(ixx)
    syy[x, y] = sum3x3(iyy)
    sxy[x, y] = sum3x3(ixy)
    det[x, y] = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace[x, y] = sxx[x, y] + syy[x, y]
    output[x, y] = det[x, y] - 0.04 * trace[x, y] * trace[x, y]
    if not schedule:
        return output, {"input": inp}
    output.split(y, y, yi, 32).parallel(y).vectorize(x, vec)
    for f in (ix, iy):
        f.store_at(output, y).compute_at(output, yi).vectorize(x, vec)
    return output, {"input": inp}


def build_bilateral_grid(m: Any, vec: int = 8, s_sigma: int = 8, schedule: bool = True) -> tuple[Any, dict]:
    """apps/bilateral_grid: edge-preserving smoothing of a gray float image."""
    x, y, z, c = m.Var("x"), m.Var("y"), m.Var("z"), m.Var("c")
    inp = m.ImageParam(m.Float(32), 2, "input")
    r_sigma = m.Param(m.Float(32), "r_sigma", 0.1)
    clamped = m.BoundaryConditions.repeat_edge(inp)
    r = m.RDom([(0, s_sigma), (0, s_sigma)], "r")
    val = clamped[x * s_sigma + r.x - s_sigma // 2, y * s_sigma + r.y - s_sigma // 2]
    val = m.clamp(val, 0.0, 1.0)
    zi = m.cast(m.Int(32), val * (1.0 / r_sigma) + 0.5)
    histogram = m.Func("histogram")
    histogram[x, y, z, c] = 0.0
    histogram[x, y, zi, c] += m.select(c == 0, val, 1.0)
    blurz, blurx, blury = m.Func("blurz"), m.Func("blurx"), m.Func("blury")
    blurz[x, y, z, c] = (
        histogram[x, y, z - 2, c] + histogram[x, y, z - 1, c] * 4 + histogram[x, y, z, c] * 6
        + histogram[x, y, z + 1, c] * 4 + histogram[x, y, z + 2, c]
    )  # fmt: skip
    blurx[x, y, z, c] = (
        blurz[x - 2, y, z, c] + blurz[x - 1, y, z, c] * 4 + blurz[x, y, z, c] * 6
        + blurz[x + 1, y, z, c] * 4 + blurz[x + 2, y, z, c]
    )  # fmt: skip
    blury[x, y, z, c] = (
        blurx[x, y - 2, z, c] + blurx[x, y - 1, z, c] * 4 + blurx[x, y, z, c] * 6
        + blurx[x, y + 1, z, c] * 4 + blurx[x, y + 2, z, c]
    )  # fmt: skip
    val2 = m.clamp(inp[x, y], 0.0, 1.0)
    zv = val2 * (1.0 / r_sigma)
    zi2 = m.cast(m.Int(32), zv)
    zf = zv - zi2
    xf = m.cast(m.Float(32), x % s_sigma) / s_sigma
    yf = m.cast(m.Float(32), y % s_sigma) / s_sigma
    xi, yi = x / s_sigma, y / s_sigma
    interpolated = m.Func("interpolated")
    interpolated[x, y, c] = m.lerp(
        m.lerp(
            m.lerp(blury[xi, yi, zi2, c], blury[xi + 1, yi, zi2, c], xf),
            m.lerp(blury[xi, yi + 1, zi2, c], blury[xi + 1, yi + 1, zi2, c], xf),
            yf,
        ),
        m.lerp(
            m.lerp(blury[xi, yi, zi2 + 1, c], blury[xi + 1, yi, zi2 + 1, c], xf),
            m.lerp(blury[xi, yi + 1, zi2 + 1, c], blury[xi + 1, yi + 1, zi2 + 1, c], xf),
            yf,
        ),
        zf,
    )
    output = m.Func("bilateral_grid")
    output[x, y] = interpolated[x, y, 0] / interpolated[x, y, 1]
    if not schedule:
        return output, {"input": inp, "r_sigma": r_sigma}
    blurz.compute_at(blurx, y).reorder(c, z, x, y).vectorize(x, vec).unroll(c)
    histogram.compute_at(blurz, y)
    histogram.update(0).reorder(c, r.x, r.y, x, y).unroll(c)
    blurx.compute_root().reorder(c, x, z, y).parallel(y).vectorize(x, vec).unroll(c)
    blury.compute_at(output, y).reorder(c, x, y, z).reorder_storage(c, z, x, y).vectorize(x, vec).unroll(c)
    output.compute_root().parallel(y, 8).vectorize(x, vec)
    return output, {"input": inp, "r_sigma": r_sigma}
