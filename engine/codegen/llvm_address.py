"""Scalar buffer indices evaluated exactly in 64 bits.

An index like `x + (y - min.1) * stride.1 - min.0`, computed in wrapping 32-bit arithmetic
and then sign-extended for the address, hides the loop variable from LLVM: `sext(x + c)`
is not `sext(x) + sext(c)` when the sum may wrap, so LLVM recomputes and re-extends the
index every iteration instead of stepping a pointer (Halide gets the pointer by declaring
int32 overflow undefined). Here the additions, subtractions and multiplications of int32
index terms are done in i64 on sign-extended operands, and their minima and maxima where
the operands' values surely fit in i64. Lowering already assumes that int32 arithmetic
does not overflow (engine/lower/simplify.py, as Halide does), and wherever the index
arithmetic does not overflow int32 this is the same index. (Where a sum or product does
wrap on the way and the index is sums and products of widened terms only, the two still
agree whenever the index fits in int32, both being the exact value modulo their width.)
The generated code stays free of poison (no nsw flags).
"""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, Value, int_const
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int

_I32 = Int(32)
_OPS = {E.Add: "add", E.Sub: "sub", E.Mul: "mul"}
_LEAF_BITS = 31  # |an int32| <= 2**31
_EXACT_BITS = 62  # bounds up to this are surely exact in i64


WideValue = tuple[Value, "int | None"]  # an i64 value and its exactness bound (see _Widening.widened)


def exact_index64(
    e: E.Expr,
    b: FunctionBuilder,
    value_of: Callable[[E.Expr], Value],
    wide_lets: dict[str, WideValue],
    emitted: dict | None = None,
) -> Value:
    """The i64 address index of the scalar int32 index e (see the module docstring).
    value_of emits a subexpression the ordinary (32-bit) way; wide_lets holds the i64 form
    of the int32 lets in scope that have one (a let like `x.base = min.0 + x.x * 16` hides
    the loop variable just as a 32-bit sum in the index does). emitted: the caller's memo
    of straight-line code, where the i64 forms of subexpressions already emitted are kept
    and reused (the loads of one stencil share most of their index terms)."""
    return _Widening(b, value_of, wide_lets, emitted).widened(e)[0]


def wide_let(
    e: E.Expr,
    b: FunctionBuilder,
    value_of: Callable[[E.Expr], Value],
    wide_lets: dict[str, WideValue],
    emitted: dict | None = None,
):
    """The i64 form of an int32 let's value e, or None when it is not index arithmetic."""
    t = e.type()
    if (t is not _I32 and t != _I32) or type(e) not in _OPS:
        return None
    return _Widening(b, value_of, wide_lets, emitted).widened(e)


class _Widening:
    """One index's widening: the builder, the 32-bit emitter, the lets' i64 forms, the
    memo of exactness bounds by node identity, and the i64 forms already emitted (kept
    under ("i64", e.key()) in the caller's memo of straight-line code)."""

    def __init__(
        self,
        b: FunctionBuilder,
        value_of: Callable[[E.Expr], Value],
        wide_lets: dict[str, WideValue],
        emitted: dict | None,
    ) -> None:
        self.b, self.value_of, self.wide_lets = b, value_of, wide_lets
        self.bits_memo: dict[int, int | None] = {}
        self.emitted = {} if emitted is None else emitted

    def widened(self, e: E.Expr) -> tuple[Value, int | None]:
        """(i64 value of e, a bound on log2 |exact value|, None when the i64 value may have
        wrapped). Additions, subtractions and multiplications wrap in i64 as they do in i32,
        and both are the exact value modulo their width, so wherever the exact index fits in
        int32 the two agree whatever the intermediate values did; a minimum or maximum, which
        is not arithmetic modulo anything, is widened only over exact operands."""
        if isinstance(e, E.Const):
            return int_const(64, int(e.value)), max(abs(int(e.value)).bit_length(), 1)
        key = ("i64", e.key())
        hit = self.emitted.get(key)
        if hit is None:
            hit = self.emitted[key] = self._emit(e)
        return hit

    def _emit(self, e: E.Expr) -> tuple[Value, int | None]:
        b = self.b
        t = e.type()
        if t is not _I32 and t != _I32:  # (Int(32) is one shared object: identity answers first)
            return b.convert("sext", self.value_of(e), "i64", "idx"), _LEAF_BITS
        if isinstance(e, E.Variable) and e.name in self.wide_lets:
            return self.wide_lets[e.name]
        op = _OPS.get(type(e))
        if op is not None:
            a, a_bits = self.widened(e.a)
            c, c_bits = self.widened(e.b)
            bits = None
            if a_bits is not None and c_bits is not None:
                bits = a_bits + c_bits if op == "mul" else max(a_bits, c_bits) + 1
                bits = bits if bits <= _EXACT_BITS else None
            return b.binop(op, a, c, "idx"), bits
        if isinstance(e, (E.Min, E.Max)) and _exact_bits(e, self.wide_lets, self.bits_memo) is not None:
            a, a_bits = self.widened(e.a)
            c, c_bits = self.widened(e.b)
            if a_bits is not None and c_bits is not None:
                pick = b.icmp("slt" if isinstance(e, E.Min) else "sgt", a, c, "pick")
                return b.assign("i64", f"select i1 {pick.ref}, {a}, {c}", "idx"), max(a_bits, c_bits)
        return b.convert("sext", self.value_of(e), "i64", "idx"), _LEAF_BITS


def _exact_bits(e: E.Expr, wide_lets: dict[str, WideValue], memo: dict[int, int | None]) -> int | None:
    """The bound _Widening.widened gives e, without emitting anything. memo holds the answers for
    the nodes of one index by identity: widening asks again at every minimum or maximum
    below the first, which was quadratic in a chain of them."""
    key = id(e)
    if key in memo:
        return memo[key]
    bits = memo[key] = _bits_of(e, wide_lets, memo)
    return bits


def _bits_of(e: E.Expr, wide_lets: dict[str, WideValue], memo: dict[int, int | None]) -> int | None:
    t = e.type()
    if t is not _I32 and t != _I32:  # (Int(32) is one shared object: identity answers first)
        return _LEAF_BITS
    if isinstance(e, E.Const):
        return max(abs(int(e.value)).bit_length(), 1)
    if isinstance(e, E.Variable) and e.name in wide_lets:
        return wide_lets[e.name][1]
    if type(e) in _OPS or isinstance(e, (E.Min, E.Max)):
        a, c = _exact_bits(e.a, wide_lets, memo), _exact_bits(e.b, wide_lets, memo)
        if a is None or c is None:
            return None if type(e) in _OPS else _LEAF_BITS
        if isinstance(e, (E.Min, E.Max)):
            return max(a, c)
        bits = a + c if isinstance(e, E.Mul) else max(a, c) + 1
        return bits if bits <= _EXACT_BITS else None
    return _LEAF_BITS
