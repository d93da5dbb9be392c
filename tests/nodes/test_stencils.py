"""Stencil nodes against OpenCV or NumPy, compiled and through the reference evaluator."""

import math

import cv2
import numpy as np
import pytest

from nodes.errors import NodeError
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
    # the node's taps are multiples of 2^-12: its blur may differ from OpenCV's by a fraction
    # of a level, so pixels that close to the threshold may go either way
    decided = np.abs(np.abs(detail) - 10) > 1
    assert decided.mean() > 0.95
    diff = np.abs(interleaved(out).astype(int) - expected)[decided]
    assert diff.max() <= 1 and (diff == 0).mean() > 0.99


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
