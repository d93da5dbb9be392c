"""The region each output's loops write, for sizes and inputs known at the call: what
Halide's `realize(sizes)` learns with a bounds query before it allocates the outputs.

A schedule may write an output beyond the size asked for: a ShiftInwards split (or an
Auto one, which is ShiftInwards on a pure definition) of an output narrower than its
factor shifts its last iteration below 0, and an update may write coordinates outside
the size (a scan over a fixed RDom). Halide's realize allocates the outputs over
everything written and returns the requested window; `Compiled.__call__` does the same,
with the regions lowering recorded (input_checks.py), evaluated here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import mutate
from pixelweave.engine.lower.simplify import simplify

Window = list[tuple[int, int]]  # (min, extent) per Func dimension
MAX_ROUNDS = 8  # a window that still grows after this many evaluations is not widened


def _value(e: E.Expr, values: Mapping[str, int | float]) -> int | None:
    """e with the named variables replaced by their values, if that makes it a constant."""

    def bind(node: E.Expr) -> E.Expr | None:
        if isinstance(node, E.Variable) and node.name in values:
            return E.Const(node.type(), values[node.name])
        return None

    folded = simplify(mutate(e, bind))
    if isinstance(folded, E.Const) and not folded.type().is_float():
        return int(folded.value)
    return None


def _buffer_values(name: str, window: Sequence[tuple[int, int]]) -> dict[str, int]:
    values: dict[str, int] = {}
    for i, (lo, extent) in enumerate(window):
        values[f"{name}.min.{i}"] = lo
        values[f"{name}.extent.{i}"] = extent
    return values


def written_windows(
    regions: Mapping[str, Sequence[tuple[E.Expr, E.Expr]]],
    sizes: Sequence[int],
    scalars: Mapping[str, int | float],
    images: Mapping[str, Any],
) -> dict[str, Window] | None:
    """Per output, the (min, extent) of each dimension covering both [0, size) and every
    point its loops write; None when every output fits in the size asked for (or a region
    depends on something not known here)."""
    known: dict[str, int | float] = dict(scalars)
    for name, array in images.items():
        shape = getattr(array, "shape", None)
        if shape is not None:
            known.update(_buffer_values(name, [(0, n) for n in reversed(shape)]))
    windows: dict[str, Window] = {name: [(0, int(n)) for n in sizes[: len(box)]] for name, box in regions.items()}
    for _ in range(MAX_ROUNDS):
        values = dict(known)
        for name, window in windows.items():
            values.update(_buffer_values(name, window))
        grown = False
        for name, box in regions.items():
            window = windows[name]
            for i, (lo_expr, hi_expr) in enumerate(box):
                lo, hi = _value(lo_expr, values), _value(hi_expr, values)
                if lo is None or hi is None:
                    return None
                start, extent = window[i]
                new_start, new_end = min(start, lo), max(start + extent, hi + 1)
                if (new_start, new_end - new_start) != (start, extent):
                    window[i] = (new_start, new_end - new_start)
                    grown = True
        if not grown:
            requested = all(w == [(0, int(n)) for n in sizes[: len(w)]] for w in windows.values())
            return None if requested else windows
    return None
