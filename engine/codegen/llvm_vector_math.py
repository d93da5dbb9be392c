"""exp, log, pow, sin, cos and atan2 of float32 vectors as vector code.

LLVM expands `llvm.exp.v16f32` and its kin into one libm call per lane. Here each is
computed for all lanes at once in float64 arithmetic (range reduction, then a polynomial)
and rounded to float32 once at the end: the float64 result is within about 1e-11 relative
of the exact value, so the float32 result is the correctly rounded one or its neighbour
(at most 1 ulp from libm's), with libm's special values (0, negative numbers, infinities,
NaN) reproduced by selects. Range reduction of sin and cos is exact only for
|x| <= 2^19 * pi/2; a vector with a larger (or non-finite) lane takes a branch to the
per-lane libm calls, so results stay libm's for every input.
"""

from __future__ import annotations

import math

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, const, llvm_type
from pixelweave.engine.ir.types import Type

VECTOR_MATH = ("exp", "log", "pow", "sin", "cos", "atan2")
TRIG_LIMIT = float(2**19) * (math.pi / 2)  # the largest |x| the three-part reduction keeps exact
_PIO2 = (1.5707963267341256, 6.077100506506192e-11, 2.0222662487959506e-21)  # 33-bit parts of pi/2
_LN2 = math.log(2.0)


def uses_vector_math(name: str, t: Type) -> bool:
    """Whether `name` on values of type t is computed here rather than per lane by libm."""
    return name in VECTOR_MATH and t.is_float() and t.bits == 32 and t.lanes > 1


class VectorMath:
    """Emits the functions into builder b (declaring what they need in module)."""

    def __init__(self, b: FunctionBuilder, module: ModuleBuilder, t: Type) -> None:
        self.b, self.module, self.t = b, module, t
        self.lanes = t.lanes
        self.d = Type("float", 64, t.lanes)
        self.i64 = Type("int", 64, t.lanes)
        self.dty, self.fty, self.ity = llvm_type(self.d), llvm_type(t), llvm_type(self.i64)

    # ------------------------------------------------------------------ helpers
    def c(self, value: float) -> Value:
        return const(self.d, value)

    def op(self, name: str, a: Value, b: Value) -> Value:
        return self.b.binop(name, a, b)

    def add(self, a: Value, b: Value) -> Value:
        return self.op("fadd", a, b)

    def sub(self, a: Value, b: Value) -> Value:
        return self.op("fsub", a, b)

    def mul(self, a: Value, b: Value) -> Value:
        return self.op("fmul", a, b)

    def div(self, a: Value, b: Value) -> Value:
        return self.op("fdiv", a, b)

    def unary(self, intrinsic: str, x: Value) -> Value:
        fn = self.module.intrinsic(f"{intrinsic}.v{self.lanes}f64", self.dty, [self.dty])
        return self.b.call(self.dty, fn, [x], intrinsic.split(".")[-1])

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        return self.b.fcmp(pred, a, b)

    def sel(self, cond: Value, a: Value, b: Value) -> Value:
        return self.b.select(cond, a, b)

    def widen(self, x: Value) -> Value:
        return self.b.convert("fpext", x, self.dty, "wide")

    def narrow(self, x: Value) -> Value:
        return self.b.convert("fptrunc", x, self.fty, "narrow")

    def poly(self, x: Value, coefficients: list[float]) -> Value:
        """c0 + c1 x + c2 x^2 + ... by Horner's rule."""
        acc = self.c(coefficients[-1])
        for k in reversed(coefficients[:-1]):
            acc = self.add(self.mul(acc, x), self.c(k))
        return acc

    def is_nan(self, x: Value) -> Value:
        return self.cmp("uno", x, x)

    # ------------------------------------------------------------------ float64 kernels
    def exp_wide(self, x: Value) -> Value:
        """e^x for float64 lanes known to be finite or infinite (not NaN)."""
        x = self.sel(self.cmp("olt", x, self.c(-800.0)), self.c(-800.0), x)
        x = self.sel(self.cmp("ogt", x, self.c(800.0)), self.c(800.0), x)
        k = self.unary("llvm.roundeven", self.mul(x, self.c(1.0 / _LN2)))
        r = self.sub(self.sub(x, self.mul(k, self.c(0.6931471803691238))), self.mul(k, self.c(1.9082149292705877e-10)))
        p = self.poly(r, [1.0 / math.factorial(n) for n in range(10)])  # |r| <= 0.35: error < 1e-11
        # 2^k by two factors (k in [-1155, 1155] overflows one exponent field)
        half = self.unary("llvm.trunc", self.mul(k, self.c(0.5)))
        return self.mul(self.mul(p, self.pow2(half)), self.pow2(self.sub(k, half)))

    def pow2(self, k: Value) -> Value:
        """2^k for integral float64 lanes in [-1022, 1023], from the exponent bits."""
        ki = self.b.convert("fptosi", k, self.ity, "k")
        bits = self.op("shl", self.op("add", ki, const(self.i64, 1023)), const(self.i64, 52))
        return self.b.convert("bitcast", bits, self.dty, "pow2")

    def log_wide(self, x: Value) -> Value:
        """log(x) for finite positive float64 lanes (other lanes give garbage)."""
        bits = self.b.convert("bitcast", x, self.ity, "bits")
        exponent = self.op("sub", self.op("lshr", bits, const(self.i64, 52)), const(self.i64, 1023))
        mantissa_bits = self.op("or", self.op("and", bits, const(self.i64, (1 << 52) - 1)), const(self.i64, 1023 << 52))
        m = self.b.convert("bitcast", mantissa_bits, self.dty, "m")  # in [1, 2)
        e = self.b.convert("sitofp", exponent, self.dty, "e")
        big = self.cmp("ogt", m, self.c(math.sqrt(2.0)))
        m = self.sel(big, self.mul(m, self.c(0.5)), m)
        e = self.sel(big, self.add(e, self.c(1.0)), e)
        f = self.sub(m, self.c(1.0))
        s = self.div(f, self.add(f, self.c(2.0)))  # log(m) = 2 atanh(s), |s| <= 0.172
        s2 = self.mul(s, s)
        series = self.poly(s2, [2.0 / (2 * n + 1) for n in range(7)])  # error < 1e-12
        return self.add(self.mul(e, self.c(_LN2)), self.mul(s, series))

    # ------------------------------------------------------------------ the functions
    def exp(self, x: Value) -> Value:
        w = self.widen(x)
        return self.sel(self.is_nan(x), x, self.narrow(self.exp_wide(w)))

    def log(self, x: Value) -> Value:
        w = self.widen(x)
        r = self.log_wide(w)
        r = self.sel(self.cmp("oeq", w, self.c(math.inf)), self.c(math.inf), r)
        r = self.sel(self.cmp("oeq", w, self.c(0.0)), self.c(-math.inf), r)
        r = self.sel(self.cmp("olt", w, self.c(0.0)), self.c(math.nan), r)
        return self.sel(self.is_nan(x), x, self.narrow(r))

    def pow(self, x: Value, y: Value) -> Value:
        """C99's powf: the special cases of zeros, ones, infinities, negative bases and NaN."""
        wx, wy = self.widen(x), self.widen(y)
        ax = self.unary("llvm.fabs", wx)
        log_ax = self.log_wide(ax)
        log_ax = self.sel(self.cmp("oeq", ax, self.c(math.inf)), self.c(math.inf), log_ax)
        log_ax = self.sel(self.cmp("oeq", ax, self.c(0.0)), self.c(-math.inf), log_ax)
        t = self.mul(wy, log_ax)
        t = self.sel(self.is_nan(t), self.c(0.0), t)  # 0 * inf: |x| == 1 or y == 0, decided below
        magnitude = self.exp_wide(t)
        # y's parity decides the sign for a negative base; a non-integer y gives NaN there
        integral = self.cmp("oeq", self.unary("llvm.floor", wy), wy)
        half = self.mul(wy, self.c(0.5))
        odd = self.b.binop("and", integral, self.cmp("une", self.unary("llvm.floor", half), half))
        negative = self.b.binop("and", self.cmp("olt", wx, self.c(0.0)), self.cmp("one", ax, self.c(math.inf)))
        xbits = self.b.convert("bitcast", wx, self.ity, "xbits")
        x_negative = self.b.icmp("slt", xbits, const(self.i64, 0))  # includes -0.0
        flip = self.b.binop("and", x_negative, odd)
        r = self.sel(flip, self.sub(self.c(0.0), magnitude), magnitude)
        finite_y = self.cmp("one", self.unary("llvm.fabs", wy), self.c(math.inf))
        not_integral = self.b.binop("and", finite_y, self.b.binop("xor", integral, self._true()))
        r = self.sel(self.b.binop("and", negative, not_integral), self.c(math.nan), r)
        r = self.sel(self.is_nan(wx), wx, r)
        r = self.sel(self.is_nan(wy), wy, r)
        # |x| == 1 with y infinite, x == 1 with any y, and y == 0 with any x give 1
        unit = self.b.binop(
            "or",
            self.cmp("oeq", wx, self.c(1.0)),
            self.b.binop(
                "and", self.cmp("oeq", ax, self.c(1.0)), self.cmp("oeq", self.unary("llvm.fabs", wy), self.c(math.inf))
            ),
        )
        r = self.sel(self.b.binop("or", unit, self.cmp("oeq", wy, self.c(0.0))), self.c(1.0), r)
        return self.narrow(r)

    def _true(self) -> Value:
        return const(Type("uint", 1, self.lanes), 1)

    def sin_cos(self, x: Value, want_sin: bool) -> Value:
        """sin or cos: a vector with every lane in [-TRIG_LIMIT, TRIG_LIMIT] is reduced by
        pi/2 in three exact parts and evaluated by polynomials; any other vector (a huge,
        infinite or NaN lane) is computed lane by lane by libm."""
        b = self.b
        w = self.widen(x)
        small = self.cmp("ole", self.unary("llvm.fabs", w), self.c(TRIG_LIMIT))
        all_small = self._reduce_and(small)
        fast, slow, done = b.new_label("trig_fast"), b.new_label("trig_libm"), b.new_label("trig_done")
        b.cond_br(all_small, fast, slow, likely=True)
        b.start_block(fast)
        k = self.unary("llvm.roundeven", self.mul(w, self.c(2.0 / math.pi)))
        r = w
        for part in _PIO2:
            r = self.sub(r, self.mul(k, self.c(part)))
        r2 = self.mul(r, r)
        # |r| <= pi/4: both series to r^14 are accurate to 1e-13
        sin_r = self.mul(r, self.poly(r2, [(-1.0) ** n / math.factorial(2 * n + 1) for n in range(7)]))
        cos_r = self.poly(r2, [(-1.0) ** n / math.factorial(2 * n) for n in range(8)])
        quadrant = self.op("and", b.convert("fptosi", k, self.ity, "q"), const(self.i64, 3))
        if not want_sin:
            quadrant = self.op("and", self.op("add", quadrant, const(self.i64, 1)), const(self.i64, 3))
        odd = b.icmp("ne", self.op("and", quadrant, const(self.i64, 1)), const(self.i64, 0))
        upper = b.icmp("ne", self.op("and", quadrant, const(self.i64, 2)), const(self.i64, 0))
        value = self.sel(odd, cos_r, sin_r)
        value = self.sel(upper, self.sub(self.c(0.0), value), value)
        if want_sin:  # sin(-0) is -0 (the reduction gives +0)
            value = self.sel(self.cmp("oeq", w, self.c(0.0)), w, value)
        fast_result = self.narrow(value)
        fast_end = b.current_label
        b.br(done)
        b.start_block(slow)
        name = "llvm.sin" if want_sin else "llvm.cos"
        fn = self.module.intrinsic(f"{name}.v{self.lanes}f32", self.fty, [self.fty])
        slow_result = b.call(self.fty, fn, [x], name.split(".")[-1])
        slow_end = b.current_label
        b.br(done)
        b.start_block(done)
        phi = f"phi {self.fty} [ {fast_result.ref}, %{fast_end} ], [ {slow_result.ref}, %{slow_end} ]"
        return b.assign(self.fty, phi, "trig")

    def _reduce_and(self, mask: Value) -> Value:
        fn = self.module.intrinsic(f"llvm.vector.reduce.and.v{self.lanes}i1", "i1", [mask.ty])
        return self.b.call("i1", fn, [mask], "all")

    def atan2(self, y: Value, x: Value) -> Value:
        """C99's atan2f, signed zeros and infinities included."""
        b = self.b
        wy, wx = self.widen(y), self.widen(x)
        ay, ax = self.unary("llvm.fabs", wy), self.unary("llvm.fabs", wx)
        swap = self.cmp("ogt", ay, ax)
        num = self.sel(swap, ax, ay)
        den = self.sel(swap, ay, ax)
        t = self.div(num, den)
        t = self.sel(self.cmp("oeq", den, self.c(0.0)), self.c(0.0), t)  # both zero
        both_inf = b.binop("and", self.cmp("oeq", ay, self.c(math.inf)), self.cmp("oeq", ax, self.c(math.inf)))
        t = self.sel(both_inf, self.c(1.0), t)
        # t in [0, 1]; above tan(pi/8), atan(t) = pi/4 + atan((t - 1) / (t + 1))
        shifted = self.cmp("ogt", t, self.c(math.tan(math.pi / 8)))
        u = self.sel(shifted, self.div(self.sub(t, self.c(1.0)), self.add(t, self.c(1.0))), t)
        u2 = self.mul(u, u)  # |u| <= 0.4143: the series to u^29 is accurate to 1e-12
        a = self.mul(u, self.poly(u2, [(-1.0) ** n / (2 * n + 1) for n in range(15)]))
        a = self.sel(shifted, self.add(a, self.c(math.pi / 4)), a)
        a = self.sel(swap, self.sub(self.c(math.pi / 2), a), a)
        x_negative = b.icmp("slt", b.convert("bitcast", wx, self.ity, "xbits"), const(self.i64, 0))
        a = self.sel(x_negative, self.sub(self.c(math.pi), a), a)
        fn = self.module.intrinsic(f"llvm.copysign.v{self.lanes}f64", self.dty, [self.dty, self.dty])
        a = b.call(self.dty, fn, [a, wy], "atan2")
        a = self.sel(self.b.binop("or", self.is_nan(wx), self.is_nan(wy)), self.add(wx, wy), a)
        return self.narrow(a)
