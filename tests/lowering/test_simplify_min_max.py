"""The simplifier's min/max rules that keep unions of boxes small: a shared operand is
taken once (min(max(x, c), max(y, c)) -> max(min(x, y), c)) and offsets of one base
collapse (max(max(x, y), y + 2) -> max(x, y + 2)). Checked on random trees by value."""

from __future__ import annotations

import random

import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.simplify import simplify

I32 = Int(32)
NAMES = ["a", "b", "c"]


def v(name: str) -> E.Variable:
    return E.Variable(name, I32, "param")


def k(value: int) -> E.Const:
    return E.Const(I32, value)


def evaluate(e: E.Expr, env: dict[str, int]) -> int:
    if isinstance(e, E.Const):
        return e.value
    if isinstance(e, E.Variable):
        return env[e.name]
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    if isinstance(e, E.Add):
        return a + b
    if isinstance(e, E.Sub):
        return a - b
    if isinstance(e, E.Mul):
        return a * b
    if isinstance(e, E.Div):
        return a // b  # floor division: Halide's for a positive divisor
    if isinstance(e, E.Min):
        return min(a, b)
    if isinstance(e, E.Max):
        return max(a, b)
    raise AssertionError(type(e).__name__)


def tree_size(e: E.Expr) -> int:
    return 1 + sum(tree_size(c) for c in e.children())


def test_clamped_neighbours_collapse_to_one_clamp():
    lo, hi, x = v("lo"), v("hi"), v("x")

    def clamp(e: E.Expr) -> E.Expr:
        return E.Max(E.Min(e, hi), lo)

    union = E.Min(E.Min(clamp(E.Sub(x, k(1))), clamp(x)), clamp(E.Add(x, k(1))))
    assert simplify(union).same_as(simplify(clamp(E.Sub(x, k(1)))))


def test_offsets_of_one_base_keep_the_largest():
    x, y = v("x"), v("y")
    union = E.Max(E.Max(E.Max(x, E.Add(y, k(1))), E.Add(y, k(3))), E.Add(y, k(2)))
    assert simplify(union).same_as(simplify(E.Max(x, E.Add(y, k(3)))))
    union = E.Min(E.Min(x, E.Sub(y, k(1))), y)
    assert simplify(union).same_as(simplify(E.Min(x, E.Sub(y, k(1)))))


def random_tree(rng: random.Random, depth: int) -> E.Expr:
    if depth == 0 or rng.random() < 0.2:
        leaf = v(rng.choice(NAMES))
        offset = rng.randint(-3, 3)
        return E.Add(leaf, k(offset)) if offset else leaf
    op = rng.choice([E.Min, E.Max, E.Min, E.Max, E.Add, E.Sub])
    return op(random_tree(rng, depth - 1), random_tree(rng, depth - 1))


@pytest.mark.parametrize("seed", range(6))
def test_random_min_max_trees_keep_their_value(seed):
    rng = random.Random(seed)
    for _ in range(60):
        e = random_tree(rng, 5)
        s = simplify(e)
        assert tree_size(s) <= tree_size(e)
        for _ in range(8):
            env = {n: rng.randint(-20, 20) for n in NAMES}
            assert evaluate(s, env) == evaluate(e, env), (str(e), str(s), env)


@pytest.mark.parametrize("c", [1, 4, 32])
def test_shift_inwards_last_vector_start_is_hi_minus_factor_plus_one(c):
    """min(lo + ((hi - lo + c) / c) * c - c, hi - c + 1): the first operand is never the
    smaller one, so the min is its second operand, whatever lo and hi are."""
    lo, hi = v("lo"), v("hi")
    rounded = E.Mul(E.Div(E.Add(E.Sub(hi, lo), k(c)), k(c)), k(c))
    last = E.Sub(E.Add(lo, rounded), k(c))
    assert simplify(E.Min(last, E.Sub(hi, k(c - 1)))).same_as(simplify(E.Sub(hi, k(c - 1))))
    assert simplify(E.Max(E.Sub(hi, k(c - 1)), last)).same_as(simplify(last))
    e = E.Min(last, E.Sub(hi, k(c - 1)))
    for lo_value in range(-40, 40, 7):
        for hi_value in range(lo_value - 3, lo_value + 70, 5):
            env = {"lo": lo_value, "hi": hi_value}
            assert evaluate(simplify(e), env) == evaluate(e, env)


@pytest.mark.parametrize("offset", [0, -1, -5])
def test_a_rounded_up_term_is_not_assumed_larger_than_it_is(offset):
    """With a smaller constant the rounded term can be the smaller one: the min stays."""
    lo, hi = v("lo"), v("hi")
    rounded = E.Mul(E.Div(E.Add(E.Sub(hi, lo), k(8 + offset)), k(8)), k(8))
    e = E.Min(E.Sub(E.Add(lo, rounded), k(8)), E.Sub(hi, k(7)))
    if offset == 0:
        assert simplify(e).same_as(simplify(E.Sub(hi, k(7))))
    else:
        assert isinstance(simplify(e), E.Min)


def count_operand(e: E.Expr, operand: E.Expr) -> int:
    return int(e.same_as(operand)) + sum(count_operand(c, operand) for c in e.children())


def test_an_operand_repeated_deep_in_a_chain_is_taken_once():
    """min(min(min(min(x, y), z), x), y): the box unions of interpolate's pyramid repeat
    operands three levels down; the simplifier keeps each once."""
    x, y, z = v("a"), v("b"), E.Div(v("c"), k(3))
    chain = E.Min(E.Min(E.Min(E.Min(x, y), z), x), y)
    s = simplify(chain)
    assert count_operand(s, x) == 1 and count_operand(s, y) == 1
    assert simplify(E.Max(x, E.Max(z, E.Max(y, x)))).same_as(simplify(E.Max(z, E.Max(y, x))))
    mixed = E.Min(E.Max(E.Min(x, y), z), x)  # x inside a max: not a min's operand, kept
    assert count_operand(simplify(mixed), x) == 2


@pytest.mark.parametrize("c", [2, 3, 8])
def test_floor_divisions_of_offsets_are_ordered(c):
    """x / c <= (x + k) / c for k >= 0 (floor division by a positive constant), so
    max(x / c, (x + 1) / c) is (x + 1) / c and min(...) is x / c."""
    x = v("a")
    low, high = E.Div(x, k(c)), E.Div(E.Add(x, k(1)), k(c))
    assert simplify(E.Max(low, high)).same_as(simplify(high))
    assert simplify(E.Max(high, low)).same_as(simplify(high))
    assert simplify(E.Min(high, low)).same_as(simplify(low))
    other = E.Div(E.Add(v("b"), k(1)), k(c))  # no constant difference: kept
    assert isinstance(simplify(E.Max(low, other)), E.Max)
    different = E.Div(E.Add(x, k(1)), k(c + 1))  # another divisor: kept
    assert isinstance(simplify(E.Min(low, different)), E.Min)


def random_tree_with_divisions(rng: random.Random, depth: int) -> E.Expr:
    if depth == 0 or rng.random() < 0.2:
        leaf = v(rng.choice(NAMES))
        offset = rng.randint(-3, 3)
        leaf = E.Add(leaf, k(offset)) if offset else leaf
        return E.Div(leaf, k(rng.choice([2, 3]))) if rng.random() < 0.4 else leaf
    op = rng.choice([E.Min, E.Max, E.Min, E.Max, E.Add])
    return op(random_tree_with_divisions(rng, depth - 1), random_tree_with_divisions(rng, depth - 1))


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_with_divisions_and_repeats_keep_their_value(seed):
    rng = random.Random(100 + seed)
    for _ in range(60):
        e = random_tree_with_divisions(rng, 5)
        s = simplify(e)
        assert tree_size(s) <= tree_size(e)
        for _ in range(8):
            env = {n: rng.randint(-20, 20) for n in NAMES}
            assert evaluate(s, env) == evaluate(e, env), (str(e), str(s), env)
