"""Every intrinsic, scalar and vector, against engine.reference.intrinsic."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt
from pixelweave.engine.reference import intrinsic

from tests.codegen.builders import elementwise
from tests.codegen.test_arithmetic import INT_TYPES, LANES_AND_LEVELS, N, run, sample

UNARY = ["sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh"]
EXACT_UNARY = ["floor", "ceil", "round", "trunc", "abs"]


def call(t: Type, name: str, *args: E.Expr) -> E.Call:
    return E.Call(t, name, args, "intrinsic")


def sample_domain(name: str, rng, dt) -> np.ndarray:
    if name in ("asin", "acos"):
        return rng.uniform(-1, 1, N).astype(dt)
    if name in ("sqrt", "log"):
        return rng.uniform(0, 1000, N).astype(dt)
    if name in ("exp", "sinh", "cosh"):
        return rng.uniform(-20, 20, N).astype(dt)
    return rng.uniform(-10, 10, N).astype(dt)


@pytest.mark.parametrize(("lanes", "level"), [(1, "fast"), (8, "fast"), (8, "full")])
@pytest.mark.parametrize("t", [Float(32), Float(64)], ids=str)
def test_float_intrinsics(t: Type, lanes: int, level: str, rng) -> None:
    vt = t.with_lanes(lanes)
    outputs = {name: (t, lambda v, name=name: call(vt, name, v[f"in_{name}"])) for name in UNARY}
    outputs.update({name: (t, lambda v, name=name: call(vt, name, v["x"])) for name in EXACT_UNARY})
    outputs["pow"] = (t, lambda v: call(vt, "pow", v["p"], v["q"]))
    outputs["atan2"] = (t, lambda v: call(vt, "atan2", v["x"], v["q"]))
    outputs["absd"] = (t, lambda v: call(vt, "absd", v["x"], v["q"]))
    outputs["is_nan"] = (Bool(), lambda v: call(Bool().with_lanes(lanes), "is_nan", v["x"]))
    inputs = {name: t for name in [*[f"in_{n}" for n in UNARY], "x", "p", "q"]}
    lowered = elementwise(f"float_intrinsics_{t.bits}_{lanes}", inputs, outputs, lanes)
    dt = t.numpy()
    arrays = {f"in_{name}": sample_domain(name, rng, dt) for name in UNARY}
    x = sample(t, rng)
    x[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5], dtype=dt)  # round half to even
    arrays.update(x=x, p=rng.uniform(0, 10, N).astype(dt), q=rng.uniform(-5, 5, N).astype(dt))
    got = run(lowered, arrays, {name: out_t for name, (out_t, _) in outputs.items()}, level=level)
    rtol = 4e-6 if t.bits == 32 else 1e-13
    with np.errstate(all="ignore"):
        for name in UNARY:
            want = intrinsic(name, [arrays[f"in_{name}"]], t)
            np.testing.assert_allclose(got[name], want, rtol=rtol, atol=rtol, err_msg=name)
        for name in EXACT_UNARY:
            np.testing.assert_array_equal(got[name], intrinsic(name, [x], t), err_msg=name)
        np.testing.assert_allclose(got["pow"], intrinsic("pow", [arrays["p"], arrays["q"]], t), rtol=rtol)
        np.testing.assert_allclose(got["atan2"], intrinsic("atan2", [x, arrays["q"]], t), rtol=rtol, atol=rtol)
        np.testing.assert_array_equal(got["absd"], intrinsic("absd", [x, arrays["q"]], t))
        np.testing.assert_array_equal(got["is_nan"], np.isnan(x))


def unsigned_type(t: Type) -> Type:
    return UInt(t.bits) if t.is_int() else t


@pytest.mark.parametrize(("lanes", "level"), LANES_AND_LEVELS)
@pytest.mark.parametrize("t", INT_TYPES, ids=str)
def test_integer_intrinsics(t: Type, lanes: int, level: str, rng) -> None:
    vt, ut = t.with_lanes(lanes), unsigned_type(t)
    outputs = {
        "abs": (ut, lambda v: call(ut.with_lanes(lanes), "abs", v["a"])),
        "absd": (ut, lambda v: call(ut.with_lanes(lanes), "absd", v["a"], v["b"])),
        "bitwise_and": (t, lambda v: call(vt, "bitwise_and", v["a"], v["b"])),
        "bitwise_or": (t, lambda v: call(vt, "bitwise_or", v["a"], v["b"])),
        "bitwise_xor": (t, lambda v: call(vt, "bitwise_xor", v["a"], v["b"])),
        "bitwise_not": (t, lambda v: call(vt, "bitwise_not", v["a"])),
    }
    lowered = elementwise(f"int_intrinsics_{t.code}{t.bits}_{lanes}", {"a": t, "b": t}, outputs, lanes)
    a, b = sample(t, rng), sample(t, rng)
    got = run(lowered, {"a": a, "b": b}, {name: out_t for name, (out_t, _) in outputs.items()}, level=level)
    for name, (out_t, _) in outputs.items():
        args = [a] if name in ("abs", "bitwise_not") else [a, b]
        with np.errstate(all="ignore"):
            want = intrinsic(name, args, out_t)
        if name == "abs" and t == UInt(64):
            want = a  # the reference reads uint64 as int64 first: abs of an unsigned is itself
        if name == "absd" and t.bits == 64:
            # The reference computes |a - b| in 64 bits, which overflows; the exact answer:
            want = np.array([abs(int(p) - int(q)) & (2**64 - 1) for p, q in zip(a, b, strict=True)], dtype=np.uint64)
        np.testing.assert_array_equal(got[name], want, err_msg=f"{name} on {t}")


def test_abs_of_most_negative_is_unsigned() -> None:
    outputs = {"abs": (UInt(8), lambda v: call(UInt(8), "abs", v["a"]))}
    lowered = elementwise("abs_min", {"a": Int(8)}, outputs)
    got = run(lowered, {"a": np.array([-128, -1, 0, 127], dtype=np.int8)}, {"abs": UInt(8)}, n=4)
    np.testing.assert_array_equal(got["abs"], np.array([128, 1, 0, 127], dtype=np.uint8))


def test_unknown_intrinsic_is_a_compile_error() -> None:
    from pixelweave.engine.errors import CompileError
    from pixelweave.engine.runtime.jit import compile_pipeline

    outputs = {"o": (Float(32), lambda v: call(Float(32), "frobnicate", v["a"]))}
    with pytest.raises(CompileError, match="frobnicate"):
        compile_pipeline(elementwise("unknown_intrinsic", {"a": Float(32)}, outputs))


def test_int_min_max_of_select_on_int32(rng) -> None:
    t = Int(32)
    outputs = {"clamped": (t, lambda v: E.Max(E.Min(v["a"], E.Const(t, 100)), E.Const(t, -100)))}
    lowered = elementwise("clamp_scalar", {"a": t}, outputs)
    a = sample(t, rng)
    got = run(lowered, {"a": a}, {"clamped": t})
    np.testing.assert_array_equal(got["clamped"], np.clip(a, -100, 100))
