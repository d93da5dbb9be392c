"""How an update definition reads the Func it updates: the shapes rfactor and atomic()
recognise (`f[L] = f[L] op e`)."""

from __future__ import annotations

from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk

# atomic() updates: the LLVM-style operation, and whether it is associative and commutative
# (Halide refuses atomic() for the others unless told to skip that test)
ATOMIC_OPS: dict[type, tuple[str, bool]] = {E.Add: ("add", True), E.Sub: ("sub", False), E.Min: ("min", True),
                                            E.Max: ("max", True)}  # fmt: skip


def is_self_call(e: E.Expr, f: Any, d: Any, value_index: int = 0) -> bool:
    """Whether e is `f[L]` (value value_index) at exactly the point the definition d writes."""
    return (
        isinstance(e, E.Call)
        and e.call_kind == "func"
        and e.target is f
        and e.value_index == value_index
        and all(x.same_as(y) for x, y in zip(e.args, d.args, strict=True))
    )


def reads_func(e: E.Expr, f: Any) -> bool:
    return any(isinstance(n, E.Call) and n.call_kind == "func" and n.target is f for n in walk(e))


def atomic_form(f: Any, d: Any) -> tuple[str, E.Expr] | None:
    """(operation, e) for an update `f[L] = f[L] + e` (also `e + f[L]`, `f[L] - e`,
    `min(f[L], e)`, `max(e, f[L])`, ...) whose e does not read f; None otherwise."""
    v = d.value
    if d.extra_values or type(v) not in ATOMIC_OPS:
        return None
    op, commutative = ATOMIC_OPS[type(v)]
    sides = ((v.a, v.b), (v.b, v.a)) if commutative else ((v.a, v.b),)
    for own, other in sides:
        if is_self_call(own, f, d) and not reads_func(other, f):
            return op, other
    return None


def is_associative(op: str) -> bool:
    return any(name == op and ok for name, ok in ATOMIC_OPS.values())
