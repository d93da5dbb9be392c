"""Shared test settings: sample images and a deterministic random generator."""

import gc
from collections.abc import Iterator
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "resources" / "images"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def camera() -> np.ndarray:
    """The 512x512 gray sample photograph, uint8 (h, w)."""
    return iio.imread(IMAGES / "camera.png")


@pytest.fixture(scope="session")
def astronaut_planar() -> np.ndarray:
    """The 512x512 RGB sample photograph as planar uint8 (3, h, w)."""
    return np.ascontiguousarray(np.moveaxis(iio.imread(IMAGES / "astronaut.png")[..., :3], -1, 0))


@pytest.fixture
def default_gc_thresholds() -> Iterator[None]:
    """Python's default collector thresholds for the test, the process's own restored after."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)
