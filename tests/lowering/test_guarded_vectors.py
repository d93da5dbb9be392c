"""A vectorized loop whose body is a guard (a GuardWithIf tail) is vectors where every lane
passes the guard and the serial loop elsewhere (engine/lower/vectorize.py): loop
partitioning then leaves the steady state as vectors alone, and every width still computes
the reference's image."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower import lower
from pixelweave.engine.lower.vectorize import vectorize_loops
from pixelweave.engine.stmt import For, ForType, IfThenElse, Ramp, Store
from pixelweave.engine.stmt_visit import walk_stmt

import pixelweave as pw

I32 = Int(32)


def guarded(parallel: bool = True) -> pw.Func:
    x, y, xi = pw.Var("x"), pw.Var("y"), pw.Var("xi")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    out = pw.Func("out")
    out[x, y] = inp[x, y] * 3 + inp[x + 1, y + 1]
    out.split(x, x, xi, 8, pw.TailStrategy.GUARD_WITH_IF).vectorize(xi)
    if parallel:
        out.parallel(y)
    return out


def stores(s) -> list[Store]:
    return [n for n in walk_stmt(s) if isinstance(n, Store)]


def test_the_steady_state_is_vectors_without_a_guard():
    body = lower(pw.Pipeline(guarded())).lowered.body
    loops = [n for n in walk_stmt(body) if isinstance(n, For) and n.name == "out.s0.x.x"]
    steady = loops[0]
    assert not any(isinstance(n, IfThenElse) for n in walk_stmt(steady.body))
    assert [isinstance(st.index, Ramp) for st in stores(steady.body)] == [True]
    # the tail tests every lane: vectors if all pass, else the guarded serial loop
    tail = loops[-1]
    (test,) = [n for n in walk_stmt(tail.body) if isinstance(n, IfThenElse) and n.else_case is not None]
    assert isinstance(stores(test.then_case)[0].index, Ramp)
    serial = test.else_case
    assert isinstance(serial, For) and serial.for_type is ForType.SERIAL


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("parallel", [False, True], ids=["serial y", "parallel y"])
def test_every_width_equals_the_reference(checked, parallel):
    pipeline = pw.Pipeline(guarded(parallel))
    fn = pipeline.compile(checked=checked)
    image = np.random.default_rng(3).integers(-1000, 1000, (12, 41)).astype(np.int32)
    for width in (1, 5, 7, 8, 9, 15, 16, 17, 31, 40):
        ours = fn([width, 11], {"input": image})
        np.testing.assert_array_equal(ours, pipeline.realize_reference([width, 11], {"input": image}), str(width))


def vector_loop(condition: E.Expr) -> For:
    v = E.Variable("v", I32)
    store = Store("b", E.Add(v, E.Const(I32, 1)), v)
    return For("v", E.Variable("base", I32), E.Const(I32, 8), ForType.VECTORIZED, IfThenElse(condition, store))


def test_an_affine_guard_tests_its_first_and_last_lane():
    v, n = E.Variable("v", I32), E.Variable("n", I32)
    out = vectorize_loops(vector_loop(E.LT(E.Add(v, E.Const(I32, 2)), n)))
    assert isinstance(out, IfThenElse)
    assert str(out.condition) == "(((base + 2) < n) && ((base + 9) < n))"  # lanes 0 and 7
    assert isinstance(out.then_case, Store) and isinstance(out.then_case.index, Ramp)
    assert isinstance(out.else_case, For) and out.else_case.for_type is ForType.SERIAL


@pytest.mark.parametrize(
    "condition",
    [
        E.LT(E.Mod(E.Variable("v", I32), E.Const(I32, 3)), E.Const(I32, 1)),  # true on every third lane
        E.EQ(E.Variable("v", I32), E.Variable("n", I32)),  # one lane
        E.LT(E.Variable("v", I32), E.Add(E.Variable("v", I32), E.Variable("n", I32))),  # v on both sides
    ],
    ids=["periodic", "equality", "both sides"],
)
def test_other_guards_stay_serial(condition):
    out = vectorize_loops(vector_loop(condition))
    assert isinstance(out, For) and out.for_type is ForType.SERIAL
