"""Reductions: histograms, cumulative sums and whole-image statistics, built from update
definitions over reduction domains (RDoms)."""

from __future__ import annotations

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Reductions"

BINS = Parameter(
    "bins",
    "int",
    256,
    minimum=1,
    maximum=65536,
    doc="number of bins; the value range (0..1 for floats, the whole type for integers) is split evenly",
)


def _domain(value: Value) -> pw.RDom:
    """An RDom over every pixel (and channel) of an image or every element of an array."""
    return pw.RDom([(0, e) for e in value.extents])


def _bin_index(v: Expr, t: Type, bins: int) -> Expr:
    """The histogram bin of value v: v normalized to [0, 1) (integers by their type's range,
    floats as they are), times `bins`, rounded down and clamped to the bins. Computed in f64,
    where the product is exact, so no value lands in a neighbouring bin by rounding."""
    if t.is_float():
        scaled = pw.f64(v) * float(bins)
    else:
        lowest = 0 if t.is_uint() else -(2 ** (t.bits - 1))
        if bins == 2**t.bits and t.bits <= 16:
            return pw.i32(v) - lowest  # one bin per value: no arithmetic needed
        scaled = (pw.f64(v) - float(lowest)) * (bins / 2.0**t.bits)
    return pw.clamp(pw.i32(pw.floor(scaled)), 0, bins - 1)


def _histogram(ctx: BuildContext, image: Value, bins: int, local_name: str = "hist") -> pw.Func:
    """hist[i] = how many pixels fall into bin i (u32)."""
    r = _domain(image)
    hist = ctx.func(local_name)
    hist[ctx.i] = pw.u32(0)
    hist[_bin_index(image[r.x, r.y], image.type, bins)] += 1
    return hist


def _accumulator_type(t: Type) -> Type:
    """Sums of integers are 32-bit (unsigned stays unsigned); sums of floats keep their type."""
    if t.is_float():
        return t
    return pw.UInt(32) if t.is_uint() else pw.Int(32)


def _cumulative(ctx: BuildContext, array: pw.Func, t: Type, n: Expr, local_name: str = "cdf") -> pw.Func:
    """cdf[i] = array[0] + ... + array[i], as a scan over i = 1 .. n-1."""
    cdf = ctx.func(local_name)
    cdf[ctx.i] = pw.cast(t, array[ctx.i])
    r = pw.RDom([(1, n - 1)])
    cdf[r.x] = cdf[r.x - 1] + cdf[r.x]
    return cdf


class Histogram(NodeType):
    """Histogram of a gray image: how many pixels fall into each of `bins` bins (u32 array).

    Values are normalized to [0, 1) before binning: integers by their type's range (so u8
    with 256 bins has one bin per value, u8 with 16 bins puts 0..15 in bin 0), floats as
    they are, with values outside [0, 1] counted in the first or last bin. Only gray images
    are accepted: convert colour to gray, or pick a channel, first.
    """

    category = CATEGORY
    inputs = (Port("image", "gray", "number"),)
    outputs = (Port("out", "array", "u32", doc="hist[i], i in [0, bins)"),)
    params = (BINS,)

    def build(self, ctx: BuildContext, image: Value, bins: int) -> Value:
        return Value(_histogram(ctx, image, bins, "out"), "array", (ctx.extent(bins),))


class CumulativeHistogram(NodeType):
    """Running sum of an array: out[i] = in[0] + ... + in[i] (of a histogram: the CDF).

    Computed as a scan, out[i] = out[i-1] + in[i]. Integer arrays sum in 32 bits (u32 or
    i32), float arrays in their own type.
    """

    category = CATEGORY
    inputs = (Port("array", "array", "number"),)
    outputs = (Port("out", "array", "number"),)

    def build(self, ctx: BuildContext, array: Value) -> Value:
        n = array.extents[0]
        cdf = _cumulative(ctx, array.func, _accumulator_type(array.type), n, "out")
        return Value(cdf, "array", (n,))


class HistogramEqualization(NodeType):
    """Histogram equalization of a gray image: spreads the values so that their histogram
    becomes as flat as possible.

    The classic CDF mapping, as OpenCV's equalizeHist: v -> round((cdf(v) - cdf_min) /
    (N - cdf_min) * (L - 1)), where cdf_min is the CDF at the darkest value present, N the
    number of pixels and L the number of levels (u8: 256, u16: 65536, one bin per value).
    Float images are binned into `bins` bins over [0, 1] and map to (cdf - cdf_min) /
    (N - cdf_min) without rounding. A constant image is returned unchanged.
    """

    category = CATEGORY
    inputs = (Port("image", "gray", "number", doc="u8, u16 or f32"),)
    outputs = (Port("out", "gray"),)
    params = (Parameter("bins", "int", 256, minimum=2, maximum=65536, doc="number of bins for float images"),)

    def build(self, ctx: BuildContext, image: Value, bins: int) -> Value:
        t = image.type
        if not (t.is_float() and t.bits == 32) and not (t.is_uint() and t.bits in (8, 16)):
            raise ctx.error(f"histogram equalization takes u8, u16 or f32 images, not {t}")
        levels = bins if t.is_float() else 2**t.bits
        hist = _histogram(ctx, image, levels)
        cdf = _cumulative(ctx, hist, pw.UInt(32), ctx.extent(levels))
        total = pw.u32(image.width * image.height)
        # cdf_min: the CDF at the smallest value present (the first non-empty bin)
        r = pw.RDom([(0, levels)])
        cdf_min = ctx.func("cdf_min")
        cdf_min[()] = total
        cdf_min[()] = pw.min(cdf_min[()], pw.select(hist[r.x] > 0, cdf[r.x], total))
        # as OpenCV: a float32 scale (L - 1) / (N - cdf_min), then round half to even
        top = 1.0 if t.is_float() else float(levels - 1)
        scale = pw.f32(top) / pw.f32(total - cdf_min[()])
        mapped = pw.f32(cdf[ctx.i] - cdf_min[()]) * scale
        lut = ctx.func("lut")
        lut[ctx.i] = mapped if t.is_float() else pw.saturating_cast(t, pw.round(mapped))
        x, y = ctx.x, ctx.y
        out = ctx.func("out")
        v = image[x, y]
        out[x, y] = pw.select(cdf_min[()] == total, v, lut[_bin_index(v, t, levels)])
        return image.with_func(out)


STATISTICS = ("sum", "mean", "minimum", "maximum")


class ImageStatistic(NodeType):
    """One number summarizing an image: the sum, mean, minimum or maximum of its values.

    The statistic is taken over all pixels and all channels together (a scalar). Sum and
    mean accumulate in f64 and give f32; minimum and maximum keep the input's type.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "scalar", "number"),)
    params = (Parameter("statistic", "choice", "mean", choices=STATISTICS, doc="what to compute"),)

    def build(self, ctx: BuildContext, image: Value, statistic: str) -> Value:
        r = _domain(image)
        v = image[tuple(r[k] for k in range(r.dimensions()))]
        if statistic in ("minimum", "maximum"):
            combine = pw.min if statistic == "minimum" else pw.max
            out = ctx.func("out")
            out[()] = image[(0,) * len(image.extents)]
            out[()] = combine(out[()], v)
            return Value(out, "scalar", ())
        total = ctx.func("sum")
        total[()] = pw.f64(0.0)
        total[()] = total[()] + pw.f64(v)
        out = ctx.func("out")
        if statistic == "sum":
            out[()] = pw.f32(total[()])
        else:
            count = 1
            for e in image.extents:
                count = count * e
            out[()] = pw.f32(total[()] / pw.f64(count))
        return Value(out, "scalar", ())


def _line_sums(ctx: BuildContext, image: Value, along_x: bool) -> Value:
    """Sums over x (one per row) or over y (one per column), channels included."""
    t = _accumulator_type(image.type)
    rest = [(0, e) for e in image.extents[2:]]
    summed = image.width if along_x else image.height
    r = pw.RDom([(0, summed), *rest])
    i = ctx.i
    point = (r.x, i) if along_x else (i, r.x)
    channel = (r.y,) if rest else ()
    out = ctx.func("out")
    out[i] = pw.cast(t, 0)
    out[i] = out[i] + pw.cast(t, image[(*point, *channel)])
    return Value(out, "array", (image.height if along_x else image.width,))


class ColumnSums(NodeType):
    """The sum of each column: out[x] = sum over y (and channels) of image[x, y].

    Integer images sum in 32 bits (u32 or i32), float images in f32.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "array", "number", doc="one sum per column, out[x]"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        return _line_sums(ctx, image, along_x=False)


class RowSums(NodeType):
    """The sum of each row: out[y] = sum over x (and channels) of image[x, y].

    Integer images sum in 32 bits (u32 or i32), float images in f32.
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    outputs = (Port("out", "array", "number", doc="one sum per row, out[y]"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        return _line_sums(ctx, image, along_x=True)
