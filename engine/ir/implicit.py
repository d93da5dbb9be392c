"""Implicit variables (Halide's `_`): `f[_]` calls f with the implicit Vars `_0, _1, ...`
for the dimensions not named, and `g[x, _] = e` gives g one dimension per implicit Var
that e uses, so `g[x, _] = f[_]` defines g(x, _0, _1) = f(_0, _1) for a 2-D f."""

from __future__ import annotations

import re
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.var import Var
from pixelweave.engine.ir.visit import find_variables

PLACEHOLDER_NAME = "_"
_IMPLICIT = re.compile(r"_[0-9]+")

_ = Var(PLACEHOLDER_NAME)


def implicit_var(i: int) -> Var:
    return Var(f"_{i}")


def is_placeholder(a: Any) -> bool:
    return isinstance(a, E.Variable) and a.kind == "var" and a.name == PLACEHOLDER_NAME


def has_placeholder(args: tuple) -> bool:
    return any(is_placeholder(a) for a in args)


def expand_call_args(args: tuple, dimensions: int, who: str) -> tuple:
    """Replace `_` in the arguments of a call of something with `dimensions` dimensions by
    the implicit Vars of the dimensions left over."""
    if not has_placeholder(args):
        return args
    if sum(1 for a in args if is_placeholder(a)) > 1:
        raise CompileError(f"{who} is called with the placeholder _ more than once")
    named = len(args) - 1
    count = dimensions - named
    if count < 0:
        raise CompileError(f"{who} is called with {named} arguments and _, but has {dimensions} dimensions")
    return _replace_placeholder(args, count)


def _replace_placeholder(args: tuple, count: int) -> tuple:
    out: list[Any] = []
    for a in args:
        if is_placeholder(a):
            out.extend(implicit_var(i) for i in range(count))
        else:
            out.append(a)
    return tuple(out)


def implicit_count(exprs: list[E.Expr]) -> int:
    """How many implicit Vars the expressions use: one more than the highest index."""
    highest = -1
    for e in exprs:
        for v in find_variables(e):
            if v.kind == "var" and _IMPLICIT.fullmatch(v.name):
                highest = max(highest, int(v.name[1:]))
    return highest + 1


def expand_definition_args(args: tuple, exprs: list[E.Expr], who: str) -> tuple:
    """The left-hand side of a definition with `_` replaced by the implicit Vars the right-hand
    side uses; a right-hand side that uses implicit Vars needs `_` on the left."""
    count = implicit_count(exprs)
    if not has_placeholder(args):
        named = {a.name for a in args if isinstance(a, E.Variable)}
        if any(f"_{i}" not in named for i in range(count) if _uses(exprs, f"_{i}")):
            raise CompileError(
                f"the right-hand side of {who} uses implicit variables, but the left-hand side does not "
                "contain the placeholder symbol '_'"
            )
        return args
    if sum(1 for a in args if is_placeholder(a)) > 1:
        raise CompileError(f"the left-hand side of {who} contains the placeholder _ more than once")
    return _replace_placeholder(args, count)


def _uses(exprs: list[E.Expr], name: str) -> bool:
    return any(v.kind == "var" and v.name == name for e in exprs for v in find_variables(e))
