"""Vector loads of a clamped ramp (a border clamped to the image) as one masked dense load.

The first and last vectors of a row whose reads are clamped to the image's edge index their
input with `max(min(ramp(b, 1, n), hi), lo) + s`: not a dense ramp, so they were gathers, one
scalar load per lane, several per row (a 3-tap filter of bytes: three 32-lane gathers at each
end of every row cost about as much as the rest of the row). A composition of min and max with
scalars is monotone and, where it is not constant, the identity on one interval: each lane is
either its own ramp element (the lanes the clamp leaves alone), or lowered or raised to the
value of the last or first lane. So the load is a masked dense load of the lanes left alone
(masked lanes touch no memory), with the scalar values of lane 0 and lane n-1 (addresses some
lane reads) in the lanes raised and lowered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pixelweave.engine.codegen.llvm_gather import vector_suffix
from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, vector_of
from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast, Ramp


@dataclass(frozen=True)
class ClampedRamp:
    """index = clamp + the sum of terms (sign, scalar); clamp is min/max of ramp with scalars."""

    ramp: Ramp
    clamp: E.Expr
    terms: tuple[tuple[int, E.Expr], ...]


def _scalar_broadcast(e: E.Expr) -> bool:
    return isinstance(e, Broadcast) and not e.value.type().is_vector()


def _additive_terms(e: E.Expr, sign: int, out: list[tuple[int, E.Expr]]) -> None:
    if isinstance(e, E.Add):
        _additive_terms(e.a, sign, out)
        _additive_terms(e.b, sign, out)
    elif isinstance(e, E.Sub):
        _additive_terms(e.a, sign, out)
        _additive_terms(e.b, -sign, out)
    else:
        out.append((sign, e))


def _ramp_under_clamp(e: E.Expr) -> Ramp | None:
    """The dense ramp at the core of a min/max-with-scalars tree (at least one min or max)."""
    depth = 0
    while isinstance(e, (E.Min, E.Max)):
        if _scalar_broadcast(e.b):
            e = e.a
        elif _scalar_broadcast(e.a):
            e = e.b
        else:
            return None
        depth += 1
    if depth == 0 or not isinstance(e, Ramp) or e.base.type().is_vector():
        return None
    stride = e.stride.value if isinstance(e.stride, E.Const) else None
    return e if stride == 1 else None


def clamped_ramp(index: E.Expr) -> ClampedRamp | None:
    """The index as a clamped dense ramp plus scalars, or None when it is not of that form."""
    if index.type().bits != 32 or not index.type().is_int():
        return None
    terms: list[tuple[int, E.Expr]] = []
    _additive_terms(index, 1, terms)
    vectors = [(sign, t) for sign, t in terms if not _scalar_broadcast(t)]
    if len(vectors) != 1 or vectors[0][0] != 1:
        return None
    clamp = vectors[0][1]
    ramp = _ramp_under_clamp(clamp)
    if ramp is None:
        return None
    scalars = tuple((sign, t.value) for sign, t in terms if _scalar_broadcast(t))
    return ClampedRamp(ramp, clamp, scalars)


def _lane(e: E.Expr, lane: int) -> E.Expr:
    """The scalar expression of one lane of a min/max tree over a ramp."""
    if isinstance(e, Broadcast):
        return e.value
    if isinstance(e, Ramp):
        return e.base if lane == 0 else E.Add(e.base, E.Const(e.base.type(), lane))
    return type(e)(_lane(e.a, lane), _lane(e.b, lane))


def _plus_terms(e: E.Expr, terms: tuple[tuple[int, E.Expr], ...]) -> E.Expr:
    for sign, term in terms:
        e = E.Add(e, term) if sign > 0 else E.Sub(e, term)
    return e


def clamped_load(
    b: FunctionBuilder,
    module: ModuleBuilder,
    elem: str,
    plan: ClampedRamp,
    pointer: Value,
    value_of: Callable[[E.Expr], Value],
    address_of: Callable[[E.Expr], Value],
    align: int,
    hint: str,
) -> Value:
    """The lanes of plan's index loaded from pointer (value_of: an expression's value;
    address_of: a scalar index's i64 value)."""
    lanes = plan.ramp.lanes
    vector_ty = vector_of(elem, lanes)
    ramp, clamped = value_of(plan.ramp), value_of(plan.clamp)
    alone = b.icmp("eq", clamped, ramp, "unclamped")
    raised = b.icmp("sgt", clamped, ramp, "raised")

    def splat_of_lane(lane: int) -> Value:
        at = b.gep(elem, pointer, address_of(_plus_terms(_lane(plan.clamp, lane), plan.terms)), f"{hint}.addr")
        scalar = b.load(elem, at, align, hint)
        one = b.assign(vector_ty, f"insertelement {vector_ty} poison, {scalar}, i64 0", "edge")
        return b.assign(vector_ty, f"shufflevector {one}, {vector_ty} poison, <{lanes} x i32> zeroinitializer", "edge")

    edges = b.select(raised, splat_of_lane(0), splat_of_lane(lanes - 1), "edges")
    start = b.gep(elem, pointer, address_of(_plus_terms(plan.ramp.base, plan.terms)), f"{hint}.addr")
    mask_ty = f"<{lanes} x i1>"
    fn = module.intrinsic(
        f"llvm.masked.load.{vector_suffix(vector_ty)}.p0", vector_ty, ["ptr", "i32", mask_ty, vector_ty]
    )
    return b.assign(vector_ty, f"call {vector_ty} {fn}(ptr {start.ref}, i32 {align}, {alone}, {edges})", hint)
