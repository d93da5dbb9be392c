"""The GPU branch of the Halide learning apps (`g.target().has_gpu_feature()`), compiled
for OpenCL, computes what Halide's CPU build of the same program computes."""

import numpy as np

import pixelweave as pw
from tests.language.test_halide_apps import load


def test_bilateral_grid_gpu_schedule_matches_halide(opencl_device):
    import halide as hl

    data = np.random.default_rng(3).random((48, 64), dtype=np.float32)
    theirs = np.zeros_like(data)
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        load("bilateral_grid", "halide")["bilateral_grid"]().compile_to_callable()(data, 0.1, theirs)
    generator_class = load("bilateral_grid", "pixelweave")["bilateral_grid"]
    with pw.GeneratorContext(pw.Target("host-opencl")):
        generator = generator_class()
        assert generator.target().has_gpu_feature()
        ours = np.zeros_like(data)
        generator.compile_to_callable()(data, 0.1, ours)
    assert "gpu" in generator.scheduled_pipeline().loop_nest("opencl").lower()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=0)
