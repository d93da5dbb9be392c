"""Inputs and outputs: images, constants and run-time parameters in; typed results out."""

from __future__ import annotations

from typing import Any, ClassVar

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type
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
        Parameter("value", "float", 0.5, doc="the constant", runtime=True),
        Parameter("element", "choice", "f32", choices=("f32", "u8", "u16", "i32"), doc="its element type"),
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        value, element = values["value"], values["element"]
        if not type_named(element).is_float() and not float(value).is_integer():
            return [f"the value {value} is not an integer, but the element type is {element}"]
        if not type_named(element).can_represent(int(value)) and not type_named(element).is_float():
            return [f"the value {value:g} does not fit the element type {element}"]
        return []

    @classmethod
    def runtime_type(cls, name: str, values: dict[str, Any]) -> Type:
        return type_named(values["element"])

    def build(self, ctx: BuildContext, value: float | Expr, element: str) -> Value:
        t = type_named(element)
        f = ctx.func("out")
        f[()] = value if isinstance(value, Expr) else pw.cast(t, value if t.is_float() else int(value))
        return Value(f, "scalar", ())


class ScalarParameter(NodeType):
    """A number that can be changed at run time without recompiling (an engine Param,
    named by the node id: `--param ID=VALUE` on the command line)."""

    category = CATEGORY
    outputs = (Port("out", "scalar"),)
    params = (
        Parameter("value", "float", 1.0, doc="the default value", runtime=True),
        Parameter("minimum", "float", 0.0, doc="the smallest allowed value"),
        Parameter("maximum", "float", 1.0, doc="the largest allowed value"),
        Parameter("element", "choice", "f32", choices=("f32", "i32"), doc="float or integer"),
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        value, minimum, maximum = values["value"], values["minimum"], values["maximum"]
        if not minimum <= value <= maximum:
            return [f"the value {value:g} is outside [{minimum:g}, {maximum:g}]"]
        return []

    @classmethod
    def runtime_type(cls, name: str, values: dict[str, Any]) -> Type:
        return type_named(values["element"])

    @classmethod
    def runtime_param_name(cls, node_id: str, name: str) -> str:
        return node_id  # `--param ID=VALUE`: the node is the parameter

    def build(self, ctx: BuildContext, value: float | pw.Param, minimum: float, maximum: float, element: str) -> Value:
        t = type_named(element)
        cast = float if t.is_float() else int
        if isinstance(value, pw.Param):
            value.set_range(cast(minimum), cast(maximum))
            p: Expr = value
        else:
            p = pw.cast(t, cast(value))
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
