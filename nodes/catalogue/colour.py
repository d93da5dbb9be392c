"""Colour: conversions between colour spaces and gray, and splitting and merging channels.

Colour images are planar f[x, y, c] with channels r, g, b (c = 0, 1, 2); converted
images keep that layout with their own channel order (Y, Cb, Cr or H, S, V).
"""

from __future__ import annotations

from collections.abc import Sequence

from pixelweave.engine.ir.expr import Const, Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.catalogue.point import float_type, normalized
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert, full_scale
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Point and colour"

RGB_IN = Port("image", "colour", "number", doc="a colour image, channels r, g, b")
LUMA = (0.299, 0.587, 0.114)  # Rec. 601, as OpenCV's RGB2GRAY and the image reader

# OpenCV's full-range BT.601 (JPEG) coefficients for RGB <-> YCrCb
CB_SCALE, CR_SCALE = 0.564, 0.713
CR_TO_R, CR_TO_G, CB_TO_G, CB_TO_B = 1.403, -0.714, -0.344, 1.773


def channels_of(ctx: BuildContext, image: Value, t: Type) -> tuple[Expr, ...]:
    """The r, g, b values of a colour image at (x, y), cast to type t."""
    return tuple(pw.cast(t, image[ctx.x, ctx.y, k]) for k in range(3))


def colour_from(ctx: BuildContext, local_name: str, like: Value, channels: Sequence[Expr]) -> Value:
    """A three-channel colour Value of the size of `like`, channel k given by channels[k]
    (expressions in x and y)."""
    f = ctx.func(local_name)
    c = ctx.c
    f[ctx.x, ctx.y, c] = pw.select(c == 0, channels[0], c == 1, channels[1], channels[2])
    return Value(f, "colour", (like.width, like.height, ctx.extent(3)))


def gray_from(ctx: BuildContext, local_name: str, like: Value, e: Expr) -> Value:
    """A gray Value of the size of `like` computed by e (an expression in x and y)."""
    f = ctx.func(local_name)
    f[ctx.x, ctx.y] = e
    return Value(f, "gray", (like.width, like.height))


def chroma_offset(t: Type) -> float:
    """The zero of Cb and Cr: mid-scale (128 for u8, 32768 for u16, 0.5 for floats)."""
    return 0.5 if t.is_float() else (full_scale(t) + 1) / 2


def luma(r: Expr, g: Expr, b: Expr) -> Expr:
    return LUMA[0] * r + LUMA[1] * g + LUMA[2] * b


class RgbToGray(NodeType):
    """Gray from colour by Rec. 601 luma: 0.299 r + 0.587 g + 0.114 b (as OpenCV's
    RGB2GRAY). Keeps the element type; integers are rounded to nearest."""

    category = CATEGORY
    inputs = (RGB_IN,)
    outputs = (Port("out", "gray"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        t = image.type
        r, g, b = channels_of(ctx, image, float_type(t))
        return gray_from(ctx, "out", image, convert(luma(r, g, b), t, scale=False))


class GrayToRgb(NodeType):
    """A colour image with the gray value in each of r, g and b."""

    category = CATEGORY
    inputs = (Port("image", "gray", "number"),)
    outputs = (Port("out", "colour"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        f = ctx.func("out")
        f[ctx.x, ctx.y, ctx.c] = image[ctx.x, ctx.y]
        return Value(f, "colour", (image.width, image.height, ctx.extent(3)))


class RgbToYcbcr(NodeType):
    """RGB to full-range YCbCr (BT.601 as in JPEG, OpenCV's COLOR_RGB2YCrCb coefficients),
    in channel order Y, Cb, Cr (OpenCV's order is Y, Cr, Cb).

    Y = 0.299 r + 0.587 g + 0.114 b; Cb = 0.564 (b - Y) + d; Cr = 0.713 (r - Y) + d, where
    d is mid-scale: 128 for u8, 32768 for u16, 0.5 for floats. Keeps the element type;
    integers are rounded to nearest and saturate.
    """

    category = CATEGORY
    inputs = (RGB_IN,)
    outputs = (Port("out", "colour", doc="channels Y, Cb, Cr"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        t = image.type
        d = chroma_offset(t)
        r, g, b = channels_of(ctx, image, float_type(t))
        y = luma(r, g, b)
        ycbcr = (y, (b - y) * CB_SCALE + d, (r - y) * CR_SCALE + d)
        return colour_from(ctx, "out", image, [convert(v, t, scale=False) for v in ycbcr])


class YcbcrToRgb(NodeType):
    """Full-range YCbCr (channels Y, Cb, Cr; BT.601 as in JPEG) back to RGB, with OpenCV's
    COLOR_YCrCb2RGB coefficients: r = Y + 1.403 (Cr - d), g = Y - 0.714 (Cr - d) - 0.344
    (Cb - d), b = Y + 1.773 (Cb - d), d mid-scale (128 for u8, 0.5 for floats).

    Keeps the element type; integers are rounded to nearest and saturate.
    """

    category = CATEGORY
    inputs = (Port("image", "colour", "number", doc="a YCbCr image, channels Y, Cb, Cr"),)
    outputs = (Port("out", "colour", doc="channels r, g, b"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        t = image.type
        d = chroma_offset(t)
        y, cb, cr = channels_of(ctx, image, float_type(t))
        cb, cr = cb - d, cr - d
        rgb = (y + CR_TO_R * cr, y + CR_TO_G * cr + CB_TO_G * cb, y + CB_TO_B * cb)
        return colour_from(ctx, "out", image, [convert(v, t, scale=False) for v in rgb])


class RgbToHsv(NodeType):
    """RGB to HSV (hue, saturation, value), each in [0, 1]: hue 0 is red, 1/3 green, 2/3
    blue, and is 0 for grays. The result is float; integer images are normalized first."""

    category = CATEGORY
    inputs = (RGB_IN,)
    outputs = (Port("out", "colour", "float", doc="channels H, S, V"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        x, y = ctx.x, ctx.y
        r, g, b = (normalized(image[x, y, k]) for k in range(3))
        value = gray_from(ctx, "value", image, pw.max(r, g, b))
        chroma = gray_from(ctx, "chroma", image, value[x, y] - pw.min(r, g, b))
        v, d = value[x, y], chroma[x, y]
        saturation = pw.select(d == 0, 0.0, d / v)
        # sixths of the turn from red; where several channels are the maximum the formulas agree
        sixths = pw.select(b == v, 4.0 + (r - g) / d, g == v, 2.0 + (b - r) / d, (g - b) / d)
        turn = sixths * (1.0 / 6.0)
        hue = pw.select(d == 0, 0.0, turn < 0, turn + 1.0, turn)
        return colour_from(ctx, "out", image, (hue, saturation, v))


class HsvToRgb(NodeType):
    """HSV (hue, saturation, value in [0, 1]; hue wraps around) to RGB in [0, 1]. The
    result is float; integer images are normalized first."""

    category = CATEGORY
    inputs = (Port("image", "colour", "number", doc="an HSV image, channels H, S, V"),)
    outputs = (Port("out", "colour", "float", doc="channels r, g, b"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        x, y = ctx.x, ctx.y
        h, s, v = (normalized(image[x, y, k]) for k in range(3))
        sixths = pw.floor(h * 6.0)
        f = h * 6.0 - sixths
        sector = gray_from(ctx, "sector", image, pw.i32(sixths) % 6)[x, y]
        p, q, t = v * (1.0 - s), v * (1.0 - f * s), v * (1.0 - (1.0 - f) * s)
        # (r, g, b) in sectors 0..5 of the hue circle
        table = ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))
        rgb = []
        for k in range(3):
            args: list = []
            for n in range(5):
                args += [sector == n, table[n][k]]
            rgb.append(pw.select(*args, table[5][k]))
        return colour_from(ctx, "out", image, rgb)


class ChannelSplit(NodeType):
    """Splits a colour image into three gray images r, g and b."""

    category = CATEGORY
    inputs = (RGB_IN,)
    outputs = (Port("r", "gray"), Port("g", "gray"), Port("b", "gray"))

    def build(self, ctx: BuildContext, image: Value) -> dict[str, Value]:
        x, y = ctx.x, ctx.y
        return {name: gray_from(ctx, name, image, image[x, y, k]) for k, name in enumerate("rgb")}


class ChannelMerge(NodeType):
    """Merges three gray images of the same element type into a colour image (r, g, b).
    The result has the size of `r`."""

    category = CATEGORY
    inputs = (Port("r", "gray", "number"), Port("g", "gray", "number"), Port("b", "gray", "number"))
    outputs = (Port("out", "colour"),)

    def build(self, ctx: BuildContext, r: Value, g: Value, b: Value) -> Value:
        for name, other in (("g", g), ("b", b)):
            if other.type != r.type:
                raise ctx.error(
                    f"port `{name}` is given {other.type} but port `r` {r.type}: "
                    "the three channels need one element type (convert one first)"
                )
        x, y = ctx.x, ctx.y
        return colour_from(ctx, "out", r, (r[x, y], g[x, y], b[x, y]))


class ChannelExtract(NodeType):
    """One channel of a colour image as a gray image (0 is r, 1 g, 2 b)."""

    category = CATEGORY
    inputs = (Port("image", "colour", "any"),)
    outputs = (Port("out", "gray"),)
    params = (Parameter("channel", "int", 0, minimum=0, maximum=3, doc="the channel index: 0 r, 1 g, 2 b, 3 alpha"),)

    def build(self, ctx: BuildContext, image: Value, channel: int) -> Value:
        count = image.channels
        if isinstance(count, Const) and channel >= int(count.value):
            raise ctx.error(f"channel {channel} does not exist: port `image` has {int(count.value)} channels")
        return gray_from(ctx, "out", image, image[ctx.x, ctx.y, channel])
