"""Random cases for the schedule fuzzer: a pipeline, a schedule, sizes and inputs.

A `Case` is plain data (JSON-friendly), so a worker process can receive it and the shrinker
can edit it; `render_script` turns it into a standalone Python script that builds the
pipeline with `pixelweave` (or, for the algorithm alone, `halide`), applies the schedule,
runs it and compares it with the reference evaluator. That script is the reproducer.

Every Func is two-dimensional over (x, y), and all Funcs of a case share one value type
(uint16 or float32) apart from explicit casts that convert back, so any stage can read any
earlier one. Stage kinds: stencils, resampling (down and up), point operations with casts
or math functions, selects against a Param, gathers, reductions over an RDom and scans.

Directives added after the first ones come from random streams of their own, seeded from
the case's seed, so that a seed keeps the rest of its case: storage directives,
fold_storage and hoist_storage, then compute_with (with a new output that reads what the
fused Func reads, as no two Funcs of the chain are independent, and, in a stream of its
own, two new Funcs fused per row of a new output's strips and stored per strip, as
Halide's Harris app schedules), specialize / specialize_fail on the Params `b` (bool) and
`p` (int) that only specializations read (a directive on a specialization has a
`condition`), and memoize (such a case is realized again, from the cache, and with `k`
changed). A case whose Param values reach a specialize_fail() must fail with its message.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from typing import Any

TAILS = ("AUTO", "ROUND_UP", "GUARD_WITH_IF", "SHIFT_INWARDS")
BOUNDARIES = ("repeat_edge", "constant_exterior", "mirror_image", "mirror_interior", "repeat_image")
SCAN_LENGTH = 12
GATHER_SPAN = 40


@dataclass
class Stage:
    """One Func: `lines` define it, with {self} for its name and {0}, {1}, ... for its inputs."""

    name: str
    kind: str
    inputs: list[str]
    lines: list[str]
    rvars: list[str] = field(default_factory=list)  # loop names of its update, innermost first
    update_pure: list[str] = field(default_factory=list)  # pure loop names of its update
    exact: bool = True  # no transcendental math upstream (float -> int casts stay exact)


@dataclass
class Directive:
    """One scheduling call on `func` (stage 0: its pure definition; k: update k - 1)."""

    func: str
    stage: int
    kind: str
    args: list[Any]
    # [param, op, value]: the call applies to the specialization of the stage on this
    # condition (op "" for a bool Param alone); None: to the stage itself
    condition: list[Any] | None = None


@dataclass
class Case:
    seed: int
    value_type: str  # "u16" or "f32"
    boundary: str
    input_shape: list[int]  # NumPy shape (h, w)
    param_value: float
    stages: list[Stage]
    outputs: list[str]
    directives: list[Directive]
    sizes: list[int]  # [width, height]
    checked: bool = True
    params: dict[str, Any] = field(default_factory=dict)  # Params only specializations read
    target: str = "host"  # what the case compiles for: "host" or "opencl" (gpu.py's cases)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Case:
        d = dict(d)
        d["stages"] = [Stage(**s) for s in d["stages"]]
        d["directives"] = [Directive(**x) for x in d["directives"]]
        return Case(**d)

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def consumers(self, name: str) -> list[Stage]:
        return [s for s in self.stages if name in s.inputs]


# ---------------------------------------------------------------------------- algorithms


def _stage_lines(rng: random.Random, kind: str, vt: str) -> tuple[list[str], list[str], list[str]]:
    """Source lines of one stage (placeholders {self}, {0}, {1}), its rvars and update pure vars."""
    zero = "m.u16(0)" if vt == "u16" else "m.f32(0)"
    if kind == "stencil":
        offs = [(rng.randint(-2, 2), rng.randint(-2, 2)) for _ in range(rng.randint(1, 3))]
        terms = [f"{{0}}[x + {dx}, y + {dy}]" for dx, dy in offs]
        op = rng.choice(["add", "max", "min", "avg"])
        value = terms[0]
        for t in terms[1:]:
            value = {
                "add": f"{value} + {t}",
                "max": f"m.max({value}, {t})",
                "min": f"m.min({value}, {t})",
                "avg": f"({value} + {t}) / 2",
            }[op]
        return [f"{{self}}[x, y] = {value}"], [], []
    if kind == "combine":
        dy = rng.randint(-1, 1)
        return [f"{{self}}[x, y] = {{0}}[x, y] / 2 + {{1}}[x, y + {dy}] / 2"], [], []
    if kind == "down":
        if rng.random() < 0.5:
            return ["{self}[x, y] = {0}[2 * x, y] / 2 + {0}[2 * x + 1, y] / 2"], [], []
        return ["{self}[x, y] = {0}[x, 2 * y - 1] / 2 + {0}[x, 2 * y] / 2"], [], []
    if kind == "up":
        if rng.random() < 0.5:
            return ["{self}[x, y] = {0}[x / 2, y] / 2 + {0}[(x + 1) / 2, y] / 2"], [], []
        return ["{self}[x, y] = {0}[x, y / 2]"], [], []
    if kind == "point":
        if vt == "u16":
            value = rng.choice(
                [
                    "m.u16(m.u8({0}[x, y] / 8))",
                    "m.u16(m.f32({0}[x, y]) * 0.5)",
                    "m.u16(m.min(m.i32({0}[x, y]) * 3 - m.i32(x), 60000))",
                    "{0}[x, y] * k + m.u16(y)",
                    "m.u16(m.abs(m.i32({0}[x, y]) - 500))",
                    "m.saturating_cast(m.UInt(16), m.i32({0}[x, y]) - m.i32(k) * 100)",
                ]
            )
        else:
            value = rng.choice(
                [
                    "m.sin({0}[x, y]) * k",
                    "m.sqrt(m.abs({0}[x, y]) + 1.0)",
                    "m.exp(-m.abs({0}[x, y]))",
                    "m.log(m.abs({0}[x, y]) + 1.0)",
                    "m.tanh({0}[x, y] * 2.0)",
                    "m.atan2({0}[x, y], k + 1.0)",
                    "m.pow(m.abs({0}[x, y]) + 1.0, 0.5)",
                    "m.floor({0}[x, y] * 4.0) / 4.0",
                    "{0}[x, y] * k - m.f32(x) * 0.125",
                ]
            )
        return [f"{{self}}[x, y] = {value}"], [], []
    if kind == "select":
        if vt == "u16":
            return ["{self}[x, y] = m.select({0}[x, y] > k * 100, {0}[x, y] - k, {1}[x, y])"], [], []
        return ["{self}[x, y] = m.select({0}[x, y] > k, {0}[x, y] - k, {1}[x, y])"], [], []
    if kind == "gather":
        index = f"m.clamp(x + m.i32({{0}}[x, y] % 5) - 2, 0, {GATHER_SPAN - 1})"
        return [f"{{self}}[x, y] = {{1}}[{index}, y]"], [], []
    if kind == "reduce":
        w, h = rng.randint(1, 3), rng.randint(1, 2)
        first = rng.choice([zero, "{0}[x, y]"])
        lines = [f"{{self}}[x, y] = {first}", f"R['{{self}}'] = r = m.RDom([({-(w // 2)}, {w}), (0, {h})])"]
        if rng.random() < 0.5:
            lines.append("{self}[x, y] += {0}[x + r.x, y + r.y]")
        else:
            lines.append("{self}[x, y] = m.max({self}[x, y], {0}[x + r.x, y + r.y])")
        return lines, ["r.x", "r.y"], ["x", "y"]
    if kind == "scan":
        step = "{self}[r.x - 1, y] + {self}[r.x, y]" if vt == "u16" else "({self}[r.x - 1, y] + {self}[r.x, y]) * 0.5"
        lines = [
            "{self}[x, y] = {0}[x, y]",
            f"R['{{self}}'] = r = m.RDom([(1, {SCAN_LENGTH - 1})])",
            f"{{self}}[r.x, y] = {step}",
        ]
        return lines, ["r.x"], ["y"]
    raise ValueError(kind)


N_INPUTS = {"combine": 2, "select": 2, "gather": 2}


def _draw_algorithm(rng: random.Random, vt: str) -> list[Stage]:
    stages = [Stage("s0", "boundary", [], [])]
    for i in range(1, rng.randint(2, 5)):
        kinds = ["stencil", "stencil", "down", "up", "point", "combine", "select", "reduce", "scan"]
        if vt == "u16":
            kinds.append("gather")
        kind = rng.choice(kinds)
        names = [s.name for s in stages]
        n = N_INPUTS.get(kind, 1)
        inputs = [names[-1]] + [rng.choice(names) for _ in range(n - 1)]
        lines, rvars, update_pure = _stage_lines(rng, kind, vt)
        exact = all(next(s for s in stages if s.name == a).exact for a in inputs) and not (
            kind == "point" and vt == "f32"
        )
        stages.append(Stage(f"s{i}", kind, inputs, lines, rvars, update_pure, exact))
    return stages


# ---------------------------------------------------------------------------- schedules


def _tail(rng: random.Random, loops: _Loops) -> str:
    """Mostly tails that fit any size: RoundUp and ShiftInwards on an output too small for
    the factor are refused at run time (as in Halide), which tests little."""
    if loops.is_output and rng.random() < 0.8:
        return rng.choice(["AUTO", "GUARD_WITH_IF"])
    return rng.choice(TAILS)


class _Loops:
    """Loop names of one stage, innermost first, updated as directives are drawn."""

    def __init__(self, pure: list[str], rvars: list[str], is_output: bool = False) -> None:
        self.is_output = is_output
        self.dims = [*rvars, *pure]
        self.rvars = set(rvars)
        self.constant: set[str] = set()  # inner loops of splits: constant extents
        self.marked: set[str] = set()  # loops already vectorized, unrolled or parallel
        self.counter = 0

    def fresh(self, base: str, suffix: str) -> str:
        name = f"{base.replace('.', '')}{suffix}"
        while name in self.dims:
            self.counter += 1
            name = f"{base.replace('.', '')}{suffix}{self.counter}"
        return name

    def pure(self) -> list[str]:
        return [d for d in self.dims if d not in self.rvars]


RESHAPING = ("split", "split", "tile", "fuse", "reorder")
MARKS = ("vectorize", "vectorize", "unroll", "parallel")


def _draw_loop_directives(
    rng: random.Random, func: str, stage: int, loops: _Loops, fixed: frozenset[str] = frozenset()
) -> list[Directive]:
    """Directives reshaping the loops (split, tile, fuse, reorder), then mostly marks on the
    resulting loops (vectorize, unroll, parallel), as people write schedules. Loops in
    `fixed` are not split, tiled or fused away (other Funcs are computed at them)."""
    out: list[Directive] = []
    count = rng.choice([0, 1, 1, 2, 2, 3, 4])
    reshapes = sorted(rng.random() < 0.55 for _ in range(count))[::-1]
    for reshaping in reshapes:
        choice = rng.choice(RESHAPING if reshaping or rng.random() < 0.1 else MARKS)
        pure = loops.pure()
        splittable = [d for d in pure if d not in fixed]
        if choice == "split" and splittable:
            v = rng.choice(splittable)
            o, i = loops.fresh(v, "o"), loops.fresh(v, "i")
            out.append(Directive(func, stage, "split", [v, o, i, rng.choice([2, 3, 4, 5, 8, 16]), _tail(rng, loops)]))
            k = loops.dims.index(v)
            loops.dims[k : k + 1] = [i, o]
            loops.constant.add(i)
        elif choice == "tile" and "x" in loops.dims and "y" in loops.dims and not fixed & {"x", "y"}:
            xo, yo, xi, yi = (
                loops.fresh("x", "o"),
                loops.fresh("y", "o"),
                loops.fresh("x", "i"),
                loops.fresh("y", "i"),
            )
            fx, fy = rng.choice([2, 4, 8]), rng.choice([2, 3, 4])
            out.append(Directive(func, stage, "tile", ["x", "y", xo, yo, xi, yi, fx, fy, _tail(rng, loops)]))
            loops.constant |= {xi, yi}
            rest = [d for d in loops.dims if d not in ("x", "y")]
            rvars = [d for d in rest if d in loops.rvars]
            loops.dims = [*rvars, xi, yi, xo, yo, *[d for d in rest if d not in loops.rvars]]
        elif choice == "fuse":
            pairs = [
                (a, b)
                for a, b in zip(loops.dims, loops.dims[1:], strict=False)
                if a not in loops.rvars and b not in loops.rvars and a not in fixed and b not in fixed
            ]
            if pairs:
                a, b = rng.choice(pairs)
                fused = loops.fresh(a + b, "f")
                out.append(Directive(func, stage, "fuse", [a, b, fused]))
                k = loops.dims.index(a)
                loops.dims[k : k + 2] = [fused]
        elif choice == "reorder" and len(pure) >= 2:
            order = list(loops.dims)
            positions = [k for k, d in enumerate(order) if d not in loops.rvars]
            shuffled = [order[k] for k in positions]
            rng.shuffle(shuffled)
            for k, d in zip(positions, shuffled, strict=True):
                order[k] = d
            out.append(Directive(func, stage, "reorder", list(order)))
            loops.dims = order
        elif choice == "vectorize" and pure:
            v = pure[0] if rng.random() < 0.8 else rng.choice(pure)
            if v in loops.marked:
                continue
            width = rng.choice([None, None, 4, 8]) if v in loops.constant else rng.choice([4, 8])
            out.append(Directive(func, stage, "vectorize", [v] if width is None else [v, width]))
            loops.marked.add(v)
        elif choice == "unroll" and loops.dims:
            v = rng.choice(loops.dims)
            if v in loops.marked:
                continue
            factor = rng.choice([None, 2, 3]) if v in loops.constant else rng.choice([2, 3])
            if v in loops.rvars:
                factor = None  # an RDom's extents are constants
            out.append(Directive(func, stage, "unroll", [v] if factor is None else [v, factor]))
            loops.marked.add(v)
        elif choice == "parallel" and pure:
            v = pure[-1] if rng.random() < 0.7 else rng.choice(pure)
            if v in loops.marked:
                continue
            out.append(Directive(func, stage, "parallel", [v]))
            loops.marked.add(v)
    return out


def _draw_schedule(
    rng: random.Random, case_stages: list[Stage], outputs: list[str], sizes: list[int]
) -> list[Directive]:
    directives: list[Directive] = []
    pure_loops: dict[str, list[str]] = {}
    root_like = set(outputs)
    levels: dict[str, str] = {}
    for s in reversed(case_stages):  # consumers first: their loop names are known when producers pick
        is_output = s.name in outputs
        if not is_output and s.kind != "boundary":
            has_update = bool(s.rvars)
            choices = ["root", "at", "at"] + ([] if has_update else ["inline", "inline"])
            if s.kind == "gather":
                choices = ["root", "at"]
            levels[s.name] = rng.choice(choices)
        elif s.kind == "boundary":
            levels[s.name] = rng.choice(["inline"] * 6 + ["root", "at"])
        else:
            levels[s.name] = "output"
        if levels[s.name] == "inline":
            continue
        loops = _Loops(["x", "y"], [], is_output)
        if s.kind != "boundary":  # a boundary condition's Func has loops of its own names
            directives += _draw_loop_directives(rng, s.name, 0, loops)
        pure_loops[s.name] = list(loops.dims)
        if s.rvars:
            uloops = _Loops(list(s.update_pure), list(s.rvars), is_output)
            directives += _draw_loop_directives(rng, s.name, 1, uloops)
        if levels[s.name] in ("root", "output"):
            root_like.add(s.name)
        if levels[s.name] == "root":
            directives.append(Directive(s.name, 0, "compute_root", []))
            if rng.random() < 0.15 and s.kind != "boundary":
                directives.append(Directive(s.name, 0, "reorder_storage", ["y", "x"]))
        elif levels[s.name] == "at":
            consumers = [c.name for c in case_stages if s.name in c.inputs and c.name in pure_loops]
            targets = sorted(set(consumers) & root_like) or sorted(set(outputs) & set(pure_loops))
            target = rng.choice(targets)
            loop_names = pure_loops[target]
            var = rng.choice(loop_names)
            directives.append(Directive(s.name, 0, "compute_at", [target, var]))
            outer = loop_names[loop_names.index(var) + 1 :]
            r = rng.random()
            if r < 0.2:
                directives.append(Directive(s.name, 0, "store_root", []))
            elif r < 0.35 and outer:
                directives.append(Directive(s.name, 0, "store_at", [target, rng.choice(outer)]))
        if is_output and rng.random() < 0.05:
            directives.append(Directive(s.name, 0, "bound", ["x", 0, sizes[0]]))
    return directives


def _draw_storage_directives(
    rng: random.Random, stages: list[Stage], outputs: list[str], drawn: list[Directive], sizes: list[int]
) -> list[Directive]:
    """Region and storage directives (bound_extent, align_bounds, align_storage, store_in)
    on Funcs that have storage. They come from a random stream of their own, so the rest of
    every case is what it was before they were added."""
    placed = {d.func for d in drawn if d.kind in ("compute_root", "compute_at")}
    extra: list[Directive] = []
    for s in stages:
        if s.name not in placed or s.name in outputs or s.kind == "boundary":
            continue
        if rng.random() < 0.06:
            extra.append(Directive(s.name, 0, "bound_extent", ["x", rng.randint(1, sizes[0] + 8)]))
        if rng.random() < 0.06:
            modulus = rng.choice([2, 4, 8])
            extra.append(Directive(s.name, 0, "align_bounds", ["x", modulus, rng.randrange(modulus)]))
        if rng.random() < 0.06:
            extra.append(Directive(s.name, 0, "align_storage", [rng.choice(["x", "y"]), rng.choice([4, 8, 16])]))
        if rng.random() < 0.08:
            extra.append(Directive(s.name, 0, "store_in", [rng.choice(["Heap", "Stack"])]))
    return extra


def _draw_fold_and_hoist(rng: random.Random, stages: list[Stage], outputs: list[str], drawn: list[Directive]):
    """fold_storage and hoist_storage on Funcs that have storage, from a random stream of
    their own (so every other directive of a case is what it was before they were added)."""
    placed = {d.func for d in drawn if d.kind in ("compute_root", "compute_at")}
    extra: list[Directive] = []
    for s in stages:
        if s.name in placed and s.name not in outputs and s.kind != "boundary":
            extra += _fold_and_hoist(rng, s.name, drawn)
    return extra


def _fold_and_hoist(rng: random.Random, name: str, drawn: list[Directive]) -> list[Directive]:
    """fold_storage (mostly of a Func stored outside the loop it is computed in, as a fold
    needs) and hoist_storage (to the root or to a loop of the Func it is computed at)."""
    extra: list[Directive] = []
    placement = next((d for d in drawn if d.func == name and d.kind == "compute_at"), None)
    stored_outside = any(d.func == name and d.kind in ("store_root", "store_at") for d in drawn)
    if rng.random() < (0.6 if stored_outside else 0.03):
        # mostly the dimension the loop it is computed in walks (the one a fold can be made over)
        walked = [v for v in ("x", "y") if placement is not None and v in placement.args[1]]
        dim = rng.choice(walked) if walked and rng.random() < 0.8 else rng.choice(["x", "y"])
        factor = rng.choice([1, 2, 3, 4, 5, 6, 8, 16, 32])
        extra.append(Directive(name, 0, "fold_storage", [dim, factor, rng.random() < 0.8]))
    if rng.random() < (0.25 if placement is not None else 0.05):
        if placement is None or rng.random() < 0.4:
            extra.append(Directive(name, 0, "hoist_storage_root", []))
        else:
            target = placement.args[0]
            loops = {"x", "y"} | {
                a for d in drawn if d.func == target and d.stage == 0 and d.kind in ("split", "tile", "fuse")
                for a in d.args if isinstance(a, str) and not a.isupper() and a not in ("x", "y")
            }  # fmt: skip
            extra.append(Directive(name, 0, "hoist_storage", [target, rng.choice(sorted(loops))]))
    return extra


# ------------------------------------------------- specialize, compute_with and memoize

ALIGNS = ("Auto", "AlignStart", "AlignEnd", "NoAlign")
CONDITION_OPS = ("==", "!=", "<", ">=")
SPECIALIZE_FAIL_PREFIX = "A schedule specialized with specialize_fail() was chosen: "


def _replayed_loops(
    drawn: list[Directive], func: str, stage: int, pure: list[str], rvars: list[str], is_output: bool
) -> _Loops:
    """The loops of one stage (not of a specialization) after the directives drawn for it,
    as _draw_loop_directives left them."""
    loops = _Loops(pure, rvars, is_output)
    for d in drawn:
        if d.func != func or d.stage != stage or d.condition is not None:
            continue
        if d.kind == "split":
            v, o, i = d.args[:3]
            k = loops.dims.index(v)
            loops.dims[k : k + 1] = [i, o]
            loops.constant.add(i)
        elif d.kind in ("tile", "gpu_tile"):  # the GPU fuzzer's gpu_tile has tile's arguments
            xo, yo, xi, yi = d.args[2:6]
            loops.constant |= {xi, yi}
            rest = [v for v in loops.dims if v not in ("x", "y")]
            outer_rvars = [v for v in rest if v in loops.rvars]
            loops.dims = [*outer_rvars, xi, yi, xo, yo, *[v for v in rest if v not in loops.rvars]]
        elif d.kind == "fuse":
            k = loops.dims.index(d.args[0])
            loops.dims[k : k + 2] = [d.args[2]]
        elif d.kind == "reorder":
            loops.dims = list(d.args)
        elif d.kind in ("vectorize", "unroll", "parallel"):
            loops.marked.add(d.args[0])
    return loops


def loop_names(directives: list[Directive], func: str, stage: int, pure: list[str], rvars: list[str]) -> list[str]:
    """The loop names of one stage of func, innermost first, after the directives drawn for
    it: what a directive added later may name."""
    return list(_replayed_loops(directives, func, stage, pure, rvars, False).dims)


def _stage_loops(stage: Stage, index: int, outputs: list[str], drawn: list[Directive]) -> _Loops:
    pure, rvars = (["x", "y"], []) if index == 0 else (list(stage.update_pure), list(stage.rvars))
    return _replayed_loops(drawn, stage.name, index, pure, rvars, stage.name in outputs)


def _computed(stages: list[Stage], outputs: list[str], drawn: list[Directive]) -> list[Stage]:
    """The Funcs with loops of their own: outputs and Funcs computed at the root or at a loop."""
    placed = set(outputs) | {d.func for d in drawn if d.kind in ("compute_root", "compute_at")}
    return [s for s in stages if s.name in placed and s.kind != "boundary"]


def condition_source(condition: list[Any]) -> str:
    """A specialization condition as the schedule function writes it: P['b'] or P['p'] < 3."""
    name, op, value = condition
    return f"P[{name!r}]" if op == "" else f"P[{name!r}] {op} {value!r}"


def condition_holds(condition: list[Any], params: dict[str, Any]) -> bool:
    name, op, value = condition
    v = params[name]
    if op == "":
        return bool(v)
    return {"==": v == value, "!=": v != value, "<": v < value, ">=": v >= value}[op]


def _satisfy(condition: list[Any], params: dict[str, Any]) -> None:
    """Set the Param of `condition` to a value that makes it hold."""
    name, op, value = condition
    params[name] = True if op == "" else {"==": value, "!=": value + 1, "<": value - 1, ">=": value}[op]


def _draw_specializations(
    rng: random.Random, stages: list[Stage], outputs: list[str], drawn: list[Directive]
) -> tuple[list[Directive], dict[str, Any]]:
    """specialize() of stages with loops on a bool Param `b` or a comparison of an int Param
    `p`, each specialization with loop directives of its own, sometimes ended by
    specialize_fail(); from a random stream of their own. Returns the directives and the
    values of the Params they read."""
    params: dict[str, Any] = {"b": rng.random() < 0.5, "p": rng.randint(0, 5)}
    fused = {d.func for d in drawn if d.kind == "compute_with"} | {
        d.args[0] for d in drawn if d.kind == "compute_with"
    }  # compute_with does not fuse specialized stages: leave them to that stream
    extra: list[Directive] = []
    for s in _computed(stages, outputs, drawn):
        if s.name in fused:
            continue
        for index in [0, 1] if s.rvars else [0]:
            if rng.random() < 0.2:
                extra += _specialize_stage(rng, s, index, outputs, drawn, params)
    used = {d.condition[0] for d in extra if d.condition is not None}
    return extra, {name: v for name, v in params.items() if name in used}


def _specialize_stage(
    rng: random.Random, s: Stage, index: int, outputs: list[str], drawn: list[Directive], params: dict[str, Any]
) -> list[Directive]:
    # loops other Funcs are computed or stored at must stay in every specialization
    fixed = frozenset(
        d.args[1] for d in drawn if d.kind in ("compute_at", "store_at", "hoist_storage") and d.args[0] == s.name
    )
    out: list[Directive] = []
    conditions: list[list[Any]] = []
    for _ in range(1 if rng.random() < 0.7 else 2):
        if rng.random() < 0.4:
            condition: list[Any] = ["b", "", None]
        else:
            condition = ["p", rng.choice(CONDITION_OPS), rng.randint(1, 5)]
        if condition in conditions:
            continue
        conditions.append(condition)
        loops = _stage_loops(s, index, outputs, drawn)
        inner = _draw_loop_directives(rng, s.name, index, loops, fixed)
        if not inner:  # a specialization with the stage's own schedule still runs its own loop nest
            inner = _draw_loop_directives(rng, s.name, index, loops, fixed)
        out.append(Directive(s.name, index, "specialize", [], condition))
        out += [Directive(d.func, d.stage, d.kind, d.args, condition) for d in inner]
    if rng.random() < 0.3:
        out.append(Directive(s.name, index, "specialize_fail", [f"no specialization of {s.name} holds"]))
        if not any(condition_holds(c, params) for c in conditions) and rng.random() < 0.6:
            _satisfy(rng.choice(conditions), params)
    return out


def _draw_compute_with(
    rng: random.Random, vt: str, stages: list[Stage], outputs: list[str], drawn: list[Directive]
) -> tuple[Stage, list[Directive]] | None:
    """compute_with between a Func computed at the root (an output or a compute_root Func)
    and a new output that reads the same input (the Funcs of a case form a chain, so no two
    of them are independent, as fusing needs), from a random stream of its own. Returns the
    new stage and its directives (its loops, often shaped as the other's, and the fusion)."""
    roots = {d.func for d in drawn if d.kind == "compute_root"} | set(outputs)
    candidates = [s for s in _computed(stages, outputs, drawn) if s.name in roots]
    if not candidates or rng.random() >= 0.3:
        return None
    a = rng.choice(candidates)
    kind = rng.choice(["stencil", "stencil", "point", "down"])
    lines, _, _ = _stage_lines(rng, kind, vt)
    source = next(s for s in stages if s.name == a.inputs[0])
    while not _readable_anywhere(source, stages, outputs, drawn):
        if not source.inputs:
            return None
        source = next(s for s in stages if s.name == source.inputs[0])
    exact = source.exact and not (kind == "point" and vt == "f32")
    b = Stage(a.name + FUSION_PARTNER_SUFFIX, kind, [source.name], lines, exact=exact)
    reshaping = ("split", "tile", "fuse", "reorder", "vectorize", "unroll", "parallel")
    copied = [  # b's loops shaped as a's, so that the fused loops match
        Directive(b.name, 0, d.kind, list(d.args))
        for d in drawn
        if d.func == a.name and d.stage == 0 and d.condition is None and d.kind in reshaping
    ]
    out = copied if rng.random() < 0.6 else _draw_loop_directives(rng, b.name, 0, _Loops(["x", "y"], [], True))
    a_index = 1 if a.rvars and rng.random() < 0.3 else 0
    common = _fusable_loops(a, a_index, outputs, drawn, b, out)
    if not common and rng.random() < 0.8:
        out = copied
        common = _fusable_loops(a, a_index, outputs, drawn, b, out)
    b_dims = _replayed_loops(out, b.name, 0, ["x", "y"], [], True).dims
    var = rng.choice(common) if common and rng.random() < 0.9 else rng.choice(b_dims)
    align = rng.choice(ALIGNS)
    if rng.random() < 0.6:
        out.append(Directive(b.name, 0, "compute_with", [a.name, a_index, var, align]))
    else:
        out.append(Directive(a.name, a_index, "compute_with", [b.name, 0, var, align]))
    return b, out


def _draw_fused_in_strips(
    rng: random.Random, vt: str, stages: list[Stage], outputs: list[str], drawn: list[Directive]
) -> tuple[list[Stage], list[Directive]] | None:
    """Halide's Harris schedule in small, from a random stream of its own: two new Funcs
    reading one stage, computed per row of a new output's strips of rows and fused there
    (compute_with at y or x), each stored per row, per strip (store_at) or, when the strips
    are serial, at the root, so that each slides down its strip. Returns the three new
    stages (the output last; their names end in FUSION_PARTNER_SUFFIX) and their directives."""
    readable = [s for s in stages if _readable_anywhere(s, stages, outputs, drawn)]
    if not readable or rng.random() >= 0.12:
        return None
    source = rng.choice(readable)
    first, second, out = (f"{source.name}{part}{FUSION_PARTNER_SUFFIX}" for part in ("p", "q", "o"))
    made = []
    for name in (first, second):
        lines, _, _ = _stage_lines(rng, "stencil", vt)
        made.append(Stage(name, "stencil", [source.name], lines, exact=source.exact))
    rows = [rng.randint(-2, 2) for _ in range(3)]
    line = f"{{self}}[x, y] = {{0}}[x, y + {rows[0]}] / 2 + {{0}}[x, y + {rows[1]}] / 4 + {{1}}[x, y + {rows[2]}] / 4"
    made.append(Stage(out, "combine", [first, second], [line], exact=source.exact))
    directives = [Directive(out, 0, "split", ["y", "yo", "yi", rng.randint(1, 8), "GUARD_WITH_IF"])]
    parallel = rng.random() < 0.5
    if parallel:
        directives.append(Directive(out, 0, "parallel", ["yo"]))
    if rng.random() < 0.5:
        directives.append(Directive(out, 0, "vectorize", ["x", rng.choice([4, 8])]))
    width = rng.choice([None, 4, 8])
    for name in (first, second):
        directives.append(Directive(name, 0, "compute_at", [out, "yi"]))
        store = rng.choice(["row", "strip"] if parallel else ["row", "strip", "root"])
        if store == "strip":
            directives.append(Directive(name, 0, "store_at", [out, "yo"]))
        elif store == "root":
            directives.append(Directive(name, 0, "store_root", []))
        if width is not None:
            directives.append(Directive(name, 0, "vectorize", ["x", width]))
    child, parent = (first, second) if rng.random() < 0.5 else (second, first)
    directives.append(Directive(child, 0, "compute_with", [parent, 0, rng.choice(["x", "y"]), rng.choice(ALIGNS)]))
    return made, directives


def _fusable_loops(
    a: Stage, a_index: int, outputs: list[str], drawn: list[Directive], b: Stage, b_drawn: list[Directive]
) -> list[str]:
    """The loops of b (an output) at which it can be fused with stage a_index of a: both
    have it, with the same loops outside it, marked alike (vectorized ones too: a fused
    vector loop runs both bodies)."""
    a_dims = _stage_loops(a, a_index, outputs, drawn).dims
    b_dims = _replayed_loops(b_drawn, b.name, 0, ["x", "y"], [], True).dims
    a_marks, b_marks = _marks(drawn, a.name, a_index), _marks(b_drawn, b.name, 0)
    return [
        v
        for v in b_dims
        if v in a_dims
        and a_dims[a_dims.index(v) :] == b_dims[b_dims.index(v) :]
        and all(a_marks.get(w) == b_marks.get(w) for w in b_dims[b_dims.index(v) :])
    ]


def _marks(drawn: list[Directive], func: str, stage: int) -> dict[str, str]:
    """The loops of a stage marked vectorize, unroll or parallel, by name (not those of a
    specialization)."""
    marks = ("vectorize", "unroll", "parallel")
    return {
        d.args[0]: d.kind
        for d in drawn
        if d.func == func and d.stage == stage and d.condition is None and d.kind in marks
    }


def _readable_anywhere(stage: Stage, stages: list[Stage], outputs: list[str], drawn: list[Directive]) -> bool:
    """Whether a new Func may read `stage` without making a compute_at of the case illegal:
    neither it nor an inlined Func it reads through is computed at a loop of its consumer."""
    if any(d.func == stage.name and d.kind == "compute_at" for d in drawn):
        return False
    if stage.name in outputs or any(d.func == stage.name and d.kind == "compute_root" for d in drawn):
        return True
    return all(_readable_anywhere(next(s for s in stages if s.name == i), stages, outputs, drawn) for i in stage.inputs)


def _draw_memoize(rng: random.Random, stages: list[Stage], outputs: list[str], drawn: list[Directive]):
    """memoize() of Funcs computed at the root (sometimes at a loop), from a random stream
    of its own; a case with a memoized Func is realized more than once."""
    fused = {d.func for d in drawn if d.kind == "compute_with"} | {
        d.args[0] for d in drawn if d.kind == "compute_with"
    }  # compute_with does not fuse memoized Funcs: leave them to that stream
    extra: list[Directive] = []
    for s in _computed(stages, outputs, drawn):
        if s.name in outputs or s.name in fused:
            continue
        kinds = {d.kind for d in drawn if d.func == s.name}
        at_root = "compute_root" in kinds and rng.random() < 0.35
        if at_root or ("compute_at" in kinds and not kinds & {"store_root", "store_at"} and rng.random() < 0.05):
            extra.append(Directive(s.name, 0, "memoize", []))
    return extra


NEWER_DIRECTIVES = ("specialize", "specialize_fail", "compute_with", "memoize")
FUSION_PARTNER_SUFFIX = "w"  # ends the names of the Funcs compute_with's draws add (_draw_compute_with: partner + "w")


def without_newer_directives(case: Case, keep: tuple[str, ...] = ()) -> Case:
    """The case as drawn before specialize, compute_with and memoize were: without their
    directives, Params and the output added for compute_with (the GPU variant, for one,
    maps the CPU schedule of that case). The directives named in `keep` stay (with the
    output added for compute_with, when it is kept)."""
    added = set() if "compute_with" in keep else {s.name for s in case.stages if s.name.endswith(FUSION_PARTNER_SUFFIX)}
    return Case(
        **{
            **case.__dict__,
            "stages": [s for s in case.stages if s.name not in added],
            "outputs": [o for o in case.outputs if o not in added],
            "directives": [
                d
                for d in case.directives
                if (d.kind in keep or d.kind not in NEWER_DIRECTIVES) and d.condition is None and d.func not in added
            ],
            "params": {},
        }
    )


def expected_failures(case: Case) -> list[str]:
    """The RuntimeFailure messages of the stages whose specialize_fail() is reached (none of
    their specializations holds for the case's Param values). The run fails with one of
    them: which comes first depends on the loop nest (a stage computed inside another
    stage's loops is reached after that stage's own choice)."""
    messages = []
    for fail in case.directives:
        if fail.kind != "specialize_fail":
            continue
        conditions = [
            d.condition for d in case.directives if (d.func, d.stage) == (fail.func, fail.stage) and d.condition
        ]
        if not any(condition_holds(c, case.params) for c in conditions):
            messages.append(SPECIALIZE_FAIL_PREFIX + fail.args[0])
    return messages


def realizations(case: Case) -> list[dict[str, Any]]:
    """The inputs changed for each realization of a case: one, or for a memoized Func the
    same inputs twice (the second from the cache), then a changed `k` where it is read."""
    if not any(d.kind == "memoize" for d in case.directives):
        return [{}]
    if not uses_param(case):
        return [{}, {}]
    if case.value_type == "u16":
        other: float = int(case.param_value) % 5 + 1
    else:
        other = round(case.param_value * 0.5 + 0.3, 3)
    return [{}, {}, {"k": other}]


def draw_case(seed: int, checked: bool = True) -> Case:
    """The case numbered `seed` (the same seed always gives the same case)."""
    rng = random.Random(seed)
    vt = rng.choice(["u16", "u16", "f32"])
    stages = _draw_algorithm(rng, vt)
    outputs = [stages[-1].name]
    if len(stages) > 2 and rng.random() < 0.25:
        outputs.append(rng.choice([s.name for s in stages[1:-1]]))
    if rng.random() < 0.15:
        sizes = [rng.randint(1, 4), rng.randint(1, 4)]
    else:
        sizes = [rng.randint(5, 48), rng.randint(4, 24)]
    input_shape = [rng.randint(1, 40), rng.randint(1, 60)]
    param_value = rng.randint(1, 5) if vt == "u16" else round(rng.uniform(0.25, 2.0), 3)
    directives = _draw_schedule(rng, stages, outputs, sizes)
    directives += _draw_storage_directives(random.Random(seed * 7919 + 17), stages, outputs, directives, sizes)
    directives += _draw_fold_and_hoist(random.Random(seed * 104729 + 31), stages, outputs, directives)
    # the newer directives, each from a stream of its own (the rest of the case stays as it was)
    fusion = _draw_compute_with(random.Random(seed * 15485863 + 7), vt, stages, outputs, directives)
    if fusion is not None:
        stages = [*stages, fusion[0]]
        outputs = [*outputs, fusion[0].name]
        directives += fusion[1]
    strips = _draw_fused_in_strips(random.Random(seed * 86028121 + 19), vt, stages, outputs, directives)
    if strips is not None:
        stages = [*stages, *strips[0]]
        outputs = [*outputs, strips[0][-1].name]
        directives += strips[1]
    special, params = _draw_specializations(random.Random(seed * 32452843 + 11), stages, outputs, directives)
    directives += special
    directives += _draw_memoize(random.Random(seed * 49979687 + 13), stages, outputs, directives)
    return Case(
        seed=seed,
        value_type=vt,
        boundary=rng.choice(BOUNDARIES),
        input_shape=input_shape,
        param_value=param_value,
        stages=stages,
        outputs=outputs,
        directives=directives,
        sizes=sizes,
        checked=checked,
        params=params,
    )


# ---------------------------------------------------------------------------- rendering


def _token(func: str, v: Any) -> str:
    if isinstance(v, str) and v.startswith("r."):
        return f"R[{func!r}].{v[2:]}"
    return repr(v)


def directive_source(d: Directive) -> str:
    """One line of the schedule function, e.g. `F['s1'].split('x', 'xo', 'xi', 4, tail=...)`."""
    handle = f"F[{d.func!r}]" + (f".update({d.stage - 1})" if d.stage else "")
    if d.condition is not None:
        handle += f".specialize({condition_source(d.condition)})"
        if d.kind == "specialize":
            return handle
    args = [_token(d.func, a) for a in d.args]
    if d.kind == "compute_with":
        parent, stage, var, align = d.args
        target = f"F[{parent!r}]" + (f".update({stage - 1})" if stage else "")
        return f"{handle}.compute_with({target}, {_token(parent, var)}, pw.LoopAlignStrategy.{align})"
    if d.kind in ("split", "tile", "gpu_tile"):
        tail = d.args[-1]
        body = ", ".join(args[:-1]) + f", tail=pw.TailStrategy.{tail}"
    elif d.kind in ("compute_at", "store_at", "hoist_storage"):
        body = f"F[{d.args[0]!r}], {args[1]}"
    elif d.kind == "store_in":
        body = f"pw.MemoryType.{d.args[0]}"
    else:
        body = ", ".join(args)
    return f"{handle}.{d.kind}({body})"


def algorithm_source(case: Case) -> str:
    vt = case.value_type
    lines = [
        "def algorithm(m):",
        '    """The pipeline, written once for pixelweave (m = pw) and halide (m = hl)."""',
        '    x, y = m.Var("x"), m.Var("y")',
        f'    image = m.ImageParam({"m.UInt(16)" if vt == "u16" else "m.Float(32)"}, 2, "image")',
        f'    k = m.Param({"m.UInt(16)" if vt == "u16" else "m.Float(32)"}, "k", {case.param_value!r})',
        "    F, R = {}, {}",
    ]
    for s in case.stages:
        if s.kind == "boundary":
            extra = ", 7" if case.boundary == "constant_exterior" and vt == "u16" else ""
            extra = ", 0.5" if case.boundary == "constant_exterior" and vt == "f32" else extra
            lines.append(f"    F[{s.name!r}] = {s.name} = m.BoundaryConditions.{case.boundary}(image{extra})")
            continue
        lines.append(f"    F[{s.name!r}] = {s.name} = m.Func({s.name!r})")
        for line in s.lines:
            lines.append("    " + line.format(*s.inputs, self=s.name).replace(f"R['{s.name}']", f"R[{s.name!r}]"))
    for name, value in case.params.items():  # Params that only specializations read
        kind = "m.Bool()" if isinstance(value, bool) else "m.Int(32)"
        lines.append(f"    {name} = m.Param({kind}, {name!r}, {value!r})")
    outs = ", ".join(case.outputs)
    handles = "".join(f", {name!r}: {name}" for name in case.params)
    lines.append(f"    return [{outs}], F, R, {{'image': image, 'k': k{handles}}}")
    return "\n".join(lines)


def schedule_source(case: Case) -> str:
    lines = ["def schedule(F, R, P):", '    """The schedule under test (pixelweave only)."""']
    lines += ["    " + directive_source(d) for d in case.directives] or ["    pass"]
    return "\n".join(lines)


def inputs_source(case: Case) -> str:
    h, w = case.input_shape
    if case.value_type == "u16":
        make = f"rng.integers(0, 1000, ({h}, {w})).astype(np.uint16)"
    else:
        make = f"rng.uniform(-1.0, 1.0, ({h}, {w})).astype(np.float32)"
    k = f", 'k': {case.param_value!r}" if uses_param(case) else ""
    k += "".join(f", {name!r}: {case.params[name]!r}" for name in params_in_use(case))
    return "\n".join(
        [
            "def make_inputs():",
            f"    rng = np.random.default_rng({case.seed % 2**32})",
            f"    return {{'image': {make}{k}}}",
        ]
    )


def uses_param(case: Case) -> bool:
    """Whether a stage reads the Param k (a pipeline refuses values for inputs it lacks)."""
    return any(re.search(r"\bk\b", line) for s in case.stages for line in s.lines)


def params_in_use(case: Case) -> list[str]:
    """The Params of case.params that a directive still reads (the shrinker drops some)."""
    used = {d.condition[0] for d in case.directives if d.condition is not None}
    return [name for name in case.params if name in used]


SCRIPT_FOOTER = '''
def main():
    outputs, funcs, rdoms, params = algorithm(pw)
    schedule(funcs, rdoms, params)
    pipeline = pw.Pipeline(outputs)
    inputs = make_inputs()
    compiled = pipeline.compile(TARGET, level="fast", checked=CHECKED)
    if EXPECTED_FAILURES:
        try:
            compiled(SIZES, inputs)
        except pw.RuntimeFailure as err:
            assert any(message in str(err) for message in EXPECTED_FAILURES), err
            print("failed as specialize_fail() says")
            return
        raise AssertionError("no specialization holds, yet the pipeline ran past specialize_fail()")
    for changed in REALIZATIONS:  # a memoized Func: again from the cache, then with a changed Param
        ours = compiled(SIZES, {**inputs, **changed})
        reference = pipeline.realize_reference(SIZES, {**inputs, **changed})
        ours = ours if isinstance(ours, list) else [ours]
        reference = reference if isinstance(reference, list) else [reference]
        for name, a, b in zip([f.name() for f in outputs], ours, reference):
            if a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=name)
            else:
                np.testing.assert_array_equal(a, b, err_msg=name)
    print("compiled output equals the reference")
    if HALIDE:
        reference = pipeline.realize_reference(SIZES, inputs)
        reference = reference if isinstance(reference, list) else [reference]
        compare_reference_with_halide(outputs, reference, inputs)


def compare_reference_with_halide(outputs, reference, inputs):
    """The same algorithm in Halide (no schedule) must give the reference's values."""
    import halide as hl

    h_outputs, _, _, handles = algorithm(hl)
    handles["image"].set(hl.Buffer(np.ascontiguousarray(inputs["image"])))
    for name, value in inputs.items():
        if name != "image":
            handles[name].set(value)
    result = hl.Pipeline(h_outputs).realize(SIZES)
    buffers = [result] if len(h_outputs) == 1 else [result[i] for i in range(len(h_outputs))]
    for f, buffer, ref in zip(outputs, buffers, reference):
        mins = [-buffer.dim(d).min() for d in reversed(range(buffer.dimensions()))]
        window = tuple(slice(m, m + n) for m, n in zip(mins, ref.shape))
        theirs = np.asarray(buffer)[window]
        np.testing.assert_allclose(ref, theirs, rtol=1e-4, atol=1e-4, err_msg=f"reference vs halide: {f.name()}")
    print("reference equals halide")


if __name__ == "__main__":
    main()
'''

RTOL = 1e-5
ATOL = 1e-5


def render_script(case: Case, title: str = "", with_halide: bool = False) -> str:
    """A standalone script: runs the case and fails (exception) if it goes wrong; with_halide
    also compares the reference with Halide."""
    head = [
        f'"""Pixelweave schedule fuzzer case (seed {case.seed}). {title}'.rstrip(),
        "",
        "Run it with `python THIS_FILE.py`: it compiles the schedule, runs it and compares the",
        'output with the reference evaluator."""',
        "",
        "import numpy as np",
        "",
        "import pixelweave as pw",
        "",
        f"SIZES = {case.sizes!r}",
        f"CHECKED = {case.checked!r}",
        f"TARGET = {case.target!r}",
        f"HALIDE = {with_halide!r}",
        f"RTOL, ATOL = {RTOL!r}, {ATOL!r}",
        f"EXPECTED_FAILURES = {expected_failures(case)!r}",
        f"REALIZATIONS = {realizations(case)!r}",
        "",
        "",
    ]
    body = [algorithm_source(case), "", "", schedule_source(case), "", "", inputs_source(case), "", ""]
    return "\n".join(head + body) + SCRIPT_FOOTER.lstrip("\n")
