"""Blends: a layer composited over a base image, with opacity and an optional mask."""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.ir.expr import Expr
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.convert import convert
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

import pixelweave as pw

CATEGORY = "Blends"


def _multiply(b: Expr, s: Expr) -> Expr:
    return b * s


def _screen(b: Expr, s: Expr) -> Expr:
    return b + s - b * s


def _hard_light(b: Expr, s: Expr) -> Expr:
    return pw.select(s <= 0.5, _multiply(b, 2.0 * s), _screen(b, 2.0 * s - 1.0))


def _soft_light(b: Expr, s: Expr) -> Expr:
    d = pw.select(b <= 0.25, ((16.0 * b - 12.0) * b + 4.0) * b, pw.sqrt(b))
    return pw.select(s <= 0.5, b - (1.0 - 2.0 * s) * b * (1.0 - b), b + (2.0 * s - 1.0) * (d - b))


def _colour_dodge(b: Expr, s: Expr) -> Expr:
    return pw.select(b == 0.0, 0.0, s >= 1.0, 1.0, pw.min(1.0, b / (1.0 - s)))


def _colour_burn(b: Expr, s: Expr) -> Expr:
    return pw.select(b >= 1.0, 1.0, s <= 0.0, 0.0, 1.0 - pw.min(1.0, (1.0 - b) / s))


# B(Cb, Cs) of the W3C Compositing and Blending Level 1 separable blend modes (Cb: the
# base, "backdrop"; Cs: the blend layer, "source"), plus the clamped add and subtract.
MODES: dict[str, Callable[[Expr, Expr], Expr]] = {
    "normal": lambda b, s: s,
    "multiply": _multiply,
    "screen": _screen,
    "overlay": lambda b, s: _hard_light(s, b),
    "darken": pw.min,
    "lighten": pw.max,
    "difference": lambda b, s: pw.abs(b - s),
    "exclusion": lambda b, s: b + s - 2.0 * b * s,
    "add": lambda b, s: pw.min(b + s, 1.0),
    "subtract": lambda b, s: pw.max(b - s, 0.0),
    "soft_light": _soft_light,
    "hard_light": _hard_light,
    "colour_dodge": _colour_dodge,
    "colour_burn": _colour_burn,
}


def dissolve_noise(x: Expr, y: Expr) -> Expr:
    """Uniform noise in [0, 1) per pixel, the same in every channel and on every run: the
    pixel's index y * 65536 + x (u32) through the 'lowbias32' integer hash (C. Wellons):
    h ^= h >> 16; h *= 0x7feb352d; h ^= h >> 15; h *= 0x846ca68b; h ^= h >> 16; then the
    top 24 bits / 2^24."""
    h = pw.u32(y) * pw.u32(65536) + pw.u32(x)
    h = h ^ (h >> 16)
    h = h * pw.u32(0x7FEB352D)
    h = h ^ (h >> 15)
    h = h * pw.u32(0x846CA68B)
    h = h ^ (h >> 16)
    return pw.f32(h >> 8) * (1.0 / 16777216.0)


class Blend(NodeType):
    """Composites the blend layer over the base: out = base + (B(base, blend) - base) *
    opacity * mask, computed in float on values normalized to [0, 1] (white = 1.0) and
    converted back to the base's type with rounding and saturation.

    B is a blend mode: normal, multiply, screen, overlay, darken, lighten, difference,
    exclusion, soft_light, hard_light, colour_dodge and colour_burn follow the separable
    modes of the W3C Compositing and Blending Level 1 recommendation (soft light with its
    formula, not Photoshop's); add is base + blend and subtract base - blend, clamped to
    [0, 1]. Dissolve takes each pixel whole from the blend layer where a fixed per-pixel
    noise (a hash of x and y, see dissolve_noise) is below opacity * mask, else from the base.
    A gray blend layer over a colour base is used for every channel; the mask is gray.
    """

    category = CATEGORY
    inputs = (
        Port("base", "image", "number", doc="the bottom layer; it sets the output's type and size"),
        Port("blend", "image", "number", doc="the top layer, the same size as the base"),
        Port("mask", "gray", "number", doc="where to blend, 0 to 1 (white); everywhere if absent", optional=True),
    )
    params = (
        Parameter("mode", "choice", "normal", choices=(*MODES, "dissolve"), doc="the blend mode"),
        Parameter(
            "opacity", "float", 1.0, minimum=0.0, maximum=1.0, doc="how much of the blended result to use", runtime=True
        ),
    )

    def build(
        self, ctx: BuildContext, base: Value, blend: Value, mode: str, opacity: float, mask: Value | None = None
    ) -> Value:
        if blend.layout == "colour" and base.layout == "gray":
            raise ctx.error("the blend layer is colour but the base is gray; convert one of them first")
        f32 = pw.Float(32)

        def composite(cb: Expr, cs: Expr, *rest: Expr) -> Expr:
            cb, cs = convert(cb, f32), convert(cs, f32)
            weight = pw.f32(opacity) * (convert(rest[0], f32) if rest else 1.0)
            if mode == "dissolve":
                result = pw.select(dissolve_noise(ctx.x, ctx.y) < weight, cs, cb)
            else:
                result = cb + (MODES[mode](cb, cs) - cb) * weight
            return convert(result, base.type)

        layers = (base, blend) if mask is None else (base, blend, mask)
        return ctx.pointwise("out", composite, *layers)
