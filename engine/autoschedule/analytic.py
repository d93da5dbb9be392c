"""The analytic scheduler: a schedule from reuse analysis and a cost model, no measurement.

After Sioutas et al., "Schedule Synthesis for Halide Pipelines through Reuse Analysis"
(TACO 2019), in four steps:

1. Inline the Funcs whose recomputation costs less than storing them: a Func read once
   per point (reads of one point from several inlined consumers count once: the code
   generator shares equal subexpressions, see accesses.py), a Func so cheap that
   recomputing it for every reader is nearly free (boundary conditions), and an
   element-wise Func whose repeated arithmetic and extra loads cost less than writing its
   buffer and reading it back (as Mullapudi et al. inline element-wise stages).
2. Group the remaining Funcs greedily, consumers first: a producer (with updates too, if
   they keep its pure Vars in place, as a histogram's do) joins the group of its
   consumers when all its consumers are in one group and the memory traffic saved by
   keeping it in cache (its whole buffer written and read back) outweighs the recomputation
   at tile borders, estimated from the footprint (by interval analysis) of a tile of the
   group's output on the producer.
3. Tile each group's output in strips of rows (the dimension after the innermost), sized
   by a cost model of the work in vector instructions (with the redundant border work of
   every member) against the fixed cost of a parallel task, at least a few tasks per core,
   and a working set that fits the L2 cache. Members whose footprint advances one row per
   output row are computed per row and stored per strip (a sliding window); the others are
   computed per strip.
4. Vectorize each stage's innermost storage dimension at the natural width of the widest
   type it computes in (a u8 stage summing in float32 at the float32 width), parallelize
   the strips (and the outer pure dimension of updates), and unroll the small (colour
   channel) loops of a Func whose value branches on the channel (`select(c == 0, ...)`):
   with the channel a constant in each copy, the selects fold away and only the chosen
   branch is computed and loaded.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from pixelweave.engine.analysis.interval import Interval
from pixelweave.engine.autoschedule.accesses import StageAccesses, stage_accesses, translation_calls
from pixelweave.engine.autoschedule.analysis import (
    Box,
    PipelineAnalysis,
    bytes_per_point,
    compute_bits,
    computes_vector_math,
    finite,
    func_cost,
    volume,
)
from pixelweave.engine.autoschedule.directives import Directive, FuncRef, func_labels
from pixelweave.engine.autoschedule.estimates import output_boxes, parameter_scope
from pixelweave.engine.autoschedule.machine import Machine
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.pipeline import Pipeline

# Inline a Func when inlining it everywhere adds at most this many operations per point.
INLINE_EXTRA_OPS = 8.0
# A Func that only re-indexes another (a boundary condition) is inlined for up to this many reads.
REINDEX_MAX_READS = 16.0
# Element-wise Funcs with at most this much arithmetic are candidates for inlining into stencils
# (more, and chains of them inlined into deep pipelines make expressions that lower very slowly).
ELEMENTWISE_MAX_OPS = 2.0
# Moving a byte to or from memory, in units of one arithmetic operation.
BYTE_COST = 4.0
# Scheduling overhead of one parallel task, in operations.
TASK_COST = 5000.0
# Strips are short enough to give each core at least this many (where the rows allow).
MIN_TASKS_PER_CORE = 4
# A fused producer may at most double its work through border recomputation.
MAX_REDUNDANCY = 1.0
STRIP_CANDIDATES = (2, 4, 8, 16, 32, 64, 128, 256)
WIDTH_CANDIDATES = (64, 128, 256, 512, 1024)  # columns of a 2-D tile
TRIAL_STRIP = 16
SMALL_DIM = 4  # dimensions this small (colour channels) run inside the strip


@dataclass
class Overrides:
    """Decisions forced on the analytic scheduler (what the tuner mutates); empty: none."""

    inline: dict[str, bool] = field(default_factory=dict)  # per pure Func: inline or not
    keep_root: frozenset[str] = frozenset()  # Funcs never fused into a consumer's strips
    strips: dict[str, int] = field(default_factory=dict)  # rows per strip, per group output
    widths: dict[str, int] = field(default_factory=dict)  # columns per tile (0: the whole width)
    no_sliding: frozenset[str] = frozenset()  # members computed per strip, not per row
    lanes_scale: dict[str, float] = field(default_factory=dict)  # times the natural vector width
    serial: frozenset[str] = frozenset()  # group outputs whose strips run on one thread
    unroll: dict[str, bool] = field(default_factory=dict)  # per computed Func: its small (channel) loops unrolled


@dataclass
class Group:
    """A group's output (computed at root) and the producers computed inside its strips."""

    root: Func
    members: list[Func] = field(default_factory=list)  # consumers before producers
    sliding: set[int] = field(default_factory=set)
    strip: int = 0
    width: int = 0  # columns per tile; 0: strips span the whole width
    yi: str = ""


@dataclass
class Plan:
    """The scheduler's decisions, for inspection and for the text of the schedule."""

    inlined: list[str]
    groups: list[Group]
    directives: list[Directive]
    unrolled: list[str] = field(default_factory=list)  # Funcs whose small (channel) loops are unrolled


class AnalyticScheduler:
    def __init__(
        self,
        pipeline: Pipeline,
        machine: Machine,
        overrides: Overrides | None = None,
        analysis: PipelineAnalysis | None = None,
    ) -> None:
        self.labels = func_labels(pipeline)  # directives name Funcs by these (distinct even where names repeat)
        self.pipeline = pipeline
        self.machine = machine
        self.overrides = overrides or Overrides()
        self.analysis = analysis or PipelineAnalysis(pipeline, parameter_scope(pipeline), output_boxes(pipeline))
        for f in pipeline.funcs:
            if not finite(self.analysis.region(f)):
                raise ScheduleError(
                    f"the automatic scheduler cannot bound the region of Func `{f.name()}` from the estimates: "
                    "it is read at coordinates whose range is unknown; clamp them or add a boundary condition"
                )
        self.inlined: set[int] = set()
        self.cost: dict[int, float] = {}
        self.group_of: dict[int, Group] = {}
        self._footprint_memo: dict[tuple, tuple[dict[int, Box], float]] = {}
        self.deep: set[int] = set()  # group outputs whose outer dimensions run inside the strips
        self.unrolled: list[str] = []
        self._compute_bits_memo: dict[int, int] = {}  # per Func, once the inlining is chosen
        self._vector_math_memo: dict[int, bool] = {}

    # ------------------------------------------------------------------ 1. inlining
    def _choose_inlining(self) -> None:
        known: dict[int, StageAccesses] = {}  # per Func: the points of it each computed stage reads
        for f in reversed(self.pipeline.funcs):
            if self.analysis.is_output(f) or f.has_update_definition() or not self.analysis.sites[id(f)]:
                continue
            accesses = stage_accesses(f, self.analysis.sites[id(f)], lambda c: id(c) in self.inlined, known)
            known[id(f)] = accesses
            own = self.analysis.points(f)
            total = sum(
                len(points) * self.analysis.iteration_points(stage, d, self.analysis.regions.get(id(stage), []))
                for stage, d, points in accesses.values()
            )
            ratio = total / own if own > 0 else 1.0
            cost = func_cost(f, {})
            cheap = cost * (ratio - 1) <= INLINE_EXTRA_OPS or (_reindexes(f) and ratio <= REINDEX_MAX_READS)
            loads = translation_calls(f)
            if loads is not None and not cheap and cost - loads <= ELEMENTWISE_MAX_OPS:
                # Inlining an element-wise Func moves its reads to its producers (the same
                # number of loads per read, plus one per extra producer) and repeats its
                # arithmetic; it saves writing its buffer and reading it back.
                extra = (ratio - 1) * (cost - loads) + ratio * (loads - 1)
                cheap = extra <= 2 * BYTE_COST * bytes_per_point(f)
            if self.overrides.inline.get(self.label(f), ratio <= 1.05 or cheap):
                self.inlined.add(id(f))
        inlined_cost: dict[int, float] = {}
        for f in self.pipeline.funcs:
            c = func_cost(f, inlined_cost)
            self.cost[id(f)] = c
            if id(f) in self.inlined:
                inlined_cost[id(f)] = c

    def label(self, f: Func) -> str:
        """The name directives and overrides give f (its name, made distinct where names repeat)."""
        return self.labels[id(f)]

    def stage_consumers(self, f: Func) -> list[Func]:
        """The computed (not inlined) Funcs that read f, directly or through inlined ones."""
        found: dict[int, Func] = {}
        for c in self.analysis.consumers(f):
            for g in self.stage_consumers(c) if id(c) in self.inlined else [c]:
                found.setdefault(id(g), g)
        return list(found.values())

    # ------------------------------------------------------------------ 2. grouping
    def _group(self) -> list[Group]:
        groups: list[Group] = []
        for f in reversed(self.pipeline.funcs):
            if id(f) in self.inlined:
                continue
            joined = self._try_join(f)
            if joined is None:
                g = Group(f)
                groups.append(g)
                self.group_of[id(f)] = g
        return groups

    def _try_join(self, f: Func) -> Group | None:
        if self.analysis.is_output(f) or self.label(f) in self.overrides.keep_root or not _updates_fuse(f):
            return None
        consumers = self.stage_consumers(f)
        targets = {id(self.group_of[id(c)]) for c in consumers}
        if len(targets) != 1:
            return None
        g = self.group_of[id(consumers[0])]
        if g.root.has_update_definition() or g.root.dimensions() < 2:
            return None
        if not self._fuses(g, f):
            if id(g.root) in self.deep or not self._layout(g.root)[2]:
                return None
            # A producer needed whole along the root's outer dimensions (a histogram's bins)
            # fuses if those dimensions run inside the strips instead of around them.
            self.deep.add(id(g.root))
            if not self._fuses(g, f):
                self.deep.discard(id(g.root))
                return None
        g.members.append(f)
        self.group_of[id(f)] = g
        return g

    def _fuses(self, g: Group, f: Func) -> bool:
        """Whether computing f in g's strips saves more memory traffic than its recomputation
        at the strips' borders costs."""
        trial = Group(g.root, [*g.members, f])
        work = self._member_work(trial, f, self._trial_strip(g.root))
        points = self.analysis.points(f)
        redundancy = work / points - 1 if points > 0 else 0.0
        saved = 2 * BYTE_COST * bytes_per_point(f) * points
        lost = redundancy * points * self.cost[id(f)]
        return redundancy <= MAX_REDUNDANCY and lost < saved

    # ------------------------------------------------------------------ 3. strips
    def _layout(self, root: Func) -> tuple[list[str], list[str], list[str], list[str]]:
        """(innermost dim + small dims, other dims inside the strip, [strip dim], outer dims)
        of a group's output: the dimensions after the second run around the strips, or
        inside them for a group with deep strips."""
        names = [a.name for a in root.args()]
        box = self.analysis.region(root)
        small = [n for i, n in enumerate(names[2:], 2) if box[i].hi - box[i].lo + 1 <= SMALL_DIM]
        outer = [n for n in names[2:] if n not in small]
        if id(root) in self.deep:
            return [names[0], *small], outer, [names[1]], []
        return [names[0], *small], [], [names[1]], outer

    def _tile_box(self, root: Func, strip: int, rows: int | None = None, width: int = 0) -> tuple[Box, float]:
        """The region of the root one tile covers (in the middle of the image), and the
        number of tiles; `rows` narrows the tile to its first rows, `width` (if not 0) to
        that many columns."""
        box = self.analysis.region(root)
        names = [a.name for a in root.args()]
        outer = self._layout(root)[3]
        extent = box[1].hi - box[1].lo + 1
        n = math.ceil(extent / strip)
        y0 = box[1].lo + strip * (n // 2)
        y0 = min(y0, box[1].hi - strip + 1) if extent >= strip else box[1].lo
        tile = list(box)
        tile[1] = Interval(y0, min(box[1].hi, y0 + (rows or strip) - 1))
        tasks = float(n)
        columns = box[0].hi - box[0].lo + 1
        if 0 < width < columns:
            x0 = box[0].lo + width * (math.ceil(columns / width) // 2)
            x0 = min(x0, box[0].hi - width + 1)
            tile[0] = Interval(x0, x0 + width - 1)
            tasks *= math.ceil(columns / width)
        for i, name in enumerate(names):
            if name in outer:
                mid = (box[i].lo + box[i].hi) // 2
                tile[i] = Interval(mid, mid)
                tasks *= box[i].hi - box[i].lo + 1
        return tile, tasks

    def _footprints(
        self, g: Group, strip: int, rows: int | None = None, width: int = 0
    ) -> tuple[dict[int, Box], float]:
        """The region of each member one tile needs, and the number of tiles."""
        key = (id(g.root), id(g.root) in self.deep, tuple(id(m) for m in g.members), strip, rows, width)
        hit = self._footprint_memo.get(key)
        if hit is None:
            tile, tasks = self._tile_box(g.root, strip, rows, width)
            if g.members:  # through inlined Funcs too: they may lead to members
                members = {id(m) for m in g.members} | set(self.inlined)
                regions = self.analysis.propagate({id(g.root): tile}, members)
            else:
                regions = {id(g.root): tile}
            hit = self._footprint_memo[key] = (regions, tasks)
        return hit

    def _trial_strip(self, root: Func) -> int:
        """The strip height the benefit of a fusion is judged at (the final one is chosen
        once the group is complete): the typical height, or the whole extent if smaller."""
        box = self.analysis.region(root)
        return int(min(TRIAL_STRIP, box[1].hi - box[1].lo + 1))

    def _member_work(self, g: Group, f: Func, strip: int) -> float:
        regions, tasks = self._footprints(g, strip)
        return volume(regions.get(id(f), [])) * tasks

    def _choose_tile(self, g: Group, two_d: bool = True) -> tuple[int, int]:
        """(rows, columns) per tile: the fastest by the cost model among the full-width
        strips whose working set (the members' footprints) fits in the L2 cache; if none
        does, among tiles narrowed to fewer columns (2-D tiles); the smallest if none fits."""
        box = self.analysis.region(g.root)
        extent = int(box[1].hi - box[1].lo + 1)
        columns = int(box[0].hi - box[0].lo + 1)
        lanes = max(1, self._lanes(g.root, columns))
        widths = [0] + [w for w in WIDTH_CANDIDATES if two_d and w % lanes == 0 and 2 * w <= columns]
        candidates = [s for s in STRIP_CANDIDATES if s <= extent] or [max(1, extent)]
        scored: list[tuple[int, int, float, float, float]] = []  # (rows, columns, time, working set, tasks)
        for width in widths:
            if width and any(c[3] <= self.machine.l2_bytes for c in scored):
                break  # a full-width strip fits: narrower tiles are not considered
            x_tiles = math.ceil(columns / width) if width else 1
            for s in candidates:
                regions, tiles = self._footprints(g, s, None, width)
                # In vector instructions: a task's fixed cost is paid once, its arithmetic
                # `lanes` points at a time (counted per point, short strips would look cheap).
                work = tiles * sum(
                    self.cost[id(m)] * volume(regions.get(id(m), [])) / max(1, self._lanes(m, width or columns))
                    for m in [g.root, *g.members]
                )
                tasks = tiles / x_tiles  # the strips run in parallel, the tiles of a strip in turn
                # Dynamic scheduling: the cores share the work, the last task may run alone.
                time = work / self.machine.cores + work / tasks + TASK_COST * tasks / self.machine.cores
                ws = sum(bytes_per_point(m) * volume(regions.get(id(m), [])) for m in g.members)
                scored.append((s, width, time, ws, tasks))
        full = [c for c in scored if c[1] == 0 and c[3] <= self.machine.l2_bytes]
        fitting = full or [c for c in scored if c[3] <= self.machine.l2_bytes]
        if not fitting:
            return min(scored, key=lambda c: (c[3], c[2]))[:2]
        # Several tasks per core, where the image has the rows for them: dynamic scheduling
        # balances the cores only then (and a core taken by another process costs less).
        fitting = [c for c in fitting if c[4] >= MIN_TASKS_PER_CORE * self.machine.cores] or fitting
        best = fitting[0]
        for c in fitting[1:]:
            if c[2] < best[2] * 0.999:
                best = c
        return best[0], best[1]

    def _sliding_members(self, g: Group) -> set[int]:
        """Members whose footprint advances exactly one row per row of the output (and whose
        consumers in the group slide too): computed per row, stored per strip."""
        if not g.members:
            return set()
        growth: dict[int, list[Box]] = {}
        for rows in (1, 2, 3, 4):
            regions, _ = self._footprints(g, g.strip, rows, g.width)
            for m in g.members:
                growth.setdefault(id(m), []).append(regions.get(id(m), []))
        sliding: set[int] = set()
        for m in g.members:  # consumers first
            boxes = growth[id(m)]
            # a Func with updates is computed whole per strip (all its stages), never per row
            ok = g.strip >= 4 and self.label(m) not in self.overrides.no_sliding and not m.has_update_definition()
            ok = ok and all(len(b) == len(boxes[0]) for b in boxes)
            if ok:
                for a, b in itertools.pairwise(boxes):
                    grown = [(bb.hi - bb.lo) - (aa.hi - aa.lo) for aa, bb in zip(a, b, strict=True)]
                    if sorted(grown) != [0] * (len(grown) - 1) + [1]:
                        ok = False
            consumers = [c for c in self.stage_consumers(m) if c is not g.root]
            if ok and all(id(c) in sliding for c in consumers):
                sliding.add(id(m))
        return sliding

    # ------------------------------------------------------------------ 4. directives
    def _lanes(self, f: Func, extent: float) -> int:
        """The vector width of f's innermost loop, at most `extent` (0: not vectorized): the
        natural width of the widest type f computes in (compute_bits), where one vector's
        arithmetic fills the registers; but a stage with float64 polynomial math (pow, exp)
        keeps the natural width of its stored type, several vectors of the wide type in
        flight hiding the latency of the polynomial's dependent steps (1.3-2x on the camera
        pipeline example's tone curve, 16 lanes against 64)."""
        scale = self.overrides.lanes_scale.get(self.label(f), 1.0)
        bits = max(t.bits for t in f.types())
        if not computes_vector_math(f, self.inlined, self._vector_math_memo):
            bits = compute_bits(f, self.inlined, self._compute_bits_memo)
        lanes = int(self.machine.lanes(bits) * scale)
        while lanes > 1 and lanes > extent:
            lanes //= 2
        return lanes if lanes >= 2 else 0

    def _root_directives(self, g: Group) -> list[Directive]:
        f = g.root
        name = self.label(f)
        out: list[Directive] = []
        if not self.analysis.is_output(f):
            out.append(Directive(name, 0, "compute_root"))
        box = self.analysis.region(f)
        args = [a.name for a in f.args()]
        if len(args) >= 2:
            inner, middle, (y,), outer = self._layout(f)
            extent = box[1].hi - box[1].lo + 1
            yi = _fresh_name(f"{y}i", args)
            g.yi = yi
            if g.strip < extent:
                out.append(Directive(name, 0, "split", (y, y, yi, g.strip)))
            else:
                yi = g.yi = y
            x = args[0]
            columns = box[0].hi - box[0].lo + 1
            if 0 < g.width < columns:  # a 2-D tile: its columns inside, the tiles of a strip around yi
                xi = _fresh_name(f"{x}i", [*args, yi])
                out.append(Directive(name, 0, "split", (x, x, xi, g.width)))
                rows = [yi, x, y] if yi != y else [y, x]
                order = [xi, *inner[1:], *middle, *rows, *outer]
                current = [xi, x, yi, *([y] if yi != y else []), *args[2:]]
                columns = g.width
            else:
                g.width = 0
                xi = x
                order = [*inner, *middle, yi] + ([y] if yi != y else []) + outer
                current = [x, yi, *([y] if yi != y else []), *args[2:]]
            if order != current:
                out.append(Directive(name, 0, "reorder", tuple(order)))
            lanes = self._lanes(f, columns)
            if lanes:
                out.append(Directive(name, 0, "vectorize", (xi, lanes)))
            if inner[1:] and self._unrolls(f, inner[1:]):
                for small in inner[1:]:
                    i = args.index(small)
                    out.append(Directive(name, 0, "unroll", (small, int(box[i].hi - box[i].lo + 1))))
            tasks = math.ceil(extent / g.strip)
            if tasks > 1 and yi != y and name not in self.overrides.serial:
                out.append(Directive(name, 0, "parallel", (y,)))
        elif len(args) == 1:
            extent = box[0].hi - box[0].lo + 1
            lanes = self._lanes(f, extent)
            if lanes:
                out.append(Directive(name, 0, "vectorize", (args[0], lanes)))
            chunk = lanes * 64 if lanes else 1024
            if extent >= chunk * 2 * self.machine.cores:
                out.append(Directive(name, 0, "parallel", (args[0], max(1, chunk // max(1, lanes)))))
        for k, d in enumerate(f.updates(), 1):
            # A pure variable of an update indexes distinct points, so its loop may run in
            # parallel: the one with the most iterations, if there are enough for the cores.
            pure = [a.name for a in d.args if isinstance(a, E.Variable) and a.kind == "var"]
            extents = {v: box[args.index(v)].hi - box[args.index(v)].lo + 1 for v in pure}
            widest = max(pure, key=lambda v: (extents[v], -pure.index(v)), default=None)
            if widest is not None and extents[widest] >= 2 * self.machine.cores:
                out.append(Directive(name, k, "parallel", (widest,)))
        return out

    def _member_directives(self, g: Group, m: Func) -> list[Directive]:
        args = [a.name for a in m.args()]
        root, (y,) = g.root, self._layout(g.root)[2]
        tile = root.args()[0].name if g.width else y  # the loop over tiles (strips, or columns of a strip)
        out: list[Directive] = []
        if id(m) in g.sliding and g.yi != y:
            out.append(Directive(self.label(m), 0, "store_at", (FuncRef(self.label(root)), tile)))
            out.append(Directive(self.label(m), 0, "compute_at", (FuncRef(self.label(root)), g.yi)))
        else:
            out.append(Directive(self.label(m), 0, "compute_at", (FuncRef(self.label(root)), tile)))
        box = self.analysis.region(m)
        lanes = self._lanes(m, min(box[0].hi - box[0].lo + 1, self._member_width(g, m)))
        if lanes:
            out.append(Directive(self.label(m), 0, "vectorize", (args[0], lanes)))
        small = self._member_small_dims(g, m)
        if small and self._unrolls(m, list(small)):
            out += [Directive(self.label(m), 0, "unroll", (name, extent)) for name, extent in small.items()]
        return out

    def _member_small_dims(self, g: Group, m: Func) -> dict[str, int]:
        """A member's small (channel) dimensions after the second, with their extent, where
        every tile computes the whole of them (so unrolling by that extent is exact)."""
        if m.has_update_definition():
            return {}
        regions, _ = self._footprints(g, g.strip, None, g.width)
        tile = regions.get(id(m))
        whole = self.analysis.region(m)
        small: dict[str, int] = {}
        for i, a in enumerate(m.args()[2:], 2):
            extent = int(whole[i].hi - whole[i].lo + 1)
            if tile is None or extent > SMALL_DIM or tile[i] != whole[i]:
                return {}
            small[a.name] = extent
        return small

    def _unrolls(self, f: Func, small: list[str]) -> bool:
        """Whether to unroll f's small loops: by default when f's value branches on one of
        them (a channel compared or computed with, not only used as a coordinate)."""
        name = self.label(f)
        unroll = self.overrides.unroll.get(name, any(_branches_on(f, v, self.inlined) for v in small))
        if unroll:
            self.unrolled.append(name)
        return unroll

    def _member_width(self, g: Group, m: Func) -> float:
        regions, _ = self._footprints(g, g.strip, 1, g.width)
        box = regions.get(id(m))
        return box[0].hi - box[0].lo + 1 if box else 0

    def plan(self) -> Plan:
        self._choose_inlining()
        groups = self._group()
        directives: list[Directive] = []
        for g in groups:
            if g.root.dimensions() >= 2:
                g.strip, g.width = self._choose_tile(g, not g.root.has_update_definition())
                g.strip = self.overrides.strips.get(self.label(g.root), g.strip)
                g.width = self.overrides.widths.get(self.label(g.root), g.width)
                if g.root.has_update_definition():
                    g.width = 0  # the loops of its updates are not tiled
                else:
                    g.sliding = self._sliding_members(g)
            else:
                g.strip = 1
            directives += self._root_directives(g)
            for m in g.members:
                directives += self._member_directives(g, m)
        # Producers' directives first reads naturally; the order does not change the schedule.
        order = {self.label(f): i for i, f in enumerate(self.pipeline.funcs)}
        directives.sort(key=lambda d: (order[d.func], d.stage))
        inlined = [self.label(f) for f in self.pipeline.funcs if id(f) in self.inlined]
        return Plan(inlined, groups, directives, sorted(self.unrolled))


def _updates_fuse(f: Func) -> bool:
    """Whether f may be computed inside a consumer's strips: no updates, or updates that
    keep each pure Var in its own place (a histogram's `h[x, y, bin(r), c] += ...`), so
    that computing a strip of f's pure region runs the updates of that strip only."""
    names = [a.name for a in f.args()]
    for d in f.updates():
        for i, a in enumerate(d.args):
            if isinstance(a, E.Variable) and a.kind == "var" and a.name != names[i]:
                return False
        used = {a.name for a in d.args if isinstance(a, E.Variable) and a.kind == "var"}
        if not used:
            return False  # a reduction of everything into a point: computed once, at root
    return True


def _branches_on(f: Func, var: str, inlined: set[int], depth: int = 0) -> bool:
    """Whether f's pure value uses Var `var` other than as a coordinate of a call (in a
    condition or arithmetic), so that a constant `var` simplifies the value; through the
    Funcs inlined into it that receive `var` itself as a coordinate."""
    stack = [(v, False) for v in f.definition().all_values()]
    while stack:
        e, coordinate = stack.pop()
        if isinstance(e, E.Variable) and e.kind == "var" and e.name == var and not coordinate:
            return True
        if isinstance(e, E.Call) and e.call_kind in ("func", "image"):
            if e.call_kind == "func" and id(e.target) in inlined and depth < 8:
                params = [a.name for a in e.target.args()]
                passed = [params[i] for i, a in enumerate(e.args) if isinstance(a, E.Variable) and a.name == var]
                if any(_branches_on(e.target, p, inlined, depth + 1) for p in passed):
                    return True
            stack.extend((a, True) for a in e.args)  # coordinates; calls inside them still count
            continue
        stack.extend((c, coordinate) for c in e.children())
    return False


def _reindexes(f: Func) -> bool:
    """Whether f's value is a single read of another Func or image at coordinates computed
    from its Vars (a boundary condition, a crop, a transpose), possibly selected against a
    constant by a condition on the coordinates (a condition that reads data, as a
    non-maximum suppression's, is arithmetic repeated for every reader, not re-indexing)."""
    value = f.value()
    while isinstance(value, (E.Cast, E.Select)):
        if isinstance(value, E.Cast):
            value = value.value
        else:
            sides = [value.true_value, value.false_value]
            calls = [s for s in sides if isinstance(s, E.Call)]
            if len(calls) != 1 or not any(isinstance(s, E.Const) for s in sides) or _reads_data(value.cond):
                return False
            value = calls[0]
    if not isinstance(value, E.Call) or value.call_kind not in ("func", "image"):
        return False
    # Coordinates computed from the Vars alone; a coordinate read from data (a lookup table
    # indexed by pixel values) is a gather per read, not a cheap re-indexing.
    return not any(_reads_data(a) for a in value.args)


def _reads_data(e: E.Expr) -> bool:
    """Whether e reads a Func or an image (rather than only Vars, parameters and constants)."""
    return any(isinstance(n, E.Call) and n.call_kind in ("func", "image") for n in walk(e))


def _fresh_name(base: str, taken: list[str]) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name
