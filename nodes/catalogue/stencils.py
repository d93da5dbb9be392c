"""Stencils: each output pixel from a neighbourhood of the input."""

from __future__ import annotations

import engine as pw
from nodes.catalogue.common import BOUNDARY
from nodes.context import BuildContext
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
