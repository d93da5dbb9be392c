"""Halide's operator semantics as total LLVM instruction sequences.

Every sequence here is defined for all inputs, with no poison and no undefined behaviour:
integer division and modulo are Euclidean with x / 0 == x % 0 == 0 (and MIN / -1 wraps),
float -> int casts saturate, shifts never reach an LLVM shift by >= the bit width.
Constant operands take cheaper paths (shifts and masks for powers of two). Everything
works unchanged on vectors: constants are splatted to the operand type.
"""

from __future__ import annotations

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, const, llvm_type, scalar_type
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.types import Type


def intrinsic_suffix(t: Type) -> str:
    """The overload suffix of an LLVM intrinsic for t: i32, f32, v16f32, ..."""
    s = scalar_type(t).replace("float", "f32").replace("double", "f64")
    return s if t.lanes == 1 else f"v{t.lanes}{s}"


class Semantics:
    """Emits operations into builder b, declaring the intrinsics they need in module."""

    def __init__(self, b: FunctionBuilder, module: ModuleBuilder) -> None:
        self.b = b
        self.module = module

    def cast(self, v: Value, src: Type, dst: Type) -> Value:
        b = self.b
        if src.lanes != dst.lanes:
            raise CompileError(f"cast from {src} to {dst} changes the number of lanes")
        ty = llvm_type(dst)
        if src.element_of() == dst.element_of():
            return v
        if dst.is_bool():  # one unsigned bit: keep the lowest bit (2 -> false), as Halide does
            if src.is_float():
                wide = Type("int", 32, src.lanes)
                v, src = self.float_to_int(v, src, wide), wide
            return b.icmp("ne", b.binop("and", v, const(src, 1), "lowbit"), const(src, 0), "tobool")
        if src.is_bool():
            return b.convert("uitofp" if dst.is_float() else "zext", v, ty)
        if src.is_float() and dst.is_float():
            if src.bits == dst.bits:
                return v
            return b.convert("fpext" if dst.bits > src.bits else "fptrunc", v, ty)
        if dst.is_float():
            return b.convert("sitofp" if src.is_int() else "uitofp", v, ty)
        if src.is_float():
            return self.float_to_int(v, src, dst)
        if dst.bits == src.bits:
            return v
        if dst.bits < src.bits:
            return b.convert("trunc", v, ty)
        return b.convert("sext" if src.is_int() else "zext", v, ty)

    def float_to_int(self, v: Value, src: Type, dst: Type) -> Value:
        """Truncation toward zero, as Halide's cast. Out of range and NaN are undefined in
        Halide; here they give what x86 and NumPy give (the integer-indefinite value of a
        32- or 64-bit conversion, then wrapped to narrower types), never LLVM poison: the
        conversion is frozen. One instruction (cvttps2dq) instead of a clamp sequence,
        which cost the bilateral grid's histogram 12%."""
        b = self.b
        wide_bits = 64 if dst.bits > 32 or (dst.is_uint() and dst.bits == 32) else 32
        wide = Type("int", wide_bits, dst.lanes)
        converted = b.convert("fptosi", v, llvm_type(wide), "toint")
        frozen = b.assign(converted.ty, f"freeze {converted}", "frozen")
        if wide_bits == dst.bits:
            return frozen
        return b.convert("trunc", frozen, llvm_type(dst), "narrow")

    def int_div(self, a: Value, d: Value, t: Type, known: int | None) -> Value:
        """Euclidean division (floor for positive divisors, ceiling for negative), x/0 == 0."""
        b = self.b
        zero, one = const(t, 0), const(t, 1)
        if known is not None:
            if known == 0:
                return zero
            if t.is_uint() or t.is_bool():
                known &= (1 << t.bits) - 1
                if known & (known - 1) == 0:
                    return b.binop("lshr", a, const(t, known.bit_length() - 1), "div")
                return b.binop("udiv", a, d, "div")
            if known == -1:
                return b.binop("sub", zero, a, "div")
            if known > 0 and known & (known - 1) == 0:
                return b.binop("ashr", a, const(t, known.bit_length() - 1), "div")
            q = b.binop("sdiv", a, d, "q")
            r = b.binop("srem", a, d, "r")
            adjust = b.convert("sext" if known > 0 else "zext", b.icmp("slt", r, zero), llvm_type(t))
            return b.binop("add", q, adjust, "div")
        d_zero = b.icmp("eq", d, zero, "d_zero")
        if t.is_uint() or t.is_bool():
            safe = b.select(d_zero, one, d, "d_safe")
            return b.select(d_zero, zero, b.binop("udiv", a, safe, "q"), "div")
        d_minus_one = b.icmp("eq", d, const(t, -1), "d_m1")
        special = b.binop("or", d_zero, d_minus_one, "special")
        safe = b.select(special, one, d, "d_safe")
        q = b.binop("sdiv", a, safe, "q")
        r = b.binop("srem", a, safe, "r")
        r_negative = b.icmp("slt", r, zero, "r_neg")
        d_negative = b.icmp("slt", safe, zero, "d_neg")
        step = b.select(d_negative, one, const(t, -1), "step")
        q = b.binop("add", q, b.select(r_negative, step, zero), "q_adj")
        q = b.select(d_minus_one, b.binop("sub", zero, a, "neg"), q, "q_m1")
        return b.select(d_zero, zero, q, "div")

    def int_mod(self, a: Value, d: Value, t: Type, known: int | None) -> Value:
        """Euclidean remainder (never negative), x % 0 == 0."""
        b = self.b
        zero, one = const(t, 0), const(t, 1)
        if known is not None:
            if known == 0:
                return zero
            if t.is_uint() or t.is_bool():
                known &= (1 << t.bits) - 1
                if known & (known - 1) == 0:
                    return b.binop("and", a, const(t, known - 1), "mod")
                return b.binop("urem", a, d, "mod")
            if known in (1, -1):
                return zero
            if known > 0 and known & (known - 1) == 0:
                return b.binop("and", a, const(t, known - 1), "mod")
            r = b.binop("srem", a, d, "r")
            magnitude = const(t, abs(known))
            return b.select(b.icmp("slt", r, zero), b.binop("add", r, magnitude), r, "mod")
        d_zero = b.icmp("eq", d, zero, "d_zero")
        if t.is_uint() or t.is_bool():
            safe = b.select(d_zero, one, d, "d_safe")
            return b.select(d_zero, zero, b.binop("urem", a, safe, "r"), "mod")
        special = b.binop("or", d_zero, b.icmp("eq", d, const(t, -1)), "special")
        safe = b.select(special, one, d, "d_safe")
        r = b.binop("srem", a, safe, "r")
        magnitude = b.select(b.icmp("slt", safe, zero), b.binop("sub", zero, safe), safe, "abs_d")
        r = b.select(b.icmp("slt", r, zero), b.binop("add", r, magnitude), r, "r_adj")
        return b.select(special, zero, r, "mod")

    def float_mod(self, a: Value, d: Value, t: Type) -> Value:
        """a - d * floor(a / d), as the reference evaluator computes it."""
        b = self.b
        q = b.binop("fdiv", a, d, "q")
        return b.binop("fsub", a, b.binop("fmul", d, self.math_call("llvm.floor", t, [q])), "fmod")

    def min_max(self, a: Value, c: Value, t: Type, is_min: bool) -> Value:
        if t.is_float():
            # Halide's definition, a single minps/maxps on x86: NaN in a gives c.
            cmp = self.b.fcmp("olt" if is_min else "ogt", a, c)
            return self.b.select(cmp, a, c, "min" if is_min else "max")
        kind = ("s" if t.is_int() else "u") + ("min" if is_min else "max")
        fn = self.module.intrinsic(f"llvm.{kind}.{intrinsic_suffix(t)}", a.ty, [a.ty, a.ty])
        return self.b.call(a.ty, fn, [a, c], kind)

    def math_call(self, intrinsic: str, t: Type, args: list[Value]) -> Value:
        ty = llvm_type(t)
        fn = self.module.intrinsic(f"{intrinsic}.{intrinsic_suffix(t)}", ty, [ty] * len(args))
        return self.b.call(ty, fn, args, intrinsic.split(".")[-1])

    def abs(self, x: Value, src: Type) -> Value:
        """|x|; for signed integers the bits of the unsigned result (abs(-128i8) = 128u8)."""
        if src.is_float():
            return self.math_call("llvm.fabs", src, [x])
        if src.is_uint():
            return x
        ty = llvm_type(src)
        fn = self.module.intrinsic(f"llvm.abs.{intrinsic_suffix(src)}", ty, [ty, "i1"])
        return self.b.call(ty, fn, [x, Value("i1", "false")], "abs")

    def absd(self, a: Value, c: Value, src: Type) -> Value:
        """|a - c| without overflow (unsigned for integers)."""
        b = self.b
        if src.is_float():
            return self.math_call("llvm.fabs", src, [b.binop("fsub", a, c)])
        less = b.icmp("slt" if src.is_int() else "ult", a, c)
        return b.select(less, b.binop("sub", c, a), b.binop("sub", a, c), "absd")

    def shift(self, a: Value, amount: Value | None, t: Type, at: Type, left_first: bool, known: int | None) -> Value:
        """Shifts with Halide's meaning: a negative signed amount shifts the other way, and
        amounts >= the width give 0 (left, unsigned right) or the sign (signed right).
        at is the amount's type; known its value when constant (amount may then be None)."""
        b = self.b
        bits = t.bits
        if known is not None:
            if at.is_uint():
                known &= (1 << at.bits) - 1
            go_left = left_first == (known >= 0)
            magnitude = abs(known)
            if magnitude == 0:
                return a
            if go_left:
                return const(t, 0) if magnitude >= bits else b.binop("shl", a, const(t, magnitude), "shl")
            if t.is_int():
                return b.binop("ashr", a, const(t, min(magnitude, bits - 1)), "ashr")
            return const(t, 0) if magnitude >= bits else b.binop("lshr", a, const(t, magnitude), "lshr")
        assert amount is not None
        negative = None
        if at.is_int():
            negative = b.icmp("slt", amount, const(at, 0), "amount_neg")
            amount = b.select(negative, b.binop("sub", const(at, 0), amount), amount, "magnitude")
        # Bring the magnitude (unsigned) to a's width, remembering whether it reached the width.
        if at.bits > bits:
            too_big = b.icmp("uge", amount, const(at, bits), "too_big")
            amount = b.convert("trunc", amount, llvm_type(t))
        else:
            if at.bits < bits:
                amount = b.convert("zext", amount, llvm_type(t))
            too_big = b.icmp("uge", amount, const(t, bits), "too_big")
        safe = b.select(too_big, const(t, bits - 1), amount, "safe_amount")
        shifted_left = b.select(too_big, const(t, 0), b.binop("shl", a, safe), "shl")
        if t.is_int():
            shifted_right = b.binop("ashr", a, safe, "ashr")
        else:
            shifted_right = b.select(too_big, const(t, 0), b.binop("lshr", a, safe), "lshr")
        first, second = (shifted_left, shifted_right) if left_first else (shifted_right, shifted_left)
        if negative is None:
            return first
        return b.select(negative, second, first, "shift")
