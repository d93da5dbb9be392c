"""exp, log, pow, sin, cos and atan2 of float32 vectors are vector code (no per-lane libm
call) within 1 ulp of the correctly rounded value and of the reference evaluator, with
libm's special values at 0, -0, negatives, infinities and NaN
(engine/codegen/llvm_vector_math.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm_vector_math import TRIG_LIMIT

import pixelweave as pw

LANES = 8
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40,
           1e-30, 88.7, 88.8, -103.9, -104.0, 1e30, -1e30, 3.4e38, 1e5, 1.2345e6, -8.8e5]  # fmt: skip


def values(rng: np.random.Generator) -> np.ndarray:
    wide = rng.standard_normal(400) * np.exp(rng.uniform(-8, 8, 400))
    small = rng.uniform(-10, 10, 400)
    out = np.concatenate([np.array(SPECIAL), wide, small]).astype(np.float32)
    return np.resize(out, (len(out) + LANES - 1) // LANES * LANES)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (0 where both are NaN or both the same infinity)."""

    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    both_nan = np.isnan(a) & np.isnan(b)
    d = np.abs(ordered(a) - ordered(b))
    return np.where(both_nan, 0, np.where(np.isnan(a) | np.isnan(b), 1 << 40, d))


def compiled(build, nargs: int):
    x = pw.Var("x")
    inputs = [pw.ImageParam(pw.Float(32), 1, f"in{k}") for k in range(nargs)]
    f = pw.Func("f")
    f[x] = build(*(p[x] for p in inputs))
    f.vectorize(x, LANES)
    pipeline = pw.Pipeline(f)
    return pipeline, pipeline.compile(level="fast")


UNARY = [
    ("exp", pw.exp, math.exp),
    ("log", pw.log, math.log),
    ("sin", pw.sin, math.sin),
    ("cos", pw.cos, math.cos),
]


def libm(fn, *args: float) -> float:
    """The C library's value in float64, then rounded to float32 (math raises where C
    returns inf or NaN)."""
    try:
        with np.errstate(over="ignore"):
            return float(np.float32(fn(*args)))
    except OverflowError:
        return math.inf
    except ValueError:
        return -math.inf if fn is math.log and args[0] == 0 else math.nan


@pytest.mark.parametrize(("name", "fn", "exact"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_within_one_ulp(name, fn, exact, rng):
    pipeline, run = compiled(fn, 1)
    xs = values(rng)
    if name == "exp":
        xs = np.clip(xs, -120, 100)  # beyond overflows as libm does, tested with the specials
    ours = run([len(xs)], {"in0": xs})
    expected = np.array([libm(exact, float(v)) for v in xs], np.float32)
    assert ulp_distance(ours, expected).max() <= 1, name
    ref = pipeline.realize_reference([len(xs)], {"in0": xs})
    assert ulp_distance(ours, ref).max() <= 2, name  # NumPy's own float32 kernels may be 1 ulp off
    special = np.resize(np.array(SPECIAL, np.float32), 32)
    got = run([32], {"in0": special})
    want = np.array([libm(exact, float(v)) for v in special], np.float32)
    assert ulp_distance(got, want).max() <= 1, (name, special, got, want)
    zeros = special == 0
    if name in ("sin",):  # sin keeps the sign of zero
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(special[zeros]))


def test_trig_beyond_the_reduction_range_uses_libm(rng):
    pipeline, run = compiled(pw.sin, 1)
    xs = np.full(16, 1.0, np.float32)
    xs[3] = np.float32(TRIG_LIMIT * 4)  # one huge lane sends its vector down the libm path
    xs[11] = np.float32(TRIG_LIMIT * 0.999)
    ours = run([16], {"in0": xs})
    expected = np.array([libm(math.sin, float(v)) for v in xs], np.float32)
    assert ulp_distance(ours, expected).max() <= 1


def c_pow(x: float, y: float) -> float:
    """C99 powf, from Python's pow with its exceptions mapped to C's results."""
    try:
        with np.errstate(over="ignore"):
            return float(np.float32(math.pow(x, y)))
    except OverflowError:
        negative_odd = x < 0 and float(y).is_integer() and int(y) % 2 == 1
        return -math.inf if negative_odd else math.inf
    except ValueError:
        if x == 0 and y < 0:  # pole: the sign of zero survives for odd integer y
            odd = float(y).is_integer() and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def test_pow_within_one_ulp_and_special_cases(rng):
    pipeline, run = compiled(pw.pow, 2)
    base = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, math.inf, -math.inf, math.nan, 1e-30, 10.0]
    expo = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, math.inf, -math.inf, math.nan, 1e10, 2.5, 41.0]
    xs = np.array([b for b in base for _ in expo], np.float32)
    ys = np.array([e for _ in base for e in expo], np.float32)
    xr = np.abs(rng.standard_normal(400)).astype(np.float32) * 4
    yr = (rng.standard_normal(400) * 8).astype(np.float32)
    xs, ys = np.concatenate([xs, xr]), np.concatenate([ys, yr])
    n = len(xs) // LANES * LANES
    xs, ys = xs[:n], ys[:n]
    ours = run([n], {"in0": xs, "in1": ys})
    expected = np.array([c_pow(float(a), float(b)) for a, b in zip(xs, ys, strict=True)], np.float32)
    bad = ulp_distance(ours, expected) > 1
    assert not bad.any(), list(zip(xs[bad], ys[bad], ours[bad], expected[bad], strict=True))[:10]
    ref = pipeline.realize_reference([n], {"in0": xs, "in1": ys})
    assert ulp_distance(ours, ref).max() <= 2


def test_atan2_within_one_ulp_and_signed_zeros(rng):
    pipeline, run = compiled(pw.atan2, 2)
    edge = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-40, -3.0, 1e30]
    ys = np.array([a for a in edge for _ in edge], np.float32)
    xs = np.array([b for _ in edge for b in edge], np.float32)
    ys = np.concatenate([ys, rng.standard_normal(300).astype(np.float32) * 100])
    xs = np.concatenate([xs, rng.standard_normal(300).astype(np.float32) * 100])
    n = len(xs) // LANES * LANES
    ys, xs = ys[:n], xs[:n]
    ours = run([n], {"in0": ys, "in1": xs})
    expected = np.array([float(np.float32(math.atan2(float(a), float(b)))) for a, b in zip(ys, xs, strict=True)],
                        np.float32)  # fmt: skip
    bad = ulp_distance(ours, expected) > 1
    assert not bad.any(), list(zip(ys[bad], xs[bad], ours[bad], expected[bad], strict=True))[:10]
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(expected[zeros]))
    ref = pipeline.realize_reference([n], {"in0": ys, "in1": xs})
    assert ulp_distance(ours, ref).max() <= 2


@pytest.mark.parametrize("name", ["exp", "log", "pow", "sin", "cos", "atan2"])
def test_no_per_lane_libm_calls(name):
    from pixelweave.engine.codegen.llvm import generate_module
    from pixelweave.engine.codegen.target import data_layout, resolve_target
    from pixelweave.engine.lower import lower

    fn = getattr(pw, name)
    x = pw.Var("x")
    a, b = pw.ImageParam(pw.Float(32), 1, "a"), pw.ImageParam(pw.Float(32), 1, "b")
    f = pw.Func("f")
    f[x] = fn(a[x], b[x]) if name in ("pow", "atan2") else fn(a[x])
    f.vectorize(x, LANES)
    spec = resolve_target("host")
    ir = generate_module(lower(pw.Pipeline(f)).lowered, triple=spec.triple, datalayout=data_layout(spec)).ir
    assert f"llvm.{name}.v{LANES}f32" not in ir or name in ("sin", "cos")
    if name in ("sin", "cos"):  # only on the branch for lanes beyond the reduction range
        assert "trig_libm" in ir and "trig_fast" in ir
