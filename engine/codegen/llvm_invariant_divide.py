"""Vector division and remainder by one run-time value in every lane (a broadcast divisor).

x86 has no vector integer division, so LLVM turns `sdiv`/`udiv` of vectors into one scalar
division per lane: a box filter whose radius is a parameter spends most of its time there.
When the divisor is the same in every lane, the multiplier and shifts of a division by it
(Granlund and Montgomery's round-up method, as Halide's division by a run-time value uses)
are computed once from the scalar, with one 64-bit scalar division that LLVM hoists out of
loops where the divisor is invariant; every lane then takes a multiply-high, a subtraction
and shifts. Values of up to 32 bits are computed in 32-bit lanes.

Results are Halide's: Euclidean division and remainder (the remainder is never negative),
x / 0 == 0 and x % 0 == 0, for every divisor including negative ones and INT_MIN.
"""

from __future__ import annotations

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, const, llvm_type
from pixelweave.engine.ir.types import Type, UInt


def divides_by_broadcast(t: Type) -> bool:
    """Whether division of type t by a broadcast value is computed here: integer vectors of
    up to 32 bits (64-bit lanes have no multiply-high in vector units)."""
    return t.lanes > 1 and (t.is_int() or t.is_uint()) and t.bits <= 32


def divide_by_broadcast(
    b: FunctionBuilder, module: ModuleBuilder, a: Value, divisor: Value, t: Type, *, remainder: bool
) -> Value:
    """a / divisor (or a % divisor) for a vector a of type t and a scalar divisor of t's
    element type, with Halide's semantics (see the module docstring)."""
    lanes = t.lanes
    u32, i64 = UInt(32), "i64"
    vec32 = llvm_type(u32.with_lanes(lanes))
    signed = t.is_int()
    # The divisor's magnitude as u32 (|INT_MIN| is 2^31), and its sign.
    d32 = divisor if t.bits == 32 else b.convert("sext" if signed else "zext", divisor, "i32", "d32")
    if signed:
        negative = b.icmp("slt", d32, const(u32, 0), "d_neg")
        magnitude = b.select(negative, b.binop("sub", const(u32, 0), d32, "d_negated"), d32, "d_abs")
    else:
        magnitude = d32
    d_zero = b.icmp("eq", magnitude, const(u32, 0), "d_zero")
    d = b.select(d_zero, const(u32, 1), magnitude, "d_safe")
    # l = ceil(log2 d); m = floor(2^32 (2^l - d) / d) + 1; shifts min(l, 1) and max(l - 1, 0)
    ctlz = module.intrinsic("llvm.ctlz.i32", "i32", ["i32", "i1"])
    leading = b.call("i32", ctlz, [b.binop("sub", d, const(u32, 1), "d_m1"), Value("i1", "false")], "lz")
    log = b.binop("sub", const(u32, 32), leading, "log")
    d64 = b.convert("zext", d, i64, "d64")
    power = b.binop("shl", Value(i64, "1"), b.convert("zext", log, i64, "log64"), "pow")
    numerator = b.binop("shl", b.binop("sub", power, d64, "excess"), Value(i64, "32"), "num")
    magic64 = b.binop("add", b.binop("udiv", numerator, d64, "magic_q"), Value(i64, "1"), "magic")
    magic = b.convert("trunc", magic64, "i32", "magic32")
    has_log = b.icmp("ne", log, const(u32, 0), "has_log")
    shift1 = b.convert("zext", has_log, "i32", "sh1")
    shift2 = b.select(has_log, b.binop("sub", log, const(u32, 1), "log_m1"), const(u32, 0), "sh2")

    def splat(scalar: Value, hint: str) -> Value:
        one = b.assign(vec32, f"insertelement {vec32} poison, {scalar}, i64 0", hint)
        return b.assign(vec32, f"shufflevector {one}, {vec32} poison, <{lanes} x i32> zeroinitializer", hint)

    # The dividend in 32-bit lanes; for signed values floor(a / d) = s ^ (a ^ s) / d with
    # s = a >> 31 (all ones for negative a), so the unsigned method serves both.
    wide_a = a if t.bits == 32 else b.convert("sext" if signed else "zext", a, vec32, "a32")
    if signed:
        sign = b.binop("ashr", wide_a, splat(Value("i32", "31"), "thirtyone"), "a_sign")
        n = b.binop("xor", wide_a, sign, "a_folded")
    else:
        n = wide_a
    vec64 = f"<{lanes} x i64>"
    product = b.binop(
        "mul", b.convert("zext", n, vec64, "n64"), b.convert("zext", splat(magic, "m_splat"), vec64, "m64"), "prod"
    )
    high = b.convert("trunc", b.binop("lshr", product, _splat64(b, lanes, 32), "hi64"), vec32, "mulhi")
    half = b.binop("lshr", b.binop("sub", n, high, "n_minus_hi"), splat(shift1, "sh1_splat"), "half")
    q = b.binop("lshr", b.binop("add", high, half, "q_sum"), splat(shift2, "sh2_splat"), "q_mag")
    if signed:
        q = b.binop("xor", q, sign, "q_floor")  # floor(a / |d|)
        q = b.select(splat_bool(b, negative, lanes), b.binop("sub", _zero(lanes), q, "q_neg"), q, "q_euclid")
    zero_lanes = splat_bool(b, d_zero, lanes)
    if remainder:
        # a - q * divisor, in [0, |d|) for Euclidean q
        d_lanes = splat(d32, "d_splat")
        result = b.binop("sub", wide_a, b.binop("mul", q, d_lanes, "qd"), "rem")
    else:
        result = q
    result = b.select(zero_lanes, _zero(lanes), result, "by_zero")
    return result if t.bits == 32 else b.convert("trunc", result, llvm_type(t), "narrowed")


def splat_bool(b: FunctionBuilder, flag: Value, lanes: int) -> Value:
    """A scalar i1 in every lane."""
    ty = f"<{lanes} x i1>"
    one = b.assign(ty, f"insertelement {ty} poison, {flag}, i64 0", "flag")
    return b.assign(ty, f"shufflevector {one}, {ty} poison, <{lanes} x i32> zeroinitializer", "flags")


def _splat64(b: FunctionBuilder, lanes: int, value: int) -> Value:
    return Value(f"<{lanes} x i64>", "<" + ", ".join(f"i64 {value}" for _ in range(lanes)) + ">")


def _zero(lanes: int) -> Value:
    return Value(f"<{lanes} x i32>", "zeroinitializer")
