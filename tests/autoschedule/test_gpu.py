"""The analytic scheduler's GPU mapping (target 'opencl'): every Func it does not inline
becomes a kernel tiled into blocks and threads (Funcs with updates stay on the CPU), and
the pipeline computes the reference evaluator's image on the OpenCL device, at sizes that
leave partial work-groups at the edges."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.autoschedule import auto_schedule

import pixelweave as pw
from benchmarks import apps
from tests.opencl.helpers import assert_matches_reference


@pytest.fixture(scope="module", autouse=True)
def opencl_device():
    from pixelweave.engine.runtime.opencl_device import select_device

    return select_device()


def _estimated(build, sizes, input_shape):
    out, handles = build(pw, schedule=False)
    out.set_estimates([(0, s) for s in sizes])
    handles["input"].set_estimates([(0, s) for s in reversed(input_shape)])
    return pw.Pipeline(out), handles


def test_blur_maps_to_blocks_and_threads_and_matches_the_reference(rng):
    pipeline, _ = _estimated(apps.build_blur, [45, 37], (39, 47))
    result = auto_schedule(pipeline, target="opencl")
    assert "blur_y.gpu_tile(x, y, x_t, y_t, 16, 16)" in result.text
    assert "gpu" in pipeline.loop_nest("opencl").lower()
    image = rng.integers(0, 4000, (39, 47)).astype(np.uint16)
    assert_matches_reference(pipeline, [45, 37], {"input": image})


def test_channels_become_a_block_dimension(rng):
    pipeline, _ = _estimated(apps.build_unsharp, [45, 37, 3], (3, 37, 45))
    result = auto_schedule(pipeline, target="opencl")
    assert ".gpu_blocks(c)" in result.text
    image = rng.random((3, 37, 45), dtype=np.float32) * 0.9 + 0.1
    assert_matches_reference(pipeline, [45, 37, 3], {"input": image}, exact=False)


def test_funcs_with_updates_stay_on_the_cpu_beside_gpu_kernels(rng):
    out, handles = apps.build_bilateral_grid(pw, schedule=False)
    out.set_estimates([(0, 45), (0, 37)])
    handles["input"].set_estimates([(0, 45), (0, 37)])
    handles["r_sigma"].set_estimate(0.1)
    pipeline = pw.Pipeline(out)
    result = auto_schedule(pipeline, target="opencl")
    histogram = [line for line in result.text.splitlines() if line.startswith("histogram")]
    assert histogram == ["histogram.compute_root()"]
    assert "gpu_tile" in result.text
    image = rng.random((37, 45), dtype=np.float32)
    assert_matches_reference(pipeline, [45, 37], {"input": image, "r_sigma": 0.1}, exact=False)


def test_the_tuner_and_other_targets_are_refused():
    pipeline, _ = _estimated(apps.build_blur, [45, 37], (39, 47))
    with pytest.raises(pw.ScheduleError, match="the tuner measures CPU schedules only"):
        auto_schedule(pipeline, target="opencl", method="tune", budget_s=1)
    with pytest.raises(pw.ScheduleError, match="target 'host' or 'opencl', got 'cuda'"):
        auto_schedule(pipeline, target="cuda")
