"""Equal subtrees of one expression are computed once, even when they are distinct nodes
(inferred bounds repeat subtrees), and constants that differ only in the sign of zero are
not equal."""

from __future__ import annotations

import re

import numpy as np
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import For, ForType, Load, Store

from tests.codegen.builders import buffer, var

F32 = Float(32)


def _pipeline(value_of) -> LoweredPipeline:
    x = var("x")
    body = For("x", _i(0), _i(8), ForType.SERIAL, Store("out", value_of(x), x))
    return LoweredPipeline("sharing", [buffer("a", F32), buffer("b", F32), buffer("out", F32, 1, True)], body)


def _i(v: int) -> E.Const:
    return E.Const(Int(32), v)


def _body_ir(lowered: LoweredPipeline) -> str:
    spec = resolve_target("host")
    return generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec)).ir


def test_equal_subtrees_are_emitted_once():
    def product(x: E.Expr) -> E.Expr:  # a fresh tree on every call: equal, not identical
        return E.Mul(Load(F32, "a", x), Load(F32, "b", x))

    lowered = _pipeline(lambda x: E.Add(product(x), product(x)))
    ir = _body_ir(lowered)
    assert len(re.findall(r"= fmul ", ir)) == 1
    fn = compile_pipeline(lowered, level="fast", cache=False)
    a, b = np.arange(8, dtype=np.float32), np.full(8, 3, np.float32)
    out = np.zeros(8, np.float32)
    fn({"a": a, "b": b}, {"out": out})
    np.testing.assert_array_equal(out, 2 * a * b)


def test_zero_and_negative_zero_stay_apart():
    assert E.Const(F32, 0.0).key() != E.Const(F32, -0.0).key()
    one = E.Const(F32, 1.0)

    def value(x: E.Expr) -> E.Expr:
        v = Load(F32, "a", x)
        return E.Sub(E.Div(one, E.Mul(v, E.Const(F32, 0.0))), E.Div(one, E.Mul(v, E.Const(F32, -0.0))))

    fn = compile_pipeline(_pipeline(value), level="fast", cache=False)
    out = np.zeros(8, np.float32)
    with np.errstate(all="ignore"):
        fn({"a": np.ones(8, np.float32), "b": np.ones(8, np.float32)}, {"out": out})
    assert np.all(np.isposinf(out))  # 1/0 - 1/-0 = inf - -inf
