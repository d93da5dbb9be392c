"""Halide's semantics in OpenCL vector code: the scalar semantics tests with vector lanes.

The hand-built elementwise pipelines of tests/codegen compute `lanes` elements per
iteration (dense ramps: vloadN/vstoreN); the loop is mapped to GPU blocks and threads as
in test_opencl_semantics.py, so every operation reaches the OpenCL backend as a vector of
`lanes` lanes. The expected values are the scalar ones: Euclidean division and modulo with
x / 0 == 0 lane by lane, wrapping arithmetic and casts, float -> int truncation, Halide's
shifts, -1/0 comparison masks turned back into bools.
"""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.reference import divide, modulo
from pixelweave.engine.runtime.opencl_host import compile_opencl
from pixelweave.engine.stmt import Broadcast, For, ForType, IfThenElse, LetStmt
from pixelweave.engine.stmt_visit import StmtMutator

from tests.codegen.builders import elementwise
from tests.codegen.test_arithmetic import COMPARES, FLOAT_TYPES, INT_TYPES, OPS, N, expected_result, sample
from tests.codegen.test_casts_and_shifts import ALL_TYPES, SHIFT_TYPES, exact_shift, expected_cast, type_id
from tests.codegen.test_intrinsics import call, unsigned_type

pytestmark = pytest.mark.usefixtures("opencl_device")


class OnTheGpu(StmtMutator):
    """The vector loop as blocks of 32 work-items, the last block guarded."""

    def visit_For(self, s: For):
        index = E.Add(E.Mul(E.Variable("blk"), E.Const(Int(32), 32)), E.Variable("tid"))
        body = IfThenElse(E.LT(index, s.extent), LetStmt(s.name, E.Add(s.min, index), s.body))
        threads = For("tid", E.Const(Int(32), 0), E.Const(Int(32), 32), ForType.GPU_THREAD, body)
        blocks = E.Div(E.Add(s.extent, E.Const(Int(32), 31)), E.Const(Int(32), 32))
        return For("blk", E.Const(Int(32), 0), blocks, ForType.GPU_BLOCK, threads)


def run(lowered: LoweredPipeline, inputs: dict[str, np.ndarray], out_types: dict[str, Type], lanes: int, n: int):
    on_gpu = LoweredPipeline(lowered.name, lowered.arguments, OnTheGpu().mutate(lowered.body))
    fn = compile_opencl(on_gpu)
    source = fn.kernel_source
    some_input = next(iter(inputs.values()))
    assert f"vload{lanes}(" in source and f"vstore{lanes}(" in source, source
    if some_input.dtype == np.float32:
        assert f"float{lanes} " in source
    outputs = {name: np.zeros(n, dtype=t.numpy()) for name, t in out_types.items()}
    fn(inputs, outputs)
    return outputs


def _binary_ops(t: Type, lanes: int, rng) -> None:
    n = N - N % lanes
    outputs = {op: (t, lambda v, k=k: k(v["a"], v["b"])) for op, k in OPS.items()}
    outputs.update({op: (Bool(), lambda v, k=k: k(v["a"], v["b"])) for op, k in COMPARES.items()})
    outputs["select"] = (t, lambda v: E.Select(E.LT(v["a"], v["b"]), v["b"], v["a"]))
    outputs["logic"] = (
        Bool(),
        lambda v: E.Or(E.And(E.LT(v["a"], v["b"]), E.Not(E.EQ(v["a"], v["b"]))), E.GT(v["a"], v["b"])),
    )
    outputs["flag"] = (t, lambda v: E.Cast(t.with_lanes(lanes), E.LE(v["a"], v["b"])))
    lowered = elementwise(f"vbinops_{t.code}{t.bits}_{lanes}", {"a": t, "b": t}, outputs, lanes=lanes)
    a, b = sample(t, rng)[:n], sample(t, rng, zeros=True)[:n]
    got = run(lowered, {"a": a, "b": b}, {name: out_t for name, (out_t, _) in outputs.items()}, lanes, n)
    for op in OPS:
        np.testing.assert_array_equal(got[op], expected_result(op, a, b, t), err_msg=f"{op} on {t} x {lanes}")
    with np.errstate(invalid="ignore"):
        for op, fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                       "gt": np.greater, "ge": np.greater_equal}.items():  # fmt: skip
            np.testing.assert_array_equal(got[op], fn(a, b), err_msg=f"{op} on {t} x {lanes}")
        np.testing.assert_array_equal(got["select"], np.where(a < b, b, a))
        np.testing.assert_array_equal(got["logic"], (a < b) | (a > b))
        np.testing.assert_array_equal(got["flag"], (a <= b).astype(t.numpy()))


@pytest.mark.parametrize("t", INT_TYPES + FLOAT_TYPES, ids=str)
def test_binary_operators_in_8_lanes(t: Type, rng) -> None:
    """+ - * / % min max, comparisons, select and logic: division by zero and by -1 included."""
    _binary_ops(t, 8, rng)


@pytest.mark.parametrize("lanes", [2, 3, 4, 16])
@pytest.mark.parametrize("t", [Int(8), Int(32), UInt(16)], ids=str)
def test_binary_operators_in_every_vector_width(t: Type, lanes: int, rng) -> None:
    _binary_ops(t, lanes, rng)


@pytest.mark.parametrize("src", ALL_TYPES, ids=type_id)
def test_vector_casts_to_every_type(src: Type, rng) -> None:
    """convert_T without saturation: wrapping integers, truncating floats, bools 1/0."""
    lanes = 4
    outputs = {f"to_{type_id(d)}": (d, lambda v, d=d: E.Cast(d.with_lanes(lanes), v["a"])) for d in ALL_TYPES}
    lowered = elementwise(f"vcast_{type_id(src)}", {"a": src}, outputs, lanes=lanes)
    if src.is_bool():
        a = rng.integers(0, 2, N).astype(bool)
    else:
        a = sample(src, rng)
        if src.is_float():
            a = np.where(np.isfinite(a) & (np.abs(a) < 2.0**31), a, 7.0).astype(a.dtype)
            edges = [2.0**31 - 128, -(2.0**31), 255.9, -128.9, 127.5, -0.99, 65535.5, -3.5]
            a[-len(edges) :] = np.array(edges, dtype=a.dtype)
    got = run(lowered, {"a": a}, {name: d for name, (d, _) in outputs.items()}, lanes, N)
    for d in ALL_TYPES:
        np.testing.assert_array_equal(got[f"to_{type_id(d)}"], expected_cast(a, src, d), err_msg=f"{src} -> {d}")


@pytest.mark.parametrize("t", [Int(8), Int(16), Int(32), UInt(8), UInt(32)], ids=str)
def test_vector_division_by_constants(t: Type, rng) -> None:
    divisors = [1, 2, 3, 8, 0] + ([-1, -2, -3, t.min()] if t.is_int() else [t.max()])
    outputs = {}
    for k, d in enumerate(divisors):
        outputs[f"q{k}"] = (t, lambda v, d=d: E.Div(v["a"], Broadcast(E.Const(t, d), 8)))
        outputs[f"r{k}"] = (t, lambda v, d=d: E.Mod(v["a"], Broadcast(E.Const(t, d), 8)))
    lowered = elementwise(f"vconstdiv_{t.code}{t.bits}", {"a": t}, outputs, lanes=8)
    a = sample(t, rng)
    got = run(lowered, {"a": a}, {name: t for name in outputs}, 8, N)
    for k, d in enumerate(divisors):
        b = np.full_like(a, d)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got[f"q{k}"], divide(a, b, t), err_msg=f"{t} / {d}")
            np.testing.assert_array_equal(got[f"r{k}"], modulo(a, b, t), err_msg=f"{t} % {d}")


@pytest.mark.parametrize("t", SHIFT_TYPES[:4], ids=type_id)
def test_vector_shifts_lane_by_lane(t: Type, rng) -> None:
    """Shifts with negative and oversized amounts (computed lane by lane with the scalar rules)."""
    amounts = rng.integers(-t.bits - 3, t.bits + 4, N).astype(Int(t.bits).numpy())
    outputs = {
        name: (t, lambda v, name=name: E.Call(t.with_lanes(4), name, (v["a"], v["b"]), "intrinsic"))
        for name in ("shift_left", "shift_right")
    }
    lowered = elementwise(f"vshift_{type_id(t)}", {"a": t, "b": Int(t.bits)}, outputs, lanes=4)
    a = sample(t, rng)
    got = run(lowered, {"a": a, "b": amounts}, {name: t for name in outputs}, 4, N)
    for name in outputs:
        np.testing.assert_array_equal(got[name], exact_shift(name, a, amounts, t), err_msg=f"{name} on {t}")


@pytest.mark.parametrize("t", [Int(8), Int(32), Int(64), UInt(16), UInt(64), Float(32), Float(64)], ids=str)
def test_vector_intrinsics(t: Type, rng) -> None:
    ut = unsigned_type(t) if not t.is_float() else t
    outputs = {
        "abs": (ut, lambda v: call(ut.with_lanes(8), "abs", v["a"])),
        "absd": (ut, lambda v: call(ut.with_lanes(8), "absd", v["a"], v["b"])),
    }
    if not t.is_float():
        outputs["xor"] = (t, lambda v: call(t.with_lanes(8), "bitwise_xor", v["a"], v["b"]))
        outputs["not"] = (t, lambda v: call(t.with_lanes(8), "bitwise_not", v["a"]))
    else:
        outputs["floor"] = (t, lambda v: call(t.with_lanes(8), "floor", v["a"]))
        outputs["round"] = (t, lambda v: call(t.with_lanes(8), "round", v["a"]))
        outputs["is_nan"] = (Bool(), lambda v: call(Bool().with_lanes(8), "is_nan", v["b"]))
    lowered = elementwise(f"vintrinsics_{t.code}{t.bits}", {"a": t, "b": t}, outputs, lanes=8)
    a, b = sample(t, rng), sample(t, rng)
    if t.is_float():
        a = np.where(np.isfinite(a), a, 1.5).astype(a.dtype)
        a[:6] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], dtype=a.dtype)
        b = np.where(np.isfinite(b), b, 2.0).astype(b.dtype)
        b[10:14] = np.nan
    got = run(lowered, {"a": a, "b": b}, {name: out_t for name, (out_t, _) in outputs.items()}, 8, N)
    with np.errstate(all="ignore"):
        if t.is_float():
            np.testing.assert_array_equal(got["abs"], np.abs(a))
            np.testing.assert_array_equal(got["absd"], np.abs(a - b))
        else:  # exact, in Python integers (64-bit differences overflow NumPy's)
            want_abs = [abs(int(p)) for p in a]
            want_absd = [abs(int(p) - int(q)) for p, q in zip(a, b, strict=True)]
            np.testing.assert_array_equal(got["abs"], np.array(want_abs, dtype=np.uint64).astype(ut.numpy()))
            np.testing.assert_array_equal(got["absd"], np.array(want_absd, dtype=np.uint64).astype(ut.numpy()))
        if t.is_float():
            np.testing.assert_array_equal(got["floor"], np.floor(a))
            np.testing.assert_array_equal(got["round"], np.round(a))
            np.testing.assert_array_equal(got["is_nan"], np.isnan(b))
        else:
            np.testing.assert_array_equal(got["xor"], a ^ b)
            np.testing.assert_array_equal(got["not"], ~a)
