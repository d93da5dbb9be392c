"""Custom: pixel formulas typed by the user (see nodes/expression_parser.py for the language)."""

from __future__ import annotations

from pixelweave.engine.ir.expr import Expr
from pixelweave.nodes.catalogue.common import BOUNDARY
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert, type_named
from pixelweave.nodes.expression_parser import IMAGES, parse_expression, referenced, translate
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Custom"


class _Inputs:
    """The Environment of a custom expression: reads of the inputs (through the boundary
    condition where they may fall outside the image), normalized or raw, and the names."""

    def __init__(
        self, ctx: BuildContext, inputs: dict[str, Value], layout: str, boundary: str, normalized: bool
    ) -> None:
        self.ctx = ctx
        self.inputs = inputs
        self.layout = layout
        self.boundary = boundary
        self.normalized = normalized
        self.bounded: dict[str, Value] = {}
        a = inputs["a"]
        self.names: dict[str, Expr] = {"x": ctx.x, "y": ctx.y, "ch": ctx.c, "width": a.width, "height": a.height}

    def name(self, name: str) -> Expr:
        return self.names[name]

    def read(self, image: str, coordinates: tuple[Expr, ...] | None) -> Expr:
        value = self.inputs.get(image)
        if value is None:
            raise self.ctx.error(f"input `{image}` is not connected")
        own = self.ctx.args(value)
        if coordinates is None:
            coordinates = own
        if len(coordinates) > len(own):
            raise self.ctx.error(f"input `{image}` is a gray image: read it at two coordinates [x, y]")
        if len(coordinates) < len(own):
            coordinates = (*coordinates, self.ctx.c)
        if len(coordinates) == 3 and coordinates[2] is not self.ctx.c:
            coordinates = (*coordinates[:2], pw.clamp(coordinates[2], 0, value.channels - 1))
        # a, read at the pixel itself, is always inside; a shifted read, or another input
        # (which may be smaller), goes through the boundary condition.
        at_pixel = coordinates[0] is self.ctx.x and coordinates[1] is self.ctx.y
        source = value if image == "a" and at_pixel else self._bounded(image)
        e = source[coordinates]
        return convert(e, pw.Float(32)) if self.normalized else e

    def _bounded(self, image: str) -> Value:
        if image not in self.bounded:
            self.bounded[image] = self.ctx.bounded(self.inputs[image], self.boundary, local_name=f"{image}_bounded")
        return self.bounded[image]


class CustomExpression(NodeType):
    """A formula per pixel in Python syntax over the inputs a, b, c, d, such as
    `(a[x-1, y] + a + a[x+1, y]) / 3`, `select(a > 0.5, 1.0, 0.0)` or `clamp(a * 1.2 - b, 0, 1)`.

    A bare input name reads the pixel itself; `a[x+dx, y+dy]` reads a neighbour (coordinates
    are x, y, the channel c (or ch), width, height and integers, with + and -, and * or / by an
    integer constant: `a[x*2, y/2]`, `a[width-1-x, y]`, `a[x, y, 0]`). Reads that can fall
    outside the image (shifted reads, and every read of b, c, d) use the boundary condition.
    Operators: + - * / // % ** (as in Python, `/` gives a float), comparisons, and, or, not,
    `p if q else r`. Functions: select, min, max, clamp, abs, sqrt, exp, log, pow, sin, cos,
    tan, atan2, floor, ceil, round (half to even), lerp, and plain casts f32, u8, u16, i32.

    With values "normalized" the inputs are read as f32 with white = 1.0 (u8 255, u16 65535)
    and the result is on that scale too; with "raw" they keep their element type and values
    (Halide's rules: u8 + u8 wraps) and the result is converted by value, saturating. The
    output is colour when any input it reads is colour (gray inputs are then used for every
    channel), with the size of input a.
    """

    category = CATEGORY
    inputs = (
        Port("a", "image", "number", doc="the first input; it sets the output size"),
        Port("b", "image", "number", doc="an optional second input", optional=True),
        Port("c", "image", "number", doc="an optional third input", optional=True),
        Port("d", "image", "number", doc="an optional fourth input", optional=True),
    )
    params = (
        Parameter("expression", "expression", "a", doc="the formula, in Python syntax"),
        BOUNDARY,
        Parameter(
            "values",
            "choice",
            "normalized",
            choices=("normalized", "raw"),
            doc="normalized: inputs as f32 with white = 1.0; raw: inputs keep their type and values",
        ),
        Parameter(
            "output", "choice", "same", choices=("same", "u8", "u16", "f32"), doc="element type (same: input a's)"
        ),
    )

    def build(
        self,
        ctx: BuildContext,
        a: Value,
        expression: str,
        boundary: str,
        values: str,
        output: str,
        b: Value | None = None,
        c: Value | None = None,
        d: Value | None = None,
    ) -> Value:
        connected = {n: v for n, v in zip(IMAGES, (a, b, c, d), strict=True) if v is not None}
        used, channel = referenced(parse_expression(expression))
        colours = [connected[n] for n in IMAGES if n in used and n in connected and connected[n].layout == "colour"]
        if channel and not colours:
            raise ctx.error("the expression uses the channel coordinate, but reads no colour input")
        layout, extents = ("colour", (a.width, a.height, colours[0].channels)) if colours else ("gray", a.extents[:2])
        normalized = values == "normalized"
        result = translate(expression, _Inputs(ctx, connected, layout, boundary, normalized))
        to = a.type if output == "same" else type_named(output)
        if normalized and not result.type().is_bool() and not result.type().is_float():
            result = pw.f32(result)
        out = ctx.func("out")
        args = (ctx.x, ctx.y, ctx.c) if layout == "colour" else (ctx.x, ctx.y)
        out[args] = convert(result, to, scale=normalized)
        return Value(out, layout, extents)
