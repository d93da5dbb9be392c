"""calls_by_name: the Func calls of an expression grouped by name, in walk order, the same
answer each time it is asked (box_touched asks it once per Func stored around an expression)."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int
from pixelweave.engine.lower.region import calls_by_name, clear_cache

I32, F32 = Int(32), Float(32)


def call(name: str, *args: E.Expr, kind: str = "func") -> E.Call:
    return E.Call(F32, name, tuple(args), kind)


def test_calls_are_grouped_by_name_in_walk_order_and_intrinsics_left_out():
    clear_cache()
    x = E.Variable("x", I32)
    f0, f1 = call("f", x), call("f", E.Add(x, E.Const(I32, 1)))
    g0 = call("g", x)
    e = E.Add(E.Add(f0, call("sqrt_f32", g0, kind="intrinsic")), f1)
    found = calls_by_name(e)
    assert set(found) == {"f", "g"}
    assert [id(c) for c in found["f"]] == [id(f0), id(f1)] and [id(c) for c in found["g"]] == [id(g0)]
    assert calls_by_name(e) is found
    other = E.Add(f1, f0)  # a different expression with the same calls: its own order
    assert [id(c) for c in calls_by_name(other)["f"]] == [id(f1), id(f0)]
