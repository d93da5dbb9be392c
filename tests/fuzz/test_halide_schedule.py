"""A fuzz case's schedule applied in Halide: what Halide computes under it equals the
reference, and a refused case records whether Halide refuses the schedule too."""

from __future__ import annotations

import numpy as np
from pixelweave.engine.fuzz.cases import draw_case
from pixelweave.engine.fuzz.execute import namespace, run_case
from pixelweave.engine.fuzz.halide_schedule import run_in_halide

import pixelweave as pw


def test_halide_computes_a_scheduled_case_as_the_reference_does():
    case = draw_case(4242000042)  # tiled, fused, vectorized, parallel; Pixelweave computes it
    assert {d.kind for d in case.directives} >= {"tile", "fuse", "vectorize", "parallel", "compute_root"}
    ns = namespace(case)
    inputs = ns["make_inputs"]()
    theirs, error = run_in_halide(ns, case, inputs)
    assert error == "" and theirs is not None
    outputs, _, _, _ = ns["algorithm"](pw)
    reference = pw.Pipeline(outputs).realize_reference(case.sizes, inputs)
    np.testing.assert_allclose(theirs[0], reference, rtol=1e-4, atol=1e-4)


def test_a_refused_case_records_that_halide_refuses_it_too():
    result = run_case(draw_case(4242000024), with_halide=True)  # compute_at a loop not enclosing every use
    assert result["outcome"] == "refused"
    assert result["halide_schedule"] == "refused"
