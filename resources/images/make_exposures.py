"""Makes exposure_dark.png and exposure_bright.png, the two inputs of the exposure_fusion
example: an under- and an over-exposed shot of the bundled photograph chelsea.png,
simulated in linear light.

Each is (v ** 2.2 * gain) ** (1 / 2.2) clipped to [0, 1] and rounded to u8, with gain
1/4 (two stops under) and 4 (two stops over): the dark one keeps the highlights, the
bright one the shadows, and each loses what the other keeps. Deterministic.
"""

from __future__ import annotations

from pathlib import Path

import imageio.v3 as iio
import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "chelsea.png"
GAMMA = 2.2
EXPOSURES = {"exposure_dark.png": 0.25, "exposure_bright.png": 4.0}


def exposed(photo: np.ndarray, gain: float) -> np.ndarray:
    """The u8 photograph as if shot with `gain` times the light."""
    linear = (photo.astype(np.float64) / 255.0) ** GAMMA * gain
    return np.rint(np.clip(linear, 0.0, 1.0) ** (1.0 / GAMMA) * 255.0).astype(np.uint8)


if __name__ == "__main__":
    photo = iio.imread(SOURCE)[..., :3]
    for name, gain in EXPOSURES.items():
        iio.imwrite(HERE / name, exposed(photo, gain))
        print(f"wrote {HERE / name}")
