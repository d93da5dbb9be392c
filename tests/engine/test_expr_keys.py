"""Structural keys of expressions are interned: equal expressions built apart share one key
object, so comparing (and looking up) keys of deep shared expressions costs the width of a
node, not the size of the tree (bounds share their lets' values, and a tree-wise comparison
of two such DAGs is exponential in their depth)."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int

I32 = Int(32)


def doubling_dag(depth: int) -> E.Expr:
    """x + x + ... built as a DAG of `depth` levels: 2**depth leaves as a tree."""
    e: E.Expr = E.Variable("x", I32)
    for k in range(depth):
        e = E.Add(E.Max(e, E.Const(I32, k)), e)
    return e


def test_equal_expressions_built_apart_share_one_key():
    a, b = doubling_dag(80), doubling_dag(80)
    assert a is not b
    assert a.key() is b.key()
    assert {a.key(): "found"}.get(b.key()) == "found"


def test_different_expressions_keep_different_keys():
    a, b = doubling_dag(40), doubling_dag(41)
    assert a.key() != b.key()
    assert E.Const(I32, 1).key() != E.Const(Int(64), 1).key()
