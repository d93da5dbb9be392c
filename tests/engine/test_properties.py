"""Property tests: random typed expressions, stencils and reductions, engine against Halide.

Each example is a plain description (nested tuples drawn by hypothesis) that one
interpreter turns into a pipeline with either module, `engine` or `halide`; the harness
then evaluates both and compares them bit for bit (floats within a small tolerance).

The interpreter keeps every program inside Halide's defined behaviour: it follows the
range of every subexpression and clamps where int32 could overflow, clamps floats before
converting them to integers, keeps float values dyadic and bounded (so float arithmetic is
exact whatever the evaluation order or fused multiply-adds), and divides floats only by
powers of two. Everything else — the types of mixed operands, literal coercion, integer
division and modulo by anything (zero included), wrap-around, shifts, casts — is left to
the two implementations to agree on.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from typing import Any

import halide as hl
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pixelweave as pw
from tests.engine.oracle import compare_with_halide

# PIXELWEAVE_HYPOTHESIS_SCALE=20 runs twenty times as many examples (for bug hunts).
SCALE = int(os.environ.get("PIXELWEAVE_HYPOTHESIS_SCALE", "1"))

SETTINGS = settings(
    derandomize=os.environ.get("PIXELWEAVE_HYPOTHESIS_RANDOM") is None,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

W, H = 13, 9

# ----------------------------------------------------------------------------- types

TypeKey = tuple[str, int]  # ("uint", 8), ("int", 32), ("float", 32); bool is ("uint", 1)

BOOL: TypeKey = ("uint", 1)

TYPE_NAMES: dict[str, TypeKey] = {
    "u8": ("uint", 8), "u16": ("uint", 16), "u32": ("uint", 32),
    "i8": ("int", 8), "i16": ("int", 16), "i32": ("int", 32),
    "f32": ("float", 32), "f64": ("float", 64),
}  # fmt: skip

INPUTS: dict[str, TypeKey] = {"a": ("uint", 8), "b": ("uint", 16), "c": ("int", 16), "d": ("float", 32)}

FLOAT_LIMIT = float(1 << 20)  # floats stay within this magnitude (and so stay exact)
INT32_LIMIT = 1 << 15  # operands of int32 arithmetic are clamped to this when needed


def make_type(m: Any, t: TypeKey) -> Any:
    code, bits = t
    if bits == 1:
        return m.Bool()
    return {"uint": m.UInt, "int": m.Int, "float": m.Float}[code](bits)


def type_key(t: Any) -> TypeKey:
    """A module-independent name of an engine or Halide type."""
    bits = t.bits() if callable(t.bits) else t.bits
    if t.is_float():
        return ("float", bits)
    return ("int" if t.is_int() else "uint", bits)


def type_range(t: TypeKey) -> tuple[float, float]:
    code, bits = t
    if code == "float":
        return (-math.inf, math.inf)
    if code == "uint":
        return (0, (1 << bits) - 1)
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def convert(lo: float, hi: float, t: TypeKey) -> tuple[float, float]:
    """The range of values in [lo, hi] after an implicit or explicit conversion to t."""
    if t[0] == "float":
        return float(lo), float(hi)
    tlo, thi = type_range(t)
    lo, hi = math.trunc(lo), math.trunc(hi)
    if tlo <= lo and hi <= thi:
        return lo, hi
    return tlo, thi


# ----------------------------------------------------------------------------- descriptions

CMP_OPS = ["<", "<=", "==", "!=", ">", ">="]
BIN_OPS = ["+", "-", "*", "/", "%", "min", "max"]
BOOL_OPS = ["&", "|", "^", "+", "-", "min", "max", "==", "!=", "<"]
UNARY_OPS = ["~", "-", "abs", "sqrt", "floor", "ceil", "round", "trunc"]

leaves = st.one_of(
    st.tuples(st.just("in"), st.sampled_from(sorted(INPUTS))),
    st.tuples(st.just("var"), st.sampled_from(["x", "y"])),
    st.tuples(
        st.just("int"),
        st.one_of(
            st.integers(-20, 20),
            st.sampled_from([127, 128, 255, 256, -128, -129, 1000, 32767, 32768, 65535, -32768, 70000]),
        ),
    ),
    st.tuples(st.just("float"), st.integers(-64, 64).map(lambda k: k / 4)),
)


def _conditions(children: st.SearchStrategy) -> st.SearchStrategy:
    """Bool expressions: comparisons, combined by bool operators (+ and - of bools wrap)."""
    cmp = st.tuples(st.just("cmp"), st.sampled_from(CMP_OPS), children, children)
    return st.one_of(
        cmp,
        st.tuples(st.just("bool"), st.sampled_from(BOOL_OPS), cmp, cmp),
        st.tuples(st.just("not"), cmp),
    )


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(BIN_OPS), children, children),
        st.tuples(st.just("select"), _conditions(children), children, children),
        st.tuples(st.just("boolval"), _conditions(children)),
        st.tuples(st.just("cast"), st.sampled_from(sorted(TYPE_NAMES)), children),
        st.tuples(st.just("satcast"), st.sampled_from(sorted(TYPE_NAMES)), children),
        st.tuples(st.just("shift"), st.sampled_from(["<<", ">>"]), children, st.integers(-7, 31)),
        st.tuples(st.just("bit"), st.sampled_from(["&", "|", "^"]), children, children),
        st.tuples(st.just("unary"), st.sampled_from(UNARY_OPS), children),
        st.tuples(st.just("absd"), children, children),
        st.tuples(st.just("clamp"), children, st.integers(-300, 300), st.integers(0, 600)),
        st.tuples(st.just("lerp"), children, children, st.sampled_from(["u8", "u16", "f32", "lit"]), children),
    )


expressions = st.recursive(leaves, _extend, max_leaves=10)


# ----------------------------------------------------------------------------- interpreter


@dataclass
class Node:
    """A built subexpression with its type and a range that holds every value it takes.
    A Python literal has t None and is its own value (e is an int or a float)."""

    e: Any
    t: TypeKey | None
    lo: float
    hi: float
    from_float: bool = False  # e is a cast of a float to an integer type

    @property
    def literal(self) -> bool:
        return self.t is None


class Interpreter:
    """Builds one description with one module, recording the type of every node."""

    def __init__(self, m: Any, images: dict[str, Any]) -> None:
        self.m = m
        self.images = images
        self.x, self.y = m.Var("x"), m.Var("y")
        self.trace: list[tuple[str, TypeKey]] = []

    # -- helpers
    def typed(self, e: Any, lo: float, hi: float, tag: str) -> Node:
        t = type_key(e.type())
        lo, hi = convert(lo, hi, t)
        self.trace.append((tag, t))
        return Node(e, t, lo, hi)

    def as_expr(self, n: Node) -> Node:
        """A literal turned into an Expr of Python's default type (int32 / float32)."""
        if not n.literal:
            return n
        if isinstance(n.e, float):
            return self.typed(self.m.f32(n.e), n.e, n.e, "lit")
        return self.typed(self.m.i32(n.e), n.e, n.e, "lit")

    def fit_literal(self, n: Node, t: TypeKey) -> Node:
        """A literal beside an Expr of type t, adjusted so that it fits t (the error of a
        literal that does not fit is tested apart)."""
        if not n.literal or t[0] == "float" or isinstance(n.e, float):
            return n
        tlo, thi = type_range(t)
        v = int(min(max(n.e, tlo), thi))
        return Node(v, None, v, v)

    def clamp_to(self, n: Node, lo: float, hi: float) -> Node:
        """n restricted to [lo, hi] (bounds that n's type can hold)."""
        if n.lo >= lo and n.hi <= hi:
            return n
        if n.literal:
            v = type(n.e)(min(max(n.e, lo), hi))
            return Node(v, None, v, v)
        tlo, thi = type_range(n.t)
        lo, hi = max(lo, tlo), min(hi, thi)
        if n.t[0] != "float":
            lo, hi = int(lo), int(hi)
        e = self.m.clamp(n.e, lo, hi)
        return self.typed(e, max(n.lo, lo), min(n.hi, hi), "clamp")

    def shrink(self, n: Node, limit: float) -> Node:
        return self.clamp_to(n, -limit, limit)

    def to_integer(self, n: Node) -> Node:
        """An integer Expr: literals become Exprs, floats are clamped and cast to int16."""
        n = self.as_expr(n)
        if n.t[0] == "float":
            return self.cast(n, ("int", 16))
        if n.t == BOOL:
            return self.cast(n, ("uint", 8))
        return n

    def cast(self, n: Node, t: TypeKey, saturating: bool = False) -> Node:
        n = self.as_expr(n)
        if n.from_float and t[0] != "float" and t[1] <= n.t[1]:
            # Halide's simplifier folds int(int(float)) into int(float) when the outer cast is
            # no wider: undefined unless the float is in range of the outer type.
            n = self.clamp_to(n, *type_range(t))
        if n.t[0] == "float" and t[0] != "float" and not saturating:
            tlo, thi = type_range(t)
            if t[0] == "uint":  # (the same folding applies where uintN meets intN and becomes intN)
                thi = min(thi, (1 << (t[1] - 1)) - 1)
            n = self.clamp_to(n, max(tlo, -INT32_LIMIT), min(thi, INT32_LIMIT))
            node = self.typed(self.m.cast(make_type(self.m, t), n.e), n.lo, n.hi, "cast")
            node.from_float = True
            return node
        if saturating:
            e = self.m.saturating_cast(make_type(self.m, t), n.e)
            tlo, thi = type_range(t)
            return self.typed(e, max(n.lo, tlo), min(n.hi, thi), "satcast")
        return self.typed(self.m.cast(make_type(self.m, t), n.e), n.lo, n.hi, "cast")

    def both_typed(self, a: Node, b: Node) -> tuple[Node, Node]:
        """Two operands ready for a binary operator: a lone literal adopts the other's type
        (after fitting); two literals make the first an Expr."""
        if a.literal and b.literal:
            a = self.as_expr(a)
        if a.literal:
            a = self.fit_literal(a, b.t)
        if b.literal:
            b = self.fit_literal(b, a.t)
        return a, b

    # -- the grammar
    def build(self, d: tuple) -> Node:
        return getattr(self, "_" + d[0])(*d[1:])

    def _in(self, name: str) -> Node:
        t = INPUTS[name]
        lo, hi = (-64.0, 64.0) if t[0] == "float" else type_range(t)
        return self.typed(self.images[name][self.x, self.y], lo, hi, "in")

    def _var(self, name: str) -> Node:
        v = self.x if name == "x" else self.y
        return self.typed(v + 0, 0, (W if name == "x" else H) - 1, "var")

    def _int(self, v: int) -> Node:
        return Node(v, None, v, v)

    def _float(self, v: float) -> Node:
        return Node(v, None, v, v)

    def _apply(self, op: str, a: Any, b: Any) -> Any:
        m = self.m
        return {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
            "%": lambda: a % b, "min": lambda: m.min(a, b), "max": lambda: m.max(a, b),
        }[op]()  # fmt: skip

    def _bin(self, op: str, da: tuple, db: tuple) -> Node:
        a, b = self.build(da), self.build(db)
        if op in "*/%":  # engine asks for a cast where Halide multiplies or divides two bools
            a, b = (self.cast(n, ("uint", 8)) if n.t == BOOL else n for n in (a, b))
        a, b = self.both_typed(a, b)
        result = type_key(self._apply(op, a.e, b.e).type())
        if result[0] == "float" and op in "/%":
            # Divide floats only by a power of two: exact, and never by zero.
            k = int(b.hi) if b.literal else 2
            b = Node(float(2 ** max(min(abs(k).bit_length() - 1, 3), -2)) * (-1 if k < 0 else 1), None, 0, 0)
            b.lo = b.hi = b.e
            a = self.as_expr(a)
        for _ in range(2):
            alo, ahi = convert(a.lo, a.hi, result)
            blo, bhi = convert(b.lo, b.hi, result)
            lo, hi = _range_of(op, result, alo, ahi, blo, bhi)
            if result == ("int", 32) and (lo < -(1 << 31) or hi >= 1 << 31 or (op == "/" and alo <= -(1 << 31))):
                a, b = self.shrink(a, INT32_LIMIT), self.shrink(b, INT32_LIMIT)
                continue
            if result[0] == "float" and max(abs(lo), abs(hi)) > FLOAT_LIMIT:
                a, b = self.shrink(a, 1024), self.shrink(b, 1024)
                continue
            break
        return self.typed(self._apply(op, a.e, b.e), lo, hi, op)

    def _cmp(self, cmp: str, dc1: tuple, dc2: tuple) -> Node:
        c1, c2 = self.both_typed(self.build(dc1), self.build(dc2))
        cond = {
            "<": lambda p, q: p < q, "<=": lambda p, q: p <= q, "==": lambda p, q: p == q,
            "!=": lambda p, q: p != q, ">": lambda p, q: p > q, ">=": lambda p, q: p >= q,
        }[cmp](c1.e, c2.e)  # fmt: skip
        return self.typed(cond, 0, 1, "cmp")

    def _bool(self, op: str, dc1: tuple, dc2: tuple) -> Node:
        p, q = self.build(dc1).e, self.build(dc2).e
        m = self.m
        e = {
            "&": lambda: p & q, "|": lambda: p | q, "^": lambda: p ^ q, "+": lambda: p + q,
            "-": lambda: p - q, "min": lambda: m.min(p, q), "max": lambda: m.max(p, q),
            "==": lambda: p == q, "!=": lambda: p != q, "<": lambda: p < q,
        }[op]()  # fmt: skip
        return self.typed(e, 0, 1, "bool" + op)

    def _not(self, dc: tuple) -> Node:
        return self.typed(~self.build(dc).e, 0, 1, "not")

    def _boolval(self, dc: tuple) -> Node:
        return self.build(dc)

    def _select(self, dc: tuple, da: tuple, db: tuple) -> Node:
        cond = self.build(dc).e
        a, b = self.build(da), self.build(db)
        if a.literal and b.literal:
            a = self.as_expr(a)
        # A float literal never meets an integer branch; an int literal is cast by select.
        if b.literal and isinstance(b.e, float) and a.t[0] != "float":
            b = Node(int(b.e), None, int(b.e), int(b.e))
        if a.literal and isinstance(a.e, float) and b.t[0] != "float":
            a = Node(int(a.e), None, int(a.e), int(a.e))
        if not a.literal and not b.literal and a.t != b.t:
            b = self.cast(b, a.t)
        t = a.t or b.t
        if a.literal:
            a = Node(a.e, None, *convert(a.e, a.e, t))
        if b.literal:
            b = Node(b.e, None, *convert(b.e, b.e, t))
        e = self.m.select(cond, a.e, b.e)
        return self.typed(e, min(a.lo, b.lo), max(a.hi, b.hi), "select")

    def _cast(self, name: str, da: tuple) -> Node:
        return self.cast(self.build(da), TYPE_NAMES[name])

    def _satcast(self, name: str, da: tuple) -> Node:
        return self.cast(self.build(da), TYPE_NAMES[name], saturating=True)

    def _shift(self, op: str, da: tuple, amount: int) -> Node:
        a = self.to_integer(self.build(da))
        bits = a.t[1]
        k = amount % bits if amount >= 0 else -((-amount) % bits)
        left = (op == "<<") == (k >= 0)
        if left and a.t == ("int", 32):
            a = self.shrink(a, 1 << max(30 - abs(k), 0))
        e = a.e << k if op == "<<" else a.e >> k
        if left:
            lo, hi = a.lo * (1 << abs(k)), a.hi * (1 << abs(k))
        else:
            lo, hi = int(a.lo) >> abs(k), int(a.hi) >> abs(k)
        return self.typed(e, lo, hi, "shift")

    def _bit(self, op: str, da: tuple, db: tuple) -> Node:
        a, b = self.build(da), self.build(db)
        a = self.to_integer(a)
        if b.literal:
            b = self.fit_literal(Node(int(b.e), None, int(b.e), int(b.e)), a.t)
        else:
            b = self.to_integer(b)
            if (a.t[0] == "int") != (b.t[0] == "int"):
                b = self.cast(b, a.t)
        e = {"&": lambda: a.e & b.e, "|": lambda: a.e | b.e, "^": lambda: a.e ^ b.e}[op]()
        t = type_key(e.type())
        mag = max(abs(int(v)) for v in (*convert(a.lo, a.hi, t), *convert(b.lo, b.hi, t)))
        top = (1 << mag.bit_length()) - 1
        return self.typed(e, -top - 1 if t[0] == "int" else 0, top, op)

    def _unary(self, op: str, da: tuple) -> Node:
        a = self.as_expr(self.build(da))
        m = self.m
        if op == "~":
            a = self.to_integer(a)
            if a.t[0] == "int":
                return self.typed(~a.e, -a.hi - 1, -a.lo - 1, op)
            top = type_range(a.t)[1]
            return self.typed(~a.e, top - a.hi, top - a.lo, op)
        if op == "-":
            if a.t == ("int", 32):
                a = self.shrink(a, INT32_LIMIT)
            return self.typed(-a.e, -a.hi, -a.lo, op)
        if op == "abs":
            mag = max(abs(a.lo), abs(a.hi))
            lo = a.lo if a.lo >= 0 else (0 if a.hi >= 0 else -a.hi)
            return self.typed(m.abs(a.e), lo, mag, op)
        if a.t[0] != "float":
            a = self.typed(m.f32(a.e), a.lo, a.hi, "f32")
        if op == "sqrt":
            mag = max(abs(a.lo), abs(a.hi))
            return self.typed(m.sqrt(m.abs(a.e)), 0.0, math.sqrt(mag), op)
        fn = {"floor": m.floor, "ceil": m.ceil, "round": m.round, "trunc": m.trunc}[op]
        return self.typed(fn(a.e), math.floor(a.lo), math.ceil(a.hi), op)

    def _absd(self, da: tuple, db: tuple) -> Node:
        a, b = self.both_typed(self.build(da), self.build(db))
        a, b = self.as_expr(a), self.as_expr(b)
        e = self.m.absd(a.e, b.e)
        # Both are brought to one type first (which may wrap), then |a - b| cannot overflow.
        common = type_key(self.m.max(a.e, b.e).type())
        alo, ahi = convert(a.lo, a.hi, common)
        blo, bhi = convert(b.lo, b.hi, common)
        return self.typed(e, 0, max(abs(ahi - blo), abs(bhi - alo)), "absd")

    def _clamp(self, da: tuple, lo: int, span: int) -> Node:
        a = self.as_expr(self.build(da))
        tlo, thi = type_range(a.t)
        lo = int(min(max(lo, tlo), thi))
        hi = int(min(lo + span, thi))
        e = self.m.clamp(a.e, lo, hi)
        return self.typed(e, min(max(a.lo, lo), hi), max(min(a.hi, hi), lo), "clamp")

    def _lerp(self, da: tuple, db: tuple, weight_kind: str, dw: tuple) -> Node:
        a, b = self.both_typed(self.build(da), self.build(db))
        a = self.as_expr(a)
        if a.t == ("int", 32):
            # Halide lowers an int32 lerp through `value - INT_MIN` in int32, an overflow
            # that LLVM may exploit (it gives wrong results when `one` is a cast from float).
            a = self.cast(a, ("int", 16))
        if b.literal:
            b = Node(b.e, None, *convert(b.e, b.e, a.t))
        elif b.t != a.t:
            b = self.cast(b, a.t)
        w = self.build(dw)
        if weight_kind == "lit" or a.t[0] == "float":
            # (a float lerp by an unsigned weight divides by 2^bits - 1: inexact, and
            # compared in test_lerp_weights_match_halide with a tolerance instead)
            weight = (abs(int(w.lo)) % 5) / 4  # 0, 0.25, ..., 1: exact
        else:
            w = self.cast(w, TYPE_NAMES[weight_kind])
            if weight_kind == "f32":  # an integer lerp converts 255 * w to uint8: w must be in [0, 1]
                w = self.clamp_to(w, 0, 1)
            weight = w.e
        e = self.m.lerp(a.e, b.e, weight)
        return self.typed(e, min(a.lo, b.lo), max(a.hi, b.hi), "lerp")


def _range_of(op: str, t: TypeKey, alo: float, ahi: float, blo: float, bhi: float) -> tuple[float, float]:
    if op in ("+", "-", "*"):
        fn = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q}[op]
        corners = [fn(p, q) for p in (alo, ahi) for q in (blo, bhi)]
        return min(corners), max(corners)
    if op == "min":
        return min(alo, blo), min(ahi, bhi)
    if op == "max":
        return max(alo, blo), max(ahi, bhi)
    if t[0] == "float":  # b is a power-of-two constant
        if op == "/":
            corners = [alo / blo, ahi / blo]
            return min(corners), max(corners)
        return -abs(blo), abs(blo)
    mag_a = max(abs(alo), abs(ahi))
    if op == "/":
        return (0, mag_a) if t[0] == "uint" else (-mag_a, mag_a)
    mag_b = max(abs(blo), abs(bhi))
    return 0, max(mag_b - 1, 0)


def build_expression(m: Any, desc: tuple, trace: list | None = None):
    images = {name: m.ImageParam(make_type(m, t), 2, name) for name, t in INPUTS.items()}
    interp = Interpreter(m, images)
    root = interp.build(desc)
    if root.literal:
        root = interp.typed(interp.x + interp.fit_literal(root, ("int", 32)).e, 0, 0, "root")
    f = m.Func("f")
    f[interp.x, interp.y] = root.e
    if trace is not None:
        trace.extend(interp.trace)
    return f, images


def random_inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, (code, bits) in INPUTS.items():
        if code == "float":
            out[name] = (rng.integers(-256, 257, (H, W)) / 4).astype(np.float32)
        else:
            dt = np.dtype(f"{code}{bits}")
            info = np.iinfo(dt)
            values = rng.integers(info.min, info.max, (H, W), endpoint=True)
            # Make the extremes and small values common: they find most wrap-around bugs.
            special = rng.choice([info.min, info.max, 0, 1, -1 if code == "int" else 2], (H, W))
            out[name] = np.where(rng.random((H, W)) < 0.3, special, values).astype(dt)
    return out


def _try_build(m: Any, build, *args):
    try:
        return build(m, *args), None
    except (pw.CompileError, hl.HalideError) as e:
        return None, e


# ----------------------------------------------------------------------------- expressions


@settings(SETTINGS, max_examples=150 * SCALE)
@given(desc=expressions, seed=st.integers(0, 2**16))
def test_random_expressions_match_halide(desc, seed):
    traces: dict[str, list] = {"pw": [], "hl": []}
    _, err_pw = _try_build(pw, build_expression, desc, traces["pw"])
    _, err_hl = _try_build(hl, build_expression, desc, traces["hl"])
    assert (err_pw is None) == (err_hl is None), f"engine: {err_pw!r}; halide: {err_hl!r}"
    if err_pw is not None:
        event("both rejected the expression")
        return
    assert traces["pw"] == traces["hl"], "the two modules typed the expression differently"
    event(f"{min(len(traces['pw']) // 5 * 5, 20)}+ typed nodes")
    event(f"result {traces['pw'][-1][1]}")
    used = {im.name() for im in pw.Pipeline(build_expression(pw, desc)[0]).images}
    inputs = {k: v for k, v in random_inputs(seed).items() if k in used}
    compare_with_halide(lambda m: build_expression(m, desc), [W, H], inputs)


# ----------------------------------------------------------------------------- typing rules

OPERAND_KINDS = [*TYPE_NAMES, "bool", "u8const", "i16const", "f32const"]
LITERALS = [0, 1, -1, 7, 200, 255, 256, 300, -129, 32768, 70000, 2**31, -(2**31) - 1, 2**40, 1.5, -2.0, 0.25, True]


def make_operand(m: Any, x: Any, spec: tuple) -> Any:
    kind, v = spec
    if kind == "lit":
        return v
    if v == "bool":
        return x > 3
    if v.endswith("const"):
        return m.cast(make_type(m, TYPE_NAMES[v[:-5]]), 5)
    return m.cast(make_type(m, TYPE_NAMES[v]), x)


COMBINATORS = {
    "+": lambda m, a, b: a + b,
    "-": lambda m, a, b: a - b,
    "*": lambda m, a, b: a * b,
    "/": lambda m, a, b: a / b,
    "//": lambda m, a, b: a // b,
    "%": lambda m, a, b: a % b,
    "<": lambda m, a, b: a < b,
    "==": lambda m, a, b: a == b,
    "&": lambda m, a, b: a & b,
    "|": lambda m, a, b: a | b,
    "^": lambda m, a, b: a ^ b,
    "<<": lambda m, a, b: a << b,
    ">>": lambda m, a, b: a >> b,
    "**": lambda m, a, b: a**b,
    "min": lambda m, a, b: m.min(a, b),
    "max": lambda m, a, b: m.max(a, b),
    "absd": lambda m, a, b: m.absd(a, b),
    "select": lambda m, a, b: m.select(m.Var("x") > 0, a, b),
    "clamp": lambda m, a, b: m.clamp(a, b, b),
    "lerp": lambda m, a, b: m.lerp(a, a, b),
}


def _is_float_spec(spec: tuple) -> bool:
    kind, v = spec
    return isinstance(v, float) if kind == "lit" else v in ("f32", "f64", "f32const")


def _deliberately_stricter(op: str, a: tuple, b: tuple) -> bool:
    """Mixes that engine rejects although Halide builds them: a bitwise operator or shift
    with a float operand (Halide fails when compiling, or aborts on an LLVM assertion), a
    shift of two bools, and *, /, % of two bools (meaningless; engine asks for a cast)."""
    is_bool = [s == ("expr", "bool") or (s[0] == "lit" and s[1] is True) for s in (a, b)]
    small = [s[0] == "lit" and not isinstance(s[1], float) and abs(s[1]) < 2**31 for s in (a, b)]
    if op in ("&", "|", "^", "<<", ">>") and (_is_float_spec(a) or _is_float_spec(b)):
        return True
    if op in ("<<", ">>") and is_bool[0] and a[0] == "expr" and (is_bool[1] or small[1]):
        return True  # a shift of two bools
    both_bool = (is_bool[0] and (is_bool[1] or small[1])) or (is_bool[1] and small[0])
    if op in ("*", "/", "%") and both_bool:
        return True
    # bool ** -n divides bools
    return op == "**" and is_bool[0] and a[0] == "expr" and b[0] == "lit" and isinstance(b[1], int) and b[1] < 0


def _outcome(m: Any, op: str, a: tuple, b: tuple) -> str:
    x = m.Var("x")
    try:
        e = COMBINATORS[op](m, make_operand(m, x, a), make_operand(m, x, b))
    except (pw.CompileError, hl.HalideError):
        return "error"
    return "{}{}".format(*type_key(e.type()))


ALL_OPERANDS = [("expr", k) for k in OPERAND_KINDS] + [("lit", v) for v in LITERALS]


@pytest.mark.parametrize("op", sorted(COMBINATORS))
def test_mixed_operand_typing_matches_halide(op):
    """Every mix of two operands — typed Exprs of every type, typed constants and Python
    literals of every size — is accepted or rejected alike by both modules, and the
    accepted ones get the same type (Halide's coercion rules, its literal checks, the
    casts of select, clamp and lerp). The space is small, so it is swept exhaustively."""
    mismatches = []
    for a, b in itertools.product(ALL_OPERANDS, ALL_OPERANDS):
        if a[0] == "lit" and b[0] == "lit" and op not in ("select", "clamp", "lerp"):
            continue  # two Python numbers are plain Python arithmetic
        if op == "lerp" and a[0] == "lit" and isinstance(a[1], int) and abs(a[1]) >= 2**31:
            continue  # Halide's bindings cannot pass such an int to lerp at all
        ours = _outcome(pw, op, a, b)
        if _deliberately_stricter(op, a, b):
            theirs = "error"
        else:
            theirs = _outcome(hl, op, a, b)
        if ours != theirs:
            mismatches.append(f"{a[1]!r} {op} {b[1]!r}: engine {ours}, halide {theirs}")
    assert not mismatches, "\n".join(mismatches)


# ----------------------------------------------------------------------------- conversions

EXTREMES = {
    "u8": [0, 1, 127, 128, 254, 255],
    "u16": [0, 1, 255, 256, 32767, 32768, 65535],
    "u32": [0, 1, 255, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1],
    "i8": [-128, -127, -1, 0, 1, 127],
    "i16": [-32768, -129, -128, -1, 0, 255, 256, 32767],
    "i32": [-(2**31), -32769, -1, 0, 255, 65535, 65536, 2**31 - 1],
    "f32": [0.0, -0.75, 0.5, 255.5, -128.5, 65535.9, 2.0**31 - 128, 2.0**31, 2.0**32, -(2.0**31), 1e10, -1e10, 3e38],
    "f64": [0.0, -0.75, 255.99, 2.0**31 - 1, 2.0**31 - 0.5, 2.0**32 - 1, 2.0**32 - 0.25, -(2.0**31) - 0.5, 1e20, -1e20],
}


@pytest.mark.parametrize("src", sorted(TYPE_NAMES))
def test_conversions_of_extreme_values_match_halide(src):
    """cast and saturating_cast from one type to every type, on each type's limits and the
    values next to them (floats: values beyond every integer range too, for saturation;
    plain casts of floats to integers only where they are defined, in range)."""
    values = np.array(EXTREMES[src], dtype=np.dtype(TYPE_NAMES[src][0] + str(TYPE_NAMES[src][1])))
    small = values[(values >= 0) & (values <= 127)] if src[0] != "f" else np.array([0, 0.75, 1.5, 100.25, 127.5])
    small = np.resize(small.astype(values.dtype), len(values))

    def build(m):
        x = m.Var("x")
        image = m.ImageParam(make_type(m, TYPE_NAMES[src]), 1, "input")
        in_range = m.ImageParam(make_type(m, TYPE_NAMES[src]), 1, "small")
        outs = []
        for dst in sorted(TYPE_NAMES):
            t = make_type(m, TYPE_NAMES[dst])
            f = m.Func(f"to_{dst}")
            f[x] = m.saturating_cast(t, image[x])
            g = m.Func(f"cast_to_{dst}")
            g[x] = m.cast(t, image[x] if src[0] != "f" else in_range[x])
            outs += [f, g]
        return outs, {"input": image, "small": in_range}

    inputs = {"input": values, "small": small} if src[0] == "f" else {"input": values}
    compare_with_halide(build, [len(values)], inputs)


# ----------------------------------------------------------------------------- stencils

BOUNDARIES = ["repeat_edge", "constant_exterior", "repeat_image", "mirror_image", "mirror_interior"]
offsets = st.tuples(st.integers(-2, 2), st.integers(-2, 2))
taps = st.lists(st.tuples(offsets, st.integers(-3, 4)), min_size=1, max_size=5)

stencils = st.fixed_dictionaries(
    {
        "input": st.sampled_from(["u8", "u16", "i16", "f32"]),
        "boundary": st.sampled_from(BOUNDARIES),
        "exterior": st.integers(0, 100),
        "stages": st.lists(taps, min_size=1, max_size=3),
        "out": st.sampled_from(["u8", "i16", "i32", "f32"]),
        "saturate": st.booleans(),
        "size": st.tuples(st.integers(1, 12), st.integers(1, 10)),
        "seed": st.integers(0, 2**16),
    }
)


def build_stencil(m: Any, s: dict):
    t = TYPE_NAMES[s["input"]]
    inp = m.ImageParam(make_type(m, t), 2, "input")
    x, y = m.Var("x"), m.Var("y")
    bc = getattr(m.BoundaryConditions, s["boundary"])
    if s["boundary"] == "constant_exterior":
        src = bc(inp, m.cast(make_type(m, t), s["exterior"]))
    else:
        src = bc(inp)
    wide = ("float", 32) if t[0] == "float" else ("int", 32)
    prev = src
    for i, stage in enumerate(s["stages"]):
        f = m.Func(f"stage{i}")
        total = None
        for (dx, dy), weight in stage:
            term = m.cast(make_type(m, wide), prev[x + dx, y + dy]) * weight
            total = term if total is None else total + term
        # Keep int32 sums far from overflow: 3 stages of at most 5 taps of weight <= 4.
        f[x, y] = total if i == 0 or wide[0] == "float" else total / 16
        prev = f
    out = m.Func("out")
    ot = make_type(m, TYPE_NAMES[s["out"]])
    out[x, y] = m.saturating_cast(ot, prev[x, y]) if s["saturate"] else m.cast(ot, prev[x, y])
    return out, {"input": inp}


def stencil_input(s: dict) -> np.ndarray:
    rng = np.random.default_rng(s["seed"])
    shape = (rng.integers(3, 9), rng.integers(3, 11))
    if s["input"] == "f32":
        return (rng.integers(-64, 65, shape) / 4).astype(np.float32)
    dt = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16}[s["input"]]
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


@settings(SETTINGS, max_examples=40 * SCALE)
@given(s=stencils)
def test_random_stencils_match_halide(s):
    """Chains of stencils with offsets in [-2, 2] over every boundary condition, on inputs
    smaller than the stencil's reach (so the boundary condition is exercised everywhere)."""
    if s["out"] != "f32" and s["input"] == "f32" and not s["saturate"]:
        s = {**s, "saturate": True}  # float to int by plain cast is undefined out of range
    compare_with_halide(lambda m: build_stencil(m, s), list(s["size"]), {"input": stencil_input(s)})


# ----------------------------------------------------------------------------- reductions

reductions = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["sum", "product", "max", "min", "histogram", "scan", "window"]),
        "rdom": st.lists(st.tuples(st.integers(-3, 3), st.integers(1, 6)), min_size=1, max_size=2),
        "input": st.sampled_from(["u8", "i16", "f32"]),
        "acc": st.sampled_from(["u16", "i32", "u32", "f32"]),
        "seed": st.integers(0, 2**16),
    }
)

IN_W, IN_H = 10, 8


def build_reduction(m: Any, s: dict):
    t = TYPE_NAMES[s["input"]]
    acc = make_type(m, TYPE_NAMES[s["acc"]])
    inp = m.ImageParam(make_type(m, t), 2, "input")
    src = m.BoundaryConditions.repeat_edge(inp)
    x, y = m.Var("x"), m.Var("y")
    bounds = s["rdom"] if len(s["rdom"]) == 2 else [*s["rdom"], (0, 1)]
    r = m.RDom(bounds)
    f = m.Func("f")
    kind = s["kind"]

    def value(cx, cy):
        v = src[cx, cy]
        if t[0] == "float" and s["acc"] != "f32":
            v = m.saturating_cast(acc, v)
        return m.cast(acc, v)

    if kind in ("sum", "window"):
        f[x, y] = m.cast(acc, 0)
        f[x, y] += value(x + r.x, y + r.y) if kind == "sum" else value(x + r.x, y + r.y) * m.cast(acc, r.x + 4)
    elif kind == "product":
        # Small factors: products wrap only in the unsigned accumulators (defined).
        f[x, y] = m.cast(acc, 1)
        small = m.cast(acc, m.clamp(m.cast(m.Int(32), src[x + r.x, y + r.y]) % 3, 0, 2) + 1)
        if s["acc"] in ("i32", "f32"):
            small = m.min(small, m.cast(acc, 1)) + m.cast(acc, r.x % 2)
        f[x, y] = f[x, y] * small
    elif kind in ("max", "min"):
        f[x, y] = value(x, y)
        fn = m.max if kind == "max" else m.min
        f[x, y] = fn(f[x, y], value(x + r.x, y + r.y))
    elif kind == "histogram":
        f[x, y] = m.cast(acc, 0)
        bucket = m.clamp(m.cast(m.Int(32), value(r.x, r.y)) % 7, 0, 6)
        f[bucket, y] += m.cast(acc, 1)
    else:  # scan: a running sum along x over the RDom's first dimension
        f[x, y] = value(x, y)
        rs = m.RDom([(1, min(bounds[0][1], IN_W - 1))])
        f[rs.x, y] = f[rs.x - 1, y] + value(rs.x, y)
    return f, {"input": inp}


@settings(SETTINGS, max_examples=40 * SCALE)
@given(s=reductions)
def test_random_reductions_match_halide(s):
    """Update definitions over random RDoms: sums, products, min/max, a histogram (a
    scatter to computed coordinates) and a scan (a recurrence on the Func itself)."""
    rng = np.random.default_rng(s["seed"])
    if s["input"] == "f32":
        data = (rng.integers(-64, 65, (IN_H, IN_W)) / 4).astype(np.float32)
    else:
        dt = np.dtype(TYPE_NAMES[s["input"]][0] + str(TYPE_NAMES[s["input"]][1]))
        data = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (IN_H, IN_W), endpoint=True).astype(dt)
    compare_with_halide(lambda m: build_reduction(m, s), [IN_W, IN_H], {"input": data})
