"""A traced run of a document's fused pipeline, for watching the order in which a schedule
computes, stores and re-reads pixels (what Halide's HalideTraceViz draws).

The inputs are cropped to a small corner so the run gives a few thousand to a few hundred
thousand events; every Func that has storage is traced (stores and realizations, and loads
from other Funcs when asked), the events are recorded in the order the generated code
reported them (threads of parallel loops interleave, as they ran), and each Func gets the
box of coordinates it touched. The editor's Trace tab animates the result."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.tracing import TraceEvent, set_trace_handler
from pixelweave.nodes.errors import NodeError

STORE, LOAD, BEGIN, END = 0, 1, 2, 3
_KINDS = {"store": STORE, "load": LOAD, "begin_realization": BEGIN, "end_realization": END}
DEFAULT_SIDE = 48
MAX_SIDE = 192
DEFAULT_MAX_EVENTS = 300_000

_tracing = threading.Lock()  # the trace handler is process-wide: one traced run at a time


@dataclass
class TracedFunc:
    """One Func of the trace: its name in the pipeline, the node it belongs to (None for
    Funcs the compiler made), and the box of (x, y) coordinates its events touched."""

    name: str
    node_id: str | None
    local_name: str
    x0: int = 0
    y0: int = 0
    width: int = 1
    height: int = 1

    @property
    def label(self) -> str:
        return f"{self.node_id}: {self.local_name}" if self.node_id is not None else self.local_name


@dataclass
class ScheduleTrace:
    """The events of one traced run, as parallel arrays in the order they happened: kind
    (STORE, LOAD, BEGIN, END), func (an index into `funcs`), and x, y (for BEGIN/END the
    realization's min corner, with its width and height in w, h)."""

    funcs: list[TracedFunc]
    kind: np.ndarray
    func: np.ndarray
    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    h: np.ndarray
    input_size: tuple[int, int]
    truncated: bool = False  # more events happened than were kept
    counts: dict[str, int] = field(default_factory=dict)  # events per kind, all of them
    left_out: list[str] = field(default_factory=list)  # Funcs not traced: too many points for max_events
    event_index: dict[int, np.ndarray] = field(default_factory=dict, repr=False, compare=False)  # events_of() cache

    def __len__(self) -> int:
        return len(self.kind)

    def events_of(self, func: int) -> np.ndarray:
        """The indices of Func `func`'s events, in order (computed once: playback asks every frame)."""
        found = self.event_index.get(func)
        if found is None:
            found = self.event_index[func] = np.nonzero(self.func == func)[0]
        return found

    def describe(self, i: int) -> str:
        """Event i in Halide's trace wording: `Store blur: blur_y(3, 4)`."""
        f = self.funcs[int(self.func[i])]
        k = int(self.kind[i])
        if k in (STORE, LOAD):
            return f"{'Store' if k == STORE else 'Load'} {f.label} ({int(self.x[i])}, {int(self.y[i])})"
        verb = "Begin" if k == BEGIN else "End"
        return (
            f"{verb} realization {f.label} [{int(self.x[i])}, {int(self.x[i]) + int(self.w[i]) - 1}] x "
            f"[{int(self.y[i])}, {int(self.y[i]) + int(self.h[i]) - 1}]"
        )


def crop_inputs(images: dict[str, np.ndarray], side: int) -> dict[str, np.ndarray]:
    """The top-left side x side corner of every input image (all channels; images are
    NumPy arrays whose last two axes are y and x)."""
    if side < 4:
        raise NodeError(f"the traced corner must be at least 4 pixels wide, got {side}")
    return {k: np.ascontiguousarray(v[..., :side, :side]) for k, v in images.items()}


def _names(built: Any) -> dict[str, tuple[str, str]]:
    """Engine Func name -> (node id, the node's local name for it)."""
    names: dict[str, tuple[str, str]] = {}
    for node_id, node in built.graph.nodes.items():
        for local, func in node.funcs.items():
            names[func.name()] = (node_id, local)
    return names


def trace_document(
    built: Any,
    images: dict[str, np.ndarray],
    params: dict[str, Any] | None = None,
    *,
    side: int = DEFAULT_SIDE,
    loads: bool = False,
    max_events: int = DEFAULT_MAX_EVENTS,
    should_stop: Callable[[], None] | None = None,
) -> ScheduleTrace:
    """Run `built` (a BuiltDocument built for this trace alone: its Funcs are marked
    traced) on the top-left side x side corner of `images` and record what it does. A
    schedule whose tiles are wider than the corner reads outside it: the corner is then
    doubled, up to MAX_SIDE."""
    pipeline = built.pipeline()
    known = _names(built)
    index: dict[str, int] = {}
    funcs: list[TracedFunc] = []
    rows: list[tuple[int, int, int, int, int, int]] = []
    counts = {"store": 0, "load": 0, "begin_realization": 0, "end_realization": 0}

    def func_index(name: str) -> int:
        at = index.get(name)
        if at is None:
            node_id, local = known.get(_base(name), (None, _base(name)))
            at = index[name] = len(funcs)
            funcs.append(TracedFunc(name, node_id, local))
        return at

    def record(event: TraceEvent) -> None:
        counts[event.event] += 1
        if len(rows) >= max_events:
            return
        c = event.coordinates
        k = _KINDS[event.event]
        if k in (STORE, LOAD):
            rows.append((k, func_index(event.func), c[0], c[1] if len(c) > 1 else 0, 1, 1))
        else:  # (min, extent) per dimension
            y, h = (c[2], c[3]) if len(c) > 3 else (0, 1)
            rows.append((k, func_index(event.func), c[0], y, c[1], h))

    with _tracing:
        try:
            # First only the realizations, to learn how many points each Func computes
            # (a small corner of a deep pyramid can still mean millions), then every event
            # of the Funcs nearest the outputs that fit in max_events.
            points: dict[str, int] = defaultdict(int)

            def measure(event: TraceEvent) -> None:
                if event.event == "begin_realization":
                    points[_base(event.func)] += int(np.prod(event.coordinates[1::2]))

            for f in pipeline.funcs:
                f.trace_realizations()
            set_trace_handler(measure)
            cropped = _run_on_a_corner(built, images, params, side, should_stop, points.clear)
            outputs = {f.name() for f in pipeline.outputs}
            for f in pipeline.funcs:
                f.stop_tracing()
            sizes = built.output_sizes(cropped, params)
            for node_id, size in sizes.items():
                for f in pipeline.outputs:
                    if known.get(f.name(), (None,))[0] == node_id:
                        points[f.name()] += int(np.prod(size))
            chosen, left_out = _choose(pipeline.funcs, points, outputs, max_events, loads)
            for f in chosen:
                f.trace_stores().trace_realizations()
                if loads:
                    f.trace_loads()
            if should_stop is not None:
                should_stop()
            set_trace_handler(record)
            built.run(cropped, params)
        finally:
            set_trace_handler(None)
            for f in pipeline.funcs:
                f.stop_tracing()
    table = np.array(rows, dtype=np.int64).reshape(-1, 6)
    trace = ScheduleTrace(
        funcs,
        table[:, 0].astype(np.int8),
        table[:, 1].astype(np.int32),
        table[:, 2].astype(np.int32),
        table[:, 3].astype(np.int32),
        table[:, 4].astype(np.int32),
        table[:, 5].astype(np.int32),
        _input_size(cropped),
        truncated=sum(counts.values()) > len(rows),
        counts=counts,
        left_out=[_label(known, f.name()) for f in left_out],
    )
    _measure_boxes(trace)
    return trace


def _base(name: str) -> str:
    """The Func's own name: an output computed into scratch storage is traced as `f_computed`."""
    return name[: -len("_computed")] if name.endswith("_computed") else name


def _label(known: dict[str, tuple[str, str]], name: str) -> str:
    node_id, local = known.get(name, (None, name))
    return f"{node_id}: {local}" if node_id is not None else local


def _choose(funcs: list, points: dict[str, int], outputs: set[str], budget: int, loads: bool) -> tuple[list, list]:
    """The Funcs to trace, nearest the outputs first, while their expected events fit the
    budget (a point is stored once and, when loads are traced, read a few times)."""
    per_point = 5 if loads else 1
    chosen, left_out, total = [], [], 0
    for f in reversed(funcs):
        n = points.get(f.name(), 0)
        if n == 0 and f.name() not in outputs:
            continue  # computed inline: no storage to show
        cost = n * per_point
        if total + cost <= budget or not chosen:
            chosen.append(f)
            total += cost
        else:
            left_out.append(f)
    return chosen, left_out


def _run_on_a_corner(
    built: Any,
    images: dict[str, np.ndarray],
    params: dict[str, Any] | None,
    side: int,
    should_stop: Callable[[], None] | None,
    before_each_try: Callable[[], None],
) -> dict[str, np.ndarray]:
    """Run on the smallest corner (side, 2 side, ... MAX_SIDE) the schedule can compute
    (`before_each_try` forgets what a failed try recorded). Returns the corner used."""
    while True:
        if should_stop is not None:
            should_stop()
        before_each_try()
        cropped = crop_inputs(images, side)
        try:
            built.run(cropped, params)
            return cropped
        except RuntimeFailure as e:
            larger = side * 2
            if larger > MAX_SIDE or all(min(v.shape[-2:]) <= side for v in images.values()):
                raise NodeError(f"the traced run of a {side}x{side} corner failed: {e}") from None
            side = larger


def _input_size(images: dict[str, np.ndarray]) -> tuple[int, int]:
    if not images:
        return (0, 0)
    first = next(iter(images.values()))
    return (int(first.shape[-1]), int(first.shape[-2]))


def _measure_boxes(trace: ScheduleTrace) -> None:
    """Each Func's box: every point stored or loaded and every realization's extent."""
    for i, f in enumerate(trace.funcs):
        mine = trace.func == i
        if not mine.any():
            continue
        x_lo = trace.x[mine].min()
        y_lo = trace.y[mine].min()
        x_hi = (trace.x[mine] + trace.w[mine] - 1).max()
        y_hi = (trace.y[mine] + trace.h[mine] - 1).max()
        f.x0, f.y0 = int(x_lo), int(y_lo)
        f.width, f.height = int(x_hi - x_lo + 1), int(y_hi - y_lo + 1)


def state_at(trace: ScheduleTrace, position: int, func: int) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """What Func `func` looks like after the first `position` events: for each point of its
    box, the index of the last store to it (-1: never stored) and of the last load from it
    (-1: never loaded), and the realizations open at that moment as (x, y, w, h)."""
    f = trace.funcs[func]
    stored = np.full((f.height, f.width), -1, dtype=np.int64)
    loaded = np.full((f.height, f.width), -1, dtype=np.int64)
    events = trace.events_of(func)
    mine = events[: np.searchsorted(events, max(0, min(position, len(trace))))]
    kinds = trace.kind[mine]
    for grid, kind in ((stored, STORE), (loaded, LOAD)):
        at = mine[kinds == kind]
        np.maximum.at(grid, (trace.y[at] - f.y0, trace.x[at] - f.x0), at)  # the latest event wins
    open_boxes: list[tuple] = []
    for i in mine[(kinds == BEGIN) | (kinds == END)]:
        box = (int(trace.x[i]), int(trace.y[i]), int(trace.w[i]), int(trace.h[i]))
        if trace.kind[i] == BEGIN:
            open_boxes.append(box)
        elif box in open_boxes:
            open_boxes.remove(box)
    return stored, loaded, open_boxes
