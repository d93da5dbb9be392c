"""The same four pipelines written the way a NumPy or OpenCV user would, for comparison."""

from __future__ import annotations

import math

import numpy as np


def blur_numpy(a: np.ndarray) -> np.ndarray:
    """3x3 box blur of u16 (output 2 smaller), with Halide's u16 wrap-around arithmetic."""
    bx = (a[:, :-2] + a[:, 1:-1] + a[:, 2:]) // 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) // 3


def blur_opencv(a: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.blur(a, (3, 3))[1:-1, 1:-1]


def _gaussian_taps(sigma: float = 1.5) -> list[float]:
    return [math.exp(-i * i / (2 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma) for i in range(4)]


def unsharp_numpy(planar: np.ndarray) -> np.ndarray:
    k = _gaussian_taps()
    gray = 0.299 * planar[0] + 0.587 * planar[1] + 0.114 * planar[2]
    p = np.pad(gray, 3, mode="edge")
    h, w = gray.shape
    by = k[0] * p[3 : 3 + h, :] + sum(k[i] * (p[3 - i : 3 - i + h, :] + p[3 + i : 3 + i + h, :]) for i in (1, 2, 3))
    bx = k[0] * by[:, 3 : 3 + w] + sum(k[i] * (by[:, 3 - i : 3 - i + w] + by[:, 3 + i : 3 + i + w]) for i in (1, 2, 3))
    ratio = (2 * gray - bx) / gray
    return (ratio[None] * planar).astype(np.float32)


def unsharp_opencv(planar: np.ndarray) -> np.ndarray:
    import cv2

    gray = 0.299 * planar[0] + 0.587 * planar[1] + 0.114 * planar[2]
    blurred = cv2.GaussianBlur(gray, (7, 7), 1.5, borderType=cv2.BORDER_REPLICATE)
    return ((2 * gray - blurred) / gray)[None] * planar


def harris_numpy(planar: np.ndarray) -> np.ndarray:
    gray = 0.299 * planar[0] + 0.587 * planar[1] + 0.114 * planar[2]
    g = gray
    ix = (-g[:-2, :-2] + g[:-2, 2:] - 2 * g[1:-1, :-2] + 2 * g[1:-1, 2:] - g[2:, :-2] + g[2:, 2:]) / 12
    iy = (-g[:-2, :-2] + g[2:, :-2] - 2 * g[:-2, 1:-1] + 2 * g[2:, 1:-1] - g[:-2, 2:] + g[2:, 2:]) / 12

    def box3(m: np.ndarray) -> np.ndarray:
        s = m[:, :-2] + m[:, 1:-1] + m[:, 2:]
        return s[:-2] + s[1:-1] + s[2:]

    sxx, syy, sxy = box3(ix * ix), box3(iy * iy), box3(ix * iy)
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    return (det - 0.04 * trace * trace)[1:-1, 1:-1]


def harris_opencv(planar: np.ndarray) -> np.ndarray:
    import cv2

    gray = 0.299 * planar[0] + 0.587 * planar[1] + 0.114 * planar[2]
    return cv2.cornerHarris(gray, 3, 3, 0.04)


def bilateral_grid_numpy(image: np.ndarray, r_sigma: float = 0.1, s: int = 8) -> np.ndarray:
    """The bilateral grid with NumPy: splat with np.add.at, blur, trilinear slice (the same
    algorithm; at the image border it splats edge pixels once where Halide repeats them)."""
    h, w = image.shape
    gh, gw = (h + s - 1) // s + 1, (w + s - 1) // s + 1
    nz = int(1 / r_sigma + 0.5) + 1
    ys, xs = np.mgrid[0:h, 0:w]
    val = np.clip(image, 0, 1)
    zi = (val / r_sigma + 0.5).astype(np.int64) + 2
    gy, gx = (ys + s // 2) // s, (xs + s // 2) // s
    grid = np.zeros((2, nz + 4, gh + 4, gw + 4), np.float32)
    np.add.at(grid[0], (zi, gy + 2, gx + 2), val)
    np.add.at(grid[1], (zi, gy + 2, gx + 2), 1.0)
    for axis in (1, 2, 3):
        g = np.pad(grid, [(0, 0)] + [(2, 2) if a == axis else (0, 0) for a in (1, 2, 3)], mode="edge")
        n = grid.shape[axis]
        shifted = [tuple(slice(None) if a != axis else slice(2 + o, 2 + o + n) for a in range(4)) for o in range(-2, 3)]
        grid = sum(c * g[window] for window, c in zip(shifted, (1, 4, 6, 4, 1), strict=True))
    zv = val / r_sigma
    z0 = zv.astype(np.int64)
    zf = (zv - z0).astype(np.float32)
    xf, yf = (xs % s) / s, (ys % s) / s
    x0, y0 = xs // s + 2, ys // s + 2
    z0 = z0 + 2

    def at(c: int, dz: int, dy: int, dx: int) -> np.ndarray:
        return grid[c, z0 + dz, y0 + dy, x0 + dx]

    def trilinear(c: int) -> np.ndarray:
        lo = (at(c, 0, 0, 0) * (1 - xf) + at(c, 0, 0, 1) * xf) * (1 - yf) + (
            at(c, 0, 1, 0) * (1 - xf) + at(c, 0, 1, 1) * xf
        ) * yf
        hi = (at(c, 1, 0, 0) * (1 - xf) + at(c, 1, 0, 1) * xf) * (1 - yf) + (
            at(c, 1, 1, 0) * (1 - xf) + at(c, 1, 1, 1) * xf
        ) * yf
        return lo * (1 - zf) + hi * zf

    return (trilinear(0) / trilinear(1)).astype(np.float32)


def equalize_opencv(gray: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.equalizeHist(gray)
