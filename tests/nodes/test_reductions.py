"""Reduction nodes against NumPy and OpenCV, compiled and through the reference evaluator."""

from typing import ClassVar

import cv2
import numpy as np
import pytest
from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.graph import NodeSpec, build_graph
from pixelweave.nodes.node_type import NodeType, node_type
from pixelweave.nodes.ports import Port
from pixelweave.nodes.run import GraphRunner
from pixelweave.nodes.values import Value

import pixelweave as pw
from tests.nodes.harness import ELEMENTS, assert_same


@pytest.fixture
def gray(camera):
    return camera[:200, :240]


@pytest.fixture
def colour(astronaut_planar):
    return astronaut_planar[:, :200, :240]


class ResultForTests(NodeType):
    """A pipeline output of any layout, value unchanged (the catalogue's Output node only
    declares an image output, so arrays and scalars cannot leave through it yet)."""

    category = "Custom"
    is_output: ClassVar[bool] = True
    inputs = (Port("image", "any", "number"),)
    outputs = (Port("out", "any", "number"),)

    def build(self, ctx: BuildContext, image: Value) -> Value:
        f = ctx.func("out")
        f[ctx.args(image)] = image[ctx.args(image)]
        return image.with_func(f)


def run_chain(image: np.ndarray, *nodes: tuple[str, dict]) -> np.ndarray:
    """An input for the array, then each (type, params) node fed by the previous one, then an
    output keeping the value; the compiled result, checked against the reference."""
    layout = {2: "gray", 3: "colour"}[image.ndim]
    specs = [NodeSpec("in", "image_input", {"element": ELEMENTS[image.dtype], "layout": layout})]
    source = "in"
    for k, (type_name, params) in enumerate(nodes):
        specs.append(NodeSpec(f"n{k}", type_name, params, {node_type(type_name).inputs[0].name: (source, "out")}))
        source = f"n{k}"
    specs.append(NodeSpec("out", "result_for_tests", {}, {"image": (source, "out")}))
    runner = GraphRunner(build_graph(specs))
    compiled = runner.run({"in": image})["out"]
    assert_same(compiled, runner.run({"in": image}, target="reference")["out"])
    return compiled


def run_once(type_name: str, inputs: dict, params: dict | None = None) -> np.ndarray:
    """run_chain for one node with one image input."""
    ((_, image),) = inputs.items()
    return run_chain(image, (type_name, params or {}))


def test_histogram_u8_one_bin_per_value(gray):
    out = run_once("histogram", {"image": gray})
    assert out.dtype == np.uint32 and out.shape == (256,)
    np.testing.assert_array_equal(out, np.bincount(gray.ravel(), minlength=256))


@pytest.mark.parametrize("bins", [16, 100])
def test_histogram_u8_fewer_bins(gray, bins):
    out = run_once("histogram", {"image": gray}, {"bins": bins})
    expected, _ = np.histogram(gray, bins=bins, range=(0, 256))
    np.testing.assert_array_equal(out, expected)


def test_histogram_u16_and_float(gray):
    wide = gray.astype(np.uint16) * 257 + 3
    out = run_once("histogram", {"image": wide}, {"bins": 64})
    np.testing.assert_array_equal(out, np.bincount(wide.ravel() // 1024, minlength=64))
    unit = (gray.astype(np.float32) + 0.5) / 256
    out = run_once("histogram", {"image": unit}, {"bins": 50})
    np.testing.assert_array_equal(out, np.histogram(unit, bins=50, range=(0, 1))[0])


def test_histogram_rejects_colour(colour):
    with pytest.raises(NodeError, match="takes a gray value of number, but is given a colour value"):
        run_once("histogram", {"image": colour})


def test_cumulative_histogram(gray):
    out = run_chain(gray, ("histogram", {"bins": 256}), ("cumulative_histogram", {}))
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, np.cumsum(np.bincount(gray.ravel(), minlength=256)))


def test_cumulative_sum_of_float_row_sums(gray):
    unit = gray.astype(np.float32) / 255
    out = run_chain(unit, ("row_sums", {}), ("cumulative_histogram", {}))
    np.testing.assert_allclose(out, np.cumsum(unit.astype(np.float64).sum(axis=1)), rtol=1e-5)


def test_histogram_equalization_u8_matches_opencv(gray):
    low_contrast = (gray // 3 + 40).astype(np.uint8)
    out = run_once("histogram_equalization", {"image": low_contrast})
    np.testing.assert_array_equal(out, cv2.equalizeHist(low_contrast))


def equalize_numpy(image: np.ndarray, levels: int, top: float, bins_of) -> np.ndarray:
    """The textbook CDF mapping, written independently of the node."""
    b = bins_of(image)
    cdf = np.cumsum(np.bincount(b.ravel(), minlength=levels)).astype(np.float64)
    cdf_min = cdf[b.min()]
    return (cdf[b] - cdf_min) / (image.size - cdf_min) * top


def test_histogram_equalization_u16(gray):
    wide = gray.astype(np.uint16) * 100 + 7
    out = run_once("histogram_equalization", {"image": wide})
    expected = equalize_numpy(wide, 65536, 65535, lambda a: a.astype(np.int64))
    assert out.dtype == np.uint16
    assert np.abs(out.astype(np.float64) - expected).max() <= 0.51


def test_histogram_equalization_f32(gray):
    unit = (gray.astype(np.float32) + 0.5) / 256 * 0.5
    out = run_once("histogram_equalization", {"image": unit}, {"bins": 128})
    expected = equalize_numpy(unit, 128, 1.0, lambda a: np.clip(np.floor(a * 128).astype(np.int64), 0, 127))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_histogram_equalization_of_constant_image_is_identity():
    flat = np.full((20, 30), 77, np.uint8)
    np.testing.assert_array_equal(run_once("histogram_equalization", {"image": flat}), flat)


def test_histogram_equalization_rejects_other_types():
    image = pw.ImageParam(pw.UInt(32), 2, "wide")
    value = Value(image, "gray", (image.dim(0).extent(), image.dim(1).extent()))
    with pytest.raises(NodeError, match="takes u8, u16 or f32 images, not uint32"):
        node_type("histogram_equalization")().build(BuildContext("eq"), image=value, bins=256)


@pytest.mark.parametrize("statistic", ["sum", "mean", "minimum", "maximum"])
def test_image_statistic_colour(colour, statistic):
    out = run_once("image_statistic", {"image": colour}, {"statistic": statistic})
    assert out.shape == ()
    expected = {"sum": np.sum, "mean": np.mean, "minimum": np.min, "maximum": np.max}[statistic](
        colour.astype(np.float64)
    )
    if statistic in ("minimum", "maximum"):
        assert out.dtype == np.uint8 and int(out) == expected
    else:
        assert out.dtype == np.float32
        np.testing.assert_allclose(float(out), expected, rtol=1e-6)


def test_image_statistic_float_gray(gray):
    unit = gray.astype(np.float32) / 255
    out = run_once("image_statistic", {"image": unit}, {"statistic": "minimum"})
    assert out.dtype == np.float32 and float(out) == unit.min()
    out = run_once("image_statistic", {"image": unit}, {"statistic": "mean"})
    np.testing.assert_allclose(float(out), unit.astype(np.float64).mean(), rtol=1e-6)


def test_column_and_row_sums(gray, colour):
    out = run_once("column_sums", {"image": gray})
    assert out.dtype == np.uint32 and out.shape == (240,)
    np.testing.assert_array_equal(out, gray.sum(axis=0, dtype=np.int64))
    out = run_once("row_sums", {"image": colour})
    assert out.dtype == np.uint32 and out.shape == (200,)
    np.testing.assert_array_equal(out, colour.sum(axis=(0, 2), dtype=np.int64))
    unit = gray.astype(np.float32) / 255
    out = run_once("row_sums", {"image": unit})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, unit.astype(np.float64).sum(axis=1), rtol=1e-5)
