"""Halide's lerp rewritten into basic operations, shared by every evaluator and backend."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import cast
from pixelweave.engine.ir.types import Float, UInt


def lower_lerp(zero: E.Expr, one: E.Expr, weight: E.Expr) -> E.Expr:
    """zero + (one - zero) * weight with Halide's integer rounding.

    Integer values interpolate in the unsigned type of their width (signed values are
    biased into it), with the weight scaled to that type's full range, a widening
    multiply-add and division by the range rounded to nearest.
    """
    t = zero.type()
    if t.is_float():
        wt = weight.type()
        if wt.is_float():
            w = cast(t, weight)
        else:
            # An unsigned weight spans its type's range, as in Halide: w / (2^bits - 1).
            scale = Float(64) if wt.bits == 32 else Float(32)
            w = cast(t, E.Div(cast(scale, weight), E.Const(scale, float((1 << wt.bits) - 1))))
        # Halide 21 computes zero + (one - zero) * w, not zero * (1 - w) + one * w.
        return E.Add(zero, E.Mul(E.Sub(one, zero), w))
    if t.is_bool():
        w = (
            weight
            if weight.type().is_bool()
            else E.GT(weight, E.Const(weight.type(), 0.5 if weight.type().is_float() else weight.type().max() // 2))
        )
        return E.Select(w, one, zero)
    bits = t.bits
    comp = UInt(bits)
    wide = UInt(bits * 2)
    if t.is_int():
        bias = E.Const(t, t.min())
        zero_u = cast(comp, E.Sub(zero, bias))
        one_u = cast(comp, E.Sub(one, bias))
    else:
        zero_u, one_u = zero, one
    top = comp.max()
    wt = weight.type()
    if wt.is_float():
        scale = Float(64) if bits == 32 else wt
        typed_w = cast(comp, E.Mul(E.Const(scale, float(top)), cast(scale, weight)))
    elif wt.bits == bits:
        typed_w = weight
    elif wt.bits < bits:
        # Replicate the weight's bits so that its max maps to comp's max (0xff -> 0xffff).
        typed_w = E.Mul(cast(comp, weight), E.Const(comp, top // wt.max()))
    else:
        typed_w = cast(comp, E.Div(weight, E.Const(wt, wt.max() // top)))
    inverse = E.Sub(E.Const(comp, top), typed_w)
    total = E.Add(E.Mul(cast(wide, zero_u), cast(wide, inverse)), E.Mul(cast(wide, one_u), cast(wide, typed_w)))
    rounded = E.Div(E.Add(total, E.Const(wide, top // 2)), E.Const(wide, top))
    result = cast(comp, rounded)
    if t.is_int():
        return E.Add(cast(t, result), E.Const(t, t.min()))
    return result
