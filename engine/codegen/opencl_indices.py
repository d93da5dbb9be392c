"""Which lets of an OpenCL kernel only ever feed addresses.

The OpenCL backend computes load and store indices with C's signed 32-bit arithmetic, as
Halide's kernels do (opencl_expr.py `ExprEmitter.index`), and values with wrapping
arithmetic. A let whose every use is address arithmetic (a coordinate such as
`f.s0.x = base + xi`, a tile's minimum) is index arithmetic too: computing it with signed
operations keeps the chain from the work-item id to the address free of wrapping, which
is what lets the OpenCL compiler see consecutive accesses across work-items.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast, LetStmt, Load, Ramp, Stmt, Store
from pixelweave.engine.stmt_visit import walk_stmt

# The operations an index's arithmetic passes through (the same as ExprEmitter's).
INDEX_ARITHMETIC = (E.Add, E.Sub, E.Mul, E.Min, E.Max, Ramp, Broadcast)


def index_only_lets(root: Stmt) -> set[str]:
    """The names of the LetStmts in root whose value is used only as address arithmetic:
    reached from a load or store index (or from another such let's value) through
    +, -, *, min and max alone. The analysis is by name: every binding of a name (an
    unrolled loop binds its variables once per copy) is address arithmetic or none is. A
    name also bound by a Let expression, bound to a value other than an int32, or never
    used, is left out."""
    excluded: set[str] = set()  # bound by a Let expression, or to a value other than an int32
    # uses[name] = owners: None for an address use, "" for a value use, a let's name for
    # a use at the top of that let's value (an address use if that let is one)
    uses: dict[str, set[str | None]] = {}
    lets: set[str] = set()

    def visit(e: E.Expr, in_index: bool, owner: str | None, seen: set[tuple[int, bool, str | None]]) -> None:
        key = (id(e), in_index, owner)
        if key in seen:
            return
        seen.add(key)
        if isinstance(e, E.Variable):
            uses.setdefault(e.name, set()).add(owner if in_index else "")
            return
        if isinstance(e, E.Let):
            excluded.add(e.name)
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
            lets.add(s.name)
            t = s.value.type()
            if not (t.is_int() and t.bits == 32 and t.lanes == 1):
                excluded.add(s.name)
            visit(s.value, True, s.name, seen)
        else:
            for c in s.children():
                if isinstance(c, E.Expr):
                    visit(c, False, None, seen)
    candidates = lets - excluded
    changed = True
    while changed:
        changed = False
        for name in list(candidates):
            owners = uses.get(name, set())
            if not owners or "" in owners or any(o is not None and o not in candidates for o in owners):
                candidates.discard(name)
                changed = True
    return candidates
