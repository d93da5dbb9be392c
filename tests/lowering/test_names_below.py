"""NamesBelow: the names a kind of statement carries below each statement, remembered by
identity for one pass. A rebuilt statement is a new object and gets its own answer; the
subtrees it kept keep theirs (the table is never stale)."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.names_below import NamesBelow
from pixelweave.engine.stmt import Block, Evaluate, For, ForType, LetStmt, ProducerConsumer, Realize, Stmt

I32 = Int(32)


def _produced(s: Stmt) -> str | None:
    return s.name if isinstance(s, ProducerConsumer) and s.is_producer else None


def _nop() -> Stmt:
    return Evaluate(E.Const(I32, 0))


def test_names_of_producers_below_each_statement():
    names = NamesBelow(_produced)
    f = ProducerConsumer("f", True, _nop())
    g = ProducerConsumer("g", True, ProducerConsumer("h", True, _nop()))
    consume = ProducerConsumer("f", False, _nop())  # a consumer: not a name
    loop = For("x", E.Const(I32, 0), E.Const(I32, 4), ForType.SERIAL, Block([f, consume]))
    root = LetStmt("t", E.Const(I32, 1), Block([loop, g]))
    assert names(root) == {"f", "g", "h"}
    assert names(loop) == {"f"} and names(g) == {"g", "h"} and names(consume) == frozenset()
    assert names(root) is names(root)  # remembered

    # A rewrite keeps the loop and replaces g: the new root has its own answer.
    rewritten = LetStmt("t", E.Const(I32, 1), Block([loop, ProducerConsumer("k", True, _nop())]))
    assert names(rewritten) == {"f", "k"}
    assert names(root) == {"f", "g", "h"}


def test_a_shared_subtree_and_another_kind_of_name():
    realized = NamesBelow(lambda s: s.name if isinstance(s, Realize) else None)
    inner = Realize("b", I32, ((E.Const(I32, 0), E.Const(I32, 4)),), _nop())
    outer = Realize("a", I32, ((E.Const(I32, 0), E.Const(I32, 4)),), Block([inner, inner]))
    assert realized(outer) == {"a", "b"} and realized(inner) == {"b"}
    assert realized(Block([_nop(), _nop()])) == frozenset()
