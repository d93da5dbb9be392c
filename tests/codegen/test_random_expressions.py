"""Random integer expression trees: compiled code against the reference evaluator.

Hypothesis builds a recipe (a tree of operations over two inputs and constants), which
becomes one expression over Variables for engine.reference and one over Loads (scalar or
16-lane vector) for the backend; the results must be equal bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, Type, UInt
from pixelweave.engine.reference import ReferenceEvaluator
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Broadcast

from tests.codegen.builders import elementwise

TYPES = [Int(8), Int(16), Int(32), UInt(8), UInt(16), UInt(32)]
BINARY = {"add": E.Add, "sub": E.Sub, "mul": E.Mul, "div": E.Div, "mod": E.Mod, "min": E.Min, "max": E.Max}
INTRINSICS = ["bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"]
N = 64


def recipes(t: Type, depth: int) -> st.SearchStrategy:
    leaf = st.one_of(
        st.tuples(st.just("input"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("const"), st.integers(int(t.min()), int(t.max()))),
    )
    if depth == 0:
        return st.tuples(st.just(t), leaf)
    sub = recipes(t, depth - 1)
    node = st.one_of(
        leaf,
        st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), sub, sub),
        st.tuples(st.just("intrinsic"), st.sampled_from(INTRINSICS), sub, sub),
        st.tuples(st.just("select"), sub, sub, sub, sub),
        st.tuples(st.just("absd"), sub, sub),
        st.sampled_from(TYPES).flatmap(lambda u: st.tuples(st.just("cast"), recipes(u, depth - 1))),
    )
    return st.tuples(st.just(t), node)


def build(recipe: Any, leaf: Any, lanes: int) -> E.Expr:
    """The expression of a recipe; leaf(name, t) gives an input converted to t."""
    t, node = recipe
    vt = t.with_lanes(lanes)
    kind = node[0]
    if kind == "input":
        return leaf(node[1], t)
    if kind == "const":
        c = E.Const(t, node[1])
        return Broadcast(c, lanes) if lanes > 1 else c
    if kind == "binary":
        return BINARY[node[1]](build(node[2], leaf, lanes), build(node[3], leaf, lanes))
    if kind == "intrinsic":
        return E.Call(vt, node[1], (build(node[2], leaf, lanes), build(node[3], leaf, lanes)), "intrinsic")
    if kind == "select":
        cond = E.LT(build(node[1], leaf, lanes), build(node[2], leaf, lanes))
        return E.Select(cond, build(node[3], leaf, lanes), build(node[4], leaf, lanes))
    if kind == "absd":
        ut = UInt(t.bits).with_lanes(lanes)
        return E.Cast(vt, E.Call(ut, "absd", (build(node[1], leaf, lanes), build(node[2], leaf, lanes)), "intrinsic"))
    if kind == "cast":
        return E.Cast(vt, build(node[1], leaf, lanes))
    raise AssertionError(kind)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recipe=st.sampled_from(TYPES).flatmap(lambda t: recipes(t, 3)),
    lanes=st.sampled_from([1, 16]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_integer_expressions_match_the_reference(recipe, lanes: int, seed: int) -> None:
    t = recipe[0]
    rng = np.random.default_rng(seed)
    a = rng.integers(-(2**31), 2**31 - 1, N, dtype=np.int32)
    b = rng.integers(-(2**15), 2**15 - 1, N, dtype=np.int16)
    a[:4] = [0, -1, 1, -(2**31)]
    b[:4] = [0, 0, -1, 7]
    inputs = {"a": Int(32), "b": Int(16)}

    def load_leaf(name: str, u: Type, loads: dict) -> E.Expr:
        return E.Cast(u.with_lanes(lanes), loads[name])

    lowered = elementwise(
        f"random_expression_{lanes}",
        inputs,
        {"out": (t, lambda loads: build(recipe, lambda n, u: load_leaf(n, u, loads), lanes))},
        lanes,
    )
    out = np.zeros(N, t.numpy())
    compile_pipeline(lowered)({"a": a, "b": b}, {"out": out})

    scalar_expr = build(recipe, lambda n, u: E.Cast(u, E.Variable(n, inputs[n])), 1)
    evaluator = ReferenceEvaluator(None, {}, {})
    with np.errstate(all="ignore"):
        want = np.broadcast_to(evaluator.eval(scalar_expr, {"a": a, "b": b}), (N,)).astype(t.numpy())
    np.testing.assert_array_equal(out, want, err_msg=str(scalar_expr))
