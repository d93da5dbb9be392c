"""A corpus of pipelines and expressions, each evaluated by the reference evaluator and by Halide.

Every case is one `build(m)` description (m is `engine` or `halide`) compared bit for bit
(integers) or to a tight tolerance (floats) through `compare_with_halide`. The cases cover
Halide's integer semantics (wrap-around, Euclidean division, shifts, casts, saturation),
type coercion, float math, boundary conditions, resampling, reductions and multi-stage,
multi-output and parametrized pipelines.

Nothing here relies on behaviour that Halide leaves undefined: no int32 overflow, no
out-of-range float-to-int casts, no shifts by the bit width or more, no float division
by zero, no cast to bool of values other than 0 and 1.

Halide's JIT fuses multiply-adds and its simplifier folds float constants, so float
results can differ from the reference in the last bits: float cases use a tolerance,
avoid heavy cancellation, and never round a float result to an integer unless the value
is exact. The cases of `test_exact_float` are single operations, compared bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.engine.oracle import compare_with_halide

W, H = 64, 48  # sizes are [w, h]; arrays are (h, w)


# ---------------------------------------------------------------------------- inputs


def ints(seed: int, dtype: Any, lo: int | None = None, hi: int | None = None, shape=(H, W)) -> np.ndarray:
    """Deterministic random integers in [lo, hi] (the whole range of dtype by default)."""
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return np.random.default_rng(seed).integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def floats(seed: int, lo: float, hi: float, dtype: Any = np.float32, shape=(H, W)) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype)


U8, U8B = ints(1, np.uint8), ints(2, np.uint8)
U16, U16B = ints(3, np.uint16), ints(4, np.uint16)
I8, I8B = ints(5, np.int8), ints(6, np.int8)
I16, I16B = ints(7, np.int16), ints(8, np.int16)
I8_NO_MIN = ints(9, np.int8, -127, 127)  # INT8_MIN / -1 would overflow
SMALL_I8 = ints(10, np.int8, -5, 5)  # divisors, zero and negatives included
SMALL_I16 = ints(11, np.int16, -20, 20)
SMALL_U8 = ints(12, np.uint8, 0, 9)
SMALL_U16 = ints(13, np.uint16, 0, 300)
SHIFT_U8 = ints(14, np.uint8, 0, 7)
SHIFT_I8 = ints(15, np.int8, -7, 7)
SHIFT_I16 = ints(16, np.int16, -15, 15)
I32 = ints(17, np.int32, -100_000, 100_000)
F32 = floats(20, -300.0, 300.0)
F32B = floats(21, -300.0, 300.0)
F32_SMALL, F32_SMALL_B = floats(29, -4.0, 4.0), floats(31, -4.0, 4.0)  # lerp: no cancellation
F32_POS = floats(22, 0.01, 10.0)
F32_POS_B = floats(23, 0.1, 3.0)
F32_UNIT = floats(24, 0.0, 1.0)
F32_ANGLE = floats(25, -1.2, 1.2)
F32_BYTE = floats(26, 0.0, 255.99)
F32_NONZERO = np.where(F32B >= 0, F32B + 0.5, F32B - 0.5).astype(np.float32)
HALVES = (ints(27, np.int16, -40, 40).astype(np.float32) / 2).astype(np.float32)  # many exact .5
F64 = floats(28, -50.0, 50.0, np.float64)

TYPES = {"u": "UInt", "i": "Int", "f": "Float"}


def mtype(m: Any, dtype: np.dtype) -> Any:
    return getattr(m, TYPES[dtype.kind])(dtype.itemsize * 8)


Case = Any  # a pytest.param(build, sizes, inputs)
NAMES = "abcd"


def point(case_id: str, fn: Callable[..., Any], *arrays: np.ndarray) -> Case:
    """A one-stage pipeline f[x, y] = fn(m, a[x, y], b[x, y], ...) over images a, b, ..."""
    arrays = tuple(np.ascontiguousarray(a) for a in arrays)

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        images = [m.ImageParam(mtype(m, a.dtype), 2, n) for n, a in zip(NAMES, arrays, strict=False)]
        f = m.Func("f")
        f[x, y] = fn(m, *[im[x, y] for im in images])
        return f, dict(zip(NAMES, images, strict=False))

    shape = arrays[0].shape
    return pytest.param(build, [shape[1], shape[0]], dict(zip(NAMES, arrays, strict=False)), id=case_id)


# ---------------------------------------------------------------------------- integer semantics

INTEGER_CASES = [
    point("u8_wrap_add", lambda m, a, b: a + b, U8, U8B),
    point("u8_wrap_sub", lambda m, a, b: a - b, U8, U8B),
    point("u8_wrap_mul", lambda m, a, b: a * b, U8, U8B),
    point("u8_wrap_literals", lambda m, a: a * 3 + 200 - (a << 1), U8),
    point("u8_negate", lambda m, a: -a, U8),
    point("u16_wrap_add_sub_mul", lambda m, a, b: a * b + a - (b - a), U16, U16B),
    point("i8_wrap_add", lambda m, a, b: a + b, I8, I8B),
    point("i8_wrap_mul_neg", lambda m, a, b: a * b - (-a), I8, I8B),
    point("i16_wrap_mul", lambda m, a, b: a * b + a * 7, I16, I16B),
    point("i16_div_const_pos", lambda m, a: a / 7, I16),
    point("i16_div_const_neg", lambda m, a: a / -7, I16),
    point("i16_mod_const_pos", lambda m, a: a % 7, I16),
    point("i16_mod_const_neg", lambda m, a: a % -7, I16),
    point("i16_div_pow2_neg", lambda m, a: a / 4 + a / -8, I16),
    point("i32_div_expr_neg_and_zero", lambda m, a, b: m.i32(a) * 3 / m.i32(b), I16, SMALL_I16),
    point("i32_mod_expr_neg_and_zero", lambda m, a, b: m.i32(a) * 3 % m.i32(b), I16, SMALL_I16),
    point("i16_div_mod_expr", lambda m, a, b: a / b * 100 + a % b, I16, SMALL_I16),
    point("i8_div_expr", lambda m, a, b: a / b, I8_NO_MIN, SMALL_I8),
    point("i8_mod_expr", lambda m, a, b: a % b, I8, SMALL_I8),
    point("u8_div_mod_expr", lambda m, a, b: (a / b) ^ (a % b), U8, SMALL_U8),
    point("u8_div_u8_full", lambda m, a, b: a / b, U8, U8B),
    point("u16_div_mod_expr", lambda m, a, b: a / b + a % b, U16, SMALL_U16),
    point("u8_div_by_zero_literal", lambda m, a: a / 0 + a % 0, U8),
    point("floordiv_int_and_float", lambda m, a, b: m.f32(a // 3) + b // 7.0, I16, F32),
    point("u8_shift_const", lambda m, a: (a << 3) | (a >> 5), U8),
    point("i16_shift_const", lambda m, a: (a << 5) + (a >> 3), I16),
    point("i8_shr_const_arith", lambda m, a: a >> 2, I8),
    point("u8_shift_expr", lambda m, a, s: (a << s) ^ (a >> s), U8, SHIFT_U8),
    point("u8_shift_signed_amount", lambda m, a, s: (a << s) + (a >> s), U8, SHIFT_I8),
    point("i16_shift_signed_amount", lambda m, a, s: (a << s) ^ (a >> s), I16, SHIFT_I16),
    point("i8_shift_negative_literal", lambda m, a: (a << -2) + (a >> -1), I8),
    point("u8_shift_by_i32_widens", lambda m, a, s: (a << m.i32(s)) + 1, U8, SHIFT_U8),
    point("u8_bitwise", lambda m, a, b: (a & b) ^ (~a | 0x0F), U8, U8B),
    point("i16_bitwise_negatives", lambda m, a, b: (a & b) ^ ~b | (a & -256), I16, I16B),
    point("u16_bitwise_xor_not", lambda m, a, b: ~(a ^ b) & 0x7FF0, U16, U16B),
    point("f32_to_i16_truncates", lambda m, f: m.cast(m.Int(16), f), F32),
    point("f32_to_i32_negative", lambda m, f: m.i32(f * 10.0), F32),
    point("f32_to_u8_in_range", lambda m, f: m.u8(f), F32_BYTE),
    point("f64_to_i16", lambda m, f: m.i16(f * 100.0), F64),
    point("narrow_i16_to_u8_i8", lambda m, a: m.i16(m.u8(a)) + m.i16(m.i8(a)), I16),
    point("narrow_u16_to_i8", lambda m, a: m.i8(a), U16),
    point("narrow_i32_to_u16", lambda m, a, b: m.u16(m.i32(a) * m.i32(b)), I16, I16B),
    point("u8_to_i8_wrap", lambda m, a: m.i8(a), U8),
    point("bool_to_int_cast", lambda m, a, b: m.u8(a > b) * 10 + m.cast(m.Int(16), a == b), U8, U8B),
    point("saturating_f32_to_u8", lambda m, f: m.saturating_cast(m.UInt(8), f), F32),
    point("saturating_i32_to_u8", lambda m, a: m.saturating_cast(m.UInt(8), m.i32(a) * 4), I16),
    point("saturating_i32_to_i8", lambda m, a: m.saturating_cast(m.Int(8), m.i32(a)), I16),
    point("saturating_u16_to_i8", lambda m, a: m.saturating_cast(m.Int(8), a), U16),
    point("saturating_i8_to_u8", lambda m, a: m.saturating_cast(m.UInt(8), a), I8),
    point("saturating_f32_to_i16", lambda m, f: m.saturating_cast(m.Int(16), f * 200.0), F32),
    point("abs_i8_min", lambda m, a: m.abs(a), I8),
    point("abs_i16", lambda m, a: m.abs(a), I16),
    point("absd_i16", lambda m, a, b: m.absd(a, b), I16, I16B),
    point("absd_u8", lambda m, a, b: m.absd(a, b), U8, U8B),
    point("abs_absd_f32", lambda m, a, b: m.abs(a) + m.absd(a, b), F32, F32B),
    point("lerp_u8_u8_weight", lambda m, a, b, w: m.lerp(a, b, w), U8, U8B, U8[::-1]),
    point("lerp_u16_u16_weight", lambda m, a, b, w: m.lerp(a, b, w), U16, U16B, U16[::-1]),
    point("lerp_u16_u8_weight", lambda m, a, b, w: m.lerp(a, b, w), U16, U16B, U8),
    point("lerp_u8_u16_weight", lambda m, a, b, w: m.lerp(a, b, w), U8, U8B, U16),
    point("lerp_i8_u8_weight", lambda m, a, b, w: m.lerp(a, b, w), I8, I8B, U8),
    point("lerp_u8_f32_weight", lambda m, a, b, w: m.lerp(a, b, w), U8, U8B, F32_UNIT),
    point("lerp_u16_f32_weight", lambda m, a, b, w: m.lerp(a, b, w), U16, U16B, F32_UNIT),
    point("lerp_f32", lambda m, a, b, w: m.lerp(a, b, w), F32_SMALL, F32_SMALL_B, F32_UNIT),
    point("min_u8_literal_is_int32", lambda m, a: m.min(a, 1) - 2, U8),
    point("max_mixed_u8_i16", lambda m, a, b: m.max(a, b), U8, I16),
    point("max_i8_u8", lambda m, a, b: m.max(a, b), I8, U8),
    point("min_u8_float_literal", lambda m, a: m.min(a, 100.5), U8),
    point("clamp_u8_and_f32", lambda m, a, f: m.f32(m.clamp(a, 10, 200)) + m.clamp(f, -1.5, 2.5), U8, F32),
    point("select_literal_else_zero", lambda m, a: m.select(a > 128, a, 0), U8),
    point("select_both_literals", lambda m, a, b: m.select(a > b, 1, -1), U8, U8B),
    point("select_float_literal", lambda m, a: m.select(a < 0, -1.5, a * 0.5), I16),
    point(
        "select_chain",
        lambda m, a: m.select(a < 50, m.u8(0), a < 100, a / 2, a < 200, a, m.u8(255)),
        U8,
    ),
    point("promote_u8_plus_i16", lambda m, a, b: a + b, U8, I16),
    point("promote_i8_plus_u8", lambda m, a, b: a + b, I8, U8),
    point("promote_u8_minus_u16", lambda m, a, b: a - b, U8, U16),
    point("promote_u8_times_f32", lambda m, a, f: a * f, U8, F32),
    point("promote_u16_times_float_literal", lambda m, a: a * 0.5 + 1, U16),
    point("promote_u8_plus_f64", lambda m, a, d: a + d * 0.25, U8, F64),
    point("promote_f32_plus_f64", lambda m, f, d: f + d, F32, F64),
    point("promote_u8_plus_i32", lambda m, a, b: a + b, U8, I32),
    point("promote_u16_plus_i8", lambda m, a, b: a + b, U16, I8),
    point("compare_u8_with_i8_wraps", lambda m, a, b: m.u8(a < b) + m.u8(a == b) * 2, U8, I8),
    point("u32_wrap_mul_div", lambda m, a, b: m.u32(a) * m.u32(b) * 65599 / (m.u32(b) % 1000 + 1), U16, U16B),
    point("u32_shift_xor", lambda m, a, b: (m.u32(a) << 16) ^ (m.u32(b) >> 3) ^ ~m.u32(a), U16, U16B),
    point("u8_div_mod_literal", lambda m, a: a / 3 + a % 3 * 100, U8),
    point("f32_to_i8_u16_in_range", lambda m, f: m.i32(m.i8(f * 0.375)) + m.i32(m.u16(m.abs(f) * 200.0)), F32),
    # Only 0 and 1 go to bool: Halide 21 converts like an integer cast to uint1, so that
    # cast(Bool, 2) and cast(Bool, 0.5) are false.
    point("float_to_bool_cast", lambda m, f: m.u8(m.cast(m.Bool(), m.floor(f * 2.0))) * 3, F32_UNIT),
    point("int_to_bool_cast", lambda m, a: m.u8(m.cast(m.Bool(), a % 2)) + m.u8(m.cast(m.Bool(), a & 1)), U16),
    point("floor_to_int", lambda m, f: m.i32(m.floor(f)) + m.i32(m.ceil(f)) * 1000, HALVES),
    point("saturating_f64_to_i32", lambda m, d: m.saturating_cast(m.Int(32), d * 1.0e8), F64),
    point("saturating_f32_to_u16", lambda m, f: m.saturating_cast(m.UInt(16), f * 300.0), F32),
    point("saturating_u8_to_i8", lambda m, a: m.saturating_cast(m.Int(8), a), U8),
    point("saturating_i16_to_u16", lambda m, a: m.saturating_cast(m.UInt(16), a), I16),
    point("saturating_u32_to_i32", lambda m, a: m.saturating_cast(m.Int(32), m.u32(a) * 70000), U16),
    point("abs_i32", lambda m, a: m.abs(m.i32(a) * 3), I32),
    point("absd_u16_i8", lambda m, a, b: m.absd(a, b) + m.u16(m.absd(b, m.i8(3))), U16B, I8),
    point("lerp_i16_f32_weight", lambda m, a, b, w: m.lerp(a, b, w), I16, I16B, F32_UNIT),
    point(
        "lerp_u32_u32_weight",
        lambda m, a, b, w: m.lerp(m.u32(a) * 65537, m.u32(b) * 3, m.u32(w) * 65537),
        U16,
        U16B,
        U16,
    ),
    point("lerp_u32_f32_weight", lambda m, a, b, w: m.lerp(m.u32(a) * 65537, m.u32(b) * 3, w), U16, U16B, F32_UNIT),
    point("lerp_f32_u8_weight", lambda m, a, b, w: m.lerp(a, b, w), F32_SMALL, F32_SMALL_B, U8),
    point("lerp_bool", lambda m, a, b, w: m.u8(m.lerp(a > 100, a < b, w)), U8, U8B, U8[::-1]),
    point("lerp_bool_float_weight_half", lambda m, a, b: m.u8(m.lerp(a > b, a <= b, 0.5)), U8, U8B),
]

# ---------------------------------------------------------------------------- float math

FLOAT_CASES = [
    point("sqrt", lambda m, f: m.sqrt(f), F32_POS),
    point("exp", lambda m, f: m.exp(f), F32_POS),
    point("log", lambda m, f: m.log(f), F32_POS),
    point("pow", lambda m, f, g: m.pow(f, g), F32_POS, F32_POS_B),
    point("pow_int_exponent_keeps_type", lambda m, a: a**2 + m.pow(a, 3), U8),
    point("pow_operator_float", lambda m, a: a**0.5, U8),
    point("sin_cos", lambda m, f: m.sin(f) * m.cos(f * 2.0), F32_ANGLE),
    point("tan", lambda m, f: m.tan(f), F32_ANGLE),
    point("atan2", lambda m, f, g: m.atan2(f, g), F32, F32B),
    point("floor_ceil", lambda m, f: m.floor(f) * 1000.0 + m.ceil(f), HALVES),
    point("round_half_to_even", lambda m, f: m.round(f), HALVES),
    point("round_random", lambda m, f: m.round(f) + m.trunc(f * 0.5), F32),
    point("trunc_negative", lambda m, f: m.trunc(f), HALVES),
    point("float_mod", lambda m, f, g: f % g, F32, F32_NONZERO),
    point("float_mod_literal", lambda m, f: f % 7.5 + f % -3.0, F32),
    point("math_of_int_converts_to_f32", lambda m, a: m.sqrt(a) + m.floor(a), U16),
    point("f64_math", lambda m, d: m.exp(d * 0.125) + m.sin(d) * m.sqrt(m.abs(d)), F64),
    point("compare_to_bool_output", lambda m, a, b: a < b, U8, U8B),
    point(
        "compare_logical_ops",
        lambda m, a, b: m.u8(((a < b) & (a != 3)) | ~(b >= 200)) + m.u8((a == b) | (a > 250)) * 2,
        U8,
        U8B,
    ),
    point("compare_mixed_types", lambda m, a, f: m.select((a > f) & (f <= 100.0), f, -f), U8, F32),
    point("compare_u8_float_literal", lambda m, a: m.u8(a > 100.5) + m.u8(a <= 7), U8),
    point("sqrt_log_negative_nan", lambda m, f: m.sqrt(f) + m.log(f), F32),
    point("pow_negative_base_integral_exponent", lambda m, f: m.pow(f, m.floor(m.abs(f) % 4.0)), F32),
    point("f64_exp_log_pow", lambda m, d: m.log(m.abs(d) + 1.0) + m.pow(m.abs(d), 0.5) - m.exp(d * 0.125), F64),
]

# Operations whose float results are exact (no fused multiply-add can change them): bit for bit.
EXACT_FLOAT_CASES = [
    point("exact_f64_times_float_literal_is_float32", lambda m, d: d * 0.1, F64),
    point("exact_f64_helper_keeps_double", lambda m, d: d * m.f64(0.1), F64),
    point("exact_f64_cast_of_float_literal", lambda m, d: d * m.cast(m.Float(64), 0.2), F64),
    point("exact_f64_float_literal_left", lambda m, d: 0.3 - d, F64),
    point("exact_f64_min_max_literal", lambda m, d: m.min(d, 0.1) + m.max(d, 0.7), F64),
    point("exact_f32_ops", lambda m, f, g: m.select(f < g, f * 0.5 + g, m.floor(f) - m.abs(g)), F32, F32B),
    point("exact_u8_to_float", lambda m, a: m.f32(a) / 4.0 + m.f64(a) * 0.25, U8),
]


# ---------------------------------------------------------------------------- boundary conditions

BCS = ["repeat_edge", "constant_exterior", "mirror_image", "mirror_interior", "repeat_image"]
BC_IMAGE = ints(30, np.uint8, shape=(13, 17))


def _apply_bc(m: Any, kind: str, source: Any, bounds: Any = None) -> Any:
    args = (bounds,) if bounds is not None else ()
    if kind == "constant_exterior":
        return m.BoundaryConditions.constant_exterior(source, 7, *args)
    return getattr(m.BoundaryConditions, kind)(source, *args)


def bc_image_case(kind: str) -> Case:
    """Boundary condition over an ImageParam; the output is larger than the input on all sides."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        bc = _apply_bc(m, kind, inp)
        out = m.Func("out")
        out[x, y] = bc[x - 20, y - 15]
        return out, {"input": inp}

    return pytest.param(build, [17 + 45, 13 + 37], {"input": BC_IMAGE}, id=f"bc_image_{kind}")


def bc_func_case(kind: str) -> Case:
    """Boundary condition over a Func given explicit bounds (a sub-rectangle of the image)."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        g = m.Func("g")
        g[x, y] = m.u16(inp[x, y]) * 3 + m.u16(x)
        bc = _apply_bc(m, kind, g, [(2, 11), (3, 7)]) if kind != "constant_exterior" else None
        if bc is None:
            bc = m.BoundaryConditions.constant_exterior(g, m.u16(999), [(2, 11), (3, 7)])
        out = m.Func("out")
        out[x, y] = bc[x - 10, y - 8] + bc[2 * x - 30, y]
        return out, {"input": inp}

    return pytest.param(build, [40, 30], {"input": BC_IMAGE}, id=f"bc_func_{kind}")


def bc_one_dim_case() -> Case:
    """Bounds for one dimension only: the other is unbounded (y stays within the image)."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        bc = m.BoundaryConditions.mirror_image(inp, [(0, 17)])
        out = m.Func("out")
        out[x, y] = bc[x - 30, y] + bc[x * 3, y]
        return out, {"input": inp}

    return pytest.param(build, [60, 13], {"input": BC_IMAGE}, id="bc_image_mirror_one_dim")


def bc_planar_case(kind: str) -> Case:
    """A boundary condition on a planar colour image, bounded in x and y only, float values."""
    image = floats(32, -1.0, 1.0, shape=(3, 9, 11))

    def build(m):
        x, y, c = m.Var("x"), m.Var("y"), m.Var("c")
        inp = m.ImageParam(m.Float(32), 3, "input")
        if kind == "constant_exterior":
            bc = m.BoundaryConditions.constant_exterior(inp, 0.5, [(0, 11), (0, 9)])
        else:
            bc = getattr(m.BoundaryConditions, kind)(inp, [(0, 11), (0, 9)])
        out = m.Func("out")
        out[x, y, c] = bc[x - 6, y - 4, 2 - c] * 2.0
        return out, {"input": inp}

    return pytest.param(build, [24, 20, 3], {"input": image}, id=f"bc_planar_{kind}")


def bc_image_sub_bounds_case() -> Case:
    """Explicit bounds on an ImageParam, narrower than the image (mirror about an inner box)."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        bc = m.BoundaryConditions.mirror_interior(inp, [(3, 8), (2, 6)])
        out = m.Func("out")
        out[x, y] = bc[x - 9, y - 7]
        return out, {"input": inp}

    return pytest.param(build, [40, 30], {"input": BC_IMAGE}, id="bc_image_mirror_interior_sub_bounds")


BOUNDARY_CASES = (
    [bc_image_case(k) for k in BCS]
    + [bc_func_case(k) for k in BCS]
    + [bc_one_dim_case(), bc_image_sub_bounds_case()]
    + [bc_planar_case(k) for k in ("constant_exterior", "mirror_image", "repeat_image")]
)


# ---------------------------------------------------------------------------- resampling


def downsample_case() -> Case:
    """A [1 3 3 1]/8 separable filter with stride 2 in both dimensions."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        e = m.BoundaryConditions.repeat_edge(inp)
        w = m.Func("w")
        w[x, y] = m.u16(e[x, y])
        dx = m.Func("dx")
        dx[x, y] = (w[2 * x - 1, y] + 3 * w[2 * x, y] + 3 * w[2 * x + 1, y] + w[2 * x + 2, y]) / 8
        dy = m.Func("dy")
        dy[x, y] = m.u8((dx[x, 2 * y - 1] + 3 * dx[x, 2 * y] + 3 * dx[x, 2 * y + 1] + dx[x, 2 * y + 2]) / 8)
        return dy, {"input": inp}

    return pytest.param(build, [W // 2, H // 2], {"input": U8}, id="downsample_1331")


def upsample_nearest_case() -> Case:
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.Int(16), 2, "input")
        up = m.Func("up")
        up[x, y] = inp[x / 2, y / 2] + m.i16(x % 2) - m.i16(y % 2)
        return up, {"input": inp}

    return pytest.param(build, [2 * W, 2 * H], {"input": I16}, id="upsample_nearest_div2")


def upsample_linear_case() -> Case:
    """Separable linear upsampling by 2, with taps at x/2 and x/2 + 1 weighted by parity."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8), 2, "input")
        e = m.BoundaryConditions.repeat_edge(inp)
        ux = m.Func("ux")
        ux[x, y] = m.select(x % 2 == 0, 0.75 * e[x / 2, y] + 0.25 * e[x / 2 - 1, y],
                            0.75 * e[x / 2, y] + 0.25 * e[x / 2 + 1, y])  # fmt: skip
        uy = m.Func("uy")
        uy[x, y] = m.select(y % 2 == 0, 0.75 * ux[x, y / 2] + 0.25 * ux[x, y / 2 - 1],
                            0.75 * ux[x, y / 2] + 0.25 * ux[x, y / 2 + 1])  # fmt: skip
        return uy, {"input": inp}

    return pytest.param(build, [2 * W, 2 * H], {"input": U8}, id="upsample_linear_2d")


RESAMPLING_CASES = [downsample_case(), upsample_nearest_case(), upsample_linear_case()]


# ---------------------------------------------------------------------------- reductions


def histogram_build(m):
    x = m.Var("x")
    inp = m.ImageParam(m.UInt(8), 2, "input")
    r = m.RDom([(0, inp.width()), (0, inp.height())])
    hist = m.Func("hist")
    hist[x] = 0
    hist[m.i32(inp[r.x, r.y])] += 1
    # Halide computes an unscheduled Func with updates once per consumer point: compute it once.
    hist.compute_root()
    return hist, {"input": inp}, r


def case_histogram(camera):
    def build(m):
        hist, handles, _ = histogram_build(m)
        return hist, handles

    (out,) = compare_with_halide(build, [256], {"input": camera})
    assert out.sum() == camera.size
    np.testing.assert_array_equal(out, np.bincount(camera.ravel(), minlength=256))


def case_cdf_scan(camera):
    def build(m):
        x = m.Var("x")
        hist, handles, _ = histogram_build(m)
        cdf = m.Func("cdf")
        cdf[x] = hist[x]
        ri = m.RDom([(1, 255)]).x  # Halide's Python binding rejects cdf[rdom] = ... (KeyError)
        cdf[ri] = cdf[ri - 1] + hist[ri]
        return cdf, handles

    (out,) = compare_with_halide(build, [256], {"input": camera})
    np.testing.assert_array_equal(out, np.cumsum(np.bincount(camera.ravel(), minlength=256)))


def case_histogram_equalize(camera):
    """Histogram, CDF and a lookup through it: a whole equalization pipeline."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        hist, handles, _ = histogram_build(m)
        inp = handles["input"]
        cdf = m.Func("cdf")
        cdf[x] = 0
        ri = m.RDom([(0, 256)]).x
        cdf[ri] = m.select(ri == 0, 0, cdf[m.max(ri - 1, 0)]) + hist[ri]
        cdf.compute_root()
        out = m.Func("equalized")
        out[x, y] = m.u8(m.clamp(cdf[m.i32(inp[x, y])] * 255 / (inp.width() * inp.height()), 0, 255))
        return out, handles

    compare_with_halide(build, [512, 512], {"input": camera})


def reduction_case(case_id: str, sizes: list[int], inputs: dict, body: Callable[..., Any]) -> Case:
    def build(m):
        return body(m, m.Var("x"), m.Var("y"))

    return pytest.param(build, sizes, inputs, id=case_id)


def _sum_box(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.repeat_edge(inp)
    r = m.RDom([(-2, 5), (-1, 3)])
    s = m.Func("s")
    s[x, y] = 0
    s[x, y] += m.i32(e[x + r.x, y + r.y])
    return s, {"input": inp}


def _sum_inline(m, x, y):
    inp = m.ImageParam(m.Int(16), 2, "input")
    total = m.Func("total")
    total[x] = m.i32(0)
    r = m.RDom([(0, 10)])
    total[x] = total[x] + m.i32(inp[x, r]) * (r + 1)
    return total, {"input": inp}


def _min_max(m, x, y):
    inp = m.ImageParam(m.Int(16), 2, "input")
    e = m.BoundaryConditions.mirror_interior(inp)
    r = m.RDom([(-1, 3), (-1, 3)])
    lo, hi = m.Func("lo"), m.Func("hi")
    lo[x, y] = m.i16(32767)
    hi[x, y] = m.i16(-32768)
    lo[x, y] = m.min(lo[x, y], e[x + r.x, y + r.y])
    hi[x, y] = m.max(hi[x, y], e[x + r.x, y + r.y])
    out = m.Func("range")
    out[x, y] = m.i32(hi[x, y]) - m.i32(lo[x, y])
    return out, {"input": inp}


def _where(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    r = m.RDom([(0, W), (0, H)])
    r.where((r.x + r.y) % 3 == 0)
    r.where(inp[r.x, r.y] > 100)
    count = m.Func("count")
    count[x] = 0
    count[m.i32(inp[r.x, r.y]) % 8] += m.i32(inp[r.x, r.y])
    return count, {"input": inp}


def _param_bounds(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    lo = m.Param(m.Int(32), "lo", 3)
    n = m.Param(m.Int(32), "n", 5)
    r = m.RDom([(lo, n)])
    s = m.Func("s")
    s[x, y] = m.u16(0)
    s[x, y] += m.u16(inp[x, y + r])
    return s, {"input": inp, "lo": lo, "n": n}


def _column_sums(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    r = m.RDom([(0, H)])
    col = m.Func("col")
    col[x] = m.u32(0)
    col[x] += m.u32(inp[x, r])
    return col, {"input": inp}


def _row_sums(m, x, y):
    inp = m.ImageParam(m.UInt(16), 2, "input")
    r = m.RDom([(0, W)])
    row = m.Func("row")
    row[y] = m.u16(0)
    row[y] += inp[r, y]  # wraps in uint16
    return row, {"input": inp}


def _product(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    r = m.RDom([(0, 6)])
    prod = m.Func("prod")
    prod[x, y] = m.u32(1)
    prod[x, y] *= m.u32(inp[x, r + y]) % 5 + 1
    return prod, {"input": inp}


def _float_product(m, x, y):
    inp = m.ImageParam(m.Float(32), 2, "input")
    r = m.RDom([(0, 4)])
    prod = m.Func("prod")
    prod[x] = 1.0
    prod[x] *= inp[x, r] * 0.0078125 + 1.0
    return prod, {"input": inp}


def _scatter_2d(m, x, y):
    """A 2-D histogram (joint histogram of two images' top bits), an RDom over the image."""
    a = m.ImageParam(m.UInt(8), 2, "a")
    b = m.ImageParam(m.UInt(8), 2, "b")
    r = m.RDom([(0, W), (0, H)])
    joint = m.Func("joint")
    joint[x, y] = m.u16(0)
    joint[m.i32(a[r.x, r.y] >> 5), m.i32(b[r.x, r.y] >> 5)] += m.u16(1)
    return joint, {"a": a, "b": b}


def _running_max(m, x, y):
    """A scan along x that reads its own previous value (not a plain accumulation)."""
    inp = m.ImageParam(m.Int(16), 2, "input")
    f = m.Func("scan")
    f[x, y] = inp[x, y]
    r = m.RDom([(1, W - 1)])
    f[r, y] = m.max(f[r - 1, y] - 100, f[r, y])
    return f, {"input": inp}


def _updates_without_rdom(m, x, y):
    """Several update definitions: pure-var updates, a single point, then a scaled row."""
    inp = m.ImageParam(m.Int(16), 2, "input")
    f = m.Func("f")
    f[x, y] = m.i32(inp[x, y])
    f[x, y] = f[x, y] * 3 - m.i32(x)
    f[3, 2] = 12345
    f[x, 5] = f[x, 5] / 7 + m.i32(inp[3, 2])
    return f, {"input": inp}


def _scan_y(m, x, y):
    """A cumulative sum down each column (an RDom in y, pure x), in wrapping uint16."""
    inp = m.ImageParam(m.UInt(16), 2, "input")
    f = m.Func("f")
    f[x, y] = inp[x, y]
    r = m.RDom([(1, H - 1)])
    f[x, r] = f[x, r - 1] + f[x, r]
    return f, {"input": inp}


def _rdom_over_image(m, x, y):
    """An RDom spanning an ImageParam, with a `where` predicate using a Param."""
    inp = m.ImageParam(m.UInt(8), 2, "input")
    t = m.Param(m.UInt(8), "t", 200)
    r = m.RDom(inp)
    r.where(inp[r.x, r.y] >= t)
    s = m.Func("s")
    s[x] = m.u32(0)
    s[x] += m.u32(r.x) * m.u32(x + 1) + m.u32(r.y)
    return s, {"input": inp, "t": t}


def _sum_float_rows(m, x, y):
    inp = m.ImageParam(m.Float(32), 2, "input")
    r = m.RDom([(0, W)])
    row = m.Func("row")
    row[y] = 0.0
    row[y] += inp[r, y] * inp[r, y]
    out = m.Func("out")
    out[y] = m.sqrt(row[y])
    return out, {"input": inp}


REDUCTION_CASES = [
    reduction_case("updates_without_rdom", [W, H], {"input": I16}, _updates_without_rdom),
    reduction_case("scan_cumulative_y_u16", [W, H], {"input": U16}, _scan_y),
    reduction_case("rdom_over_image_where_param", [4], {"input": U8, "t": 240}, _rdom_over_image),
    reduction_case("row_sum_of_squares_f32", [H], {"input": F32}, _sum_float_rows),
    reduction_case("sum_rdom_box", [W, H], {"input": U8}, _sum_box),
    reduction_case("sum_rdom_weighted", [W], {"input": I16}, _sum_inline),
    reduction_case("min_max_rdom", [W, H], {"input": I16}, _min_max),
    reduction_case("rdom_where", [8], {"input": U8}, _where),
    reduction_case("rdom_param_bounds_default", [W, H - 8], {"input": U8}, _param_bounds),
    reduction_case("rdom_param_bounds_set", [W, H - 12], {"input": U8, "lo": 1, "n": 11}, _param_bounds),
    reduction_case("column_sums", [W], {"input": U8}, _column_sums),
    reduction_case("row_sums_wrap_u16", [H], {"input": U16}, _row_sums),
    reduction_case("product_mul_assign", [W, H - 5], {"input": U8}, _product),
    reduction_case("product_float", [W], {"input": F32}, _float_product),
    reduction_case("histogram_2d", [8, 8], {"a": U8, "b": U8B}, _scatter_2d),
    reduction_case("running_max_scan", [W, H], {"input": I16}, _running_max),
]


# ---------------------------------------------------------------------------- multi-stage


def _box_blur(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.repeat_edge(inp)
    bx, by = m.Func("bx"), m.Func("by")
    bx[x, y] = (m.u16(e[x - 1, y]) + e[x, y] + e[x + 1, y]) / 3
    by[x, y] = m.u8((bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3)
    return by, {"input": inp}


def _unsharp(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    amount = m.Param(m.Float(32), "amount", 1.5)
    e = m.BoundaryConditions.mirror_image(inp)
    f = m.Func("f")
    f[x, y] = m.f32(e[x, y]) / 255.0
    k = [0.0625, 0.25, 0.375, 0.25, 0.0625]
    gx, gy = m.Func("gx"), m.Func("gy")
    gx[x, y] = sum(k[i] * f[x + i - 2, y] for i in range(5))
    gy[x, y] = sum(k[i] * gx[x, y + i - 2] for i in range(5))
    sharp = m.Func("sharp")
    sharp[x, y] = m.clamp(f[x, y] + amount * (f[x, y] - gy[x, y]), 0.0, 1.0)  # float: see module docstring
    return sharp, {"input": inp, "amount": amount}


def _sobel(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.repeat_edge(inp)
    g = m.Func("g")
    g[x, y] = m.i16(e[x, y])
    sx, sy = m.Func("sx"), m.Func("sy")
    sx[x, y] = (g[x + 1, y - 1] + 2 * g[x + 1, y] + g[x + 1, y + 1]) - (
        g[x - 1, y - 1] + 2 * g[x - 1, y] + g[x - 1, y + 1]
    )
    sy[x, y] = (g[x - 1, y + 1] + 2 * g[x, y + 1] + g[x + 1, y + 1]) - (
        g[x - 1, y - 1] + 2 * g[x, y - 1] + g[x + 1, y - 1]
    )
    mag = m.Func("mag")
    sq = m.i32(sx[x, y]) * m.i32(sx[x, y]) + m.i32(sy[x, y]) * m.i32(sy[x, y])
    mag[x, y] = m.saturating_cast(m.UInt(8), m.sqrt(m.f32(sq)) / 4.0)
    return mag, {"input": inp}  # fmt: skip


def _sobel_abs(m, x, y):
    """Integer Sobel magnitude |gx| + |gy| with abs giving unsigned results."""
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.mirror_interior(inp)
    sx, sy = m.Func("sx"), m.Func("sy")
    sx[x, y] = m.i16(e[x + 1, y]) - m.i16(e[x - 1, y])
    sy[x, y] = m.i16(e[x, y + 1]) - m.i16(e[x, y - 1])
    out = m.Func("out")
    out[x, y] = m.u8(m.min(m.abs(sx[x, y]) + m.abs(sy[x, y]), 255))
    return out, {"input": inp}


def _harris(m, x, y):
    c = m.Var("c")
    inp = m.ImageParam(m.UInt(8), 3, "input")
    e = m.BoundaryConditions.repeat_edge(inp)
    rgb = m.Func("rgb")
    rgb[x, y, c] = m.f32(e[x, y, c]) / 255.0
    gray = m.Func("gray")
    gray[x, y] = 0.30078125 * rgb[x, y, 0] + 0.5859375 * rgb[x, y, 1] + 0.11328125 * rgb[x, y, 2]
    ix, iy = m.Func("ix"), m.Func("iy")
    ix[x, y] = (
        (gray[x + 1, y - 1] - gray[x - 1, y - 1])
        + 2.0 * (gray[x + 1, y] - gray[x - 1, y])
        + (gray[x + 1, y + 1] - gray[x - 1, y + 1])
    )
    iy[x, y] = (
        (gray[x - 1, y + 1] - gray[x - 1, y - 1])
        + 2.0 * (gray[x, y + 1] - gray[x, y - 1])
        + (gray[x + 1, y + 1] - gray[x + 1, y - 1])
    )
    ixx, iyy, ixy = m.Func("ixx"), m.Func("iyy"), m.Func("ixy")
    ixx[x, y] = ix[x, y] * ix[x, y]
    iyy[x, y] = iy[x, y] * iy[x, y]
    ixy[x, y] = ix[x, y] * iy[x, y]
    r = m.RDom([(-1, 3), (-1, 3)])
    sxx, syy, sxy = m.Func("sxx"), m.Func("syy"), m.Func("sxy")
    sxx[x, y] = 0.0
    syy[x, y] = 0.0
    sxy[x, y] = 0.0
    sxx[x, y] += ixx[x + r.x, y + r.y]
    syy[x, y] += iyy[x + r.x, y + r.y]
    sxy[x, y] += ixy[x + r.x, y + r.y]
    det = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace = sxx[x, y] + syy[x, y]
    harris = m.Func("harris")
    harris[x, y] = det - 0.046875 * trace * trace
    return harris, {"input": inp}


def _pyramid(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    level = m.Func("level0")
    level[x, y] = m.u16(m.BoundaryConditions.repeat_edge(inp)[x, y])
    for i in range(3):
        dx, dy = m.Func(f"dx{i}"), m.Func(f"dy{i}")
        dx[x, y] = (level[2 * x - 1, y] + 3 * level[2 * x, y] + 3 * level[2 * x + 1, y] + level[2 * x + 2, y] + 4) / 8
        dy[x, y] = (dx[x, 2 * y - 1] + 3 * dx[x, 2 * y] + 3 * dx[x, 2 * y + 1] + dx[x, 2 * y + 2] + 4) / 8
        dx.compute_root()  # Halide would inline the whole chain and take seconds to compile
        dy.compute_root()
        level = dy
    out = m.Func("coarsest")
    out[x, y] = m.u8(level[x, y])
    return out, {"input": inp}


def _lut_gamma(m, x, y):
    i = m.Var("i")
    inp = m.ImageParam(m.UInt(8), 2, "input")
    gamma = m.Param(m.Float(32), "gamma", 2.2)
    lut = m.Func("lut")
    lut[i] = m.u8(m.clamp(m.pow(m.f32(i) / 255.0, 1.0 / gamma) * 255.0 + 0.5, 0.0, 255.0))
    out = m.Func("curved")
    out[x, y] = lut[m.i32(inp[x, y])]
    return out, {"input": inp, "gamma": gamma}


def _lut_u16_index(m, x, y):
    """A lookup table indexed by a computed integer, with a clamp keeping it in range."""
    i = m.Var("i")
    inp = m.ImageParam(m.UInt(16), 2, "input")
    lut = m.Func("lut")
    lut[i] = m.i16(i * i % 1000 - 500)
    out = m.Func("out")
    out[x, y] = lut[m.clamp(m.i32(inp[x, y] >> 6), 0, 1023)]
    return out, {"input": inp}


def _color_matrix(m, x, y):
    """A colour conversion on a planar RGB image, with a third pure dimension."""
    c = m.Var("c")
    inp = m.ImageParam(m.UInt(8), 3, "input")
    f = m.Func("f")
    f[x, y, c] = m.f32(inp[x, y, c])
    out = m.Func("out")
    # JPEG's matrix in 1/256ths: every product and sum is exact in float32, so rounding
    # (half to even) sees exact .5 values and no fused multiply-add can change a result.
    k = 1.0 / 256.0
    ycc = [
        (77.0 * f[x, y, 0] + 150.0 * f[x, y, 1] + 29.0 * f[x, y, 2]) * k,
        128.0 + (-43.0 * f[x, y, 0] - 85.0 * f[x, y, 1] + 128.0 * f[x, y, 2]) * k,
        128.0 + (128.0 * f[x, y, 0] - 107.0 * f[x, y, 1] - 21.0 * f[x, y, 2]) * k,
    ]
    out[x, y, c] = m.saturating_cast(m.UInt(8), m.round(m.select(c == 0, ycc[0], c == 1, ycc[1], ycc[2])))
    return out, {"input": inp}


def _multi_output(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    blur = m.Func("blur")
    blur[x, y] = m.u8((m.u16(inp[x, y]) + inp[x + 1, y] + 1) / 2)
    norm = m.Func("norm")
    norm[x, y] = m.f32(blur[x, y]) / 255.0 - m.f32(inp[x, y + 1]) * 0.5
    return [blur, norm], {"input": inp}


def _multi_output_params(m, x, y):
    """Two outputs of different types, int and float Params in both."""
    inp = m.ImageParam(m.Int(16), 2, "input")
    offset = m.Param(m.Int(16), "offset", 10)
    k = m.Param(m.Int(32), "k", 3)
    scale = m.Param(m.Float(32), "scale", 0.5)
    a, b = m.Func("a"), m.Func("b")
    a[x, y] = m.i32(inp[x, y] + offset) * k / 4
    b[x, y] = m.f64(a[x, y]) * scale + m.f64(x)
    return [a, b], {"input": inp, "offset": offset, "k": k, "scale": scale}


def _multi_output_chain(m, x, y):
    """Two outputs where the second consumes the first (u16 and int32)."""
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.repeat_edge(inp)
    sums = m.Func("sums")
    sums[x, y] = m.u16(e[x - 1, y]) + m.u16(e[x, y]) * 2 + m.u16(e[x + 1, y])
    grad = m.Func("grad")
    grad[x, y] = m.i32(sums[x, y + 1]) - m.i32(sums[x, y - 1])
    return [sums, grad], {"input": inp}


def _params_pointwise(m, x, y):
    inp = m.ImageParam(m.UInt(8), 2, "input")
    thresh = m.Param(m.UInt(8), "thresh", 100)
    shift = m.Param(m.Int(32), "shift", 2)
    gain = m.Param(m.Float(32), "gain", 1.25)
    out = m.Func("out")
    out[x, y] = m.select(
        inp[x, y] > thresh, m.saturating_cast(m.UInt(8), m.f32(inp[x, y]) * gain), m.u8(m.i32(inp[x, y]) >> shift)
    )
    return out, {"input": inp, "thresh": thresh, "shift": shift, "gain": gain}


def _tuple_free_stages(m, x, y):
    """A diamond: two branches computed from one stage, merged, with coordinates offset."""
    inp = m.ImageParam(m.UInt(8), 2, "input")
    e = m.BoundaryConditions.repeat_image(inp)
    base = m.Func("base")
    base[x, y] = m.i16(e[x, y]) - 128
    left, right = m.Func("left"), m.Func("right")
    left[x, y] = base[x - 3, y] * 2
    right[x, y] = base[x + 5, y - 2] / 3
    merged = m.Func("merged")
    merged[x, y] = m.max(left[x, y], right[x, y]) + m.min(left[x - 1, y + 1], right[x + 1, y])
    return merged, {"input": inp}


def stage_case(case_id: str, sizes: list[int], inputs: dict, body: Callable[..., Any], **tol: float) -> Case:
    def build(m):
        return body(m, m.Var("x"), m.Var("y"))

    return pytest.param(build, sizes, inputs, tol, id=case_id)


PIPELINE_CASES = [
    stage_case("box_blur_separable", [W, H], {"input": U8}, _box_blur),
    stage_case("unsharp_mask_float", [W, H], {"input": U8}, _unsharp),
    stage_case("unsharp_mask_param_set", [W, H], {"input": U8, "amount": 3.0}, _unsharp),
    stage_case("sobel_magnitude", [W, H], {"input": U8}, _sobel),
    stage_case("sobel_abs_unsigned", [W, H], {"input": U8}, _sobel_abs),
    stage_case("pyramid_3_levels", [W // 8, H // 8], {"input": U8}, _pyramid),
    stage_case("lut_gamma", [W, H], {"input": U8}, _lut_gamma),
    stage_case("lut_gamma_param_set", [W, H], {"input": U8, "gamma": 0.45}, _lut_gamma),
    stage_case("lut_u16_index", [W, H], {"input": U16}, _lut_u16_index),
    stage_case("multi_output_u8_f32", [W - 1, H - 1], {"input": U8}, _multi_output),
    stage_case("multi_output_params_default", [W, H], {"input": I16}, _multi_output_params),
    stage_case(
        "multi_output_params_set",
        [W, H],
        {"input": I16, "offset": -300, "k": -7, "scale": 0.125},
        _multi_output_params,
    ),
    stage_case("multi_output_chain_u16_i32", [W, H], {"input": U8}, _multi_output_chain),
    stage_case("params_pointwise", [W, H], {"input": U8, "thresh": 50, "shift": 3, "gain": 0.75}, _params_pointwise),
    stage_case("diamond_repeat_image", [W, H], {"input": U8}, _tuple_free_stages),
]

SMALL_CASES = INTEGER_CASES + FLOAT_CASES + BOUNDARY_CASES + RESAMPLING_CASES + REDUCTION_CASES


@pytest.mark.parametrize(("build", "sizes", "inputs"), SMALL_CASES)
def test_case(build, sizes, inputs):
    compare_with_halide(build, sizes, inputs)


@pytest.mark.filterwarnings("ignore:The floating-point value")  # Halide's warning: these literals are deliberate
@pytest.mark.parametrize(("build", "sizes", "inputs"), EXACT_FLOAT_CASES)
def test_exact_float(build, sizes, inputs):
    compare_with_halide(build, sizes, inputs, rtol=0.0, atol=0.0)


@pytest.mark.parametrize(("build", "sizes", "inputs", "tol"), PIPELINE_CASES)
def test_pipeline(build, sizes, inputs, tol):
    compare_with_halide(build, sizes, inputs, **tol)


# ---------------------------------------------------------------------------- on the photographs


def test_histogram_camera(camera):
    case_histogram(camera)


def test_cdf_scan_camera(camera):
    case_cdf_scan(camera)


def test_histogram_equalize_camera(camera):
    case_histogram_equalize(camera)


def test_harris_astronaut(astronaut_planar):
    crop = np.ascontiguousarray(astronaut_planar[:, 100:228, 150:310])

    def build(m):
        return _harris(m, m.Var("x"), m.Var("y"))

    (out,) = compare_with_halide(build, [160, 128], {"input": crop}, rtol=1e-4, atol=1e-5)
    assert out.dtype == np.float32 and np.abs(out).max() > 0


def test_color_matrix_astronaut(astronaut_planar):
    def build(m):
        return _color_matrix(m, m.Var("x"), m.Var("y"))

    (out,) = compare_with_halide(build, [512, 512, 3], {"input": astronaut_planar})
    assert out.shape == (3, 512, 512)


def test_pyramid_camera(camera):
    def build(m):
        return _pyramid(m, m.Var("x"), m.Var("y"))

    (out,) = compare_with_halide(build, [64, 64], {"input": camera})
    assert abs(float(out.mean()) - float(camera.mean())) < 4


def test_corpus_is_large_enough():
    assert len(SMALL_CASES) + len(EXACT_FLOAT_CASES) + len(PIPELINE_CASES) + 6 >= 45
