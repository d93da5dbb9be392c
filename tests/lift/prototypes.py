"""VizGen-style Python prototypes: explicit per-pixel loops over NumPy arrays, and the same
algorithms vectorized with NumPy (the `*_numpy` functions) to compare against."""

import math

import numpy as np


def composite(fg, bg, alpha):
    h, w = alpha.shape
    out = np.zeros((h, w, 3))
    for y in range(h):
        for x in range(w):
            a = alpha[y, x]
            for c in range(3):
                out[y, x, c] = fg[y, x, c] * a + bg[y, x, c] * (1.0 - a)
    return out


def composite_numpy(fg, bg, alpha):
    a = alpha[:, :, None]
    return fg * a + bg * (1.0 - a)


def mandelbrot(width, height, zoom):
    out = np.zeros((height, width), dtype=np.int32)
    for y in range(height):
        for x in range(width):
            cr = (x - width * 0.6) / (zoom * width)
            ci = (y - height * 0.5) / (zoom * width)
            zr = 0.0
            zi = 0.0
            count = 0
            for _ in range(24):
                if zr * zr + zi * zi <= 4.0:
                    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                    count = count + 1
            out[y, x] = count
    return out


def mandelbrot_numpy(width, height, zoom):
    x = np.arange(width)[None, :]
    y = np.arange(height)[:, None]
    cr = (x - width * 0.6) / (zoom * width) + 0 * y
    ci = (y - height * 0.5) / (zoom * width) + 0 * x
    zr = np.zeros_like(cr)
    zi = np.zeros_like(cr)
    count = np.zeros(cr.shape, dtype=np.int32)
    for _ in range(24):
        inside = zr * zr + zi * zi <= 4.0
        zr, zi = np.where(inside, zr * zr - zi * zi + cr, zr), np.where(inside, 2.0 * zr * zi + ci, zi)
        count += inside
    return count


def blur(img):
    h, w = img.shape
    tmp = np.zeros((h, w))
    for y in range(h):
        for x in range(1, w - 1):
            tmp[y, x] = (img[y, x - 1] + img[y, x] + img[y, x + 1]) / 3.0
    out = np.zeros((h, w))
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            out[y, x] = (tmp[y - 1, x] + tmp[y, x] + tmp[y + 1, x]) / 3.0
    return out


def blur_numpy(img):
    tmp = np.zeros_like(img)
    tmp[:, 1:-1] = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3.0
    out = np.zeros_like(img)
    out[1:-1, 1:-1] = (tmp[:-2, 1:-1] + tmp[1:-1, 1:-1] + tmp[2:, 1:-1]) / 3.0
    return out


def harris(img):
    h, w = img.shape
    ix = np.zeros((h, w))
    iy = np.zeros((h, w))
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            ix[y, x] = (
                img[y - 1, x + 1]
                + 2.0 * img[y, x + 1]
                + img[y + 1, x + 1]
                - img[y - 1, x - 1]
                - 2.0 * img[y, x - 1]
                - img[y + 1, x - 1]
            ) / 8.0
            iy[y, x] = (
                img[y + 1, x - 1]
                + 2.0 * img[y + 1, x]
                + img[y + 1, x + 1]
                - img[y - 1, x - 1]
                - 2.0 * img[y - 1, x]
                - img[y - 1, x + 1]
            ) / 8.0
    out = np.zeros((h, w))
    for y in range(2, h - 2):
        for x in range(2, w - 2):
            sxx = 0.0
            syy = 0.0
            sxy = 0.0
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    gx = ix[y + dy, x + dx]
                    gy = iy[y + dy, x + dx]
                    sxx += gx * gx
                    syy += gy * gy
                    sxy += gx * gy
            det = sxx * syy - sxy * sxy
            trace = sxx + syy
            out[y, x] = det - 0.04 * trace * trace
    return out


def harris_numpy(img):
    ix = np.zeros_like(img)
    iy = np.zeros_like(img)
    ix[1:-1, 1:-1] = (
        img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:] - img[:-2, :-2] - 2 * img[1:-1, :-2] - img[2:, :-2]
    ) / 8.0
    iy[1:-1, 1:-1] = (
        img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:] - img[:-2, :-2] - 2 * img[:-2, 1:-1] - img[:-2, 2:]
    ) / 8.0

    def box(a):
        s = np.zeros_like(a)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                s[2:-2, 2:-2] += a[2 + dy : a.shape[0] - 2 + dy, 2 + dx : a.shape[1] - 2 + dx]
        return s

    sxx, syy, sxy = box(ix * ix), box(iy * iy), box(ix * iy)
    out = np.zeros_like(img)
    r = sxx * syy - sxy * sxy - 0.04 * (sxx + syy) ** 2
    out[2:-2, 2:-2] = r[2:-2, 2:-2]
    return out


def examples(size: int = 64, seed: int = 0) -> dict:
    """Example arguments per prototype."""
    rng = np.random.default_rng(seed)
    img = rng.uniform(0, 1, (size, size + 8))
    return {
        "composite": (
            rng.uniform(0, 1, (size, size + 8, 3)),
            rng.uniform(0, 1, (size, size + 8, 3)),
            rng.uniform(0, 1, (size, size + 8)),
        ),
        "mandelbrot": (size + 8, size, 0.4),
        "blur": (img,),
        "harris": (img,),
    }


del math
