"""Reading image files into the engine's planar layout and writing results back.

Files come interleaved (h, w, channels) from imageio; the engine's colour layout is planar
(3, h, w) (`f[x, y, c]`). Gray conversion uses Rec. 601 luma weights.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.files import mode_for

LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float64)
DTYPES = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}


def _scale(dtype: np.dtype) -> float:
    return 1.0 if np.issubdtype(dtype, np.floating) else float(np.iinfo(dtype).max)


def to_element(array: np.ndarray, element: str) -> np.ndarray:
    """array converted to element type u8/u16/f32, mapping full scale to full scale."""
    target = np.dtype(DTYPES[element])
    if array.dtype == target:
        return array
    if array.dtype == np.bool_:
        array = array.astype(np.uint8) * 255
    value = array.astype(np.float64) * (_scale(target) / _scale(array.dtype))
    if np.issubdtype(target, np.integer):
        value = np.clip(np.rint(value), 0, _scale(target))
    return value.astype(target)


def to_layout(array: np.ndarray, layout: str, element: str) -> np.ndarray:
    """An array as read from a file ((h, w), (h, w, 3) or (h, w, 4)) in the engine layout:
    gray (h, w) or planar colour (3, h, w), of the given element type."""
    if array.ndim == 3 and array.shape[2] in (2, 4):
        array = array[..., : array.shape[2] - 1]  # drop alpha
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[..., 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] != 3):
        raise NodeError(f"cannot read an image of shape {array.shape}: expected (h, w) or (h, w, 3)")
    if layout == "gray":
        if array.ndim == 3:
            gray = array.astype(np.float64) @ LUMA
            array = (
                np.clip(np.rint(gray), 0, _scale(array.dtype)).astype(array.dtype)
                if np.issubdtype(array.dtype, np.integer)
                else gray.astype(array.dtype)
            )
        return np.ascontiguousarray(to_element(array, element))
    if array.ndim == 2:
        array = np.stack([array] * 3, axis=-1)
    return np.ascontiguousarray(np.moveaxis(to_element(array, element), -1, 0))


def read_image(path: str | Path, layout: str, element: str) -> np.ndarray:
    """The image file at path in the engine layout; NodeError if it cannot be read."""
    import imageio.v3 as iio

    try:
        array = np.asarray(iio.imread(path))
    except Exception as e:  # imageio raises many kinds; all mean "not an image we can read"
        raise NodeError(f"cannot read image {str(path)!r}: {e}") from e
    return to_layout(array, layout, element)


def decode_image(data: bytes, name: str, layout: str, element: str) -> np.ndarray:
    """The encoded image file `data` (read from the file called name) in the engine layout;
    NodeError naming the file if it cannot be decoded. For processes that get a file's bytes
    rather than its path (Dask workers)."""
    import imageio.v3 as iio

    try:
        array = np.asarray(iio.imread(data, extension=Path(name).suffix.lower() or None))
    except Exception as e:  # imageio raises many kinds; all mean "not an image we can read"
        raise NodeError(f"cannot read image {name!r}: {str(e).replace('<bytes>', name)}") from e
    return to_layout(array, layout, element)


def encode_image(array: np.ndarray, suffix: str = ".png") -> bytes:
    """An engine array encoded as an image file of the kind suffix names, in memory."""
    import imageio.v3 as iio

    return bytes(iio.imwrite("<bytes>", to_file_layout(array), extension=suffix))


def to_file_layout(array: np.ndarray) -> np.ndarray:
    """An engine array ready for imageio: planar colour to interleaved, floats to u8."""
    if array.ndim == 3:
        array = np.moveaxis(array, 0, -1)
    if np.issubdtype(array.dtype, np.floating):
        array = to_element(np.clip(array, 0.0, 1.0), "u8")
    elif array.dtype not in (np.uint8, np.uint16):
        array = np.clip(array, 0, 65535).astype(np.uint16)
    return np.ascontiguousarray(array)


def write_image(path: str | Path, array: np.ndarray) -> None:
    """Writes an engine array as an image file, atomically (temporary file, then rename)."""
    import imageio.v3 as iio

    data = to_file_layout(array)
    _write_atomically(Path(path), lambda tmp: iio.imwrite(tmp, data))


def write_encoded_image(path: str | Path, data: bytes) -> None:
    """Writes an already encoded image file (from encode_image) atomically."""
    _write_atomically(Path(path), lambda tmp: Path(tmp).write_bytes(data))


def _write_atomically(path: Path, write: Callable[[str], object]) -> None:
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent or ".")
    os.close(fd)
    os.chmod(tmp, mode_for(path))
    try:
        write(tmp)
        os.replace(tmp, path)
    except Exception:
        Path(tmp).unlink(missing_ok=True)
        raise
