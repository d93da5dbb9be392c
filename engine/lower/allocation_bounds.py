"""Pass: give every `realize f` the bounds of everything f's stages write or read below
it, for every iteration of the loops between its store level and its compute level.

It runs after sliding window, whose narrower regions it measures, and before storage
folding, which may then shrink a dimension to a circular buffer.

Each realization's size is also computed in 64 bits, from the region's bounds before any
32-bit arithmetic on them, and checked against what 32-bit indexing addresses: a region
too large (or one whose 32-bit extent would wrap, which would allocate too little) is an
error naming the Func, at compile time when the size is a constant and otherwise at run
time (an assertion before the allocation), never a wrapped size.
"""

from __future__ import annotations

from pixelweave.engine.errors import BoundsError, ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.lower.region import Scopes, box_touched
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.reference import dim_label
from pixelweave.engine.stmt import AssertStmt, Realize, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator


def allocation_bounds(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    # One walk sizes every realization (inner ones first); a Func's box never depends on the
    # bounds of the realizations inside its own, so the order of Funcs does not matter. A
    # Tuple's values each have storage of that size: the widest is checked.
    widest = {info.name: max(info.types, key=lambda t: t.bits) for info in ctx.funcs if not info.is_output}
    return _SizeRealize(widest).mutate(stmt)


class _SizeRealize(StmtMutator):
    """Give `realize f` the bounds of everything f's stages write below it, for each f in element_types."""

    def __init__(self, element_types: dict[str, Type]) -> None:
        self.element_types = element_types
        self.scopes = Scopes()  # the loops below an outer realization are those below the inner ones

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if s.name not in self.element_types:
            return s if body is s.body else Realize(s.name, s.type, s.bounds, body, s.folds)
        name = s.name
        box = box_touched(body, name, calls=True, provides=True, scopes=self.scopes)
        if box is None:
            raise ScheduleError(f"`{name}` is stored but never computed")
        bounds = []
        wide_extents = []
        for i, iv in enumerate(box):
            if not iv.is_bounded():
                raise ScheduleError(
                    f"cannot bound the storage of `{name}` in {dim_label(i)}: a coordinate it is computed or "
                    "read at has no bounds; clamp it, give the Func a bound(), or store it where it is computed"
                )
            extent = simplify(iv.hi - iv.lo + 1)
            bounds.append((iv.lo, extent))
            wide_extents.append(wide_extent(iv.lo, iv.hi, extent))
        realize = Realize(s.name, s.type, tuple(bounds), body, s.folds)
        return make_block([storage_size_check(name, self.element_types[name], wide_extents), realize])


I64 = Int(64)
STORAGE_LIMIT_BYTES = 2**31 - 1  # flat indices are int32; as Halide without large_buffers


def widen(e: E.Expr, memo: dict[int, E.Expr] | None = None) -> E.Expr:
    """An Int(32) expression evaluated in Int(64): exact where its 32-bit arithmetic would wrap.
    Shared subexpressions are widened once (bounds are DAGs; a tree walk is exponential)."""
    memo = {} if memo is None else memo
    done = memo.get(id(e))
    if done is not None:
        return done
    if e.type() != Int(32):
        result: E.Expr = E.Cast(I64, e)
    elif isinstance(e, E.Const):
        result = E.Const(I64, e.value)
    elif isinstance(e, (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.Min, E.Max)):
        result = type(e)(widen(e.a, memo), widen(e.b, memo))
    elif isinstance(e, E.Select):
        result = E.Select(e.cond, widen(e.true_value, memo), widen(e.false_value, memo))
    else:
        result = E.Cast(I64, e)
    memo[id(e)] = result
    return result


def wide_extent(lo: E.Expr, hi: E.Expr, extent: E.Expr) -> E.Expr:
    """hi - lo + 1 in Int(64). The simplified 32-bit extent, widened, is exact (and reads
    well) unless the bounds hold constants near the 32-bit limits (an unbounded region
    clipped to the type's range), whose difference wraps; those are widened before subtracting."""
    small = all(
        abs(node.value) < SMALL_CONSTANT
        for node in (*walk(lo), *walk(hi))
        if isinstance(node, E.Const) and not node.type().is_float()
    )
    if small:
        return simplify(widen(extent))
    return simplify(E.Add(E.Sub(widen(hi), widen(lo)), E.Const(I64, 1)))


SMALL_CONSTANT = 2**28


def storage_size_check(name: str, t: Type, extents: list[E.Expr]) -> Stmt | None:
    """Refuse storage for `name` over 64-bit extents whose size exceeds STORAGE_LIMIT_BYTES:
    a BoundsError now when the size is a constant, else an assertion for run time."""
    elem_bytes = max(t.bits // 8, 1)
    cap = E.Const(I64, STORAGE_LIMIT_BYTES + 1)
    total: E.Expr = E.Const(I64, elem_bytes)
    for extent in extents:  # capped at each step, so the product never overflows 64 bits
        total = simplify(E.Min(E.Mul(total, E.Max(extent, E.Const(I64, 0))), cap))
    dims = " x ".join("{}" for _ in extents)
    message = (
        f"the storage of `{name}` would need at least {{}} bytes ({dims} elements of {t}), more than the "
        f"{STORAGE_LIMIT_BYTES} bytes that 32-bit indexing addresses; bound the region it is needed over "
        "(clamp the coordinates that read it, use bound() or a boundary condition), or compute it at an "
        "inner loop so that each piece is smaller"
    )
    constant = as_const_int(total)
    if constant is not None:
        if constant <= STORAGE_LIMIT_BYTES:
            return None
        sizes = [as_const_int(e) for e in extents]
        raise BoundsError(message.format(constant, *[s if s is not None else "?" for s in sizes]))
    return AssertStmt(E.LE(total, E.Const(I64, STORAGE_LIMIT_BYTES)), message, (total, *extents))
