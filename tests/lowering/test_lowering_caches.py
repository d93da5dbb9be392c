"""What makes lowering fast never changes what it computes: Types are shared objects that
still equal ones made apart, and statement mutators find each class's own visit method."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int, Type
from pixelweave.engine.stmt import Evaluate, For, ForType, make_block
from pixelweave.engine.stmt_visit import StmtMutator

I32 = Int(32)


def test_types_made_apart_equal_the_shared_ones():
    assert Int(32) is Int(32)
    assert Type("int", 32) == Int(32) and Type("int", 32) is not Int(32)
    assert hash(Type("int", 32)) == hash(Int(32))
    assert {Type("float", 32, 8): 1}[Float(32).with_lanes(8)] == 1
    assert Int(32) != Int(16) and Int(32) != Float(32) and Int(32) != Int(32).with_lanes(4)
    assert Int(32).with_lanes(4).element_of() is Int(32)
    e = E.Add(E.Variable("x", Type("int", 32)), E.Const(I32, 1))  # operands' types agree
    assert e.type() == I32


def test_each_mutator_class_uses_its_own_visit_methods():
    loop = For("x", E.Const(I32, 0), E.Const(I32, 4), ForType.SERIAL, Evaluate(E.Const(I32, 0)))
    stmt = make_block([loop, Evaluate(E.Const(I32, 1))])
    seen: list[str] = []

    class Loops(StmtMutator):
        def visit_For(self, s):
            seen.append("loops")
            return s

    class Evaluates(StmtMutator):
        def visit_Evaluate(self, s):
            seen.append("evaluates")
            return s

    class LoopsToo(Loops):
        def visit_For(self, s):
            seen.append("loops too")
            return self.default(s)

    Loops().mutate(stmt)
    assert seen == ["loops"]
    seen.clear()
    Evaluates().mutate(stmt)
    assert seen == ["evaluates", "evaluates"]
    seen.clear()
    LoopsToo().mutate(stmt)
    assert seen == ["loops too"]
    seen.clear()
    Loops().mutate(stmt)
    assert seen == ["loops"]
