"""The full-statement printer writes a subexpression shared within a statement once, as a
`let tN = ...` line before it, so its text grows with the expression DAG, not the tree."""

from __future__ import annotations

import re

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.stmt import AssertStmt, LetStmt, Store, make_block
from pixelweave.engine.stmt_printer import stmt_to_string

I32 = Int(32)


def doubling_chain(depth: int) -> E.Expr:
    """A DAG of `depth` nodes whose tree has 2**depth leaves: each level uses the one below twice."""
    e: E.Expr = E.Variable("a", I32, "param")
    for k in range(depth):
        e = E.Max(E.Min(E.Add(e, E.Const(I32, k)), E.Variable("hi", I32, "param")), E.Sub(e, E.Const(I32, 1)))
    return e


def expand_lets(text: str) -> str:
    """The printer's `let tN = v` lines substituted back into the lines after them."""
    lets: dict[str, str] = {}
    kept = []
    for line in text.splitlines():
        m = re.fullmatch(r"\s*let (t\d+) = (.*)", line)
        body = re.sub(r"\bt\d+\b", lambda n: lets.get(n.group(0), n.group(0)), line if m is None else m.group(2))
        if m is not None:
            lets[m.group(1)] = body
        else:
            kept.append(body)
    return "\n".join(kept) + "\n"


def test_shared_subexpressions_print_once_and_mean_the_same():
    e = doubling_chain(6)
    stmt = LetStmt("v", e, Store("out", E.Variable("v", I32), E.Const(I32, 0)))
    text = stmt_to_string(stmt)
    assert "let t0 = " in text
    assert expand_lets(text) == f"let v = {e}\nout[0] = v\n"


def test_printed_size_is_linear_in_the_dag():
    small, large = (len(stmt_to_string(LetStmt("v", doubling_chain(n), make_block([])))) for n in (20, 40))
    assert large < 2.5 * small, (small, large)
    assert large < 20 * 300


def test_small_shared_pieces_stay_inline():
    x = E.Variable("x", I32, "param")
    cond = E.LT(E.Add(x, E.Const(I32, 1)), E.Const(I32, 10))
    text = stmt_to_string(AssertStmt(cond, "x + 1 is {}", (E.Add(x, E.Const(I32, 1)),)))
    assert text == 'assert(((x + 1) < 10), "x + 1 is {}", (x + 1))\n'


def test_names_avoid_variables_of_the_statement():
    t0 = E.Variable("t0", I32, "param")
    e = doubling_chain(5)
    e = E.Add(E.Add(e, e), t0)
    text = stmt_to_string(LetStmt("v", e, make_block([])))
    assert "let t0 =" not in text and "let t1 = " in text
    assert expand_lets(text).splitlines()[0] == f"let v = {e}"
