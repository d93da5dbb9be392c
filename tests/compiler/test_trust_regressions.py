"""Regression tests for the "Trustworthy under every schedule" issue: one test per numbered
case, each comparing compiled output with the reference evaluator (or, for a schedule
Halide refuses, checking that the refusal names the Func, the directive and what is legal)."""

from __future__ import annotations

import numpy as np

import pixelweave as pw


def same(pipeline: pw.Pipeline, sizes: list[int], inputs: dict | None = None) -> np.ndarray:
    ours = pipeline.compile(level="fast")(sizes, inputs or {})
    ref = pipeline.realize_reference(sizes, inputs or {})
    np.testing.assert_array_equal(ours, ref)
    return ours


def test_case1_compute_root_store_root_is_redundant_but_legal():
    x = pw.Var("x")
    g, f = pw.Func("g"), pw.Func("f")
    g[x] = x * 2
    f[x] = g[x] + g[x + 1]
    g.compute_root().store_root()
    out = same(pw.Pipeline(f), [10])
    np.testing.assert_array_equal(out, 4 * np.arange(10) + 2)
