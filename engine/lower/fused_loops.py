"""compute_with(): build the loop nest of a group of fused Funcs (part of pass 2, loop
synthesis).

A parent stage's fused loops (its outermost ones, down to the deepest loop a child is
fused at) run over the union of its own range and each child's range (shifted by the
child's LoopAlignStrategy); inside the innermost fused loop of each depth, the parent's
body runs first, then each child fused at that depth, each under a guard that keeps it
to its own range. A child keeps its fused loops as loops of one iteration at the
parent's (shifted) point, so Funcs computed at them still have a loop to go in:

    for f.s0.y in [min(f.y.min, g.y.min), max(f.y.max, g.y.max)]:
      if (f.y.min <= f.s0.y <= f.y.max): for f.s0.x ...: f(...) = ...
      if (g.y.min <= f.s0.y + shift <= g.y.max):
        for g.s0.y in [f.s0.y + shift, 1]: for g.s0.x ...: g(...) = ...
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.lower.compute_with import FusedChild, FusedGroup
from pixelweave.engine.lower.context import FuncInfo
from pixelweave.engine.lower.loop_synthesis import StageLoop, build_stage, stage_body_and_loops, var
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.schedule import LoopAlignStrategy
from pixelweave.engine.stmt import For, ForType, IfThenElse, ProducerConsumer, Stmt, make_block


def build_group_produce(group: FusedGroup) -> Stmt:
    """produce f { produce g { the group's stages, in order, children inside their parents } }"""
    nests = [
        _build_parent(info, k, group.children.get((info.name, k), []))
        for info, k in group.order
        if (info.name, k) not in group.fused
    ]
    body = make_block(nests)
    for info in reversed(group.members):
        body = ProducerConsumer(info.name, True, body)
    return body


def _last(loop: StageLoop) -> E.Expr:
    return simplify(loop.min + loop.extent - 1)


def _within(v: E.Expr, lo: E.Expr, hi: E.Expr) -> E.Expr:
    return E.And(E.GE(v, lo), E.LE(v, hi))


def _guard(conditions: list[E.Expr], body: Stmt) -> Stmt:
    if not conditions:
        return body
    cond = conditions[0]
    for c in conditions[1:]:
        cond = E.And(cond, c)
    return IfThenElse(cond, body)


def _wrap(body: Stmt, loops: list[StageLoop]) -> Stmt:
    """Wrap body in loops given outermost first."""
    for loop in reversed(loops):
        body = For(loop.name, loop.min, loop.extent, loop.for_type, body)
    return body


def _offset(child_loop: StageLoop, parent_loop: StageLoop, strategy: LoopAlignStrategy | None) -> E.Expr:
    """The child's loop variable minus the parent's at the same iteration."""
    if strategy == LoopAlignStrategy.AlignStart:
        return simplify(child_loop.min - parent_loop.min)
    if strategy == LoopAlignStrategy.AlignEnd:
        return simplify(_last(child_loop) - _last(parent_loop))
    return E.Const(child_loop.min.type(), 0)


def _build_parent(info: FuncInfo, k: int, children: list[FusedChild]) -> Stmt:
    if not children:
        return build_stage(info, k)
    body, inner_first = stage_body_and_loops(info, k)
    loops = list(reversed(inner_first))  # outermost first
    depth = max(c.depth for c in children)
    fused = loops[:depth]
    lo = [loop.min for loop in fused]
    hi = [_last(loop) for loop in fused]
    own = [_within(var(loop.name), loop.min, _last(loop)) for loop in fused]
    parts: dict[int, list[Stmt]] = {d: [] for d in range(1, depth + 1)}
    for child in children:
        c_body, c_inner_first = stage_body_and_loops(child.info, child.stage)
        c_loops = list(reversed(c_inner_first))
        conditions = []
        single = []
        for j in range(child.depth):
            c_loop, p_loop = c_loops[j], fused[j]
            offset = _offset(c_loop, p_loop, child.align.get(c_loop.dim))
            c_lo, c_hi = simplify(c_loop.min - offset), simplify(_last(c_loop) - offset)
            lo[j] = simplify(E.Min(lo[j], c_lo))
            hi[j] = simplify(E.Max(hi[j], c_hi))
            conditions.append(_within(var(p_loop.name), c_lo, c_hi))
            single.append(
                StageLoop(c_loop.dim, c_loop.name, simplify(var(p_loop.name) + offset), E.Const(offset.type(), 1),
                          ForType.SERIAL)
            )  # fmt: skip
        nest = _wrap(_wrap(c_body, c_loops[child.depth :]), single)
        parts[child.depth].append(_guard(conditions, nest))
    stmt = _guard(own, _wrap(body, loops[depth:]))
    for j in range(depth - 1, -1, -1):
        stmt = make_block([stmt, *parts[j + 1]])
        stmt = For(fused[j].name, lo[j], simplify(hi[j] - lo[j] + 1), fused[j].for_type, stmt)
    return stmt
