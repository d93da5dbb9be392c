"""Every pipeline of the engine's Halide corpus, compiled, equals the reference evaluator:
once with the default schedule (everything inline but reductions) and once with every
Func computed at the root, vectorized and parallel."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw
from tests.engine.test_corpus import EXACT_FLOAT_CASES, PIPELINE_CASES, SMALL_CASES

ALL_CASES = [pytest.param(*case.values[:3], id=case.id) for case in SMALL_CASES + EXACT_FLOAT_CASES + PIPELINE_CASES]


def compare(pipeline: pw.Pipeline, sizes: list[int], inputs: dict) -> None:
    ours = pipeline.compile(level="fast")(sizes, inputs)
    ref = pipeline.realize_reference(sizes, inputs)
    ours, ref = (ours, ref) if isinstance(ref, list) else ([ours], [ref])
    for a, b in zip(ours, ref, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


def root_vectorized(pipeline: pw.Pipeline) -> None:
    for f in pipeline.funcs:
        args = f.args()
        if f not in pipeline.outputs:
            f.compute_root()
        f.vectorize(args[0], 4)
        if len(args) > 1:
            f.parallel(args[-1])


@pytest.mark.parametrize(("build", "sizes", "inputs"), ALL_CASES)
def test_default_schedule(build, sizes, inputs):
    outputs, _ = build(pw)
    compare(pw.Pipeline(outputs if isinstance(outputs, list) else [outputs]), sizes, inputs)


@pytest.mark.parametrize(("build", "sizes", "inputs"), ALL_CASES)
def test_root_vectorized_parallel(build, sizes, inputs):
    outputs, _ = build(pw)
    pipeline = pw.Pipeline(outputs if isinstance(outputs, list) else [outputs])
    root_vectorized(pipeline)
    try:
        pipeline.loop_nest()
    except ScheduleError as err:
        # Computing a lookup table at the root needs bounds on the values that index it.
        assert "cannot bound the region" in str(err)
        return
    compare(pipeline, sizes, inputs)
