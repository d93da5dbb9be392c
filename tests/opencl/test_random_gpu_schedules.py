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


# Seeds once refused unclearly: gpu_blocks of a loop a tile had replaced (5051, 5133, 5502,
# 5690, 6483) and storage at an unrolled loop "allocated twice in one GPU kernel" (5833, 6442).
ONCE_UNCLEAR = [5051, 5133, 5502, 5690, 5833, 6442, 6483]


@pytest.mark.parametrize("seed", ONCE_UNCLEAR)
def test_gpu_cases_once_refused_unclearly(seed):
    result = run_case(draw_gpu_case(seed), target="opencl")
    assert result["outcome"] not in FAILURES, f"seed {seed}: {result['outcome']}: {result.get('message')}"
    if seed in (5502, 5833, 6442):  # schedules Halide runs: they must run here too
        assert result["outcome"] == "ok", result
