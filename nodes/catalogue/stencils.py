"""Stencils: each output pixel from a neighbourhood of the input.

Every node reads its input through the shared `boundary` parameter. Unless a node says
otherwise, colour images are filtered per channel, floats are filtered in their own type
and integers in f64 with weights rounded to multiples of 2^-16 (exact sums), then rounded
to nearest (ties to even) and saturated back to their type.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence

import engine as pw
from engine.ir.expr import Expr
from engine.ir.types import Type
from nodes.catalogue.common import BOUNDARY
from nodes.context import BuildContext
from nodes.convert import convert, full_scale
from nodes.node_type import NodeType
from nodes.parameters import Parameter
from nodes.ports import Port
from nodes.values import Value

CATEGORY = "Stencils"


class BoxBlur(NodeType):
    """Box blur: the mean over a (2r+1) x (2r+1) square, computed separably (rows, then
    columns). Integer images are rounded to nearest."""

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (Parameter("radius", "int", 1, minimum=1, maximum=50, unit="px", doc="half the box width"), BOUNDARY)

    def build(self, ctx: BuildContext, image: Value, radius: int, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        x, y = ctx.x, ctx.y
        rest = ctx.args(image)[2:]
        n = 2 * radius + 1
        acc = pw.Float(32) if image.type.is_float() else pw.UInt(32)
        rows = ctx.func("rows")
        rows[(x, y, *rest)] = sum(pw.cast(acc, src[(x + k, y, *rest)]) for k in range(-radius, radius + 1))
        total = sum(rows[(x, y + k, *rest)] for k in range(-radius, radius + 1))
        out = ctx.func("out")
        if image.type.is_float():
            out[(x, y, *rest)] = pw.cast(image.type, total / float(n * n))
        else:
            out[(x, y, *rest)] = pw.cast(image.type, (total + (n * n) // 2) / (n * n))
        return image.with_func(out)


# ---------------------------------------------------------------------------- shared helpers

F32 = pw.Float(32)
F64 = pw.Float(64)
Taps = Sequence[tuple[int, int, float]]

# Integer images are filtered in f64 with every weight rounded to a multiple of 2^-16: each
# product and sum is then exact, so the compiled code (which may fuse multiply-adds) and the
# reference evaluator round to the same integer, and the result does not depend on the order
# of the sum. (f32 sums would differ in the last bit and then round differently at .5.)
WEIGHT_BITS = 16


def _accumulator(t: Type) -> Type:
    """Floats are filtered in their own type, integers in (exact) f64."""
    return t if t.is_float() else F64


def _quantize(w: float, t: Type, bits: int = WEIGHT_BITS) -> float:
    """A weight as used on an image of type t: unchanged for floats, a multiple of 2^-bits
    for integers (see WEIGHT_BITS)."""
    return w if t.is_float() else round(w * 2**bits) / 2**bits


def _narrow(e: Expr, t: Type) -> Expr:
    """A filtered value back in the image's type: floats as they are (not clamped), integers
    rounded to nearest (ties to even) and saturated to the type's range."""
    if t.is_float():
        return pw.cast(t, e)
    return pw.saturating_cast(t, pw.round(e))


def _mid_grey(t: Type) -> float:
    """The value that means 'no relief' for an embossed image: 0.5 for floats, the upper
    middle of the range for integers (128 for u8, 32768 for u16)."""
    return 0.5 if t.is_float() else float(math.ceil(full_scale(t) / 2))


def _weighted_sum(read: Callable[[int, int], Expr], taps: Taps) -> Expr:
    """sum of w * read(dx, dy) over the taps, skipping zero weights and multiplications by 1."""
    terms = [read(dx, dy) if w == 1 else read(dx, dy) * w for dx, dy, w in taps if w != 0]
    if not terms:
        return read(0, 0) * 0.0
    return functools.reduce(operator.add, terms)


def _reader(src: Value, args: tuple[pw.Var, ...], t: Type, full_scale_float: bool = False) -> Callable:
    """read(dx, dy): src at (x + dx, y + dy, c...) cast to type t, or with `full_scale_float`
    converted to f32 so that integer white becomes 1.0."""
    x, y, *rest = args

    def read(dx: int, dy: int) -> Expr:
        v = src[(x + dx, y + dy, *rest)]
        return convert(v, F32) if full_scale_float else pw.cast(t, v)

    return read


def gaussian_weights(sigma: float, bits: int | None = None) -> list[float]:
    """The normalized taps of a sampled Gaussian over radius ceil(3 sigma), as OpenCV's
    getGaussianKernel(2r+1, sigma) makes them; with `bits`, multiples of 2^-bits that still
    sum to exactly 1 (the centre tap takes the rounding)."""
    radius = math.ceil(3 * sigma)
    weights = [math.exp(-(k * k) / (2 * sigma * sigma)) for k in range(-radius, radius + 1)]
    total = sum(weights)
    weights = [w / total for w in weights]
    if bits is not None:
        weights = [round(w * 2**bits) / 2**bits for w in weights]
        weights[radius] += 1.0 - sum(weights)
    return weights


def _gaussian(ctx: BuildContext, src: Value, sigma: float, full_scale_float: bool = False, bits: int = 16) -> pw.Func:
    """Separable Gaussian of a bounded value in its accumulator type (or f32 full scale with
    `full_scale_float`), integer images with weights of `bits` fraction bits: Funcs `blur_x`
    (computed at root: inlining it would cost (2r+1)^2 reads a pixel) and `blur_y`, returned."""
    args = ctx.args(src)
    x, y, *rest = args
    integer = not full_scale_float and not src.type.is_float()
    acc = F64 if integer else F32 if full_scale_float else src.type
    weights = gaussian_weights(sigma, bits if integer else None)
    r = len(weights) // 2
    blur_x = ctx.func("blur_x")
    blur_x[args] = _weighted_sum(
        _reader(src, args, acc, full_scale_float), [(k - r, 0, w) for k, w in enumerate(weights)]
    )
    blur_x.compute_root()
    blur_y = ctx.func("blur_y")
    column = [(0, k - r, w) for k, w in enumerate(weights)]
    blur_y[args] = _weighted_sum(lambda dx, dy: blur_x[(x + dx, y + dy, *rest)], column)
    return blur_y


def _stencil(ctx: BuildContext, image: Value, boundary: str, taps: Taps, offset: float = 0.0) -> Value:
    """out = offset + sum of w * image(x + dx, y + dy) per channel, in the accumulator type
    (weights quantized for integer images), narrowed back to the image's type."""
    src = ctx.bounded(image, boundary)
    args = ctx.args(image)
    t = image.type
    total = _weighted_sum(_reader(src, args, _accumulator(t)), [(dx, dy, _quantize(w, t)) for dx, dy, w in taps])
    out = ctx.func("out")
    out[args] = _narrow(total + offset if offset else total, t)
    return image.with_func(out)


SOBEL_X: Taps = ((-1, -1, -1.0), (-1, 0, -2.0), (-1, 1, -1.0), (1, -1, 1.0), (1, 0, 2.0), (1, 1, 1.0))
SOBEL_Y: Taps = tuple((dy, dx, w) for dx, dy, w in SOBEL_X)


def _float_source(ctx: BuildContext, image: Value, boundary: str) -> Callable[[int, int], Expr]:
    """read(dx, dy) of the bounded image as f32 in full scale (integer white becomes 1.0)."""
    return _reader(ctx.bounded(image, boundary), ctx.args(image), F32, full_scale_float=True)


# ---------------------------------------------------------------------------- blurs and kernels


class GaussianBlur(NodeType):
    """Gaussian blur, separable (rows, then columns) over radius ceil(3 sigma) with
    normalized taps.

    Integer images are blurred exactly in f64 with the taps rounded to multiples of 2^-16
    (summing to 1), then rounded to nearest. Funcs: `blur_x` (computed at root) and
    `blur_y`, then `out`.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("sigma", "float", 1.5, minimum=0.1, maximum=30, unit="px", doc="standard deviation"),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, sigma: float, boundary: str) -> Value:
        blurred = _gaussian(ctx, ctx.bounded(image, boundary), sigma)
        args = ctx.args(image)
        out = ctx.func("out")
        out[args] = _narrow(blurred[args], image.type)
        return image.with_func(out)


KERNEL = Parameter(
    "kernel",
    "matrix",
    ((1, 2, 1), (2, 4, 2), (1, 2, 1)),
    doc="weights, rows top to bottom; odd width and height up to 15, centred on the pixel",
    extra={"max_size": 15},
)


class Convolution(NodeType):
    """A user-given kernel applied by correlation, as image editors and OpenCV's filter2D
    do: out(x, y) = sum of k[j][i] * in(x + i - cx, y + j - cy), not flipped.

    With `normalize`, the weights are divided by their sum when it is not zero (a kernel
    summing to zero, such as an edge detector, is used as given). Integer images are
    filtered in f64 with weights rounded to multiples of 2^-16, rounded to nearest and
    saturated.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (KERNEL, Parameter("normalize", "bool", True, doc="divide by the sum of the weights"), BOUNDARY)

    def build(
        self, ctx: BuildContext, image: Value, kernel: tuple[tuple[float, ...], ...], normalize: bool, boundary: str
    ) -> Value:
        rows, cols = len(kernel), len(kernel[0])
        if rows % 2 == 0 or cols % 2 == 0:
            raise ctx.error(f"the kernel is {cols}x{rows}; it needs an odd width and height so that it has a centre")
        total = sum(map(sum, kernel))
        scale = 1.0 / total if normalize and total != 0 else 1.0
        cx, cy = cols // 2, rows // 2
        taps = [(i - cx, j - cy, w * scale) for j, row in enumerate(kernel) for i, w in enumerate(row)]
        return _stencil(ctx, image, boundary, taps)


class Sharpen(NodeType):
    """Sharpen with the 3x3 kernel [0 -a 0; -a 1+4a -a; 0 -a 0]: the pixel plus `amount`
    times its difference from its four neighbours.

    Integer images are rounded and saturated; floats are not clamped.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (Parameter("amount", "float", 1.0, minimum=0, maximum=10, doc="strength a of the sharpening"), BOUNDARY)

    def build(self, ctx: BuildContext, image: Value, amount: float, boundary: str) -> Value:
        a = amount
        taps = [(0, 0, 1 + 4 * a), (-1, 0, -a), (1, 0, -a), (0, -1, -a), (0, 1, -a)]
        return _stencil(ctx, image, boundary, taps)


class UnsharpMask(NodeType):
    """Unsharp mask: out = in + amount * (in - gaussian(in)) where |in - gaussian(in)| is at
    least `threshold` (a fraction of full scale), else the pixel unchanged.

    The Gaussian is that of the Gaussian blur node (radius ceil(3 sigma)). Integer images
    are computed exactly in f64 (taps rounded to multiples of 2^-12, `amount` to 2^-8),
    then rounded and saturated; floats are not clamped.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("sigma", "float", 2.0, minimum=0.1, maximum=30, unit="px", doc="radius of the blur"),
        Parameter("amount", "float", 1.0, minimum=0, maximum=10, doc="how much of the detail to add"),
        Parameter("threshold", "float", 0.0, minimum=0, maximum=1, doc="smallest detail sharpened, 0..1 of white"),
        BOUNDARY,
    )

    def build(
        self, ctx: BuildContext, image: Value, sigma: float, amount: float, threshold: float, boundary: str
    ) -> Value:
        blurred = _gaussian(ctx, ctx.bounded(image, boundary), sigma, bits=12)
        args = ctx.args(image)
        acc = _accumulator(image.type)
        amount = _quantize(amount, image.type, bits=8)
        value = pw.cast(acc, image[args])
        detail = ctx.func("detail")
        detail[args] = value - blurred[args]
        limit = pw.cast(acc, threshold * full_scale(image.type))
        sharpened = pw.select(pw.abs(detail[args]) >= limit, value + detail[args] * amount, value)
        out = ctx.func("out")
        out[args] = _narrow(sharpened, image.type)
        return image.with_func(out)


EMBOSS_DIRECTIONS = {
    "north": (0, -1),
    "north_east": (1, -1),
    "east": (1, 0),
    "south_east": (1, 1),
    "south": (0, 1),
    "south_west": (-1, 1),
    "west": (-1, 0),
    "north_west": (-1, -1),
}


class Emboss(NodeType):
    """Emboss: relief lit from `direction`. Each 3x3 neighbour on the lit side adds, each on
    the opposite side subtracts (those across the direction count 0); the result, times
    `strength`, is added to mid-grey.

    Mid-grey is 0.5 for floats and 128 (u8) or 32768 (u16) for integers, which are
    rounded and saturated. North is up (decreasing y).
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter(
            "direction", "choice", "north_west", choices=tuple(EMBOSS_DIRECTIONS), doc="where the light comes from"
        ),
        Parameter("strength", "float", 1.0, minimum=0, maximum=10, doc="scale of the relief"),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, direction: str, strength: float, boundary: str) -> Value:
        dx, dy = EMBOSS_DIRECTIONS[direction]
        taps = [
            (i, j, strength * float(math.copysign(1, i * dx + j * dy)))
            for j in (-1, 0, 1)
            for i in (-1, 0, 1)
            if i * dx + j * dy != 0
        ]
        return _stencil(ctx, image, boundary, taps, offset=_mid_grey(image.type))


# ---------------------------------------------------------------------------- derivatives


class Sobel(NodeType):
    """Sobel derivatives with the 3x3 kernels (x: [-1 0 1] across, [1 2 1] down; y the
    transpose) and the gradient magnitude sqrt(gx^2 + gy^2), not normalized.

    Outputs are f32 in full scale: integer images are first mapped so that white is 1.0,
    so a black-to-white step gives 4 whatever the input type. Colour is per channel.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (
        Port("gx", "image", "f32", doc="derivative along x (right minus left)"),
        Port("gy", "image", "f32", doc="derivative along y (below minus above)"),
        Port("magnitude", "image", "f32", doc="length of the gradient"),
    )
    params = (BOUNDARY,)

    def build(self, ctx: BuildContext, image: Value, boundary: str) -> dict[str, Value]:
        read = _float_source(ctx, image, boundary)
        args = ctx.args(image)
        gx, gy, magnitude = ctx.func("gx"), ctx.func("gy"), ctx.func("magnitude")
        gx[args] = _weighted_sum(read, SOBEL_X)
        gy[args] = _weighted_sum(read, SOBEL_Y)
        magnitude[args] = pw.sqrt(gx[args] * gx[args] + gy[args] * gy[args])
        return {"gx": image.with_func(gx), "gy": image.with_func(gy), "magnitude": image.with_func(magnitude)}


class Laplacian(NodeType):
    """Discrete Laplacian: the sum of the 4 (edge) or 8 (edge and corner) neighbours minus 4
    or 8 times the pixel.

    The output is f32 in full scale (integer white becomes 1.0 first), since it is signed.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "image", "f32"),)
    params = (
        Parameter("neighbours", "choice", "4", choices=("4", "8"), doc="4: up, down, left, right; 8: also diagonals"),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, neighbours: str, boundary: str) -> Value:
        read = _float_source(ctx, image, boundary)
        if neighbours == "4":
            taps = [(0, 0, -4.0), (-1, 0, 1.0), (1, 0, 1.0), (0, -1, 1.0), (0, 1, 1.0)]
        else:
            taps = [(i, j, -8.0 if i == j == 0 else 1.0) for j in (-1, 0, 1) for i in (-1, 0, 1)]
        out = ctx.func("out")
        out[ctx.args(image)] = _weighted_sum(read, taps)
        return image.with_func(out)


# ---------------------------------------------------------------------------- rank filters


SHAPES = ("square", "cross")


def _morphology(ctx: BuildContext, image: Value, radius: int, shape: str, boundary: str, op: Callable) -> Value:
    """op (pw.min or pw.max) over a (2r+1)-wide square or cross: `rows` (along x) then
    `columns` (along y) of the rows for a square; the op of both for a cross."""
    src = ctx.bounded(image, boundary)
    args = ctx.args(image)
    x, y, *rest = args
    span = range(-radius, radius + 1)
    rows = ctx.func("rows")
    rows[args] = op(*(src[(x + k, y, *rest)] for k in span))
    out = ctx.func("out")
    if shape == "square":
        out[args] = op(*(rows[(x, y + k, *rest)] for k in span))
    else:
        columns = ctx.func("columns")
        columns[args] = op(*(src[(x, y + k, *rest)] for k in span))
        out[args] = op(rows[args], columns[args])
    return image.with_func(out)


MORPHOLOGY_PARAMS = (
    Parameter("radius", "int", 1, minimum=1, maximum=50, unit="px", doc="half the width of the structuring element"),
    Parameter("shape", "choice", "square", choices=SHAPES, doc="square, or cross (the centre row and column)"),
    BOUNDARY,
)


class Erode(NodeType):
    """Erosion: the minimum over a (2r+1)-wide square or cross around each pixel (exact in
    every type). Funcs `rows` (and `columns` for a cross), then `out`."""

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = MORPHOLOGY_PARAMS

    def build(self, ctx: BuildContext, image: Value, radius: int, shape: str, boundary: str) -> Value:
        return _morphology(ctx, image, radius, shape, boundary, pw.min)


class Dilate(NodeType):
    """Dilation: the maximum over a (2r+1)-wide square or cross around each pixel (exact in
    every type). Funcs `rows` (and `columns` for a cross), then `out`."""

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = MORPHOLOGY_PARAMS

    def build(self, ctx: BuildContext, image: Value, radius: int, shape: str, boundary: str) -> Value:
        return _morphology(ctx, image, radius, shape, boundary, pw.max)


def _median3(a: Expr, b: Expr, c: Expr) -> Expr:
    """The middle of three values with four min/max operations."""
    return pw.max(pw.min(a, b), pw.min(pw.max(a, b), c))


class Median3x3(NodeType):
    """Median of the 3x3 neighbourhood with a min/max sorting network, as in Halide's
    examples: each column sorted (`min_y`, `mid_y`, `max_y`), then the median of the
    largest minimum, the median of the medians and the smallest maximum. Exact in every type.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (BOUNDARY,)

    def build(self, ctx: BuildContext, image: Value, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        args = ctx.args(image)
        x, y, *rest = args
        up, centre, down = (src[(x, y + k, *rest)] for k in (-1, 0, 1))
        min_y, mid_y, max_y = ctx.func("min_y"), ctx.func("mid_y"), ctx.func("max_y")
        min_y[args] = pw.min(up, centre, down)
        mid_y[args] = _median3(up, centre, down)
        max_y[args] = pw.max(up, centre, down)

        def across(f: pw.Func) -> tuple[Expr, Expr, Expr]:
            return tuple(f[(x + k, y, *rest)] for k in (-1, 0, 1))

        out = ctx.func("out")
        out[args] = _median3(pw.max(*across(min_y)), _median3(*across(mid_y)), pw.min(*across(max_y)))
        return image.with_func(out)
