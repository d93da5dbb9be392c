"""Colour nodes against OpenCV, scikit-image or NumPy, compiled and through the reference
evaluator."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError
from skimage.color import hsv2rgb, rgb2hsv

from tests.nodes.harness import run_node
from tests.nodes.test_point import assert_near, run1, run_checked


@pytest.fixture
def rgb(astronaut_planar: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(astronaut_planar[:, :200, :240])


@pytest.fixture
def gray(camera: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(camera[:200, :240])


def interleaved(planar: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(planar, 0, -1))


def planar(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(image, -1, 0))


def test_rgb_to_gray_matches_opencv(rgb):
    out = run1("rgb_to_gray", {"image": rgb})
    assert out.shape == rgb.shape[1:] and out.dtype == np.uint8
    assert_near(out, cv2.cvtColor(interleaved(rgb), cv2.COLOR_RGB2GRAY))
    f = rgb.astype(np.float32) / 255
    expected = cv2.cvtColor(interleaved(f), cv2.COLOR_RGB2GRAY)
    np.testing.assert_allclose(run1("rgb_to_gray", {"image": f}), expected, atol=1e-6)


def test_rgb_to_gray_needs_colour(gray):
    with pytest.raises(NodeError, match="port `image`"):
        run_node("rgb_to_gray", {"image": gray})


def test_gray_to_rgb(gray):
    out = run1("gray_to_rgb", {"image": gray})
    np.testing.assert_array_equal(out, planar(cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB)))


def ycbcr_from_opencv(rgb_planar: np.ndarray) -> np.ndarray:
    """OpenCV's Y, Cr, Cb reordered to Y, Cb, Cr, planar."""
    return planar(cv2.cvtColor(interleaved(rgb_planar), cv2.COLOR_RGB2YCrCb)[..., [0, 2, 1]])


def ycbcr_numpy(rgb_planar: np.ndarray, offset: float) -> np.ndarray:
    """Full-range BT.601 in float64 with OpenCV's coefficients, Y, Cb, Cr planar."""
    r, g, b = rgb_planar.astype(np.float64)
    y = 0.299 * r + 0.587 * g + 0.114 * b
    return np.stack([y, (b - y) * 0.564 + offset, (r - y) * 0.713 + offset])


def test_rgb_to_ycbcr_matches_opencv(rgb):
    out = run1("rgb_to_ycbcr", {"image": rgb})
    assert out.dtype == np.uint8
    # OpenCV's u8 path uses fixed point and the rounded Y for Cb and Cr: one level off at times
    assert_near(out, ycbcr_from_opencv(rgb), tol=1, fraction=0.25)
    assert_near(out, np.clip(np.rint(ycbcr_numpy(rgb, 128)), 0, 255), tol=1, fraction=1e-3)
    f = rgb.astype(np.float32) / 255
    np.testing.assert_allclose(run1("rgb_to_ycbcr", {"image": f}), ycbcr_from_opencv(f), atol=1e-5)


def test_ycbcr_to_rgb_matches_opencv(rgb):
    ycbcr = ycbcr_from_opencv(rgb)
    out = run1("ycbcr_to_rgb", {"image": ycbcr})
    expected = planar(cv2.cvtColor(interleaved(ycbcr[[0, 2, 1]]), cv2.COLOR_YCrCb2RGB))
    assert_near(out, expected, tol=1, fraction=0.25)  # OpenCV's u8 path is fixed point
    y, cb, cr = ycbcr.astype(np.float64) - [[[0]], [[128]], [[128]]]
    exact = np.stack([y + 1.403 * cr, y - 0.714 * cr - 0.344 * cb, y + 1.773 * cb])
    assert_near(out, np.clip(np.rint(exact), 0, 255), tol=1, fraction=1e-3)
    assert_near(out, rgb, tol=3, fraction=0.5)  # the round trip nearly returns the photograph
    f = ycbcr_from_opencv(rgb.astype(np.float32) / 255)
    expected = planar(cv2.cvtColor(interleaved(f[[0, 2, 1]]), cv2.COLOR_YCrCb2RGB))
    np.testing.assert_allclose(run1("ycbcr_to_rgb", {"image": f}), expected, atol=1e-5)


def assert_hsv_close(out: np.ndarray, expected: np.ndarray) -> None:
    """HSV values close, hue compared around the circle (0.9999 is next to 0)."""
    hue = np.abs(out[0] - expected[0])
    assert np.minimum(hue, 1 - hue).max() < 1e-5
    np.testing.assert_allclose(out[1:], expected[1:], atol=1e-6)


def test_rgb_to_hsv_matches_skimage(rgb):
    out = run1("rgb_to_hsv", {"image": rgb})
    assert out.dtype == np.float32
    assert ((out >= 0) & (out < 1 + 1e-7)).all() and (out[0] < 1).all()
    assert_hsv_close(out, planar(rgb2hsv(interleaved(rgb))))
    f = rgb.astype(np.float32) / 255
    assert_hsv_close(run1("rgb_to_hsv", {"image": f}), planar(rgb2hsv(interleaved(f))))


def test_rgb_to_hsv_grays_and_primaries():
    pixels = np.array([[[0, 0, 0], [128, 128, 128], [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]]], np.uint8)
    out = run1("rgb_to_hsv", {"image": planar(pixels)})
    assert_hsv_close(out, planar(rgb2hsv(pixels)))


def test_hsv_to_rgb_matches_skimage(rgb):
    hsv = planar(rgb2hsv(interleaved(rgb)).astype(np.float32))
    hsv[0, :20] = np.linspace(0, 1, hsv.shape[2], endpoint=False, dtype=np.float32)  # every hue sector
    out = run1("hsv_to_rgb", {"image": hsv})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, planar(hsv2rgb(interleaved(hsv))), atol=2e-6)
    np.testing.assert_allclose(out[:, 20:], rgb[:, 20:] / 255.0, atol=1e-5)  # the round trip


def test_channel_split_and_merge(rgb):
    outs = run_checked("channel_split", {"image": rgb})
    for k, name in enumerate("rgb"):
        np.testing.assert_array_equal(outs[name], rgb[k])
    swapped = run1("channel_merge", {"r": rgb[2].copy(), "g": rgb[1].copy(), "b": rgb[0].copy()})
    np.testing.assert_array_equal(swapped, planar(cv2.cvtColor(interleaved(rgb), cv2.COLOR_RGB2BGR)))


def test_channel_merge_needs_one_element_type(rgb):
    with pytest.raises(NodeError, match="port `g`"):
        run_node("channel_merge", {"r": rgb[0].copy(), "g": rgb[1].astype(np.float32), "b": rgb[2].copy()})


@pytest.mark.parametrize("channel", [0, 1, 2])
def test_channel_extract(rgb, channel):
    np.testing.assert_array_equal(run1("channel_extract", {"image": rgb}, {"channel": channel}), rgb[channel])


def test_channel_extract_bad_index(rgb):
    with pytest.raises(NodeError, match="channel"):
        run_node("channel_extract", {"image": rgb}, {"channel": 5})
