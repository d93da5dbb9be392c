"""Regions, evaluated for given parameter values: the box each buffer is read and written
in (rows and columns), how a flat buffer is laid out (rows of `stride` elements), and the
extent of what a lifted stage writes (the output's region of interest)."""

from __future__ import annotations

from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.model import Lifted

ELEM_BYTES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "u64": 8, "i64": 8, "f32": 4, "f64": 8}


def _box(lifted: Lifted, row: tuple, col: tuple, loops: tuple, scalars: dict) -> tuple | None:
    """((row lo, row hi), (col lo, col hi)) inclusive, or None when the loops run no iteration."""
    bounds = [(n, int(v), int(v)) for n, v in scalars.items() if S.is_int(lifted.scalars[n].type)]
    for sym in loops:
        trip = S.interval(lifted.loops[sym], tuple(bounds))
        if trip is None:
            raise ValueError(f"cannot bound the loop {sym}")
        if trip[1] <= 0:
            return None
        bounds.append((sym, 0, trip[1] - 1))
    r, c = S.interval(row, tuple(bounds)), S.interval(col, tuple(bounds))
    if r is None or c is None:
        raise ValueError("cannot bound an address")
    return r, c


def footprint(lifted: Lifted, buffer: str, scalars: dict, which: str = "both") -> tuple | None:
    """The inclusive box ((row lo, row hi), (col lo, col hi)) a buffer is touched in."""
    accesses = []
    if which in ("both", "read"):
        accesses += [a for a in lifted.reads if a[0] == buffer]
    if which in ("both", "write"):
        accesses += [a for a in lifted.writes if a[0] == buffer]
    box = None
    for _, row, col, loops in accesses:
        b = _box(lifted, row, col, loops, scalars)
        if b is None:
            continue
        if box is None:
            box = b
        else:
            box = (
                (min(box[0][0], b[0][0]), max(box[0][1], b[0][1])),
                (min(box[1][0], b[1][0]), max(box[1][1], b[1][1])),
            )
    return box


def written_extent(lifted: Lifted, buffer: str, scalars: dict) -> tuple[int, int]:
    """(columns, rows) from 0 to the end of what the function writes in a buffer."""
    box = footprint(lifted, buffer, scalars, "write")
    if box is None:
        return (0, 0)
    return (box[1][1] + 1, box[0][1] + 1)


def stride_elements(lifted: Lifted, buffer: str, scalars: dict) -> int | None:
    """A buffer's row stride in elements (None for a buffer addressed as one row)."""
    b = lifted.buffers[buffer]
    if b.stride is None:
        return None
    name, unit = b.stride
    return int(scalars[name]) * unit // ELEM_BYTES[b.elem]


def buffer_layout(lifted: Lifted, buffer: str, scalars: dict, nbytes: int) -> tuple[int, int]:
    """(rows, stride in elements) of a flat allocation of nbytes."""
    size = ELEM_BYTES[lifted.buffers[buffer].elem]
    stride = stride_elements(lifted, buffer, scalars)
    if stride is None or stride <= 0:
        return (1, nbytes // size)
    return (nbytes // (stride * size), stride)
