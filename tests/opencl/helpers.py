"""Comparing OpenCL-compiled pipelines with the reference evaluator."""

import numpy as np

import pixelweave as pw


def assert_matches_reference(pipeline: pw.Pipeline, sizes, inputs, exact: bool = True):
    """Compile for OpenCL, run, and compare every output with the reference evaluator."""
    fn = pipeline.compile(target="opencl")
    ours = fn(sizes, inputs)
    ref = pipeline.realize_reference(sizes, inputs)
    ours_list = ours if isinstance(ours, list) else [ours]
    ref_list = ref if isinstance(ref, list) else [ref]
    for a, b in zip(ours_list, ref_list, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact or a.dtype.kind != "f":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    return fn
