"""Vector division and remainder by a run-time value in every lane (llvm_invariant_divide.py):
the multiply-high method gives the reference evaluator's Euclidean results, x / 0 == 0 and
x % 0 == 0, for every integer type of up to 32 bits, every kind of divisor (0, 1, -1,
negative, powers of two, the type's extremes) and dividends that cover the whole range,
over sizes that leave a vector tail."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.engine.lower import lower
from pixelweave.engine.reference import realize_reference
from pixelweave.engine.runtime.jit import compile_pipeline

import pixelweave as pw

TYPES = [pw.Int(8), pw.UInt(8), pw.Int(16), pw.UInt(16), pw.Int(32), pw.UInt(32)]


def _divisors(t) -> list[int]:
    info = np.iinfo(t.numpy())
    picks = [0, 1, 2, 3, 7, 255, info.max, info.max - 1, info.max // 2 + 1, info.max // 2 + 2]
    if t.is_int():
        picks += [-1, -2, -3, -7, info.min, info.min + 1]
    return [p for p in picks if info.min <= p <= info.max]


def _dividends(t, rng) -> np.ndarray:
    info = np.iinfo(t.numpy())
    edges = [info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max]
    edges = [v for v in edges if info.min <= v <= info.max]
    random = rng.integers(info.min, info.max, 77, dtype=np.int64, endpoint=True)
    return np.concatenate([np.array(edges, np.int64), random]).astype(t.numpy())


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_division_by_a_broadcast_parameter_matches_the_reference(t, rng) -> None:
    values = _dividends(t, rng)
    a = pw.ImageParam(t, 1, "a")
    d = pw.Param(t, "d", 1)
    x = pw.Var("x")
    quotient, remainder = pw.Func("quotient"), pw.Func("remainder")
    quotient[x] = a[x] / d
    remainder[x] = a[x] % d
    quotient.vectorize(x, 16)
    remainder.vectorize(x, 8)
    pipelines = [pw.Pipeline(quotient), pw.Pipeline(remainder)]
    for divisor in _divisors(t):
        inputs = {"a": values, "d": divisor}
        for pipeline in pipelines:
            got = pipeline.realize([len(values)], inputs)
            want = realize_reference(pipeline, [len(values)], inputs)
            np.testing.assert_array_equal(got, want, err_msg=f"{pipeline.outputs[0].name()} by {divisor}")
    for pipeline in pipelines:
        _assert_no_lane_by_lane_division(pipeline)


def _assert_no_lane_by_lane_division(pipeline: pw.Pipeline) -> None:
    """The vectors are divided by multiply-high, not by LLVM's vector division (one scalar
    division per lane on x86)."""
    lowered = lower(pipeline, "host", name="divide_check").lowered
    ir = compile_pipeline(lowered, cache=False).llvm_ir
    vector_divisions = [line for line in ir.splitlines() if re.search(r"= [su](div|rem) <", line)]
    assert not vector_divisions, vector_divisions[:3]


def test_division_by_a_computed_broadcast_in_a_2d_loop(rng) -> None:
    """A divisor computed from a parameter (2 * radius + 1, as box filters write it), with
    negative sums, in a vectorized and parallel 2-D loop."""
    a = pw.ImageParam(pw.Int(32), 2, "a")
    radius = pw.Param(pw.Int(32), "radius", 1)
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = a[x, y] / (2 * radius + 1) + a[x, y] % (2 * radius + 1)
    f.vectorize(x, 8).parallel(y)
    data = rng.integers(-100000, 100000, (13, 37), dtype=np.int32)
    for r in (0, 1, 4, 100, -3):
        inputs = {"a": data, "radius": r}
        got = pw.Pipeline(f).realize([37, 13], inputs)
        np.testing.assert_array_equal(got, realize_reference(pw.Pipeline(f), [37, 13], inputs))
    _assert_no_lane_by_lane_division(pw.Pipeline(f))
