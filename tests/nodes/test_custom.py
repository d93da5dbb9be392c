"""The CustomExpression node against NumPy, compiled and through the reference evaluator."""

import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError

from tests.nodes.harness import run_node

H, W = 200, 240


@pytest.fixture(scope="module")
def gray(camera):
    return camera[100 : 100 + H, 120 : 120 + W]


@pytest.fixture(scope="module")
def colour(astronaut_planar):
    return astronaut_planar[:, 50 : 50 + H, 100 : 100 + W]


@pytest.fixture(scope="module")
def floats(camera):
    """Two float images in [0, 1] (a and b)."""
    a = camera[:H, :W].astype(np.float32) / 255
    b = camera[200 : 200 + H, 250 : 250 + W].astype(np.float32) / 255
    return a, b


def run(inputs, expression, **params):
    """The compiled result, checked against the reference evaluator. Integer results of float
    arithmetic may differ by one level where the compiled code fuses a multiply-add (FMA)."""
    ((compiled, reference),) = run_node("custom_expression", inputs, {"expression": expression, **params}).values()
    assert compiled.dtype == reference.dtype and compiled.shape == reference.shape
    if np.issubdtype(compiled.dtype, np.floating):
        np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-6)
    else:
        assert np.abs(compiled.astype(int) - reference.astype(int)).max() <= 1
    return compiled


def to_u8(normalized):
    return np.clip(np.rint(normalized * 255), 0, 255).astype(np.uint8)


def test_three_tap_mean(gray):
    out = run({"a": gray}, "(a[x-1, y] + a[x, y] + a[x+1, y]) / 3")
    f = np.pad(gray / 255, ((0, 0), (1, 1)), mode="edge")
    expected = to_u8((f[:, :-2] + f[:, 1:-1] + f[:, 2:]) / 3)
    assert out.dtype == np.uint8
    assert np.abs(out.astype(int) - expected).max() <= 1


def test_select_threshold_on_colour(colour):
    out = run({"a": colour}, "select(a > 0.5, 1.0, 0.0)")
    np.testing.assert_array_equal(out, np.where(colour / 255 > 0.5, 255, 0))


def test_gray_input_is_broadcast_over_colour(colour, gray):
    out = run({"a": colour, "b": gray}, "clamp(a * 1.2 - b, 0, 1)")
    expected = to_u8(np.clip(colour / 255 * 1.2 - gray[None] / 255, 0, 1))
    assert out.shape == colour.shape
    assert np.abs(out.astype(int) - expected).max() <= 1


@pytest.mark.parametrize(
    ("boundary", "numpy_mode"),
    [
        ("clamp", "edge"),
        ("constant", "constant"),
        ("wrap", "wrap"),
        ("mirror", "symmetric"),
        ("mirror_interior", "reflect"),
    ],
)
def test_offsets_use_the_boundary_condition(gray, boundary, numpy_mode):
    out = run({"a": gray}, "a[x-7, y+5] - a[x+3, y-9] + 0.5", boundary=boundary, output="f32")
    f = np.pad(gray.astype(np.float64) / 255, 10, mode=numpy_mode)
    expected = f[15 : 15 + H, 3 : 3 + W] - f[1 : 1 + H, 13 : 13 + W] + 0.5
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_raw_values_follow_halide_types(gray, colour):
    """raw: u8 + u8 wraps; widen first to keep the sum; `/` is true division, `//` rounds down."""
    a, b = gray, colour[1]
    out = run({"a": a, "b": b}, "a + b", values="raw")
    np.testing.assert_array_equal(out, (a.astype(int) + b) % 256)
    out = run({"a": a, "b": b}, "u16(a) + b", values="raw", output="u16")
    np.testing.assert_array_equal(out, a.astype(np.uint16) + b)
    out = run({"a": a}, "a / 4", values="raw")  # f32, rounded to nearest (half to even) into u8
    np.testing.assert_array_equal(out, np.rint(a / 4))
    out = run({"a": a}, "i32(a) // 4 * 3 + 300", values="raw", output="u16")
    np.testing.assert_array_equal(out, a.astype(int) // 4 * 3 + 300)
    out = run({"a": a}, "a * 2", values="raw", output="f32")  # u8 * 2 wraps, then by value into f32
    np.testing.assert_array_equal(out, (a.astype(int) * 2 % 256).astype(np.float32))


def test_coordinates_and_sizes(gray):
    out = run({"a": gray}, "x + 1000 * y + a * 0", values="raw", output="f32")
    y, x = np.mgrid[0:H, 0:W]
    np.testing.assert_array_equal(out, x + 1000 * y)
    out = run({"a": gray}, "x / width + y / height + a * 0", output="f32")  # / of integers is a float
    np.testing.assert_allclose(out, x / W + y / H, atol=1e-6)


def test_resampling_and_flips(gray):
    out = run({"a": gray}, "a[x/2, y/2]")
    np.testing.assert_array_equal(out, gray[np.arange(H)[:, None] // 2, np.arange(W)[None] // 2])
    out = run({"a": gray}, "a[x*2, y*2]", boundary="clamp")
    expected = gray[np.minimum(np.arange(H) * 2, H - 1)[:, None], np.minimum(np.arange(W) * 2, W - 1)[None]]
    np.testing.assert_array_equal(out, expected)
    out = run({"a": gray}, "a[width - 1 - x, -y + height - 1]")
    np.testing.assert_array_equal(out, gray[::-1, ::-1])


def test_channels(colour):
    out = run({"a": colour}, "a[x, y, 2 - c]")  # RGB -> BGR; c is the channel inside brackets
    np.testing.assert_array_equal(out, colour[::-1])
    out = run({"a": colour}, "a[x, y, 0]")  # red in every channel
    np.testing.assert_array_equal(out, np.broadcast_to(colour[0], colour.shape))
    out = run({"a": colour}, "a if ch == 1 else 0")  # ch is the channel anywhere
    np.testing.assert_array_equal(out, colour * (np.arange(3) == 1)[:, None, None])
    out = run({"a": colour}, "a[x, y, c + 5]")  # channel reads are clamped to the channels
    np.testing.assert_array_equal(out, np.broadcast_to(colour[2], colour.shape))


def test_colour_b_makes_the_result_colour(colour):
    """A gray `a` and a colour `b` make a colour result, sized by a."""
    out = run({"a": colour[0], "b": colour}, "b[x, y, 1] * 0.5 + a * 0.5")
    expected = to_u8(colour[1] / 255 * 0.5 + colour[0] / 255 * 0.5)
    assert out.shape == colour.shape
    assert np.abs(out.astype(int) - np.broadcast_to(expected, colour.shape)).max() <= 1


def test_other_inputs_are_bounded(gray):
    """b, c, d may be smaller than a: they are read through the boundary condition."""
    small = gray[:50, :60]
    out = run({"a": gray, "b": small}, "b + a * 0", boundary="clamp")
    expected = small[np.minimum(np.arange(H), 49)[:, None], np.minimum(np.arange(W), 59)[None]]
    np.testing.assert_array_equal(out, expected)


def test_four_inputs(floats):
    a, b = floats
    c, d = a[::-1].copy(), b[:, ::-1].copy()
    out = run({"a": a, "b": b, "c": c, "d": d}, "min(a, b, c, d) + max(a, b) * c - d / 2")
    np.testing.assert_allclose(out, np.minimum.reduce([a, b, c, d]) + np.maximum(a, b) * c - d / 2, atol=1e-5)


FUNCTION_CASES = [
    ("sqrt(a)", lambda a, b: np.sqrt(a)),
    ("exp(a) - 1", lambda a, b: np.exp(a) - 1),
    ("log(a + 1)", lambda a, b: np.log(a + 1)),
    ("pow(a, 2.2) + b ** 3", lambda a, b: a**2.2 + b**3),
    ("sin(a * 3) + cos(b * 3)", lambda a, b: np.sin(a * 3) + np.cos(b * 3)),
    ("tan(a)", lambda a, b: np.tan(a)),
    ("atan2(a - 0.5, b - 0.5)", lambda a, b: np.arctan2(a - 0.5, b - 0.5)),
    ("floor(a * 10) / 10 + ceil(b * 10)", lambda a, b: np.floor(a * 10) / 10 + np.ceil(b * 10)),
    ("round(a * 7.5)", lambda a, b: np.rint(np.float32(a * np.float32(7.5)))),
    ("lerp(a, b, 0.25)", lambda a, b: a + (b - a) * 0.25),
    ("abs(a - b) + -a", lambda a, b: np.abs(a - b) - a),
    ("a % 0.3 + a // 0.25", lambda a, b: np.mod(a, np.float32(0.3)) + np.floor(a / 0.25)),
    ("f32(u8(a * 255)) / 255", lambda a, b: np.trunc(a * 255) / 255),
    ("i32(a * 7) / 7", lambda a, b: np.trunc(a * 7) / 7),
    ("u16(a * 1000) // 3", lambda a, b: np.trunc(a * 1000) // 3),
    ("1 - a if a < b and not a > 0.9 else b", lambda a, b: np.where((a < b) & ~(a > 0.9), 1 - a, b)),
    ("0.2 < a <= 0.6", lambda a, b: ((a > 0.2) & (a <= 0.6)).astype(np.float32)),
    ("a > 0.5 or b > 0.5", lambda a, b: ((a > 0.5) | (b > 0.5)).astype(np.float32)),
    ("select(a < 0.3, 0, a < 0.6, 0.5, 1)", lambda a, b: np.select([a < 0.3, a < 0.6], [0, 0.5], 1)),
    ("2 ** 3 + 7 / 2 + 7 // 2", lambda a, b: np.full_like(a, 8 + 3.5 + 3)),
]


@pytest.mark.parametrize(("expression", "numpy_fn"), FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_functions_and_operators(floats, expression, numpy_fn):
    a, b = floats
    # every input given must be read (GraphRunner hands each pipeline all the images)
    inputs = {"a": a, "b": b} if "b" in expression else {"a": a}
    out = run(inputs, expression if "a" in expression else f"{expression} + a * 0", output="f32")
    expected = numpy_fn(a, b)
    assert out.dtype == np.float32
    close = np.isclose(out, expected, rtol=1e-5, atol=1e-5)
    # floor, trunc and // may land on the other side of an integer where float32 rounding differs
    assert close.mean() > 0.999, expression


def test_output_types(gray):
    out = run({"a": gray}, "a", output="u16")
    np.testing.assert_array_equal(out, gray.astype(np.uint16) * 257)
    out = run({"a": gray}, "a", output="f32")
    np.testing.assert_allclose(out, gray / 255, atol=1e-7)
    out = run({"a": gray.astype(np.uint16) * 257}, "a * 2")  # "same": u16, saturated
    np.testing.assert_array_equal(out, np.minimum(gray.astype(int) * 514, 65535))


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("a + b", "input `b` is not connected: `b` at column 5"),
        ("a[x, y, 0]", "input `a` is a gray image: read it at two coordinates [x, y]: `a[x, y, 0]` at column 1"),
        ("a * ch", "uses the channel coordinate, but reads no colour input"),
        ("a + foo", "unknown name `foo`"),
        ("open('f')", "calls are limited to select, min, max"),
        ("select(a, 1.0, 0.0)", "the condition of select must be a bool"),
        ("a + (x if a > 0.5 else 1.5)", "do not have a matching type"),
        ("a and x > 3", "needs a boolean operand"),
        ("a // 4 + 300", "integer constant 300 will be implicitly coerced to type uint8"),
        ("", "parameter `expression` needs a non-empty expression"),
    ],
)
def test_errors_name_the_node_and_the_column(gray, expression, message):
    with pytest.raises(NodeError, match="node `node`: ") as caught:
        run_node("custom_expression", {"a": gray}, {"expression": expression, "values": "raw"})
    assert message in str(caught.value)


def test_type_errors_are_located(gray):
    with pytest.raises(NodeError) as caught:
        run_node("custom_expression", {"a": gray}, {"expression": "a + select(a > 0.5, x, 1.5)", "values": "raw"})
    assert "do not have a matching type" in str(caught.value)
    assert str(caught.value).endswith("`select(a > 0.5, x, 1.5)` at column 5")
