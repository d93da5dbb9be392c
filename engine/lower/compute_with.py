"""compute_with(): check each fused pair of stages as Halide does, gather the Funcs whose
loops are fused into groups, order the stages of each group, and put the members of a
group next to each other in the realization order (they are computed as one block).

A stage fused with another (its parent) runs inside the parent's loops from the outermost
down to the fused variable; what may be fused is what Halide allows (ScheduleFunctions.cpp,
RealizationOrder.cpp): two different Funcs, computed at the same level, neither calling the
other, whose fused loops match in name, kind and order. Pixelweave also refuses what it
does not lower, or what would read points not computed yet: a parent that is itself fused
into another stage, vectorized fused loops on target opencl, members of one group that
read each other, and two stages of one Func fused with the same stage along loops where
they do not stay on one point. On the CPU a fused vectorized loop is one vector loop
running both bodies, as in Halide. Each member may be stored outside the group's compute
level (store_at, store_root; schedule_functions.py places its storage there), and then
slides along the loops between like any Func (sliding_window.py).

On target opencl, fused loops may be GPU block and thread loops, as in Halide (its
compute_with test fuses two `gpu_tile`d outputs at the block loop): the kinds must match
loop by loop, like any fused loops; both stages then run in one kernel, each under its
own guard, separated by a work-group barrier, and the members of a group never read each
other, so no stage waits on another work-group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.pipeline import definition_exprs
from pixelweave.engine.schedule import FuseLevel, LoopAlignStrategy, LoopLevel
from pixelweave.engine.stmt import ForType


@dataclass
class FusedChild:
    """A stage computed with a parent stage: its `depth` outermost loops are the parent's."""

    info: FuncInfo
    stage: int
    depth: int
    align: dict[str, LoopAlignStrategy]  # by the child's dimension name


@dataclass
class FusedGroup:
    """Funcs whose loops are fused: computed together, in `order` (children right where
    their parent's loops run them)."""

    members: list[FuncInfo]
    order: list[tuple[FuncInfo, int]] = field(default_factory=list)
    children: dict[tuple[str, int], list[FusedChild]] = field(default_factory=dict)  # by (parent, stage)
    fused: set[tuple[str, int]] = field(default_factory=set)  # the child stages

    def names(self) -> list[str]:
        return [m.name for m in self.members]


def var_name_match(a: str, b: str) -> bool:
    """Halide's match of loop names: equal, or one is the other's last parts (y.yo and yo)."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def stage_name(info: FuncInfo, k: int) -> str:
    return f"{info.func.name()}.s{k}"


def fuse_groups(ctx: LoweringContext) -> None:
    """Check every compute_with, and record the fused groups in ctx.fused_groups."""
    pairs: list[tuple[FuncInfo, int, FuncInfo, FuseLevel]] = []
    for info in ctx.funcs:
        for k, stage in enumerate(info.stages):
            level = getattr(stage.schedule, "fuse_level", None)
            if level is not None:
                pairs.append((info, k, _parent_info(ctx, info, level), level))
    if not pairs:
        return
    callees = _transitive_callees(ctx)
    children: set[tuple[str, int]] = {(c.name, k) for c, k, _, _ in pairs}
    for info in ctx.funcs:
        _check_stage_order(info)
        _check_stages_sharing_a_parent(info)
    for child, k, parent, level in pairs:
        _check_pair(ctx, child, k, parent, level, callees, children)
    groups = _group(ctx, pairs)
    for group in groups:
        _check_no_dependence_in_group(group, callees)
        _order_stages(group, pairs)
    ctx.fused_groups = groups
    ctx.funcs = _realization_order(ctx, groups)


def _parent_info(ctx: LoweringContext, info: FuncInfo, level: FuseLevel) -> FuncInfo:
    try:
        parent = ctx.info(level.func)
    except KeyError:
        raise ScheduleError(
            f'Illegal compute_with: "{info.func.name()}" is scheduled to be computed with '
            f'"{level.func.name()}", which is not part of this pipeline (not used anywhere)'
        ) from None
    if not 0 <= level.stage < len(parent.stages):
        raise ScheduleError(
            f"Illegal compute_with: `{info.func.name()}` is computed with {level.func.name()}.s{level.stage}, "
            f"but `{level.func.name()}` has {len(parent.stages)} stage(s)"
        )
    return parent


def _direct_callees(ctx: LoweringContext) -> dict[str, set[str]]:
    """The Funcs of the pipeline each Func calls (by their names in ctx)."""
    names = {id(info.func): info.name for info in ctx.funcs}
    direct: dict[str, set[str]] = {}
    for info in ctx.funcs:
        direct[info.name] = {
            names[id(node.target)]
            for stage in info.stages
            for e in definition_exprs(stage.definition)
            for node in walk(e)
            if isinstance(node, E.Call) and node.call_kind == "func" and node.target is not info.func
            and id(node.target) in names
        }  # fmt: skip
    return direct


def _transitive_callees(ctx: LoweringContext) -> dict[str, set[str]]:
    direct = _direct_callees(ctx)
    closure: dict[str, set[str]] = {}

    def reach(name: str) -> set[str]:
        if name not in closure:
            closure[name] = set()
            out: set[str] = set()
            for callee in direct.get(name, ()):
                out |= {callee} | reach(callee)
            closure[name] = out
        return closure[name]

    for name in direct:
        reach(name)
    return closure


def _same_level(a: LoopLevel, b: LoopLevel) -> bool:
    return a.kind == b.kind and (a.kind != "at" or (a.func is b.func and a.var == b.var))


def _fused_index(info: FuncInfo, k: int, var: str) -> int | None:
    for i, d in enumerate(info.stages[k].schedule.dims):  # innermost first, as Halide's search
        if var_name_match(d.name, var):
            return i
    return None


def _check_pair(
    ctx: LoweringContext,
    child: FuncInfo,
    k: int,
    parent: FuncInfo,
    level: FuseLevel,
    callees: dict[str, set[str]],
    children: set[tuple[str, int]],
) -> None:
    c_name, p_name = stage_name(child, k), stage_name(parent, level.stage)
    # the Funcs in backquotes, so that a refusal names them as every refusal does
    funcs = f"`{child.func.name()}`, `{parent.func.name()}`"
    what = f"compute_with of {c_name} with {p_name} at {level.var} (Funcs {funcs})"
    if (parent.name, level.stage) in children:
        grand = parent.stages[level.stage].schedule.fuse_level
        if grand is not None and grand.func is child.func:
            raise ScheduleError(
                f"Found cyclic dependencies between compute_with of {parent.func.name()} and {child.func.name()}: "
                f"each is computed with the other; keep one of the two compute_with()"
            )
        raise ScheduleError(
            f"Invalid {what}: {p_name} is itself computed with {grand.func.name()}.s{grand.stage}; Pixelweave does "
            f"not fuse a chain of compute_with, so compute {c_name} with {grand.func.name()}.s{grand.stage} instead"
        )
    for info, s in ((child, k), (parent, level.stage)):
        if info.is_inlined():
            raise ScheduleError(
                f"Invalid {what}: {stage_name(info, s)} is scheduled inline; give it compute_root() or compute_at()"
            )
        if info.stages[s].schedule.specializations:
            raise ScheduleError(
                f"Invalid {what}: {stage_name(info, s)} has specializations (specialize()); Pixelweave does not "
                "fuse a specialized stage's loops with another stage's: remove the specialize() or the compute_with()"
            )
        if info.schedule.memoized:
            raise ScheduleError(
                f"Invalid {what}: `{info.func.name()}` is memoized; a cache hit would skip the stages fused with it, "
                "so Pixelweave does not fuse a memoized Func's loops: remove the memoize() or the compute_with()"
            )
    c_level, p_level = child.compute_level(), parent.compute_level()
    if not _same_level(c_level, p_level):
        raise ScheduleError(
            f"Invalid {what}: the compute levels of {p_name} (computed at {p_level}) and {c_name} (computed at "
            f"{c_level}) do not match; compute both at the root or at the same loop"
        )
    if child.name in callees.get(parent.name, set()) or parent.name in callees.get(child.name, set()):
        raise ScheduleError(
            f"Invalid compute_with: there is dependency between {parent.func.name()} and {child.func.name()} (one "
            f"calls the other, directly or through other Funcs), so their loops cannot be fused; compute_with fuses "
            f"only Funcs that do not read each other: remove the compute_with of `{child.func.name()}`"
        )
    c_dims, p_dims = child.stages[k].schedule.dims, parent.stages[level.stage].schedule.dims
    c_at, p_at = _fused_index(child, k, level.var), _fused_index(parent, level.stage, level.var)
    for at, name, dims in ((p_at, p_name, p_dims), (c_at, c_name, c_dims)):
        if at is None:
            loops = ", ".join(d.name for d in reversed(dims))
            raise ScheduleError(
                f"Invalid compute_with: cannot find {level.var} in {name}; its loops are {loops}; compute_with of "
                f"`{child.func.name()}` with `{parent.func.name()}` must name a loop of both stages"
            )
    assert c_at is not None and p_at is not None
    if len(c_dims) - c_at != len(p_dims) - p_at:
        raise ScheduleError(
            f"Invalid {what}: # of fused dims of {p_name} ({', '.join(d.name for d in reversed(p_dims[p_at:]))}) "
            f"and {c_name} ({', '.join(d.name for d in reversed(c_dims[c_at:]))}) do not match; the loops from the "
            "fused one outwards must be as many in both stages (split both alike)"
        )
    for i, (d1, d2) in enumerate(zip(p_dims[p_at:], c_dims[c_at:], strict=True)):
        if not var_name_match(d1.name, d2.name):
            raise ScheduleError(
                f"Invalid {what}: names of dim {i} of {p_name}({d1.name}) and {c_name}({d2.name}) do not match; "
                "the fused loops must be the same, outermost first"
            )
        if d1.for_type != d2.for_type:
            raise ScheduleError(
                f"Invalid {what}: for types of dim {i} of {p_name}({d1.name} is {d1.for_type.value}) and "
                f"{c_name}({d2.name} is {d2.for_type.value}) do not match; give the fused loops of both stages the "
                "same kind (serial, parallel, unrolled, gpu_block or gpu_thread)"
            )
        if d1.is_rvar != d2.is_rvar:
            raise ScheduleError(
                f"Invalid {what}: types of dim {i} of {p_name}({d1.name}) and {c_name}({d2.name}) do not match: one "
                "is a reduction variable, the other a pure variable; the fused loops must be of the same kind"
            )
        # A fused vectorized loop is one vector loop over both bodies, each under its own
        # guard (lowered like any vector loop with a lane-varying condition); an OpenCL
        # kernel's vectorizer does not lower it.
        if d1.for_type is ForType.VECTORIZED and ctx.target == "opencl":
            raise ScheduleError(
                f"Invalid {what}: the fused loop {d1.name} is vectorized; on target opencl Pixelweave fuses "
                "serial, parallel, unrolled and GPU block/thread loops only (vectorize a loop inside the fused ones)"
            )


def _check_no_dependence_in_group(group: FusedGroup, callees: dict[str, set[str]]) -> None:
    """Funcs fused through a third (both computed with f) run in the same loops too: one
    reading the other would read points not computed yet (Halide finds no realization order)."""
    for a in group.members:
        for b in group.members:
            if b.name in callees.get(a.name, set()):
                raise ScheduleError(
                    f"Invalid compute_with: there is dependency between {b.func.name()} and {a.func.name()} ("
                    f"{a.func.name()} calls {b.func.name()}), which are computed in the same fused loops "
                    f"({', '.join(m.func.name() for m in group.members)}); remove the compute_with of "
                    f"`{a.func.name()}` or `{b.func.name()}`"
                )


def _check_stage_order(info: FuncInfo) -> None:
    """Halide's rule: the stages of a Func fused with another Func's stages must keep their
    order (f.s1 cannot be computed with an earlier stage of g than f.s0 is)."""
    latest: dict[int, tuple[int, int]] = {}
    consecutive = False
    for i, stage in enumerate(info.stages):
        level = stage.schedule.fuse_level
        if level is None:
            consecutive = False
            continue
        before = latest.get(id(level.func), (-1, -1))
        if not (level.stage > before[1] or (level.stage == before[1] and consecutive)):
            raise ScheduleError(
                f"Invalid compute_with: impossible to establish correct stage order between "
                f"{info.func.name()}.s{before[0]} with {level.func.name()}.s{before[1]} and "
                f"{info.func.name()}.s{i} with {level.func.name()}.s{level.stage}"
            )
        latest[id(level.func)] = (i, level.stage)
        consecutive = True


def _check_stages_sharing_a_parent(info: FuncInfo) -> None:
    """Two consecutive stages of one Func fused with the same parent stage run one after the
    other in each iteration of the fused loops: the later may only touch the slice the
    earlier finished in that iteration. Pixelweave fuses them where each fused loop is an
    unsplit pure variable, not shifted, at which both stages write and the later reads
    only its own point; it refuses the rest (Halide fuses them and may read points not
    computed yet)."""
    for j in range(1, len(info.stages)):
        a, b = info.stages[j - 1].schedule.fuse_level, info.stages[j].schedule.fuse_level
        if a is None or b is None or a.func is not b.func or a.stage != b.stage:
            continue
        problem = _slice_problem(info, j - 1, a) or _slice_problem(info, j, b)
        if problem is not None:
            raise ScheduleError(
                f"Invalid compute_with: {info.func.name()}.s{j - 1} and {info.func.name()}.s{j} are both computed "
                f"with {a.func.name()}.s{a.stage}, and {problem}; in each iteration of the fused loops the later "
                "stage must touch only the point the earlier one computed there. Pixelweave fuses two stages of "
                "one Func with the same stage only along unsplit pure variables without alignment; fuse one of "
                "them, or at a different stage"
            )


def _slice_problem(info: FuncInfo, k: int, level: FuseLevel) -> str | None:
    """Why stage k does not touch only its own point in each of its fused loops (or None)."""
    stage = info.stages[k]
    at = _fused_index(info, k, level.var)
    split_names = {n for s in stage.schedule.splits for n in (s.old, s.outer, s.inner)}
    d = stage.definition
    for dim in stage.schedule.dims[at:]:
        if dim.name not in d.pure_vars or dim.name in split_names:
            return f"its fused loop {dim.name} is not an unsplit pure variable"
        if any(var_name_match(dim.name, v) and a != LoopAlignStrategy.NoAlign and a != LoopAlignStrategy.Auto
               for v, a in level.align):  # fmt: skip
            return f"its fused loop {dim.name} is aligned (only NoAlign or Auto keeps the stages on one point)"
        here = [i for i, arg in enumerate(d.args) if isinstance(arg, E.Variable) and arg.name == dim.name]
        if len(here) != 1:
            return f"it does not store at {dim.name} in one place"
        i = here[0]
        for e in d.all_values():
            for node in walk(e):
                if isinstance(node, E.Call) and node.call_kind == "func" and node.target is info.func:
                    arg = node.args[i]
                    if not (isinstance(arg, E.Variable) and arg.name == dim.name):
                        return f"it reads {info.func.name()} at another point along {dim.name}"
    return None


def _group(ctx: LoweringContext, pairs: list) -> list[FusedGroup]:
    parent_of: dict[str, str] = {info.name: info.name for info in ctx.funcs}

    def root(name: str) -> str:
        while parent_of[name] != name:
            name = parent_of[name]
        return name

    for child, _, parent, _ in pairs:
        parent_of[root(child.name)] = root(parent.name)
    groups: dict[str, FusedGroup] = {}
    for info in ctx.funcs:
        if any(info is c or info is p for c, _, p, _ in pairs):
            groups.setdefault(root(info.name), FusedGroup([])).members.append(info)
    for child, k, parent, level in pairs:
        group = groups[root(child.name)]
        dims = child.stages[k].schedule.dims
        depth = len(dims) - (_fused_index(child, k, level.var) or 0)
        align: dict[str, LoopAlignStrategy] = {}
        for d in dims[len(dims) - depth :]:
            for var, strategy in level.align:
                if var_name_match(d.name, var):
                    align.setdefault(d.name, strategy)
        group.children.setdefault((parent.name, level.stage), []).append(FusedChild(child, k, depth, align))
        group.fused.add((child.name, k))
    return list(groups.values())


def _order_stages(group: FusedGroup, pairs: list) -> None:
    """Halide's order of a group's stages: each Func's stages in order, a parent after the
    stages of its children's Func that come before the fused child, the child after its
    parent (it runs inside the parent's loops)."""
    members = group.members
    index = {m.name: i for i, m in enumerate(members)}
    waiting = [[0] * len(m.stages) for m in members]
    edges: list[list[list[tuple[int, int]]]] = [[[] for _ in m.stages] for m in members]
    for m in members:
        previous: FuseLevel | None = None
        for j, stage in enumerate(m.stages):
            level = stage.schedule.fuse_level
            if level is None:
                continue
            p = next(i for i, x in enumerate(members) if x.func is level.func)
            waiting[index[m.name]][j] += 1
            edges[p][level.stage].append((index[m.name], j))
            same_parent = previous is not None and previous.func is level.func and previous.stage == level.stage
            if j > 0 and not same_parent:
                for earlier in range(j):
                    waiting[p][level.stage] += 1
                    edges[index[m.name]][earlier].append((p, level.stage))
            previous = level
    next_stage = [0] * len(members)
    while any(next_stage[i] < len(m.stages) for i, m in enumerate(members)):
        progress = False
        for i, m in enumerate(members):
            while next_stage[i] < len(m.stages) and waiting[i][next_stage[i]] == 0:
                for fi, sj in edges[i][next_stage[i]]:
                    waiting[fi][sj] -= 1
                group.order.append((m, next_stage[i]))
                next_stage[i] += 1
                progress = True
        if not progress:
            stuck = ", ".join(
                f"{m.func.name()}.s{next_stage[i]}" for i, m in enumerate(members) if next_stage[i] < len(m.stages)
            )
            raise ScheduleError(f"There is a cycle inside of the fused group: {stuck} wait for each other")


def _realization_order(ctx: LoweringContext, groups: list[FusedGroup]) -> list[FuncInfo]:
    """ctx.funcs reordered so that each group's members are adjacent, producers still
    before consumers (a group is realized after everything any member calls)."""
    group_of = {m.name: gi for gi, g in enumerate(groups) for m in g.members}
    units: list[list[FuncInfo]] = []
    unit_of: dict[str, int] = {}  # Func name -> its unit
    unit_of_group: dict[int, int] = {}
    for info in ctx.funcs:
        key = group_of.get(info.name)
        if key is not None and key in unit_of_group:
            unit = unit_of_group[key]
            units[unit].append(info)
        else:
            unit = len(units)
            units.append([info])
            if key is not None:
                unit_of_group[key] = unit
        unit_of[info.name] = unit
    direct = _direct_callees(ctx)
    needs = [{unit_of[c] for m in unit for c in direct[m.name] if c in unit_of} - {u} for u, unit in enumerate(units)]
    order: list[int] = []
    placed: set[int] = set()
    while len(order) < len(units):
        ready = next((u for u in range(len(units)) if u not in placed and needs[u] <= placed), None)
        if ready is None:
            stuck = [units[u][0].func.name() for u in range(len(units)) if u not in placed]
            raise ScheduleError(
                "the Funcs computed with each other cannot be ordered: a group of fused Funcs both feeds and "
                f"reads another Func among {', '.join(stuck)}; remove one of the compute_with()"
            )
        order.append(ready)
        placed.add(ready)
    return [info for u in order for info in units[u]]
