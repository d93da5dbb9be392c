"""What the automatic scheduler knows about a pipeline before choosing anything: which
Func calls which and how often, the region of each Func the estimated outputs need, the
region a tile of a consumer needs (its footprint), and the arithmetic cost of a point.

Regions are found by numeric interval analysis of the call sites (the method of the
reference evaluator), with the estimated input sizes and parameter values in scope, so
stencils, resampling and data-dependent reads (bounded by the values' ranges) all work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pixelweave.engine.analysis.interval import Interval, bounds_of
from pixelweave.engine.codegen.llvm_vector_math import VECTOR_MATH
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.pipeline import Pipeline, definition_exprs, func_definitions

Box = list[Interval]

# Relative cost of one operation per point (a load, an add, ...); transcendental functions
# cost several.
_EXPENSIVE = {"sqrt": 4, "exp": 8, "log": 8, "pow": 12, "sin": 8, "cos": 8, "tan": 10, "atan2": 12, "atan": 10}


def volume(box: Box) -> float:
    """Number of points in a box (0 if any dimension is empty)."""
    v = 1.0
    for b in box:
        if b.hi < b.lo:
            return 0.0
        v *= b.hi - b.lo + 1
    return v


def clip(box: Box, within: Box) -> Box:
    """The part of box inside within (a footprint never exceeds the whole region)."""
    return [Interval(max(b.lo, w.lo), min(b.hi, w.hi)) for b, w in zip(box, within, strict=True)]


@dataclass
class CallSite:
    """One call of `producer` in a definition of `consumer`."""

    consumer: Func
    definition: Definition
    call: E.Call


@dataclass
class PipelineAnalysis:
    """Call graph, regions and costs of a pipeline under given estimates."""

    pipeline: Pipeline
    scope: dict[str, Interval]  # Params and input-image dimensions, as point intervals
    output_boxes: dict[int, Box]
    regions: dict[int, Box] = field(init=False)
    sites: dict[int, list[CallSite]] = field(init=False)
    _value_bounds: dict[tuple[int, int], Interval | None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.sites = {id(f): [] for f in self.pipeline.funcs}
        # Per Func, each definition with the distinct calls of other Funcs it makes.
        self.calls: dict[int, list[tuple[Definition, list[E.Call]]]] = {}
        for f in self.pipeline.funcs:
            per_definition = []
            for d in func_definitions(f):
                distinct: dict[tuple, E.Call] = {}
                for e in definition_exprs(d):
                    for node in walk(e):
                        if isinstance(node, E.Call) and node.call_kind == "func" and node.target is not f:
                            self.sites[id(node.target)].append(CallSite(f, d, node))
                            distinct.setdefault(node.key(), node)
                per_definition.append((d, list(distinct.values())))
            self.calls[id(f)] = per_definition
        self.regions = self.propagate(dict(self.output_boxes))

    # ------------------------------------------------------------------ graph
    def consumers(self, f: Func) -> list[Func]:
        """The distinct Funcs that call f, in pipeline order."""
        seen: dict[int, Func] = {}
        for s in self.sites[id(f)]:
            seen.setdefault(id(s.consumer), s.consumer)
        return list(seen.values())

    def is_output(self, f: Func) -> bool:
        return any(f is o for o in self.pipeline.outputs)

    # ------------------------------------------------------------------ regions
    def rdom_box(self, d: Definition) -> Box:
        if d.rdom is None:
            return []
        box = []
        for lo, extent in d.rdom.bounds:
            m, n = bounds_of(lo, self.scope), bounds_of(extent, self.scope)
            box.append(Interval(m.lo, m.lo + n.hi - 1))
        return box

    def definition_scope(self, f: Func, d: Definition, box: Box) -> dict[str, Interval]:
        scope = dict(self.scope)
        for a, interval in zip(f.definition().args, box, strict=True):
            scope[a.name] = interval
        for i, a in enumerate(d.args):
            if isinstance(a, E.Variable) and a.kind == "var":
                scope[a.name] = box[i]
        if d.rdom is not None:
            for v, interval in zip(d.rdom.vars, self.rdom_box(d), strict=True):
                scope[v.name] = interval
        return scope

    def _call_bounds(self, call: E.Call) -> Interval | None:
        """Values a call can return: a pure Func is bounded by its definition."""
        if call.call_kind != "func" or call.target.has_update_definition():
            return None
        f = call.target
        key = (id(f), call.value_index)  # one entry per value of a Func returning a Tuple
        if key not in self._value_bounds:
            self._value_bounds[key] = None  # a guard against revisiting while computing
            value = f.definition().all_values()[call.value_index]
            self._value_bounds[key] = bounds_of(value, self.scope, self._call_bounds)
        return self._value_bounds[key]

    def call_box(self, call: E.Call, scope: dict[str, Interval]) -> Box:
        return [bounds_of(a, scope, self._call_bounds) for a in call.args]

    def iteration_points(self, f: Func, d: Definition, box: Box) -> float:
        """How many times definition d of f runs when f is computed over box."""
        if d is f.definition():
            return volume(box)
        pure = 1.0
        for i, a in enumerate(d.args):
            if isinstance(a, E.Variable) and a.kind == "var":
                pure *= max(0.0, box[i].hi - box[i].lo + 1)
        return pure * volume(self.rdom_box(d))

    def _grow_for_updates(self, f: Func, box: Box) -> Box:
        for _ in range(4):
            grown = list(box)
            for d in f.updates():
                scope = self.definition_scope(f, d, grown)
                lhs = [bounds_of(a, scope, self._call_bounds) for a in d.args]
                grown = [g.union(b) for g, b in zip(grown, lhs, strict=True)]
            if grown == box:
                break
            box = grown
        return box

    def propagate(self, start: dict[int, Box], members: set[int] | None = None) -> dict[int, Box]:
        """The region of every Func needed to compute the start boxes. With `members`, only
        those Funcs (and the start ones) are expanded; others get the region read from them."""
        regions = {k: list(v) for k, v in start.items()}
        for f in reversed(self.pipeline.funcs):
            box = regions.get(id(f))
            if box is None or any(b.is_empty() for b in box):
                continue
            if members is not None and id(f) not in members and id(f) not in start:
                continue
            if f.has_update_definition():
                box = self._grow_for_updates(f, box)
                regions[id(f)] = box
            for d, calls in self.calls[id(f)]:
                if not calls:
                    continue
                scope = self.definition_scope(f, d, box)
                for node in calls:
                    arg_box = self.call_box(node, scope)
                    key = id(node.target)
                    old = regions.get(key)
                    if old is not None:
                        arg_box = [o.union(n) for o, n in zip(old, arg_box, strict=True)]
                    regions[key] = arg_box
        whole_regions = getattr(self, "regions", None)  # unset while the whole regions are found
        if whole_regions is not None:
            for key, box in regions.items():
                whole = whole_regions.get(key)
                if whole is not None:
                    regions[key] = clip(box, whole)
        return regions

    def region(self, f: Func) -> Box:
        return self.regions[id(f)]

    def points(self, f: Func) -> float:
        return volume(self.regions[id(f)])

    # ------------------------------------------------------------------ costs
    def recompute_ratio(self, f: Func) -> float:
        """Evaluations of f if inlined everywhere, per point of f's region: 1 for a Func read
        once per point, 9 for one read by a 3x3 stencil, 3 for one read by each channel."""
        own = self.points(f)
        if own <= 0:
            return 1.0
        total = 0.0
        for s in self.sites[id(f)]:
            total += self.iteration_points(s.consumer, s.definition, self.regions.get(id(s.consumer), []))
        return total / own


def op_cost(e: E.Expr, inlined: dict[int, float]) -> float:
    """Operations per evaluation of e: each distinct varying node counts (a crude common
    subexpression elimination), a call of an inlined Func costs that Func's own cost."""
    seen: set = set()

    def go(node: E.Expr) -> tuple[float, bool]:
        if isinstance(node, E.Const):
            return 0.0, False
        if isinstance(node, E.Variable):
            return 0.0, node.kind in ("var", "rvar")
        key = node.key()
        if key in seen:
            return 0.0, True
        total, varying = 0.0, False
        for c in node.children():
            cost, v = go(c)
            total += cost
            varying = varying or v
        if isinstance(node, E.Call) and node.call_kind in ("func", "image"):
            varying = True
            total += inlined.get(id(node.target), 1.0) if node.call_kind == "func" else 1.0
        elif varying and not isinstance(node, E.Cast):
            total += _EXPENSIVE.get(node.name, 1) if isinstance(node, E.Call) else 1.0
        if varying:
            seen.add(key)
        return total, varying

    return go(e)[0]


def func_cost(f: Func, inlined: dict[int, float]) -> float:
    """Operations per point of f's pure definition (updates are costed per iteration)."""
    return max(1.0, sum(op_cost(v, inlined) for v in f.definition().all_values()))


def bytes_per_point(f: Func) -> int:
    return max(1, sum(t.bits for t in f.types()) // 8)


def finite(box: Box) -> bool:
    return all(not (math.isinf(b.lo) or math.isinf(b.hi)) for b in box)


def compute_bits(f: Func, inlined: set[int], memo: dict[int, int] | None = None) -> int:
    """The widest element type (in bits) f's pure value computes in along its innermost
    Var: the vector width follows the widest vector arithmetic, not the stored type (a u8
    stage that sums in i32 or f32 fills four times the registers per lane). Counted are the
    subexpressions that vary along that Var (the others are loop invariants, computed once
    per row) and the Funcs inlined into f (their arithmetic runs in f's loop); the
    coordinates of a read count only where they read data (a lookup table's gather builds
    its index vector), not where they are address arithmetic on the Vars."""
    memo = {} if memo is None else memo
    known = memo.get(id(f))
    if known is not None:
        return known
    memo[id(f)] = widest = max(t.bits for t in f.types())  # a cycle through inlined Funcs ends here
    args = f.args()
    inner = args[0].name if args else None
    seen: dict[int, bool] = {}  # shared subexpressions are visited once

    def go(node: E.Expr) -> bool:
        """Whether node varies along the innermost Var; records the widest varying type."""
        nonlocal widest
        if id(node) in seen:
            return seen[id(node)]
        if isinstance(node, E.Const):
            return False
        if isinstance(node, E.Variable):
            varying = node.kind == "var" and node.name == inner
        elif isinstance(node, E.Call) and node.call_kind in ("func", "image"):
            for a in node.args:
                if any(isinstance(n, E.Call) and n.call_kind in ("func", "image") for n in walk(a)):
                    go(a)  # a data-dependent coordinate: its index is computed per lane
            if node.call_kind == "func" and id(node.target) in inlined:
                widest = max(widest, compute_bits(node.target, inlined, memo))
            varying = True
        else:
            varying = False
            for c in node.children():
                varying = go(c) or varying
        if varying:
            widest = max(widest, node.type().bits)
        seen[id(node)] = varying
        return varying

    for value in f.definition().all_values():
        go(value)
    memo[id(f)] = widest
    return widest


def computes_vector_math(f: Func, inlined: set[int], memo: dict[int, bool] | None = None) -> bool:
    """Whether f's pure value (with the Funcs inlined into it) calls a float32 function that
    the code generator computes as a float64 polynomial (llvm_vector_math: pow, exp, log,
    ...): a long chain of dependent steps, whose latency only several vectors in flight hide."""
    memo = {} if memo is None else memo
    if id(f) not in memo:
        memo[id(f)] = False  # a cycle through inlined Funcs ends here
        calls = [n for v in f.definition().all_values() for n in walk(v) if isinstance(n, E.Call)]
        memo[id(f)] = any(
            (c.call_kind == "intrinsic" and c.name in VECTOR_MATH and c.type().is_float())
            or (c.call_kind == "func" and id(c.target) in inlined and computes_vector_math(c.target, inlined, memo))
            for c in calls
        )
    return memo[id(f)]
