"""Pass 3: place each Func's computation and storage at its scheduled loop levels (the
call schedule), checking that each level is legal.

Funcs are injected consumers first: a producer's `produce` block goes just inside the loop
it is computed at, before the `consume` block that wraps what was there; its `realize`
(storage) goes at the store level. Storage bounds are filled in by bounds inference.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.lower.compute_with import FusedGroup
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.fused_loops import build_group_produce
from pixelweave.engine.lower.loop_names import split_loop_name
from pixelweave.engine.lower.loop_synthesis import build_produce
from pixelweave.engine.lower.region import names_used
from pixelweave.engine.schedule import LoopLevel, last_part
from pixelweave.engine.stmt import For, ForType, ProducerConsumer, Realize, Stmt, make_block, no_op
from pixelweave.engine.stmt_visit import StmtMutator, walk_stmt


def schedule_functions(ctx: LoweringContext) -> Stmt:
    stmt: Stmt = no_op()
    done: set[str] = set()
    try:
        for info in reversed(ctx.funcs):
            group = ctx.fused_group(info.name)
            if group is None:
                stmt = _inject(ctx, info, stmt)
            elif info.name not in done:
                done.update(group.names())
                stmt = _inject_group(ctx, group, stmt)
    except ScheduleError as err:
        raise ScheduleError(_user_names(ctx, str(err))) from None
    return stmt


def _user_names(ctx: LoweringContext, message: str) -> str:
    """An output computed into scratch storage has an internal name; messages use the user's."""
    for info in ctx.funcs:
        if info.computes_output:
            user = info.func.name()
            message = message.replace(f"`{info.name}`", f"`{user}`").replace(f"{info.name}.", f"{user}.")
    return message


def _loop_names(ctx: LoweringContext, level: LoopLevel, user: str, verb: str) -> list[str]:
    """The loops a compute_at/store_at level may mean, e.g. (g, x) -> ['g.s0.x', 'g.s1.x']."""
    directive = f"{verb}(`{level.func.name()}`, {level.var})"
    try:
        g = ctx.info(level.func)
    except KeyError:
        raise ScheduleError(
            f"Func `{user}` is scheduled at a loop of `{level.func.name()}` ({directive}), but "
            f"`{level.func.name()}` is computed inline and has no loops; give `{level.func.name()}` "
            "compute_root() or compute_at() first, or use compute_root() for "
            f"`{user}`"
        ) from None
    candidates = []
    for k, stage in enumerate(g.stages):
        for d in (d for sched in stage.schedule.all_schedules() for d in sched.dims):
            if (d.name == level.var or last_part(d.name) == level.var) and f"{g.name}.s{k}.{d.name}" not in candidates:
                candidates.append(f"{g.name}.s{k}.{d.name}")
    if not candidates:
        loops = sorted({f"{g.name}.{d.name}" for s in g.stages for sc in s.schedule.all_schedules() for d in sc.dims})
        raise ScheduleError(
            f"`{g.name}` has no loop named {level.var}, so Func `{user}` cannot be computed or stored there "
            f"({directive}); its loops are {', '.join(loops)}"
        )
    return candidates


def _uses(stmt: Stmt, name: str) -> list[list[str]]:
    """For every statement that calls `name`, the names of the loops enclosing it."""
    paths: list[list[str]] = []

    def visit(s: Stmt, loops: list[str]) -> None:
        if name not in names_used(s):  # memoized per statement: skips what never mentions name
            return
        if isinstance(s, For):
            loops = [*loops, s.name]
        for c in s.children():
            if isinstance(c, Stmt):
                visit(c, loops)
            elif _calls(c, name):
                paths.append(loops)

    visit(stmt, [])
    visit = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)
    return paths


def _calls(e: E.Expr, name: str) -> bool:
    from pixelweave.engine.ir.visit import walk

    return any(isinstance(n, E.Call) and n.call_kind == "func" and n.name == name for n in walk(e))


def legal_levels(stmt: Stmt, name: str) -> list[str]:
    """Loops that enclose every use of `name` (outermost first), as 'g.s0.x' names."""
    paths = _uses(stmt, name)
    if not paths:
        return []
    common = paths[0]
    for p in paths[1:]:
        n = 0
        while n < len(common) and n < len(p) and common[n] == p[n]:
            n += 1
        common = common[:n]
    return common


def _written_var(ctx: LoweringContext, func: str, var: str) -> str:
    """The name a directive gives a loop: its last part (`xo` of `x.xo`, as the person wrote
    it) where that names one loop of the Func, else its full name."""
    try:
        info = ctx.by_name(func)
    except KeyError:
        return var
    short = last_part(var)
    names = {d.name for stage in info.stages for sched in stage.schedule.all_schedules() for d in sched.dims}
    return short if sum(last_part(n) == short for n in names) == 1 else var


def _at(ctx: LoweringContext, loop: str, verb: str) -> str:
    """The directive that places a Func at a lowered loop, e.g. compute_at(`g`, xo)."""
    parts = split_loop_name(loop)
    if parts is None:
        return f"{verb}({loop})"
    func, _, var = parts
    return f"{verb}(`{func}`, {_written_var(ctx, func, var)})"


def _loop(ctx: LoweringContext, loop: str) -> str:
    """A lowered loop in the schedule's terms, e.g. loop xo of `g`."""
    parts = split_loop_name(loop)
    if parts is None:
        return f"loop {loop}"
    func, _, var = parts
    return f"loop {_written_var(ctx, func, var)} of `{func}`"


def _choices(ctx: LoweringContext, loops: list[str], verb: str, root: bool = True) -> str:
    """The legal directives of one kind, each once: compute_root(), compute_at(`g`, y), ..."""
    items = [f"{verb.split('_')[0]}_root()"] if root else []
    items += [_at(ctx, loop, verb) for loop in loops]
    return ", ".join(dict.fromkeys(items))


def _inject(ctx: LoweringContext, info: FuncInfo, stmt: Stmt) -> Stmt:
    produce = build_produce(info)
    if info.is_output:
        return make_block([produce, ProducerConsumer(info.name, False, stmt)])
    compute = info.compute_level()
    legal = legal_levels(stmt, info.name)
    compute_loop = None
    if compute.kind == "at":
        _check_every_specialization_has(ctx, info, compute, "compute_at")
        candidates = _loop_names(ctx, compute, info.name, "compute_at")
        usable = [c for c in candidates if c in legal]
        if not usable:
            sites = _compute_sites(stmt, info.name, candidates)
            if sites is None:
                raise ScheduleError(
                    f"Func `{info.name}` cannot be computed at {_loop(ctx, candidates[0])} "
                    f"({_at(ctx, candidates[0], 'compute_at')}): that loop does not enclose every use of "
                    f"`{info.name}`; legal compute levels for `{info.name}` are: "
                    f"{_choices(ctx, legal, 'compute_at')}"
                )
            return _inject_at_every_site(ctx, info, stmt, produce, sites)
        compute_loop = usable[0]
    explicit_store = info.schedule.store_level
    store_loop = _store_loop(ctx, info, legal, compute_loop)
    if compute_loop is not None and (explicit_store is not None and not explicit_store.is_inline()):
        _check_no_shared_storage(ctx, info.name, stmt, legal, store_loop, compute_loop)
    # store_root() of a Func computed at the root is redundant but legal: it is stored
    # where it is computed.
    store_root = explicit_store is not None and explicit_store.is_root() and compute_loop is not None
    stored_with_compute = not store_root and store_loop in (None, compute_loop)
    if info.schedule.hoist_level is not None:
        stored_at = None if store_root else (store_loop or compute_loop)
        _place_hoisted_storage(ctx, info, stmt, legal, stored_at, compute_loop)

    def compute_block(body: Stmt) -> Stmt:
        block = make_block([produce, ProducerConsumer(info.name, False, body)])
        return Realize(info.name, info.type, (), block) if stored_with_compute else block

    def realize(body: Stmt) -> Stmt:
        return Realize(info.name, info.type, (), body)

    if compute_loop is None:
        return compute_block(stmt)
    # A specialized consumer has the loop once in each of its branches: compute in each.
    stmt = _InjectAt(compute_loop, compute_block, every=True).mutate(stmt)
    if store_root:
        return realize(stmt)
    if not stored_with_compute:
        return _InjectAt(store_loop, realize, every=True).mutate(stmt)
    return stmt


def _store_loop(ctx: LoweringContext, info: FuncInfo, legal: list[str], compute_loop: str | None) -> str | None:
    """The loop info's store_at() names, checked to be at or outside compute_loop (legal:
    the loops enclosing every use of it, outermost first); None without a store_at()."""
    explicit_store = info.schedule.store_level
    if explicit_store is None or explicit_store.kind != "at":
        return None
    _check_every_specialization_has(ctx, info, explicit_store, "store_at")
    candidates = _loop_names(ctx, explicit_store, info.name, "store_at")
    allowed = legal[: legal.index(compute_loop) + 1] if compute_loop is not None else []
    usable = [c for c in candidates if c in allowed]
    if not usable:
        where = "at the root" if compute_loop is None else f"at {_loop(ctx, compute_loop)}"
        raise ScheduleError(
            f"Func `{info.name}` cannot be stored at {_loop(ctx, candidates[0])} "
            f"({_at(ctx, candidates[0], 'store_at')}): that is not at or outside where it is computed "
            f"({where}); legal store levels for `{info.name}` are: {_choices(ctx, allowed, 'store_at')}"
        )
    return usable[0]


def _check_every_specialization_has(ctx: LoweringContext, info: FuncInfo, level: LoopLevel, verb: str) -> None:
    """Refuse, as Halide does, a level whose loop exists in some branches of a specialized
    consumer stage that uses the Func but not in others: each branch must compute it there."""
    try:
        g = ctx.info(level.func)
    except KeyError:
        return  # _loop_names says why

    def has_loop(sched) -> bool:
        return any(d.name == level.var or last_part(d.name) == level.var for d in sched.dims)

    for k, stage in enumerate(g.stages):
        branches = _branches(stage.schedule)
        uses = any(_calls(e, info.name) for e in (*stage.definition.all_values(), *stage.definition.args))
        if len(branches) == 1 or not uses:
            continue
        lacking = [b for b in branches if not has_loop(b[1])]
        if lacking and len(lacking) < len(branches):
            where = f"`{g.name}`" if k == 0 else f"update {k - 1} of `{g.name}`"
            what, sched = lacking[0]
            loops = ", ".join(d.name for d in reversed(sched.dims))
            raise ScheduleError(
                f"Func `{info.name}` is scheduled at loop {level.var} of `{g.name}` ({verb}(`{g.name}`, "
                f"{level.var})), but {what} of {where} has no loop {level.var} (its loops are {loops}); the loop "
                "must exist in every specialization of the stage (it may be made by different splits and "
                "renames): give it that loop, or choose a level every specialization has"
            )


def _branches(sched, what: str = "the unspecialized schedule") -> list[tuple[str, object]]:
    """Every loop nest a stage may run, each with a description: (what, schedule)."""
    out = [(what, sched)]
    for spec in sched.specializations:
        if spec.schedule is not None:
            out += _branches(spec.schedule, f"the specialization on {spec.condition}")
    return out


def _inject_group(ctx: LoweringContext, group: FusedGroup, stmt: Stmt) -> Stmt:
    """The Funcs of a compute_with group are computed together, at their common compute
    level (compute_with.py checked the levels match); each is stored there, or at its own
    store level outside it, as in Halide."""
    produce = build_group_produce(group)
    first = group.members[0]
    compute = first.compute_level()
    compute_loop = None
    legal: list[str] = []
    if compute.kind == "at":
        for k, info in enumerate(group.members):
            levels = legal_levels(stmt, info.name)
            legal = levels if k == 0 else [loop for loop in legal if loop in levels]
        candidates = _loop_names(ctx, compute, first.name, "compute_at")
        usable = [c for c in candidates if c in legal]
        if not usable:
            return _inject_group_at_every_site(ctx, group, stmt, produce, candidates, legal)
        compute_loop = usable[0]
    # Members stored outside the compute level: by name, their store loops and whether at the root.
    storage: dict[str, tuple[set[str], bool]] = {}
    for info in group.members:
        store = info.schedule.store_level
        if info.is_output or store is None or store.is_inline():
            continue
        if compute_loop is None:
            _store_loop(ctx, info, legal, None)  # refuses a store_at() of a group computed at the root
            continue
        store_loop = None if store.is_root() else _store_loop(ctx, info, legal, compute_loop)
        if store_loop != compute_loop:
            _check_no_shared_storage(ctx, info.name, stmt, legal, store_loop, compute_loop)
            storage[info.name] = (set() if store_loop is None else {store_loop}, store_loop is None)
    for info in group.members:
        if info.schedule.hoist_level is not None and not info.is_output and compute_loop is not None:
            loops, _ = storage.get(info.name, ({compute_loop}, False))
            _place_hoisted_storage(ctx, info, stmt, legal, next(iter(loops), None), compute_loop)
    return _place_group(ctx, group, produce, stmt, set() if compute_loop is None else {compute_loop}, storage)


def _place_group(
    ctx: LoweringContext,
    group: FusedGroup,
    produce: Stmt,
    stmt: Stmt,
    sites: set[str],
    storage: dict[str, tuple[set[str], bool]],
) -> Stmt:
    """The group's produce and consume blocks inside every loop named in `sites` (at the
    root when there are none; every branch of a specialized consumer has the loop), each
    member stored with each copy unless `storage` gives its store loops or the root."""

    def compute_block(body: Stmt) -> Stmt:
        consume = body
        for info in reversed(group.members):
            consume = ProducerConsumer(info.name, False, consume)
        block = make_block([produce, consume])
        for info in group.members:
            if not info.is_output and not any(storage.get(info.name, ((), False))):
                block = Realize(info.name, info.type, (), block)
        return block

    if not sites:
        return compute_block(stmt)
    for site in sorted(sites):
        stmt = _InjectAt(site, compute_block, every=True).mutate(stmt)
    for name, (store_loops, store_root) in storage.items():
        info = ctx.by_name(name)
        for loop in sorted(store_loops):
            wrap = lambda body, info=info: Realize(info.name, info.type, (), body)  # noqa: E731
            stmt = _InjectAt(loop, wrap, every=True).mutate(stmt)
        if store_root:
            stmt = Realize(info.name, info.type, (), stmt)
    return stmt


def _inject_group_at_every_site(
    ctx: LoweringContext, group: FusedGroup, stmt: Stmt, produce: Stmt, candidates: list[str], legal: list[str]
) -> Stmt:
    """A group whose compute loop is in each branch of a specialized consumer (placed
    differently in each, so no one loop encloses every use): computed in each branch, as a
    single Func is (_inject_at_every_site); each member stored with each copy, at a store
    loop of each branch, or once at the root."""
    member_sites = [_compute_sites(stmt, info.name, candidates) for info in group.members]
    sites = member_sites[0]
    if sites is None or any(other != sites for other in member_sites[1:]):
        names = ", ".join(f"`{m.name}`" for m in group.members)
        raise ScheduleError(
            f"the Funcs computed with each other ({names}) cannot be computed at {_loop(ctx, candidates[0])} "
            f"({_at(ctx, candidates[0], 'compute_at')}): that loop does not enclose every use of them "
            "(Pixelweave computes a compute_with group at one site, or once in each branch of a specialized "
            f"consumer); legal compute levels for them are: {_choices(ctx, legal, 'compute_at')}"
        )
    storage = {info.name: _storage_at_sites(ctx, info, stmt, sites) for info in group.members if not info.is_output}
    return _place_group(ctx, group, produce, stmt, sites, storage)


def _compute_sites(stmt: Stmt, name: str, candidates: list[str]) -> set[str] | None:
    """The loops of a compute_at level that together enclose every use of `name` (one per
    stage of a consumer that uses it, as in Halide), or None if some use is outside them."""
    sites: set[str] = set()
    for path in _uses(stmt, name):
        inside = [c for c in candidates if c in path]
        if not inside:
            return None
        sites.add(inside[0])
    return sites or None


def _inject_at_every_site(ctx: LoweringContext, info: FuncInfo, stmt: Stmt, produce: Stmt, sites: set[str]) -> Stmt:
    """Compute the Func inside each of the loops: once per consumer stage that uses it, as
    Halide does. It is stored with each copy, or once at a store level enclosing them all
    (then without a sliding window)."""
    store_loops, store_root = _storage_at_sites(ctx, info, stmt, sites)
    shared = store_root or bool(store_loops)

    def compute_block(body: Stmt) -> Stmt:
        block = make_block([produce, ProducerConsumer(info.name, False, body)])
        return block if shared else Realize(info.name, info.type, (), block)

    def realize(body: Stmt) -> Stmt:
        return Realize(info.name, info.type, (), body)

    for site in sorted(sites):
        stmt = _InjectAt(site, compute_block, every=True).mutate(stmt)
    for loop in sorted(store_loops):
        stmt = _InjectAt(loop, realize, every=True).mutate(stmt)
    return realize(stmt) if store_root else stmt


def _storage_at_sites(ctx: LoweringContext, info: FuncInfo, stmt: Stmt, sites: set[str]) -> tuple[set[str], bool]:
    """Where a Func computed at several sites (the loops `sites`) is stored: the store loops
    outside them, one per use, and whether at the root; none of either: with each copy.
    Checks each use's store level and hoist level; storage shared by the sites is marked
    in ctx.computed_per_stage (it does not slide)."""
    store = info.schedule.store_level
    paths = _uses(stmt, info.name)
    store_loops: set[str] = set()
    if store is not None and store.kind == "at":
        candidates = _loop_names(ctx, store, info.name, "store_at")
        for path in paths:
            site = next(c for c in path if c in sites)
            outside = [c for c in candidates if c in path[: path.index(site) + 1]]
            if not outside:
                where = _loop(ctx, min(sites))
                raise ScheduleError(
                    f"Func `{info.name}` cannot be stored at {_loop(ctx, candidates[0])} "
                    f"({_at(ctx, candidates[0], 'store_at')}): that is not at or outside where it is computed "
                    f"({where}, in each loop of that name that uses it); legal store levels for `{info.name}` are: "
                    f"store_root(), {_at(ctx, min(sites), 'store_at')} or a loop of the same consumer outside it"
                )
            store_loops.add(outside[0])
        store_loops -= sites
    store_root = store is not None and store.is_root()
    shared = store_root or bool(store_loops)
    hoist = info.schedule.hoist_level
    if hoist is not None and not hoist.is_root():
        raise ScheduleError(
            f"hoist_storage(`{hoist.func.name()}`, {hoist.var}) of Func `{info.name}`: it is computed at several "
            "sites (once per consumer stage that uses it), and Pixelweave hoists the storage of such a Func only "
            "to the root; use hoist_storage_root()"
        )
    if hoist is not None and not store_root:
        for path in paths:
            site = next(c for c in path if c in sites)
            stored_at = next((c for c in path if c in store_loops), site)
            _place_hoisted_storage(ctx, info, stmt, path, stored_at, site)
    if shared:
        ctx.computed_per_stage.add(info.name)
        for path in paths:
            site = next(c for c in path if c in sites)
            store_at = next((c for c in path if c in store_loops), None)
            _check_no_shared_storage(ctx, info.name, stmt, path, store_at, site)
    return store_loops, store_root


def _place_hoisted_storage(
    ctx: LoweringContext, info: FuncInfo, stmt: Stmt, legal: list[str], stored_at: str | None, compute_loop: str | None
) -> None:
    """Record where hoist_storage() makes the allocation of `info` (ctx.hoisted), refusing a
    level inside the store level, or one outside a loop whose iterations would share it."""
    level = info.schedule.hoist_level
    directive = "hoist_storage_root()" if level.is_root() else f"hoist_storage(`{level.func.name()}`, {level.var})"
    outside = legal[: legal.index(stored_at) + 1] if stored_at is not None else []
    choices = f"hoist_storage_root(), {_choices(ctx, outside, 'hoist_storage', root=False)}".rstrip(", ")
    if level.is_root():
        hoist_loop = None
    else:
        try:
            candidates = _loop_names(ctx, level, info.name, "hoist_storage")
        except ScheduleError as err:
            raise ScheduleError(f"{err}; legal hoist levels for `{info.name}` are: {choices}") from None
        usable = [c for c in candidates if c in outside]
        if not usable:
            where = "at the root" if stored_at is None else f"at {_loop(ctx, stored_at)}"
            raise ScheduleError(
                f"{directive} of Func `{info.name}`: {_loop(ctx, candidates[0])} is not at or outside where it is "
                f"stored ({where}), and storage can only be hoisted outwards (as in Halide); legal hoist levels "
                f"for `{info.name}` are: {choices}"
            )
        hoist_loop = usable[0]
    if hoist_loop == stored_at:
        return  # already allocated there
    if compute_loop is not None:
        for_types = _loop_kinds(stmt)
        start = legal.index(hoist_loop) + 1 if hoist_loop is not None else 0
        between = legal[start : legal.index(compute_loop) + 1]
        sharing = [loop for loop in between if for_types.get(loop) in _SHARING_LOOPS]
        if sharing:
            loop = sharing[-1]
            kind = "parallel" if for_types[loop] == ForType.PARALLEL else for_types[loop].value
            raise ScheduleError(
                f"{directive} of Func `{info.name}`: its storage would be hoisted outside the {kind} "
                f"{_loop(ctx, loop)} but computed inside it, so its iterations would share one buffer (a race, "
                f"which Halide refuses too); legal: hoist it to {_loop(ctx, loop)} or a loop inside it"
            )
    ctx.hoisted[info.name] = hoist_loop


_SHARING_LOOPS = (ForType.PARALLEL, ForType.VECTORIZED, ForType.GPU_BLOCK, ForType.GPU_THREAD)


def _loop_kinds(stmt: Stmt) -> dict[str, ForType]:
    """Each loop's kind, a sharing kind (parallel, vectorized, GPU) winning: a loop of a
    specialized stage is in each branch, scheduled differently, and any branch may share."""
    for_types: dict[str, ForType] = {}
    for s in walk_stmt(stmt):
        if isinstance(s, For) and for_types.get(s.name) not in _SHARING_LOOPS:
            for_types[s.name] = s.for_type
    return for_types


def _check_no_shared_storage(
    ctx: LoweringContext, name: str, stmt: Stmt, legal: list[str], store_loop: str | None, compute_loop: str
) -> None:
    """Refuse, as Halide does, storage outside a parallel (vectorized, GPU block) loop that
    the computation is inside: its iterations would share one buffer and race."""
    for_types = _loop_kinds(stmt)
    start = legal.index(store_loop) + 1 if store_loop is not None else 0
    between = legal[start : legal.index(compute_loop) + 1]
    sharing = [loop for loop in between if for_types.get(loop) in _SHARING_LOOPS]
    if not sharing:
        return
    loop = sharing[-1]
    kind = "parallel" if for_types[loop] == ForType.PARALLEL else for_types[loop].value
    options = _choices(ctx, legal[legal.index(loop) : legal.index(compute_loop) + 1], "store_at", root=False)
    stored = "store_root()" if store_loop is None else _at(ctx, store_loop, "store_at")
    raise ScheduleError(
        f"Func `{name}` is stored outside the {kind} {_loop(ctx, loop)} ({stored}) but computed inside it "
        f"({_at(ctx, compute_loop, 'compute_at')}), so its iterations would share one buffer (a race); legal store "
        f"levels for `{name}` computed there are: {options} (or compute it outside {_loop(ctx, loop)})"
    )


class _InjectAt(StmtMutator):
    """Wrap the body of the loop with the given name."""

    def __init__(self, loop: str, wrap, every: bool = False) -> None:
        self.loop = loop
        self.wrap = wrap
        self.every = every  # every loop of that name (a consumer computed at several sites)
        self.found = False

    def visit_For(self, s: For) -> Stmt:  # noqa: N802 - visitor naming
        body = self.mutate(s.body)
        if s.name == self.loop and (self.every or not self.found):
            self.found = True
            body = self.wrap(body)
        if body is s.body:
            return s
        return For(s.name, s.min, s.extent, s.for_type, body)


def gpu_loops(stmt: Stmt) -> list[str]:
    return [
        s.name for s in walk_stmt(stmt) if isinstance(s, For) and s.for_type in (ForType.GPU_BLOCK, ForType.GPU_THREAD)
    ]
