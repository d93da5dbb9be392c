"""Turning any node output into something a person can look at (Qt-free, NumPy only).

A node's output may be a gray image (h, w), a planar image (c, h, w) with 1-4 channels, a
1-D array (a histogram, a lookup table) or a 0-d scalar, of any element type. The preview
shows images as 8-bit RGB, so every type needs a fixed rule for how its values map to 0..255,
and the user must be told whenever the mapping is not the type's natural one (a stretched
signed image looks like an ordinary picture otherwise). Pixel read-outs, on the other hand,
always give the array's own values in its own type, because that is what a user debugging a
pipeline needs to see.
"""

from __future__ import annotations

import numpy as np

CHANNEL_LABELS = {1: ("value",), 2: ("value", "alpha"), 3: ("R", "G", "B"), 4: ("R", "G", "B", "A")}
LAYOUT_NAMES = {1: "gray", 2: "gray + alpha", 3: "RGB", 4: "RGBA"}
_ELEMENT_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


class DisplayError(ValueError):
    """An array the preview cannot show; the message says what shape or type was expected."""


def element_name(dtype: np.dtype) -> str:
    """The element type in the catalogue's spelling (u8, f32, ...), so read-outs match node ports."""
    return _ELEMENT_NAMES.get(np.dtype(dtype), str(np.dtype(dtype)))


def _check_dtype(array: np.ndarray) -> None:
    if np.dtype(array.dtype) not in _ELEMENT_NAMES:
        raise DisplayError(f"cannot show elements of type {array.dtype}: expected bool, an integer or a float type")


def is_image(array: np.ndarray) -> bool:
    """True for the shapes shown as a picture: (h, w) and planar (1-4, h, w)."""
    return array.ndim == 2 or (array.ndim == 3 and 1 <= array.shape[0] <= 4)


def channels(array: np.ndarray) -> np.ndarray:
    """An image as (channels, h, w) whatever its layout, so every function below has one case."""
    _check_dtype(array)
    if array.ndim == 2:
        return array[np.newaxis]
    if array.ndim == 3 and 1 <= array.shape[0] <= 4:
        return array
    if array.ndim == 3:
        raise DisplayError(
            f"cannot show an array of shape {array.shape}: an image is (h, w) or planar (channels, h, w) "
            "with 1 to 4 channels"
        )
    raise DisplayError(f"cannot show a {array.ndim}-d array of shape {array.shape} as an image")


def image_size(array: np.ndarray) -> tuple[int, int]:
    """(width, height) of an image array."""
    planes = channels(array)
    return int(planes.shape[2]), int(planes.shape[1])


def _is_stretched(dtype: np.dtype) -> bool:
    """Types without a natural 0..full-scale meaning in this project, shown over their own range."""
    return np.issubdtype(dtype, np.signedinteger) or dtype in (np.dtype(np.uint32), np.dtype(np.uint64))


def _finite_range(values: np.ndarray) -> tuple[float, float] | None:
    """min and max of the finite values, or None when there are none."""
    if values.size == 0:
        return None
    low, high = values.min(), values.max()
    if np.issubdtype(values.dtype, np.floating) and not (np.isfinite(low) and np.isfinite(high)):
        values = values[np.isfinite(values)]
        if values.size == 0:
            return None
        low, high = values.min(), values.max()
    return float(low), float(high)


def _stretch(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """values in [low, high] mapped linearly onto 0..255, rounded half to even."""
    scaled = values.astype(np.float64)
    scaled -= low
    scaled *= 255.0 / (high - low)
    np.rint(scaled, out=scaled)
    np.clip(scaled, 0.0, 255.0, out=scaled)
    return scaled.astype(np.uint8)


def _to_u8(planes: np.ndarray) -> np.ndarray:
    """Values mapped to 0..255 by the rule of their type (see the module docstring).

    The preview converts every update of images of many megapixels on the GUI thread, so
    8/16-bit types go through a lookup table and floats are converted in place in float32."""
    dtype = planes.dtype
    if dtype == np.uint8:
        return planes
    if dtype == np.bool_:
        return planes.view(np.uint8) * np.uint8(255)
    if dtype == np.uint16:
        table = ((np.arange(65536, dtype=np.uint32) + 128) // 257).astype(np.uint8)
        return table[planes]
    if np.issubdtype(dtype, np.floating):
        work = np.float64 if dtype == np.float64 else np.float32
        scaled = np.multiply(planes, work(255.0), dtype=work)
        np.fmax(scaled, 0.0, out=scaled)  # fmax also turns NaN into 0
        np.fmin(scaled, 255.0, out=scaled)
        np.rint(scaled, out=scaled)
        return scaled.astype(np.uint8)
    low, high = _finite_range(planes) or (0.0, 0.0)
    if high == low:
        return np.zeros(planes.shape, np.uint8)
    if dtype in (np.dtype(np.int8), np.dtype(np.int16)):
        bits = np.uint8 if dtype == np.int8 else np.uint16
        every_value = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
        table = np.empty(every_value.size, np.uint8)
        table[every_value.view(bits)] = _stretch(every_value, low, high)
        return table[planes.view(bits)]
    return _stretch(planes, low, high)


def _shown_planes(array: np.ndarray) -> np.ndarray:
    """The planes the picture shows: gray for 1-2 channels, RGB for 3-4 (alpha is dropped)."""
    planes = channels(array)
    return planes[:1] if planes.shape[0] <= 2 else planes[:3]


def display_rgb(array: np.ndarray) -> np.ndarray:
    """An image as (h, w, 3) uint8, C-contiguous, ready to wrap in a QImage.

    Gray is repeated into R, G and B; gray + alpha shows the gray plane; RGBA shows RGB (the
    note says the alpha is not shown)."""
    shown = _shown_planes(np.asarray(array))
    if shown.shape[0] == 1:
        rgb = np.repeat(_to_u8(shown[0])[:, :, np.newaxis], 3, axis=2)
    else:
        rgb = np.moveaxis(_to_u8(shown), 0, -1)
    return np.ascontiguousarray(rgb)


def display_note(array: np.ndarray) -> str:
    """What the display does not show faithfully ("shown stretched from -12..340"), or "".

    For images: stretching, clipping, NaN and a dropped alpha; for 1-D and 0-d arrays (drawn
    as a plot or as text, which need no mapping) only NaN drawn as 0."""
    array = np.asarray(array)
    dtype = array.dtype
    if array.ndim < 2:
        nan_count = int(np.count_nonzero(np.isnan(array))) if np.issubdtype(dtype, np.floating) else 0
        return f"{nan_count} NaN drawn as 0" if nan_count and array.ndim == 1 else ""
    notes = []
    if array.ndim == 3 and array.shape[0] in (2, 4):
        notes.append("alpha not shown")
    shown = _shown_planes(array)
    if shown.size and _is_stretched(dtype):
        low, high = _finite_range(shown) or (0, 0)
        if low == high:
            notes.append(f"constant {_format_number(low, dtype)}")
        else:
            notes.append(f"shown stretched from {_format_number(low, dtype)}..{_format_number(high, dtype)}")
    if shown.size and np.issubdtype(dtype, np.floating):
        nan_count = int(np.count_nonzero(np.isnan(shown)))
        if nan_count:
            notes.append(f"{nan_count} NaN shown as 0")
        bounds = _finite_range(shown)
        if bounds and (bounds[0] < 0.0 or bounds[1] > 1.0):
            low, high = bounds
            notes.append(f"range {_format_number(low, dtype)}..{_format_number(high, dtype)}, clipped to 0..1")
    return "; ".join(notes)


def describe(array: np.ndarray) -> str:
    """A one-line summary of what an output is ("640 × 480 RGB f32", "array of 256 u32")."""
    array = np.asarray(array)
    element = element_name(array.dtype)
    if array.ndim == 0:
        return f"scalar {element}"
    if array.ndim == 1:
        return f"array of {array.shape[0]} {element}"
    if is_image(array):
        width, height = image_size(array)
        count = 1 if array.ndim == 2 else array.shape[0]
        return f"{width} × {height} {LAYOUT_NAMES[count]} {element}"
    return f"{' × '.join(str(n) for n in array.shape)} {element}"


def _format_number(value: float | int | bool, dtype: np.dtype) -> str:
    """A value as a person reads it: integers exact, floats with 3 decimals or 4 significant digits."""
    if dtype == np.bool_:
        return "true" if value else "false"
    if not np.issubdtype(dtype, np.floating):
        return str(int(value))
    value = float(value)
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0.0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.3f}"
    return f"{value:.4g}"


def pixel_values_text(array: np.ndarray, x: int, y: int) -> str:
    """The values at (x, y) without the coordinates ("R 0.525  G 0.301  B 0.118"), "" outside."""
    array = np.asarray(array)
    if array.ndim == 1:
        if 0 <= x < array.shape[0]:
            return f"value {_format_number(array[x], array.dtype)}"
        return ""
    planes = channels(array)
    if not (0 <= x < planes.shape[2] and 0 <= y < planes.shape[1]):
        return ""
    labels = CHANNEL_LABELS[planes.shape[0]]
    values = planes[:, y, x]
    return "  ".join(f"{label} {_format_number(v, array.dtype)}" for label, v in zip(labels, values, strict=True))


def pixel_text(array: np.ndarray, x: int, y: int) -> str:
    """Coordinates and values at (x, y) in the array's own type ("x 3  y 4   value 117"), "" outside.

    For a 1-D array y is ignored and x is the index ("index 12   value 300")."""
    values = pixel_values_text(array, x, y)
    if not values:
        return ""
    if np.asarray(array).ndim == 1:
        return f"index {x}   {values}"
    return f"x {x}  y {y}   {values}"


def scalar_text(array: np.ndarray) -> str:
    """A 0-d array's value as text, for the preview's large read-out."""
    array = np.asarray(array)
    _check_dtype(array)
    return _format_number(array.item(), array.dtype)


def histogram(array: np.ndarray, bins: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(edges, counts) with counts shaped (channels, bins), over the type's natural range.

    Ranges: u8 [0, 256), u16 [0, 65536), bool [0, 2) in 2 bins; floats [0, 1] widened to the
    finite data min/max (NaN and inf are not counted); signed and 32/64-bit integers their
    own [min, max + 1). Integer types never get more bins than distinct possible values, so
    each integer value lands in exactly one bin."""
    planes = channels(np.asarray(array))
    dtype = planes.dtype
    if dtype == np.bool_:
        low, high, bins = 0.0, 2.0, 2
    elif dtype == np.uint8:
        low, high = 0.0, 256.0
    elif dtype == np.uint16:
        low, high = 0.0, 65536.0
    elif np.issubdtype(dtype, np.floating):
        bounds = _finite_range(planes) or (0.0, 1.0)
        low, high = min(0.0, bounds[0]), max(1.0, bounds[1])
    else:
        bounds = _finite_range(planes) or (0.0, 0.0)
        low, high = bounds[0], bounds[1] + 1.0
    if not np.issubdtype(dtype, np.floating):
        bins = int(max(1, min(bins, high - low)))
    edges = np.linspace(low, high, bins + 1)
    counts = np.empty((planes.shape[0], bins), np.int64)
    for index, plane in enumerate(planes):
        if np.issubdtype(dtype, np.floating):
            # NaN and inf fall outside the finite range and are ignored by np.histogram.
            counts[index], _ = np.histogram(plane, bins=bins, range=(low, high))
        else:
            counts[index] = _integer_counts(plane, int(low), int(high), edges)
    return edges, counts


def _integer_counts(plane: np.ndarray, low: int, high: int, edges: np.ndarray) -> np.ndarray:
    """np.histogram's counts for integer data, through one bincount of the values (many times
    faster on large images); bins hold the values v with edges[i] <= v < edges[i + 1]."""
    span = high - low
    if span > 1 << 20:
        return np.histogram(plane, bins=edges.size - 1, range=(low, high))[0]
    if plane.dtype == np.bool_:
        values = plane.view(np.uint8).ravel()
    elif low == 0 and plane.dtype in (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)):
        values = plane.ravel()
    else:
        values = (plane.astype(np.int64) - low).ravel()
    per_value = np.bincount(values, minlength=span)
    bin_of_value = np.searchsorted(edges, np.arange(low, high, dtype=np.float64), side="right") - 1
    return np.bincount(bin_of_value, weights=per_value, minlength=edges.size - 1).astype(np.int64)


def series(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A 1-D array as plottable (edges, heights): n + 1 bar edges centred on the indices and
    float64 heights with NaN and inf drawn as 0 (display_note counts the NaN)."""
    array = np.asarray(array)
    if array.ndim != 1:
        raise DisplayError(f"expected a 1-D array to plot, got shape {array.shape}")
    _check_dtype(array)
    heights = np.nan_to_num(array.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    edges = np.arange(array.shape[0] + 1, dtype=np.float64) - 0.5
    return edges, heights
