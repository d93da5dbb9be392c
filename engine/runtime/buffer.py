"""NumPy arrays <-> `pw_buffer_t` descriptors, the calling convention of compiled pipelines.

    typedef struct { int32_t min, extent, stride, flags; } pw_dimension_t;
    typedef struct { uint8_t *host; int32_t type_code, type_bits, dimensions, flags;
                     pw_dimension_t *dim; } pw_buffer_t;

Dimension 0 of a buffer is the LAST NumPy axis (Halide's convention): a (h, w) array has
dim[0] = (min 0, extent w, stride 1) and dim[1] = (0, h, w). Strides count elements, so
any view whose byte strides are multiples of the item size can be passed without a copy.
Generated code indexes with 32-bit integers, so every extent, stride, min and the span
an array covers must fit in int32.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pixelweave.engine.codegen.llvm import (
    BUFFER_DIM_OFFSET,
    BUFFER_SIZE,
    BUFFER_TYPE_CODE_OFFSET,
    DIMENSION_SIZE,
    TYPE_CODES,
)
from pixelweave.engine.errors import InputError
from pixelweave.engine.ir.param import check_scalar
from pixelweave.engine.ir.types import Type, type_of_numpy

ALIGNMENT = 64  # a cache line and an AVX-512 vector


def aligned_empty(shape: Sequence[int], dtype: Any, alignment: int = ALIGNMENT) -> np.ndarray:
    """np.empty whose data starts on an `alignment`-byte boundary. NumPy's own large arrays
    start 16 bytes into a page, so every 64-byte vector store would straddle two cache lines."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.empty(count * dtype.itemsize + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)


INT32_MAX = 2**31 - 1


class DimensionStruct(ctypes.Structure):
    """pw_dimension_t."""

    _fields_ = [
        ("min", ctypes.c_int32),
        ("extent", ctypes.c_int32),
        ("stride", ctypes.c_int32),
        ("flags", ctypes.c_int32),
    ]


class BufferStruct(ctypes.Structure):
    """pw_buffer_t."""

    _fields_ = [
        ("host", ctypes.c_void_p),
        ("type_code", ctypes.c_int32),
        ("type_bits", ctypes.c_int32),
        ("dimensions", ctypes.c_int32),
        ("flags", ctypes.c_int32),
        ("dim", ctypes.POINTER(DimensionStruct)),
    ]


assert ctypes.sizeof(BufferStruct) == BUFFER_SIZE and ctypes.sizeof(DimensionStruct) == DIMENSION_SIZE
assert BufferStruct.type_code.offset == BUFFER_TYPE_CODE_OFFSET and BufferStruct.dim.offset == BUFFER_DIM_OFFSET

_SCALAR_CTYPES: dict[tuple[str, int], Any] = {
    ("uint", 1): ctypes.c_uint8,
    ("int", 8): ctypes.c_int8,
    ("int", 16): ctypes.c_int16,
    ("int", 32): ctypes.c_int32,
    ("int", 64): ctypes.c_int64,
    ("uint", 8): ctypes.c_uint8,
    ("uint", 16): ctypes.c_uint16,
    ("uint", 32): ctypes.c_uint32,
    ("uint", 64): ctypes.c_uint64,
    ("float", 32): ctypes.c_float,
    ("float", 64): ctypes.c_double,
}


@dataclass
class BufferDescriptor:
    """A pw_buffer_t describing a NumPy array; keeps the array and dim storage alive."""

    struct: BufferStruct
    dims: ctypes.Array
    array: np.ndarray

    @property
    def address(self) -> int:
        return ctypes.addressof(self.struct)


def scalar_ctype(t: Type) -> Any:
    """The ctypes type a scalar argument of type t is passed as (bool as uint8)."""
    return _SCALAR_CTYPES[(t.code, t.bits)]


def scalar_argument(name: str, t: Type, value: Any) -> ctypes._SimpleCData:
    """A ctypes value for scalar argument `name`, or InputError if value does not fit t."""
    checked = check_scalar(name, t, value)
    return scalar_ctype(t)(int(bool(checked)) if t.is_bool() else checked)


def describe_array(
    array: Any,
    *,
    name: str,
    type: Type,  # noqa: A002 - the Argument's field name
    dimensions: int,
    mins: Sequence[int] | None = None,
    output: bool = False,
) -> BufferDescriptor:
    """A descriptor for array as buffer argument `name`, after checking dtype and shape.

    An input view the generated code cannot address (negative strides, misaligned data,
    byte strides that are not whole elements, non-native byte order) is copied; such an
    output view is refused, because results written to a copy would be lost.
    """
    role = "output" if output else "input"
    if not isinstance(array, np.ndarray):
        raise InputError(f"{role} `{name}` needs a NumPy array, got {type_name(array)}")
    try:
        given = type_of_numpy(array.dtype)
    except ValueError:
        given = None
    if given != type or not array.dtype.isnative:
        raise InputError(
            f"{role} `{name}` has element type {type} (NumPy {type.numpy()}), "
            f"but the array given has dtype {array.dtype}{'' if array.dtype.isnative else ' (non-native byte order)'}"
        )
    if array.ndim != dimensions:
        raise InputError(
            f"{role} `{name}` has {dimensions} dimensions, but the array given has {array.ndim} (shape {array.shape})"
        )
    if output and not array.flags.writeable:
        raise InputError(f"output `{name}` is a read-only array")
    problem = _addressing_problem(array) if array.size and _needs_checking(array) else None
    if problem is not None:
        if output:
            raise InputError(
                f"output `{name}` cannot be written in place: {problem}; pass a contiguous array "
                "(np.ascontiguousarray) and copy the result where you need it"
            )
        array = np.ascontiguousarray(array)
    mins = [0] * dimensions if mins is None else [int(m) for m in mins]
    if len(mins) != dimensions:
        raise InputError(f"{role} `{name}` has {dimensions} dimensions, but {len(mins)} mins were given")
    itemsize = array.dtype.itemsize
    dims = (DimensionStruct * max(dimensions, 1))()
    span = 0
    for i in range(dimensions):
        axis = dimensions - 1 - i
        extent = array.shape[axis]
        stride = array.strides[axis] // itemsize if extent > 1 else 0
        if extent > INT32_MAX:
            raise InputError(f"{role} `{name}` is too large: dimension {i} has extent {extent} (at most 2^31-1)")
        if not -(2**31) <= mins[i] <= INT32_MAX - max(extent, 0):
            raise InputError(f"{role} `{name}`: min {mins[i]} of dimension {i} does not fit in 32 bits")
        span += (extent - 1) * stride if extent > 0 else 0
        dims[i] = DimensionStruct(mins[i], extent, stride if extent > 1 else _dense_stride(array, axis), 0)
    if span > INT32_MAX:
        raise InputError(f"{role} `{name}` spans {span + 1} elements; the generated code addresses at most 2^31-1")
    struct = BufferStruct(
        array.ctypes.data,
        TYPE_CODES[type.code],
        type.bits,
        dimensions,
        0,
        ctypes.cast(dims, ctypes.POINTER(DimensionStruct)),
    )
    return BufferDescriptor(struct, dims, array)


def _dense_stride(array: np.ndarray, axis: int) -> int:
    """The stride a dense array would have along axis (used where numpy's is arbitrary)."""
    return int(np.prod(array.shape[axis + 1 :], dtype=np.int64))


def _needs_checking(array: np.ndarray) -> bool:
    """Whether an array may be one the generated code cannot address: a C-contiguous,
    aligned array in native byte order never is (numpy's flags are cheap to read; a
    per-axis check costs as much as a small image's run)."""
    flags = array.flags
    return not (flags.c_contiguous and flags.aligned)


def _addressing_problem(array: np.ndarray) -> str | None:
    itemsize = array.dtype.itemsize
    if array.size == 0:
        return None
    if array.ctypes.data % itemsize:
        return "its data is not aligned to its element size"
    for axis, (extent, stride) in enumerate(zip(array.shape, array.strides, strict=True)):
        if extent <= 1:
            continue
        if stride < 0:
            return f"axis {axis} has a negative stride"
        if stride % itemsize:
            return f"axis {axis} has a byte stride ({stride}) that is not a multiple of the item size ({itemsize})"
        if stride // itemsize > INT32_MAX:
            return f"axis {axis} has a stride that does not fit in 32 bits"
    return None


def type_name(value: Any) -> str:
    return type(value).__name__
