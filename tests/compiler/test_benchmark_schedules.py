"""The benchmark's pipelines with Halide's own CPU schedules (benchmarks/apps.py) at small
sizes, against the reference evaluator and Halide: the benchmark's table only means
something if these schedules compute the algorithm's image, and run_apps is not run in CI.
Sizes leave partial vectors and strips where the schedule allows them."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw
from benchmarks import apps


def _halide(build, sizes: list[int], inputs: dict) -> np.ndarray:
    out, handles = build(hl)
    for name, value in inputs.items():
        handles[name].set(hl.Buffer(value) if isinstance(value, np.ndarray) and value.ndim else value)
    return np.asarray(out.realize(sizes))


def _check(build, sizes: list[int], inputs: dict, tolerance: float = 0) -> None:
    """tolerance: absolute; for float outputs, relative to the largest output value."""
    out, _ = build(pw)
    pipeline = pw.Pipeline(out)
    ours = pipeline.compile()(sizes, inputs)
    for name, other in (("reference", pipeline.realize_reference(sizes, inputs)), ("Halide", _halide(build, sizes, inputs))):
        assert ours.shape == other.shape
        diff = np.abs(ours.astype(np.float64) - other.astype(np.float64))
        allowed = tolerance * np.abs(other).max() if other.dtype.kind == "f" else tolerance
        assert diff.max() <= allowed, f"{name}: {int((diff > allowed).sum())} values differ, by up to {diff.max()}"


def test_harris_with_halides_schedule(rng):
    """gray stored per strip and computed per row, Ix computed with Iy: 70 columns (a
    shifted last vector) and 45 rows (a shifted last strip). Float sums in another order
    (fused multiply-adds) differ in their last bits."""
    image = rng.random((3, 51, 76)).astype(np.float32)
    _check(apps.build_harris, [70, 45], {"input": image}, tolerance=1e-5)


def test_camera_pipe_with_halides_schedule(rng):
    """Tiles of 64x2 with RoundUp tails, folded per-strip storage, g_r and g_b per row in two
    rows, demosaic and colour correction per tile; the input covers what the RoundUp tails
    read (x < out + 272). The tone curve's pow may round one LUT entry differently."""
    raw = rng.integers(0, 1024, (64 + 48, 128 + 272)).astype(np.uint16)
    _check(apps.build_camera_pipe, [128, 64, 3], {"input": raw}, tolerance=1)


@pytest.mark.parametrize("width, height", [(64, 48), (72, 40)])
def test_bilateral_grid_with_halides_schedule(width, height, rng):
    """blury on the stack; sizes a multiple of the grid's cells and not."""
    image = (rng.integers(0, 64, (height, width)) / 64).astype(np.float32)
    _check(apps.build_bilateral_grid, [width, height], {"input": image, "r_sigma": 0.1}, tolerance=1e-5)
