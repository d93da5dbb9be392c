"""Random cases for the schedule fuzzer: a pipeline, a schedule, sizes and inputs.

A `Case` is plain data (JSON-friendly), so a worker process can receive it and the shrinker
can edit it; `render_script` turns it into a standalone Python script that builds the
pipeline with `pixelweave` (or, for the algorithm alone, `halide`), applies the schedule,
runs it and compares it with the reference evaluator. That script is the reproducer.

Every Func is two-dimensional over (x, y), and all Funcs of a case share one value type
(uint16 or float32) apart from explicit casts that convert back, so any stage can read any
earlier one. Stage kinds: stencils, resampling (down and up), point operations with casts
or math functions, selects against a Param, gathers, reductions over an RDom and scans.
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


def _draw_loop_directives(rng: random.Random, func: str, stage: int, loops: _Loops) -> list[Directive]:
    """Directives reshaping the loops (split, tile, fuse, reorder), then mostly marks on the
    resulting loops (vectorize, unroll, parallel), as people write schedules."""
    out: list[Directive] = []
    count = rng.choice([0, 1, 1, 2, 2, 3, 4])
    reshapes = sorted(rng.random() < 0.55 for _ in range(count))[::-1]
    for reshaping in reshapes:
        choice = rng.choice(RESHAPING if reshaping or rng.random() < 0.1 else MARKS)
        pure = loops.pure()
        if choice == "split" and pure:
            v = rng.choice(pure)
            o, i = loops.fresh(v, "o"), loops.fresh(v, "i")
            out.append(Directive(func, stage, "split", [v, o, i, rng.choice([2, 3, 4, 5, 8, 16]), _tail(rng, loops)]))
            k = loops.dims.index(v)
            loops.dims[k : k + 1] = [i, o]
            loops.constant.add(i)
        elif choice == "tile" and "x" in loops.dims and "y" in loops.dims:
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
                if a not in loops.rvars and b not in loops.rvars
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
    )


# ---------------------------------------------------------------------------- rendering


def _token(func: str, v: Any) -> str:
    if isinstance(v, str) and v.startswith("r."):
        return f"R[{func!r}].{v[2:]}"
    return repr(v)


def directive_source(d: Directive) -> str:
    """One line of the schedule function, e.g. `F['s1'].split('x', 'xo', 'xi', 4, tail=...)`."""
    handle = f"F[{d.func!r}]" + (f".update({d.stage - 1})" if d.stage else "")
    args = [_token(d.func, a) for a in d.args]
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
    outs = ", ".join(case.outputs)
    lines.append(f"    return [{outs}], F, R, {{'image': image, 'k': k}}")
    return "\n".join(lines)


def schedule_source(case: Case) -> str:
    lines = ["def schedule(F, R):", '    """The schedule under test (pixelweave only)."""']
    lines += ["    " + directive_source(d) for d in case.directives] or ["    pass"]
    return "\n".join(lines)


def inputs_source(case: Case) -> str:
    h, w = case.input_shape
    if case.value_type == "u16":
        make = f"rng.integers(0, 1000, ({h}, {w})).astype(np.uint16)"
    else:
        make = f"rng.uniform(-1.0, 1.0, ({h}, {w})).astype(np.float32)"
    k = f", 'k': {case.param_value!r}" if uses_param(case) else ""
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


SCRIPT_FOOTER = '''
def main():
    outputs, funcs, rdoms, _ = algorithm(pw)
    schedule(funcs, rdoms)
    pipeline = pw.Pipeline(outputs)
    inputs = make_inputs()
    ours = pipeline.compile(level="fast", checked=CHECKED)(SIZES, inputs)
    reference = pipeline.realize_reference(SIZES, inputs)
    ours = ours if isinstance(ours, list) else [ours]
    reference = reference if isinstance(reference, list) else [reference]
    for name, a, b in zip([f.name() for f in outputs], ours, reference):
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    print("compiled output equals the reference")
    if HALIDE:
        compare_reference_with_halide(outputs, reference, inputs)


def compare_reference_with_halide(outputs, reference, inputs):
    """The same algorithm in Halide (no schedule) must give the reference's values."""
    import halide as hl

    h_outputs, _, _, handles = algorithm(hl)
    handles["image"].set(hl.Buffer(np.ascontiguousarray(inputs["image"])))
    if "k" in inputs:
        handles["k"].set(inputs["k"])
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
        f"HALIDE = {with_halide!r}",
        f"RTOL, ATOL = {RTOL!r}, {ATOL!r}",
        "",
        "",
    ]
    body = [algorithm_source(case), "", "", schedule_source(case), "", "", inputs_source(case), "", ""]
    return "\n".join(head + body) + SCRIPT_FOOTER.lstrip("\n")
