"""Halide's semantics on the OpenCL device: the CPU backend's expression tests, run as kernels.

The hand-built elementwise pipelines of tests/codegen (every type, edge values mixed in)
have their loop mapped to GPU blocks and threads and go through the OpenCL backend; the
expected values are the same as on the CPU: Euclidean division and modulo with x / 0 == 0,
wrapping arithmetic, float -> int truncation as x86 and NumPy, Halide's shifts, rounding
half to even.
"""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.reference import divide, intrinsic, modulo
from pixelweave.engine.runtime.opencl_host import compile_opencl
from pixelweave.engine.stmt import For, ForType, IfThenElse, LetStmt
from pixelweave.engine.stmt_visit import StmtMutator

from tests.codegen.builders import elementwise
from tests.codegen.test_arithmetic import COMPARES, FLOAT_TYPES, INT_TYPES, OPS, N, expected_result, sample
from tests.codegen.test_casts_and_shifts import ALL_TYPES, SHIFT_TYPES, exact_shift, expected_cast, type_id
from tests.codegen.test_intrinsics import EXACT_UNARY, UNARY, call, sample_domain, unsigned_type

pytestmark = pytest.mark.usefixtures("opencl_device")


class _OnTheGpu(StmtMutator):
    """The element loop as blocks of 64 work-items, the last block guarded."""

    def visit_For(self, s: For):
        index = E.Add(E.Mul(E.Variable("blk"), E.Const(Int(32), 64)), E.Variable("tid"))
        body = IfThenElse(E.LT(index, s.extent), LetStmt(s.name, E.Add(s.min, index), s.body))
        threads = For("tid", E.Const(Int(32), 0), E.Const(Int(32), 64), ForType.GPU_THREAD, body)
        blocks = E.Div(E.Add(s.extent, E.Const(Int(32), 63)), E.Const(Int(32), 64))
        return For("blk", E.Const(Int(32), 0), blocks, ForType.GPU_BLOCK, threads)


def run(lowered: LoweredPipeline, inputs: dict[str, np.ndarray], out_types: dict[str, Type], n: int = N):
    on_gpu = LoweredPipeline(lowered.name, lowered.arguments, _OnTheGpu().mutate(lowered.body))
    fn = compile_opencl(on_gpu)
    assert "get_group_id(0)" in fn.kernel_source and "get_local_id(0)" in fn.kernel_source
    outputs = {name: np.zeros(n, dtype=t.numpy()) for name, t in out_types.items()}
    fn(inputs, outputs)
    return outputs


@pytest.mark.parametrize("t", INT_TYPES + FLOAT_TYPES, ids=str)
def test_binary_operators_and_comparisons(t: Type, rng) -> None:
    outputs = {op: (t, lambda v, k=k: k(v["a"], v["b"])) for op, k in OPS.items()}
    outputs.update({op: (Bool(), lambda v, k=k: k(v["a"], v["b"])) for op, k in COMPARES.items()})
    outputs["select"] = (t, lambda v: E.Select(E.LT(v["a"], v["b"]), v["b"], v["a"]))
    lowered = elementwise(f"binops_{t.code}{t.bits}", {"a": t, "b": t}, outputs)
    a, b = sample(t, rng), sample(t, rng, zeros=True)
    got = run(lowered, {"a": a, "b": b}, {name: out_t for name, (out_t, _) in outputs.items()})
    for op in OPS:
        np.testing.assert_array_equal(got[op], expected_result(op, a, b, t), err_msg=f"{op} on {t}")
    with np.errstate(invalid="ignore"):
        for op, fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                       "gt": np.greater, "ge": np.greater_equal}.items():  # fmt: skip
            np.testing.assert_array_equal(got[op], fn(a, b), err_msg=f"{op} on {t}")
        np.testing.assert_array_equal(got["select"], np.where(a < b, b, a))


@pytest.mark.parametrize("src", ALL_TYPES, ids=type_id)
def test_casts_to_every_type(src: Type, rng) -> None:
    outputs = {f"to_{type_id(d)}": (d, lambda v, d=d: E.Cast(d, v["a"])) for d in ALL_TYPES}
    lowered = elementwise(f"cast_{type_id(src)}", {"a": src}, outputs)
    if src.is_bool():
        a = rng.integers(0, 2, N).astype(bool)
    else:
        a = sample(src, rng)
        if src.is_float():
            # in range of every destination's wide conversion (beyond it OpenCL C leaves the result undefined)
            a = np.where(np.isfinite(a) & (np.abs(a) < 2.0**31), a, 7.0).astype(a.dtype)
            edges = [2.0**31 - 128, -(2.0**31), 255.9, -128.9, 127.5, -0.99, 65535.5]
            a[-len(edges) :] = np.array(edges, dtype=a.dtype)
    got = run(lowered, {"a": a}, {name: d for name, (d, _) in outputs.items()})
    for d in ALL_TYPES:
        np.testing.assert_array_equal(got[f"to_{type_id(d)}"], expected_cast(a, src, d), err_msg=f"{src} -> {d}")


@pytest.mark.parametrize("t", SHIFT_TYPES, ids=type_id)
def test_shifts_with_big_and_negative_amounts(t: Type, rng) -> None:
    outputs = {}
    amounts = {}
    for at in (Int(t.bits), UInt(t.bits)):
        lo = -t.bits - 3 if at.is_int() else 0
        values = rng.integers(lo, t.bits + 4, N).astype(at.numpy())
        amounts[f"b_{at.code}"] = values
        for name in ("shift_left", "shift_right"):
            outputs[f"{name}_{at.code}"] = (
                t,
                lambda v, name=name, at=at: E.Call(t, name, (v["a"], v[f"b_{at.code}"]), "intrinsic"),
            )
    lowered = elementwise(f"shift_{type_id(t)}", {"a": t, "b_int": Int(t.bits), "b_uint": UInt(t.bits)}, outputs)
    a = sample(t, rng)
    got = run(lowered, {"a": a, **amounts}, {name: t for name in outputs})
    for name in outputs:
        op = "shift_left" if name.startswith("shift_left") else "shift_right"
        b = amounts[f"b_{name.rsplit('_', 1)[1]}"]
        np.testing.assert_array_equal(got[name], exact_shift(op, a, b, t), err_msg=f"{name} on {t}")


@pytest.mark.parametrize("t", [Float(32), Float(64)], ids=str)
def test_float_intrinsics(t: Type, rng) -> None:
    outputs = {name: (t, lambda v, name=name: call(t, name, v[f"in_{name}"])) for name in UNARY}
    outputs.update({name: (t, lambda v, name=name: call(t, name, v["x"])) for name in EXACT_UNARY})
    outputs["pow"] = (t, lambda v: call(t, "pow", v["p"], v["q"]))
    outputs["absd"] = (t, lambda v: call(t, "absd", v["x"], v["q"]))
    outputs["is_nan"] = (Bool(), lambda v: call(Bool(), "is_nan", v["x"]))
    inputs = {name: t for name in [*[f"in_{n}" for n in UNARY], "x", "p", "q"]}
    lowered = elementwise(f"float_intrinsics_{t.bits}", inputs, outputs)
    dt = t.numpy()
    arrays = {f"in_{name}": sample_domain(name, rng, dt) for name in UNARY}
    x = sample(t, rng)
    x[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5], dtype=dt)  # round half to even
    arrays.update(x=x, p=rng.uniform(0, 10, N).astype(dt), q=rng.uniform(-5, 5, N).astype(dt))
    got = run(lowered, arrays, {name: out_t for name, (out_t, _) in outputs.items()})
    rtol = 1e-5 if t.bits == 32 else 1e-12  # OpenCL's builtins are allowed a few ulp
    with np.errstate(all="ignore"):
        for name in UNARY:
            want = intrinsic(name, [arrays[f"in_{name}"]], t)
            np.testing.assert_allclose(got[name], want, rtol=rtol, atol=rtol, err_msg=name)
        for name in EXACT_UNARY:
            np.testing.assert_array_equal(got[name], intrinsic(name, [x], t), err_msg=name)
        np.testing.assert_allclose(got["pow"], intrinsic("pow", [arrays["p"], arrays["q"]], t), rtol=rtol)
        np.testing.assert_array_equal(got["absd"], intrinsic("absd", [x, arrays["q"]], t))
        np.testing.assert_array_equal(got["is_nan"], np.isnan(x))


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
def test_integer_intrinsics(t: Type, rng) -> None:
    ut = unsigned_type(t)
    outputs = {
        "abs": (ut, lambda v: call(ut, "abs", v["a"])),
        "absd": (ut, lambda v: call(ut, "absd", v["a"], v["b"])),
        "bitwise_and": (t, lambda v: call(t, "bitwise_and", v["a"], v["b"])),
        "bitwise_xor": (t, lambda v: call(t, "bitwise_xor", v["a"], v["b"])),
        "bitwise_not": (t, lambda v: call(t, "bitwise_not", v["a"])),
    }
    lowered = elementwise(f"int_intrinsics_{t.code}{t.bits}", {"a": t, "b": t}, outputs)
    a, b = sample(t, rng), sample(t, rng)
    got = run(lowered, {"a": a, "b": b}, {name: out_t for name, (out_t, _) in outputs.items()})
    for name, (out_t, _) in outputs.items():
        args = [a] if name in ("abs", "bitwise_not") else [a, b]
        with np.errstate(all="ignore"):
            want = intrinsic(name, args, out_t)
        if name == "abs" and t == UInt(64):
            want = a
        if name == "absd" and t.bits == 64:
            want = np.array([abs(int(p) - int(q)) & (2**64 - 1) for p, q in zip(a, b, strict=True)], dtype=np.uint64)
        np.testing.assert_array_equal(got[name], want, err_msg=f"{name} on {t}")


@pytest.mark.parametrize("t", [Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)], ids=str)
def test_division_by_constants(t: Type, rng) -> None:
    """Constant divisors take shorter paths (C's operators, shifts, masks): same results."""
    divisors = [1, 2, 3, 4, 7, 8, 16, 0] + ([-1, -2, -3, -8, t.min()] if t.is_int() else [t.max()])
    outputs = {}
    for k, d in enumerate(divisors):
        outputs[f"q{k}"] = (t, lambda v, d=d: E.Div(v["a"], E.Const(t, d)))
        outputs[f"r{k}"] = (t, lambda v, d=d: E.Mod(v["a"], E.Const(t, d)))
    lowered = elementwise(f"constdiv_{t.code}{t.bits}", {"a": t}, outputs)
    a = sample(t, rng)
    got = run(lowered, {"a": a}, {name: t for name in outputs})
    for k, d in enumerate(divisors):
        b = np.full_like(a, d)
        with np.errstate(all="ignore"):
            quotient, remainder = divide(a, b, t), modulo(a, b, t)
        np.testing.assert_array_equal(got[f"q{k}"], quotient, err_msg=f"{t} / {d}")
        np.testing.assert_array_equal(got[f"r{k}"], remainder, err_msg=f"{t} % {d}")
