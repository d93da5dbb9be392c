"""Ready-made schedules for one node: the classic strategies of Halide's tutorials, worked
out from the built graph (each Func's loops, who consumes it, whether it is a pipeline
output or a reduction), so that a user can start from a known shape and edit from there.

`preset_schedule(built, node_id, preset)` returns the node's whole new schedule, or raises
a NodeError that says why the preset does not fit the node.
"""

from __future__ import annotations

from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.pipeline import definition_exprs, func_definitions
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document
from pixelweave.nodes.schedule_spec import referenced_node

import pixelweave as pw

PRESETS: dict[str, str] = {
    "breadth-first": "compute every stage of the node in full before the next one starts",
    "fully fused": "inline every stage into its consumer: no intermediate buffers, recompute shared work",
    "tiled": "compute the node's output in 64x32 tiles, each computing the stages it needs",
    "sliding window": "keep the intermediate rows of a stage and compute only the new row per output row",
    "parallel+vectorized": "rows on all cores, pixels in SIMD lanes (16 for 8/16-bit data, 8 for 32-bit)",
}
TILE = (64, 32)
# Inlining multiplies work: past this many evaluations of the node's first stages per output
# pixel, "fully fused" is refused instead of producing a pipeline that takes ages to lower.
MAX_FUSED_COST = 4096

Schedule = dict[str, list[list[Any]]]


class _NodeFuncs:
    """The node's Funcs seen from the pipeline: consumers, pipeline outputs, reductions."""

    def __init__(self, built: BuiltDocument, node_id: str) -> None:
        if node_id not in built.graph.nodes:
            raise NodeError(f"there is no node `{node_id}` in the built pipeline")
        self.built, self.node_id = built, node_id
        node = built.graph.nodes[node_id]
        pipeline = built.pipeline()
        self.outputs = {id(f) for f in pipeline.outputs}
        self.consumers: dict[int, list[pw.Func]] = {}
        for f in pipeline.funcs:
            for callee in _callees(f):
                self.consumers.setdefault(id(callee), []).append(f)
        used = {id(f) for f in pipeline.funcs}
        self.local = {id(f): name for name, f in node.funcs.items()}
        self.funcs = {name: f for name, f in node.funcs.items() if id(f) in used}
        exported = {id(v.func) for v in node.outputs.values()}
        self.exported = {n: f for n, f in self.funcs.items() if id(f) in exported}
        self.inner = {n: f for n, f in self.funcs.items() if id(f) not in exported}
        if not self.funcs:
            raise NodeError("none of its Funcs reaches an output, so there is nothing to schedule", node_id)

    def is_output(self, f: pw.Func) -> bool:
        return id(f) in self.outputs

    def ref(self, f: pw.Func) -> str:
        """How a directive names f: its local name in this node, else "node.local"."""
        return self.local.get(id(f), f.name())

    def owner(self, f: pw.Func) -> str | None:
        """The exported Func of this node that all of f's uses lead to, or None."""
        seen: set[int] = set()
        found: set[str] = set()
        stack = [f]
        while stack:
            g = stack.pop()
            for c in self.consumers.get(id(g), []):
                if id(c) in seen:
                    continue
                seen.add(id(c))
                name = self.local.get(id(c))
                if name is None:
                    return None
                if name in self.exported:
                    found.add(name)
                else:
                    stack.append(c)
        return found.pop() if len(found) == 1 else None


def _callees(f: pw.Func) -> list[pw.Func]:
    out: dict[int, pw.Func] = {}
    for d in func_definitions(f):
        for e in definition_exprs(d):
            for n in walk(e):
                if isinstance(n, E.Call) and n.call_kind == "func" and n.target is not f:
                    out[id(n.target)] = n.target
    return list(out.values())


def _dims(f: pw.Func) -> list[str]:
    return [a.name for a in f.args()]


def _lanes(f: pw.Func) -> int:
    return 16 if f.type().bits <= 16 else 8


def _is_reduction(f: pw.Func) -> bool:
    return bool(f.updates())


def preset_schedule(built: BuiltDocument, node_id: str, preset: str, verify: bool = True) -> Schedule:
    """The node's whole schedule for a preset (see PRESETS); NodeError when it does not apply.

    With `verify` the result is built and lowered on a copy of the document first, so a preset
    that collides with the rest of the pipeline (another node computing its stages inside a
    loop this preset removes) is refused with the engine's reason instead of being applied."""
    if preset not in PRESETS:
        raise NodeError(f"unknown schedule preset {preset!r}; presets: {', '.join(PRESETS)}", node_id)
    funcs = _NodeFuncs(built, node_id)
    make = {
        "breadth-first": _breadth_first,
        "fully fused": _fully_fused,
        "tiled": _tiled,
        "sliding window": _sliding_window,
        "parallel+vectorized": _parallel_vectorized,
    }[preset]
    schedule = {k: v for k, v in make(funcs).items() if v}
    if verify:
        _verify(built, node_id, preset, schedule)
    return schedule


def _verify(built: BuiltDocument, node_id: str, preset: str, schedule: Schedule) -> None:
    doc = Document.from_json(built.document.to_json())
    doc.path = built.document.path
    doc.node(node_id).schedule = {k: [list(d) for d in v] for k, v in schedule.items()}
    try:
        build_document(doc)
    except DocumentError as e:
        reasons = "; ".join(p.removeprefix(f"node `{node_id}`: ") for p in e.problems)
        raise NodeError(f"the {preset} preset does not fit this pipeline: {reasons}", node_id) from None


def _breadth_first(n: _NodeFuncs) -> Schedule:
    return {name: [] if n.is_output(f) else [["compute_root"]] for name, f in n.funcs.items()}


def _fully_fused(n: _NodeFuncs) -> Schedule:
    schedule: Schedule = {}
    for name, f in n.funcs.items():
        if n.is_output(f):
            schedule[name] = []
        elif _is_reduction(f):
            schedule[name] = [["compute_root"]]  # a reduction cannot be inlined
        else:
            schedule[name] = [["compute_inline"]]
    cost = _fused_cost(n, schedule)
    if cost > MAX_FUSED_COST:
        raise NodeError(
            f"fully fused, each output pixel would evaluate the node's first stages about {cost} times "
            "(every stencil multiplies the work of the ones before it); compute some stages at root or "
            "use the sliding window or tiled preset",
            n.node_id,
        )
    return schedule


def _fused_cost(n: _NodeFuncs, schedule: Schedule) -> int:
    """Upper bound of how often the node's deepest inlined stage runs per output pixel."""
    memo: dict[int, int] = {}

    def cost(f: pw.Func) -> int:
        if id(f) in memo:
            return memo[id(f)]
        total = 0
        for d in func_definitions(f):
            for e in definition_exprs(d):
                for node in walk(e):
                    if isinstance(node, E.Call) and node.call_kind == "func" and node.target is not f:
                        g = node.target
                        inlined = schedule.get(n.ref(g)) == [["compute_inline"]]
                        total += cost(g) if inlined else 1
        memo[id(f)] = max(total, 1)
        return memo[id(f)]

    return max(cost(f) for f in n.funcs.values())


def _as_root(n: _NodeFuncs, f: pw.Func) -> list[list[Any]]:
    """A Func that gets loops of its own must be computed somewhere: root unless it is an output."""
    return [] if n.is_output(f) else [["compute_root"]]


def _keep(n: _NodeFuncs, name: str) -> list[list[Any]]:
    """The Func's current directives (what a preset leaves alone), unless they compute it in
    another node's loops: the preset moves the node's output, so those would no longer
    enclose its uses; such a stage goes to its owner's rows, or to the root."""
    current = [list(d) for d in n.built.document.node(n.node_id).schedule.get(name, [])]
    elsewhere = any(referenced_node(d) is not None for d in current)
    if not elsewhere or name not in n.inner:
        return current
    f = n.inner[name]
    owner = n.owner(f)
    if owner is not None and not _is_reduction(f) and "y" in _dims(n.exported[owner]):
        return [["compute_at", owner, "y"]]
    return [["compute_root"]]


def _xy_exported(n: _NodeFuncs, preset: str) -> dict[str, pw.Func]:
    targets = {name: f for name, f in n.exported.items() if {"x", "y"} <= set(_dims(f))}
    if not targets:
        shown = "; ".join(f"`{name}` has loops {', '.join(_dims(f)) or 'none'}" for name, f in n.exported.items())
        raise NodeError(f"the {preset} preset needs an output image with x and y loops ({shown})", n.node_id)
    return targets


def _tiled(n: _NodeFuncs) -> Schedule:
    targets = _xy_exported(n, "tiled")
    schedule: Schedule = {}
    for name, f in n.exported.items():
        if name in targets:
            schedule[name] = [
                *_as_root(n, f),
                ["tile", "x", "y", "xo", "yo", "xi", "yi", *TILE, "guard_with_if"],
            ]
        else:
            schedule[name] = [["compute_root"]]
    for name, f in n.inner.items():
        owner = n.owner(f)
        if _is_reduction(f) or owner not in targets:
            schedule[name] = [["compute_root"]]
        else:
            schedule[name] = [["compute_at", owner, "xo"]]
    return schedule


def _sliding_window(n: _NodeFuncs) -> Schedule:
    schedule: Schedule = {name: _keep(n, name) for name in n.funcs}
    slid = []
    for name, f in n.inner.items():
        owner = n.owner(f)
        if _is_reduction(f) or owner is None or "y" not in _dims(f) or "y" not in _dims(n.exported[owner]):
            continue
        schedule[name] = [["store_root"], ["compute_at", owner, "y"]]
        schedule[owner] = _as_root(n, n.exported[owner])
        slid.append(name)
    if slid:
        return schedule
    for name, f in n.exported.items():
        consumer = _single_computed_consumer(n, f)
        if consumer is not None and "y" in _dims(f) and _has_plain_y(consumer):
            schedule[name] = [["store_root"], ["compute_at", n.ref(consumer), "y"]]
            slid.append(name)
    if not slid:
        raise NodeError(
            "the sliding window preset needs a stage with a y loop used by a single consumer that has a y loop "
            "of its own (unsplit); this node has none",
            n.node_id,
        )
    return schedule


def _single_computed_consumer(n: _NodeFuncs, f: pw.Func) -> pw.Func | None:
    """The one Func outside the node that computes f's values (looking through inlined ones)."""
    consumers = n.consumers.get(id(f), [])
    while len(consumers) == 1:
        c = consumers[0]
        computed = n.is_output(c) or c.schedule_of().compute_level.kind != "inline"
        if computed:
            return c if id(c) not in n.local else None
        consumers = n.consumers.get(id(c), [])
    return None


def _has_plain_y(f: pw.Func) -> bool:
    """Whether f still has a loop called y (no split renamed it)."""
    schedule = f.definition().schedule
    if schedule is None:
        return "y" in _dims(f)
    return any(d.name == "y" for d in schedule.dims)


def _parallel_vectorized(n: _NodeFuncs) -> Schedule:
    schedule: Schedule = {name: _keep(n, name) for name in n.funcs}
    changed = False
    for name, f in n.exported.items():
        dims = _dims(f)
        if not dims:
            continue
        directives = _as_root(n, f)
        if "y" in dims:
            directives.append(["parallel", "y"])
        directives.append(["vectorize", "x" if "x" in dims else dims[0], _lanes(f)])
        schedule[name] = directives
        changed = True
    if not changed:
        raise NodeError("the parallel+vectorized preset needs an output with at least one loop", n.node_id)
    return schedule
