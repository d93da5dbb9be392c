"""Inputs and outputs: images, constants and run-time parameters in; typed results out."""

from __future__ import annotations

from typing import ClassVar

from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert, type_named
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Inputs and outputs"


class ImageInput(NodeType):
    """An input image, given at run time (its name on the command line is the node id).

    Files are converted on reading: interleaved colour becomes planar f[x, y, c], gray
    uses Rec. 601 luma, and values are scaled so that white is 255, 65535 or 1.0.
    """

    category = CATEGORY
    outputs = (Port("out", "image", doc="the image, gray f[x, y] or colour f[x, y, c]"),)
    params = (
        Parameter("element", "choice", "u8", choices=("u8", "u16", "f32"), doc="element type of the pixels"),
        Parameter("layout", "choice", "colour", choices=("colour", "gray"), doc="three colour planes or one gray"),
        Parameter("sample", "string", "", doc="default image file (relative to the document or the bundled images)"),
    )

    def build(self, ctx: BuildContext, element: str, layout: str, sample: str) -> Value:
        dims = 3 if layout == "colour" else 2
        image = ctx.image_param(type_named(element), dims)
        args = (ctx.x, ctx.y, ctx.c)[:dims]
        f = ctx.func("out")
        f[args] = image[args]
        return Value(f, layout, tuple(image.dim(i).extent() for i in range(dims)))


class Constant(NodeType):
    """A constant number, for arithmetic with images and as a threshold or weight."""

    category = CATEGORY
    outputs = (Port("out", "scalar"),)
    params = (
        Parameter("value", "float", 0.5, doc="the constant"),
        Parameter("element", "choice", "f32", choices=("f32", "u8", "u16", "i32"), doc="its element type"),
    )

    def build(self, ctx: BuildContext, value: float, element: str) -> Value:
        t = type_named(element)
        if not t.is_float() and not float(value).is_integer():
            raise ctx.error(f"the value {value} is not an integer, but the element type is {element}")
        f = ctx.func("out")
        f[()] = pw.cast(t, value if t.is_float() else int(value))
        return Value(f, "scalar", ())


class ScalarParameter(NodeType):
    """A number that can be changed at run time without recompiling (an engine Param,
    named by the node id: `--param ID=VALUE` on the command line)."""

    category = CATEGORY
    outputs = (Port("out", "scalar"),)
    params = (
        Parameter("value", "float", 1.0, doc="the default value"),
        Parameter("minimum", "float", 0.0, doc="the smallest allowed value"),
        Parameter("maximum", "float", 1.0, doc="the largest allowed value"),
        Parameter("element", "choice", "f32", choices=("f32", "i32"), doc="float or integer"),
    )

    def build(self, ctx: BuildContext, value: float, minimum: float, maximum: float, element: str) -> Value:
        if not minimum <= value <= maximum:
            raise ctx.error(f"the value {value:g} is outside [{minimum:g}, {maximum:g}]")
        t = type_named(element)
        cast = float if t.is_float() else int
        p = ctx.scalar_param(t, cast(value), cast(minimum), cast(maximum))
        f = ctx.func("out")
        f[()] = p
        return Value(f, "scalar", ())


class Output(NodeType):
    """A result of the pipeline, converted to the chosen element type.

    With `scale`, full scale maps to full scale (float 1.0 becomes u8 255) with rounding
    and saturation; without it values are kept, saturating at the type's limits.
    """

    category = CATEGORY
    is_output: ClassVar[bool] = True
    inputs = (Port("image", "any", "number"),)
    outputs = (Port("out", "any", "number", doc="the result: an image, an array or a scalar"),)
    params = (
        Parameter("element", "choice", "u8", choices=("same", "u8", "u16", "f32"), doc="element type written out"),
        Parameter("scale", "bool", True, doc="map full scale to full scale when converting"),
    )

    def build(self, ctx: BuildContext, image: Value, element: str, scale: bool) -> Value:
        to = image.type if element == "same" else type_named(element)
        return ctx.pointwise("out", lambda v: convert(v, to, scale), image)
