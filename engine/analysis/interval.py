"""Numeric interval arithmetic over expressions: the range of values an Expr can take
when its variables range over given intervals. Used to infer the region each Func and
input must cover."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.debug_calls import DEBUG_CALL_PREFIXES
from pixelweave.engine.ir.types import Type


@dataclass(frozen=True)
class Interval:
    lo: int | float
    hi: int | float

    def union(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def is_empty(self) -> bool:
        return self.lo > self.hi


def type_range(t: Type) -> Interval:
    if t.is_float():
        return Interval(-math.inf, math.inf)
    return Interval(t.min(), t.max())


def _fit(t: Type, lo: int | float, hi: int | float) -> Interval:
    """Clip to what type t can hold; integer results outside it may have wrapped anywhere.
    A float32 result is rounded to float32 by the hardware, possibly across a rounding
    boundary that the exact (float64) endpoint does not cross: widen to the float32 values
    on either side."""
    if t.is_float():
        if t.bits <= 32:
            return Interval(_float32_below(lo), _float32_above(hi))
        return Interval(lo, hi)
    full = type_range(t)
    if lo < full.lo or hi > full.hi or math.isnan(lo) or math.isnan(hi):
        return full
    return Interval(lo, hi)


def _float32_below(v: int | float) -> float:
    """The largest float32 value <= v (v itself when it is one)."""
    if math.isnan(v) or math.isinf(v):
        return v
    with np.errstate(over="ignore"):
        f = np.float32(v)
        return float(f) if float(f) <= v else float(np.nextafter(f, np.float32(-np.inf)))


def _float32_above(v: int | float) -> float:
    """The smallest float32 value >= v (v itself when it is one)."""
    if math.isnan(v) or math.isinf(v):
        return v
    with np.errstate(over="ignore"):
        f = np.float32(v)
        return float(f) if float(f) >= v else float(np.nextafter(f, np.float32(np.inf)))


def _euclid_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = a // b
    if a - q * b < 0:
        q += 1
    return q


def _products(a: Interval, b: Interval) -> list:
    out = []
    for x in (a.lo, a.hi):
        for y in (b.lo, b.hi):
            if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)):
                out.append(0)
            else:
                out.append(x * y)
    return out


CallBounds = Callable[[E.Call], Interval | None]


def bounds_of(e: E.Expr, scope: dict[str, Interval], call_bounds: CallBounds | None = None) -> Interval:
    """The interval of e's values. Variables not in scope span their type's range;
    call_bounds may narrow the values a Func or image call returns."""
    memo: dict[int, Interval] = {}

    def go(node: E.Expr) -> Interval:
        hit = memo.get(id(node))
        if hit is None:
            hit = _bounds(node, go, scope, call_bounds)
            memo[id(node)] = hit
        return hit

    return go(e)


def _bounds(e: E.Expr, go, scope, call_bounds) -> Interval:  # noqa: C901 - one case per node
    t = e.type()
    if isinstance(e, E.Const):
        if t.is_float() and t.bits <= 32:
            with np.errstate(over="ignore"):
                v = float(np.float32(e.value))  # the value the evaluator computes with
            return Interval(v, v)
        return Interval(e.value, e.value)
    if isinstance(e, E.Variable):
        return scope.get(e.name, type_range(t))
    if isinstance(e, E.Cast):
        inner = go(e.value)
        if t.is_bool():
            return Interval(0, 1)
        if t.is_float():
            return _fit(t, inner.lo, inner.hi)
        lo, hi = inner.lo, inner.hi
        if e.value.type().is_float():
            if math.isinf(lo) or math.isinf(hi) or math.isnan(lo) or math.isnan(hi):
                return type_range(t)
            lo, hi = math.trunc(lo), math.trunc(hi)
        return _fit(t, lo, hi)
    if isinstance(e, E.Add):
        a, b = go(e.a), go(e.b)
        return _fit(t, a.lo + b.lo, a.hi + b.hi)
    if isinstance(e, E.Sub):
        a, b = go(e.a), go(e.b)
        return _fit(t, a.lo - b.hi, a.hi - b.lo)
    if isinstance(e, E.Mul):
        p = _products(go(e.a), go(e.b))
        return _fit(t, min(p), max(p))
    if isinstance(e, E.Div):
        a, b = go(e.a), go(e.b)
        if t.is_float():
            if b.lo > 0 or b.hi < 0:
                q = [x / y for x in (a.lo, a.hi) for y in (b.lo, b.hi) if not (math.isinf(x) and math.isinf(y))]
                return Interval(min(q), max(q)) if len(q) == 4 else type_range(t)
            return type_range(t)
        if any(math.isinf(v) for v in (a.lo, a.hi, b.lo, b.hi)):
            return type_range(t)
        if b.lo > 0 or b.hi < 0:
            q = [_euclid_div(int(x), int(y)) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
            return _fit(t, min(q), max(q))
        return _fit(t, min(a.lo, 0, -a.hi), max(a.hi, 0, -a.lo))
    if isinstance(e, E.Mod):
        a, b = go(e.a), go(e.b)
        if t.is_float():
            return Interval(min(0.0, b.lo), max(0.0, b.hi))
        if b.lo > 0 and a.lo >= 0 and a.hi < b.lo:
            return a
        m = max(abs(b.lo), abs(b.hi))
        return _fit(t, 0, max(m - 1, 0))
    if isinstance(e, E.Min):
        a, b = go(e.a), go(e.b)
        return Interval(min(a.lo, b.lo), min(a.hi, b.hi))
    if isinstance(e, E.Max):
        a, b = go(e.a), go(e.b)
        return Interval(max(a.lo, b.lo), max(a.hi, b.hi))
    if isinstance(e, (E.Compare, E.And, E.Or, E.Not)):
        return Interval(0, 1)
    if isinstance(e, E.Select):
        return go(e.true_value).union(go(e.false_value))
    if isinstance(e, E.Let):
        inner_scope = dict(scope)
        inner_scope[e.name] = go(e.value)
        return bounds_of(e.body, inner_scope, call_bounds)
    if isinstance(e, E.Call):
        if e.call_kind != "intrinsic":
            narrowed = call_bounds(e) if call_bounds is not None else None
            return narrowed if narrowed is not None else type_range(t)
        return _intrinsic_bounds(e, go)
    return type_range(t)


_MONOTONIC = {"sqrt", "exp", "log", "floor", "ceil", "round", "trunc", "atan", "tanh", "sinh", "asin"}


def _intrinsic_bounds(e: E.Call, go) -> Interval:
    t = e.type()
    name = e.name
    if name.startswith(DEBUG_CALL_PREFIXES):  # print and tracing return their first argument
        return go(e.args[0])
    if name in _MONOTONIC:
        a = go(e.args[0])
        fn = {"floor": math.floor, "ceil": math.ceil, "round": round, "trunc": math.trunc}.get(name)
        if fn is not None and not (math.isinf(a.lo) or math.isinf(a.hi)):
            return Interval(float(fn(a.lo)), float(fn(a.hi)))
        return type_range(t)
    if name in ("sin", "cos"):
        return Interval(-1.0, 1.0)
    if name == "abs":
        a = go(e.args[0])
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return _fit(t, -a.hi, -a.lo)
        return _fit(t, 0, max(-a.lo, a.hi))
    if name == "absd":
        a, b = go(e.args[0]), go(e.args[1])
        return _fit(t, 0, max(abs(a.hi - b.lo), abs(b.hi - a.lo)))
    if name == "lerp":
        return go(e.args[0]).union(go(e.args[1]))
    if name == "is_nan":
        return Interval(0, 1)
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        a, b = go(e.args[0]), go(e.args[1])
        if a.lo >= 0 and b.lo >= 0 and not math.isinf(a.hi) and not math.isinf(b.hi):
            if name == "bitwise_and":
                return Interval(0, min(a.hi, b.hi))
            top = (1 << int(max(a.hi, b.hi)).bit_length()) - 1
            return _fit(t, 0, top)
        return type_range(t)
    if name in ("shift_left", "shift_right"):
        a, b = go(e.args[0]), go(e.args[1])
        if b.lo == b.hi and 0 <= b.lo < t.bits and not math.isinf(a.lo) and not math.isinf(a.hi):
            s = int(b.lo)
            if name == "shift_left":
                return _fit(t, int(a.lo) << s, int(a.hi) << s)
            return Interval(int(a.lo) >> s, int(a.hi) >> s)
        return type_range(t)
    return type_range(t)
