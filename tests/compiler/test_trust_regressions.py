"""Regression tests for the "Trustworthy under every schedule" issue: one test per numbered
case, each comparing compiled output with the reference evaluator (or, for a schedule
Halide refuses, checking that the refusal names the Func, the directive and what is legal)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError

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


def test_case2_update_splits_refuse_tails_that_change_the_result():
    x = pw.Var("x")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f = pw.Func("f")
    f[x] = x
    f[x] = f[x] * 2 + 1
    with pytest.raises(
        ScheduleError,
        match=r"split of x in update 0 of Func `f` cannot use TailStrategy.ShiftInwards: it computes some points "
        r"twice.*legal tail strategies here are RoundUp, GuardWithIf and Auto",
    ):
        f.update(0).split(x, xo, xi, 4, pw.TailStrategy.ShiftInwards)
    total = pw.Func("total")
    r = pw.RDom([(0, 10)])
    total[x] = 0
    total[x] += r.x
    ro, ri = pw.RVar("ro"), pw.RVar("ri")
    for tail in (pw.TailStrategy.RoundUp, pw.TailStrategy.ShiftInwards):
        with pytest.raises(
            ScheduleError,
            match=r"split of r\d*\$x in update 0 of Func `total` cannot use TailStrategy.\w+: .* is a reduction "
            r"variable.*legal tail strategies for it are GuardWithIf and Auto",
        ):
            total.update(0).split(r.x, ro, ri, 4, tail)


@pytest.mark.parametrize("tail", [pw.TailStrategy.Auto, pw.TailStrategy.RoundUp, pw.TailStrategy.GuardWithIf])
def test_case2_legal_update_tails_compute_the_reference(tail):
    x = pw.Var("x")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f, out = pw.Func("f"), pw.Func("out")
    f[x] = x
    f[x] = f[x] * 2 + 1
    out[x] = f[x]
    f.compute_root().update(0).split(x, xo, xi, 4, tail)
    np.testing.assert_array_equal(same(pw.Pipeline(out), [10]), 2 * np.arange(10) + 1)


@pytest.mark.parametrize("tail", [pw.TailStrategy.Auto, pw.TailStrategy.GuardWithIf])
def test_case2_rvar_split_counts_each_iteration_once(tail):
    x = pw.Var("x")
    total = pw.Func("total")
    r = pw.RDom([(0, 10)])
    total[x] = 0
    total[x] += r.x + x
    ro, ri = pw.RVar("ro"), pw.RVar("ri")
    total.update(0).split(r.x, ro, ri, 4, tail)
    np.testing.assert_array_equal(same(pw.Pipeline(total), [3]), 45 + 10 * np.arange(3))
