"""Point operations: each output value from the input value at the same place (arithmetic,
math functions, type conversion, tone adjustments, lookup curves).

Tone nodes work on normalized values (full scale is 1.0, as in nodes/convert.py), so a u8
photograph and its float version give the same picture; integer results are rounded to
nearest and saturate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.catalogue.common import ELEMENT_TYPES
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert, full_scale, type_named
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port, short_type_name
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Point and colour"

IMAGE = Port("image", "image", "number")


# --- shared helpers ---------------------------------------------------------------------


def float_type(t: Type) -> Type:
    """The float type a value of type t is computed in: its own if float, else float32."""
    return t if t.is_float() else pw.Float(32)


def normalized(e: Expr) -> Expr:
    """e as a float with full scale 1.0 (u8 255 -> 1.0); float values are kept as they are."""
    t = e.type()
    return e if t.is_float() else convert(e, pw.Float(32))


def denormalized(e: Expr, t: Type) -> Expr:
    """A normalized float back in type t: rounded to nearest and saturated for integers."""
    return pw.cast(t, e) if t.is_float() else convert(e, t)


def tone(ctx: BuildContext, image: Value, fn: Callable[[Expr], Expr], local_name: str = "out") -> Value:
    """A point operation on normalized values that keeps the image's element type."""
    t = image.type
    return ctx.pointwise(local_name, lambda v: denormalized(fn(normalized(v)), t), image)


def piecewise_linear(points: Sequence[tuple[float, float]], x: Expr) -> Expr:
    """The piecewise-linear curve through `points` at x, flat beyond the first and last
    point (as numpy.interp). Run-time points (f64 Params) give the same f32 arithmetic as
    constant ones: slopes in f64, then every coefficient rounded to x's type."""
    t = x.type()

    def coefficient(v: Expr | float) -> Expr | float:
        return pw.cast(t, v) if isinstance(v, Expr) else v

    args: list = [x <= coefficient(points[0][0]), coefficient(points[0][1])]
    for (xa, ya), (xb, yb) in itertools.pairwise(points):
        slope = coefficient((yb - ya) / (xb - xa))
        args += [x <= coefficient(xb), coefficient(ya) + (x - coefficient(xa)) * slope]
    args.append(coefficient(points[-1][1]))
    return pw.select(*args)


# --- arithmetic -------------------------------------------------------------------------

OPERATIONS = ("add", "subtract", "multiply", "divide", "minimum", "maximum", "absolute_difference", "power")

_FLOAT_OPS: dict[str, Callable[[Expr, Expr], Expr]] = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
    "minimum": pw.min,
    "maximum": pw.max,
    "absolute_difference": lambda a, b: pw.abs(a - b),
    "power": pw.pow,
}

OPERATION = Parameter(
    "operation",
    "choice",
    "add",
    choices=OPERATIONS,
    doc="a + b, a - b, a * b, a / b, min(a, b), max(a, b), |a - b| or a to the power b",
)


def _wide_type(a: Type, b: Type) -> Type:
    """The float type integer arithmetic is done in: exact for every 8- and 16-bit value."""
    if b.is_float() and b.bits == 64:
        return b
    if a.bits > 16 or (not b.is_float() and b.bits > 16):
        return pw.Float(64)
    return pw.Float(32)


def arithmetic(op: str, a: Expr, b: Expr) -> Expr:
    """a op b in the type of a: float images in their float type; integer images widened,
    rounded to nearest and saturated (division by zero gives 0; power raises the
    normalized value of a, so that full scale stays full scale)."""
    t = a.type()
    if t.is_float():
        return _FLOAT_OPS[op](a, pw.cast(t, b))
    wide = _wide_type(t, b.type())
    fa, fb = pw.cast(wide, a), pw.cast(wide, b)
    if op == "power":
        scale = full_scale(t)
        result = pw.pow(fa / scale, fb) * scale
    else:
        result = _FLOAT_OPS[op](fa, fb)
    if op == "divide":
        result = pw.select(fb == 0, 0, result)
    return pw.saturating_cast(t, pw.round(result))


class Arithmetic(NodeType):
    """Arithmetic of two images, or of an image and a scalar: add, subtract, multiply,
    divide, minimum, maximum, absolute difference, power.

    The result has the element type of `a`. Float images are computed in float. Integer
    images are computed widened (in float, exact for 8- and 16-bit values) and saturate
    back to the type of `a` (u8: 200 + 100 = 255, 50 - 100 = 0), rounding to nearest;
    dividing by zero gives 0. Values of `b` are used as they are, not rescaled: multiplying
    a u8 image by a float mask in [0, 1] darkens it; to add images of different element
    types, convert one first. Power raises the normalized value of an integer `a` (255 is
    1.0) to the power b. A gray or scalar `b` applies to every channel of a colour `a`.
    """

    category = CATEGORY
    inputs = (
        Port("a", "image", "number", doc="the image; the result has its size and element type"),
        Port("b", "any", "number", doc="an image of the same size, a gray image (for every channel) or a scalar"),
    )
    params = (OPERATION,)

    def build(self, ctx: BuildContext, a: Value, b: Value, operation: str) -> Value:
        if b.layout == "array":
            raise ctx.error("port `b` takes an image or a scalar, but is given an array value")
        if a.layout == "gray" and b.layout == "colour":
            raise ctx.error("port `b` is given a colour image but port `a` a gray one: connect the colour image to `a`")
        return ctx.pointwise("out", lambda va, vb: arithmetic(operation, va, vb), a, b)


class ArithmeticConstant(NodeType):
    """Arithmetic of an image and a constant: add, subtract, multiply, divide, minimum,
    maximum, absolute difference, power.

    The constant is in the image's own units (add 10 to a u8 image; add 0.04 to a float
    one). As for Arithmetic, integer images are computed widened, rounded and saturated;
    power raises the normalized value (255 is 1.0), so power 2.2 darkens like a gamma.
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (OPERATION, Parameter("value", "float", 0.0, doc="the constant b in `image op b`", runtime=True))

    def build(self, ctx: BuildContext, image: Value, operation: str, value: float) -> Value:
        b = pw.f32(value)
        return ctx.pointwise("out", lambda v: arithmetic(operation, v, b), image)


# --- math functions and conversion --------------------------------------------------------

_MATH: dict[str, Callable[[Expr], Expr]] = {
    "sqrt": pw.sqrt,
    "exp": pw.exp,
    "log": pw.log,
    "abs": pw.abs,
    "sin": pw.sin,
    "cos": pw.cos,
    "square": lambda v: v * v,
    "reciprocal": lambda v: 1.0 / v,
    "floor": pw.floor,
    "ceil": pw.ceil,
    "round": pw.round,
}


class MathFunction(NodeType):
    """A math function of each value: sqrt, exp, log, abs, sin, cos, square, reciprocal,
    floor, ceil or round (half to even). The result is float.

    Integer images are normalized first (u8 255 and u16 65535 become 1.0), so a u8 image
    and its float version give the same result. Outside the function's domain the result
    follows IEEE floats: sqrt(-1) is NaN, log(0) is -inf, 1 / 0 is inf.
    """

    category = CATEGORY
    inputs = (IMAGE,)
    outputs = (Port("out", "image", "float"),)
    params = (Parameter("function", "choice", "sqrt", choices=tuple(_MATH), doc="the function applied to each value"),)

    def build(self, ctx: BuildContext, image: Value, function: str) -> Value:
        return ctx.pointwise("out", lambda v: _MATH[function](normalized(v)), image)


class ConvertType(NodeType):
    """Converts the element type to u8, u16 or f32.

    With `scale`, full scale maps to full scale (u8 255 becomes f32 1.0 and u16 65535);
    without it values are kept as numbers. Integer results are rounded to nearest and
    saturate at the type's limits.
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter("element", "choice", "f32", choices=ELEMENT_TYPES, doc="the element type of the result"),
        Parameter("scale", "bool", True, doc="map full scale to full scale (else keep the numbers)"),
    )

    def build(self, ctx: BuildContext, image: Value, element: str, scale: bool) -> Value:
        to = type_named(element)
        return ctx.pointwise("out", lambda v: convert(v, to, scale), image)


# --- tone -------------------------------------------------------------------------------


class BrightnessContrast(NodeType):
    """Brightness and contrast: out = (in - 0.5) * contrast + 0.5 + brightness, on
    normalized values (full scale is 1.0), clamped to [0, 1].

    Integer images keep their element type (rounded to nearest).
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter(
            "brightness",
            "float",
            0.0,
            minimum=-1,
            maximum=1,
            doc="added after the contrast, in full scale",
            runtime=True,
        ),
        Parameter(
            "contrast",
            "float",
            1.0,
            minimum=0,
            maximum=10,
            doc="slope around mid-gray: 1 keeps, 0 flattens",
            runtime=True,
        ),
    )

    def build(self, ctx: BuildContext, image: Value, brightness: float, contrast: float) -> Value:
        return tone(ctx, image, lambda v: pw.clamp((v - 0.5) * contrast + (0.5 + brightness), 0.0, 1.0))


class Gamma(NodeType):
    """Gamma correction: out = in ^ (1 / gamma) on normalized values (full scale is 1.0).

    A gamma above 1 brightens the mid-tones; black and white stay. Negative float values
    become 0. Integer images keep their element type (rounded to nearest).
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter("gamma", "float", 2.2, minimum=0.01, maximum=10, doc="the gamma; 1 changes nothing", runtime=True),
    )

    def build(self, ctx: BuildContext, image: Value, gamma: float) -> Value:
        return tone(ctx, image, lambda v: pw.pow(pw.max(v, 0.0), 1.0 / gamma))


class Levels(NodeType):
    """Levels, as in Photoshop: input black and white points, mid-tone gamma, output
    black and white points, all in normalized units (full scale is 1.0).

    out = out_black + (out_white - out_black) * clamp((in - in_black) / (in_white -
    in_black), 0, 1) ^ (1 / gamma). An output black above the output white inverts.
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter(
            "in_black",
            "float",
            0.0,
            minimum=0,
            maximum=1,
            doc="input value that becomes the output black",
            runtime=True,
        ),
        Parameter(
            "in_white",
            "float",
            1.0,
            minimum=0,
            maximum=1,
            doc="input value that becomes the output white",
            runtime=True,
        ),
        Parameter(
            "gamma", "float", 1.0, minimum=0.01, maximum=10, doc="mid-tone gamma; above 1 brightens", runtime=True
        ),
        Parameter("out_black", "float", 0.0, minimum=0, maximum=1, doc="darkest output value", runtime=True),
        Parameter("out_white", "float", 1.0, minimum=0, maximum=1, doc="brightest output value", runtime=True),
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        in_black, in_white = values["in_black"], values["in_white"]
        if in_white <= in_black:
            return [f"the input white point ({in_white:g}) must be above the input black point ({in_black:g})"]
        return []

    def build(
        self,
        ctx: BuildContext,
        image: Value,
        in_black: Expr,
        in_white: Expr,
        gamma: Expr,
        out_black: Expr,
        out_white: Expr,
    ) -> Value:
        def levels(v: Expr) -> Expr:
            t = pw.clamp((v - in_black) * (1.0 / (in_white - in_black)), 0.0, 1.0)
            return out_black + (out_white - out_black) * pw.pow(t, 1.0 / gamma)

        return tone(ctx, image, levels)


class Threshold(NodeType):
    """White where the normalized value is at least the threshold, black elsewhere.

    The result keeps the element type (white is 255, 65535 or 1.0); a colour image is
    thresholded per channel.
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter(
            "threshold",
            "float",
            0.5,
            minimum=0,
            maximum=1,
            doc="the level, in full scale, that becomes white",
            runtime=True,
        ),
    )

    def build(self, ctx: BuildContext, image: Value, threshold: float) -> Value:
        t = image.type
        white, black = pw.cast(t, full_scale(t)), pw.cast(t, 0)
        if t.is_float():
            return ctx.pointwise("out", lambda v: pw.select(v >= threshold, white, black), image)
        # the smallest integer at or above the threshold (at most full scale): an exact compare
        level = pw.cast(t, pw.ceil(pw.f32(threshold) * float(full_scale(t))))
        return ctx.pointwise("out", lambda v: pw.select(v >= level, white, black), image)


class Invert(NodeType):
    """The negative: full scale minus the value (255 - v for u8, 1 - v for float)."""

    category = CATEGORY
    inputs = (IMAGE,)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        t = image.type
        if t.is_float():
            return ctx.pointwise("out", lambda v: 1.0 - v, image)
        top = int(full_scale(t))
        if t.is_uint():
            return ctx.pointwise("out", lambda v: pw.cast(t, top) - v, image)
        return ctx.pointwise("out", lambda v: pw.saturating_cast(t, top - pw.cast(pw.Int(64), v)), image)


# --- lookup curves ------------------------------------------------------------------------

TABLE_SIZES = {"u8": 256, "u16": 65536}


class LookupTable(NodeType):
    """Maps each value through a curve: piecewise-linear between points in [0, 1] x [0, 1]
    (normalized: full scale is 1.0), flat beyond the first and last point.

    For u8 and u16 images the curve is tabulated once per run (256 or 65536 entries, the
    Func `table`, computed at root) and each pixel reads its entry; other element types,
    floats included, evaluate the curve directly, interpolating exactly. The result keeps
    the element type (integers rounded to nearest).
    """

    category = CATEGORY
    inputs = (IMAGE,)
    params = (
        Parameter(
            "curve",
            "curve",
            [[0.0, 0.0], [1.0, 1.0]],
            doc="points [input, output] with increasing input; identity by default",
            runtime=True,
        ),
    )

    @classmethod
    def runtime_type(cls, name: str, values: dict[str, Any]) -> Type:
        return pw.Float(64)  # the slopes are computed from the points in f64, as for constant points

    def build(self, ctx: BuildContext, image: Value, curve: tuple[tuple[Any, Any], ...]) -> Value:
        t = image.type
        size = TABLE_SIZES.get(short_type_name(t))
        if size is None:
            return tone(ctx, image, lambda v: piecewise_linear(curve, v))
        i = ctx.i
        table = ctx.func("table")
        table[i] = denormalized(piecewise_linear(curve, pw.f32(i) * (1.0 / (size - 1))), t)
        table.compute_root()
        lut = Value(table, "array", (ctx.extent(size),))
        return ctx.pointwise("out", lambda v: lut[pw.i32(v)], image)
