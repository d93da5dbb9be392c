"""Which lets of an OpenCL kernel only ever feed addresses.

The OpenCL backend computes load and store indices with C's signed 32-bit arithmetic, as
Halide's kernels do (opencl_expr.py `ExprEmitter.index`), and values with wrapping
arithmetic. A let whose every use is address arithmetic (a coordinate such as
`f.s0.x = base + xi`, a tile's minimum) is index arithmetic too: computing it with signed
operations keeps the chain from the work-item id to the address free of wrapping, which
is what lets the OpenCL compiler see consecutive accesses across work-items.
"""

from __future__ import annotations

from collections import Counter

from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast, LetStmt, Load, Ramp, Stmt, Store
from pixelweave.engine.stmt_visit import walk_stmt

# The operations an index's arithmetic passes through (the same as ExprEmitter's).
INDEX_ARITHMETIC = (E.Add, E.Sub, E.Mul, E.Min, E.Max, Ramp, Broadcast)


def index_only_lets(root: Stmt) -> set[str]:
    """The names of the LetStmts in root whose value is used only as address arithmetic:
    reached from a load or store index (or from another such let's value) through
    +, -, *, min and max alone. A name bound more than once, or also by a Let
    expression, or never used, is left out."""
    bindings: Counter[str] = Counter()
    # uses[name] = owners: None for an address use, "" for a value use, a let's name for
    # a use at the top of that let's value (an address use if that let is one)
    uses: dict[str, set[str | None]] = {}
    values: dict[str, E.Expr] = {}

    def visit(e: E.Expr, in_index: bool, owner: str | None, seen: set[tuple[int, bool, str | None]]) -> None:
        key = (id(e), in_index, owner)
        if key in seen:
            return
        seen.add(key)
        if isinstance(e, E.Variable):
            uses.setdefault(e.name, set()).add(owner if in_index else "")
            return
        if isinstance(e, E.Let):
            bindings[e.name] += 2  # never index-only
        if isinstance(e, Load):
            visit(e.index, True, None, seen)
            return
        keep = in_index and isinstance(e, INDEX_ARITHMETIC)
        for child in e.children():
            visit(child, keep, owner if keep else None, seen)

    for s in walk_stmt(root):
        seen: set[tuple[int, bool, str | None]] = set()
        if isinstance(s, Store):
            visit(s.index, True, None, seen)
            visit(s.value, False, None, seen)
        elif isinstance(s, LetStmt):
            bindings[s.name] += 1
            values[s.name] = s.value
            visit(s.value, True, s.name, seen)
        else:
            for c in s.children():
                if isinstance(c, E.Expr):
                    visit(c, False, None, seen)
    candidates = {
        name
        for name, value in values.items()
        if bindings[name] == 1 and value.type().is_int() and value.type().bits == 32 and value.type().lanes == 1
    }
    changed = True
    while changed:
        changed = False
        for name in list(candidates):
            owners = uses.get(name, set())
            if not owners or "" in owners or any(o is not None and o not in candidates for o in owners):
                candidates.discard(name)
                changed = True
    return candidates
