"""Casts between every pair of types (float -> int as x86 and NumPy do it) and Halide's shifts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Int, Type, UInt
from pixelweave.engine.reference import cast_array, shift
from pixelweave.engine.stmt import Broadcast

from tests.codegen.builders import elementwise
from tests.codegen.test_arithmetic import FLOAT_TYPES, INT_TYPES, LANES_AND_LEVELS, N, run, sample

ALL_TYPES = [Bool(), *INT_TYPES, *FLOAT_TYPES]


def type_id(t: Type) -> str:
    return "bool" if t.is_bool() else f"{t.code}{t.bits}"


def integer_indefinite_cast(values: np.ndarray, t: Type) -> np.ndarray:
    """What x86 and NumPy give: truncate toward zero into int32 (int64 for u32 and 64-bit
    types); NaN and out-of-range values become that type's minimum; then wrap to t."""
    wide = 64 if t.bits > 32 or (t.is_uint() and t.bits == 32) else 32
    out = []
    for x in values.tolist():
        if math.isnan(x) or not -(2.0 ** (wide - 1)) <= x < 2.0 ** (wide - 1):
            v = -(2 ** (wide - 1))
        else:
            v = math.trunc(x)
        v &= (1 << t.bits) - 1
        if t.is_int() and v >= 1 << (t.bits - 1):
            v -= 1 << t.bits
        out.append(v)
    return np.array(out, dtype=t.numpy())


def expected_cast(a: np.ndarray, src: Type, dst: Type) -> np.ndarray:
    if src.is_float() and dst.is_integer() and not dst.is_bool():
        return integer_indefinite_cast(a, dst)
    with np.errstate(all="ignore"):
        return cast_array(a, dst)


@pytest.mark.parametrize(("lanes", "level"), [(1, "fast"), (8, "fast"), (8, "full")])
@pytest.mark.parametrize("src", ALL_TYPES, ids=type_id)
def test_casts_to_every_type(src: Type, lanes: int, level: str, rng) -> None:
    outputs = {f"to_{type_id(d)}": (d, lambda v, d=d: E.Cast(d.with_lanes(lanes), v["a"])) for d in ALL_TYPES}
    lowered = elementwise(f"cast_{type_id(src)}_{lanes}", {"a": src}, outputs, lanes)
    if src.is_bool():
        a = rng.integers(0, 2, N).astype(bool)
    else:
        a = sample(src, rng)
        if src.is_float():
            edges = [2.0**31, 2.0**31 - 128, -(2.0**31), 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 255.9, -128.9, 127.5]
            a[-len(edges) :] = np.array(edges, dtype=a.dtype)
    got = run(lowered, {"a": a}, {name: d for name, (d, _) in outputs.items()}, level=level)
    for d in ALL_TYPES:
        np.testing.assert_array_equal(got[f"to_{type_id(d)}"], expected_cast(a, src, d), err_msg=f"{src} -> {d}")


SHIFT_TYPES = [Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)]


def shift_amounts(t: Type, rng) -> np.ndarray:
    bits = t.bits
    lo = -bits - 3 if t.is_int() else 0
    values = rng.integers(lo, bits + 4, N)
    extremes = [t.max(), bits, bits - 1, bits + 1, 0, 1] + ([t.min() + 1, -bits, -bits + 1, -1] if t.is_int() else [])
    if t.bits == 64 and t.is_uint():
        extremes[0] = 2**63 - 1  # the reference reads amounts as int64
    values[: len(extremes)] = extremes
    return values.astype(t.numpy())


def exact_shift(op: str, a: np.ndarray, b: np.ndarray, t: Type) -> np.ndarray:
    """The specification in infinite precision: a negative amount shifts the other way, the
    result is truncated to t (so 0 for big left shifts, sign fill for big signed right ones).

    engine.reference.shift agrees except for 64-bit types shifted by >= 64, where it clamps
    the amount to 63 (a << 63 instead of 0, u >> 63 instead of 0); the test checks both.
    """
    out = []
    for x, amount in zip(a.tolist(), b.tolist(), strict=True):
        left = (amount >= 0) == (op == "shift_left")
        magnitude = min(abs(amount), t.bits + 1)
        r = x << magnitude if left else x >> magnitude
        r &= (1 << t.bits) - 1
        if t.is_int() and r >= 1 << (t.bits - 1):
            r -= 1 << t.bits
        out.append(r)
    return np.array(out, dtype=t.numpy())


@pytest.mark.parametrize(("lanes", "level"), LANES_AND_LEVELS)
@pytest.mark.parametrize("t", SHIFT_TYPES, ids=type_id)
def test_shifts_with_big_and_negative_amounts(t: Type, lanes: int, level: str, rng) -> None:
    amount_types = [Int(t.bits), UInt(t.bits)]
    outputs = {}
    for at in amount_types:
        for name in ("shift_left", "shift_right"):
            outputs[f"{name}_{at.code}"] = (
                t,
                lambda v, name=name, at=at: E.Call(t.with_lanes(lanes), name, (v["a"], v[f"b_{at.code}"]), "intrinsic"),
            )
    for k, amount in enumerate([0, 1, 3, t.bits - 1, t.bits, t.bits + 5, -1, -3, -t.bits]):
        if amount < 0 and t.is_uint():
            continue
        c = E.Const(Int(t.bits), amount)
        c = Broadcast(c, lanes) if lanes > 1 else c
        for name in ("shift_left", "shift_right"):
            outputs[f"{name}_const{k}"] = (
                t,
                lambda v, name=name, c=c: E.Call(t.with_lanes(lanes), name, (v["a"], c), "intrinsic"),
            )
    inputs = {"a": t, "b_int": Int(t.bits), "b_uint": UInt(t.bits)}
    lowered = elementwise(f"shift_{type_id(t)}_{lanes}", inputs, outputs, lanes)
    a = sample(t, rng)
    amounts = {f"b_{at.code}": shift_amounts(at, rng) for at in amount_types}
    got = run(lowered, {"a": a, **amounts}, {name: t for name in outputs}, level=level)
    for name in outputs:
        op = "shift_left" if name.startswith("shift_left") else "shift_right"
        if "const" in name:
            k = int(name.split("const")[1])
            amount = [0, 1, 3, t.bits - 1, t.bits, t.bits + 5, -1, -3, -t.bits][k]
            b = np.full(N, amount, dtype=np.int64)
        else:
            b = amounts[f"b_{name.rsplit('_', 1)[1]}"]
        np.testing.assert_array_equal(got[name], exact_shift(op, a, b, t), err_msg=f"{name} on {t}")
        with np.errstate(all="ignore"):
            reference = shift(op, a, b, t)
        agrees = np.ones(N, dtype=bool)
        if t.bits == 64:  # the reference clamps amounts to 63
            agrees = np.abs(b.astype(np.int64)) < 64
        np.testing.assert_array_equal(got[name][agrees], reference[agrees], err_msg=f"{name} on {t}")
