"""Halide's tracing: `trace_loads`, `trace_stores` and `trace_realizations` events.

The lowering pass engine/lower/tracing.py wraps traced loads and stores in calls that
report (site, value, coordinates) to the runtime hook, and brackets traced realizations
with begin and end events carrying the (min, extent) of every dimension. Events go to the
handler set with `set_trace_handler` (a Python callable taking a TraceEvent), else to the
file set with `set_trace_file`, else to stdout (as Halide's Python bindings do), as lines in Halide's text format:
`Store f.0(1, 2) = 3`, `Load g.0(0, 0) = 1`, `Begin realization g.0(0, 2, 0, 2)`.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from pixelweave.engine.ir.debug_print import format_value
from pixelweave.engine.ir.types import Type

EVENTS = ("load", "store", "begin_realization", "end_realization")


@dataclass(frozen=True)
class TraceEvent:
    """One event: `event` is one of EVENTS; `func` the Func or image name; `value` the value
    loaded or stored (None for realizations); `coordinates` the point (loads, stores) or
    the (min, extent) of each dimension, flattened (realizations)."""

    event: str
    func: str
    value: int | float | bool | None
    coordinates: tuple[int, ...]
    value_index: int = 0  # which value of a Func that returns a Tuple

    def to_text(self) -> str:
        """The line Halide's default tracer prints for this event."""
        coords = ", ".join(str(c) for c in self.coordinates)
        if self.event in ("load", "store"):
            shown = str(self.value).lower() if isinstance(self.value, bool) else _shown(self.value)
            return f"{self.event.capitalize()} {self.func}.{self.value_index}({coords}) = {shown}"
        verb = "Begin" if self.event == "begin_realization" else "End"
        return f"{verb} realization {self.func}.0({coords})"


def _shown(value: Any) -> str:
    return f"{value:f}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class TraceSite:
    event: str
    func: str
    type: Type
    coordinates: int  # how many coordinate values follow the value
    value_index: int = 0


_sites: dict[int, TraceSite] = {}
_lock = threading.Lock()
_handler: list[Callable[[TraceEvent], Any] | None] = [None]
_file: list[IO[str] | None] = [None]


def trace_site(event: str, func: str, t: Type, coordinates: int, value_index: int = 0) -> int:
    """The number of a trace site (stable across processes, so cached code stays valid)."""
    site = TraceSite(event, func, t, coordinates, value_index)
    text = repr((event, func, str(t), coordinates) + ((value_index,) if value_index else ()))
    number = int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "little")
    _sites[number] = site
    return number


def trace_site_size(number: int) -> int:
    site = _sites.get(number)
    return 1 if site is None else 1 + site.coordinates


def set_trace_handler(handler: Callable[[TraceEvent], Any] | None) -> None:
    """Send every trace event to handler (None: back to the file or stdout)."""
    _handler[0] = handler


def set_trace_file(path: str | None) -> None:
    """Append trace events as text lines to the file at path (None: close it, use stdout)."""
    with _lock:
        if _file[0] is not None:
            _file[0].close()
        _file[0] = open(path, "a", encoding="utf-8") if path is not None else None  # noqa: SIM115 - kept open


def emit_trace(number: int, bits: list[int]) -> None:
    """Called from generated code with the value's bits and then the coordinates."""
    site = _sites.get(number)
    if site is None:
        return
    coords = tuple(int(c) for c in bits[1:])
    value: Any = None
    if site.event in ("load", "store"):
        text = format_value(site.type, bits[0])
        value = text == "true" if site.type.is_bool() else (float(text) if site.type.is_float() else int(text))
        if site.type.is_float():
            import struct

            value = struct.unpack("<d", struct.pack("<Q", bits[0] & (2**64 - 1)))[0]
    event = TraceEvent(site.event, site.func, value, coords, site.value_index)
    handler = _handler[0]
    if handler is not None:
        handler(event)
        return
    with _lock:
        out = _file[0] if _file[0] is not None else sys.stdout
        out.write(event.to_text() + "\n")
