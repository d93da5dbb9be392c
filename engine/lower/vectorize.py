"""Pass 8: vectorization. A loop scheduled with vectorize() becomes one iteration over
SIMD lanes: its variable becomes the vector ramp(min, 1, lanes), and every expression that
depends on it becomes a vector (scalars are broadcast). Stores and loads whose index has
stride one become dense vector accesses in the backend; others become gathers/scatters.

A body this pass cannot express as vectors (a condition or an inner loop bound that
differs per lane, a per-lane allocation, several lanes storing to one place) stays a
serial loop, which computes the same values.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import find_variables, rebuild, substitute
from pixelweave.engine.lower.loop_names import describe_loop
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.stmt import (
    Allocate,
    AssertStmt,
    Broadcast,
    For,
    ForType,
    IfThenElse,
    LetStmt,
    Load,
    Ramp,
    Stmt,
    Store,
)
from pixelweave.engine.stmt_visit import StmtMutator


class _CannotVectorize(Exception):
    pass


def vectorize_loops(stmt: Stmt) -> Stmt:
    return _VectorizeLoops().mutate(stmt)


class _VectorizeLoops(StmtMutator):
    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if s.for_type != ForType.VECTORIZED:
            return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)
        lanes = as_const_int(s.extent)
        if lanes is None:
            raise ScheduleError(
                f"cannot vectorize {describe_loop(s.name)}: its extent (the size of the region "
                "computed) is not a constant; "
                "use vectorize(var, width) to split it by a constant width first"
            )
        if lanes == 1:
            return For(s.name, s.min, s.extent, ForType.SERIAL, body)
        serial = For(s.name, s.min, s.extent, ForType.SERIAL, body)
        try:
            return _Widen(s.name, simplify(s.min), lanes).mutate(body)
        except _CannotVectorize:
            return _guarded_vectors(s, body, lanes, serial)


def _guarded_vectors(s: For, body: Stmt, lanes: int, serial: For) -> Stmt:
    """A loop whose body is a guard (a GuardWithIf tail: `if (x < x.max + 1) ...`, after
    lets) becomes, as in Halide, `if (every lane passes) vectors else the serial loop`.
    The test is the guard at the first and the last lane, exact where each of its
    comparisons is affine in the loop variable (a monotone truth over the lanes); loop
    partitioning then finds it true in the steady state, which runs the vectors alone.
    Any other body stays serial."""
    lets: list[LetStmt] = []
    inner = body
    while isinstance(inner, LetStmt):
        lets.append(inner)
        inner = inner.body
    if not isinstance(inner, IfThenElse) or inner.else_case is not None:
        return serial
    condition = inner.condition
    for let in reversed(lets):
        condition = substitute(condition, {let.name: let.value})
    first = simplify(s.min)
    last = simplify(E.Add(first, E.Const(first.type(), lanes - 1)))
    if not _monotone_in(condition, s.name):
        return serial
    every_lane = simplify(E.And(substitute(condition, {s.name: first}), substitute(condition, {s.name: last})))
    unguarded: Stmt = inner.then_case
    for let in reversed(lets):
        unguarded = LetStmt(let.name, let.value, unguarded)
    try:
        vectors = _Widen(s.name, first, lanes).mutate(unguarded)
    except _CannotVectorize:
        return serial
    return IfThenElse(every_lane, vectors, serial)


def _monotone_in(condition: E.Expr, var: str) -> bool:
    """Whether condition is a conjunction of integer comparisons, each between a side that
    does not use var and one that steps by a constant as var does (so each is true on one
    side of a point, and true at two values of var means true between them)."""
    if isinstance(condition, E.And):
        return _monotone_in(condition.a, var) and _monotone_in(condition.b, var)
    if not isinstance(condition, (E.LT, E.LE, E.GT, E.GE)):
        return False
    uses = [any(v.name == var for v in find_variables(side)) for side in (condition.a, condition.b)]
    if uses.count(True) != 1:
        return False
    side = condition.a if uses[0] else condition.b
    t = side.type()
    if not t.is_int() or t.is_vector():
        return False
    step = E.Sub(substitute(side, {var: E.Add(E.Variable(var, t), E.Const(t, 1))}), side)
    return as_const_int(simplify(step)) is not None


def _broadcast(e: E.Expr, lanes: int) -> E.Expr:
    return e if e.type().lanes == lanes else Broadcast(e, lanes)


class _Widen(StmtMutator):
    def __init__(self, var: str, base: E.Expr, lanes: int) -> None:
        self.var = var
        self.lanes = lanes
        self.ramp = Ramp(base, E.Const(base.type(), 1), lanes)
        self.vector_vars: set[str] = set()

    # ------------------------------------------------------------------ expressions
    def mutate_expr(self, e: E.Expr) -> E.Expr:
        memo: dict[int, E.Expr] = {}

        def go(node: E.Expr) -> E.Expr:
            hit = memo.get(id(node))
            if hit is None:
                hit = self._widen(node, go)
                memo[id(node)] = hit
            return hit

        try:
            return go(e)
        finally:
            go = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)

    def _widen(self, e: E.Expr, go) -> E.Expr:
        n = self.lanes
        if isinstance(e, (Ramp, Broadcast)) or e.type().is_vector():
            raise _CannotVectorize
        if isinstance(e, E.Variable):
            if e.name == self.var:
                return self.ramp
            if e.name in self.vector_vars:
                return E.Variable(e.name, e.type().with_lanes(n), e.kind, e.owner)
            return e
        kids = tuple(go(c) for c in e.children())
        if not any(k.type().is_vector() for k in kids):
            return rebuild(e, kids) if kids else e
        if isinstance(e, E.Let):
            raise _CannotVectorize
        if isinstance(e, Load):
            return Load(e.type().with_lanes(n), e.buffer, kids[0])
        if isinstance(e, E.Cast):
            return E.Cast(e.type().with_lanes(n), kids[0])
        if isinstance(e, E.Call):
            args = tuple(_broadcast(k, n) for k in kids)
            return E.Call(e.type().with_lanes(n), e.name, args, e.call_kind, e.target, e.value_index)
        return rebuild(e, tuple(_broadcast(k, n) for k in kids))

    # ------------------------------------------------------------------ statements
    def visit_Store(self, s: Store) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        index = self.mutate_expr(s.index)
        if not index.type().is_vector():
            if value.type().is_vector():
                raise _CannotVectorize  # every lane would write the same element
            return s if (value is s.value and index is s.index) else Store(s.buffer, value, index, s.atomic)
        if s.atomic is not None:
            raise ScheduleError(
                f"the atomic() update of `{s.buffer}` is inside a vectorized loop; its stores are made one "
                "point at a time: compute it outside the vectorized loop, or do not vectorize that loop"
            )
        return Store(s.buffer, _broadcast(value, self.lanes), index)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        if value.type().is_vector():
            self.vector_vars.add(s.name)
        body = self.mutate(s.body)
        return LetStmt(s.name, value, body)

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
        cond = self.mutate_expr(s.condition)
        if cond.type().is_vector():
            raise _CannotVectorize
        return self.default(s)

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:  # noqa: N802
        if any(self.mutate_expr(c).type().is_vector() for c in s.children()):
            raise _CannotVectorize
        return s

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        lo, extent = self.mutate_expr(s.min), self.mutate_expr(s.extent)
        if lo.type().is_vector() or extent.type().is_vector():
            raise _CannotVectorize
        return For(s.name, lo, extent, s.for_type, self.mutate(s.body))

    def visit_Allocate(self, s: Allocate) -> Stmt:  # noqa: N802
        raise _CannotVectorize
