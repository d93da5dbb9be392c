"""Property test: random pipelines with random GPU schedules equal the reference on OpenCL.

The fuzzer's random pipelines (stencils, resampling, point operations, selects, gathers,
reductions, scans over five boundary conditions, uint16 or float32) with their CPU
schedule mapped to the GPU (engine/fuzz/gpu.py). Each case must run and equal the reference
evaluator, or be refused with an error that names one of its Funcs; a wrong image, a crash
or an unclear error fails. Bounded: 16 fixed seeds here; longer campaigns are scripts.
"""

import pytest
from pixelweave.engine.fuzz.execute import FAILURES, run_case
from pixelweave.engine.fuzz.gpu import draw_gpu_case

pytestmark = pytest.mark.usefixtures("opencl_device")


@pytest.mark.parametrize("seed", range(16))
def test_random_pipeline_with_a_random_gpu_schedule(seed):
    case = draw_gpu_case(seed)
    assert any(d.kind.startswith("gpu_") for d in case.directives)
    result = run_case(case, target="opencl")
    assert result["outcome"] not in FAILURES, f"seed {seed}: {result['outcome']}: {result.get('message')}"


def test_most_random_gpu_cases_run():
    """Refusals are allowed, but most cases must really run on the device."""
    outcomes = [run_case(draw_gpu_case(seed), target="opencl")["outcome"] for seed in range(100, 106)]
    assert outcomes.count("ok") >= 3, outcomes
