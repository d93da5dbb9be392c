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


def test_interpolate_gpu_schedule_matches_halide(opencl_device):
    """Ten pyramid levels of `gpu_tile`d kernels (down to 1 x 1 levels, RoundUp tiles of
    the output with unrolled 2 x 2 thread tiles) on a small RGBA image with holes."""
    import halide as hl

    rng = np.random.default_rng(5)
    opaque = (rng.random((1, 40, 56)) < 0.3).astype(np.float32)
    data = np.concatenate([rng.random((3, 40, 56), dtype=np.float32), opaque])
    theirs = np.zeros((3, 40, 56), np.float32)
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        load("interpolate", "halide")["interpolate"]().compile_to_callable()(data, theirs)
    generator_class = load("interpolate", "pixelweave")["interpolate"]
    with pw.GeneratorContext(pw.Target("host-opencl")):
        generator = generator_class()
        assert generator.target().has_gpu_feature()
        ours = np.zeros_like(theirs)
        generator.compile_to_callable()(data, ours)
    assert "gpu" in generator.scheduled_pipeline().loop_nest("opencl").lower()
    assert np.isfinite(theirs).all() and theirs.std() > 0.05
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=0)


def test_local_laplacian_gpu_schedule_matches_halide(opencl_device):
    """Eight levels of `gpu_tile`d pyramids (tiles of 16 then 2) on a small 16-bit RGB
    image. Halide's CPU schedule splits rows by 64, so the image has 64 rows. As on the
    CPU (tests/language/test_halide_apps.py), `u16(...)` of floats that differ in the last
    bits may land one apart."""
    import halide as hl

    data = (np.random.default_rng(11).random((3, 64, 48)) * 65535).astype(np.uint16)
    levels, alpha, beta = 8, 1.0, 1.0
    arguments = (data, levels, alpha / (levels - 1), beta)
    theirs = np.zeros_like(data)
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        load("local_laplacian", "halide")["local_laplacian"]().compile_to_callable()(*arguments, theirs)
    generator_class = load("local_laplacian", "pixelweave")["local_laplacian"]
    with pw.GeneratorContext(pw.Target("host-opencl")):
        generator = generator_class()
        assert generator.target().has_gpu_feature()
        ours = np.zeros_like(data)
        generator.compile_to_callable()(*arguments, ours)
    assert "gpu" in generator.scheduled_pipeline().loop_nest("opencl").lower()
    assert theirs.std() > 1000
    difference = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    assert difference.max() <= 1
    assert np.count_nonzero(difference) < 0.02 * difference.size
