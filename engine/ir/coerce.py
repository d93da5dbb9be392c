"""Halide's rules for converting Python numbers to expressions and for mixing types."""

from __future__ import annotations

import math
import sys
import warnings
from numbers import Number
from typing import Any

import numpy as np
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.expr import Cast, Const, Expr
from pixelweave.engine.ir.types import Bool, Float, Int, Type


def to_expr(value: Any) -> Expr:
    """Convert an operand to an Expr: Python ints become int32 (int64 if they do not fit),
    floats float32 and bools bool, as in Halide's Python bindings."""
    if isinstance(value, Expr):
        return value
    as_expr = getattr(value, "_as_expr", None)
    if as_expr is not None:
        return as_expr()
    if isinstance(value, (bool, np.bool_)):
        return Const(Bool(), int(value))
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if Int(32).can_represent(value):
            return Const(Int(32), value)
        return Const(Int(64), value)
    if isinstance(value, (float, np.floating)):
        warn_if_float32_loses(value)
        return Const(Float(32), float(value))
    raise CompileError(f"cannot use {value!r} of type {type(value).__name__} as an expression")


def warn_if_float32_loses(value: Any) -> None:
    """Halide's warning for a Python float that a float32 literal cannot hold exactly,
    attributed to the first caller outside the engine (NumPy float32 values are exact;
    literals in Pixelweave's own node catalogue and app are not the user's, so stay quiet)."""
    if not isinstance(value, float) or isinstance(value, np.float32):
        return
    with np.errstate(over="ignore"):
        if not math.isfinite(value) or float(np.float32(value)) == value:
            return
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("pixelweave.engine"):
        level, frame = level + 1, frame.f_back
    if frame is not None and frame.f_globals.get("__name__", "").startswith("pixelweave."):
        return  # the node catalogue's own literals: the user did not write them
    warnings.warn(
        f"The floating-point value {value:.17f} will be interpreted as a float32 by Pixelweave and lose "
        "precision; add an explicit `f32()` or `f64()` cast to avoid this warning.",
        RuntimeWarning,
        stacklevel=level,
    )


def is_python_number(value: Any) -> bool:
    return isinstance(value, (Number, np.number, np.bool_)) and not isinstance(value, Expr)


def cast(t: Type, e: Any) -> Expr:
    """Convert e to type t (Halide's `cast`): wraps for integers, truncates float to int."""
    e = to_expr(e)
    if e.type() == t:
        return e
    if isinstance(e, Const):
        return _fold_const_cast(t, e)
    return Cast(t, e)


def _fold_const_cast(t: Type, c: Const) -> Const:
    if t.is_float():
        return Const(t, float(np.array(c.value, dtype=c.type().numpy()).astype(t.numpy())))
    # Bool is a one-bit unsigned type: like any integer cast, converting to it keeps the
    # lowest bit (Halide 21: cast(Bool(), 2) is false), after truncation for floats.
    if c.type().is_float():
        value = int(c.value)
    else:
        value = int(c.value)
    modulus = 1 << t.bits
    value %= modulus
    if t.is_int() and value >= modulus // 2:
        value -= modulus
    return Const(t, value)


def literal_of_type(value: Any, t: Type, context: str = "") -> Expr:
    """A Python number used beside an Expr of type t, converted as Halide does.

    Integers must fit in t (else an error, as Halide refuses silent wrap-around); floats
    next to an integer expression make a float32 literal and the caller widens.
    """
    if isinstance(value, (float, np.floating)):
        # Halide's bindings make every Python float a float32 literal, even beside a
        # float64 expression (0.1 becomes float32(0.1) widened; 1e300 becomes inf).
        warn_if_float32_loses(value)
        with np.errstate(over="ignore"):
            rounded = float(np.float32(value))
        return Const(t if t.is_float() else Float(32), rounded)
    value = int(value)
    if t.is_float():
        return Const(t, float(value))
    if not t.can_represent(value):
        wrapped = _fold_const_cast(t, Const(Int(64), value)).value
        raise CompileError(
            f"integer constant {value} will be implicitly coerced to type {t}, which changes its "
            f"value to ({t}){wrapped}{context}; use an explicit cast"
        )
    return Const(t, value)


def match_types(a: Expr, b: Expr) -> tuple[Expr, Expr]:
    """Bring two expressions to one type by Halide's rules.

    Float beats integer; the wider float wins; integers of one signedness widen to the
    wider; a signed and an unsigned integer both become signed of the wider width.
    """
    ta, tb = a.type(), b.type()
    if ta == tb:
        return a, b
    if ta.is_float() or tb.is_float():
        if ta.is_float() and tb.is_float():
            t = ta if ta.bits >= tb.bits else tb
        else:
            t = ta if ta.is_float() else tb
    elif ta.code == tb.code:
        t = ta if ta.bits >= tb.bits else tb
    else:
        t = Int(max(ta.bits, tb.bits, 8))
    return cast(t, a), cast(t, b)


def operands(a: Any, b: Any, context: str = "") -> tuple[Expr, Expr]:
    """Coerce the two operands of a binary operator (Python numbers adopt the other's type;
    an int beyond int32 is an int64 Expr, mixed by the Expr rules, as in Halide's bindings)."""
    if _is_wide_int(a) or _is_wide_int(b):
        return match_types(to_expr(a), to_expr(b))
    if is_python_number(b) and not is_python_number(a):
        a = to_expr(a)
        b = literal_of_type(b, a.type(), context)
    elif is_python_number(a) and not is_python_number(b):
        b = to_expr(b)
        a = literal_of_type(a, b.type(), context)
    else:
        a, b = to_expr(a), to_expr(b)
    return match_types(a, b)


def _is_wide_int(value: Any) -> bool:
    return (
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and not Int(32).can_represent(int(value))
    )


def const_value(e: Expr) -> int | float | None:
    return e.value if isinstance(e, Const) else None


__all__ = ["Const", "cast", "literal_of_type", "match_types", "operands", "to_expr"]
