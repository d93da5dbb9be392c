"""Stencil nodes against OpenCV or NumPy, compiled and through the reference evaluator."""

import math

import cv2
import numpy as np
import pytest
import skimage.feature
from pixelweave.nodes.errors import NodeError

from tests.nodes.harness import assert_same, run_node, run_node_once


@pytest.mark.parametrize("radius", [1, 3])
@pytest.mark.parametrize(
    ("boundary", "border"),
    [("clamp", cv2.BORDER_REPLICATE), ("mirror", cv2.BORDER_REFLECT), ("mirror_interior", cv2.BORDER_REFLECT_101)],
)
def test_box_blur_matches_opencv(astronaut_planar, radius, boundary, border):
    image = astronaut_planar[:, :200, :240]
    out = run_node_once("box_blur", {"image": image}, {"radius": radius, "boundary": boundary})
    n = 2 * radius + 1
    expected = cv2.blur(np.moveaxis(image, 0, -1), (n, n), borderType=border)
    # OpenCV rounds the mean the same way (to nearest); allow one level where its fixed-point differs
    assert np.abs(np.moveaxis(out, 0, -1).astype(int) - expected).max() <= 1


# ---------------------------------------------------------------------------- helpers

BORDERS = {
    "clamp": cv2.BORDER_REPLICATE,
    "mirror": cv2.BORDER_REFLECT,
    "mirror_interior": cv2.BORDER_REFLECT_101,
    "constant": cv2.BORDER_CONSTANT,
}
PADS = {"clamp": "edge", "mirror": "symmetric", "mirror_interior": "reflect", "constant": "constant", "wrap": "wrap"}


@pytest.fixture(scope="module")
def gray_u8(camera):
    return np.ascontiguousarray(camera[100:300, 150:390])


@pytest.fixture(scope="module")
def gray_f32(gray_u8):
    return gray_u8.astype(np.float32) / 255


@pytest.fixture(scope="module")
def colour_u8(astronaut_planar):
    return np.ascontiguousarray(astronaut_planar[:, :200, 40:280])


def interleaved(planar):
    return np.ascontiguousarray(np.moveaxis(planar, 0, -1))


def planar(image):
    return np.ascontiguousarray(np.moveaxis(image, -1, 0)) if image.ndim == 3 else image


def correlate(image, kernel, boundary):
    """NumPy correlation of a 2-D array with a centred kernel (float64), the image padded by
    the boundary mode."""
    kh, kw = kernel.shape
    padded = np.pad(image.astype(np.float64), ((kh // 2,) * 2, (kw // 2,) * 2), mode=PADS[boundary])
    h, w = image.shape
    out = np.zeros((h, w))
    for j in range(kh):
        for i in range(kw):
            out += kernel[j, i] * padded[j : j + h, i : i + w]
    return out


def to_type(values, dtype):
    """Round to nearest and saturate as the nodes do for integer images."""
    if np.issubdtype(dtype, np.floating):
        return values.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


# ---------------------------------------------------------------------------- Gaussian, convolution


@pytest.mark.parametrize("sigma", [0.8, 2.5])
@pytest.mark.parametrize("boundary", ["clamp", "mirror_interior", "constant"])
def test_gaussian_blur_float_matches_opencv(gray_f32, sigma, boundary):
    out = run_node_once("gaussian_blur", {"image": gray_f32}, {"sigma": sigma, "boundary": boundary})
    r = math.ceil(3 * sigma)
    expected = cv2.GaussianBlur(
        gray_f32, (2 * r + 1, 2 * r + 1), sigmaX=sigma, sigmaY=sigma, borderType=BORDERS[boundary]
    )
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=2e-6)


@pytest.mark.parametrize("boundary", ["clamp", "mirror"])
def test_gaussian_blur_u8_colour_matches_opencv_within_one(colour_u8, boundary):
    sigma = 1.5
    out = run_node_once("gaussian_blur", {"image": colour_u8}, {"sigma": sigma, "boundary": boundary})
    expected = cv2.GaussianBlur(
        interleaved(colour_u8), (11, 11), sigmaX=sigma, sigmaY=sigma, borderType=BORDERS[boundary]
    )
    assert out.dtype == np.uint8
    assert np.abs(interleaved(out).astype(int) - expected).max() <= 1


def test_gaussian_blur_u16_matches_opencv_within_one(gray_u8):
    image = gray_u8.astype(np.uint16) * 257
    out = run_node_once("gaussian_blur", {"image": image}, {"sigma": 2.0})
    expected = cv2.GaussianBlur(image, (13, 13), sigmaX=2.0, sigmaY=2.0, borderType=cv2.BORDER_REPLICATE)
    assert out.dtype == np.uint16
    assert np.abs(out.astype(int) - expected).max() <= 1


def test_gaussian_blur_wrap_matches_numpy(gray_f32):
    sigma = 1.0
    out = run_node_once("gaussian_blur", {"image": gray_f32}, {"sigma": sigma, "boundary": "wrap"})
    taps = np.exp(-(np.arange(-3, 4) ** 2) / (2 * sigma**2))
    kernel = np.outer(taps, taps) / taps.sum() ** 2
    np.testing.assert_allclose(out, correlate(gray_f32, kernel, "wrap"), atol=2e-6)


ASYMMETRIC = [[0, 1, 0, -1, 2], [1, 3, 0, 0, 0], [-2, 0, 1, 0, 1]]  # 5 wide, 3 high


@pytest.mark.parametrize("normalize", [False, True])
def test_convolution_correlates_like_filter2d_float(gray_f32, normalize):
    kernel = np.array(ASYMMETRIC, dtype=np.float32)
    out = run_node_once(
        "convolution",
        {"image": gray_f32},
        {"kernel": ASYMMETRIC, "normalize": normalize, "boundary": "mirror_interior"},
    )
    k = kernel / kernel.sum() if normalize else kernel
    expected = cv2.filter2D(gray_f32, cv2.CV_32F, k, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_convolution_u8_colour_rounds_and_saturates_like_filter2d(colour_u8):
    kernel = [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]
    out = run_node_once("convolution", {"image": colour_u8}, {"kernel": kernel, "normalize": True})
    expected = cv2.filter2D(interleaved(colour_u8), -1, np.array(kernel, np.float32), borderType=cv2.BORDER_REPLICATE)
    assert np.abs(interleaved(out).astype(int) - expected).max() <= 1
    assert (interleaved(out) == expected).mean() > 0.999


def test_convolution_zero_sum_kernel_is_not_normalized(gray_u8):
    kernel = [[-1, 0, 1]] * 3
    out = run_node_once("convolution", {"image": gray_u8}, {"kernel": kernel, "normalize": True})
    expected = to_type(correlate(gray_u8, np.array(kernel, float), "clamp"), np.uint8)
    np.testing.assert_array_equal(out, expected)


def test_convolution_rejects_even_kernel(gray_u8):
    with pytest.raises(NodeError, match="odd width and height"):
        run_node("convolution", {"image": gray_u8}, {"kernel": [[1, 1], [1, 1]]})
    with pytest.raises(NodeError, match="larger than the largest allowed kernel"):
        run_node("convolution", {"image": gray_u8}, {"kernel": [[1] * 17]})


# ---------------------------------------------------------------------------- sharpening, emboss


@pytest.mark.parametrize("amount", [0.5, 2.0])
def test_sharpen_matches_numpy(colour_u8, amount):
    out = run_node_once("sharpen", {"image": colour_u8}, {"amount": amount})
    image = colour_u8.astype(np.float64)
    p = np.pad(image, ((0, 0), (1, 1), (1, 1)), mode="edge")
    neighbours = p[:, :-2, 1:-1] + p[:, 2:, 1:-1] + p[:, 1:-1, :-2] + p[:, 1:-1, 2:]
    expected = image + amount * (4 * image - neighbours)
    assert np.abs(out.astype(int) - to_type(expected, np.uint8)).max() <= 1  # f32 vs f64 at .5 ties


def test_sharpen_float_is_not_clamped(gray_f32):
    out = run_node_once("sharpen", {"image": gray_f32}, {"amount": 1.0, "boundary": "mirror"})
    p = np.pad(gray_f32.astype(np.float64), 1, mode="symmetric")
    expected = 5 * p[1:-1, 1:-1] - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert out.min() < 0 and out.max() > 1


@pytest.mark.parametrize(("sigma", "amount", "threshold"), [(2.0, 1.0, 0.0), (1.2, 2.5, 0.03)])
def test_unsharp_mask_float_matches_numpy(gray_f32, sigma, amount, threshold):
    out = run_node_once("unsharp_mask", {"image": gray_f32}, {"sigma": sigma, "amount": amount, "threshold": threshold})
    k = 2 * math.ceil(3 * sigma) + 1
    image = gray_f32.astype(np.float64)
    detail = image - cv2.GaussianBlur(image, (k, k), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
    expected = np.where(np.abs(detail) >= threshold, image + amount * detail, image)
    # pixels whose detail is within float error of the threshold may go either way
    decided = np.abs(np.abs(detail) - threshold) > 1e-5
    assert decided.mean() > 0.99
    np.testing.assert_allclose(out[decided], expected[decided], atol=1e-5)


def test_unsharp_mask_u8_threshold_in_full_scale(colour_u8):
    sigma, amount, threshold = 1.5, 1.5, 10 / 255
    out = run_node_once(
        "unsharp_mask", {"image": colour_u8}, {"sigma": sigma, "amount": amount, "threshold": threshold}
    )
    image = interleaved(colour_u8).astype(np.float64)
    detail = image - cv2.GaussianBlur(image, (11, 11), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
    expected = to_type(np.where(np.abs(detail) >= 10, image + amount * detail, image), np.uint8)
    # the node rounds its taps to multiples of 2^-22, OpenCV computes its own: pixels that near
    # the threshold may go either way, and results within float error of .5 may round apart
    decided = np.abs(np.abs(detail) - 10) > 1e-3
    assert decided.mean() > 0.999
    diff = np.abs(interleaved(out).astype(int) - expected)[decided]
    assert diff.max() <= 1 and (diff == 0).mean() > 0.999


@pytest.mark.parametrize(("direction", "dx", "dy"), [("north_west", -1, -1), ("east", 1, 0), ("south", 0, 1)])
def test_emboss_matches_numpy(gray_f32, gray_u8, direction, dx, dy):
    strength = 2.0
    kernel = np.array([[np.sign(i * dx + j * dy) for i in (-1, 0, 1)] for j in (-1, 0, 1)], float) * strength
    out = run_node_once("emboss", {"image": gray_f32}, {"direction": direction, "strength": strength})
    np.testing.assert_allclose(out, 0.5 + correlate(gray_f32, kernel, "clamp"), atol=1e-5)
    out_u8 = run_node_once("emboss", {"image": gray_u8}, {"direction": direction, "strength": strength})
    np.testing.assert_array_equal(out_u8, to_type(128 + correlate(gray_u8, kernel, "clamp"), np.uint8))


# ---------------------------------------------------------------------------- derivatives


@pytest.mark.parametrize("boundary", ["clamp", "mirror_interior"])
def test_sobel_matches_opencv(gray_u8, boundary):
    outs = run_node("sobel", {"image": gray_u8}, {"boundary": boundary})
    for compiled, reference in outs.values():
        assert_same(compiled, reference)
        assert compiled.dtype == np.float32
    image = gray_u8.astype(np.float32) / 255  # integer inputs are mapped to full scale first
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3, borderType=BORDERS[boundary])
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3, borderType=BORDERS[boundary])
    np.testing.assert_allclose(outs["gx"][0], gx, atol=1e-5)
    np.testing.assert_allclose(outs["gy"][0], gy, atol=1e-5)
    np.testing.assert_allclose(outs["magnitude"][0], np.hypot(gx, gy), atol=1e-5)


def test_sobel_colour_per_channel(colour_u8):
    outs = run_node("sobel", {"image": colour_u8})
    gx = outs["gx"][0]
    assert gx.shape == colour_u8.shape
    for c in range(3):
        expected = cv2.Sobel(colour_u8[c].astype(np.float32) / 255, cv2.CV_32F, 1, 0, borderType=cv2.BORDER_REPLICATE)
        np.testing.assert_allclose(gx[c], expected, atol=1e-5)


def test_laplacian_4_matches_opencv_and_8_matches_numpy(gray_f32):
    out4 = run_node_once("laplacian", {"image": gray_f32}, {"neighbours": "4", "boundary": "mirror_interior"})
    expected4 = cv2.Laplacian(gray_f32, cv2.CV_32F, ksize=1, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(out4, expected4, atol=1e-5)
    out8 = run_node_once("laplacian", {"image": gray_f32}, {"neighbours": "8"})
    kernel = np.ones((3, 3))
    kernel[1, 1] = -8
    np.testing.assert_allclose(out8, correlate(gray_f32, kernel, "clamp"), atol=1e-5)


# ---------------------------------------------------------------------------- rank filters


@pytest.mark.parametrize("node", ["erode", "dilate"])
@pytest.mark.parametrize(("shape", "cv_shape"), [("square", cv2.MORPH_RECT), ("cross", cv2.MORPH_CROSS)])
@pytest.mark.parametrize("radius", [1, 3])
def test_erode_dilate_match_opencv(colour_u8, node, shape, cv_shape, radius):
    out = run_node_once(node, {"image": colour_u8}, {"radius": radius, "shape": shape})
    element = cv2.getStructuringElement(cv_shape, (2 * radius + 1, 2 * radius + 1))
    op = cv2.erode if node == "erode" else cv2.dilate
    expected = op(interleaved(colour_u8), element, borderType=cv2.BORDER_REPLICATE)
    np.testing.assert_array_equal(interleaved(out), expected)


def test_erode_float_with_mirror(gray_f32):
    out = run_node_once("erode", {"image": gray_f32}, {"radius": 2, "boundary": "mirror"})
    expected = cv2.erode(gray_f32, np.ones((5, 5), np.uint8), borderType=cv2.BORDER_REPLICATE)
    np.testing.assert_array_equal(out, expected)  # mirror and replicate agree for a min filter


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_median3x3_matches_opencv(gray_u8, dtype):
    image = gray_u8.astype(dtype) * (257 if dtype == np.uint16 else 1)
    if dtype == np.float32:
        image = image / np.float32(255)
    out = run_node_once("median3x3", {"image": image})
    np.testing.assert_array_equal(out, cv2.medianBlur(image, 3))


def test_median3x3_colour(colour_u8):
    out = run_node_once("median3x3", {"image": colour_u8})
    np.testing.assert_array_equal(interleaved(out), cv2.medianBlur(interleaved(colour_u8), 3))


# ---------------------------------------------------------------------------- Harris corners


def harris_numpy(rgb, k=0.04):
    """Halide's apps/harris in float64: repeat-edge input, luma, Sobel / 12, 3x3 sums."""
    p = np.pad(rgb.astype(np.float64), ((0, 0),) * (rgb.ndim - 2) + ((3, 3), (3, 3)), mode="edge")
    g = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] if rgb.ndim == 3 else p
    ix = (g[:-2, 2:] + 2 * g[1:-1, 2:] + g[2:, 2:] - g[:-2, :-2] - 2 * g[1:-1, :-2] - g[2:, :-2]) / 12
    iy = (g[2:, :-2] + 2 * g[2:, 1:-1] + g[2:, 2:] - g[:-2, :-2] - 2 * g[:-2, 1:-1] - g[:-2, 2:]) / 12

    def box(a):
        return sum(a[j : a.shape[0] - 2 + j, i : a.shape[1] - 2 + i] for j in range(3) for i in range(3))

    sxx, syy, sxy = box(ix * ix), box(iy * iy), box(ix * iy)
    response = sxx * syy - sxy * sxy - k * (sxx + syy) ** 2
    return response[1:-1, 1:-1]


def test_harris_corners_colour_matches_numpy(colour_u8):
    out = run_node_once("harris_corners", {"image": colour_u8})
    assert out.dtype == np.float32 and out.shape == colour_u8.shape[1:]
    expected = harris_numpy(colour_u8 / 255.0)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-5 * scale)
    # corners respond positively, strongly: the strongest responses coincide
    assert np.argmax(out) == np.argmax(expected)


def test_harris_corners_gray_matches_opencv_corner_harris(gray_f32):
    out = run_node_once("harris_corners", {"image": gray_f32}, {"k": 0.04})
    np.testing.assert_allclose(out, harris_numpy(gray_f32), rtol=1e-3, atol=1e-5 * np.abs(out).max())
    # OpenCV scales the Sobel derivatives by 1 / (4 * blockSize) = 1/12 and sums over the block,
    # as Halide's app does: the same response, away from the border (where it pads each stage)
    opencv = cv2.cornerHarris(gray_f32, 3, 3, 0.04, borderType=cv2.BORDER_REPLICATE)
    np.testing.assert_allclose(out[2:-2, 2:-2], opencv[2:-2, 2:-2], rtol=1e-3, atol=1e-5 * np.abs(out).max())


# ---------------------------------------------------------------------------- Canny


def canny_numpy(image, sigma, low, high, steps):
    """The node's algorithm, written plainly: Gaussian (radius ceil(3 sigma), clamped edges),
    Sobel, NMS along the quantized direction, double threshold, `steps` growth steps."""
    h, w = image.shape
    r = math.ceil(3 * sigma)
    taps = np.exp(-(np.arange(-r, r + 1) ** 2) / (2 * sigma**2))
    taps /= taps.sum()
    pad = r + 2
    p = np.pad(image.astype(np.float64), pad, mode="edge")
    n = 2 * r + 1
    rows = sum(taps[k] * p[:, k : p.shape[1] - n + 1 + k] for k in range(n))
    b = sum(taps[k] * rows[k : rows.shape[0] - n + 1 + k, :] for k in range(n))  # pixels -2 .. h+1
    gx = b[:-2, 2:] + 2 * b[1:-1, 2:] + b[2:, 2:] - b[:-2, :-2] - 2 * b[1:-1, :-2] - b[2:, :-2]
    gy = b[2:, :-2] + 2 * b[2:, 1:-1] + b[2:, 2:] - b[:-2, :-2] - 2 * b[:-2, 1:-1] - b[:-2, 2:]
    mag = np.hypot(gx, gy)  # pixels -1 .. h

    def m(dx, dy):
        return mag[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]

    cx, cy = gx[1:-1, 1:-1], gy[1:-1, 1:-1]
    t = math.tan(math.pi / 8)
    along_x = np.abs(cy) <= np.abs(cx) * t
    along_y = ~along_x & (np.abs(cx) <= np.abs(cy) * t)
    falling = ~along_x & ~along_y & (cx * cy > 0)
    rising = ~along_x & ~along_y & ~falling
    ridge = (
        (along_x & (m(0, 0) >= m(1, 0)) & (m(0, 0) >= m(-1, 0)))
        | (along_y & (m(0, 0) >= m(0, 1)) & (m(0, 0) >= m(0, -1)))
        | (falling & (m(0, 0) >= m(1, 1)) & (m(0, 0) >= m(-1, -1)))
        | (rising & (m(0, 0) >= m(1, -1)) & (m(0, 0) >= m(-1, 1)))
    )
    thin = np.where(ridge, m(0, 0), 0)
    weak, edges = thin >= low, thin >= high
    for _ in range(steps):
        e = np.pad(edges, 1)
        edges = weak & np.any([e[j : j + h, i : i + w] for j in range(3) for i in range(3)], axis=0)
    return np.where(edges, 255, 0).astype(np.uint8)


@pytest.mark.parametrize(("sigma", "low", "high", "steps"), [(1.0, 0.1, 0.2, 4), (2.0, 0.05, 0.3, 0)])
def test_canny_matches_numpy_and_roughly_skimage(gray_f32, sigma, low, high, steps):
    params = {"sigma": sigma, "low": low, "high": high, "hysteresis_steps": steps}
    out = run_node_once("canny_edges", {"image": gray_f32}, params)
    assert out.dtype == np.uint8 and set(np.unique(out)) == {0, 255}
    expected = canny_numpy(gray_f32, sigma, low, high, steps)
    # f32 in the node, f64 here: a pixel exactly at a threshold or a tie may go either way
    assert (out != expected).mean() < 1e-3
    reference = skimage.feature.canny(gray_f32, sigma=sigma, low_threshold=low, high_threshold=high, mode="nearest")
    assert ((out > 0) == reference).mean() > 0.9
    # and most of our edge pixels are edges for scikit-image too (its NMS interpolates, its
    # hysteresis follows chains to any length, so it finds somewhat more)
    assert ((out > 0) & reference).sum() > 0.85 * (out > 0).sum()


def test_canny_hysteresis_grows_from_strong_edges(gray_u8):
    edges = [
        run_node_once("canny_edges", {"image": gray_u8}, {"hysteresis_steps": n, "low": 0.05, "high": 0.5})
        for n in (0, 2, 12)
    ]
    counts = [int((e > 0).sum()) for e in edges]
    assert counts[0] < counts[1] < counts[2]
    assert np.all(edges[1][edges[0] > 0] == 255) and np.all(edges[2][edges[1] > 0] == 255)
    # u8 input is mapped to 0..1 first: the same as the float image
    np.testing.assert_array_equal(edges[1], canny_numpy(gray_u8 / 255.0, 1.0, 0.05, 0.5, 2))


def test_canny_rejects_low_above_high(gray_f32):
    with pytest.raises(NodeError, match="low threshold"):
        run_node("canny_edges", {"image": gray_f32}, {"low": 0.5, "high": 0.2})


# ---------------------------------------------------------------------------- bilateral grid


def lerp(a, b, w):
    return a + (b - a) * w


def bilateral_grid_numpy(image, s, r_sigma):
    """Halide's apps/bilateral_grid in float64: cells of s x s pixels (starting s/2 before
    the cell's corner, repeat-edge), intensity bins of r_sigma, [1 4 6 4 1] blurs in z, x,
    y, trilinear slicing."""
    h, w = image.shape
    inv = np.float32(1 / r_sigma)
    nz = int(np.float32(1.0) * inv + np.float32(0.5)) + 1
    gx0, gy0, gz0 = -2, -2, -2  # grid index of array position 0 in x, y, z
    gw, gh, gd = (w - 1) // s + 6, (h - 1) // s + 6, nz + 5
    cells_x, cells_y = np.arange(gw) + gx0, np.arange(gh) + gy0
    px = np.clip(cells_x[:, None] * s + np.arange(s)[None, :] - s // 2, 0, w - 1)  # (gw, s)
    py = np.clip(cells_y[:, None] * s + np.arange(s)[None, :] - s // 2, 0, h - 1)  # (gh, s)
    values = np.clip(image, 0, 1)[py[:, None, :, None], px[None, :, None, :]]  # (gh, gw, s, s)
    bins = (values.astype(np.float32) * inv + np.float32(0.5)).astype(int)
    grid = np.zeros((gh, gw, gd, 2))
    yy, xx = (
        np.broadcast_to(np.arange(gh)[:, None, None, None], values.shape),
        np.broadcast_to(np.arange(gw)[None, :, None, None], values.shape),
    )
    np.add.at(grid, (yy, xx, bins - gz0, 0), values.astype(np.float64))
    np.add.at(grid, (yy, xx, bins - gz0, 1), 1.0)
    taps = [1, 4, 6, 4, 1]
    for axis in (2, 1, 0):  # z, then x, then y
        padded = np.pad(grid, [(2, 2) if a == axis else (0, 0) for a in range(4)])
        grid = sum(t * np.take(padded, np.arange(grid.shape[axis]) + k, axis=axis) for k, t in enumerate(taps))
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    level = np.clip(image, 0, 1).astype(np.float32) * inv
    zi = level.astype(int)
    zf = level - zi
    xi, yi, xf, yf = x // s, y // s, (x % s) / s, (y % s) / s

    def corner(dx, dy, dz):
        return grid[yi + dy - gy0, xi + dx - gx0, zi + dz - gz0]

    def bilinear(dz):
        top = lerp(corner(0, 0, dz), corner(1, 0, dz), xf[..., None])
        bottom = lerp(corner(0, 1, dz), corner(1, 1, dz), xf[..., None])
        return lerp(top, bottom, yf[..., None])

    result = lerp(bilinear(0), bilinear(1), zf[..., None])
    return result[..., 0] / result[..., 1]


@pytest.mark.parametrize(("s_sigma", "r_sigma"), [(8, 0.1), (5, 0.25)])
def test_bilateral_grid_matches_numpy(gray_f32, s_sigma, r_sigma):
    out = run_node_once("bilateral_grid", {"image": gray_f32}, {"s_sigma": s_sigma, "r_sigma": r_sigma})
    assert out.dtype == np.float32 and out.shape == gray_f32.shape
    np.testing.assert_allclose(out, bilateral_grid_numpy(gray_f32, s_sigma, r_sigma), atol=1e-4)


def test_bilateral_grid_smooths_but_keeps_edges(gray_u8):
    out = run_node_once("bilateral_grid", {"image": gray_u8})
    image = gray_u8 / 255.0
    np.testing.assert_allclose(out, bilateral_grid_numpy(image, 8, 0.1), atol=1e-4)
    # less noise than the input, yet closer to it than a Gaussian of the same spatial scale
    assert np.abs(np.diff(out, axis=1)).mean() < np.abs(np.diff(image, axis=1)).mean()
    blurred = cv2.GaussianBlur(image, (0, 0), 8)
    assert np.abs(out - image).mean() < 0.5 * np.abs(blurred - image).mean()
