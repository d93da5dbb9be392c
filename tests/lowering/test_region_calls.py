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


def _box_text(box) -> list[tuple[str, str]]:
    return [(str(iv.lo), str(iv.hi)) for iv in box]


def test_scopes_shared_between_funcs_and_statements_give_each_box_as_a_fresh_walk():
    """box_touched with one Scopes for many questions (allocation bounds asks about every
    realization below the same loops) answers exactly what separate walks answer, also for
    a statement rebuilt around the old one and for a loop bound by a guard."""
    from pixelweave.engine.lower.region import Scopes, box_touched
    from pixelweave.engine.stmt import Evaluate, For, ForType, IfThenElse, LetStmt, Provide, make_block

    x, y, n = E.Variable("x", I32), E.Variable("y", I32), E.Variable("n", I32, "param")
    t = E.Variable("t", I32)
    one = E.Const(I32, 1)
    reads = Evaluate(E.Add(call("f", E.Add(x, one), E.Sub(t, one)), call("g", E.Mul(x, E.Const(I32, 2)), y)))
    guarded = IfThenElse(E.LT(x, E.Sub(n, one)), Provide("g", call("f", x, t), (x, y)), None)
    inner = For("x", E.Const(I32, 0), n, ForType.SERIAL, make_block([reads, guarded]))
    body = LetStmt("t", E.Add(y, E.Const(I32, 3)), inner)
    nest = For("y", E.Const(I32, -2), E.Add(n, E.Const(I32, 4)), ForType.SERIAL, body)
    rebuilt = For("y", E.Const(I32, 0), n, ForType.SERIAL, make_block([body, Evaluate(call("f", n, n))]))
    questions = [(nest, "f"), (body, "g"), (nest, "g"), (rebuilt, "f"), (inner, "f"), (rebuilt, "g"), (nest, "f")]
    scopes = Scopes()
    for stmt, name in questions:
        for calls, provides in ((True, False), (True, True), (False, True)):
            clear_cache()
            fresh = box_touched(stmt, name, calls=calls, provides=provides)
            shared = box_touched(stmt, name, calls=calls, provides=provides, scopes=scopes)
            assert (fresh is None) == (shared is None)
            if fresh is not None:
                assert _box_text(shared) == _box_text(fresh), (name, calls, provides)
    assert box_touched(nest, "g", calls=False, provides=True, scopes=scopes) is not None


def test_shared_scopes_never_answer_for_a_dropped_statement():
    """Statements made and dropped between questions: a new one may take a dropped one's
    identity, so the scopes keep what they were asked about alive."""
    from pixelweave.engine.lower.region import Scopes, box_touched
    from pixelweave.engine.stmt import Evaluate, For, ForType

    y = E.Variable("y", I32)
    scopes = Scopes()
    for k in range(60):
        loop = For("y", E.Const(I32, k), E.Const(I32, 4), ForType.SERIAL, Evaluate(call("f", E.Add(y, y))))
        box = box_touched(loop, "f", scopes=scopes)
        assert _box_text(box) == [(str(2 * k), str(2 * k + 6))]
        del loop, box
        clear_cache()  # (which also held the statement)
