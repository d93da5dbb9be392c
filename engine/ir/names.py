"""Halide's shorthands for declaring Vars and Funcs in one line:
`x, y, c = pw.vars("x y c")`, `blurx, blury = pw.funcs("blurx blury")` and
`f = pw.lambda_func(x, y, expr)` (Halide's `lambda`, a Func defined in place); and
`unused_name`, for code that writes schedules and needs new loop names."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.var import Var

_lambda_counter = itertools.count()


def vars(names: str) -> tuple[Var, ...]:  # noqa: A001 - Halide's name
    """One Var per space-separated name, in order."""
    return tuple(Var(n) for n in names.split())


def funcs(names: str) -> tuple[Func, ...]:
    """One Func per space-separated name, in order."""
    return tuple(Func(n) for n in names.split())


def lambda_func(*args: Any) -> Func:
    """A new Func `f[vars] = expr` from `lambda_func(var..., expr)` (Halide's name in
    Python: `lambda` is a keyword), named lambda_N."""
    if not args:
        raise CompileError("lambda_func needs the Vars of the Func and then its value, e.g. lambda_func(x, y, x + y)")
    *variables, value = args
    for v in variables:
        if not isinstance(v, Var):
            raise CompileError(f"lambda_func takes Vars before its value, got {type(v).__name__} {v!r}")
    f = Func(f"lambda_{next(_lambda_counter)}")
    f[tuple(variables)] = value
    return f


def unused_name(base: str, taken: Iterable[str]) -> str:
    """base, or base2, base3...: the first that is not in taken (a new loop name for a
    split or tile that must not collide with the Func's other loops)."""
    taken = set(taken)
    name, k = base, 2
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name
