"""Camera pipeline nodes against NumPy written here and OpenCV's demosaicking, compiled and
through the reference evaluator."""

from __future__ import annotations

import cv2
import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError

from tests.conftest import IMAGES
from tests.nodes.harness import run_node_once

# where (x, y) in the 2x2 cell each colour's sample sits, written out per pattern
CELLS = {
    "RGGB": {"R": [(0, 0)], "G": [(1, 0), (0, 1)], "B": [(1, 1)]},
    "BGGR": {"B": [(0, 0)], "G": [(1, 0), (0, 1)], "R": [(1, 1)]},
    "GRBG": {"G": [(0, 0), (1, 1)], "R": [(1, 0)], "B": [(0, 1)]},
    "GBRG": {"G": [(0, 0), (1, 1)], "B": [(1, 0)], "R": [(0, 1)]},
}
# OpenCV names a pattern by the second row's second and third pixels, one cell shifted
OPENCV = {
    "RGGB": cv2.COLOR_BayerBG2RGB,
    "BGGR": cv2.COLOR_BayerRG2RGB,
    "GRBG": cv2.COLOR_BayerGB2RGB,
    "GBRG": cv2.COLOR_BayerGR2RGB,
}


@pytest.fixture(scope="module")
def raw() -> np.ndarray:
    """A 200x240 crop of the bundled raw (u16 RGGB mosaic, 12 bits in the high bits),
    starting at even coordinates so that it stays RGGB."""
    return np.ascontiguousarray(iio.imread(IMAGES / "raw_bayer.png")[100:300, 200:440])


def masks(pattern: str, h: int, w: int) -> dict[str, np.ndarray]:
    """Per colour, where the mosaic holds a sample of it."""
    out = {}
    for colour, cells in CELLS[pattern].items():
        m = np.zeros((h, w), bool)
        for cx, cy in cells:
            m[cy::2, cx::2] = True
        out[colour] = m
    return out


def mosaic(planar: np.ndarray, pattern: str) -> np.ndarray:
    """A (3, h, w) image sampled through the pattern's filters: (h, w)."""
    _, h, w = planar.shape
    out = np.zeros((h, w), planar.dtype)
    for k, colour in enumerate("RGB"):
        m = masks(pattern, h, w)[colour]
        out[m] = planar[k][m]
    return out


def numpy_demosaic(raw: np.ndarray, pattern: str) -> np.ndarray:
    """Bilinear demosaicking written as the classic convolutions of the sparse colour planes
    (red and blue with [1 2 1]x[1 2 1]/4, green with the cross [0 1 0; 1 4 1; 0 1 0]/4), on a
    reflected border (numpy 'reflect' = abc|ba); integers rounded half up."""
    h, w = raw.shape
    padded = {
        k: np.pad(np.where(m, raw.astype(np.float64), 0.0), 1, mode="reflect") for k, m in masks(pattern, h, w).items()
    }
    rb = np.outer([1, 2, 1], [1, 2, 1]) / 4.0
    g = np.array([[0, 1, 0], [1, 4, 1], [0, 1, 0]]) / 4.0
    out = []
    for colour in "RGB":
        kernel = g if colour == "G" else rb
        acc = sum(kernel[j, i] * padded[colour][j : j + h, i : i + w] for j in range(3) for i in range(3))
        out.append(acc)
    result = np.stack(out)
    if np.issubdtype(raw.dtype, np.integer):
        return np.floor(result + 0.5).astype(raw.dtype)
    return result.astype(raw.dtype)


# ---------------------------------------------------------------------------- hot pixels


def numpy_hot_pixels(raw: np.ndarray) -> np.ndarray:
    p = np.pad(raw, 2, mode="reflect")
    h, w = raw.shape
    neighbours = np.maximum.reduce(
        [p[2 : 2 + h, 0:w], p[2 : 2 + h, 4 : 4 + w], p[0:h, 2 : 2 + w], p[4 : 4 + h, 2 : 2 + w]]
    )
    return np.minimum(raw, neighbours)


@pytest.mark.parametrize("dtype", [np.uint16, np.uint8, np.float32])
def test_hot_pixel_suppression_matches_numpy(raw, dtype):
    image = {np.uint16: raw, np.uint8: (raw >> 8).astype(np.uint8), np.float32: raw.astype(np.float32) / 65535}[dtype]
    out = run_node_once("hot_pixel_suppression", {"image": image})
    np.testing.assert_array_equal(out, numpy_hot_pixels(image))


def test_hot_pixel_suppression_removes_stuck_pixels(raw):
    out = run_node_once("hot_pixel_suppression", {"image": raw})
    stuck = raw == 65520
    assert stuck.sum() >= 3  # the crop holds some of the sample's planted hot pixels
    assert (out[stuck] < 65520).mean() > 0.5
    unchanged = out == raw
    assert unchanged.mean() > 0.8  # most pixels are left alone


# ---------------------------------------------------------------------------- demosaic


@pytest.mark.parametrize("pattern", list(CELLS))
def test_demosaic_matches_numpy_convolutions(raw, pattern):
    out = run_node_once("demosaic", {"image": raw}, {"pattern": pattern})
    assert out.shape == (3, *raw.shape) and out.dtype == np.uint16
    np.testing.assert_array_equal(out, numpy_demosaic(raw, pattern))


def test_demosaic_float_matches_numpy(raw):
    image = raw.astype(np.float32) / 65535
    out = run_node_once("demosaic", {"image": image}, {"pattern": "GRBG"})
    np.testing.assert_allclose(out, numpy_demosaic(image, "GRBG"), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("pattern", list(CELLS))
def test_demosaic_matches_opencv_inside(astronaut_planar, pattern):
    """OpenCV's bilinear demosaic on the mosaic of a photograph; borders differ (OpenCV
    handles them its own way), so only the interior is compared."""
    image = np.ascontiguousarray(astronaut_planar[:, 100:300, 150:390])
    m = mosaic(image, pattern)
    out = run_node_once("demosaic", {"image": m}, {"pattern": pattern})
    expected = np.moveaxis(cv2.cvtColor(m, OPENCV[pattern]), -1, 0)
    diff = np.abs(out.astype(int) - expected)[:, 2:-2, 2:-2]
    assert diff.max() <= 1


def test_demosaic_recovers_a_smooth_image():
    """A smooth synthetic colour image survives mosaic + demosaic with a small error."""
    h, w = 96, 128
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    planar = np.stack(
        [
            0.5 + 0.4 * np.sin(xx / 17.0) * np.cos(yy / 23.0),
            0.5 + 0.3 * np.cos((xx + yy) / 29.0),
            0.3 + 0.2 * xx / w + 0.2 * yy / h,
        ]
    ).astype(np.float32)
    out = run_node_once("demosaic", {"image": mosaic(planar, "RGGB")}, {"pattern": "RGGB"})
    error = np.abs(out - planar)
    assert error.max() < 0.02 and error.mean() < 0.001  # the curvature of the image over one pixel


def test_demosaic_needs_a_gray_mosaic(astronaut_planar):
    with pytest.raises(NodeError, match="port `image` takes a gray value"):
        run_node_once("demosaic", {"image": astronaut_planar[:, :16, :16].copy()})


# ---------------------------------------------------------------------------- white balance, colour matrix


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_white_balance_matches_numpy(astronaut_planar, dtype):
    image = np.ascontiguousarray(astronaut_planar[:, :200, :240]).astype(dtype)
    if dtype == np.uint16:
        image = image * np.uint16(257)
    gains = np.array([1.9, 1.0, 0.7], np.float32)
    out = run_node_once("white_balance", {"image": image}, {"red": 1.9, "green": 1.0, "blue": 0.7})
    top = np.iinfo(dtype).max
    expected = np.clip(np.rint(image.astype(np.float32) * gains[:, None, None]), 0, top).astype(dtype)
    np.testing.assert_array_equal(out, expected)


def test_white_balance_float_is_not_clamped(astronaut_planar):
    image = astronaut_planar[:, :64, :64].astype(np.float32) / 255
    out = run_node_once("white_balance", {"image": image}, {"red": 2.0, "green": 1.0, "blue": 0.5})
    np.testing.assert_allclose(out, image * np.array([2.0, 1.0, 0.5], np.float32)[:, None, None], rtol=1e-6)
    assert out.max() > 1.0


MATRIX = [[1.65, -0.45, -0.2], [-0.25, 1.5, -0.25], [-0.05, -0.55, 1.6]]


@pytest.mark.parametrize("offsets", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_colour_matrix_matches_numpy(astronaut_planar, dtype, offsets):
    image = np.ascontiguousarray(astronaut_planar[:, 200:400, 100:340])
    top = {np.uint8: 255.0, np.uint16: 65535.0, np.float32: 1.0}[dtype]
    image = (image.astype(np.float64) / 255 * top).astype(dtype) if dtype != np.uint8 else image
    matrix = [[*row, 0.05 * (k - 1)] for k, row in enumerate(MATRIX)] if offsets else MATRIX
    out = run_node_once("colour_matrix", {"image": image}, {"matrix": matrix})
    m = np.array(matrix)
    normalized = image.astype(np.float64) / top
    mixed = np.einsum("ij,jhw->ihw", m[:, :3], normalized) + (m[:, 3][:, None, None] if offsets else 0)
    expected = np.clip(mixed, 0, 1) * top
    if dtype == np.float32:
        np.testing.assert_allclose(out, expected, atol=1e-5)
    else:
        assert np.abs(out.astype(float) - expected).max() <= 0.5 + 1e-3  # rounded to nearest


def test_colour_matrix_needs_three_rows(astronaut_planar):
    with pytest.raises(NodeError, match="3x3 or 3x4"):
        run_node_once("colour_matrix", {"image": astronaut_planar[:, :16, :16].copy()}, {"matrix": [[1, 0], [0, 1]]})


def test_mirrored_reads_get_the_dense_vector_fast_path():
    """Inside the image, a vectorized stencil with a mirroring boundary loads whole vectors
    (the engine's boundary fast path sees through the select of the mirrored coordinate)."""
    from pixelweave.nodes.graph import NodeSpec, build_graph

    graph = build_graph(
        [
            NodeSpec("raw", "image_input", {"element": "u16", "layout": "gray"}),
            NodeSpec("hot", "hot_pixel_suppression", {"boundary": "mirror_interior"}, {"image": ("raw", "out")}),
            NodeSpec("result", "output", {"element": "same"}, {"image": ("hot", "out")}),
        ]
    )
    graph.func("result", "out").vectorize("x", 16)
    stmt = graph.pipeline().lowered_stmt()
    assert "raw[ramp(" in stmt  # dense loads, not gathers of mirrored coordinates


def test_camera_pipeline_example_recovers_the_photograph():
    """The camera_pipeline example undoes what make_raw_bayer.py did to coffee.png (up to
    demosaicking blur, hot pixels and 12-bit quantization)."""
    from pixelweave.nodes.pipeline_build import open_document

    from tests.conftest import ROOT

    built = open_document(ROOT / "resources" / "examples" / "camera_pipeline.json")
    (out,) = built.run(built.sample_inputs()).values()
    photo = np.moveaxis(iio.imread(IMAGES / "coffee.png")[..., :3], -1, 0).astype(int)
    error = np.abs(out.astype(int) - photo)
    assert out.shape == photo.shape
    assert error.mean() < 10 and np.median(error) <= 4
