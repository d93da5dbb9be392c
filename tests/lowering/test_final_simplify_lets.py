"""Final simplification substitutes trivial lets: one subexpression object used under two
different values of a let (sibling scopes, shadowing) gets each scope's value, though the
pass rebuilds each shared subexpression once per set of lets."""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import substitute
from pixelweave.engine.lower.final_simplify import simplify_stmt
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.stmt import Block, Evaluate, LetStmt, Load, Store

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



def test_a_let_of_a_value_already_bound_becomes_an_alias():
    """Equal bounds under two names (the members of a compute_with group) become one name,
    so the tests on them can be seen to be the same."""
    y, n = E.Variable("y", I32, "param"), E.Variable("n", I32, "param")
    value = E.Min(E.Mul(y, E.Const(I32, 32)), n)
    use = E.Call(I32, "g", (E.Variable("f.min", I32), E.Variable("h.min", I32)), "image")
    out = simplify_stmt(LetStmt("f.min", value, LetStmt("h.min", value, Evaluate(use))))
    lets = [s for s in _walk(out) if isinstance(s, LetStmt)]
    assert [s.name for s in lets] == ["f.min"]
    (evaluated,) = [s for s in _walk(out) if isinstance(s, Evaluate)]
    assert str(evaluated.value) == str(E.Call(I32, "g", (E.Variable("f.min", I32),) * 2, "image"))


def test_a_value_whose_names_are_rebound_is_not_an_alias():
    """`let b = a + 1` under a rebinding of a is not the outer `let c = a + 1`, and a let
    whose first binding is shadowed is not an alias of it either."""
    y = E.Variable("y", I32, "param")
    a, c = E.Variable("a", I32), E.Variable("c", I32)
    plus = E.Add(a, E.Const(I32, 1))
    inner = LetStmt("a", E.Mul(y, y), LetStmt("b", plus, Evaluate(E.Call(I32, "g", (E.Variable("b", I32), c), "image"))))
    out = simplify_stmt(LetStmt("a", E.Add(y, y), LetStmt("c", plus, inner)))
    # c stays a let (its `a + 1` would read the inner a), and so does b: once a name is
    # found bound again, nothing is substituted through it in the rest of the pass
    assert [s.name for s in _walk(out) if isinstance(s, LetStmt)] == ["a", "c", "a", "b"]
    (evaluated,) = [s for s in _walk(out) if isinstance(s, Evaluate)]
    assert str(evaluated.value) == str(E.Call(I32, "g", (E.Variable("b", I32), c), "image"))
    shadowed = LetStmt(
        "c", plus, LetStmt("c", E.Mul(y, y), LetStmt("d", plus, Evaluate(E.Call(I32, "g", (E.Variable("d", I32), c), "image"))))
    )
    out = simplify_stmt(LetStmt("a", E.Add(y, y), shadowed))
    lets = [s for s in _walk(out) if isinstance(s, LetStmt)]
    assert [(s.name, str(s.value)) for s in lets] == [("a", str(simplify(E.Add(y, y)))), ("c", str(E.Mul(y, y)))]
    (evaluated,) = [s for s in _walk(out) if isinstance(s, Evaluate)]
    assert str(evaluated.value) == str(E.Call(I32, "g", (plus, c), "image"))  # d is `a + 1`, not the inner c


def test_an_offset_let_is_substituted_so_that_differences_fold():
    """`let hi = lo_value + 63` after `let lo = lo_value`: uses of hi read `lo + 63`, so
    `hi - lo` (a tile's extent) is the constant 63."""
    y = E.Variable("y", I32, "param")
    lo_value = E.Mul(y, E.Const(I32, 64))
    lo, hi = E.Variable("lo", I32), E.Variable("hi", I32)
    use = E.Call(I32, "g", (E.Sub(hi, lo), lo), "image")
    out = simplify_stmt(LetStmt("lo", lo_value, LetStmt("hi", E.Add(lo_value, E.Const(I32, 63)), Evaluate(use))))
    assert [s.name for s in _walk(out) if isinstance(s, LetStmt)] == ["lo"]
    (evaluated,) = [s for s in _walk(out) if isinstance(s, Evaluate)]
    assert str(evaluated.value) == str(E.Call(I32, "g", (E.Const(I32, 63), lo), "image"))
    # with offsets on both (a stencil's `min - 1` and `max + 8`): the difference is 9
    out = simplify_stmt(
        LetStmt(
            "lo",
            E.Sub(lo_value, E.Const(I32, 1)),
            LetStmt("hi", E.Add(lo_value, E.Const(I32, 8)), Evaluate(use)),
        )
    )
    assert [s.name for s in _walk(out) if isinstance(s, LetStmt)] == ["lo"]
    (evaluated,) = [s for s in _walk(out) if isinstance(s, Evaluate)]
    assert str(evaluated.value) == str(E.Call(I32, "g", (E.Const(I32, 9), lo), "image"))


def test_an_alias_whose_name_is_bound_again_stays_a_let():
    """`let b = <value of a>` is not read as `a` where a is bound again below it."""
    y = E.Variable("y", I32, "param")
    value = E.Mul(y, y)
    b = E.Variable("b", I32)
    inner = LetStmt("a", E.Add(y, y), Evaluate(E.Call(I32, "g", (b, E.Variable("a", I32)), "image")))
    out = simplify_stmt(LetStmt("a", value, LetStmt("b", value, inner)))
    lets = [s for s in _walk(out) if isinstance(s, LetStmt)]
    assert [(s.name, str(s.value)) for s in lets] == [("a", str(value)), ("b", str(value)), ("a", str(simplify(E.Add(y, y))))]


def test_a_value_read_from_memory_is_read_again():
    """`let a = f[i]`, a store to f, `let b = f[i]`: b is the stored value, not a."""
    i = E.Variable("i", I32, "param")
    read = E.Add(Load(I32, "f", i), E.Const(I32, 1))
    use = E.Call(I32, "g", (E.Variable("a", I32), E.Variable("b", I32)), "image")
    body = LetStmt("a", read, Block([Store("f", E.Const(I32, 7), i), LetStmt("b", read, Evaluate(use))]))
    out = simplify_stmt(body)
    assert [s.name for s in _walk(out) if isinstance(s, LetStmt)] == ["a", "b"]


def test_nested_substitutions_through_a_rebound_name_are_tried_once_each(monkeypatch):
    """n lets `b_k = a + k` under `let a`, with a bound again below them all: each would
    read the inner a, so each stays a let. Each failed substitution is not retried inside
    every enclosing one's retry: the inner `let a` is visited a number of times linear in n
    (it was 2^n: 16 lets took 2 s)."""
    from pixelweave.engine.lower import final_simplify

    y, a = E.Variable("y", I32, "param"), E.Variable("a", I32)
    n = 12
    inner_value = E.Mul(y, y)
    innermost = Evaluate(E.Call(I32, "g", tuple(E.Variable(f"b{k}", I32) for k in range(n)), "image"))
    body = LetStmt("a", inner_value, innermost)
    for k in reversed(range(n)):
        body = LetStmt(f"b{k}", E.Add(a, E.Const(I32, k + 1)), body)
    visits = [0]

    def counting(e):
        visits[0] += e.key() == inner_value.key()  # the inner `let a` visited (each attempt below b_0)
        return simplify(e)

    monkeypatch.setattr(final_simplify, "simplify", counting)
    out = simplify_stmt(LetStmt("a", E.Add(y, y), body))
    assert [s.name for s in _walk(out) if isinstance(s, LetStmt)] == ["a", *(f"b{k}" for k in range(n)), "a"]
    assert visits[0] <= 2 * n + 2
