"""16-bit arithmetic for C's 32-bit integer expressions whose values fit in 16 bits.

C promotes 8- and 16-bit pixels to int, so a lifted blend or filter computes in 32-bit lanes:
a quarter of the lanes per vector that the same arithmetic in 16 bits would use (what a C
compiler does when it vectorizes the original). Two facts make narrowing exact:

- addition, subtraction, multiplication, negation, the bitwise operators and left shifts
  give the same low 16 bits whatever the high bits were, so a sum of products can be computed
  with 16-bit wrap-around whatever its terms' ranges are, and is exact when its own value
  (bounded by symbolic.interval) fits in 16 bits;
- division, remainder, right shift, min, max, selects and comparisons need their operands'
  true values: narrowed only when each operand's range fits the 16-bit type they are
  computed in.

Narrowing starts where C converts a 32-bit value to an 8- or 16-bit element (a store, a
cast), which needs only the value's low 16 bits, and at comparisons of values that fit; it
goes down the tree as far as the rules allow, and a subtree they stop at is computed in 32
bits and truncated. The same rules compute 64-bit arithmetic over pixels in 32 unsigned bits
where its value fits them (a 16-bit blend with opacity, which C writes with uint64_t products
so that they cannot overflow: the sum of the weighted pixels is at most 65535 * 65535), since
vectors of 64-bit lanes have no multiply-high, so no fast division by a constant. The
differential tests (verify.py) compare every lifted function with the C bit for bit, so a
wrong narrowing shows there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.symbolic import Tree

import pixelweave as pw

NARROW = {"u16": pw.UInt(16), "i16": pw.Int(16), "u32": pw.UInt(32)}
_MODULAR_BINARY = ("+", "-", "*", "&", "|", "^")
_WIDE = ("i32", "u32")
_WIDER = ("i64", "u64")


def _wide_for(n: str) -> tuple[str, str]:
    """The types a tree computed in the narrow type n is narrowed from."""
    return _WIDE if S.BITS[n] == 16 else _WIDER


def narrow_type(interval: tuple[int, int] | None, bits: int = 16) -> str | None:
    """The 16-bit type that holds every value of an interval ("u16" first), or None; with
    bits=32, "u32" when the values are non-negative and fit it (32-bit arithmetic is narrowed
    only to unsigned, whose wrap-around is defined)."""
    if interval is None:
        return None
    lo, hi = interval
    if bits == 32:
        return "u32" if lo >= 0 and hi <= 0xFFFFFFFF else None
    if lo >= 0 and hi <= 0xFFFF:
        return "u16"
    if lo >= -0x8000 and hi <= 0x7FFF:
        return "i16"
    return None


def worth_narrowing(e: Tree, wide: tuple[str, str] = _WIDE) -> bool:
    """Whether a 32-bit tree (a 64-bit one with wide=("i64", "u64")) does arithmetic on pixels
    (a sum of products or an operator over loaded values), so that computing it in half the
    bits saves work per pixel rather than adding casts (arithmetic on parameters alone is
    done once, not per pixel)."""
    if e[1] not in wide or not S.has_kind(e, ("load",)):
        return False
    kind = e[0]
    if kind == "aff":
        return len(e[2]) > 1 or any(len(m) > 1 or c != 1 for m, c in e[2])
    return kind in ("bin", "select", "un")


class Narrower:
    """Builds 16-bit engine expressions for trees. `expr` turns a child tree into an engine
    expression (narrowing it where it can); `plain` does so for a tree itself, without
    trying to narrow it again."""

    def __init__(self, expr: Callable[[Tree], Any], plain: Callable[[Tree], Any], bounds: tuple) -> None:
        self.expr = expr
        self.plain = plain
        self.bounds = bounds

    def interval(self, e: Tree) -> tuple[int, int] | None:
        return S.interval(e, self.bounds)

    def wide_value(self, e: Tree) -> Any | None:
        """A 64-bit tree over pixels whose values fit in 32 unsigned bits (a blend of 16-bit
        pixels weighted by a 16-bit opacity, written with uint64_t products in C), computed
        in 32 bits and extended: vectors of 64-bit lanes have no division by a constant."""
        if e[0] == "const" or not worth_narrowing(e, _WIDER):
            return None
        n = narrow_type(self.interval(e), 32)
        if n is None:
            return None
        return pw.cast(pw.UInt(64) if e[1] == "u64" else pw.Int(64), self.modular(e, n))

    def modular(self, e: Tree, n: str) -> Any:
        """An expression of 16-bit type n (or "u32", for 64-bit trees) equal to e modulo 2^16
        (2^32)."""
        ty = NARROW[n]
        kind, t = e[0], e[1]
        wide = _wide_for(n)
        bits = S.BITS[n]
        if kind == "const" and S.is_int(t):
            return pw.cast(ty, S.wrap(n, int(e[2])))
        if t not in wide:
            return pw.cast(ty, self.expr(e))
        if kind == "cast" and S.is_int(S.type_of(e[2])) and S.BITS[S.type_of(e[2])] <= S.BITS[wide[0]]:
            inner = e[2]
            if S.type_of(inner) in wide:
                return self.modular(inner, n)
            return pw.cast(ty, self.expr(inner))  # extend then keep 16 bits: the same bits
        if kind == "aff":
            total = None
            for mono, c in e[2]:
                term = None
                for atom in mono:
                    a = self.modular(atom, n)
                    term = a if term is None else term * a
                coef = pw.cast(ty, S.wrap(n, c))
                if term is None:
                    term = coef
                elif S.wrap(n, c) != 1:
                    term = term * coef
                total = term if total is None else total + term
            return total if total is not None else pw.cast(ty, 0)
        if kind == "bin" and e[2] in _MODULAR_BINARY:
            a, b = self.modular(e[3], n), self.modular(e[4], n)
            return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[e[2]]
        if kind == "bin" and e[2] == "<<":
            shift = S.interval(e[4], self.bounds)
            if shift is not None and shift[0] == shift[1] and 0 <= shift[0] < bits:
                return self.modular(e[3], n) << pw.cast(ty, shift[0])
        if kind == "un" and e[2] in ("neg", "bnot"):
            a = self.modular(e[3], n)
            return pw.cast(ty, 0) - a if e[2] == "neg" else ~a
        value = self.exact_operator(e, bits)
        if value is not None:
            return pw.cast(ty, value)
        return pw.cast(ty, self.plain(e))

    def exact_operator(self, e: Tree, bits: int = 16) -> Any | None:
        """An operator that needs its operands' values, in 16 bits (bits) when they fit them."""
        kind = e[0]
        if kind == "select":
            m = narrow_type(self._union(e[3], e[4]), bits)
            if m is None:
                return None
            return pw.select(self.expr(e[2]), self.modular(e[3], m), self.modular(e[4], m))
        if kind != "bin":
            return None
        op = e[2]
        ra, rb = self.interval(e[3]), self.interval(e[4])
        if ra is None or rb is None:
            return None
        m = narrow_type((min(ra[0], rb[0]), max(ra[1], rb[1])), bits)
        if m is None:
            return None
        if op in ("min", "max"):
            a, b = self.modular(e[3], m), self.modular(e[4], m)
            return pw.min(a, b) if op == "min" else pw.max(a, b)
        if op == ">>" and rb[0] == rb[1] and 0 <= rb[0] < bits:
            return self.modular(e[3], m) >> pw.cast(NARROW[m], rb[0])
        positive = ra[0] >= 0 and rb[0] > 0
        if (op in ("/", "%") and positive) or (op in ("fdiv", "fmod") and rb[0] > 0):
            # C's truncation and the engine's Euclidean division agree for these operands
            a, b = self.modular(e[3], m), self.modular(e[4], m)
            return a / b if op in ("/", "fdiv") else a % b
        return None

    def compare(self, e: Tree) -> Any | None:
        """A comparison of two 32-bit values that fit in 16 bits, made in 16 bits."""
        a, b = e[3], e[4]
        if S.type_of(a) not in _WIDE or not (worth_narrowing(a) or worth_narrowing(b)):
            return None
        if not (self._narrows(a) and self._narrows(b)):
            return None  # an operand would be computed in 32 bits and cast: no saving
        m = narrow_type(self._union(a, b))
        if m is None:
            return None
        x, y = self.modular(a, m), self.modular(b, m)
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[e[2]]

    def _narrows(self, e: Tree) -> bool:
        """Whether e's own operator can be computed in 16 bits (a comparison's operand)."""
        kind = e[0]
        if kind in ("const", "aff", "cast", "load", "sym") or (kind == "bin" and e[2] in _MODULAR_BINARY):
            return True
        if kind == "bin":
            return narrow_type(self._union(e[3], e[4])) is not None
        if kind == "select":
            return narrow_type(self._union(e[3], e[4])) is not None
        return kind == "un" and e[2] in ("neg", "bnot")

    def _union(self, a: Tree, b: Tree) -> tuple[int, int] | None:
        ra, rb = self.interval(a), self.interval(b)
        if ra is None or rb is None:
            return None
        return (min(ra[0], rb[0]), max(ra[1], rb[1]))
