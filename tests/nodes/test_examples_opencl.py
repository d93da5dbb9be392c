"""Every bundled example has an OpenCL schedule that maps its outputs to GPU blocks and
threads, runs on the OpenCL device (pocl's CPU device here) and computes, on a crop of its
samples, exactly what the reference evaluator computes (and so what the CPU build computes,
but for the multiply-adds compiled CPU code fuses)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.nodes.document import read_document
from pixelweave.nodes.node_type import node_type
from pixelweave.nodes.pipeline_build import build_document

from tests.nodes.test_examples import EXAMPLES, assert_agree, centre_crop


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_on_opencl_with_its_gpu_schedule(path):
    doc = read_document(path)
    for n in doc.nodes:
        if getattr(node_type(n.type), "is_output", False):
            assert n.schedules.get("opencl"), f"output `{n.id}` has no OpenCL schedule"
    gpu = build_document(doc, target="opencl", check_lowering=False)
    nest = gpu.loop_nest()
    assert "gpu_block" in nest and "gpu_thread" in nest
    cpu = build_document(doc, check_lowering=False)
    assert "gpu_" not in cpu.loop_nest()
    images = centre_crop(cpu.sample_inputs())
    on_device = gpu.run(images)
    reference = gpu.run(images, target="reference")
    on_cpu = cpu.run(images)
    for node_id, expected in reference.items():
        got = on_device[node_id]
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if np.issubdtype(got.dtype, np.floating):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=node_id)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"{path.stem}: {node_id}")
        assert_agree(on_cpu[node_id], got, f"{path.stem}: {node_id} on the CPU")
