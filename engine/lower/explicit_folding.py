"""Pass: explicit storage folding (Halide's Func.fold_storage). A dimension of a Func's
storage becomes a circular buffer of the factor the schedule gives: coordinate c lives in
slot c mod factor.

The fold is made over the outermost loop between the store level and the compute level
whose body's footprint of the Func (everything it computes and reads there) moves with the
loop variable in that dimension (and has no constant end), as Halide's StorageFolding.cpp
chooses it. It is safe when
that footprint fits the factor in every iteration:

- within one iteration every coordinate touched has a slot of its own;
- across iterations, the only values read that an earlier iteration computed are those of a
  sliding window along that same loop, which slides forwards only when the footprint's
  bounds never decrease (sliding_window.py), so a slot is overwritten only by a coordinate
  a whole factor past one no later iteration reads.

A footprint whose extent is a constant is checked here: too large is a ScheduleError naming
the Func, the dimension and the factor needed. Otherwise an assertion at the top of the
loop body checks it at run time (RuntimeFailure), as Halide's "fold factor too small"
error does. `fold_forward` is recorded for Halide's sake; Pixelweave needs no run-time
record of the direction (see above), so either direction is accepted.

Runs after allocation bounds (which sizes the unfolded region) and before the automatic
folding of storage_folding.py, which leaves a dimension folded here alone.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import find_variables
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.loop_names import describe_loop
from pixelweave.engine.lower.region import box_touched, names_used
from pixelweave.engine.lower.simplify import as_const_int, constant_difference, simplify
from pixelweave.engine.reference import dim_label
from pixelweave.engine.stmt import AssertStmt, For, ProducerConsumer, Realize, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator

I32 = Int(32)


def explicit_storage_folding(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    for info in ctx.funcs:
        if not info.schedule.storage_folds or info.is_output or info.is_inlined():
            continue  # (refused in context.py: an output's storage is its buffer, an inlined Func has none)
        if info.name in ctx.computed_per_stage:
            raise ScheduleError(
                f"{_directive(info, next(iter(info.schedule.storage_folds)))}: `{info.name}` is computed once per "
                "consumer stage that uses it, all into one storage; Pixelweave folds storage computed at one site "
                "only: store it with each computation, or compute it at a loop that encloses every use"
            )
        for var, (factor, _forward) in info.schedule.storage_folds.items():
            folder = _FoldExplicitly(info, info.pure_vars.index(var), factor)
            stmt = folder.mutate(stmt)
            if not folder.realized:
                raise ScheduleError(
                    f"{_directive(info, var)}: `{info.name}` has no storage of its own to fold; remove the "
                    "fold_storage()"
                )
    return stmt


def _directive(info: FuncInfo, var: str) -> str:
    factor, forward = info.schedule.storage_folds[var]
    tail = "" if forward else ", false"
    return f"fold_storage({var}, {factor}{tail}) of Func `{info.func.name()}`"


class _FoldExplicitly(StmtMutator):
    """Fold dimension `dim` of the realization of one Func, with the checks that make it safe."""

    def __init__(self, info: FuncInfo, dim: int, factor: int) -> None:
        self.info, self.name, self.dim, self.factor = info, info.name, dim, factor
        self.var = info.pure_vars[dim]
        self.realized = False

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        if s.name != self.name:
            return self.default(s)
        self.realized = True
        body = _CheckFootprint(self).mutate(s.body)
        return Realize(s.name, s.type, s.bounds, body, {**s.folds, self.dim: self.factor})

    def unmoved(self) -> ScheduleError:
        return ScheduleError(
            f"{_directive(self.info, self.var)}: no loop between where `{self.name}` is stored and where it is "
            f"computed moves the region of it used in {dim_label(self.dim)}, so there is nothing to fold over "
            f"(Halide after version 21 refuses it too); use store_root() or store_at() of a loop outside one "
            f"that walks {self.var}, with compute_at() inside it"
        )

    def too_small(self, loop: str, needed: int) -> ScheduleError:
        return ScheduleError(
            f"{_directive(self.info, self.var)}: each iteration of {describe_loop(loop)} uses {needed} "
            f"coordinates of `{self.name}` in {dim_label(self.dim)}, more than the fold factor {self.factor}; "
            f"use a fold factor of at least {needed}"
        )


class _CheckFootprint(StmtMutator):
    """Inside the realization: find the loops the fold is made over and check each."""

    def __init__(self, fold: _FoldExplicitly) -> None:
        self.fold = fold

    def mutate(self, s: Stmt | None) -> Stmt | None:
        if s is None or self.fold.name not in names_used(s):
            return s  # (untouched statements: nothing to check)
        return super().mutate(s)

    def visit_ProducerConsumer(self, s: ProducerConsumer) -> Stmt:  # noqa: N802
        if s.name == self.fold.name:
            raise self.fold.unmoved()  # a computation reached with no loop moving the footprint
        return self.default(s)

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        fold = self.fold
        box = box_touched(s.body, fold.name, calls=True, provides=True)
        if box is None:
            return s
        iv = box[fold.dim]
        if not iv.is_bounded():
            raise ScheduleError(
                f"{_directive(fold.info, fold.var)}: the region of `{fold.name}` used in {dim_label(fold.dim)} by "
                f"each iteration of {describe_loop(s.name)} has no bounds, so no fold factor can be shown to hold "
                "it; clamp the coordinates that read it or give it a bound()"
            )
        # As in Halide, a footprint with a constant end (a growing prefix, say) is not folded over this loop.
        constant_end = as_const_int(iv.lo) is not None or as_const_int(iv.hi) is not None
        moves = any(v.name == s.name for e in (iv.lo, iv.hi) for v in find_variables(e))
        if not moves or constant_end:
            return self.default(s)
        span = constant_difference(iv.hi, iv.lo)
        if span is not None:
            if span + 1 > fold.factor:
                raise fold.too_small(s.name, span + 1)
            return s
        extent = simplify(iv.hi - iv.lo + 1)
        if as_const_int(extent) is not None:
            if as_const_int(extent) > fold.factor:
                raise fold.too_small(s.name, as_const_int(extent))
            return s
        check = AssertStmt(
            E.LE(extent, E.Const(I32, fold.factor)),
            f"the fold factor ({fold.factor}) of dimension {fold.var} of `{fold.info.func.name()}` "
            f"(fold_storage) is too small for the {{}} coordinates that one iteration of {describe_loop(s.name)} "
            f"uses; use a fold factor of at least that",
            (extent,),
        )
        return For(s.name, s.min, s.extent, s.for_type, make_block([check, s.body]))
