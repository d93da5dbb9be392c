"""Element type conversions between the usual image ranges: integers span their type's range
(u8 0..255, u16 0..65535), floats span 0..1. Used by the input, output and conversion
nodes, so that a u8 photograph and its float version look the same."""

from __future__ import annotations

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.types import Type

import pixelweave as pw

TYPES = {
    "u8": pw.UInt(8),
    "u16": pw.UInt(16),
    "u32": pw.UInt(32),
    "i16": pw.Int(16),
    "i32": pw.Int(32),
    "f32": pw.Float(32),
}


def type_named(name: str) -> Type:
    return TYPES[name]


def full_scale(t: Type) -> float:
    """The value that means 'white' in type t."""
    if t.is_float():
        return 1.0
    if t.is_uint():
        return float(2**t.bits - 1)
    return float(2 ** (t.bits - 1) - 1)


def convert(e: Expr, to: Type, scale: bool = True) -> Expr:
    """e converted to type `to`; with `scale`, the source's full scale maps to the target's
    (rounding to nearest and saturating for integer targets); without, values are kept
    (saturating for integer targets)."""
    src = e.type()
    if src == to and not src.is_bool():
        return e
    if src.is_bool():
        return pw.select(e, pw.cast(to, full_scale(to) if scale else 1), pw.cast(to, 0))
    if not scale:
        if to.is_float():
            return pw.cast(to, e)
        return pw.saturating_cast(to, pw.round(e) if src.is_float() else e)
    factor = full_scale(to) / full_scale(src)
    value = pw.f32(e) * pw.f32(factor) if factor != 1.0 else pw.f32(e)
    if to.is_float():
        return pw.cast(to, value)
    return pw.saturating_cast(to, pw.round(value))
