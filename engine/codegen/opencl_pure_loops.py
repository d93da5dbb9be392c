"""Loops of a pure definition with no GPU schedule, spread over work-items.

A Func without a GPU schedule still runs on the device (every buffer lives there), as a
kernel of one work-item. When the statement is a nest of serial loops over the points of
one Func's pure definition (stage s0: each point is computed from other Funcs only, so the
points are independent), such as the copy of an output computed into scratch storage
(a `bound()` output), running it on one work-item makes it the slowest stage of the
pipeline. Its loops become GPU loops instead: the innermost one blocks of
`THREADS` work-items (the last block guarded), up to two outer ones block dimensions.
The points and the values stored are the same; only their order changes, which a pure
definition does not observe.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.stmt import Allocate, For, ForType, IfThenElse, LetStmt, Load, Stmt, Store
from pixelweave.engine.stmt_visit import stmt_exprs, walk_stmt

THREADS = 64  # work-items per group along the innermost loop
_PURE_STAGE = ".s0."


def spread_pure_loops(s: Stmt) -> Stmt | None:
    """s with its loops as GPU block and thread loops, or None where s is not a nest of
    at most three serial loops of one Func's pure definition (bounds fixed outside the
    nest) whose body stores into that Func only, without loops or allocations."""
    chain: list[For] = []
    node = s
    while isinstance(node, For) and len(chain) < 3:
        chain.append(node)
        node = node.body
    if not chain or any(loop.for_type != ForType.SERIAL or _PURE_STAGE not in loop.name for loop in chain):
        return None
    func = chain[0].name.split(_PURE_STAGE)[0]
    if any(loop.name.split(_PURE_STAGE)[0] != func for loop in chain):
        return None
    body = node
    if any(isinstance(n, (For, Allocate)) for n in walk_stmt(body)):
        return None
    stores = {n.buffer for n in walk_stmt(body) if isinstance(n, Store)}
    loads = {n.buffer for e in stmt_exprs(body) for n in walk(e) if isinstance(n, Load)}
    if stores != {func} or func in loads:
        return None
    names = {loop.name for loop in chain}
    for loop in chain:
        used = {n.name for e in (loop.min, loop.extent) for n in walk(e) if isinstance(n, E.Variable)}
        if used & names or not all(_host_computable(e) for e in (loop.min, loop.extent)):
            return None
    inner = chain[-1]
    block, thread = f"{inner.name}.__block", f"{inner.name}.__thread"
    width = E.Const(Int(32), THREADS)
    offset = E.Add(E.Mul(E.Variable(block, Int(32)), width), E.Variable(thread, Int(32)))
    guarded = IfThenElse(E.LT(offset, inner.extent), LetStmt(inner.name, E.Add(inner.min, offset), body))
    threads = For(thread, E.Const(Int(32), 0), width, ForType.GPU_THREAD, guarded)
    blocks = E.Div(E.Add(inner.extent, E.Const(Int(32), THREADS - 1)), width)
    out: Stmt = For(block, E.Const(Int(32), 0), blocks, ForType.GPU_BLOCK, threads)
    for loop in reversed(chain[:-1]):
        out = For(loop.name, loop.min, loop.extent, ForType.GPU_BLOCK, out)
    return out


def _host_computable(e: E.Expr) -> bool:
    """An int32 scalar the host can evaluate (no memory reads or calls): a block loop's bound."""
    return e.type() == Int(32) and not any(isinstance(n, (Load, E.Call)) for n in walk(e))
