"""Camera pipeline: from a raw Bayer mosaic to a colour picture, in the steps of Halide's
camera_pipe app (hot pixel suppression, demosaicking, white balance, colour matrix; the
tone curve is the Gamma or Lookup table node).

A raw mosaic is a gray image in which each pixel saw one colour through its filter; the
2x2 `pattern` names the filters of the top-left cell row by row (RGGB: red at (0, 0),
green at (1, 0) and (0, 1), blue at (1, 1)). The mosaic stencils read beyond the edge
with `mirror_interior` by default: it reflects about the edge pixel, so a reflected pixel
has the same filter colour as the one it stands for (clamping to the edge would not).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.catalogue.common import BOUNDARY
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import full_scale
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

MOSAIC_BOUNDARY = dataclasses.replace(
    BOUNDARY,
    default="mirror_interior",
    doc="What the stencil reads beyond the mosaic's edge: mirror_interior (abc|ba, the default) keeps "
    "the Bayer colour of every reflected pixel; clamp repeats the edge pixel (a pixel of another colour "
    "one step away); constant (zero), wrap, mirror (abc|cba) and none as in the other stencils",
)

# Where red and blue sit in the 2x2 cell of each pattern: ((red x, red y), (blue x, blue y)).
PATTERNS: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "RGGB": ((0, 0), (1, 1)),
    "BGGR": ((1, 1), (0, 0)),
    "GRBG": ((1, 0), (0, 1)),
    "GBRG": ((0, 1), (1, 0)),
}

MOSAIC = Port("image", "gray", "number", doc="the raw Bayer mosaic, one colour sample per pixel")


def _wide(t: Type) -> Type:
    """The type a few neighbours of type t are summed in exactly: floats their own type,
    integers a wider signed integer."""
    if t.is_float():
        return t
    return pw.Int(32) if t.bits <= 16 else pw.Int(64)


def _mean(values: list[Expr], t: Type) -> Expr:
    """The mean of 2 or 4 values in the wide type: exact for floats up to rounding, integers
    rounded to nearest with ties upwards (exact integer arithmetic, so compiled code and the
    reference evaluator agree)."""
    wide = _wide(t)
    total = sum((pw.cast(wide, v) for v in values[1:]), pw.cast(wide, values[0]))
    n = len(values)
    if wide.is_float():
        return total * (1.0 / n)
    return (total + n // 2) / n


def _weight(w: float | Expr, t: Type) -> float | Expr:
    """A weight as applied to an image of type t: as given for floats, a multiple of 2^-24
    for integers (so that products with 16-bit values and their sums are exact in f64);
    a run-time weight (an Expr) is rounded by the generated code."""
    if t.is_float():
        return w
    if isinstance(w, Expr):
        return pw.round(pw.cast(pw.Float(64), w) * float(2**24)) * (1.0 / 2**24)
    return round(w * 2**24) / 2**24


def _channel_gains(c: pw.Var, gains: tuple[float, float, float]) -> Expr:
    """The per-channel constant gains[c] of a colour image, as an f32 expression."""
    return pw.select(c == 0, pw.f32(gains[0]), c == 1, pw.f32(gains[1]), pw.f32(gains[2]))


class HotPixelSuppression(NodeType):
    """Hot pixel suppression on a raw mosaic: a pixel brighter than all four pixels of its
    own colour two steps away (left, right, up, down) is lowered to the brightest of them.

    Stuck sensor pixels show as isolated bright dots that demosaicking would smear into
    coloured crosses; other pixels are unchanged. Works on any element type (u16 raw,
    u8, float).
    """

    category = "Stencils"
    inputs = (MOSAIC,)
    outputs = (Port("out", "gray"),)
    params = (MOSAIC_BOUNDARY,)

    def build(self, ctx: BuildContext, image: Value, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        x, y = ctx.x, ctx.y
        brightest = pw.max(src[x - 2, y], src[x + 2, y], src[x, y - 2], src[x, y + 2])
        out = ctx.func("out")
        out[x, y] = pw.min(src[x, y], brightest)
        return image.with_func(out)


class Demosaic(NodeType):
    """Demosaic a raw Bayer mosaic into a colour image of the same size and element type,
    by bilinear interpolation of the two missing colours at each pixel.

    Green at a red or blue pixel is the mean of its four neighbours (left, right, up,
    down); red or blue at a green pixel is the mean of the two neighbours of that colour
    (left and right, or up and down); red at a blue pixel and blue at a red one are the
    mean of the four diagonal neighbours. Integer means are rounded to nearest.
    """

    category = "Stencils"
    inputs = (MOSAIC,)
    outputs = (Port("out", "colour", doc="planar RGB, f[x, y, c]"),)
    params = (
        Parameter(
            "pattern",
            "choice",
            "RGGB",
            choices=tuple(PATTERNS),
            doc="the colour filters of the top-left 2x2 cell, row by row",
        ),
        MOSAIC_BOUNDARY,
    )

    def build(self, ctx: BuildContext, image: Value, pattern: str, boundary: str) -> Value:
        src = ctx.bounded(image, boundary)
        x, y, c = ctx.x, ctx.y, ctx.c
        t = image.type
        (rx, ry), (bx, by) = PATTERNS[pattern]
        px, py = x % 2, y % 2
        on_red = pw.logical_and(px == rx, py == ry)
        on_blue = pw.logical_and(px == bx, py == by)
        on_green = pw.logical_not(pw.logical_or(on_red, on_blue))
        here = src[x, y]
        across = _mean([src[x - 1, y], src[x + 1, y]], t)  # left and right
        along = _mean([src[x, y - 1], src[x, y + 1]], t)  # up and down
        cross = _mean([src[x - 1, y], src[x + 1, y], src[x, y - 1], src[x, y + 1]], t)
        diagonal = _mean([src[x - 1, y - 1], src[x + 1, y - 1], src[x - 1, y + 1], src[x + 1, y + 1]], t)
        wide = pw.cast(_wide(t), here)
        # a green pixel in a red row has red to its left and right, blue above and below
        red = pw.select(on_red, wide, on_blue, diagonal, py == ry, across, along)
        green = pw.select(on_green, wide, cross)
        blue = pw.select(on_blue, wide, on_red, diagonal, py == by, across, along)
        out = ctx.func("out")
        out[x, y, c] = pw.cast(t, pw.select(c == 0, red, c == 1, green, blue))
        return Value(out, "colour", (image.width, image.height, ctx.extent(3)))


class WhiteBalance(NodeType):
    """White balance: each colour channel multiplied by its gain, so that a neutral grey
    in the scene comes out grey.

    Raw camera colour is usually green-tinted (the sensor is most sensitive to green);
    gains above 1 for red and blue undo it. Integer images are rounded to nearest and
    saturate at white; float images are not clamped.
    """

    category = "Point and colour"
    inputs = (Port("image", "colour", "number"),)
    outputs = (Port("out", "colour"),)
    params = (
        Parameter("red", "float", 1.0, minimum=0, maximum=16, doc="gain of the red channel", runtime=True),
        Parameter("green", "float", 1.0, minimum=0, maximum=16, doc="gain of the green channel", runtime=True),
        Parameter("blue", "float", 1.0, minimum=0, maximum=16, doc="gain of the blue channel", runtime=True),
    )

    def build(self, ctx: BuildContext, image: Value, red: float, green: float, blue: float) -> Value:
        t = image.type
        gain = _channel_gains(ctx.c, (red, green, blue))

        def balance(v: Expr) -> Expr:
            if t.is_float():
                return v * pw.cast(t, gain)
            return pw.saturating_cast(t, pw.round(pw.f32(v) * gain))

        return ctx.pointwise("out", balance, image)


IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


class ColourMatrix(NodeType):
    """Colour matrix: out = M x (r, g, b) per pixel on normalized values (full scale 1.0),
    clamped to [0, 1]; turns a camera's colour into sRGB primaries (or mixes channels).

    The matrix is 3x3, or 3x4 with a fourth column of offsets added to each output
    channel. Rows of a colour-correction matrix usually sum to 1, so that grey stays
    grey. The result keeps the image's element type (integers rounded to nearest).
    """

    category = "Point and colour"
    inputs = (Port("image", "colour", "number"),)
    outputs = (Port("out", "colour"),)
    params = (
        Parameter(
            "matrix",
            "matrix",
            IDENTITY,
            doc="3 rows (output red, green, blue) of 3 weights of the input red, green and blue, "
            "and optionally a fourth column: an offset",
            extra={"max_size": 4},
            runtime=True,
        ),
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        matrix = values["matrix"]
        if len(matrix) != 3 or len(matrix[0]) not in (3, 4):
            return [f"the matrix must be 3x3 or 3x4 (3 rows), got {len(matrix)} rows of {len(matrix[0])}"]
        return []

    def build(self, ctx: BuildContext, image: Value, matrix: tuple[tuple[Any, ...], ...]) -> Value:
        x, y, c = ctx.x, ctx.y, ctx.c
        t = image.type
        # Integers are mixed in f64 with weights that are multiples of 2^-24: every product
        # and sum is exact, so the compiled code and the reference round alike.
        ft = t if t.is_float() else pw.Float(64)
        white = 1.0 if t.is_float() else full_scale(t)

        def coefficient(k: int, scale: float = 1.0) -> Expr:
            column = [pw.cast(ft, _weight(row[k] * scale, t)) for row in matrix]
            return pw.select(c == 0, column[0], c == 1, column[1], column[2])

        terms = [coefficient(k) * pw.cast(ft, image[x, y, k]) for k in range(3)]
        if len(matrix[0]) == 4:
            terms.append(coefficient(3, white))
        mixed = functools.reduce(operator.add, terms)
        clamped = pw.clamp(mixed, 0.0, white)
        out = ctx.func("out")
        out[x, y, c] = clamped if t.is_float() else pw.cast(t, pw.round(clamped))
        return image.with_func(out)
