"""`pixelweave.imageio`: image files as the arrays Pixelweave's Buffers and Callables take
(Halide's `halide.imageio`). A colour image is read into a planar (channels, height, width)
array, which a Buffer reads as `b[x, y, c]`; `imwrite` takes that layout back."""

from __future__ import annotations

from typing import Any

import imageio.v2 as _imageio
import numpy as np


def is_interleaved(image: Any) -> bool:
    """Whether a 3-D array looks interleaved: (height, width, channels) with 1 to 4 channels
    adjacent in memory."""
    array = np.asarray(image)
    return array.ndim == 3 and array.shape[2] in (1, 2, 3, 4) and array.strides[2] == array.itemsize


def copy_to_planar(image: Any) -> np.ndarray:
    """A planar (channels, height, width) copy of an interleaved image; other arrays are returned as they are."""
    array = np.asarray(image)
    if is_interleaved(array):
        return np.ascontiguousarray(np.moveaxis(array, 2, 0))
    return array


def copy_to_interleaved(image: Any) -> np.ndarray:
    """An interleaved (height, width, channels) copy of a planar 3-D image; other arrays are returned as they are."""
    array = np.asarray(image)
    if array.ndim == 3 and not is_interleaved(array):
        return np.ascontiguousarray(np.moveaxis(array, 0, 2))
    return array


def imread(uri: Any, format: Any = None, **kwargs: Any) -> np.ndarray:  # noqa: A002 - imageio's keyword
    """Read an image file; colour images come back planar (channels, height, width)."""
    return copy_to_planar(_imageio.imread(uri, format, **kwargs))


def imwrite(uri: Any, image: Any, format: Any = None, **kwargs: Any) -> None:  # noqa: A002
    """Write an image file from a gray (height, width) or planar (channels, height, width) array."""
    _imageio.imwrite(uri, copy_to_interleaved(image), format, **kwargs)
