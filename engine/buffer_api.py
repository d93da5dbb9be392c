"""Halide's `Buffer`: a NumPy array seen in Halide's dimension order, with a min per dimension.

Dimension 0 is the last NumPy axis (as everywhere in the engine), `b[x, y]` indexes with
Halide coordinates (relative to the mins), and `np.asarray(b)` is the array itself (NumPy
order, no copy), as with Halide's Python bindings. A Buffer can be an input (`inputs=`,
`ImageParam.set`) and an output (`Func.realize(buffer)`, `Pipeline.realize(buffer)`):
its mins give the domain the pipeline reads or computes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from pixelweave.engine.errors import InputError
from pixelweave.engine.ir.types import Type, type_of_numpy

_buffer_counter = itertools.count()


class BufferDimension:
    """One dimension of a Buffer: min, extent and stride (in elements), Halide's `dim(i)`."""

    def __init__(self, buffer: Buffer, index: int) -> None:
        self._buffer = buffer
        self._index = index

    def min(self) -> int:
        return self._buffer._mins[self._index]

    def extent(self) -> int:
        return self._buffer._extents()[self._index]

    def max(self) -> int:
        return self.min() + self.extent() - 1

    def stride(self) -> int:
        array = self._buffer._array
        return array.strides[array.ndim - 1 - self._index] // array.itemsize

    def __repr__(self) -> str:
        return f"<Dimension min={self.min()} extent={self.extent()} stride={self.stride()}>"


class Buffer:
    """`Buffer(type, sizes)` allocates (zero-filled); `Buffer(array)` wraps a NumPy array
    without copying (its last axis is dimension 0). Halide's constructors and accessors."""

    def __init__(self, source: Any = None, sizes: Sequence[int] | None = None, name: str | None = None) -> None:
        if isinstance(source, Type):
            if sizes is None:
                sizes = []
            sizes = [int(s) for s in sizes]
            if any(s < 0 for s in sizes):
                raise InputError(f"Buffer sizes must not be negative, got {sizes}")
            from pixelweave.engine.runtime.buffer import aligned_empty

            array = aligned_empty(tuple(reversed(sizes)), source.numpy())
            array.fill(0)
        elif isinstance(source, Buffer):
            array = source._array
        elif isinstance(source, np.ndarray):
            if sizes is not None:
                raise InputError("Buffer(array) takes its sizes from the array; pass no sizes")
            array = source
        else:
            raise InputError(
                f"Buffer needs a Type and sizes, or a NumPy array, got {type(source).__name__}; "
                "e.g. Buffer(UInt(8), [640, 480]) or Buffer(np.zeros((480, 640), np.uint8))"
            )
        try:
            self._type = type_of_numpy(array.dtype)
        except ValueError:
            raise InputError(f"a Buffer cannot hold NumPy dtype {array.dtype}") from None
        self._array = array
        self._mins = list(source._mins) if isinstance(source, Buffer) else [0] * array.ndim
        self._name = name if name is not None else f"b{next(_buffer_counter)}"

    @staticmethod
    def make_interleaved(t: Type, width: int, height: int, channels: int, name: str | None = None) -> Buffer:
        """A (width, height, channels) buffer whose channels are adjacent in memory
        (dimension 2 has stride 1, dimension 0 stride `channels`), as Halide's."""
        from pixelweave.engine.runtime.buffer import aligned_empty

        storage = aligned_empty((int(height), int(width), int(channels)), t.numpy())
        storage.fill(0)
        return Buffer(np.moveaxis(storage, 2, 0), name=name)

    # ------------------------------------------------------------------ Halide's accessors
    def _extents(self) -> list[int]:
        return list(reversed(self._array.shape))

    def type(self) -> Type:
        return self._type

    def name(self) -> str:
        return self._name

    def set_name(self, name: str) -> None:
        self._name = name

    def defined(self) -> bool:
        return True

    def dimensions(self) -> int:
        return self._array.ndim

    def dim(self, i: int) -> BufferDimension:
        if not 0 <= i < self._array.ndim:
            raise InputError(f"Buffer `{self._name}` has {self._array.ndim} dimensions, not a dimension {i}")
        return BufferDimension(self, i)

    def width(self) -> int:
        return self.dim(0).extent()

    def height(self) -> int:
        return self.dim(1).extent()

    def channels(self) -> int:
        return self.dim(2).extent()

    def left(self) -> int:
        return self.dim(0).min()

    def right(self) -> int:
        return self.dim(0).max()

    def top(self) -> int:
        return self.dim(1).min()

    def bottom(self) -> int:
        return self.dim(1).max()

    def number_of_elements(self) -> int:
        return int(self._array.size)

    def size_in_bytes(self) -> int:
        return int(self._array.nbytes)

    def mins(self) -> list[int]:
        return list(self._mins)

    def set_min(self, mins: Sequence[int]) -> None:
        """Move the domain so that dimension i starts at mins[i] (the data stays where it is)."""
        mins = [int(m) for m in mins]
        if len(mins) > self._array.ndim:
            raise InputError(f"set_min of Buffer `{self._name}` got {len(mins)} mins for {self._array.ndim} dimensions")
        self._mins[: len(mins)] = mins

    def translate(self, delta: Sequence[int]) -> None:
        self.set_min([m + int(d) for m, d in zip(self._mins, delta, strict=False)])

    def contains(self, coords: Sequence[int]) -> bool:
        return all(m <= c < m + e for c, m, e in zip(coords, self._mins, self._extents(), strict=True))

    def fill(self, value: int | float) -> None:
        self._array.fill(value)

    def copy(self) -> Buffer:
        """A dense copy with the same mins."""
        result = Buffer(np.array(self._array, order="C"), name=self._name)
        result._mins = list(self._mins)
        return result

    def __getitem__(self, coords: Any) -> Any:
        return self._array[self._position(coords)]

    def __setitem__(self, coords: Any, value: Any) -> None:
        self._array[self._position(coords)] = value

    def _position(self, coords: Any) -> tuple[int, ...]:
        coords = coords if isinstance(coords, (tuple, list)) else (coords,)
        if len(coords) != self._array.ndim:
            raise InputError(
                f"Buffer `{self._name}` has {self._array.ndim} dimensions, but was indexed with {len(coords)}"
            )
        if not self.contains([int(c) for c in coords]):
            box = ", ".join(f"[{m}, {m + e - 1}]" for m, e in zip(self._mins, self._extents(), strict=True))
            raise InputError(f"coordinates {tuple(coords)} are outside Buffer `{self._name}` ({box})")
        return tuple(int(c) - m for c, m in zip(reversed(coords), reversed(self._mins), strict=True))

    # ------------------------------------------------------------------ NumPy
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self._array.dtype:
            return self._array.astype(dtype)
        return self._array.copy() if copy else self._array

    def array(self) -> np.ndarray:
        """The NumPy array (NumPy axis order: dimension 0 last), without copying."""
        return self._array

    def __repr__(self) -> str:
        box = ", ".join(f"[{m}, {m + e - 1}]" for m, e in zip(self._mins, self._extents(), strict=True))
        return f"<pixelweave.Buffer {self._name} {self._type} {box}>"


def array_and_mins(value: Any) -> tuple[Any, list[int] | None]:
    """(array, mins) for a Buffer; (value, None) for anything else (a plain array's mins are 0)."""
    if isinstance(value, Buffer):
        return value.array(), value.mins()
    return value, None
