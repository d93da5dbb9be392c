"""Resampling: changing an image's size or geometry (resize, crop, pad, flip, rotate) and
image pyramids (Gaussian, Laplacian and the local Laplacian filter built on them).

The pyramid filters are those of Halide's local_laplacian app: downsampling with the
separable [1 3 3 1]/8 taps at 2x-1 .. 2x+2, upsampling with weights 3/4 and 1/4 from the
two nearest coarse pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.catalogue.common import BOUNDARY
from pixelweave.nodes.context import BOUNDARY_MODES, BuildContext
from pixelweave.nodes.convert import convert, full_scale
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Resampling"

F32 = pw.Float(32)
k_var = pw.Var("k")  # the intensity level of the local Laplacian filter's processed pyramids

# A Func read at (x, y) with the value's remaining pure Vars (the channel of a colour image).
Reader = Callable[[Any, Any], Expr]


def _reader(f: pw.Func, rest: tuple[pw.Var, ...]) -> Reader:
    return lambda x, y: f[(x, y, *rest)]


def _halve(e: Expr) -> Expr:
    """The extent of a downsampled dimension: half, rounding up."""
    return (e + 1) / 2


def _level_extents(value: Value, levels: int) -> tuple[Expr, ...]:
    extents = value.extents
    for _ in range(levels):
        extents = (_halve(extents[0]), _halve(extents[1]), *extents[2:])
    return extents


def _wide(t: Type) -> Type:
    """The integer type that holds a weighted sum of 64 values of type t."""
    return pw.UInt(32) if t.is_uint() else pw.Int(32)


def _downsample(ctx: BuildContext, src: Reader, t: Type, rest: tuple[pw.Var, ...], name: str) -> pw.Func:
    """out[x, y] = the [1 3 3 1]/8 filter at 2x-1 .. 2x+2 in x, then in y (Halide's
    local_laplacian). Floats as Halide writes it; integers summed exactly (x64) and rounded
    to nearest, halves up."""
    x, y = ctx.x, ctx.y
    is_float = t.is_float()
    acc = t if is_float else _wide(t)

    def taps(read: Callable[[Expr], Expr], at: Expr) -> Expr:
        a, b, c, d = (pw.cast(acc, read(at + o)) for o in (-1, 0, 1, 2))
        total = a + 3 * (b + c) + d
        return total / 8.0 if is_float else total

    down_x = ctx.func(f"{name}_x")
    down_x[(x, y, *rest)] = taps(lambda sx: src(sx, y), 2 * x)
    out = ctx.func(name)
    total = taps(lambda sy: down_x[(x, sy, *rest)], 2 * y)
    out[(x, y, *rest)] = total if is_float else pw.cast(t, (total + 32) / 64)
    return out


def _upsample(ctx: BuildContext, src: Reader, t: Type, rest: tuple[pw.Var, ...], name: str) -> pw.Func:
    """out[x, y] = 3/4 of the nearest coarse pixel src[x/2] + 1/4 of the next nearest
    (src[x/2 - 1] for even x, src[x/2 + 1] for odd x), in x and then in y. Integers are
    summed exactly (x16) and rounded to nearest, halves up."""
    x, y = ctx.x, ctx.y
    is_float = t.is_float()
    acc = t if is_float else _wide(t)

    def taps(read: Callable[[Expr], Expr], at: Expr) -> Expr:
        far, near = pw.cast(acc, read(at / 2 - 1 + 2 * (at % 2))), pw.cast(acc, read(at / 2))
        return 0.25 * far + 0.75 * near if is_float else far + 3 * near

    up_x = ctx.func(f"{name}_x")
    up_x[(x, y, *rest)] = taps(lambda sx: src(sx, y), x)
    out = ctx.func(name)
    total = taps(lambda sy: up_x[(x, sy, *rest)], y)
    out[(x, y, *rest)] = total if is_float else pw.cast(t, (total + 8) / 16)
    return out


class Downsample2x(NodeType):
    """Halves the image size with the [1 3 3 1]/8 pyramid filter (Halide's local_laplacian):
    out[x] = (in[2x-1] + 3 in[2x] + 3 in[2x+1] + in[2x+2]) / 8, in x and then in y.

    Odd sizes round up. Integer images are rounded to nearest.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (BOUNDARY,)

    def build(self, ctx: BuildContext, image: Value, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        rest = ctx.args(image)[2:]
        out = _downsample(ctx, _reader(src.func, rest), image.type, rest, "out")
        return Value(out, image.layout, _level_extents(image, 1))


class Upsample2x(NodeType):
    """Doubles the image size: each output pixel is 3/4 of the nearest input pixel plus 1/4
    of the next nearest, in x and then in y (the upsampling of Halide's local_laplacian).

    Integer images are rounded to nearest.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (BOUNDARY,)

    def build(self, ctx: BuildContext, image: Value, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        rest = ctx.args(image)[2:]
        out = _upsample(ctx, _reader(src.func, rest), image.type, rest, "out")
        return Value(out, image.layout, (image.width * 2, image.height * 2, *image.extents[2:]))


# ----------------------------------------------------------------------------- resize

METHODS = ("nearest", "bilinear", "bicubic")
CUBIC_A = -0.75  # OpenCV's bicubic kernel


def _source_coordinate(dst: Expr, size_in: Expr, size_out: int) -> tuple[Expr, Expr]:
    """Pixel-centre alignment, as OpenCV: src = (dst + 0.5) * in / out - 0.5, computed in
    f64 and rounded to f32. Returns (floor(src) as i32, the f32 fraction)."""
    src = pw.f32((pw.f64(dst) + 0.5) * (pw.f64(size_in) / float(size_out)) - 0.5)
    lower = pw.floor(src)
    return pw.i32(lower), src - lower


def _cubic_weights(t: Expr) -> list[Expr]:
    """The four weights of taps -1, 0, 1, 2 at fraction t (Keys' kernel with a = -0.75)."""
    a = CUBIC_A
    w0 = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1
    return [w0, w1, w2, 1 - w0 - w1 - w2]


def _interpolate(read: Callable[[Expr], Expr], dst: Expr, size_in: Expr, size_out: int, method: str) -> Expr:
    """The f32 value at output coordinate dst, from taps read(i) of the source line."""
    base, frac = _source_coordinate(dst, size_in, size_out)
    if method == "bilinear":
        offsets, weights = (0, 1), [1 - frac, frac]
    else:
        offsets, weights = (-1, 0, 1, 2), _cubic_weights(frac)
    return sum(w * pw.f32(read(base + o)) for o, w in zip(offsets, weights, strict=True))


class Resize(NodeType):
    """Resizes to `width` x `height` pixels by nearest, bilinear or bicubic interpolation.

    Pixel centres are aligned as in OpenCV's resize: source = (dest + 0.5) * in / out - 0.5,
    taps beyond the edge repeat the edge pixel. Bicubic uses OpenCV's kernel (a = -0.75).
    Nearest picks the pixel containing the source centre, floor((dest + 0.5) * in / out)
    (OpenCV's INTER_NEAREST_EXACT). Integer images are rounded and saturated.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("width", "int", 256, minimum=1, maximum=16384, unit="px", doc="output width"),
        Parameter("height", "int", 256, minimum=1, maximum=16384, unit="px", doc="output height"),
        Parameter("method", "choice", "bilinear", choices=METHODS, doc="interpolation"),
    )

    def build(self, ctx: BuildContext, image: Value, width: int, height: int, method: str) -> Value:
        x, y = ctx.x, ctx.y
        rest = ctx.args(image)[2:]
        extents = (ctx.extent(width), ctx.extent(height), *image.extents[2:])
        out = ctx.func("out")
        if method == "nearest":
            # exact integer form of floor((dst + 0.5) * in / out)
            sx = pw.min((2 * x + 1) * image.width / (2 * width), image.width - 1)
            sy = pw.min((2 * y + 1) * image.height / (2 * height), image.height - 1)
            out[(x, y, *rest)] = image[(sx, sy, *rest)]
            return Value(out, image.layout, extents)
        src = ctx.bounded(image, "clamp")
        along_x = ctx.func("resize_x")
        along_x[(x, y, *rest)] = _interpolate(lambda i: src[(i, y, *rest)], x, image.width, width, method)
        value = _interpolate(lambda j: along_x[(x, j, *rest)], y, image.height, height, method)
        t = image.type
        out[(x, y, *rest)] = pw.cast(t, value) if t.is_float() else pw.saturating_cast(t, pw.round(value))
        return Value(out, image.layout, extents)


# ----------------------------------------------------------------------------- geometry


class Crop(NodeType):
    """The `width` x `height` rectangle whose top-left corner is (x, y).

    The rectangle must lie inside the image: reading outside it stops the run with the
    engine's bounds error, which says which coordinate was out of range.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "any"),)
    params = (
        Parameter("x", "int", 0, minimum=0, maximum=65535, unit="px", doc="left edge", runtime=True),
        Parameter("y", "int", 0, minimum=0, maximum=65535, unit="px", doc="top edge", runtime=True),
        Parameter("width", "int", 128, minimum=1, maximum=65535, unit="px", doc="width of the rectangle"),
        Parameter("height", "int", 128, minimum=1, maximum=65535, unit="px", doc="height of the rectangle"),
    )

    def build(self, ctx: BuildContext, image: Value, x: int, y: int, width: int, height: int) -> Value:
        rest = ctx.args(image)[2:]
        out = ctx.func("out")
        out[(ctx.x, ctx.y, *rest)] = image[(ctx.x + x, ctx.y + y, *rest)]
        return Value(out, image.layout, (ctx.extent(width), ctx.extent(height), *image.extents[2:]))


PAD_MODES = tuple(m for m in BOUNDARY_MODES if m != "none")


class Pad(NodeType):
    """Adds a border around the image, filled by a boundary condition (repeat the edge,
    a constant, wrap around, or mirror)."""

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("left", "int", 8, minimum=0, maximum=4096, unit="px", doc="columns added on the left"),
        Parameter("right", "int", 8, minimum=0, maximum=4096, unit="px", doc="columns added on the right"),
        Parameter("top", "int", 8, minimum=0, maximum=4096, unit="px", doc="rows added at the top"),
        Parameter("bottom", "int", 8, minimum=0, maximum=4096, unit="px", doc="rows added at the bottom"),
        Parameter(
            "boundary",
            "choice",
            "clamp",
            choices=PAD_MODES,
            doc="what fills the border: clamp (repeat the edge pixel), constant (the fill value), "
            "wrap (tile the image), mirror (abc|cba), mirror_interior (abc|ba)",
        ),
        Parameter(
            "fill", "float", 0.0, minimum=0, maximum=1, doc="the constant border, 1 = white (full scale)", runtime=True
        ),
    )

    def build(
        self, ctx: BuildContext, image: Value, left: int, right: int, top: int, bottom: int, boundary: str, fill: float
    ) -> Value:
        src = ctx.bounded(image, boundary, constant=fill * full_scale(image.type))
        rest = ctx.args(image)[2:]
        out = ctx.func("out")
        out[(ctx.x, ctx.y, *rest)] = src[(ctx.x - left, ctx.y - top, *rest)]
        extents = (image.width + (left + right), image.height + (top + bottom), *image.extents[2:])
        return Value(out, image.layout, extents)


class Flip(NodeType):
    """Mirrors the image left-right (horizontal), top-bottom (vertical) or both (a half turn)."""

    category = CATEGORY
    inputs = (Port("image", "image", "any"),)
    params = (
        Parameter("direction", "choice", "horizontal", choices=("horizontal", "vertical", "both"), doc="which axis"),
    )

    def build(self, ctx: BuildContext, image: Value, direction: str) -> Value:
        x, y = ctx.x, ctx.y
        rest = ctx.args(image)[2:]
        sx = image.width - 1 - x if direction in ("horizontal", "both") else x
        sy = image.height - 1 - y if direction in ("vertical", "both") else y
        out = ctx.func("out")
        out[(x, y, *rest)] = image[(sx, sy, *rest)]
        return image.with_func(out)


class Rotate90(NodeType):
    """Rotates by a multiple of 90 degrees counterclockwise (as NumPy's rot90); a quarter
    turn swaps width and height."""

    category = CATEGORY
    inputs = (Port("image", "image", "any"),)
    params = (Parameter("angle", "choice", "90", choices=("90", "180", "270"), unit="°", doc="counterclockwise"),)

    def build(self, ctx: BuildContext, image: Value, angle: str) -> Value:
        x, y = ctx.x, ctx.y
        w, h = image.width, image.height
        rest = ctx.args(image)[2:]
        source, extents = {
            "90": ((w - 1 - y, x), (h, w)),
            "180": ((w - 1 - x, h - 1 - y), (w, h)),
            "270": ((y, h - 1 - x), (h, w)),
        }[angle]
        out = ctx.func("out")
        out[(x, y, *rest)] = image[(*source, *rest)]
        return Value(out, image.layout, (*extents, *image.extents[2:]))


# ----------------------------------------------------------------------------- pyramids

LEVEL = Parameter("level", "int", 1, minimum=0, maximum=12, doc="pyramid level: 0 is the image, each level halves")


def _gaussian_levels(ctx: BuildContext, image: Value, last: int, boundary: str) -> list[Value]:
    """Levels 0 .. last of the Gaussian pyramid, in f32 full scale (white = 1.0); each level
    is the boundary-extended previous level downsampled, computed at root."""
    rest = ctx.args(image)[2:]
    current = ctx.pointwise("level0", lambda v: convert(v, F32), image)
    levels = [current]
    for j in range(1, last + 1):
        src = ctx.bounded(current, boundary, local_name=f"bounded{j - 1}")
        f = _downsample(ctx, _reader(src.func, rest), F32, rest, f"level{j}")
        f.compute_root()
        current = Value(f, image.layout, _level_extents(image, j))
        levels.append(current)
    return levels


def _expand(ctx: BuildContext, coarse: Value, boundary: str, name: str) -> pw.Func:
    """The boundary-extended coarse level, upsampled to twice its size."""
    rest = ctx.args(coarse)[2:]
    src = ctx.bounded(coarse, boundary, local_name=f"bounded_{name}")
    return _upsample(ctx, _reader(src.func, rest), F32, rest, name)


class GaussianPyramidLevel(NodeType):
    """Level n of the Gaussian pyramid: the image downsampled n times by Downsample2x's
    [1 3 3 1]/8 filter (n = 0 is the image itself).

    The levels are computed in f32 and the result converted back to the input's type once
    (so integer images are rounded only at the end). Each level's size is half the previous,
    rounding up; the boundary condition extends every level at its own edges.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (LEVEL, BOUNDARY)

    def build(self, ctx: BuildContext, image: Value, level: int, boundary: str) -> Value:
        top = _gaussian_levels(ctx, image, level, boundary)[-1]
        return ctx.pointwise("out", lambda v: convert(v, image.type), top)


class LaplacianPyramidLevel(NodeType):
    """Level n of the Laplacian pyramid: the detail lost between Gaussian levels n and n+1,
    G_n - upsample(G_{n+1}), as f32 in full scale (white = 1.0), positive and negative.

    Together with CollapseLaplacianPyramid and a GaussianPyramidLevel as the residual, the
    levels rebuild the image (edit them in between to change detail at each scale).
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "image", "f32"),)
    params = (LEVEL, BOUNDARY)

    def build(self, ctx: BuildContext, image: Value, level: int, boundary: str) -> Value:
        fine, coarse = _gaussian_levels(ctx, image, level + 1, boundary)[-2:]
        up = _expand(ctx, coarse, boundary, "upsampled")
        return ctx.pointwise("out", lambda g, u: g - u, fine, fine.with_func(up))


class CollapseLaplacianPyramid(NodeType):
    """Rebuilds an image from Laplacian pyramid levels and the coarse residual:
    out_k = residual, out_j = upsample(out_{j+1}) + level_j, down to j = 0.

    Connect levels 0, 1, ... in order (level j from LaplacianPyramidLevel with level j) and
    as the residual the GaussianPyramidLevel one level below the last connected Laplacian
    level (level 4 when level0..level3 are connected), all with the same boundary
    condition as here: the result is then the original image in f32 (white = 1.0), up to
    float rounding. The output has the size of the finest level connected.
    """

    category = CATEGORY
    inputs = (
        Port("residual", "image", "number", doc="the coarsest Gaussian level"),
        Port("level0", "image", "f32", doc="Laplacian level 0 (finest)", optional=True),
        Port("level1", "image", "f32", doc="Laplacian level 1", optional=True),
        Port("level2", "image", "f32", doc="Laplacian level 2", optional=True),
        Port("level3", "image", "f32", doc="Laplacian level 3", optional=True),
    )
    outputs = (Port("out", "image", "f32"),)
    params = (BOUNDARY,)

    def build(
        self,
        ctx: BuildContext,
        residual: Value,
        boundary: str,
        level0: Value | None = None,
        level1: Value | None = None,
        level2: Value | None = None,
        level3: Value | None = None,
    ) -> Value:
        given = [level0, level1, level2, level3]
        count = next((j for j, v in enumerate(given) if v is None), len(given))
        if any(v is not None for v in given[count:]):
            raise ctx.error(f"connect the levels in order from level0: level{count} is missing")
        levels = given[:count]
        if any(v.layout != residual.layout for v in levels):
            raise ctx.error("the levels and the residual must all be gray or all be colour")
        current = ctx.pointwise("collapsed", lambda v: convert(v, F32), residual)
        for j in reversed(range(count)):
            up = _expand(ctx, current, boundary, f"upsampled{j}")
            up.compute_root()
            name = "out" if j == 0 else f"collapsed{j}"
            current = ctx.pointwise(name, lambda d, u: d + u, levels[j], levels[j].with_func(up))
        return current


class LocalLaplacian(NodeType):
    """Local Laplacian filter (Paris, Hasinoff and Kautz), as Halide's local_laplacian app:
    enhances (alpha > 0) or smooths local detail and compresses (beta < 1) or expands large
    tonal steps, without halos.

    The image is processed at `intensity_levels` reference intensities; at each, a remapping
    curve boosts detail near that intensity, and the Laplacian pyramid of the output takes,
    at every pixel and scale, the remapped pyramid of the two nearest reference intensities.
    Colour images are filtered on their luma (0.299 R + 0.587 G + 0.114 B), and the colour
    is put back as out * (channel + 0.01) / (luma + 0.01). Works in f32 with white = 1.0; the
    result is f32 clamped to [0, 1]. As in Halide, only the input is extended at its edges
    (repeating the edge pixel); the pyramid levels are evaluated beyond the image as needed.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "image", "f32"),)
    params = (
        Parameter("levels", "int", 8, minimum=1, maximum=12, doc="pyramid levels J"),
        Parameter("intensity_levels", "int", 8, minimum=2, maximum=32, doc="reference intensities K"),
        Parameter("alpha", "float", 1.0, minimum=-2, maximum=10, doc="detail enhancement (0: none)", runtime=True),
        Parameter(
            "beta",
            "float",
            1.0,
            minimum=0,
            maximum=2,
            doc="tone: < 1 compresses, > 1 expands large steps",
            runtime=True,
        ),
    )

    def build(
        self, ctx: BuildContext, image: Value, levels: int, intensity_levels: int, alpha: float, beta: float
    ) -> Value:
        x, y, k = ctx.x, ctx.y, k_var
        steps = intensity_levels - 1
        floating = ctx.pointwise("floating", lambda v: convert(v, F32), ctx.bounded(image, "clamp"))
        if image.layout == "colour":
            gray = ctx.func("gray")
            gray[x, y] = 0.299 * floating[x, y, 0] + 0.587 * floating[x, y, 1] + 0.114 * floating[x, y, 2]
        else:
            gray = floating.func
        gray.compute_root()
        # the remapping curve, sampled 256 times per intensity step (Halide divides alpha by K - 1)
        remap = ctx.func("remap")
        fx = pw.f32(ctx.i) / 256.0
        remap[ctx.i] = (alpha / steps) * fx * pw.exp(-fx * fx / 2.0)
        remap.compute_root()
        g = gray[x, y]
        reference = pw.f32(k) * (1.0 / steps)
        index = pw.clamp(pw.i32(g * float(steps) * 256.0), 0, steps * 256)
        processed = ctx.func("g_pyramid0")
        processed[x, y, k] = beta * (g - reference) + reference + remap[index - 256 * k]
        g_pyramid = [processed]
        in_pyramid = [gray]
        for j in range(1, levels):
            g_pyramid.append(_downsample(ctx, _reader(g_pyramid[-1], (k,)), F32, (k,), f"g_pyramid{j}"))
            in_pyramid.append(_downsample(ctx, _reader(in_pyramid[-1], ()), F32, (), f"in_pyramid{j}"))
            g_pyramid[-1].compute_root()
            in_pyramid[-1].compute_root()
        out_pyramid = self._collapse(ctx, g_pyramid, in_pyramid, steps)
        out = ctx.func("out")
        if image.layout == "colour":
            eps = 0.01
            c = ctx.c
            out[x, y, c] = pw.clamp(out_pyramid[x, y] * (floating[x, y, c] + eps) / (gray[x, y] + eps), 0.0, 1.0)
        else:
            out[x, y] = pw.clamp(out_pyramid[x, y], 0.0, 1.0)
        return image.with_func(out)

    @staticmethod
    def _collapse(ctx: BuildContext, g_pyramid: list[pw.Func], in_pyramid: list[pw.Func], steps: int) -> pw.Func:
        """The output's Laplacian pyramid (at each level and pixel, the processed pyramids of
        the two reference intensities nearest the input's Gaussian pyramid there), collapsed."""
        x, y, k = ctx.x, ctx.y, k_var
        top = len(g_pyramid) - 1
        collapsed = None
        for j in range(top, -1, -1):
            detail = ctx.func(f"l_pyramid{j}")
            if j == top:
                detail[x, y, k] = g_pyramid[j][x, y, k]
            else:
                up = _upsample(ctx, _reader(g_pyramid[j + 1], (k,)), F32, (k,), f"g_upsampled{j}")
                detail[x, y, k] = g_pyramid[j][x, y, k] - up[x, y, k]
            level = in_pyramid[j][x, y] * float(steps)
            li = pw.clamp(pw.i32(level), 0, steps - 1)
            lf = level - pw.f32(li)
            out_detail = ctx.func(f"out_l_pyramid{j}")
            out_detail[x, y] = (1.0 - lf) * detail[x, y, li] + lf * detail[x, y, li + 1]
            if collapsed is None:
                collapsed = out_detail
            else:
                up = _upsample(ctx, _reader(collapsed, ()), F32, (), f"out_upsampled{j}")
                collapsed = ctx.func(f"out_g_pyramid{j}")
                collapsed[x, y] = up[x, y] + out_detail[x, y]
            if j > 0:
                collapsed.compute_root()
        return collapsed
