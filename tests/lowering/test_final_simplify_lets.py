"""Final simplification substitutes trivial lets: one subexpression object used under two
different values of a let (sibling scopes, shadowing) gets each scope's value, though the
pass rebuilds each shared subexpression once per set of lets."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import substitute
from pixelweave.engine.lower.final_simplify import simplify_stmt
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.stmt import Block, Evaluate, LetStmt

I32 = Int(32)


def test_a_shared_subexpression_takes_each_scopes_value():
    a, y = E.Variable("a", I32), E.Variable("y", I32, "param")
    shared = E.Call(I32, "f", (E.Mul(E.Add(a, y), E.Const(I32, 3)),), "image")
    body = Block(
        [
            LetStmt("a", E.Const(I32, 1), Evaluate(shared)),
            LetStmt("a", E.Const(I32, 2), Block([Evaluate(shared), LetStmt("a", E.Add(y, y), Evaluate(shared))])),
            Evaluate(shared),
        ]
    )
    out = simplify_stmt(body)
    evaluated = [s for s in _walk(out) if isinstance(s, Evaluate)]
    texts = [str(s.value) for s in evaluated]
    assert len(texts) == 4
    assert texts[0] == str(simplify(substitute(shared, {"a": E.Const(I32, 1)})))
    assert texts[1] == str(simplify(substitute(shared, {"a": E.Const(I32, 2)})))
    assert texts[2] == texts[3] == str(simplify(shared))  # (a bound by a non-trivial let, then free again)
    assert texts[0] != texts[1] != texts[2]


def _walk(s):
    yield s
    for c in s.children():
        if hasattr(c, "children") and not isinstance(c, E.Expr):
            yield from _walk(c)

