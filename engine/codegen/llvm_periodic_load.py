"""Vector loads whose lane indices repeat a pattern, as dense loads and a shuffle.

A Func over the bytes of an interleaved row that reads another interleaved row with a
different channel count (RGBA read for RGB written, as in `src[4 * (x / 3) + c]`) indexes
its input with `(ramp(b, 1, n) / 3) * 4 + s`: not a constant stride, so it was a gather of
n single-element loads. Such an index is quasi-affine in one ramp: built from the ramp with
additions, multiplications by constants and floor divisions and remainders by positive
constants, plus scalars added outside all of these. For any such h, with D the product of
its divisors, h(b + k) - h(b) depends only on b mod D (each floor division by d sees its
operand move by a multiple of d when b moves by D), so for each residue r the lanes are
lane 0 plus a constant pattern P_r. The load is then: lane 0's address, r = b mod D at run
time, the span the pattern of r covers read as a few dense vectors (their addresses chosen
by r, so nothing outside the elements some lane reads is touched), one constant shuffle per
residue and a select on r. Patterns whose span is too wide, or periods above MAX_PERIOD,
stay gathers.
"""

from __future__ import annotations

from dataclasses import dataclass

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, Value, int_const, shuffle_operands, vector_of
from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast, Ramp, constant_int

MAX_PERIOD = 16  # residues handled (one shuffle and one select each)
MAX_CHUNKS = 4  # dense vectors read per load, at most


@dataclass(frozen=True)
class PeriodicIndex:
    """A load index as lane 0 plus a pattern chosen by a residue.

    first_lane: the scalar int32 index of lane 0; residue: the scalar int32 b mod period
    (None when the period is 1); patterns[r][k]: lane k's offset from lane 0 when the
    residue is r."""

    first_lane: E.Expr
    residue: E.Expr | None
    period: int
    patterns: tuple[tuple[int, ...], ...]


class _NotPeriodic(Exception):
    pass


class _Analysis:
    """Walks an index: checks its shape, finds the ramp's base and the period."""

    def __init__(self) -> None:
        self.base: E.Expr | None = None
        self.period = 1

    def check(self, e: E.Expr, additive: bool) -> bool:
        """Whether e depends on the ramp; raises _NotPeriodic for shapes outside the form.
        additive: e is reached from the root through additions and subtractions only (where
        a run-time scalar may be added)."""
        if constant_int(e) is not None:
            return False
        if isinstance(e, Broadcast):
            if e.value.type().is_vector() or not additive:
                raise _NotPeriodic  # a vector repeated; a scalar under a division (the pattern depends on it)
            return False
        if isinstance(e, Ramp):
            if constant_int(e.stride) is None or e.base.type().is_vector():
                raise _NotPeriodic
            if self.base is None:
                self.base = e.base
            elif not self.base.same_as(e.base):
                raise _NotPeriodic
            return True
        if isinstance(e, (E.Add, E.Sub)):
            left, right = self.check(e.a, additive), self.check(e.b, additive)
            return left or right
        if isinstance(e, E.Mul):
            if constant_int(e.b) is not None:
                return self.check(e.a, False)
            if constant_int(e.a) is not None:
                return self.check(e.b, False)
            raise _NotPeriodic
        if isinstance(e, (E.Div, E.Mod)):
            divisor = constant_int(e.b)
            if divisor is None or divisor <= 0:
                raise _NotPeriodic
            varies = self.check(e.a, False)
            if varies:
                self.period *= divisor
            return varies
        raise _NotPeriodic


def _lane_value(e: E.Expr, x: int, k: int) -> int:
    """Lane k of e when the ramp's base is x and every run-time scalar is 0 (floor
    division and remainder, as the engine's Euclidean ones for positive divisors)."""
    known = constant_int(e)
    if known is not None:
        return known
    if isinstance(e, Broadcast):
        return 0
    if isinstance(e, Ramp):
        return x + k * constant_int(e.stride)
    a, b = _lane_value(e.a, x, k), _lane_value(e.b, x, k)
    if isinstance(e, E.Add):
        return a + b
    if isinstance(e, E.Sub):
        return a - b
    if isinstance(e, E.Mul):
        return a * b
    if isinstance(e, E.Div):
        return a // b
    return a % b


def _first_lane(e: E.Expr) -> E.Expr:
    """The scalar expression of lane 0."""
    if isinstance(e, Broadcast):
        return e.value
    if isinstance(e, Ramp):
        return e.base
    if isinstance(e, E.Const):
        return e
    return type(e)(_first_lane(e.a), _first_lane(e.b))


def periodic_index(index: E.Expr, lanes: int) -> PeriodicIndex | None:
    """The index as lane 0 plus a per-residue pattern, or None when it is not of that form
    (or is a plain ramp, which the dense and strided loads already handle)."""
    if isinstance(index, (Ramp, Broadcast)) or index.type().bits != 32 or not index.type().is_int():
        return None
    analysis = _Analysis()
    try:
        if not analysis.check(index, True):
            return None
    except _NotPeriodic:
        return None
    period = analysis.period
    if period > MAX_PERIOD or analysis.base is None:
        return None
    patterns = tuple(
        tuple(_lane_value(index, r, k) - _lane_value(index, r, 0) for k in range(lanes)) for r in range(period)
    )
    residue = None
    if period > 1:
        base = analysis.base
        residue = E.Mod(base, E.Const(base.type(), period))
    return PeriodicIndex(_first_lane(index), residue, period, patterns)


@dataclass(frozen=True)
class _Chunks:
    width: int  # elements per dense load
    count: int  # loads
    starts: tuple[tuple[int, ...], ...]  # starts[r][j]: offset of load j from lane 0


def _chunks(plan: PeriodicIndex, lanes: int) -> _Chunks | None:
    """The dense loads covering each residue's span exactly: `count` vectors of `width`
    elements, the last of each residue ending at its span's last element."""
    spans = [(min(p), max(p) - min(p) + 1) for p in plan.patterns]
    width = min(lanes, min(span for _, span in spans))
    count = max(-(-span // width) for _, span in spans)
    if width < 2 or count > MAX_CHUNKS:  # single elements: a gather is as good
        return None
    starts = tuple(tuple(low + min(j * width, span - width) for j in range(count)) for low, span in spans)
    return _Chunks(width, count, starts)


def periodic_load(
    b: FunctionBuilder,
    elem: str,
    pointer: Value,
    first: Value,
    residue: Value | None,
    plan: PeriodicIndex,
    lanes: int,
    align: int,
    hint: str,
) -> Value | None:
    """Load the lanes of plan (first: lane 0's i64 element index; residue: the i32 value
    of plan.residue) as dense loads and shuffles; None when the pattern is too wide."""
    chunks = _chunks(plan, lanes)
    if chunks is None:
        return None
    is_residue = [b.icmp("eq", residue, int_const(32, r), "residue") for r in range(plan.period)] if residue else []

    def by_residue(values: list[Value]) -> Value:
        chosen = values[-1]
        for r in range(len(values) - 2, -1, -1):
            if values[r].ref != chosen.ref:
                chosen = b.select(is_residue[r], values[r], chosen, "periodic")
        return chosen

    chunk_ty = vector_of(elem, chunks.width)
    loaded = []
    for j in range(chunks.count):
        offset = by_residue([int_const(64, starts[j]) for starts in chunks.starts])
        at = b.binop("add", first, offset, "chunk")
        loaded.append(b.load(chunk_ty, b.gep(elem, pointer, at, f"{hint}.addr"), align, hint))
    first_operand, second = shuffle_operands(b, loaded, elem, chunks.width, hint)
    result_ty = vector_of(elem, lanes)
    picked = []
    for r, pattern in enumerate(plan.patterns):
        starts = chunks.starts[r]
        mask = []
        for offset in pattern:
            j = max(i for i in range(chunks.count) if starts[i] <= offset)
            mask.append(j * chunks.width + offset - starts[j])
        text = ", ".join(f"i32 {m}" for m in mask)
        picked.append(b.assign(result_ty, f"shufflevector {first_operand}, {second}, <{lanes} x i32> <{text}>", hint))
    return by_residue(picked)
