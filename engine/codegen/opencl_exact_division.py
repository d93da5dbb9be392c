"""Float division of a narrow integer by a constant, without a division instruction.

`f32(i) / C` (i of an 8- or 16-bit integer type, C a float32 constant) is what normalising
pixel values looks like (`u16 / 65535.0f`). A float division costs many multiplications
on CPU OpenCL devices (local Laplacian's largest kernel had 36 of them per work-item).
Halide multiplies by the rounded reciprocal instead, which changes some results (512 of
the 65536 u16 values for C = 65535). Here the quotient stays the correctly rounded one:

    q = fma(x, zh, x * zl),  zh = RN(1/C), zl = RN(1/C - zh)

(Brisebarre, Muller and Raina: correctly rounded for most divisors, not all), used only
where it is proved for the operand's type by trying every one of its 256 or 65536 values
against the true quotient, when the kernels are generated.

Known cost on pocl: pocl optimises each work-item's code (SLP vectorizer included) before
it builds the work-item loop, and two of these fma chains side by side (local Laplacian's
gray: 0.299 * q0 + 0.587 * q1 + 0.114 * q2) are packed into a 2-lane vector there; the loop
vectorizer then refuses the work-item loop, so that output kernel stays scalar. Halide's
single inexact multiplication is not worth packing, and its kernel vectorizes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast

_MAX_SOURCE_BITS = 16


@dataclass(frozen=True)
class ReciprocalPair:
    """zh and zl: f32(i) / C == fma(f32(i), zh, f32(i) * zl) for every i of the source type."""

    high: float
    low: float


def _constant(e: E.Expr) -> float | None:
    if isinstance(e, Broadcast):
        e = e.value
    if isinstance(e, E.Const) and e.type().is_float() and e.type().bits == 32:
        return float(e.value)
    return None


def division_by_reciprocal(e: E.Expr) -> ReciprocalPair | None:
    """The reciprocal pair with which the float32 division e is a multiplication and an
    fma with the same result for every value its operand can take, or None."""
    if not isinstance(e, E.Div):
        return None
    t = e.type()
    if not (t.is_float() and t.bits == 32) or not isinstance(e.a, E.Cast):
        return None
    divisor = _constant(e.b)
    source = e.a.value.type()
    if divisor is None or source.is_float() or source.is_bool() or source.bits > _MAX_SOURCE_BITS:
        return None
    if source.lanes != t.lanes:
        return None
    return _proved_pair(source.is_int(), source.bits, divisor)


@functools.cache
def _proved_pair(signed: bool, bits: int, divisor: float) -> ReciprocalPair | None:
    c = np.float32(divisor)
    if not np.isfinite(c) or c == 0 or float(c) != divisor:
        return None
    high = np.float32(1.0) / c
    low = np.float32(1.0 / float(c) - float(high))
    if not (np.isfinite(high) and np.isfinite(low)) or high == 0:
        return None
    start = -(1 << (bits - 1)) if signed else 0
    x = np.arange(start, start + (1 << bits), dtype=np.float64)
    with np.errstate(all="ignore"):
        want = x.astype(np.float32) / c
        got = _fma_f32(x, float(high), (x.astype(np.float32) * low))
    if not np.array_equal(want.view(np.uint32), got.view(np.uint32)):
        return None
    return ReciprocalPair(float(high), float(low))


def _fma_f32(x: np.ndarray, high: float, addend: np.ndarray) -> np.ndarray:
    """RN_f32(x * high + addend) exactly, for integers x of at most 16 bits (x * high, of at
    most 40 significant bits, is exact in double; the sum is rounded once to double, and
    a double that falls on a float32 midpoint is moved to the side the exact sum is on)."""
    product = x * high
    y = addend.astype(np.float64)
    s = product + y
    back = s - product
    error = (product - (s - back)) + (y - back)  # s + error == product + y exactly (TwoSum)
    r = s.astype(np.float32)
    down = np.nextafter(r, np.float32(-np.inf))
    up = np.nextafter(r, np.float32(np.inf))
    below = np.where(r.astype(np.float64) > s, down, r)
    above = np.where(r.astype(np.float64) < s, up, r)
    midpoint = (s == (below.astype(np.float64) + above.astype(np.float64)) / 2) & (below != above)
    return np.where(midpoint & (error > 0), above, np.where(midpoint & (error < 0), below, r))
