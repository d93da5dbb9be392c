"""Point nodes against OpenCV or NumPy, compiled and through the reference evaluator."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError

from tests.nodes.harness import run_node


def assert_near(out: np.ndarray, expected: np.ndarray, tol: int = 1, fraction: float = 0.01) -> None:
    """Integers within `tol` levels, and equal at all but `fraction` of the values (float
    rounding ties may fall either way, and OpenCV's fixed point differs a little)."""
    assert out.shape == expected.shape
    diff = np.abs(out.astype(np.int64) - expected.astype(np.int64))
    assert diff.max() <= tol, f"differs by up to {diff.max()}"
    assert np.mean(diff != 0) <= fraction, f"{np.mean(diff != 0):.2%} of the values differ"


def run_checked(type_name: str, inputs: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Every output, compiled, after checking that the reference evaluator agrees: floats
    closely, integers exactly but for rare rounding ties (the JIT fuses multiply-adds)."""
    outs = {}
    for port, (compiled, reference) in run_node(type_name, inputs, params).items():
        assert compiled.shape == reference.shape and compiled.dtype == reference.dtype
        if np.issubdtype(compiled.dtype, np.floating):
            np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5)
        else:
            assert_near(compiled, reference, tol=1, fraction=1e-3)
        outs[port] = compiled
    return outs


def run1(type_name: str, inputs: dict[str, Any], params: dict[str, Any] | None = None) -> np.ndarray:
    (out,) = run_checked(type_name, inputs, params).values()
    return out


@pytest.fixture
def rgb(astronaut_planar: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(astronaut_planar[:, :200, :240])


@pytest.fixture
def rgb2(astronaut_planar: np.ndarray) -> np.ndarray:
    """A second colour crop of the same size, to combine with `rgb`."""
    return np.ascontiguousarray(astronaut_planar[:, 250:450, 200:440])


@pytest.fixture
def gray(camera: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(camera[:200, :240])


def as_rows(a: np.ndarray) -> np.ndarray:
    """A planar image as one 2-D array, as OpenCV's arithmetic wants."""
    return a.reshape(-1, a.shape[-1])


# --- Arithmetic ------------------------------------------------------------------------------

OPENCV_OPS = {
    "add": cv2.add,
    "subtract": cv2.subtract,
    "multiply": cv2.multiply,
    "divide": cv2.divide,
    "minimum": cv2.min,
    "maximum": cv2.max,
    "absolute_difference": cv2.absdiff,
}


@pytest.mark.parametrize("operation", list(OPENCV_OPS))
def test_arithmetic_u8_saturates_like_opencv(rgb, rgb2, operation):
    b = rgb2.copy()
    b[:, :10, :10] = 0  # division by zero gives 0, as in OpenCV
    out = run1("arithmetic", {"a": rgb, "b": b}, {"operation": operation})
    expected = OPENCV_OPS[operation](as_rows(rgb), as_rows(b)).reshape(rgb.shape)
    assert out.dtype == np.uint8
    assert_near(out, expected, tol=1, fraction=1e-3)


def test_arithmetic_u8_power_uses_normalized_base(rgb, rgb2):
    b = rgb2.astype(np.float32) / 128  # exponents in [0, 2]
    out = run1("arithmetic", {"a": rgb, "b": b}, {"operation": "power"})
    expected = np.clip(np.rint(255 * (rgb / 255.0) ** b.astype(np.float64)), 0, 255)
    assert out.dtype == np.uint8
    assert_near(out, expected)


FLOAT_OPS = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "minimum": np.minimum,
    "maximum": np.maximum,
    "absolute_difference": lambda a, b: np.abs(a - b),
    "power": np.power,
}


@pytest.mark.parametrize("operation", list(FLOAT_OPS))
def test_arithmetic_float(rgb, rgb2, operation):
    a = rgb.astype(np.float32) / 255
    b = rgb2.astype(np.float32) / 255 + 0.25
    out = run1("arithmetic", {"a": a, "b": b}, {"operation": operation})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, FLOAT_OPS[operation](a.astype(np.float64), b), rtol=1e-5, atol=1e-6)


def test_arithmetic_gray_b_applies_to_every_channel(rgb, gray):
    out = run1("arithmetic", {"a": rgb, "b": gray}, {"operation": "subtract"})
    expected = np.clip(rgb.astype(int) - gray[None].astype(int), 0, 255)
    np.testing.assert_array_equal(out, expected)


def test_arithmetic_scalar_b(rgb):
    out = run1("arithmetic", {"a": rgb, "b": 0.5}, {"operation": "multiply"})
    np.testing.assert_array_equal(out, np.rint(rgb * 0.5))  # half to even, as NumPy


def test_arithmetic_u8_by_float_mask_keeps_numbers(rgb, gray):
    mask = gray.astype(np.float32) / 255
    out = run1("arithmetic", {"a": rgb, "b": mask}, {"operation": "multiply"})
    assert out.dtype == np.uint8
    assert_near(out, np.rint(rgb * mask[None].astype(np.float64)))


def test_arithmetic_u16_saturates(gray, camera):
    a = gray.astype(np.uint16) * 257
    b = np.ascontiguousarray(camera[300:500, 200:440]).astype(np.uint16) * 200
    for operation, fn in (("add", np.add), ("subtract", np.subtract)):
        out = run1("arithmetic", {"a": a, "b": b}, {"operation": operation})
        assert out.dtype == np.uint16
        np.testing.assert_array_equal(out, np.clip(fn(a.astype(np.int64), b), 0, 65535))


def test_arithmetic_colour_b_with_gray_a_is_an_error(rgb, gray):
    with pytest.raises(NodeError, match="port `b`"):
        run_node("arithmetic", {"a": gray, "b": rgb}, {"operation": "add"})


def test_arithmetic_unknown_operation(rgb):
    with pytest.raises(NodeError, match="operation"):
        run_node("arithmetic", {"a": rgb, "b": 1.0}, {"operation": "modulo"})


# --- ArithmeticConstant -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "value", "fn"),
    [
        ("add", 40, lambda a, v: a + v),
        ("subtract", 40, lambda a, v: a - v),
        ("multiply", 1.7, lambda a, v: a * v),
        ("divide", 3, lambda a, v: a / v),
        ("minimum", 100, np.minimum),
        ("maximum", 100, np.maximum),
        ("absolute_difference", 128, lambda a, v: np.abs(a - v)),
        ("power", 2.2, lambda a, v: 255 * (a / 255) ** v),
    ],
)
def test_arithmetic_constant_u8(rgb, operation, value, fn):
    out = run1("arithmetic_constant", {"image": rgb}, {"operation": operation, "value": value})
    expected = np.clip(np.rint(fn(rgb.astype(np.float64), value)), 0, 255)
    assert out.dtype == np.uint8
    assert_near(out, expected, tol=1, fraction=2e-3)


def test_arithmetic_constant_u16_and_float(gray):
    a = gray.astype(np.uint16) * 257
    out = run1("arithmetic_constant", {"image": a}, {"operation": "subtract", "value": 10000})
    np.testing.assert_array_equal(out, np.clip(a.astype(int) - 10000, 0, 65535))
    f = gray.astype(np.float32) / 255
    out = run1("arithmetic_constant", {"image": f}, {"operation": "add", "value": 0.75})
    np.testing.assert_allclose(out, f + 0.75, rtol=1e-6)  # floats are not clamped


# --- MathFunction and ConvertType ---------------------------------------------------------------

MATH = {
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "square": np.square,
    "reciprocal": lambda v: 1 / v,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,
}


@pytest.mark.parametrize("function", list(MATH))
def test_math_function_of_normalized_u8(gray, function):
    image = np.maximum(gray, 1)  # log and reciprocal of 0 are infinite
    out = run1("math_function", {"image": image}, {"function": function})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, MATH[function](image / np.float32(255)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("function", ["abs", "floor", "ceil", "round", "sin", "square"])
def test_math_function_of_float(gray, function):
    image = (gray.astype(np.float32) / 255 - 0.5) * 9
    out = run1("math_function", {"image": image}, {"function": function})
    np.testing.assert_allclose(out, MATH[function](image), rtol=2e-6, atol=2e-6)


def test_convert_type(gray):
    as_float = run1("convert_type", {"image": gray}, {"element": "f32"})
    np.testing.assert_allclose(as_float, gray / 255.0, rtol=1e-6)
    as_u16 = run1("convert_type", {"image": gray}, {"element": "u16"})
    np.testing.assert_array_equal(as_u16, gray.astype(np.uint16) * 257)
    back = run1("convert_type", {"image": as_u16}, {"element": "u8"})
    np.testing.assert_array_equal(back, gray)
    wild = (gray.astype(np.float32) / 255 - 0.25) * 1.5  # below 0 and above 1: saturates
    np.testing.assert_array_equal(
        run1("convert_type", {"image": wild}, {"element": "u8"}),
        np.clip(np.rint(wild.astype(np.float64) * 255), 0, 255),
    )
    raw = run1("convert_type", {"image": as_u16}, {"element": "u8", "scale": False})
    np.testing.assert_array_equal(raw, np.clip(as_u16, 0, 255))


def test_convert_type_bad_element(gray):
    with pytest.raises(NodeError, match="element"):
        run_node("convert_type", {"image": gray}, {"element": "u12"})


# --- tone ----------------------------------------------------------------------------------------


def tone_u8(image: np.ndarray, fn) -> np.ndarray:
    """fn applied to normalized values in float64, back to u8 (rounded, clipped)."""
    return np.clip(np.rint(fn(image / 255.0) * 255), 0, 255)


@pytest.mark.parametrize(("brightness", "contrast"), [(0.0, 1.0), (0.1, 1.6), (-0.2, 0.5)])
def test_brightness_contrast(rgb, brightness, contrast):
    out = run1("brightness_contrast", {"image": rgb}, {"brightness": brightness, "contrast": contrast})
    expected = tone_u8(rgb, lambda v: np.clip((v - 0.5) * contrast + 0.5 + brightness, 0, 1))
    assert out.dtype == np.uint8
    assert_near(out, expected)
    f = rgb.astype(np.float32) / 255
    out = run1("brightness_contrast", {"image": f}, {"brightness": brightness, "contrast": contrast})
    np.testing.assert_allclose(out, np.clip((f - 0.5) * contrast + 0.5 + brightness, 0, 1), atol=1e-6)


def test_brightness_contrast_out_of_range(rgb):
    with pytest.raises(NodeError, match="brightness"):
        run_node("brightness_contrast", {"image": rgb}, {"brightness": 2.0})


@pytest.mark.parametrize("gamma", [0.45, 2.2])
def test_gamma(rgb, gamma):
    out = run1("gamma", {"image": rgb}, {"gamma": gamma})
    assert_near(out, tone_u8(rgb, lambda v: v ** (1 / gamma)))
    u16 = rgb.astype(np.uint16) * 257
    out = run1("gamma", {"image": u16}, {"gamma": gamma})
    expected = np.clip(np.rint((u16 / 65535.0) ** (1 / gamma) * 65535), 0, 65535)
    assert out.dtype == np.uint16
    assert_near(out, expected, tol=2)


def test_gamma_zero_is_rejected(rgb):
    with pytest.raises(NodeError, match="gamma"):
        run_node("gamma", {"image": rgb}, {"gamma": 0})


def test_levels(rgb):
    params = {"in_black": 0.1, "in_white": 0.8, "gamma": 1.6, "out_black": 0.05, "out_white": 0.9}
    out = run1("levels", {"image": rgb}, params)

    def levels(v: np.ndarray) -> np.ndarray:
        t = np.clip((v - 0.1) / (0.8 - 0.1), 0, 1)
        return 0.05 + (0.9 - 0.05) * t ** (1 / 1.6)

    assert_near(out, tone_u8(rgb, levels))
    f = rgb.astype(np.float32) / 255
    np.testing.assert_allclose(run1("levels", {"image": f}, params), levels(f.astype(np.float64)), atol=2e-6)


def test_levels_inverted_input_points(rgb):
    with pytest.raises(NodeError, match="white point"):
        run_node("levels", {"image": rgb}, {"in_black": 0.6, "in_white": 0.4})


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 1.0])
def test_threshold(gray, threshold):
    out = run1("threshold", {"image": gray}, {"threshold": threshold})
    np.testing.assert_array_equal(out, np.where(gray >= threshold * 255, 255, 0))
    u16 = gray.astype(np.uint16) * 257
    out = run1("threshold", {"image": u16}, {"threshold": threshold})
    np.testing.assert_array_equal(out, np.where(u16 >= threshold * 65535, 65535, 0))
    f = gray.astype(np.float32) / 255
    out = run1("threshold", {"image": f}, {"threshold": threshold})
    np.testing.assert_array_equal(out, np.where(f >= np.float32(threshold), 1.0, 0.0))


def test_invert(rgb, gray):
    np.testing.assert_array_equal(run1("invert", {"image": rgb}), cv2.bitwise_not(rgb))
    u16 = gray.astype(np.uint16) * 257
    np.testing.assert_array_equal(run1("invert", {"image": u16}), 65535 - u16)
    f = gray.astype(np.float32) / 255
    np.testing.assert_allclose(run1("invert", {"image": f}), 1 - f)


# --- LookupTable -----------------------------------------------------------------------------------

CURVE = [[0.0, 0.1], [0.27, 0.137], [0.61, 0.833], [0.93, 0.961]]  # flat beyond both ends


def interp(v: np.ndarray) -> np.ndarray:
    xs, ys = zip(*CURVE, strict=True)
    return np.interp(v, xs, ys)


def test_lookup_table_u8(rgb):
    out = run1("lookup_table", {"image": rgb}, {"curve": CURVE})
    assert out.dtype == np.uint8
    assert_near(out, np.rint(interp(rgb / 255.0) * 255), tol=1, fraction=1e-3)


def test_lookup_table_u16(gray):
    u16 = gray.astype(np.uint16) * 257 + 100
    out = run1("lookup_table", {"image": u16}, {"curve": CURVE})
    assert out.dtype == np.uint16
    assert_near(out, np.rint(interp(u16 / 65535.0) * 65535), tol=1)


def test_lookup_table_float_interpolates(gray):
    f = (gray.astype(np.float32) / 255) * 1.2 - 0.1  # also beyond [0, 1]
    out = run1("lookup_table", {"image": f}, {"curve": CURVE})
    np.testing.assert_allclose(out, interp(f.astype(np.float64)), atol=2e-6)


def test_lookup_table_identity_default(gray):
    np.testing.assert_array_equal(run1("lookup_table", {"image": gray}), gray)


@pytest.mark.parametrize(
    ("curve", "message"),
    [([[0.5, 0.1], [0.2, 0.3]], "increasing"), ([[0, 0], [1, 1.5]], "inside"), ([[0, 0]], "two points")],
)
def test_lookup_table_bad_curve(gray, curve, message):
    with pytest.raises(NodeError, match=message):
        run_node("lookup_table", {"image": gray}, {"curve": curve})
