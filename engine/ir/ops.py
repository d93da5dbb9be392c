"""Operators and built-in functions of the algorithm language, with Halide's typing.

The functions here are the public vocabulary (`select`, `min`, `clamp`, `lerp`, `sqrt`, ...);
the Python operators of Expr are attached at the bottom of this file.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import cast, is_python_number, literal_of_type, match_types, operands, to_expr
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt

# ---------------------------------------------------------------------------- arithmetic


def _check_not_bool_arith(a: E.Expr, op: str) -> None:
    if a.type().is_bool() and op in "*/%":
        raise CompileError(f"operator {op} is not defined on bool expressions; cast them first")


def add(a: Any, b: Any) -> E.Expr:
    a, b = operands(a, b)
    return E.Add(a, b)


def sub(a: Any, b: Any) -> E.Expr:
    a, b = operands(a, b)
    return E.Sub(a, b)


def mul(a: Any, b: Any) -> E.Expr:
    a, b = operands(a, b)
    _check_not_bool_arith(a, "*")
    return E.Mul(a, b)


def div(a: Any, b: Any) -> E.Expr:
    """Halide's `/`: integer division rounds as Euclidean division does; x / 0 == 0."""
    a, b = operands(a, b)
    _check_not_bool_arith(a, "/")
    return E.Div(a, b)


def floordiv(a: Any, b: Any) -> E.Expr:
    """Python's `//`: integer division for integers, floor(a / b) for floats."""
    a, b = operands(a, b)
    if a.type().is_float():
        return floor(E.Div(a, b))
    return E.Div(a, b)


def mod(a: Any, b: Any) -> E.Expr:
    a, b = operands(a, b)
    _check_not_bool_arith(a, "%")
    return E.Mod(a, b)


def neg(a: Any) -> E.Expr:
    a = to_expr(a)
    return E.Sub(E.Const(a.type(), 0), a)


def _compare(cls: type, a: Any, b: Any) -> E.Expr:
    a, b = operands(a, b)
    return cls(a, b)


def _check_bool(e: E.Expr, what: str) -> None:
    if not e.type().is_bool():
        raise CompileError(f"{what} needs a boolean operand, but {e} has type {e.type()}")


def logical_and(a: Any, b: Any) -> E.Expr:
    a, b = to_expr(a), to_expr(b)
    _check_bool(a, "&&")
    _check_bool(b, "&&")
    return E.And(a, b)


def logical_or(a: Any, b: Any) -> E.Expr:
    a, b = to_expr(a), to_expr(b)
    _check_bool(a, "||")
    _check_bool(b, "||")
    return E.Or(a, b)


def logical_not(a: Any) -> E.Expr:
    a = to_expr(a)
    _check_bool(a, "!")
    return E.Not(a)


# ---------------------------------------------------------------------------- intrinsics


def intrinsic(name: str, t: Type, *args: E.Expr) -> E.Call:
    return E.Call(t, name, tuple(args), "intrinsic")


def _int_literal(value: Any, t: Type, name: str) -> E.Expr:
    """A Python number beside an integer Expr of type t in a bitwise operator or shift."""
    if isinstance(value, (float, np.floating)):
        raise CompileError(f"{name} needs integer operands, but {value!r} is a float")
    if not isinstance(value, (bool, np.bool_)) and not Int(32).can_represent(int(value)):
        return to_expr(value)  # int64, then mixed with t by the Expr rules, as in Halide
    return literal_of_type(value, t)


def _bitwise_operands(name: str, a: Any, b: Any) -> tuple[E.Expr, E.Expr]:
    if is_python_number(b) and not is_python_number(a):
        a = to_expr(a)
        b = _int_literal(b, a.type(), name)
    elif is_python_number(a) and not is_python_number(b):
        b = to_expr(b)
        a = _int_literal(a, b.type(), name)
    return to_expr(a), to_expr(b)


def _bitwise(name: str, a: Any, b: Any) -> E.Expr:
    ea, eb = _bitwise_operands(name, a, b)
    for v in (ea, eb):
        if v.type().is_float():
            raise CompileError(f"{name} is not defined on floating-point expression {v}")
    ta, tb = ea.type(), eb.type()
    if ta.is_int() != tb.is_int():
        raise CompileError(
            f"arguments to {name} must be both signed or both unsigned: {ea} has type {ta}, {eb} has type {tb}"
        )
    x, y = match_types(ea, eb)
    return intrinsic(name, x.type(), x, y)


def bitwise_and(a: Any, b: Any) -> E.Expr:
    x, y = _bitwise_operands("bitwise_and", a, b)
    if x.type().is_bool() and y.type().is_bool():
        return logical_and(x, y)
    return _bitwise("bitwise_and", x, y)


def bitwise_or(a: Any, b: Any) -> E.Expr:
    x, y = _bitwise_operands("bitwise_or", a, b)
    if x.type().is_bool() and y.type().is_bool():
        return logical_or(x, y)
    return _bitwise("bitwise_or", x, y)


def bitwise_xor(a: Any, b: Any) -> E.Expr:
    x, y = _bitwise_operands("bitwise_xor", a, b)
    if x.type().is_bool() and y.type().is_bool():
        return E.NE(x, y)
    return _bitwise("bitwise_xor", x, y)


def bitwise_not(a: Any) -> E.Expr:
    a = to_expr(a)
    if a.type().is_bool():
        return E.Not(a)
    if a.type().is_float():
        raise CompileError(f"bitwise not is not defined on floating-point expression {a}")
    return intrinsic("bitwise_not", a.type(), a)


def _shift(name: str, a: Any, b: Any) -> E.Expr:
    """Halide's shifts: the result has a's signedness, both widened to the wider width. A
    Python int amount is unsigned of a's width; a negative one shifts the other way."""
    if is_python_number(a) and not is_python_number(b):
        a = to_expr(int(a) if isinstance(a, (bool, np.bool_)) else a)
    if is_python_number(b) and not is_python_number(a):
        a = to_expr(a)
        if isinstance(b, (float, np.floating)):
            raise CompileError(f"{name} needs integer operands, but {b!r} is a float")
        amount = int(b)
        if Int(32).can_represent(amount):
            if amount < 0:
                name = "shift_right" if name == "shift_left" else "shift_left"
                amount = -amount
            b = literal_of_type(amount, UInt(a.type().bits))
    a, b = to_expr(a), to_expr(b)
    for v in (a, b):
        if not v.type().is_integer() or (v.type().is_bool() and a.type() == b.type()):
            raise CompileError(f"{name} needs integer operands, but {v} has type {v.type()}")
    bits = max_py(a.type().bits, b.type().bits)  # a bool beside an integer widens to its width
    a = cast(a.type().with_bits(bits), a)
    b = cast(b.type().with_bits(bits), b)
    return intrinsic(name, a.type(), a, b)


def shift_left(a: Any, b: Any) -> E.Expr:
    """a << b; a negative signed b shifts the other way."""
    return _shift("shift_left", a, b)


def shift_right(a: Any, b: Any) -> E.Expr:
    """a >> b (arithmetic for signed a); a negative signed b shifts the other way."""
    return _shift("shift_right", a, b)


def _float_arg(x: Any) -> E.Expr:
    x = to_expr(x)
    if not x.type().is_float():
        x = cast(Float(32), x)
    return x


def _unary_math(name: str):
    def fn(x: Any) -> E.Expr:
        x = _float_arg(x)
        return intrinsic(name, x.type(), x)

    fn.__name__ = name
    fn.__doc__ = f"{name}(x) in floating point (integers are converted to float32)."
    return fn


sqrt = _unary_math("sqrt")
exp = _unary_math("exp")
log = _unary_math("log")
sin = _unary_math("sin")
cos = _unary_math("cos")
tan = _unary_math("tan")
asin = _unary_math("asin")
acos = _unary_math("acos")
atan = _unary_math("atan")
sinh = _unary_math("sinh")
cosh = _unary_math("cosh")
tanh = _unary_math("tanh")
floor = _unary_math("floor")
ceil = _unary_math("ceil")
round = _unary_math("round")  # noqa: A001 - Halide's name; rounds half to even
trunc = _unary_math("trunc")

UNARY_MATH = (
    "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "floor", "ceil", "round", "trunc",
)  # fmt: skip


def atan2(y: Any, x: Any) -> E.Expr:
    y, x = match_types(_float_arg(y), _float_arg(x))
    return intrinsic("atan2", y.type(), y, x)


def is_nan(x: Any) -> E.Expr:
    x = to_expr(x)
    if not x.type().is_float():
        raise CompileError(f"is_nan needs a floating-point argument, but {x} has type {x.type()}")
    return intrinsic("is_nan", Bool(), x)


def pow(x: Any, y: Any) -> E.Expr:  # noqa: A001 - Halide's name
    """x ** y. An integer constant exponent multiplies out (keeping x's type); otherwise
    both are converted to floating point."""
    x, y = to_expr(x), to_expr(y)
    if isinstance(y, E.Const) and y.type().is_int():
        return _integer_power(x, int(y.value))
    x = _float_arg(x)
    y = cast(x.type(), y)
    return intrinsic("pow", x.type(), x, y)


def _integer_power(x: E.Expr, n: int) -> E.Expr:
    if n == 0:
        return E.Const(x.type(), 1)
    if n < 0:
        return div(E.Const(x.type(), 1), _integer_power(x, -n))
    result: E.Expr | None = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else E.Mul(result, base)
        n >>= 1
        if n:
            base = E.Mul(base, base)
    assert result is not None
    return result


def abs(x: Any) -> E.Expr:  # noqa: A001 - Halide's name
    """Absolute value; for signed integers the result is unsigned of the same width."""
    x = to_expr(x)
    t = x.type()
    if t.is_int():
        t = UInt(t.bits)
    return intrinsic("abs", t, x)


def absd(a: Any, b: Any) -> E.Expr:
    """|a - b| without overflow; unsigned for integer operands."""
    a, b = match_types(to_expr(a), to_expr(b))
    t = a.type()
    if t.is_int():
        t = UInt(t.bits)
    return intrinsic("absd", t, a, b)


def min(a: Any, b: Any, *rest: Any) -> E.Expr:  # noqa: A001
    """The smaller operand. Python numbers become int32/float32 first, as in Halide's bindings."""
    a, b = match_types(to_expr(a), to_expr(b))
    result = E.Min(a, b)
    return min(result, *rest) if rest else result


def max(a: Any, b: Any, *rest: Any) -> E.Expr:  # noqa: A001
    """The larger operand. Python numbers become int32/float32 first, as in Halide's bindings."""
    a, b = match_types(to_expr(a), to_expr(b))
    result = E.Max(a, b)
    return max(result, *rest) if rest else result


def clamp(x: Any, lo: Any, hi: Any) -> E.Expr:
    """max(min(x, hi), lo); the bounds must have x's type (numbers are converted if they fit)."""
    x = to_expr(x)
    t = x.type()
    bounds = []
    for which, v in (("second", lo), ("third", hi)):
        v = to_expr(v)
        converted = _lossless_cast(t, v)
        if converted is not None:
            bounds.append(converted)
            continue
        if v.type() != t:
            raise CompileError(
                f"type mismatch in call to clamp: first argument ({x}) has type {t}, but {which} "
                f"argument ({v}) has type {v.type()}; use an explicit cast"
            )
        bounds.append(v)
    return E.Max(E.Min(x, bounds[1]), bounds[0])


def _type_holds(t: Type, other: Type) -> bool:
    """Whether every value of type `other` is exactly a value of type t (Halide's Type::can_represent)."""
    if t.is_int():
        return (other.is_int() and other.bits <= t.bits) or (other.is_uint() and other.bits < t.bits)
    if t.is_uint():
        return other.is_uint() and other.bits <= t.bits
    return (other.is_float() and other.bits <= t.bits) or (t.bits == 64 and other.bits <= 32) or other.bits <= 16


def _lossless_cast(t: Type, e: E.Expr) -> E.Expr | None:
    """e converted to t when no value can change (Halide's lossless_cast, for constants,
    widening conversions and casts of narrower values), else None."""
    if e.type() == t:
        return e
    if _type_holds(t, e.type()):
        return cast(t, e)
    if isinstance(e, E.Cast):
        return _lossless_cast(t, e.value) if _type_holds(e.type(), e.value.type()) else None
    if isinstance(e, E.Const):
        if t.is_float():
            exact = float(np.array(e.value).astype(t.numpy())) == e.value
        else:
            exact = t.can_represent(e.value)
        return E.Const(t, e.value) if exact else None
    return None


def select(cond: Any, true_value: Any, false_value: Any, *more: Any) -> E.Expr:
    """select(c, a, b) is a where c holds, else b; select(c1, v1, c2, v2, ..., default) chains.
    With Tuples as values it selects element by element and gives a Tuple."""
    from pixelweave.engine.ir.tuple import select_tuples, tuple_values

    if any(tuple_values(v) is not None for v in (true_value, false_value, *more)):
        return select_tuples((cond, true_value, false_value, *more), select)
    if more:
        if len(more) % 2:
            raise CompileError("select takes an odd number of arguments: (c1, v1, c2, v2, ..., default)")
        false_value = select(false_value, *more)
    cond = to_expr(cond)
    if not cond.type().is_bool():
        raise CompileError(f"the condition of select must be a bool, but {cond} has type {cond.type()}")
    a, b = _coerce_int_consts(to_expr(true_value), to_expr(false_value))
    if a.type() != b.type():
        raise CompileError(
            "the second and third arguments to select do not have a matching type: "
            f"{a} has type {a.type()}, {b} has type {b.type()}"
        )
    return E.Select(cond, a, b)


def _coerce_int_consts(a: E.Expr, b: E.Expr) -> tuple[E.Expr, E.Expr]:
    """Halide's rule for select and lerp: a signed integer constant (a Python int included)
    takes the other argument's type, by a plain cast that wraps if it does not fit."""
    if isinstance(a, E.Const) and a.type().is_int():
        a = cast(b.type(), a)
    if isinstance(b, E.Const) and b.type().is_int():
        b = cast(a.type(), b)
    return a, b


def lerp(zero_value: Any, one_value: Any, weight: Any) -> E.Expr:
    """Linear interpolation zero + (one - zero) * weight. Integer values take an unsigned or
    float weight; an unsigned weight spans its type's range (255 means 1.0 for uint8)."""
    zero, one = _coerce_int_consts(to_expr(zero_value), to_expr(one_value))
    if zero.type() != one.type():
        raise CompileError(f"lerp needs values of one type: {zero} has type {zero.type()}, {one} has type {one.type()}")
    w = to_expr(weight)
    if not (w.type().is_float() or w.type().is_uint()):
        raise CompileError(f"the weight of lerp must be unsigned or float, but {w} has type {w.type()}")
    if not zero.type().is_float() and isinstance(w, E.Const) and w.type().is_float() and not 0.0 <= w.value <= 1.0:
        raise CompileError(f"the float weight of lerp with integer values is {w.value}, which is not in [0.0, 1.0]")
    return intrinsic("lerp", zero.type(), zero, one, w)


def saturating_cast(t: Type, e: Any) -> E.Expr:
    """Convert to t, clamping to t's range first instead of wrapping."""
    e = to_expr(e)
    src = e.type()
    if src == t:
        return e
    if t.is_float():
        if src.is_float() and src.bits > t.bits:
            return cast(t, E.Max(E.Min(e, E.Const(src, t.max())), E.Const(src, t.min())))
        return cast(t, e)
    if src.is_float() and t.bits >= src.bits:
        # Halide: t.max() is not a float32; it rounds up, so values from there on give t.max().
        x = E.Max(e, E.Const(src, float(t.min())))
        top = float(np.float32(t.max()))
        return E.Select(E.GE(x, E.Const(src, top)), E.Const(t, t.max()), cast(t, x))
    if src.is_float():
        lo, hi = t.min(), t.max()
        # The largest float of src's precision not above hi (2^31 - 1 is not a float32).
        hi_f = float(hi)
        while hi_f > hi or int(hi_f) > hi:
            hi_f = math.nextafter(hi_f, -math.inf) if src.bits == 64 else _prev_f32(hi_f)
        clamped = E.Max(E.Min(e, E.Const(src, hi_f)), E.Const(src, float(lo)))
        return cast(t, clamped)
    # Integer to integer: clamp in a type that holds both ranges.
    lo = max_py(t.min(), src.min())
    hi = min_py(t.max(), src.max())
    x = e
    if hi < src.max():
        x = E.Min(x, E.Const(src, hi))
    if lo > src.min():
        x = E.Max(x, E.Const(src, lo))
    return cast(t, x)


def _prev_f32(v: float) -> float:
    import numpy as np

    return float(np.nextafter(np.float32(v), np.float32(-np.inf)))


def max_py(a: int, b: int) -> int:
    return a if a >= b else b


def min_py(a: int, b: int) -> int:
    return a if a <= b else b


def _cast_helper(t: Type):
    def fn(e: Any) -> E.Expr:
        if t.is_float() and isinstance(e, float):
            return E.Const(t, e)  # Halide's f64(0.1) keeps the double, unlike cast(Float(64), 0.1)
        return cast(t, e)

    fn.__doc__ = f"cast(..., e) to {t}."
    return fn


u8 = _cast_helper(UInt(8))
u16 = _cast_helper(UInt(16))
u32 = _cast_helper(UInt(32))
i8 = _cast_helper(Int(8))
i16 = _cast_helper(Int(16))
i32 = _cast_helper(Int(32))
f32 = _cast_helper(Float(32))
f64 = _cast_helper(Float(64))


# ---------------------------------------------------------------------------- operators


def attach_operators(cls: type) -> None:
    """Give a class Halide's operator overloading; its `_as_expr()` yields the Expr operand."""

    def lhs(self):
        return self._as_expr()

    def binary(fn, reflected=False):
        if reflected:
            return lambda self, other: fn(other, lhs(self))
        return lambda self, other: fn(lhs(self), other)

    table = {
        "add": add, "sub": sub, "mul": mul, "truediv": div, "floordiv": floordiv, "mod": mod,
        "and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor, "lshift": shift_left,
        "rshift": shift_right, "pow": pow,
    }  # fmt: skip
    for name, fn in table.items():
        setattr(cls, f"__{name}__", binary(fn))
        setattr(cls, f"__r{name}__", binary(fn, reflected=True))
    cls.__lt__ = binary(lambda a, b: _compare(E.LT, a, b))
    cls.__le__ = binary(lambda a, b: _compare(E.LE, a, b))
    cls.__gt__ = binary(lambda a, b: _compare(E.GT, a, b))
    cls.__ge__ = binary(lambda a, b: _compare(E.GE, a, b))
    cls.__eq__ = binary(lambda a, b: _compare(E.EQ, a, b))
    cls.__ne__ = binary(lambda a, b: _compare(E.NE, a, b))
    cls.__neg__ = lambda self: neg(lhs(self))
    cls.__pos__ = lambda self: lhs(self)
    cls.__invert__ = lambda self: bitwise_not(lhs(self))
    cls.__abs__ = lambda self: abs(lhs(self))
    cls.logical_not = lambda self: logical_not(lhs(self))  # Halide's method form of `!e`
    cls.__hash__ = object.__hash__


E.Expr._as_expr = lambda self: self
attach_operators(E.Expr)
