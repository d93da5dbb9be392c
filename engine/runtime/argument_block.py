"""One call's arguments of a compiled pipeline, packed into a single ctypes block.

Calling generated code needs an argv array of pointers, a `pw_buffer_t` and its
`pw_dimension_t`s per buffer and a slot per scalar. Building these as separate ctypes
objects (and checking each array axis by axis) cost 0.1-0.2 ms per call, as much as the work
of a small image. The layout of the block depends only on the pipeline's arguments, so it is
worked out once per compiled pipeline (`ArgumentBlock`); a call then checks each array with a
few attribute reads and writes every field with one precompiled `struct.pack_into`.

Only arrays the generated code can address as they are (C-contiguous, aligned, the exact
native dtype, a size that fits 32-bit indexing) take this path; anything else goes through
`describe_array` / `scalar_argument`, which copy an input view that needs it and refuse a
wrong array with the same messages as before. Every call gets a fresh block, so concurrent
calls from several threads never share one.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pixelweave.engine.codegen.llvm import TYPE_CODES
from pixelweave.engine.errors import InputError
from pixelweave.engine.ir.param import check_scalar
from pixelweave.engine.lowered import Argument
from pixelweave.engine.runtime.buffer import (
    INT32_MAX,
    BufferStruct,
    DimensionStruct,
    describe_array,
    scalar_argument,
)

# pw_buffer_t: host pointer, type code, type bits, dimensions, flags, dim pointer.
_BUFFER_HEAD = struct.Struct("<QiiiiQ")
_DIMENSION = struct.Struct("<iiii")
assert _BUFFER_HEAD.size == ctypes.sizeof(BufferStruct) and _DIMENSION.size == ctypes.sizeof(DimensionStruct)
assert BufferStruct.dim.offset == 24 and BufferStruct.dimensions.offset == 16

_SCALAR_FORMATS: dict[tuple[str, int], str] = {
    ("uint", 1): "B",
    ("int", 8): "b",
    ("int", 16): "h",
    ("int", 32): "i",
    ("int", 64): "q",
    ("uint", 8): "B",
    ("uint", 16): "H",
    ("uint", 32): "I",
    ("uint", 64): "Q",
    ("float", 32): "f",
    ("float", 64): "d",
}


class ArgumentBlock:
    """The packed layout of a pipeline's arguments: argv, then per buffer its descriptor and
    dimensions, then an 8-byte slot per scalar."""

    def __init__(self, arguments: Sequence[Argument]) -> None:
        self.arguments = list(arguments)
        count = max(len(self.arguments), 1)
        self._argv = struct.Struct(f"<{count}Q")
        offset = 8 * count
        self._offsets: list[int] = []
        self._buffer_packers: list[struct.Struct | None] = []
        self._dtypes: list[np.dtype | None] = []
        self._scalar_packers: list[struct.Struct | None] = []
        self._int_ranges: list[tuple[int, int]] = []  # the values a Python int may take (none: (1, 0))
        self._floats: list[bool] = []
        for a in self.arguments:
            self._offsets.append(offset)
            integer = not a.is_buffer() and (a.type.is_int() or a.type.is_uint())
            self._int_ranges.append((int(a.type.min()), int(a.type.max())) if integer else (1, 0))
            self._floats.append(not a.is_buffer() and a.type.is_float())
            if a.is_buffer():
                dims = max(a.dimensions, 1)
                self._buffer_packers.append(struct.Struct("<QiiiiQ" + "iiii" * a.dimensions))
                self._dtypes.append(a.type.numpy())
                self._scalar_packers.append(None)
                offset += _BUFFER_HEAD.size + _DIMENSION.size * dims
            else:
                self._buffer_packers.append(None)
                self._dtypes.append(None)
                self._scalar_packers.append(struct.Struct("<" + _SCALAR_FORMATS[(a.type.code, a.type.bits)]))
                offset += 8
        self.size = offset

    def pack(
        self,
        given: Mapping[str, Any],
        mins: Mapping[str, Sequence[int]] | None = None,
    ) -> tuple[ctypes.Array, list[Any]]:
        """(the block, objects to keep alive until the call returns): argv at the block's start.
        InputError for a missing or wrong argument."""
        block = ctypes.create_string_buffer(self.size)
        base = ctypes.addressof(block)
        keep_alive: list[Any] = []
        addresses = []
        for i, a in enumerate(self.arguments):
            try:
                value = given[a.name]
            except KeyError:
                raise InputError(f"no value given for {'output' if a.is_output else 'argument'} `{a.name}`") from None
            offset = self._offsets[i]
            if a.is_buffer():
                arg_mins = mins.get(a.name) if mins else None
                if self._pack_array(block, base, i, value, arg_mins):
                    keep_alive.append(value)
                    addresses.append(base + offset)
                    continue
                desc = describe_array(
                    value, name=a.name, type=a.type, dimensions=a.dimensions, mins=arg_mins, output=a.is_output
                )
                keep_alive.append(desc)
                addresses.append(desc.address)
            else:
                lo, hi = self._int_ranges[i]
                kind = type(value)
                if (kind is int and lo <= value <= hi) or (kind is float and self._floats[i]):
                    checked = value  # the common cases, checked at once
                else:
                    checked = check_scalar(a.name, a.type, value)
                packer = self._scalar_packers[i]
                try:
                    packer.pack_into(block, offset, int(bool(checked)) if a.type.is_bool() else checked)
                except struct.error:  # check_scalar accepted it, so ctypes decides as before
                    scalar = scalar_argument(a.name, a.type, value)
                    ctypes.memmove(base + offset, ctypes.addressof(scalar), ctypes.sizeof(scalar))
                addresses.append(base + offset)
        if addresses:
            self._argv.pack_into(block, 0, *addresses)
        return block, keep_alive

    def _pack_array(self, block: ctypes.Array, base: int, i: int, array: Any, mins: Sequence[int] | None) -> bool:
        """Write argument i's descriptor for an array that needs neither a copy nor a message;
        False (nothing written) for any other value, which the general path then handles."""
        a = self.arguments[i]
        if type(array) is not np.ndarray or array.dtype != self._dtypes[i] or array.ndim != a.dimensions:
            return False
        flags = array.flags
        if not (flags.c_contiguous and flags.aligned) or (a.is_output and not flags.writeable):
            return False
        if not 0 < array.size <= INT32_MAX:
            return False
        d = a.dimensions
        if mins is None:
            mins = (0,) * d
        elif len(mins) != d:
            return False
        fields: list[int] = []
        stride = 1
        shape = array.shape
        for axis in range(d - 1, -1, -1):  # dimension 0 is the last axis
            extent = shape[axis]
            m = int(mins[d - 1 - axis])
            if not -(2**31) <= m <= INT32_MAX - extent:
                return False
            fields += (m, extent, stride, 0)
            stride *= extent
        offset = self._offsets[i]
        self._buffer_packers[i].pack_into(
            block,
            offset,
            array.ctypes.data,
            TYPE_CODES[a.type.code],
            a.type.bits,
            d,
            0,
            base + offset + _BUFFER_HEAD.size,
            *fields,
        )
        return True
