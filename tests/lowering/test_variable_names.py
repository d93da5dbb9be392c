"""VariableNames: the variables of each subexpression, answered once per shared subtree."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.variable_names import VariableNames

I32 = Int(32)


def test_names_of_nested_and_shared_subexpressions():
    x, y, z = (E.Variable(n, I32) for n in ("x", "y", "z"))
    shared = E.Add(x, E.Const(I32, 1))
    e = E.Max(E.Min(shared, y), E.Sub(shared, E.Const(I32, 2)))
    names = VariableNames()
    assert names(e) == {"x", "y"}
    assert names(shared) == {"x"}
    assert names(E.Const(I32, 3)) == frozenset()
    assert names.uses(E.Mul(e, z), "z") and not names.uses(e, "z")


def test_a_chain_deeper_than_the_recursion_limit():
    e: E.Expr = E.Variable("v", I32)
    for i in range(5000):
        e = E.Add(e, E.Variable(f"w{i % 3}", I32))
    assert VariableNames()(e) == {"v", "w0", "w1", "w2"}
