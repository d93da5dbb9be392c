"""Scalar element types with Halide's names and value ranges."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from pixelweave.engine.ir.callable_fields import CallableInt, CallableStr

_NUMPY_NAMES = {
    ("uint", 1): "bool",
    ("uint", 8): "uint8",
    ("uint", 16): "uint16",
    ("uint", 32): "uint32",
    ("uint", 64): "uint64",
    ("int", 8): "int8",
    ("int", 16): "int16",
    ("int", 32): "int32",
    ("int", 64): "int64",
    ("float", 32): "float32",
    ("float", 64): "float64",
}


@dataclass(frozen=True, slots=True)
class Type:
    """An element type: a code ('int', 'uint', 'float'), a bit width (bool is uint1) and a
    number of vector lanes (1 for scalars; vectors appear only in lowered code).

    `code`, `bits` and `lanes` read as attributes and, as in Halide's bindings, as methods."""

    code: str
    bits: int
    lanes: int = 1
    # The hash, computed once: every structural key of an expression holds its type, and
    # looking a key up hashes it (lowering does that hundreds of thousands of times).
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.code, self.bits) not in _NUMPY_NAMES:
            raise ValueError(f"unsupported type {self.code}{self.bits}")
        object.__setattr__(self, "code", CallableStr(self.code))
        object.__setattr__(self, "bits", CallableInt(self.bits))
        object.__setattr__(self, "lanes", CallableInt(self.lanes))
        object.__setattr__(self, "_hash", hash((self.code, self.bits, self.lanes)))

    def __eq__(self, other: object) -> bool:
        # Types are compared on every node built (operands must agree); most comparisons are
        # of one shared object (see _interned), so identity answers first.
        if self is other:
            return True
        if other.__class__ is not Type:
            return NotImplemented
        return self.code == other.code and self.bits == other.bits and self.lanes == other.lanes

    def __hash__(self) -> int:
        return self._hash

    def bytes(self) -> int:
        """Bytes per element (bool takes one), as Halide's `Type.bytes()`."""
        return (self.bits + 7) // 8

    def is_scalar(self) -> bool:
        return self.lanes == 1

    def is_handle(self) -> bool:
        """Always False: the engine has no handle (pointer) types."""
        return False

    def is_bfloat(self) -> bool:
        """Always False: the engine has no bfloat types."""
        return False

    def is_max(self, value: int | float) -> bool:
        """Whether value is this type's largest value (Halide's `Type.is_max`)."""
        return not self.is_float() and value == self.max()

    def is_min(self, value: int | float) -> bool:
        """Whether value is this type's smallest value (Halide's `Type.is_min`)."""
        return not self.is_float() and value == self.min()

    def is_bool(self) -> bool:
        return self.code == "uint" and self.bits == 1

    def is_uint(self) -> bool:
        return self.code == "uint"

    def is_int(self) -> bool:
        return self.code == "int"

    def is_float(self) -> bool:
        return self.code == "float"

    def is_integer(self) -> bool:
        """True for signed and unsigned integers, bool included."""
        return self.code != "float"

    def with_bits(self, bits: int) -> Type:
        return _interned(self.code, bits, self.lanes)

    def with_code(self, code: str) -> Type:
        return _interned(code, self.bits, self.lanes)

    def with_lanes(self, lanes: int) -> Type:
        return _interned(self.code, self.bits, lanes)

    def element_of(self) -> Type:
        return _interned(self.code, self.bits, 1) if self.lanes != 1 else self

    def is_vector(self) -> bool:
        return self.lanes > 1

    def min(self) -> int | float:
        if self.is_float():
            return -float(np.finfo(self.numpy()).max)
        if self.is_uint():
            return 0
        return -(1 << (self.bits - 1))

    def max(self) -> int | float:
        if self.is_float():
            return float(np.finfo(self.numpy()).max)
        if self.is_uint():
            return (1 << self.bits) - 1
        return (1 << (self.bits - 1)) - 1

    def can_represent(self, value: int | float) -> bool:
        """Whether a Python number survives conversion to this type unchanged."""
        if self.is_float():
            return True
        if isinstance(value, float) and not value.is_integer():
            return False
        return self.min() <= value <= self.max()

    def numpy(self) -> np.dtype:
        return np.dtype(_NUMPY_NAMES[(self.code, self.bits)])

    def __str__(self) -> str:
        base = "bool" if self.is_bool() else f"{self.code}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def __repr__(self) -> str:
        if self.is_bool():
            return "Bool()"
        return {"int": "Int", "uint": "UInt", "float": "Float"}[self.code] + f"({self.bits})"


_types: dict[tuple[str, int, int], Type] = {}


def _interned(code: str, bits: int, lanes: int) -> Type:
    """One shared Type object per (code, bits, lanes): types are immutable, and equal
    objects that are one object compare (and are built) at once."""
    key = (code, bits, lanes)
    t = _types.get(key)
    if t is None:
        t = _types[key] = Type(code, bits, lanes)
    return t


def UInt(bits: int) -> Type:  # noqa: N802 - Halide's name
    """Unsigned integer type of 8, 16, 32 (or 64) bits."""
    return _interned("uint", bits, 1)


def Int(bits: int) -> Type:  # noqa: N802
    """Signed integer type of 8, 16, 32 (or 64) bits."""
    return _interned("int", bits, 1)


def Float(bits: int) -> Type:  # noqa: N802
    """Floating-point type of 32 or 64 bits."""
    return _interned("float", bits, 1)


def Bool() -> Type:  # noqa: N802
    """The boolean type (a one-bit unsigned integer, as in Halide)."""
    return _interned("uint", 1, 1)


def type_of_numpy(dtype: np.dtype) -> Type:
    """The engine type of a NumPy dtype, or ValueError for one the engine has no type for."""
    return _type_of_dtype(np.dtype(dtype))


@functools.lru_cache(maxsize=64)
def _type_of_dtype(dtype: np.dtype) -> Type:
    """type_of_numpy, remembered per dtype: every call of a compiled pipeline asks it for each
    array, and a dtype's name is slow to compute beside a small image's run."""
    for (code, bits), name in _NUMPY_NAMES.items():
        if dtype.name == name:
            return Type(code, bits)
    raise ValueError(f"NumPy dtype {dtype} has no Pixelweave type")
