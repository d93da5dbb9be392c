"""Stencils: each output pixel from a neighbourhood of the input.

Every node reads its input through the shared `boundary` parameter. Unless a node says
otherwise, colour images are filtered per channel, floats are filtered in their own type
and integers in f64 with weights rounded to multiples of 2^-24 (coarser where needed to
keep every sum exact), then rounded to nearest (ties to even) and saturated back to their
type.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.catalogue.common import BOUNDARY
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert, full_scale
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

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

# Integer images are filtered in f64 with every weight rounded to a multiple of 2^-bits,
# `bits` chosen so that each product and partial sum is exact (_fraction_bits): the compiled
# code (which may fuse multiply-adds) and the reference evaluator then round to the same
# integer, whatever the order of the sum. (f32 sums differ in the last bit between the two,
# and then round differently near .5.)


def _accumulator(t: Type) -> Type:
    """Floats are filtered in their own type, integers in (exact) f64."""
    return t if t.is_float() else F64


def _fraction_bits(t: Type, passes: int = 1, gain: float = 1.0) -> int:
    """Fraction bits of the weights for an integer image of type t, such that `passes`
    passes of weights whose magnitudes sum to at most `gain` stay within f64's 53 bits
    (at most 24, which also keeps weights below 1 exact as f32 literals)."""
    spare = 52 - t.bits - max(0, math.ceil(math.log2(max(gain, 1.0))))
    return max(8, min(24, spare // passes))


def _quantize(w: float | Expr, t: Type, bits: int) -> float | Expr:
    """A weight as used on an image of type t: unchanged for floats, a multiple of 2^-bits
    for integers (rounded by the generated code for a run-time weight, an Expr)."""
    if t.is_float():
        return pw.cast(t, w) if isinstance(w, Expr) else w
    if isinstance(w, Expr):
        return pw.round(pw.cast(F64, w) * float(2**bits)) * (1.0 / 2**bits)
    return round(w * 2**bits) / 2**bits


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
    """sum of w * read(dx, dy) over the taps, skipping zero weights and multiplications by 1
    (a run-time weight, an Expr, is always multiplied)."""
    terms = [
        read(dx, dy) * w if isinstance(w, Expr) else read(dx, dy) if w == 1 else read(dx, dy) * w
        for dx, dy, w in taps
        if isinstance(w, Expr) or w != 0
    ]
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


def _gaussian(ctx: BuildContext, src: Value, sigma: float, full_scale_float: bool = False) -> pw.Func:
    """Separable Gaussian of a bounded value in its accumulator type (or f32 full scale with
    `full_scale_float`; integer images exactly, see _fraction_bits): Funcs `blur_x` (computed
    at root: inlining it would cost (2r+1)^2 reads a pixel) and `blur_y`, returned."""
    args = ctx.args(src)
    x, y, *rest = args
    integer = not full_scale_float and not src.type.is_float()
    acc = F64 if integer else F32 if full_scale_float else src.type
    weights = gaussian_weights(sigma, _fraction_bits(src.type, passes=2) if integer else None)
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


def _stencil(
    ctx: BuildContext, image: Value, boundary: str, taps: Taps, offset: float = 0.0, gain: float | None = None
) -> Value:
    """out = offset + sum of w * image(x + dx, y + dy) per channel, in the accumulator type
    (weights quantized for integer images), narrowed back to the image's type. `gain`
    bounds the sum of the weights' magnitudes; it is needed when weights are run-time."""
    src = ctx.bounded(image, boundary)
    args = ctx.args(image)
    t = image.type
    bits = _fraction_bits(t, gain=(gain if gain is not None else sum(abs(w) for _, _, w in taps)) + 1)
    total = _weighted_sum(_reader(src, args, _accumulator(t)), [(dx, dy, _quantize(w, t, bits)) for dx, dy, w in taps])
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

    Integer images are blurred exactly in f64 with the taps rounded to multiples of 2^-22
    (u8) or 2^-18 (u16), still summing to 1, then rounded to nearest. Funcs: `blur_x`
    (computed at root) and `blur_y`, then `out`.
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
    runtime=True,
)


class Convolution(NodeType):
    """A user-given kernel applied by correlation, as image editors and OpenCV's filter2D
    do: out(x, y) = sum of k[j][i] * in(x + i - cx, y + j - cy), not flipped.

    With `normalize`, the weights are divided by their sum when it is not zero (a kernel
    summing to zero, such as an edge detector, is used as given). Integer images are
    filtered exactly in f64 with weights rounded to multiples of 2^-24 (coarser for huge
    weights, to keep the sum exact), rounded to nearest and saturated.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (KERNEL, Parameter("normalize", "bool", True, doc="divide by the sum of the weights"), BOUNDARY)

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        rows, cols = len(values["kernel"]), len(values["kernel"][0])
        if rows % 2 == 0 or cols % 2 == 0:
            return [f"the kernel is {cols}x{rows}; it needs an odd width and height so that it has a centre"]
        return []

    @classmethod
    def runtime_type(cls, name: str, values: dict[str, Any]) -> Type:
        return F64  # weights as exact as constant ones: normalized and rounded in f64

    @classmethod
    def runtime_structure(cls, values: dict[str, Any]) -> Any:
        # integer images are filtered with weights rounded to 2^-bits, bits set by the weights'
        # magnitude: these are the bits for u16 (when they stay, u8's stay too)
        return _fraction_bits(pw.UInt(16), gain=_kernel_gain(values["kernel"], values["normalize"]) + 1)

    def build(
        self, ctx: BuildContext, image: Value, kernel: tuple[tuple[Any, ...], ...], normalize: bool, boundary: str
    ) -> Value:
        rows, cols = len(kernel), len(kernel[0])
        cx, cy = cols // 2, rows // 2
        total = functools.reduce(operator.add, (w for row in kernel for w in row))
        if isinstance(total, Expr):  # run-time weights: a kernel summing to zero is used as given
            scale: Any = pw.select(total != 0.0, 1.0 / total, pw.cast(F64, 1.0)) if normalize else 1.0
        else:
            scale = 1.0 / total if normalize and total != 0 else 1.0
        taps = [(i - cx, j - cy, w * scale) for j, row in enumerate(kernel) for i, w in enumerate(row)]
        gain = _kernel_gain(ctx.values["kernel"], normalize)
        return _stencil(ctx, image, boundary, taps, gain=gain)


def _kernel_gain(kernel: Sequence[Sequence[float]], normalize: bool) -> float:
    """The sum of the magnitudes of a kernel's weights as applied (after normalizing)."""
    total = sum(map(sum, kernel))
    scale = 1.0 / total if normalize and total != 0 else 1.0
    return sum(abs(w * scale) for row in kernel for w in row)


class Sharpen(NodeType):
    """Sharpen with the 3x3 kernel [0 -a 0; -a 1+4a -a; 0 -a 0]: the pixel plus `amount`
    times its difference from its four neighbours.

    Integer images are rounded and saturated; floats are not clamped.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("amount", "float", 1.0, minimum=0, maximum=10, doc="strength a of the sharpening", runtime=True),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, amount: float, boundary: str) -> Value:
        a = amount
        taps = [(0, 0, 1 + 4 * a), (-1, 0, -a), (1, 0, -a), (0, -1, -a), (0, 1, -a)]
        return _stencil(ctx, image, boundary, taps, gain=1 + 8 * self.params[0].maximum)


class UnsharpMask(NodeType):
    """Unsharp mask: out = in + amount * (in - gaussian(in)) where |in - gaussian(in)| is at
    least `threshold` (a fraction of full scale), else the pixel unchanged.

    The Gaussian is that of the Gaussian blur node (radius ceil(3 sigma)). Integer images
    are computed in f64, then rounded and saturated; floats are not clamped.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter("sigma", "float", 2.0, minimum=0.1, maximum=30, unit="px", doc="radius of the blur"),
        Parameter("amount", "float", 1.0, minimum=0, maximum=10, doc="how much of the detail to add", runtime=True),
        Parameter(
            "threshold",
            "float",
            0.0,
            minimum=0,
            maximum=1,
            doc="smallest detail sharpened, 0..1 of white",
            runtime=True,
        ),
        BOUNDARY,
    )

    def build(
        self, ctx: BuildContext, image: Value, sigma: float, amount: float, threshold: float, boundary: str
    ) -> Value:
        blurred = _gaussian(ctx, ctx.bounded(image, boundary), sigma)
        args = ctx.args(image)
        acc = _accumulator(image.type)
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
        Parameter("strength", "float", 1.0, minimum=0, maximum=10, doc="scale of the relief", runtime=True),
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
        return _stencil(ctx, image, boundary, taps, offset=_mid_grey(image.type), gain=8 * self.params[1].maximum)


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
    title = "Median 3x3"
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


# ---------------------------------------------------------------------------- feature detectors


def _to_float_gray(ctx: BuildContext, image: Value, boundary: str) -> pw.Func:
    """`gray`: the bounded image as f32 in full scale, colour by Rec. 601 luma
    (0.299 r + 0.587 g + 0.114 b, as Halide's harris app)."""
    src = ctx.bounded(image, boundary)
    x, y = ctx.x, ctx.y
    gray = ctx.func("gray")
    if image.layout == "colour":
        r, g, b = (convert(src[x, y, k], F32) for k in range(3))
        gray[x, y] = 0.299 * r + 0.587 * g + 0.114 * b
    else:
        gray[x, y] = convert(src[x, y], F32)
    return gray


class HarrisCorners(NodeType):
    """Harris corner response, the algorithm of Halide's apps/harris: gray (Rec. 601 luma
    of colour), Sobel 3x3 derivatives divided by 12, the structure tensor summed over a 3x3
    box, and det - k trace^2 (k = 0.04 by default, as the app).

    Integer images are mapped to full scale first (white is 1.0); the output is f32 and
    large positive at corners, negative along edges. The boundary applies to the input, as
    the app's repeat_edge. Funcs: gray, Ix and Iy (computed at root), Ixx, Iyy, Ixy, Sxx,
    Syy, Sxy, det, trace, out.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "gray", "f32"),)
    params = (
        Parameter(
            "k", "float", 0.04, minimum=0, maximum=0.25, doc="weight of trace^2 (Harris' sensitivity)", runtime=True
        ),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, k: float, boundary: str) -> Value:
        gray = _to_float_gray(ctx, image, boundary)
        x, y = ctx.x, ctx.y

        def stage(name: str, fn: Callable[[], Expr]) -> pw.Func:
            f = ctx.func(name)
            f[x, y] = fn()
            return f

        def read(dx: int, dy: int) -> Expr:
            return gray[x + dx, y + dy]

        ix = stage("Ix", lambda: _weighted_sum(read, [(dx, dy, w / 12) for dx, dy, w in SOBEL_X]))
        iy = stage("Iy", lambda: _weighted_sum(read, [(dx, dy, w / 12) for dx, dy, w in SOBEL_Y]))
        ix.compute_root()
        iy.compute_root()
        ixx = stage("Ixx", lambda: ix[x, y] * ix[x, y])
        iyy = stage("Iyy", lambda: iy[x, y] * iy[x, y])
        ixy = stage("Ixy", lambda: ix[x, y] * iy[x, y])
        box = [(dx, dy, 1.0) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        sxx = stage("Sxx", lambda: _weighted_sum(lambda dx, dy: ixx[x + dx, y + dy], box))
        syy = stage("Syy", lambda: _weighted_sum(lambda dx, dy: iyy[x + dx, y + dy], box))
        sxy = stage("Sxy", lambda: _weighted_sum(lambda dx, dy: ixy[x + dx, y + dy], box))
        det = stage("det", lambda: sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y])
        trace = stage("trace", lambda: sxx[x, y] + syy[x, y])
        out = stage("out", lambda: det[x, y] - k * trace[x, y] * trace[x, y])
        return Value(out, "gray", (image.width, image.height))


TAN_22_5 = math.tan(math.pi / 8)


class CannyEdges(NodeType):
    """Canny edges as a stencil pipeline: white (255) on edges, black elsewhere (u8).

    Steps: Gaussian blur (`sigma`, as the Gaussian blur node, in f32 full scale); Sobel
    gx, gy (unnormalized, so a black-to-white step gives 4); magnitude sqrt(gx^2 + gy^2);
    non-maximum suppression: a pixel stays if its magnitude is >= both neighbours along
    the gradient direction quantized to 0, 45, 90 or 135 degrees; double threshold: strong
    if >= `high`, weak if >= `low`. Hysteresis "as far as a stencil pipeline allows":
    starting from the strong pixels, `hysteresis_steps` times, a weak pixel becomes an edge
    if one of its 8 neighbours is. Weak pixels further than that many steps from a strong
    one along a chain are dropped (full Canny follows chains without limit).

    Funcs: blur_x, blur_y, magnitude (root), thin (root), edges_0 .. edges_n (root), out.
    """

    category = CATEGORY
    inputs = (Port("image", "gray", "number", doc="gray image; integers are mapped to 0..1"),)
    outputs = (Port("out", "gray", "u8"),)
    params = (
        Parameter("sigma", "float", 1.0, minimum=0.1, maximum=10, unit="px", doc="blur before differentiation"),
        Parameter(
            "low", "float", 0.1, minimum=0, maximum=8, doc="weak edge threshold on the gradient magnitude", runtime=True
        ),
        Parameter(
            "high",
            "float",
            0.2,
            minimum=0,
            maximum=8,
            doc="strong edge threshold on the gradient magnitude",
            runtime=True,
        ),
        Parameter("hysteresis_steps", "int", 4, minimum=0, maximum=64, doc="how far edges grow along weak pixels"),
        BOUNDARY,
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        if values["low"] > values["high"]:
            return [f"the low threshold {values['low']:g} is above the high threshold {values['high']:g}"]
        return []

    def build(
        self,
        ctx: BuildContext,
        image: Value,
        sigma: float,
        low: float,
        high: float,
        hysteresis_steps: int,
        boundary: str,
    ) -> Value:
        x, y = ctx.x, ctx.y
        blurred = _gaussian(ctx, ctx.bounded(image, boundary), sigma, full_scale_float=True)

        def read(dx: int, dy: int) -> Expr:
            return blurred[x + dx, y + dy]

        gx, gy = _weighted_sum(read, SOBEL_X), _weighted_sum(read, SOBEL_Y)
        magnitude = ctx.func("magnitude")
        magnitude[x, y] = pw.sqrt(gx * gx + gy * gy)
        magnitude.compute_root()
        thin = ctx.func("thin")
        thin[x, y] = pw.select(_is_ridge(magnitude, gx, gy), magnitude[x, y], 0.0)
        thin.compute_root()
        # Edges exist only inside the image (as if the outside were a constant false); testing
        # that here, rather than reading a bounded Func, keeps each stage's region a plain
        # rectangle one pixel larger than the next one's.
        inside = pw.logical_and(pw.logical_and(x >= 0, x < image.width), pw.logical_and(y >= 0, y < image.height))
        weak = pw.logical_and(inside, thin[x, y] >= low)
        edges = ctx.func("edges_0")
        edges[x, y] = pw.logical_and(inside, thin[x, y] >= high)
        for step in range(1, hysteresis_steps + 1):
            edges.compute_root()
            near = functools.reduce(pw.logical_or, (edges[x + i, y + j] for j in (-1, 0, 1) for i in (-1, 0, 1)))
            edges = ctx.func(f"edges_{step}")
            edges[x, y] = pw.logical_and(weak, near)
        out = ctx.func("out")
        out[x, y] = pw.select(edges[x, y], pw.u8(255), pw.u8(0))
        return image.with_func(out)


def _is_ridge(magnitude: pw.Func, gx: Expr, gy: Expr) -> Expr:
    """Whether magnitude(x, y) is >= both of its neighbours along the gradient (gx, gy),
    the direction quantized to a multiple of 45 degrees (y points down)."""
    x, y = BuildContext.x, BuildContext.y
    ax, ay = pw.abs(gx), pw.abs(gy)
    along_x = ay <= ax * TAN_22_5
    along_y = ax <= ay * TAN_22_5
    falling = gx * gy > 0  # the gradient points to (+1, +1) or (-1, -1)

    def neighbour(s: int) -> Expr:
        return pw.select(
            along_x,
            magnitude[x + s, y],
            along_y,
            magnitude[x, y + s],
            falling,
            magnitude[x + s, y + s],
            magnitude[x + s, y - s],
        )

    m = magnitude[x, y]
    return pw.logical_and(m >= neighbour(1), m >= neighbour(-1))


# ---------------------------------------------------------------------------- edge-aware smoothing


BINOMIAL = ((-2, 1), (-1, 4), (0, 6), (1, 4), (2, 1))


def _five_tap(f: pw.Func, shift: Callable[[int], tuple]) -> Expr:
    """The [1 4 6 4 1] filter of f along one grid axis; shift(k) gives f's arguments at k."""
    return functools.reduce(operator.add, (f[shift(k)] * w if w != 1 else f[shift(k)] for k, w in BINOMIAL))


class BilateralGrid(NodeType):
    """Edge-preserving smoothing with a bilateral grid, the algorithm of Halide's
    apps/bilateral_grid: the image (clamped to [0, 1]) is accumulated into a coarse grid of
    s_sigma x s_sigma cells by r_sigma intensity bins (`histogram`: sum of values and count),
    the grid is blurred with [1 4 6 4 1] along z, x and y (`blurz`, `blurx`, `blury`,
    computed at root), and each pixel reads it back by trilinear interpolation
    (`interpolated`), dividing the sum by the count.

    Gray images only; integers are mapped to 0..1 first; the output is f32.
    """

    category = CATEGORY
    inputs = (Port("image", "gray", "number", doc="gray image; integers are mapped to 0..1"),)
    outputs = (Port("out", "gray", "f32"),)
    params = (
        Parameter("s_sigma", "int", 8, minimum=1, maximum=64, unit="px", doc="spatial size of a grid cell"),
        Parameter("r_sigma", "float", 0.1, minimum=0.01, maximum=1, doc="intensity range of a grid bin"),
        BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, s_sigma: int, r_sigma: float, boundary: str) -> Value:
        x, y, c = ctx.x, ctx.y, ctx.c
        z = pw.Var("z")
        s = s_sigma
        src = ctx.bounded(image, boundary)
        r = pw.RDom([(0, s), (0, s)])
        value = pw.clamp(convert(src[x * s + r.x - s // 2, y * s + r.y - s // 2], F32), 0.0, 1.0)
        bin_index = pw.i32(value * (1.0 / r_sigma) + 0.5)
        histogram = ctx.func("histogram")
        histogram[x, y, z, c] = 0.0
        histogram[x, y, bin_index, c] += pw.select(c == 0, value, 1.0)
        blurz, blurx, blury = ctx.func("blurz"), ctx.func("blurx"), ctx.func("blury")
        blurz[x, y, z, c] = _five_tap(histogram, lambda k: (x, y, z + k, c))
        blurx[x, y, z, c] = _five_tap(blurz, lambda k: (x + k, y, z, c))
        blury[x, y, z, c] = _five_tap(blurx, lambda k: (x, y + k, z, c))
        for f in (blurz, blurx, blury):
            f.compute_root()
        # trilinear slicing at the pixel's own position and value
        level = pw.clamp(convert(image[x, y], F32), 0.0, 1.0) * (1.0 / r_sigma)
        zi = pw.i32(level)
        zf = level - pw.f32(zi)
        xi, yi = x / s, y / s
        xf, yf = pw.f32(x % s) / s, pw.f32(y % s) / s

        def corner(dx: int, dy: int, dz: int) -> Expr:
            return blury[xi + dx, yi + dy, zi + dz, c]

        def bilinear(dz: int) -> Expr:
            top = pw.lerp(corner(0, 0, dz), corner(1, 0, dz), xf)
            bottom = pw.lerp(corner(0, 1, dz), corner(1, 1, dz), xf)
            return pw.lerp(top, bottom, yf)

        interpolated = ctx.func("interpolated")
        interpolated[x, y, c] = pw.lerp(bilinear(0), bilinear(1), zf)
        out = ctx.func("out")
        out[x, y] = interpolated[x, y, 0] / interpolated[x, y, 1]
        return Value(out, "gray", image.extents)
