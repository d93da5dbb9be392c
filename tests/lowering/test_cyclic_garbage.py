"""Lowering leaves no reference cycles behind: its recursive closures (simplify's walk,
interval analysis, expression mutation, region walks) empty their own cells when done, so
their memos are freed at once instead of waiting for Python's cycle collector, whose
collections were a fifth of local Laplacian's lowering. The lowered statement must not
change (the golden tests check its text)."""

from __future__ import annotations

import gc

import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import substitute
from pixelweave.engine.lower import lower
from pixelweave.engine.lower.intervals import SymInterval, interval_of
from pixelweave.engine.lower.region import box_touched
from pixelweave.engine.lower.simplify import clear_simplify_cache, constant_difference, simplify
from pixelweave.engine.stmt import Evaluate, For, ForType

from tests.lowering.schedules import BLUR_SCHEDULES, blur

I32 = Int(32)


def _cycles_left_by(action) -> int:
    """How many unreachable objects the cycle collector finds after action() (none before)."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        action()
        return gc.collect()
    finally:
        if was_enabled:
            gc.enable()


def _index_expression() -> E.Expr:
    x, y, n = E.Variable("x", I32), E.Variable("y", I32), E.Variable("n", I32, "param")
    one = E.Const(I32, 1)
    chain = E.Sub(E.Add(E.Mul(E.Add(x, one), E.Const(I32, 3)), E.Sub(y, E.Const(I32, 2))), E.Add(x, x))
    return E.Max(E.Min(E.Add(chain, E.Mul(n, E.Const(I32, 2))), E.Sub(n, one)), E.Const(I32, 0))


def test_simplify_and_linear_forms_leave_no_cycles():
    def action():
        clear_simplify_cache()
        e = _index_expression()
        simplify(e)
        constant_difference(E.Add(e.a.a, E.Const(I32, 4)), e.a.a)

    assert _cycles_left_by(action) == 0


def test_interval_analysis_and_substitution_leave_no_cycles():
    def action():
        clear_simplify_cache()
        e = _index_expression()
        interval_of(e, {"x": SymInterval(E.Const(I32, 0), E.Variable("w", I32, "param"))})
        substitute(e, {"y": E.Const(I32, 7)})

    assert _cycles_left_by(action) == 0


def test_region_walks_leave_no_cycles():
    def action():
        clear_simplify_cache()
        x = E.Variable("x", I32)
        read = E.Call(I32, "f", (E.Add(x, E.Const(I32, 1)),), "func")
        loop = For("x", E.Const(I32, 0), E.Variable("n", I32, "param"), ForType.SERIAL, Evaluate(read))
        assert box_touched(loop, "f") is not None

    assert _cycles_left_by(action) == 0


@pytest.mark.parametrize("schedule", sorted(BLUR_SCHEDULES))
def test_a_whole_lowering_leaves_no_cycles(schedule):
    pipeline, _ = blur(schedule)
    lower(pipeline)  # what is made once per process (tables, compiled regexes) is not garbage
    assert _cycles_left_by(lambda: lower(pipeline)) == 0
