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


def test_keys_compare_by_structure_not_by_when_they_were_made():
    """Identity stands for structure only while every live key is in the table: a key whose
    expressions all died is forgotten, and a new equal structure made later still gets the
    same key as any equal one alive."""
    import gc

    kept = doubling_dag(30)
    kept_key = kept.key()
    before = E.live_key_count()
    for depth in range(31, 60):
        doubling_dag(depth).key()  # made and dropped at once
    gc.collect()
    assert E.live_key_count() <= before + 2  # the dropped structures left the table
    assert doubling_dag(30).key() is kept_key
    assert doubling_dag(31).key() is doubling_dag(31).key()
    assert doubling_dag(31).key() is not kept_key


def test_copied_and_unpickled_keys_are_the_live_key():
    import copy
    import pickle

    e = doubling_dag(12)
    assert copy.deepcopy(e.key()) is e.key()
    assert pickle.loads(pickle.dumps(e.key())) is e.key()


def test_key_repr_is_the_structure():
    """Code that orders keys by their text (OpenCL's affine terms) sees the nested structure."""
    e = E.Add(E.Variable("x", I32), E.Const(I32, 2))
    assert repr(e.key()) == repr(("Add", I32, ("Variable", I32, "x", "var"), ("Const", I32, 2)))


def test_keys_made_on_two_threads_at_once_are_one_object():
    import threading

    found: list[list] = [[] for _ in range(4)]

    def make(into: list) -> None:
        into.extend(doubling_dag(k).key() for k in range(40))

    threads = [threading.Thread(target=make, args=(into,)) for into in found]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(40):
        assert len({id(keys[k]) for keys in found}) == 1
