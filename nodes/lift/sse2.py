"""SSE2 integer intrinsics (<emmintrin.h>) as lane-wise trees: an __m128i is a list of lanes,
re-viewed as 8, 16 or 32-bit lanes when an intrinsic needs another view, so vector code lifts to
the same per-element expressions as its scalar equivalent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.symbolic import Tree
from pycparser import c_ast

if TYPE_CHECKING:
    from pixelweave.nodes.lift.c_execute import Executor

UNSIGNED = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}
SIGNED = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}


class Vec:
    """128 bits as lanes of `bits` each (unsigned trees, lane 0 first)."""

    def __init__(self, bits: int, lanes: list[Tree]) -> None:
        assert len(lanes) * bits == 128
        self.bits = bits
        self._lanes = [S.cast(UNSIGNED[bits], v) for v in lanes]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vec) and other.bits == self.bits and other._lanes == self._lanes

    def __hash__(self) -> int:
        return hash((self.bits, tuple(self._lanes)))

    def lanes(self, bits: int) -> list[Tree]:
        """The lanes viewed at another width (little-endian, as x86 stores them)."""
        if bits == self.bits:
            return list(self._lanes)
        if bits < self.bits:
            out = []
            k = self.bits // bits
            for v in self._lanes:
                for i in range(k):
                    part = S.arith(">>", S.cast(UNSIGNED[max(self.bits, 32)], v), S.const("i32", i * bits)) if i else v
                    out.append(S.cast(UNSIGNED[bits], part))
            return out
        k = bits // self.bits
        wide = UNSIGNED[max(bits, 32)]
        out = []
        for j in range(len(self._lanes) // k):
            acc = S.const(wide, 0)
            for i in range(k):
                part = S.cast(wide, self._lanes[j * k + i])
                if i:
                    part = S.arith("<<", part, S.const("i32", i * self.bits))
                acc = S.arith("|", acc, part) if acc != S.const(wide, 0) else part
            out.append(S.cast(UNSIGNED[bits], acc))
        return out

    def signed(self, bits: int) -> list[Tree]:
        return [S.cast(SIGNED[bits], v) for v in self.lanes(bits)]


def zero() -> Vec:
    return Vec(8, [S.const("u8", 0)] * 16)


def select(cond: Tree, a: Vec, b: Vec) -> Vec:
    bits = min(a.bits, b.bits)
    return Vec(bits, [S.select(cond, x, y) for x, y in zip(a.lanes(bits), b.lanes(bits), strict=True)])


def _lanewise(a: Vec, b: Vec, bits: int, signed: bool, fn) -> Vec:
    xs = a.signed(bits) if signed else a.lanes(bits)
    ys = b.signed(bits) if signed else b.lanes(bits)
    return Vec(bits, [fn(x, y) for x, y in zip(xs, ys, strict=True)])


def _saturate(v: Tree, t: str) -> Tree:
    lo, hi = S.type_range(t)
    v = S.cast("i32", v)
    return S.cast(t, S.minmax("min", S.minmax("max", v, S.const("i32", lo)), S.const("i32", hi)))


def _shift(a: Vec, bits: int, n: Tree, kind: str) -> Vec:
    if n[0] != "const":
        raise ValueError("shift amount")
    k = int(n[2])
    wide = "i32" if bits < 32 else "i64"
    if kind == "sll":
        lanes = [
            S.const("u32", 0)
            if k >= bits
            else S.cast(UNSIGNED[bits], S.arith("<<", S.cast(wide, v), S.const("i32", k)))
            for v in a.lanes(bits)
        ]
    elif kind == "srl":
        lanes = [
            S.const("u32", 0) if k >= bits else S.arith(">>", S.cast(UNSIGNED[max(bits, 32)], v), S.const("i32", k))
            for v in a.lanes(bits)
        ]
    else:
        lanes = [S.arith(">>", S.cast(wide, v), S.const("i32", min(k, bits - 1))) for v in a.signed(bits)]
    return Vec(bits, lanes)


def call(ex: Executor, name: str, args: list[c_ast.Node], node: c_ast.Node) -> object:
    """The value of one intrinsic call."""
    from pixelweave.nodes.lift.c_execute import ELEM_BYTES, INDEX, Pointer

    vals = [ex.eval(a) for a in args]

    def vec(i: int) -> Vec:
        v = vals[i]
        if not isinstance(v, Vec):
            raise ex.refuse(node, f"`{name}`", f"argument {i + 1} is not an __m128i")
        return v

    if name in ("_mm_loadu_si128", "_mm_load_si128"):
        p = vals[0]
        if not isinstance(p, Pointer):
            raise ex.refuse(node, f"`{name}`", "its argument is not a pointer into a known buffer")
        b = ex.buffers[p.buffer]
        size = ELEM_BYTES[b.elem]
        lanes = [
            ex.load(Pointer(p.buffer, b.elem, S.arith("+", p.offset, S.const(INDEX, i * size))), node)
            for i in range(16 // size)
        ]
        if not S.is_int(b.elem):
            raise ex.refuse(node, f"`{name}`", "integer intrinsics on a floating-point buffer")
        return Vec(size * 8, lanes)
    if name == "_mm_setzero_si128":
        return zero()
    if name.startswith("_mm_set1_epi"):
        bits = int(name[len("_mm_set1_epi") :])
        v = vals[0]
        return Vec(bits, [S.cast(UNSIGNED[bits], v)] * (128 // bits))
    table2 = {
        "_mm_add_epi8": (8, False, lambda x, y: S.arith("+", x, y)),
        "_mm_add_epi16": (16, False, lambda x, y: S.arith("+", x, y)),
        "_mm_add_epi32": (32, False, lambda x, y: S.arith("+", x, y)),
        "_mm_sub_epi8": (8, False, lambda x, y: S.arith("-", x, y)),
        "_mm_sub_epi16": (16, False, lambda x, y: S.arith("-", x, y)),
        "_mm_sub_epi32": (32, False, lambda x, y: S.arith("-", x, y)),
        "_mm_adds_epu8": (8, False, lambda x, y: _saturate(S.arith("+", x, y), "u8")),
        "_mm_subs_epu8": (8, False, lambda x, y: _saturate(S.arith("-", x, y), "u8")),
        "_mm_adds_epu16": (16, False, lambda x, y: _saturate(S.arith("+", x, y), "u16")),
        "_mm_subs_epu16": (16, False, lambda x, y: _saturate(S.arith("-", x, y), "u16")),
        "_mm_adds_epi16": (16, True, lambda x, y: _saturate(S.arith("+", x, y), "i16")),
        "_mm_subs_epi16": (16, True, lambda x, y: _saturate(S.arith("-", x, y), "i16")),
        "_mm_mullo_epi16": (16, False, lambda x, y: S.arith("*", x, y)),
        "_mm_mulhi_epu16": (16, False, lambda x, y: S.arith(">>", S.arith("*", x, y), S.const("i32", 16))),
        "_mm_avg_epu8": (
            8,
            False,
            lambda x, y: S.arith(">>", S.arith("+", S.arith("+", x, y), S.const("i32", 1)), S.const("i32", 1)),
        ),
        "_mm_avg_epu16": (
            16,
            False,
            lambda x, y: S.arith(">>", S.arith("+", S.arith("+", x, y), S.const("i32", 1)), S.const("i32", 1)),
        ),
        "_mm_min_epu8": (8, False, lambda x, y: S.minmax("min", x, y)),
        "_mm_max_epu8": (8, False, lambda x, y: S.minmax("max", x, y)),
        "_mm_min_epi16": (16, True, lambda x, y: S.minmax("min", x, y)),
        "_mm_max_epi16": (16, True, lambda x, y: S.minmax("max", x, y)),
        "_mm_and_si128": (8, False, lambda x, y: S.arith("&", x, y)),
        "_mm_or_si128": (8, False, lambda x, y: S.arith("|", x, y)),
        "_mm_xor_si128": (8, False, lambda x, y: S.arith("^", x, y)),
        "_mm_andnot_si128": (8, False, lambda x, y: S.arith("&", S.unary("bnot", x), y)),
    }
    if name in table2:
        bits, signed, fn = table2[name]
        a, b = vec(0), vec(1)
        if name == "_mm_mulhi_epu16":
            return Vec(
                16, [fn(S.cast("u32", x), S.cast("u32", y)) for x, y in zip(a.lanes(16), b.lanes(16), strict=True)]
            )
        return _lanewise(a, b, bits, signed, fn)
    for prefix, kind in (("_mm_slli_epi", "sll"), ("_mm_srli_epi", "srl"), ("_mm_srai_epi", "sra")):
        if name.startswith(prefix):
            if vals[1][0] != "const":
                raise ex.refuse(node, f"`{name}`", "the shift amount must be a constant")
            return _shift(vec(0), int(name[len(prefix) :]), vals[1], kind)
    if name in ("_mm_packus_epi16", "_mm_packs_epi16", "_mm_packs_epi32"):
        a, b = vec(0), vec(1)
        src_bits = 32 if name.endswith("32") else 16
        to = {"_mm_packus_epi16": "u8", "_mm_packs_epi16": "i8", "_mm_packs_epi32": "i16"}[name]
        lanes = [_saturate(v, to) for v in a.signed(src_bits) + b.signed(src_bits)]
        return Vec(src_bits // 2, lanes)
    for prefix in ("_mm_unpacklo_epi", "_mm_unpackhi_epi"):
        if name.startswith(prefix):
            bits = int(name[len(prefix) :])
            a, b = vec(0).lanes(bits), vec(1).lanes(bits)
            half = len(a) // 2
            lo = 0 if "lo" in prefix else half
            lanes = []
            for i in range(half):
                lanes += [a[lo + i], b[lo + i]]
            return Vec(bits, lanes)
    raise ex.refuse(node, f"intrinsic `{name}`", "not among the lifted SSE2 integer intrinsics")
