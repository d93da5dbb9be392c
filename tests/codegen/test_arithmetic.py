"""Scalar and vector arithmetic of every type against NumPy and the reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt
from pixelweave.engine.reference import divide, modulo
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Broadcast

from tests.codegen.builders import elementwise

INT_TYPES = [Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)]
FLOAT_TYPES = [Float(32), Float(64)]
N = 1024


def sample(t: Type, rng: np.random.Generator, n: int = N, zeros: bool = False) -> np.ndarray:
    """Random values of t with its edge cases (min, max, 0, +-1) mixed in."""
    dt = t.numpy()
    if t.is_float():
        values = (rng.standard_normal(n) * 100).astype(dt)
        edges = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e30, -1e30]
    else:
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        edges = [info.min, info.max, 0, 1, info.max - 1, info.min + 1] + ([-1, -2, -7] if t.is_int() else [7])
    values[: len(edges)] = np.array(edges, dtype=dt)
    if zeros:
        values[rng.integers(0, n, n // 8)] = 0
    rng.shuffle(values)
    return values


def run(lowered, inputs: dict[str, np.ndarray], out_types: dict[str, Type], n: int = N, level: str = "fast", **scalars):
    fn = compile_pipeline(lowered, level=level)
    outputs = {name: np.zeros(n, dtype=t.numpy()) for name, t in out_types.items()}
    fn({**inputs, **scalars}, outputs)
    return outputs


OPS = {
    "add": E.Add,
    "sub": E.Sub,
    "mul": E.Mul,
    "div": E.Div,
    "mod": E.Mod,
    "min": E.Min,
    "max": E.Max,
}
COMPARES = {"eq": E.EQ, "ne": E.NE, "lt": E.LT, "le": E.LE, "gt": E.GT, "ge": E.GE}


def expected_result(op: str, a: np.ndarray, b: np.ndarray, t: Type) -> np.ndarray:
    dt = t.numpy()
    with np.errstate(all="ignore"):
        if op == "add":
            return np.add(a, b, dtype=dt)
        if op == "sub":
            return np.subtract(a, b, dtype=dt)
        if op == "mul":
            return np.multiply(a, b, dtype=dt)
        if op == "div":
            return divide(a, b, t)
        if op == "mod":
            return modulo(a, b, t)
        if op == "min":  # Halide's definition: select(a < b, a, b)
            return np.where(a < b, a, b)
        if op == "max":
            return np.where(a > b, a, b)
    raise AssertionError(op)


# Scalar and vector code at "fast", vector code at "full" too: O3 is where an accidental
# poison value or undefined behaviour would be exploited.
LANES_AND_LEVELS = [(1, "fast"), (16, "fast"), (16, "full")]


@pytest.mark.parametrize(("lanes", "level"), LANES_AND_LEVELS)
@pytest.mark.parametrize("t", INT_TYPES + FLOAT_TYPES, ids=str)
def test_binary_operators_and_comparisons(t: Type, lanes: int, level: str, rng) -> None:
    outputs = {op: (t, lambda v, k=k: k(v["a"], v["b"])) for op, k in OPS.items()}
    outputs.update({op: (Bool(), lambda v, k=k: k(v["a"], v["b"])) for op, k in COMPARES.items()})
    outputs["select"] = (t, lambda v: E.Select(E.LT(v["a"], v["b"]), v["b"], v["a"]))
    outputs["not_le"] = (Bool(), lambda v: E.Not(E.LE(v["a"], v["b"])))
    outputs["and_or"] = (
        Bool(),
        lambda v: E.Or(E.And(E.LT(v["a"], v["b"]), E.NE(v["a"], v["b"])), E.EQ(v["a"], v["b"])),
    )
    lowered = elementwise(f"binops_{t.code}{t.bits}_{lanes}", {"a": t, "b": t}, outputs, lanes)
    a, b = sample(t, rng), sample(t, rng, zeros=True)
    types = {name: out_t for name, (out_t, _) in outputs.items()}
    got = run(lowered, {"a": a, "b": b}, types, level=level)
    for op in OPS:
        np.testing.assert_array_equal(got[op], expected_result(op, a, b, t), err_msg=f"{op} on {t}")
    with np.errstate(invalid="ignore"):
        for op, fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                       "gt": np.greater, "ge": np.greater_equal}.items():  # fmt: skip
            np.testing.assert_array_equal(got[op], fn(a, b), err_msg=f"{op} on {t}")
        np.testing.assert_array_equal(got["select"], np.where(a < b, b, a))
        np.testing.assert_array_equal(got["not_le"], ~(a <= b))
        np.testing.assert_array_equal(got["and_or"], ((a < b) & (a != b)) | (a == b))


@pytest.mark.parametrize("level", ["fast", "full"])
@pytest.mark.parametrize("t", [Int(8), Int(32), Int(64), UInt(8), UInt(32)], ids=str)
def test_division_by_constants(t: Type, level: str, rng) -> None:
    """Constant divisors take special paths (shifts, masks, sdiv + fixup): same results."""
    divisors = [1, 2, 3, 4, 7, 8, 16, 0] + ([-1, -2, -3, -8, t.min()] if t.is_int() else [t.max()])
    outputs = {}
    for k, d in enumerate(divisors):
        c = Broadcast(E.Const(t, d), 8)
        outputs[f"q{k}"] = (t, lambda v, c=c: E.Div(v["a"], c))
        outputs[f"r{k}"] = (t, lambda v, c=c: E.Mod(v["a"], c))
    lowered = elementwise(f"constdiv_{t.code}{t.bits}", {"a": t}, outputs, lanes=8)
    a = sample(t, rng)
    got = run(lowered, {"a": a}, {name: t for name in outputs}, level=level)
    for k, d in enumerate(divisors):
        b = np.full_like(a, d)
        with np.errstate(all="ignore"):
            quotient, remainder = divide(a, b, t), modulo(a, b, t)
        np.testing.assert_array_equal(got[f"q{k}"], quotient, err_msg=f"{t} / {d}")
        np.testing.assert_array_equal(got[f"r{k}"], remainder, err_msg=f"{t} % {d}")


def test_scalar_arguments_broadcast_into_vectors(rng) -> None:
    t = Int(16)
    outputs = {"out": (t, lambda v: E.Add(E.Mul(v["a"], v["k"]), v["flag_value"]))}
    outputs["sel"] = (t, lambda v: E.Select(v["flag"], v["a"], Broadcast(E.Const(t, 0), 8)))
    lowered = elementwise(
        "broadcast_scalars", {"a": t}, outputs, lanes=8, scalars={"k": t, "flag_value": t, "flag": Bool()}
    )
    a = sample(t, rng)
    got = run(lowered, {"a": a}, {"out": t, "sel": t}, k=3, flag_value=-7, flag=True)
    np.testing.assert_array_equal(got["out"], (a * np.int16(3) + np.int16(-7)).astype(np.int16))
    np.testing.assert_array_equal(got["sel"], a)
    got = run(lowered, {"a": a}, {"out": t, "sel": t}, k=3, flag_value=-7, flag=False)
    np.testing.assert_array_equal(got["sel"], np.zeros_like(a))
