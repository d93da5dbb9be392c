"""Pass: sliding window. When a Func is stored outside the serial loop it is computed in,
and the region each iteration needs marches forward monotonically, later iterations
compute only the part not already computed by earlier ones.

Example: `blur_x.store_root().compute_at(blur_y, y)` computes three rows of blur_x for the
first row of blur_y and one new row for each row after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import find_variables, substitute
from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.lower.loop_synthesis import region_max, region_min
from pixelweave.engine.lower.names_below import NamesBelow
from pixelweave.engine.lower.simplify import constant_difference, simplify
from pixelweave.engine.stmt import For, ForType, LetStmt, ProducerConsumer, Realize, Stmt
from pixelweave.engine.stmt_visit import StmtMutator

I32 = Int(32)


@dataclass
class SlidingInfo:
    """A Func whose dimension `dim` slides along loop `loop` (used by storage folding)."""

    loop: str
    dim: int


def sliding_window(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    ctx.sliding = {}
    realized = NamesBelow(_realized_name)  # one table for all the Funcs: each rewrite keeps most subtrees
    for info in ctx.funcs:
        if info.is_output or len(info.stages) > 1 or info.name in ctx.computed_per_stage:
            # (computed at several sites, one storage: no single loop to slide along)
            continue
        # A member of a compute_with group slides too: the group's fused loops run over the
        # union of its members' region lets, each member guarded to its own, so a member's
        # slid region shrinks its part of the loops (its lets may sit among the others').
        group = ctx.fused_group(info.name)
        others = tuple(f"{m}." for m in group.names() if m != info.name) if group is not None else ()
        mutator = _Slide(info.name, info.pure_vars, realized, others)
        stmt = mutator.mutate(stmt)
        if mutator.result is not None:
            ctx.sliding[info.name] = mutator.result
    return stmt


def _realized_name(s: Stmt) -> str | None:
    return s.name if isinstance(s, Realize) else None


def _depends_on(e: E.Expr, name: str) -> bool:
    return any(v.name == name for v in find_variables(e))


def _dependent_nodes(e: E.Expr, name: str) -> set[int]:
    """Identities of the nodes of e that mention variable `name`, found in one post-order
    pass: asking _depends_on at every level of a deep region expression was quadratic (a
    fifth of interpolate's lowering time)."""
    dependent: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[E.Expr, bool]] = [(e, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in done:
            continue
        children = node.children()
        if not children_done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in done)
            continue
        done.add(id(node))
        if (isinstance(node, E.Variable) and node.name == name) or any(id(c) in dependent for c in children):
            dependent.add(id(node))
    return dependent


class _Slide(StmtMutator):
    def __init__(self, name: str, pure_vars: list[str], realized: NamesBelow, others: tuple[str, ...] = ()) -> None:
        self.name = name
        self.others = others  # let-name prefixes of the Funcs fused with this one
        self.pure_vars = pure_vars
        self.loops: list[For] = []
        self.inside_realize = False
        self.lets: dict[str, E.Expr] = {}
        self.result: SlidingInfo | None = None
        self.realized = realized
        self.first_let = region_min(name, 0, pure_vars[0]).name if pure_vars else None

    def mutate(self, s: Stmt | None) -> Stmt | None:
        # Outside the Func's realize nothing changes: a statement without one below it
        # stays as it is (which is what rebuilding it would give).
        if s is not None and not self.inside_realize and self.name not in self.realized(s):
            return s
        return super().mutate(s)

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        if s.name != self.name:
            return self.default(s)
        self.inside_realize = True
        self.loops = []
        body = self.mutate(s.body)
        self.inside_realize = False
        return s if body is s.body else Realize(s.name, s.type, s.bounds, body, s.folds)

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        if not self.inside_realize:
            return self.default(s)
        self.loops.append(s)
        body = self.mutate(s.body)
        self.loops.pop()
        return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        first = self.first_let
        if not self.inside_realize or s.name != first or not self.loops or self.result is not None:
            return self.default(s)
        # The chain of region lets of this Func starts here; read it whole.
        chain: list[LetStmt] = []
        node: Stmt = s
        while isinstance(node, LetStmt) and node.name.startswith(f"{self.name}.s0."):
            chain.append(node)
            node = node.body
        fused_lets: list[LetStmt] = []  # the region lets of the Funcs fused with it, kept as they are
        while isinstance(node, LetStmt) and self.others and node.name.startswith(self.others):
            fused_lets.append(node)
            node = node.body
        if not (isinstance(node, ProducerConsumer) or hasattr(node, "stmts")):
            return self.default(s)
        values = {let.name: let.value for let in chain}
        loop = self.loops[-1]
        if loop.for_type != ForType.SERIAL:
            return self.default(s)
        slid = self._choose_dim(values, loop)
        if slid is None:
            return self.default(s)
        dim, new_min = slid
        self.result = SlidingInfo(loop.name, dim)
        target = region_min(self.name, 0, self.pure_vars[dim]).name
        rebuilt: Stmt = node
        for let in reversed(fused_lets):
            rebuilt = LetStmt(let.name, let.value, rebuilt)
        for let in reversed(chain):
            rebuilt = LetStmt(let.name, new_min if let.name == target else let.value, rebuilt)
        return rebuilt

    def _choose_dim(self, values: dict[str, E.Expr], loop: For) -> tuple[int, E.Expr] | None:
        var = loop.name
        moving = []
        for i, v in enumerate(self.pure_vars):
            lo = values.get(region_min(self.name, 0, v).name)
            hi = values.get(region_max(self.name, 0, v).name)
            if lo is None or hi is None:
                return None
            if _depends_on(lo, var) or _depends_on(hi, var):
                moving.append((i, lo, hi))
        if len(moving) != 1:
            return None
        i, lo, hi = moving[0]
        prev = E.Sub(E.Variable(var, I32), E.Const(I32, 1))
        prev_lo, prev_hi = substitute(lo, {var: prev}), substitute(hi, {var: prev})
        step_lo, step_hi = constant_difference(lo, prev_lo), constant_difference(hi, prev_hi)
        constant_steps = step_lo is not None and step_hi is not None and step_lo >= 0 and step_hi >= 0
        if not constant_steps and not (_nondecreasing(lo, var) and _nondecreasing(hi, var)):
            return None
        first = E.LE(E.Variable(var, I32), loop.min)
        new_min = simplify(E.Select(first, lo, E.Max(lo, simplify(prev_hi + 1))))
        return i, new_min


def _nondecreasing(e: E.Expr, var: str) -> bool:
    """Whether integer e never decreases as `var` grows (the others fixed): the region of a
    Func read at y / 2 * 2 - 2 .. y / 2 * 2 + 3 (a Bayer plane) marches forwards by 0 or 2
    rows per row of y, not by a constant step, and still slides as Halide slides it."""
    dependent = _dependent_nodes(e, var)
    memo: dict[int, bool] = {}

    def depends(n: E.Expr) -> bool:
        return id(n) in dependent

    def go(n: E.Expr) -> bool:
        hit = memo.get(id(n))
        if hit is None:
            hit = memo[id(n)] = _nondecreasing_node(n, depends, go)
        return hit

    return go(e)


def _nondecreasing_node(e: E.Expr, depends: Callable[[E.Expr], bool], go: Callable[[E.Expr], bool]) -> bool:
    """One node's case of _nondecreasing; `go` answers for its operands."""
    if not depends(e):
        return True
    if isinstance(e, E.Variable):
        return True  # (it mentions var, so it is var)
    if isinstance(e, (E.Add, E.Min, E.Max)):
        return go(e.a) and go(e.b)
    if isinstance(e, E.Sub):
        return go(e.a) and not depends(e.b)
    if isinstance(e, (E.Mul, E.Div)):
        factor = e.b.value if isinstance(e.b, E.Const) else None
        if isinstance(e, E.Mul) and factor is None and isinstance(e.a, E.Const):
            return e.a.value >= 0 and go(e.b)
        return factor is not None and factor > 0 and go(e.a)  # (floor division)
    if isinstance(e, E.Select):
        return not depends(e.cond) and go(e.true_value) and go(e.false_value)
    return False
