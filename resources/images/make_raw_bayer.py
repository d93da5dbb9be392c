"""Makes raw_bayer.png, the sample raw sensor image of the camera_pipeline example, from the
bundled photograph coffee.png, by running a camera pipeline backwards:

1. sRGB u8 to linear light: v ** 2.2 (the example's Gamma node applies v ** (1 / 2.2));
2. linear sRGB to "camera" colour: the inverse of CAMERA_TO_SRGB, the example's colour
   matrix (a less saturated mix, as a real sensor's colour is);
3. divided by WHITE_BALANCE, the example's white balance gains (a green-tinted raw);
4. an RGGB Bayer mosaic: red at even x and even y, blue at odd x and odd y, green elsewhere;
5. quantized to 12 bits (0..4095), with HOT_PIXELS pixels stuck at 4095 (deterministic
   places), and stored as a 16-bit gray PNG with the 12 bits in the high bits (value * 16,
   so that 12-bit white 4095 is 65520, full scale to within 0.03 %).

Run `python resources/images/make_raw_bayer.py` from anywhere; the result is the same on
every run (no random state besides a seeded generator).
"""

from __future__ import annotations

from pathlib import Path

import imageio.v3 as iio
import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "coffee.png"
TARGET = HERE / "raw_bayer.png"

CAMERA_TO_SRGB = np.array([[1.65, -0.45, -0.20], [-0.25, 1.50, -0.25], [-0.05, -0.55, 1.60]])
WHITE_BALANCE = np.array([1.9, 1.0, 1.5])  # red, green, blue gains the pipeline applies
GAMMA = 2.2
BITS = 12
HOT_PIXELS = 60
SEED = 20240601


def mosaic_rggb(planar: np.ndarray) -> np.ndarray:
    """A (3, h, w) image sampled through an RGGB filter array: (h, w)."""
    _, h, w = planar.shape
    out = np.empty((h, w), dtype=planar.dtype)
    out[0::2, 0::2] = planar[0, 0::2, 0::2]
    out[0::2, 1::2] = planar[1, 0::2, 1::2]
    out[1::2, 0::2] = planar[1, 1::2, 0::2]
    out[1::2, 1::2] = planar[2, 1::2, 1::2]
    return out


def make_raw() -> np.ndarray:
    """The raw mosaic as u16 (h, w)."""
    photo = iio.imread(SOURCE)[..., :3].astype(np.float64) / 255.0
    linear = np.moveaxis(photo, -1, 0) ** GAMMA
    camera = np.einsum("ij,jhw->ihw", np.linalg.inv(CAMERA_TO_SRGB), linear)
    camera = np.clip(camera / WHITE_BALANCE[:, None, None], 0.0, 1.0)
    top = 2**BITS - 1
    raw = np.rint(mosaic_rggb(camera) * top).astype(np.uint16)
    rng = np.random.default_rng(SEED)
    h, w = raw.shape
    raw[rng.integers(0, h, HOT_PIXELS), rng.integers(0, w, HOT_PIXELS)] = top
    return raw << (16 - BITS)


if __name__ == "__main__":
    iio.imwrite(TARGET, make_raw())
    print(f"wrote {TARGET}")
