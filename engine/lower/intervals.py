"""Symbolic interval analysis: the range [lo, hi] of an expression as expressions in the
variables that stay fixed, when the others range over given intervals.

Lowering asks, for a loop nest, which region of each producer its body reads: the loop
variables inside range over their loops, the ones outside stay symbols. An endpoint of
None means unbounded in that direction.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower.simplify import constant_difference, simplify
from pixelweave.engine.stmt import Load

I32 = Int(32)


class SymInterval:
    """[lo, hi], either end None when unbounded. A slotted class, not a frozen dataclass:
    interval analysis makes one per node it visits, and the dataclass's constructor cost
    three times as much. Treat it as immutable (intervals are shared through memos)."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: E.Expr | None, hi: E.Expr | None) -> None:
        self.lo = lo
        self.hi = hi

    def __repr__(self) -> str:
        return f"SymInterval(lo={self.lo!r}, hi={self.hi!r})"

    def __eq__(self, other: object) -> bool:  # as the dataclass compared: field by field
        if other.__class__ is not SymInterval:
            return NotImplemented
        return (self.lo, self.hi) == (other.lo, other.hi)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))

    @staticmethod
    def point(e: E.Expr) -> SymInterval:
        return SymInterval(e, e)

    def is_point(self) -> bool:
        return self.lo is not None and self.hi is not None and (self.lo is self.hi or self.lo.same_as(self.hi))

    def is_bounded(self) -> bool:
        return self.lo is not None and self.hi is not None

    def union(self, other: SymInterval) -> SymInterval:
        return SymInterval(_min(self.lo, other.lo, strict=True), _max(self.hi, other.hi, strict=True))


def _min(a: E.Expr | None, b: E.Expr | None, strict: bool = False) -> E.Expr | None:
    """min of two endpoints; strict: None (unbounded) wins, else the known one wins."""
    if a is None or b is None:
        return None if strict else (a if b is None else b)
    d = constant_difference(a, b) if a.type() == I32 and b.type() == I32 else None
    if d is not None:
        return a if d <= 0 else b
    return simplify(E.Min(a, b))


def _max(a: E.Expr | None, b: E.Expr | None, strict: bool = False) -> E.Expr | None:
    if a is None or b is None:
        return None if strict else (a if b is None else b)
    d = constant_difference(a, b) if a.type() == I32 and b.type() == I32 else None
    if d is not None:
        return a if d >= 0 else b
    return simplify(E.Max(a, b))


def type_interval(t: Type) -> SymInterval:
    if t.is_float():
        return SymInterval(None, None)
    return SymInterval(E.Const(t, t.min()), E.Const(t, t.max()))


def _bin(cls, a: E.Expr | None, b: E.Expr | None) -> E.Expr | None:
    if a is None or b is None:
        return None
    return simplify(cls(a, b))


def interval_of(e: E.Expr, scope, memo: dict[int, SymInterval] | None = None) -> SymInterval:
    """The symbolic interval of e; variables absent from scope are fixed symbols.

    scope is a dict or any mapping-like object with get(name, default) (region.Scope).
    Callers asking about several expressions in one scope may pass one `memo` (results
    by node identity; the expressions must stay alive) so shared subtrees are done once."""
    if memo is None:
        memo = {}

    def go(node: E.Expr) -> SymInterval:
        hit = memo.get(id(node))
        if hit is None:
            hit = _interval(node, go, scope)
            memo[id(node)] = hit
        return hit

    try:
        return go(e)
    finally:
        go = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)


def fixed_before_running(cond: E.Expr) -> bool:
    """Whether an expression depends on the pipeline's parameters (Params, buffer sizes) only."""
    return all(
        (isinstance(n, E.Variable) and n.kind == "param") or not isinstance(n, (E.Variable, E.Call, Load))
        for n in walk(cond)
    )


def _const_sign(e: E.Expr | None) -> int | None:
    if isinstance(e, E.Const):
        return (e.value > 0) - (e.value < 0)
    return None


def _interval(e: E.Expr, go, scope) -> SymInterval:  # noqa: C901 - one case per node
    t = e.type()
    if isinstance(e, E.Const):
        return SymInterval.point(e)
    if isinstance(e, E.Variable):
        return scope.get(e.name, SymInterval.point(e))
    if isinstance(e, E.Cast):
        inner = go(e.value)
        src = e.value.type()
        if t.is_bool():
            return SymInterval(E.Const(t, 0), E.Const(t, 1))
        if inner.is_point():
            return SymInterval.point(simplify(E.Cast(t, inner.lo)))
        widening = (
            not src.is_float()
            and not t.is_float()
            and (t.bits > src.bits or (t.bits == src.bits and t.code == src.code))
            and not (src.is_int() and t.is_uint())
        )
        if src.is_float() and not t.is_float() and inner.is_bounded():
            # Truncation toward zero is monotonic (and saturating in generated code).
            return SymInterval(simplify(E.Cast(t, inner.lo)), simplify(E.Cast(t, inner.hi)))
        if widening or (src.is_uint() and t.is_int() and t.bits > src.bits) or t.is_float():
            lo = simplify(E.Cast(t, inner.lo)) if inner.lo is not None else None
            hi = simplify(E.Cast(t, inner.hi)) if inner.hi is not None else None
            if t.is_float():
                return SymInterval(lo, hi)
            full = type_interval(src)
            if lo is None:
                lo = simplify(E.Cast(t, full.lo))
            if hi is None:
                hi = simplify(E.Cast(t, full.hi))
            return SymInterval(lo, hi)
        return type_interval(t)
    if isinstance(e, E.Add):
        a, b = go(e.a), go(e.b)
        if not t.is_float() and t != I32:
            return _narrow_or_full(t, a, b, E.Add)
        return SymInterval(_bin(E.Add, a.lo, b.lo), _bin(E.Add, a.hi, b.hi))
    if isinstance(e, E.Sub):
        a, b = go(e.a), go(e.b)
        if not t.is_float() and t != I32:
            return (
                type_interval(t)
                if not (a.is_point() and b.is_point())
                else SymInterval.point(simplify(E.Sub(a.lo, b.lo)))
            )
        return SymInterval(_bin(E.Sub, a.lo, b.hi), _bin(E.Sub, a.hi, b.lo))
    if isinstance(e, E.Mul):
        a, b = go(e.a), go(e.b)
        if a.is_point() and b.is_point():
            return SymInterval.point(simplify(E.Mul(a.lo, b.lo)))
        if not t.is_float() and t != I32:
            return type_interval(t)
        for x, y in ((a, b), (b, a)):
            if y.is_point():
                s = _const_sign(y.lo)
                if s is not None and s >= 0:
                    return SymInterval(_bin(E.Mul, x.lo, y.lo), _bin(E.Mul, x.hi, y.lo))
                if s is not None and s < 0:
                    return SymInterval(_bin(E.Mul, x.hi, y.lo), _bin(E.Mul, x.lo, y.lo))
                if x.is_bounded():
                    # Sign known only at run time: both products, ordered then.
                    return _either_order(_bin(E.Mul, x.lo, y.lo), _bin(E.Mul, x.hi, y.lo))
        # Unknown for an index: unbounded, never the int32 range itself, whose ends would
        # wrap around when later added to (a region of min - 2^31 .. max + 2^31 - 1).
        return SymInterval(None, None) if t == I32 else type_interval(t)
    if isinstance(e, E.Div):
        a, b = go(e.a), go(e.b)
        if a.is_point() and b.is_point():
            return SymInterval.point(simplify(E.Div(a.lo, b.lo)))
        if b.is_point():
            s = _const_sign(b.lo)
            if s is not None and s > 0:
                return SymInterval(_bin(E.Div, a.lo, b.lo), _bin(E.Div, a.hi, b.lo))
            if s is not None and s < 0:
                return SymInterval(_bin(E.Div, a.hi, b.lo), _bin(E.Div, a.lo, b.lo))
        if b.is_point() and a.is_bounded():
            # Monotonic in a for a divisor of either sign (and x / 0 == 0 at both ends).
            return _either_order(_bin(E.Div, a.lo, b.lo), _bin(E.Div, a.hi, b.lo))
        if t.is_float():
            return SymInterval(None, None)
        if t.is_uint() and a.is_bounded():
            return SymInterval(E.Const(t, 0), a.hi)
        if t == I32:
            if a.is_bounded() and _const_sign(a.lo) is not None and _const_sign(a.lo) >= 0:
                # Euclidean division by any divisor (or 0) never grows the magnitude.
                return SymInterval(simplify(E.Sub(E.Const(t, 0), a.hi)), a.hi)
            return SymInterval(None, None)
        return type_interval(t)
    if isinstance(e, E.Mod):
        a, b = go(e.a), go(e.b)
        if a.is_point() and b.is_point():
            return SymInterval.point(simplify(E.Mod(a.lo, b.lo)))
        if t.is_float():
            return SymInterval(None, None)
        if b.is_point() and isinstance(b.lo, E.Const) and b.lo.value != 0:
            return SymInterval(E.Const(t, 0), E.Const(t, abs(b.lo.value) - 1))
        if b.is_bounded() and _const_sign(b.lo) is not None and _const_sign(b.lo) > 0:
            return SymInterval(E.Const(t, 0), simplify(E.Sub(b.hi, E.Const(t, 1))))
        if b.is_point() and t == I32:
            # Euclidean: 0 <= a % p < |p| (and a % 0 == 0).
            p = b.lo
            one, zero = E.Const(t, 1), E.Const(t, 0)
            top = E.Max(E.Max(E.Sub(p, one), E.Sub(E.Sub(zero, p), one)), zero)
            return SymInterval(zero, simplify(top))
        return type_interval(t) if t != I32 else SymInterval(E.Const(t, 0), None)
    if isinstance(e, E.Min):
        a, b = go(e.a), go(e.b)
        return SymInterval(_min(a.lo, b.lo, strict=True), _min(a.hi, b.hi))
    if isinstance(e, E.Max):
        a, b = go(e.a), go(e.b)
        return SymInterval(_max(a.lo, b.lo), _max(a.hi, b.hi, strict=True))
    if isinstance(e, (E.Compare, E.And, E.Or, E.Not)):
        if all(go(c).is_point() for c in e.children()):
            return SymInterval.point(simplify(e.__class__(*[go(c).lo for c in e.children()])))
        return SymInterval(E.Const(t, 0), E.Const(t, 1))
    if isinstance(e, E.Select):
        c = go(e.cond)
        if c.is_point() and isinstance(c.lo, E.Const):
            return go(e.true_value) if c.lo.value else go(e.false_value)
        a, b = go(e.true_value), go(e.false_value)
        if c.is_point() and a.is_point() and b.is_point() and fixed_before_running(c.lo):
            # One value chosen once (a specialization's bound): keep it whole, so that
            # `v - v` still cancels where v is used twice (the union would decorrelate them).
            return SymInterval.point(simplify(E.Select(c.lo, a.lo, b.lo)))
        return a.union(b)
    if isinstance(e, E.Let):
        if hasattr(scope, "bind"):
            return interval_of(e.body, scope.bind(e.name, go(e.value)))
        inner = dict(scope)
        inner[e.name] = go(e.value)
        return interval_of(e.body, inner)
    if isinstance(e, E.Call):
        if e.call_kind == "intrinsic":
            return _intrinsic_interval(e, go)
        return type_interval(t)
    return type_interval(t)


def _either_order(p: E.Expr, q: E.Expr) -> SymInterval:
    return SymInterval(_min(p, q), _max(p, q))


def _narrow_or_full(t: Type, a: SymInterval, b: SymInterval, cls) -> SymInterval:
    if a.is_point() and b.is_point():
        return SymInterval.point(simplify(cls(a.lo, b.lo)))
    return type_interval(t)


def _intrinsic_interval(e: E.Call, go) -> SymInterval:
    t = e.type()
    args = [go(a) for a in e.args]
    if all(a.is_point() for a in args):
        return SymInterval.point(simplify(E.Call(t, e.name, tuple(a.lo for a in args), "intrinsic")))
    if e.name == "bitwise_and" and not t.is_float():
        for a in e.args:
            if isinstance(a, E.Const) and a.value >= 0:
                return SymInterval(E.Const(t, 0), a)
    if e.name in ("shift_left", "shift_right") and not t.is_float():
        a, k = args
        if a.is_bounded() and isinstance(a.lo, E.Const) and isinstance(a.hi, E.Const) and k.is_point():
            amount = k.lo.value if isinstance(k.lo, E.Const) else None
            if amount is not None and 0 <= amount < t.bits:
                if e.name == "shift_right":
                    return SymInterval(E.Const(t, a.lo.value >> amount), E.Const(t, a.hi.value >> amount))
                lo, hi = a.lo.value << amount, a.hi.value << amount
                if t.min() <= lo and hi <= t.max():
                    return SymInterval(E.Const(t, lo), E.Const(t, hi))
    if e.name in ("floor", "ceil", "round", "trunc") and args[0].is_bounded():
        # Non-decreasing: the ends map to the ends (computed at run time in the same type).
        lo, hi = args[0].lo, args[0].hi
        return SymInterval(
            simplify(E.Call(t, e.name, (lo,), "intrinsic")), simplify(E.Call(t, e.name, (hi,), "intrinsic"))
        )
    if e.name in ("abs", "absd") and not t.is_float():
        return SymInterval(E.Const(t, 0), type_interval(t).hi)
    return type_interval(t)
