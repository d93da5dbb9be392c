"""The IR text builder remembers constants, type texts and sanitized name hints; what it
hands back must always be the text made afresh (never a stale or a colliding entry)."""

from __future__ import annotations

import pickle

from pixelweave.engine.codegen import llvm_ir as L
from pixelweave.engine.ir.types import Float, Int, Type, UInt


def test_integer_constants_are_shared_and_exact():
    first = L.const(Int(32), 7)
    assert L.const(Int(32), 7) is first  # remembered
    assert str(first) == "i32 7"
    # The same value in other types is its own constant (wrapped to the width, splat in vectors).
    assert str(L.const(Int(8), 300)) == "i8 44"
    assert str(L.const(UInt(8), -1)) == "i8 -1"
    assert str(L.const(Type("int", 16, 4), 7)) == "<4 x i16> splat (i16 7)"
    assert str(L.const(UInt(1), 1)) == "i1 true"
    assert str(L.const(Float(32), 7)) == "float 0x401C000000000000"
    # A Type built directly (not the interned object) finds the same text.
    assert L.const(Type("int", 32, 1), 7) == first


def test_float_constants_keep_the_sign_of_zero():
    assert str(L.const(Float(64), -0.0)) == "double 0x8000000000000000"
    assert str(L.const(Float(64), 0.0)) == "double 0x0000000000000000"
    assert str(L.const(Float(64), -0.0)) == "double 0x8000000000000000"


def test_constants_stay_correct_past_the_tables_size():
    """More distinct constants than the table keeps (it is emptied when full)."""
    for rounds in range(2):
        for v in range(10_000):
            assert L.const(Int(64), v * 7 - rounds).ref == str(v * 7 - rounds)
    assert L.const(Int(32), -5).ref == "-5"
    assert L.const(Int(32), 7) == L.Value("i32", "7")


def test_type_texts():
    assert L.llvm_type(Type("float", 32, 8)) == "<8 x float>"
    assert L.llvm_type(Float(64)) == "double"
    assert L.scalar_type(Type("uint", 1, 4)) == "i1"
    assert L.llvm_type(Type("uint", 1, 4)) == "<4 x i1>"
    assert L.llvm_type(Type("int", 32, 1)) == "i32"


def test_name_hints_are_sanitized_once_per_builder_and_stay_unique():
    b = L.FunctionBuilder("f", "void", [("i32", "a b"), ("i32", "a b"), ("i32", "")])
    assert [p.ref for p in b.params] == ["%a_b", "%a_b.1", "%t"]
    assert b.fresh_value("i32", "a b").ref == "%a_b.2"
    assert b.fresh_value("i32", "9x").ref == "%_9x"
    other = L.FunctionBuilder("g", "void", [("i32", "a b")])
    assert other.params[0].ref == "%a_b"


def test_values_compare_by_contents():
    assert L.Value("i32", "%x") == L.Value("i32", "%x")
    assert L.Value("i32", "%x") != L.Value("i64", "%x")
    assert len({L.Value("i32", "%x"), L.Value("i32", "%x")}) == 1


def test_type_hash_is_the_fields_hash_however_made():
    t = Type("int", 32, 4)
    assert hash(t) == hash(("int", 32, 4)) == hash(Int(32).with_lanes(4))
    copy = pickle.loads(pickle.dumps(t))
    assert copy == t and hash(copy) == hash(t)
    assert {t: 1}[Type("int", 32, 4)] == 1
