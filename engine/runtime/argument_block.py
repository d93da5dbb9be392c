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
from ctypes import addressof, c_char
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

    def __init__(self, arguments: Sequence[Argument], reserve: int = 0) -> None:
        """`reserve`: bytes pack_in_order's blocks keep after the arguments (the caller's
        per-call context, at offset `size`)."""
        self.arguments = list(arguments)
        self.reserve = reserve
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
        # Per argument, everything a call reads, in one tuple: attribute lookups on the
        # Argument and its Type cost as much as the packing itself on a small image.
        self._plan = [
            (
                a.name,
                a.is_buffer(),
                self._offsets[i],
                a.dimensions,
                a.is_output,
                self._dtypes[i],
                self._buffer_packers[i],
                TYPE_CODES[a.type.code] if a.is_buffer() else 0,
                a.type.bits,
                self._scalar_packers[i],
                *self._int_ranges[i],
                self._floats[i],
                not a.is_buffer() and a.type.is_bool(),
            )
            for i, a in enumerate(self.arguments)
        ]

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
        for i, (name, is_buffer, offset, _, _, _, _, _, _, packer, lo, hi, is_float, is_bool) in enumerate(self._plan):
            try:
                value = given[name]
            except KeyError:
                a = self.arguments[i]
                raise InputError(f"no value given for {'output' if a.is_output else 'argument'} `{name}`") from None
            if is_buffer:
                arg_mins = mins.get(name) if mins else None
                if self._pack_array(block, base, i, value, arg_mins):
                    keep_alive.append(value)
                    addresses.append(base + offset)
                    continue
                a = self.arguments[i]
                desc = describe_array(
                    value, name=name, type=a.type, dimensions=a.dimensions, mins=arg_mins, output=a.is_output
                )
                keep_alive.append(desc)
                addresses.append(desc.address)
            else:
                kind = type(value)
                if (kind is int and lo <= value <= hi) or (kind is float and is_float):
                    checked = value  # the common cases, checked at once
                else:
                    a = self.arguments[i]
                    checked = check_scalar(name, a.type, value)
                try:
                    packer.pack_into(block, offset, int(bool(checked)) if is_bool else checked)
                except struct.error:  # check_scalar accepted it, so ctypes decides as before
                    scalar = scalar_argument(name, self.arguments[i].type, value)
                    ctypes.memmove(base + offset, ctypes.addressof(scalar), ctypes.sizeof(scalar))
                addresses.append(base + offset)
        if addresses:
            self._argv.pack_into(block, 0, *addresses)
        return block, keep_alive

    def pack_in_order(
        self, values: Sequence[Any], block: ctypes.Array | None = None
    ) -> tuple[ctypes.Array, Sequence[Any]] | None:
        """pack() for one value per argument, in the arguments' order, when each is of the
        common kind: an array _pack_array takes at the origin, an int within its type's
        range or a float for a float scalar. None, having raised nothing, for anything
        else: pack() then checks it and refuses a wrong value with its message. The
        values are the objects to keep alive until the call returns. `block`, a block
        this method returned before, is written over (every field the generated code
        reads); without one, a new one of size + reserve bytes."""
        if len(values) != len(self._plan):
            return None
        if block is None:
            block = ctypes.create_string_buffer(self.size + self.reserve)
        base = addressof(block)
        addresses = []
        for i, value in enumerate(values):
            _, is_buffer, offset, _, _, _, _, _, _, packer, lo, hi, is_float, is_bool = self._plan[i]
            if is_buffer:
                if not self._pack_array(block, base, i, value, None):
                    return None
            else:
                kind = type(value)
                if not ((kind is int and lo <= value <= hi) or (kind is float and is_float)):
                    return None
                packer.pack_into(block, offset, int(bool(value)) if is_bool else value)
            addresses.append(base + offset)
        if addresses:
            self._argv.pack_into(block, 0, *addresses)
        return block, values

    def _pack_array(self, block: ctypes.Array, base: int, i: int, array: Any, mins: Sequence[int] | None) -> bool:
        """Write argument i's descriptor for an array that needs neither a copy nor a message;
        False (nothing written) for any other value, which the general path then handles."""
        _, _, offset, d, is_output, dtype, packer, code, bits, *_ = self._plan[i]
        if type(array) is not np.ndarray or array.dtype != dtype or array.ndim != d:
            return False
        flags = array.flags
        if not (flags.c_contiguous and flags.aligned) or (is_output and not flags.writeable):
            return False
        size = array.size
        if not 0 < size <= INT32_MAX:
            return False
        shape = array.shape
        # The data pointer: a ctypes view of a writable array's buffer costs a quarter of
        # `array.ctypes.data` (which builds a helper object), a call's largest single cost.
        try:
            address = addressof(c_char.from_buffer(array)) if flags.writeable else array.ctypes.data
        except (TypeError, ValueError, BufferError):  # a buffer that refuses a writable view
            address = array.ctypes.data
        if d == 2 and (mins is None or (len(mins) == 2 and mins[0] == 0 and mins[1] == 0)):  # at the origin
            rows, cols = shape
            packer.pack_into(
                block, offset, address, code, bits, 2, 0, base + offset + _BUFFER_HEAD.size,
                0, cols, 1, 0, 0, rows, cols, 0,
            )  # fmt: skip
            return True
        if mins is None:
            mins = (0,) * d
        elif len(mins) != d:
            return False
        fields: list[int] = []
        stride = 1
        for axis in range(d - 1, -1, -1):  # dimension 0 is the last axis
            extent = shape[axis]
            m = int(mins[d - 1 - axis])
            if not -(2**31) <= m <= INT32_MAX - extent:
                return False
            fields += (m, extent, stride, 0)
            stride *= extent
        packer.pack_into(block, offset, address, code, bits, d, 0, base + offset + _BUFFER_HEAD.size, *fields)
        return True
