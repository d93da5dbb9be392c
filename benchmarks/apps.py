"""The benchmark pipelines, written once against the API Pixelweave shares with Halide.

Each `build_*(m)` takes the module (`engine` or `halide`) and returns (output Func,
{input name: ImageParam/Param}); with `schedule=False` the Funcs keep the default schedule
(for the automatic schedulers). Algorithm and schedule are identical for both, and the
schedules are the CPU schedules of Halide's own apps/ folder: Harris's with its
`Ix.compute_with(Iy, x)` and gray stored per strip, the bilateral grid's with `blury` on
the stack, the camera pipe's with its tiles, folded storage and RoundUp tails (but not its
prefetch, which Pixelweave does not have: left out on both sides).
"""

from __future__ import annotations

import math
from typing import Any

VECTOR_F32 = 16  # natural vector width for float32 with AVX-512 (8 with AVX2)
VECTOR_U16 = 32


def build_blur(
    m: Any, vec: int = VECTOR_U16, schedule: bool = True, gpu: bool = False, gpu_vector: int = 1
) -> tuple[Any, dict]:
    """apps/blur: 3x3 box blur of a u16 image (the input is 2 pixels larger in x and y),
    sliding window within strips of 8 rows. gpu=True: the GPU schedule instead (16x16
    output tiles on GPU blocks and threads, blur_x per tile in local memory on the threads);
    gpu_vector > 1: each work-item computes that many neighbouring pixels as one vector."""
    x, y, yi = m.Var("x"), m.Var("y"), m.Var("yi")
    inp = m.ImageParam(m.UInt(16), 2, "input")
    blur_x, blur_y = m.Func("blur_x"), m.Func("blur_y")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    blur_y[x, y] = (blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]) / 3
    if not schedule:
        return blur_y, {"input": inp}
    if gpu:
        xo, yo, xi = m.Var("xo"), m.Var("yo"), m.Var("xi")
        if gpu_vector > 1:
            xv = m.Var("xv")
            blur_y.tile(x, y, xo, yo, xi, yi, 16, 16).split(xi, xi, xv, gpu_vector).vectorize(xv)
            blur_y.gpu_blocks(xo, yo).gpu_threads(xi, yi)
            blur_x.compute_at(blur_y, xo).split(x, x, xv, gpu_vector).vectorize(xv).gpu_threads(x, y)
            return blur_y, {"input": inp}
        blur_y.gpu_tile(x, y, xo, yo, xi, yi, 16, 16)
        blur_x.compute_at(blur_y, xo).gpu_threads(x, y)
        return blur_y, {"input": inp}
    blur_y.split(y, y, yi, 8).parallel(y).vectorize(x, vec)
    blur_x.store_at(blur_y, y).compute_at(blur_y, yi).vectorize(x, vec)
    return blur_y, {"input": inp}


def build_unsharp(m: Any, vec: int = VECTOR_F32, schedule: bool = True, gpu: bool = False) -> tuple[Any, dict]:
    """apps/unsharp: Gaussian unsharp mask on planar RGB float. gpu=True: Halide's GPU
    schedule (32x32 output tiles; gray and blur_y per tile in local memory, 2x2 and 2x1
    pixels per work-item)."""
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
    if gpu:
        xi = m.Var("xi")
        output.compute_root().reorder(c, x, y).gpu_tile(x, y, xi, yi, 32, 32).bound(c, 0, 3).unroll(c)
        ratio.compute_at(output, xi)
        gray.compute_at(output, x).tile(x, y, xi, yi, 2, 2).unroll(xi).unroll(yi).gpu_threads(x, y)
        blur_y.compute_at(output, x).unroll(x, 2).gpu_threads(x, y)
        return output, {"input": inp}
    output.split(y, yo, yi, 32).vectorize(x, vec).parallel(yo).reorder(x, c, yi, yo)
    for f in (gray, blur_y, ratio):
        f.compute_at(output, yi).store_at(output, yo).vectorize(x, vec)
    return output, {"input": inp}


def build_harris(m: Any, vec: int = VECTOR_F32, schedule: bool = True, gpu: bool = False) -> tuple[Any, dict]:
    """apps/harris: Harris corner response of planar RGB float (output 6 pixels smaller).
    gpu=True: Halide's GPU schedule (62x14 output tiles; gray, Ix and Iy per tile in local
    memory, their 2x2 wrappers per work-item), without its Ix.compute_with(Iy, x) (written
    when Pixelweave refused compute_with on target "opencl"; kept so the OpenCL table's
    history compares like with like), so gray's wrapper is one per consumer."""
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
    if gpu:
        # Halide marks loops for the GPU and then splits them (the outer part stays a GPU
        # loop); Pixelweave splits first, so the same loops are written in that order.
        xi, xu = m.Var("xi"), m.Var("xu")
        output.tile(x, y, xi, yi, 62, 14).split(xi, xi, xu, 2).unroll(xu).gpu_blocks(x, y).gpu_threads(xi, yi)
        gray.compute_at(output, x).tile(x, y, xi, yi, 3, 2).unroll(xi).unroll(yi).gpu_threads(x, y)
        for consumer in (ix, iy):  # one wrapper each: without compute_with, Ix and Iy have separate loops
            gray.in_(consumer).compute_at(consumer, x).vectorize(x, 2).unroll(x).unroll(y)
        ix.compute_at(output, x).split(x, x, xu, 2).unroll(xu).gpu_threads(x, y)
        iy.compute_at(output, x).split(x, x, xu, 2).unroll(xu).gpu_threads(x, y)
        ix.in_().compute_at(output, xi).vectorize(x, 2).unroll(x).unroll(y)
        iy.in_().compute_at(output, xi).vectorize(x, 2).unroll(x).unroll(y)
        return output, {"input": inp}
    output.split(y, y, yi, 32).parallel(y).vectorize(x, vec)
    for f in (gray, ix, iy):
        f.store_at(output, y).compute_at(output, yi).vectorize(x, vec)
    ix.compute_with(iy, x)
    return output, {"input": inp}


def build_bilateral_grid(
    m: Any, vec: int = 8, s_sigma: int = 8, schedule: bool = True, gpu: bool = False
) -> tuple[Any, dict]:
    """apps/bilateral_grid: edge-preserving smoothing of a gray float image. gpu=True:
    Halide's GPU schedule (blurz in 8x8 grid tiles with their histograms in local memory,
    blurx, blury and the output in 32x8 tiles)."""
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
    if gpu:
        xi, yi, zi = m.Var("xi"), m.Var("yi"), m.Var("zi")
        round_up = m.TailStrategy.RoundUp
        blurz.compute_root().reorder(c, z, x, y).gpu_tile(x, y, xi, yi, 8, 8)
        histogram.reorder(c, z, x, y).compute_at(blurz, x).gpu_threads(x, y)
        histogram.update(0).reorder(c, r.x, r.y, x, y).gpu_threads(x, y).unroll(c)
        for f in (blurx, blury):
            f.compute_root().reorder(c, x, y, z).reorder_storage(c, x, y, z).vectorize(c).unroll(y, 2, round_up)
            f.gpu_tile(x, y, z, xi, yi, zi, 32, 8, 1, round_up)
        output.compute_root().gpu_tile(x, y, xi, yi, 32, 8)
        interpolated.compute_at(output, xi).vectorize(c)
        return output, {"input": inp, "r_sigma": r_sigma}
    blurz.compute_at(blurx, y).reorder(c, z, x, y).vectorize(x, vec).unroll(c)
    histogram.compute_at(blurz, y)
    histogram.update(0).reorder(c, r.x, r.y, x, y).unroll(c)
    blurx.compute_root().reorder(c, x, z, y).parallel(y).vectorize(x, vec).unroll(c)
    blury.compute_at(output, y).store_in(m.MemoryType.Stack).reorder(c, x, y, z).reorder_storage(c, z, x, y)
    blury.vectorize(x, vec).unroll(c)
    output.compute_root().parallel(y, 8).vectorize(x, vec)
    return output, {"input": inp, "r_sigma": r_sigma}


def _downsample(m: Any, f: Any, x: Any, y: Any, name: str, extra: tuple = ()) -> Any:
    """Halide's local_laplacian downsample: [1 3 3 1] / 8 in x, then in y."""
    dx, dy = m.Func(f"{name}_dx"), m.Func(name)
    dx[(x, y, *extra)] = (
        f[(2 * x - 1, y, *extra)]
        + 3.0 * (f[(2 * x, y, *extra)] + f[(2 * x + 1, y, *extra)])
        + f[(2 * x + 2, y, *extra)]
    ) / 8.0
    dy[(x, y, *extra)] = (
        dx[(x, 2 * y - 1, *extra)]
        + 3.0 * (dx[(x, 2 * y, *extra)] + dx[(x, 2 * y + 1, *extra)])
        + dx[(x, 2 * y + 2, *extra)]
    ) / 8.0
    return dy


def _upsample(m: Any, f: Any, x: Any, y: Any, name: str, extra: tuple = ()) -> Any:
    """Halide's local_laplacian upsample: linear interpolation by 2 in x, then in y."""
    ux, uy = m.Func(f"{name}_ux"), m.Func(name)
    ux[(x, y, *extra)] = 0.25 * f[((x // 2) - 1 + 2 * (x % 2), y, *extra)] + 0.75 * f[(x // 2, y, *extra)]
    uy[(x, y, *extra)] = 0.25 * ux[(x, (y // 2) - 1 + 2 * (y % 2), *extra)] + 0.75 * ux[(x, y // 2, *extra)]
    return uy


def build_local_laplacian(
    m: Any, vec: int = 8, levels: int = 8, pyramid_levels: int = 8, gpu: bool = False, schedule: bool = True
) -> tuple[Any, dict]:
    """apps/local_laplacian: local contrast enhancement of a planar RGB u16 image with
    Gaussian and Laplacian pyramids (8 intensity levels, 8 pyramid levels). gpu=True:
    Halide's GPU schedule (every pyramid level at root in 16x8 tiles, 2x2 from level 4)."""
    x, y, c, k = m.Var("x"), m.Var("y"), m.Var("c"), m.Var("k")
    inp = m.ImageParam(m.UInt(16), 3, "input")
    alpha = m.Param(m.Float(32), "alpha", 1.0)
    beta = m.Param(m.Float(32), "beta", 1.0)
    n = pyramid_levels
    remap = m.Func("remap")
    fx = m.cast(m.Float(32), x) / 256.0
    remap[x] = alpha * fx * m.exp(-fx * fx / 2.0)
    clamped = m.BoundaryConditions.repeat_edge(inp)
    floating = m.Func("floating")
    floating[x, y, c] = m.cast(m.Float(32), clamped[x, y, c]) / 65535.0
    gray = m.Func("gray")
    gray[x, y] = 0.299 * floating[x, y, 0] + 0.587 * floating[x, y, 1] + 0.114 * floating[x, y, 2]
    g_pyr, l_pyr, in_g_pyr, out_l_pyr, out_g_pyr = [], [], [], [], []
    level = k * (1.0 / (levels - 1))
    idx = m.clamp(m.cast(m.Int(32), gray[x, y] * float(levels - 1) * 256.0), 0, (levels - 1) * 256)
    g0 = m.Func("gPyramid0")
    g0[x, y, k] = beta * (gray[x, y] - level) + level + remap[idx - 256 * k]
    g_pyr.append(g0)
    for j in range(1, n):
        g_pyr.append(_downsample(m, g_pyr[j - 1], x, y, f"gPyramid{j}", (k,)))
    l_pyr = [None] * n
    l_pyr[n - 1] = g_pyr[n - 1]
    for j in range(n - 2, -1, -1):
        up = _upsample(m, g_pyr[j + 1], x, y, f"gUp{j}", (k,))
        lp = m.Func(f"lPyramid{j}")
        lp[x, y, k] = g_pyr[j][x, y, k] - up[x, y, k]
        l_pyr[j] = lp
    in_g_pyr.append(gray)
    for j in range(1, n):
        in_g_pyr.append(_downsample(m, in_g_pyr[j - 1], x, y, f"inGPyramid{j}"))
    for j in range(n):
        lv = in_g_pyr[j][x, y] * float(levels - 1)
        li = m.clamp(m.cast(m.Int(32), lv), 0, levels - 2)
        lf = lv - m.cast(m.Float(32), li)
        ol = m.Func(f"outLPyramid{j}")
        ol[x, y] = (1.0 - lf) * l_pyr[j][x, y, li] + lf * l_pyr[j][x, y, li + 1]
        out_l_pyr.append(ol)
    out_g_pyr = [None] * n
    out_g_pyr[n - 1] = out_l_pyr[n - 1]
    for j in range(n - 2, -1, -1):
        up = _upsample(m, out_g_pyr[j + 1], x, y, f"outUp{j}")
        og = m.Func(f"outGPyramid{j}")
        og[x, y] = up[x, y] + out_l_pyr[j][x, y]
        out_g_pyr[j] = og
    color = m.Func("color")
    eps = 0.01
    color[x, y, c] = out_g_pyr[0][x, y] * (floating[x, y, c] + eps) / (gray[x, y] + eps)
    output = m.Func("local_laplacian")
    output[x, y, c] = m.cast(m.UInt(16), m.clamp(color[x, y, c], 0.0, 1.0) * 65535.0)
    if not schedule:
        return output, {"input": inp, "alpha": alpha, "beta": beta}
    if gpu:
        remap.compute_root()
        xi, yi = m.Var("xi"), m.Var("yi")
        _never_partition(output.compute_root())
        output.gpu_tile(x, y, xi, yi, 16, 8)
        for j in range(n):
            block_w, block_h = (16, 8) if j <= 3 else (2, 2)
            if j > 0:
                _never_partition(in_g_pyr[j].compute_root())
                in_g_pyr[j].gpu_tile(x, y, xi, yi, block_w, block_h)
                _never_partition(g_pyr[j].compute_root().reorder(k, x, y))
                g_pyr[j].gpu_tile(x, y, xi, yi, block_w, block_h)
            _never_partition(out_g_pyr[j].compute_root())
            out_g_pyr[j].gpu_tile(x, y, xi, yi, block_w, block_h)
        return output, {"input": inp, "alpha": alpha, "beta": beta}
    # Halide's CPU schedule (apps/local_laplacian, non-autoscheduled).
    remap.compute_root()
    output.reorder(c, x, y).split(y, y, m.Var("yi"), 32).parallel(y).vectorize(x, vec)
    gray.compute_root().parallel(y, 32).vectorize(x, vec)
    for j in range(4):
        if j > 0:
            in_g_pyr[j].compute_root().parallel(y, 32).vectorize(x, vec)
        g_pyr[j].compute_root().reorder_storage(x, k, y).reorder(k, y).parallel(y, 8).vectorize(x, vec)
        out_g_pyr[j].compute_root().parallel(y, 32).vectorize(x, vec)
    for j in range(4, n):
        in_g_pyr[j].compute_root()
        g_pyr[j].compute_root().parallel(k)
        out_g_pyr[j].compute_root()
    return output, {"input": inp, "alpha": alpha, "beta": beta}


def build_camera_pipe(m: Any, vec: int = VECTOR_U16, strip: int = 32, schedule: bool = True) -> tuple[Any, dict]:
    """apps/camera_pipe: raw Bayer u16 -> RGB u8 (hot pixel suppression, deinterleave,
    edge-aware demosaic, colour correction, tone curve); output cropped by the 32x24
    border the algorithm needs, its size a multiple of 2*vec x 2 (the RoundUp tiles).
    Halide's colour matrix and curve are computed from colour temperature, gamma and
    contrast; here they are fixed (the same for both)."""
    x, y, c = m.Var("x"), m.Var("y"), m.Var("c")
    yo, yi = m.Var("yo"), m.Var("yi")
    inp = m.ImageParam(m.UInt(16), 2, "input")
    i16 = m.Int(16)

    def avg(a: Any, b: Any) -> Any:
        return m.cast(i16, (m.cast(m.Int(32), a) + m.cast(m.Int(32), b) + 1) // 2)

    shifted = m.Func("shifted")
    shifted[x, y] = m.cast(i16, inp[x + 16, y + 12])
    denoised = m.Func("denoised")
    a = m.max(m.max(shifted[x - 2, y], shifted[x + 2, y]), m.max(shifted[x, y - 2], shifted[x, y + 2]))
    denoised[x, y] = m.clamp(shifted[x, y], m.cast(i16, 0), a)
    deinterleaved = m.Func("deinterleaved")
    deinterleaved[x, y, c] = m.select(
        c == 0, denoised[2 * x, 2 * y],
        m.select(c == 1, denoised[2 * x + 1, 2 * y],
                 m.select(c == 2, denoised[2 * x, 2 * y + 1], denoised[2 * x + 1, 2 * y + 1])),
    )  # fmt: skip
    g_gr, r_r, b_b, g_gb = (m.Func(n) for n in ("g_gr", "r_r", "b_b", "g_gb"))
    for k, f in enumerate((g_gr, r_r, b_b, g_gb)):
        f[x, y] = deinterleaved[x, y, k]
    g_r, g_b = m.Func("g_r"), m.Func("g_b")
    gv_r, gvd_r = avg(g_gb[x, y - 1], g_gb[x, y]), m.absd(g_gb[x, y - 1], g_gb[x, y])
    gh_r, ghd_r = avg(g_gr[x + 1, y], g_gr[x, y]), m.absd(g_gr[x + 1, y], g_gr[x, y])
    g_r[x, y] = m.select(ghd_r < gvd_r, gh_r, gv_r)
    gv_b, gvd_b = avg(g_gr[x, y + 1], g_gr[x, y]), m.absd(g_gr[x, y + 1], g_gr[x, y])
    gh_b, ghd_b = avg(g_gb[x - 1, y], g_gb[x, y]), m.absd(g_gb[x - 1, y], g_gb[x, y])
    g_b[x, y] = m.select(ghd_b < gvd_b, gh_b, gv_b)
    r_gr, b_gr, r_gb, b_gb, r_b, b_r = (m.Func(n) for n in ("r_gr", "b_gr", "r_gb", "b_gb", "r_b", "b_r"))
    r_gr[x, y] = g_gr[x, y] - avg(g_r[x, y], g_r[x - 1, y]) + avg(r_r[x, y], r_r[x - 1, y])
    b_gr[x, y] = g_gr[x, y] - avg(g_b[x, y], g_b[x, y - 1]) + avg(b_b[x, y], b_b[x, y - 1])
    r_gb[x, y] = g_gb[x, y] - avg(g_r[x, y], g_r[x, y + 1]) + avg(r_r[x, y], r_r[x, y + 1])
    b_gb[x, y] = g_gb[x, y] - avg(g_b[x, y], g_b[x + 1, y]) + avg(b_b[x, y], b_b[x + 1, y])
    rp_b = g_b[x, y] - avg(g_r[x, y], g_r[x - 1, y + 1]) + avg(r_r[x, y], r_r[x - 1, y + 1])
    rn_b = g_b[x, y] - avg(g_r[x - 1, y], g_r[x, y + 1]) + avg(r_r[x - 1, y], r_r[x, y + 1])
    r_b[x, y] = m.select(
        m.absd(r_r[x, y], r_r[x - 1, y + 1]) < m.absd(r_r[x - 1, y], r_r[x, y + 1]), rp_b, rn_b
    )  # fmt: skip
    bp_r = g_r[x, y] - avg(g_b[x, y], g_b[x + 1, y - 1]) + avg(b_b[x, y], b_b[x + 1, y - 1])
    bn_r = g_r[x, y] - avg(g_b[x + 1, y], g_b[x, y - 1]) + avg(b_b[x + 1, y], b_b[x, y - 1])
    b_r[x, y] = m.select(
        m.absd(b_b[x, y], b_b[x + 1, y - 1]) < m.absd(b_b[x + 1, y], b_b[x, y - 1]), bp_r, bn_r
    )  # fmt: skip

    def interleave(f00: Any, f10: Any, f01: Any, f11: Any) -> Any:
        hx, hy = x // 2, y // 2
        top = m.select(x % 2 == 0, f00[hx, hy], f10[hx, hy])
        bottom = m.select(x % 2 == 0, f01[hx, hy], f11[hx, hy])
        return m.select(y % 2 == 0, top, bottom)

    demosaiced = m.Func("demosaiced")
    demosaiced[x, y, c] = m.select(
        c == 0, interleave(r_gr, r_r, r_b, r_gb),
        m.select(c == 1, interleave(g_gr, g_r, g_b, g_gb), interleave(b_gr, b_r, b_b, b_gb)),
    )  # fmt: skip
    matrix = [
        [1.6697, -0.2693, -0.4004, -42.4346],
        [-0.3576, 1.0615, 1.5949, -50.2480],
        [-0.2175, -1.8751, 6.9640, -13.2319],
    ]
    mi = [[round(256 * v) for v in row] for row in matrix]
    ir, ig, ib = (m.cast(m.Int(32), demosaiced[x, y, k]) for k in range(3))
    rows = [mi[k][3] * 256 + mi[k][0] * ir + mi[k][1] * ig + mi[k][2] * ib for k in range(3)]
    corrected = m.Func("corrected")
    corrected[x, y, c] = m.cast(i16, m.select(c == 0, rows[0], m.select(c == 1, rows[1], rows[2])) // 256)
    curve = m.Func("curve")
    gamma, contrast, min_raw, max_raw = 2.0, 50.0, 25, 1023
    xf = m.clamp(m.cast(m.Float(32), x - min_raw) / float(max_raw - min_raw), 0.0, 1.0)
    g = m.pow(xf, 1.0 / gamma)
    b = 2.0 - 2.0 ** (contrast / 100.0)
    a2 = 2.0 - 2.0 * b
    z = m.select(g > 0.5, 1.0 - (a2 * (1.0 - g) * (1.0 - g) + b * (1.0 - g)), a2 * g * g + b * g)
    val = m.cast(m.UInt(8), m.clamp(z * 255.0 + 0.5, 0.0, 255.0))
    curve[x] = m.select(x <= min_raw, m.cast(m.UInt(8), 0), m.select(x > max_raw, m.cast(m.UInt(8), 255), val))
    processed = m.Func("camera_pipe")
    processed[x, y, c] = curve[m.cast(m.Int(32), m.clamp(corrected[x, y, c], m.cast(i16, 0), m.cast(i16, 1023)))]
    if not schedule:
        return processed, {"input": inp}
    # Halide's CPU schedule: 32-row strips of 2*vec x 2 tiles, each tile's corrected and
    # demosaiced pixels computed in it, green at the red and blue sites computed per row and
    # stored in two rows, denoised and deinterleaved in folded per-strip storage. Left out
    # on both sides: denoised's prefetch (Pixelweave has no prefetch directive) and the
    # output's bound() to multiples of the tile (the benchmark's size is one).
    xi, yii = m.Var("xi"), m.Var("yii")
    round_up = m.TailStrategy.RoundUp
    curve.compute_root()
    processed.bound(c, 0, 3).reorder(c, x, y).split(y, yo, yi, strip)
    processed.tile(x, yi, x, yi, xi, yii, 2 * vec, 2, round_up).vectorize(xi).unroll(yii).unroll(c).parallel(yo)
    denoised.compute_at(processed, yi).store_at(processed, yo).fold_storage(y, 8)
    denoised.tile(x, y, x, y, xi, yi, 2 * vec, 2).vectorize(xi).unroll(yi)
    deinterleaved.compute_at(processed, yi).store_at(processed, yo).fold_storage(y, 4)
    deinterleaved.reorder(c, x, y).vectorize(x, 2 * vec, round_up).unroll(c)
    corrected.compute_at(processed, x).reorder(c, x, y).vectorize(x, vec).unroll(y).unroll(c)
    for green in (g_r, g_b):
        green.compute_at(processed, yi).store_at(processed, yo).vectorize(x, 2 * vec, round_up).fold_storage(y, 2)
    demosaiced.compute_at(processed, x).vectorize(x, vec).unroll(y).reorder(c, x, y).unroll(c)
    return processed, {"input": inp}


def build_interpolate(m: Any, vec: int = VECTOR_F32, levels: int = 10) -> tuple[Any, dict]:
    """apps/interpolate: fills the transparent parts of a premultiplied RGBA float image
    from a pyramid (10 levels); the output is RGB of the input's size. Halide's CPU
    schedule: the first level is `clone_in`ed into the second level's horizontal pass and
    computed in its rows."""
    x, y, c = m.Var("x"), m.Var("y"), m.Var("c")
    yo, yi, xo, xi = m.Var("yo"), m.Var("yi"), m.Var("xo"), m.Var("xi")
    inp = m.ImageParam(m.Float(32), 3, "input")
    clamped = m.BoundaryConditions.repeat_edge(inp)

    def premultiplied(f: Any) -> None:
        f[x, y, c] = m.select(c < 3, clamped[x, y, c] * clamped[x, y, 3], clamped[x, y, 3])

    downsampled = [m.Func(f"downsampled_{k}") for k in range(levels)]
    downx = [m.Func(f"downx_{k}") for k in range(levels)]
    interpolated = [m.Func(f"interpolated_{k}") for k in range(levels)]
    premultiplied(downsampled[0])
    for j in range(1, levels):
        prev = downsampled[j - 1]
        if j == 4:
            w, h = inp.width() // (1 << (j - 1)), inp.height() // (1 << (j - 1))
            bounded = m.Func(f"bounded_{j - 1}")
            bounded[x, y, c] = prev[m.clamp(x, 0, w), m.clamp(y, 0, h), c]
            prev = bounded
        downx[j][x, y, c] = (prev[x * 2 - 1, y, c] + 2.0 * prev[x * 2, y, c] + prev[x * 2 + 1, y, c]) * 0.25
        downsampled[j][x, y, c] = (
            downx[j][x, y * 2 - 1, c] + 2.0 * downx[j][x, y * 2, c] + downx[j][x, y * 2 + 1, c]
        ) * 0.25  # fmt: skip
    interpolated[levels - 1][x, y, c] = downsampled[levels - 1][x, y, c]
    for j in range(levels - 2, -1, -1):
        upx, up = m.Func(f"upsampledx_{j}"), m.Func(f"upsampled_{j}")
        upx[x, y, c] = (interpolated[j + 1][x // 2, y, c] + interpolated[j + 1][(x + 1) // 2, y, c]) / 2.0
        up[x, y, c] = (upx[x, y // 2, c] + upx[x, (y + 1) // 2, c]) / 2.0
        interpolated[j][x, y, c] = downsampled[j][x, y, c] + (1.0 - downsampled[j][x, y, 3]) * up[x, y, c]
    normalize = m.Func("normalize")
    normalize[x, y, c] = interpolated[0][x, y, c] / interpolated[0][x, y, 3]
    # Halide's CPU schedule (apps/interpolate).
    for j in range(1, levels - 1):
        downsampled[j].compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, vec)
        _never_partition(downsampled[j], x)
    level0_for_downx1 = downsampled[0].clone_in(downx[1])
    level0_for_downx1.store_at(downsampled[1], yo).compute_at(downsampled[1], yi).reorder(c, x, y).unroll(c)
    _never_partition(level0_for_downx1.vectorize(x, vec), y)
    _never_partition(normalize.bound(x, 0, inp.width()).bound(y, 0, inp.height()).bound(c, 0, 3), y)
    normalize.split(x, xo, xi, vec).split(y, yo, yi, 32).reorder(xi, c, xo, yi, yo).unroll(c).vectorize(xi)
    normalize.parallel(yo)
    for j in range(1, levels):
        interpolated[j].store_at(normalize, yo).compute_at(normalize, yi).vectorize(x, vec)
        _never_partition(interpolated[j])
    return normalize, {"input": inp}


def _never_partition(f: Any, *loop_vars: Any) -> None:
    """Halide's never_partition where the compiler has it (a compiler without loop
    partitioning never partitions); with no variables, on every loop of f."""
    if not loop_vars and hasattr(f, "never_partition_all"):
        f.never_partition_all()
    elif loop_vars and hasattr(f, "never_partition"):
        f.never_partition(list(loop_vars))


def build_histogram_equalization(m: Any, vec: int = 16) -> tuple[Any, dict]:
    """Histogram equalization of a gray u8 image, as the example document
    resources/examples/histogram_equalization.json does it on the luma: a histogram (one
    serial pass), its running sum, a 256-entry lookup table at root, then the lookup in
    strips of 16 rows in parallel, 16 lanes wide."""
    x, y, i, yi = m.Var("x"), m.Var("y"), m.Var("i"), m.Var("yi")
    inp = m.ImageParam(m.UInt(8), 2, "input")
    r = m.RDom([(0, inp.width()), (0, inp.height())], "r")
    histogram = m.Func("histogram")
    histogram[i] = m.cast(m.UInt(32), 0)
    histogram[m.cast(m.Int(32), inp[r.x, r.y])] += m.cast(m.UInt(32), 1)
    s = m.RDom([(1, 255)], "s")
    cdf = m.Func("cdf")
    cdf[i] = histogram[i]
    cdf[s.x] = cdf[s.x - 1] + histogram[s.x]
    total = m.cast(m.Float(32), inp.width() * inp.height())
    lut = m.Func("lut")
    lut[i] = m.cast(m.UInt(8), m.clamp(m.cast(m.Float(32), cdf[i]) * (255.0 / total) + 0.5, 0.0, 255.0))
    out = m.Func("equalized")
    out[x, y] = lut[m.cast(m.Int(32), inp[x, y])]
    histogram.compute_root()
    cdf.compute_root()
    lut.compute_root()
    out.split(y, y, yi, 16).parallel(y).vectorize(x, vec)
    return out, {"input": inp}
