"""Pass 4: bounds inference. Define the region every stage iterates over and the storage
each Func needs, by interval analysis of its uses.

At each Func's compute site, the region its consumers read (inside the loop it is computed
at, for the current iteration of the loops outside) becomes `let f.s0.x.min = ...` etc.;
update definitions widen the region of the pure definition to all they write or read.
Storage then covers everything its produce statements write, for every iteration of the
loops between the store level and the compute level. All bounds depend only on the
output size and the parameters.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import cast, to_expr
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.hoist_region_lets import hoist_root_lets, note_root_lets
from pixelweave.engine.lower.inline import plain
from pixelweave.engine.lower.intervals import SymInterval, interval_of
from pixelweave.engine.lower.loop_synthesis import constant_extents, region_max, region_min, stage_prefix
from pixelweave.engine.lower.names_below import NamesBelow
from pixelweave.engine.lower.region import Box, box_touched, simplify_box, union_box
from pixelweave.engine.lower.simplify import constant_difference, simplify
from pixelweave.engine.reference import dim_label
from pixelweave.engine.stmt import AssertStmt, Block, LetStmt, ProducerConsumer, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator

I32 = Int(32)
MAX_SPAN = 1 << 30  # a region this wide can only come from an unclamped data-dependent coordinate


def buffer_min(name: str, i: int) -> E.Variable:
    return E.Variable(f"{name}.min.{i}", I32, "param")


def buffer_extent(name: str, i: int) -> E.Variable:
    return E.Variable(f"{name}.extent.{i}", I32, "param")


def bounds_inference(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    root_lets: set[str] = set()  # region lets that depend only on parameters (hoist_region_lets)
    produced = NamesBelow(_produced_name)  # one table for all the Funcs: each rewrite keeps most subtrees
    for info in reversed(ctx.funcs):
        group = ctx.fused_group(info.name)
        names = set(group.names()) if group is not None else {info.name}
        stmt = _define_regions(info, stmt, root_lets, names, produced)
    return stmt


def _define_regions(
    info: FuncInfo, stmt: Stmt, root_lets: set[str], computed_with: set[str], produced: NamesBelow
) -> Stmt:
    """Region lets at each compute site of the Func (several when it is computed once per
    stage of a consumer that uses it). A Func computed with others (compute_with) has its
    lets around the whole group's `produce ...; consume ...`: their fused loops use them all."""
    sites = _count_sites(stmt, info.name, produced)
    # Only a Func computed at one site may name its lets once for everything inside it: with
    # several sites the same names hold a different region at each.
    shared = root_lets if sites <= 1 else None
    site = _WrapComputeSite(computed_with, lambda consume: _site_lets(info, consume, root_lets, shared), produced)
    return site.mutate(stmt)


def _produced_name(s: Stmt) -> str | None:
    """The Func a `produce f` statement produces (the statements a Func's rewrite may change
    are those with its produce below them)."""
    return s.name if isinstance(s, ProducerConsumer) and s.is_producer else None


def _count_sites(s: Stmt, name: str, produced: NamesBelow) -> int:
    """How many `produce name` statements s holds (a subtree shared twice counts twice)."""
    if name not in produced(s):
        return 0
    count = 1 if isinstance(s, ProducerConsumer) and s.is_producer and s.name == name else 0
    for c in s.children():
        if isinstance(c, Stmt):
            count += _count_sites(c, name, produced)
    return count


def _site_lets(
    info: FuncInfo, consume: Stmt | None, root_lets: set[str], shared: set[str] | None
) -> tuple[list[tuple[str, E.Expr]], list[Stmt], Stmt | None]:
    """The region lets and bound() assertions at one compute site, from the uses in `consume`,
    and the consume block with its consumers' root lets taken out (they go in front)."""
    n = len(info.pure_vars)
    name = info.name
    hoisted: list[tuple[str, E.Expr]] = []
    if info.is_output:
        required: Box = [
            SymInterval(buffer_min(name, i), simplify(buffer_min(name, i) + buffer_extent(name, i) - 1))
            for i in range(n)
        ]
    else:
        if consume is not None:
            _, consume, hoisted = hoist_root_lets(consume, consume, root_lets)
        box = box_touched(consume, name) if consume is not None else None
        if box is None:
            # Nothing reads it (e.g. only an empty reduction domain would): compute one point.
            box = [SymInterval(E.Const(I32, 0), E.Const(I32, 0)) for _ in range(n)]
        required = box
    consumer_box = required
    required = _apply_explicit_bounds(info, required)
    for i, iv in enumerate(required):
        span = constant_difference(iv.hi, iv.lo) if iv.is_bounded() else None
        if not iv.is_bounded() or (span is not None and span >= MAX_SPAN):
            raise ScheduleError(
                f"cannot bound the region of `{name}` that its consumers read in {dim_label(i)}: a coordinate "
                "used to call it has no bounds (for example a value read from an image); clamp it, use a "
                "boundary condition, or give the Func a bound()"
            )
    lets = _stage_lets(info, required)
    if shared is not None:
        note_root_lets(lets, shared)
    return hoisted + lets, _explicit_bound_asserts(info, consumer_box, required), consume


def _apply_explicit_bounds(info: FuncInfo, required: Box) -> Box:
    """The region computed: bound() fixes it; otherwise align_bounds()/align_extent() widen
    what is required to whole multiples of the modulus, and bound_extent() then fixes the
    extent from that min."""
    out = list(required)
    sched = info.schedule
    for i, v in enumerate(info.pure_vars):
        if v in sched.bounds:
            lo, extent = (plain(cast(I32, to_expr(x))) for x in sched.bounds[v])
            out[i] = SymInterval(simplify(lo), simplify(lo + extent - 1))
            continue
        if v in sched.alignments and out[i].is_bounded():
            out[i] = _aligned(out[i], *sched.alignments[v])
        if v in sched.bound_extents and out[i].is_bounded():
            extent = plain(cast(I32, to_expr(sched.bound_extents[v])))
            out[i] = SymInterval(out[i].lo, simplify(out[i].lo + extent - 1))
    return out


def _aligned(iv: SymInterval, modulus: int, remainder: int | None) -> SymInterval:
    """iv widened: min congruent to remainder (unless None) modulo modulus, extent a multiple of it."""
    m = E.Const(I32, modulus)
    lo = iv.lo if remainder is None else simplify(iv.lo - E.Mod(iv.lo - E.Const(I32, remainder), m))
    extent = simplify(iv.hi - lo + 1)
    rounded = simplify(E.Mul(E.Div(extent + E.Const(I32, modulus - 1), m), m))
    return SymInterval(lo, simplify(lo + rounded - 1))


def _explicit_bound_asserts(info: FuncInfo, consumer_box: Box, bound_box: Box) -> list[Stmt]:
    """A bound() is a promise: check at run time that consumers stay inside it. The message
    names the Func as its author did (an output read by other stages is computed under an
    internal name: context._copy_consumed_outputs)."""
    checks: list[Stmt] = []
    for i, v in enumerate(info.pure_vars):
        promised = v in info.schedule.bounds or v in info.schedule.bound_extents
        if not promised or info.is_output:
            continue
        need, have = consumer_box[i], bound_box[i]
        if not need.is_bounded():
            continue
        label = dim_label(i)
        given = "bound" if v in info.schedule.bounds else "bound_extent"
        checks.append(
            AssertStmt(
                simplify(E.And(E.GE(need.lo, have.lo), E.LE(need.hi, have.hi))),
                f"Func `{info.func.name()}` is {'requested or read' if info.computes_output else 'read'} over "
                f"[{{}}, {{}}] in {label}, outside the {given}({v}, ...) it was given, "
                f"[{{}}, {{}}]; legal: a {given}({v}, {'min, ' if given == 'bound' else ''}extent) that covers "
                f"what is read, or no {given}() on {v}",
                (need.lo, need.hi, have.lo, have.hi),
            )
        )
    return checks


def _stage_lets(info: FuncInfo, required: Box) -> list[tuple[str, E.Expr]]:
    """lets for every stage's region: updates iterate over the required region, and the
    pure definition also covers whatever the updates write or read of the Func."""
    name = info.name
    pure_region = list(required)
    update_lets: list[tuple[str, E.Expr]] = []
    for k in range(1, len(info.stages)):
        d = info.stages[k].definition
        prefix = stage_prefix(name, k)
        scope: dict[str, SymInterval] = {}
        for i, a in enumerate(d.args):
            if isinstance(a, E.Variable) and a.kind == "var":
                update_lets.append((f"{prefix}{a.name}.min", required[i].lo))
                update_lets.append((f"{prefix}{a.name}.max", required[i].hi))
                scope[a.name] = required[i]
        if d.rdom is not None:
            for v, (lo, extent) in zip(d.rdom.vars, d.rdom.bounds, strict=True):
                lo, extent = plain(lo), plain(extent)
                update_lets.append((f"{prefix}{v.name}.min", lo))
                update_lets.append((f"{prefix}{v.name}.max", simplify(lo + extent - 1)))
                scope[v.name] = SymInterval(lo, simplify(lo + extent - 1))
        written = [interval_of(a, scope) for a in d.args]
        pure_region = union_box(pure_region, written)
        from pixelweave.engine.ir.visit import walk

        for node in (n for v in d.all_values() for n in walk(v)):
            if isinstance(node, E.Call) and node.call_kind == "func" and node.name == name:
                pure_region = union_box(pure_region, [interval_of(a, scope) for a in node.args])
    pure_region = simplify_box(pure_region)
    fixed = constant_extents(info) if len(info.stages) > 1 else {}
    wanted = simplify_box(list(required))
    for i, v in enumerate(info.pure_vars):
        if v in fixed and not (pure_region[i].lo.same_as(wanted[i].lo) and pure_region[i].hi.same_as(wanted[i].hi)):
            raise ScheduleError(
                f"bound_extent({v}, {fixed[v]}) of Func `{name}`: its update definitions write or read it outside "
                f"the region its consumers read in {dim_label(i)}, so that region's extent cannot be fixed; "
                f"legal: bound({v}, min, extent) covering what the updates touch, or no bound_extent() on {v}"
            )
    for i, iv in enumerate(pure_region):
        if not iv.is_bounded():
            raise ScheduleError(
                f"an update definition of `{name}` writes or reads it at coordinates in {dim_label(i)} that have "
                "no bounds (for example a value read from an image of a wide type); clamp them"
            )
    lets = []
    for i, v in enumerate(info.pure_vars):
        lets.append((region_min(name, 0, v).name, pure_region[i].lo))
        lets.append((region_max(name, 0, v).name, pure_region[i].hi))
    return lets + update_lets


class _WrapComputeSite(StmtMutator):
    """Put the region lets around each `produce f; consume f` (inside its realize, if any);
    `site` gives the lets and assertions of a site, and its consume block rewritten, from its
    consume block."""

    def __init__(self, names: set[str], site, produced: NamesBelow) -> None:
        self.names = names  # the Func, or every Func of its compute_with group
        self.site = site
        self.produced = produced

    def mutate(self, s: Stmt | None) -> Stmt | None:
        # A statement that produces none of the names holds no site: it stays as it is
        # (which is what rebuilding it would give).
        if s is None or self.names.isdisjoint(self.produced(s)):
            return s
        return super().mutate(s)

    def _wrap(self, s: Stmt) -> Stmt:
        parts = getattr(s, "stmts", (s,))
        consume = next(
            (c for c in parts if isinstance(c, ProducerConsumer) and not c.is_producer and c.name in self.names), None
        )
        lets, asserts, new_consume = self.site(consume)
        if new_consume is not consume:
            s = make_block([new_consume if c is consume else c for c in parts])
        body = make_block([*asserts, s])
        for let_name, value in reversed(lets):
            body = LetStmt(let_name, value, body)
        return body

    def visit_Block(self, s: Block) -> Stmt:  # noqa: N802
        stmts = list(s.stmts)
        for i, c in enumerate(stmts):
            if isinstance(c, ProducerConsumer) and c.is_producer and c.name in self.names:
                rest = make_block(stmts[i:])
                return make_block([*stmts[:i], self._wrap(rest)])
        return self.default(s)


def assert_within(
    name: str,
    what: str,
    box: Box,
    mins: list[E.Expr],
    extents: list[E.Expr],
    verb: str = "accessed",
    hint: str = "",
) -> list[Stmt]:
    """Assertions that a box lies inside a buffer's [min, min + extent); hint (what to do
    about it) ends each message."""
    checks: list[Stmt] = []
    for i, iv in enumerate(box):
        label = dim_label(i)
        coord = label.split(" ")[0]
        hi_limit = simplify(mins[i] + extents[i] - 1)
        checks.append(
            AssertStmt(
                simplify(E.GE(iv.lo, mins[i])),
                f"{what} `{name}` is {verb} at {coord} = {{}}, below its minimum {{}} in {label}{hint}",
                (iv.lo, mins[i]),
            )
        )
        checks.append(
            AssertStmt(
                simplify(E.LE(iv.hi, hi_limit)),
                f"{what} `{name}` is {verb} at {coord} = {{}}, beyond its maximum {{}} in {label}{hint}",
                (iv.hi, hi_limit),
            )
        )
    return checks
