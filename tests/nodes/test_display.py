"""Display conversion of node outputs: hand-made arrays against independent NumPy arithmetic."""

import numpy as np
import pytest
from pixelweave.nodes.display import (
    DisplayError,
    describe,
    display_note,
    display_rgb,
    histogram,
    image_size,
    pixel_text,
    pixel_values_text,
    scalar_text,
    series,
)


def _gray_as_rgb(expected_gray: np.ndarray) -> np.ndarray:
    return np.stack([expected_gray] * 3, axis=-1).astype(np.uint8)


# --- display_rgb -------------------------------------------------------------------------


def test_u8_gray_is_shown_as_is_in_all_three_channels():
    gray = np.array([[0, 17, 255], [128, 1, 2]], np.uint8)
    rgb = display_rgb(gray)
    assert rgb.shape == (2, 3, 3) and rgb.dtype == np.uint8 and rgb.flags.c_contiguous
    assert np.array_equal(rgb, _gray_as_rgb(gray))


def test_planar_colour_becomes_interleaved():
    planar = np.arange(3 * 2 * 4, dtype=np.uint8).reshape(3, 2, 4)
    rgb = display_rgb(planar)
    assert rgb.shape == (2, 4, 3) and rgb.flags.c_contiguous
    for y in range(2):
        for x in range(4):
            assert list(rgb[y, x]) == [planar[0, y, x], planar[1, y, x], planar[2, y, x]]


def test_u16_is_divided_by_257():
    gray = np.array([[0, 257, 65535, 128, 129, 40000]], np.uint16)
    expected = np.round(gray.astype(np.float64) / 257.0)
    assert np.array_equal(display_rgb(gray)[..., 0], expected)
    assert display_note(gray) == ""


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_floats_are_clipped_to_unit_range_and_nan_is_black(dtype):
    gray = np.array([[0.0, 0.5, 1.0, -0.25], [1.7, np.nan, 0.2, 0.998]], dtype)
    values = np.nan_to_num(gray.astype(np.float64), nan=0.0)
    expected = np.round(np.clip(values, 0.0, 1.0) * 255.0)
    assert np.array_equal(display_rgb(gray)[..., 1], expected)
    note = display_note(gray)
    assert "1 NaN shown as 0" in note
    assert "clipped to 0..1" in note and "-0.250..1.700" in note


def test_float_in_range_has_no_note():
    assert display_note(np.array([[0.0, 0.25], [1.0, 0.5]], np.float32)) == ""


def test_bool_is_black_or_white():
    mask = np.array([[True, False], [False, True]])
    assert np.array_equal(display_rgb(mask)[..., 2], np.where(mask, 255, 0))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint32])
def test_signed_and_wide_integers_are_stretched_to_their_own_range(dtype):
    low = 0 if dtype == np.uint32 else -12
    gray = np.array([[low, 0, 100], [340 if dtype != np.int8 else 100, 7, 50]], dtype)
    lo, hi = float(gray.min()), float(gray.max())
    expected = np.round((gray.astype(np.float64) - lo) / (hi - lo) * 255.0)
    assert np.array_equal(display_rgb(gray)[..., 0], expected)
    assert display_note(gray) == f"shown stretched from {int(lo)}..{int(hi)}"


def test_constant_signed_image_is_black_and_says_so():
    gray = np.full((2, 2), -5, np.int32)
    assert not display_rgb(gray).any()
    assert display_note(gray) == "constant -5"


def test_one_and_two_channels_show_the_first_plane_as_gray():
    planes = np.array([[[10, 20]], [[200, 210]]], np.uint8)  # (2, 1, 2): gray + alpha
    assert np.array_equal(display_rgb(planes), _gray_as_rgb(planes[0]))
    assert np.array_equal(display_rgb(planes[:1]), _gray_as_rgb(planes[0]))
    assert "alpha not shown" in display_note(planes)


def test_rgba_shows_rgb_and_stretch_ignores_alpha():
    planes = np.zeros((4, 1, 2), np.int16)
    planes[0] = [[0, 10]]
    planes[3] = [[-1000, 1000]]
    rgb = display_rgb(planes)
    assert list(rgb[0, 1]) == [255, 0, 0]
    assert display_note(planes) == "alpha not shown; shown stretched from 0..10"


@pytest.mark.parametrize(
    "array, fragment",
    [
        (np.zeros((5, 2, 2), np.uint8), "1 to 4 channels"),
        (np.zeros((2, 2, 2, 2), np.uint8), "4-d array"),
        (np.zeros((2, 2), np.complex64), "complex64"),
    ],
)
def test_unshowable_arrays_are_refused_with_a_reason(array, fragment):
    with pytest.raises(DisplayError, match=fragment):
        display_rgb(array)


# --- read-outs ---------------------------------------------------------------------------


def test_pixel_text_of_float_colour_uses_three_decimals():
    planar = np.zeros((3, 50, 20), np.float32)
    planar[:, 40, 12] = [0.525, 0.30149, 0.118]
    assert pixel_text(planar, 12, 40) == "x 12  y 40   R 0.525  G 0.301  B 0.118"


def test_pixel_text_of_gray_u8_and_outside():
    gray = np.zeros((5, 4), np.uint8)
    gray[4, 3] = 117
    assert pixel_text(gray, 3, 4) == "x 3  y 4   value 117"
    assert pixel_text(gray, 4, 4) == "" and pixel_text(gray, -1, 0) == "" and pixel_text(gray, 0, 5) == ""


def test_pixel_values_of_other_types():
    assert pixel_values_text(np.array([[-3]], np.int16), 0, 0) == "value -3"
    assert pixel_values_text(np.array([[True]]), 0, 0) == "value true"
    assert pixel_values_text(np.array([[np.nan, 2.5e-5]], np.float32), 0, 0) == "value NaN"
    assert pixel_values_text(np.array([[np.nan, 2.5e-5]], np.float32), 1, 0) == "value 2.5e-05"
    rgba = np.array([[[1]], [[2]], [[3]], [[4]]], np.uint16)
    assert pixel_values_text(rgba, 0, 0) == "R 1  G 2  B 3  A 4"


def test_one_dimensional_read_out_and_series():
    table = np.array([3, 0, 300, 7], np.uint32)
    assert pixel_text(table, 2, 99) == "index 2   value 300"
    assert pixel_text(table, 4, 0) == ""
    edges, heights = series(np.array([1.0, np.nan, 2.0], np.float32))
    assert np.array_equal(edges, [-0.5, 0.5, 1.5, 2.5])
    assert np.array_equal(heights, [1.0, 0.0, 2.0])
    assert display_note(np.array([1.0, np.nan], np.float32)) == "1 NaN drawn as 0"


def test_scalar_text_and_descriptions():
    assert scalar_text(np.array(117, np.uint8)) == "117"
    assert scalar_text(np.float32(0.25)) == "0.250"
    assert describe(np.zeros((480, 640), np.uint8)) == "640 × 480 gray u8"
    assert describe(np.zeros((3, 480, 640), np.float32)) == "640 × 480 RGB f32"
    assert describe(np.zeros(256, np.uint32)) == "array of 256 u32"
    assert describe(np.array(1.0)) == "scalar f64"
    assert image_size(np.zeros((3, 480, 640))) == (640, 480)


# --- histogram ---------------------------------------------------------------------------


def test_u8_histogram_has_one_bin_per_value_per_channel():
    rng = np.random.default_rng(1)
    planar = rng.integers(0, 256, (3, 30, 40), dtype=np.uint8)
    edges, counts = histogram(planar)
    assert np.array_equal(edges, np.arange(257))
    for channel in range(3):
        assert np.array_equal(counts[channel], np.bincount(planar[channel].ravel(), minlength=256))


def test_u16_histogram_covers_the_full_range():
    gray = np.array([[0, 255, 256, 65535, 30000]], np.uint16)
    edges, counts = histogram(gray, bins=256)
    assert edges[0] == 0 and edges[-1] == 65536
    expected = np.bincount(gray.ravel() // 256, minlength=256)
    assert np.array_equal(counts[0], expected)


def test_float_histogram_widens_to_data_and_skips_nan():
    gray = np.array([[-0.5, 0.0, 0.25, 2.0, np.nan, np.inf]], np.float32)
    edges, counts = histogram(gray, bins=10)
    assert edges[0] == -0.5 and edges[-1] == 2.0
    finite = np.array([-0.5, 0.0, 0.25, 2.0])
    expected, _ = np.histogram(finite, bins=10, range=(-0.5, 2.0))
    assert np.array_equal(counts[0], expected)


def test_float_histogram_in_unit_range_uses_zero_to_one():
    gray = np.array([[0.2, 0.4]], np.float32)
    edges, counts = histogram(gray, bins=4)
    assert np.array_equal(edges, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert list(counts[0]) == [1, 1, 0, 0]


def test_signed_histogram_uses_own_range_with_integer_bins():
    gray = np.array([[-3, -3, 0, 2]], np.int16)
    edges, counts = histogram(gray)
    assert np.array_equal(edges, [-3, -2, -1, 0, 1, 2, 3])
    assert list(counts[0]) == [2, 0, 0, 1, 0, 1]


def test_bool_histogram_has_two_bins():
    edges, counts = histogram(np.array([[True, False, True]]))
    assert np.array_equal(edges, [0, 1, 2]) and list(counts[0]) == [1, 2]
