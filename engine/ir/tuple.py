"""Tuple: several values computed together by one Func (Halide's Tuple), and the
operations that take or give Tuples element by element (select, mux)."""

from __future__ import annotations

from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import to_expr


class Tuple:
    """An ordered list of Exprs that a Func can hold at each point, `f[x] = Tuple(a, b)`.

    A reference to a Func with several values, `f[x]`, converts to the Tuple of all of them."""

    def __init__(self, *values: Any) -> None:
        if len(values) == 1 and isinstance(values[0], (list, tuple, Tuple)):
            values = tuple(values[0])
        elif len(values) == 1 and _is_tuple_ref(values[0]):
            values = tuple(values[0].elements())
        if not values:
            raise CompileError("a Tuple needs at least one value")
        self._values = [to_expr(v) for v in values]

    def size(self) -> int:
        return len(self._values)

    def as_vector(self) -> list[E.Expr]:
        return list(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __getitem__(self, i: int) -> E.Expr:
        if not isinstance(i, int) or not -len(self._values) <= i < len(self._values):
            raise CompileError(f"Tuple index {i!r} is out of range: this Tuple has {len(self._values)} values")
        return self._values[i]

    def __repr__(self) -> str:
        return f"<pixelweave.Tuple ({', '.join(str(v) for v in self._values)})>"


def _is_tuple_ref(value: Any) -> bool:
    elements = getattr(value, "elements", None)
    return callable(elements) and getattr(value, "is_tuple", lambda: False)()


def tuple_values(value: Any) -> list[Any] | None:
    """The elements of a Tuple, Python tuple or list, or reference to a Func with several
    values; None for a single value."""
    if isinstance(value, Tuple):
        return value.as_vector()
    if isinstance(value, (tuple, list)):
        return list(value)
    if _is_tuple_ref(value):
        return value.elements()
    return None


def select_tuples(args: tuple[Any, ...], select_one) -> Tuple:
    """select(c1, t1, c2, t2, ..., default) where the values are Tuples of one size: a
    Tuple of the element-wise selects. A condition may be a Tuple too (one per element)."""
    if len(args) % 2 == 0:
        raise CompileError("select takes an odd number of arguments: (c1, v1, c2, v2, ..., default)")
    parts = [tuple_values(a) for a in args]
    value_parts = [parts[k] for k in range(len(args)) if k % 2 == 1 or k == len(args) - 1]
    if any(v is None for v in value_parts) or len({len(v) for v in value_parts}) != 1:
        raise CompileError("select of Tuples needs every value to be a Tuple, all of the same size")
    n = len(value_parts[0])
    for k in range(0, len(args) - 1, 2):
        if parts[k] is not None and len(parts[k]) != n:
            raise CompileError(f"a Tuple condition of select has {len(parts[k])} elements, but the values have {n}")
    elements = [select_one(*[p[i] if p is not None else a for p, a in zip(parts, args, strict=True)]) for i in range(n)]
    return Tuple(elements)


def mux(index: Any, values: Any) -> Any:
    """values[index] (Halide's mux): the last value where index is out of range (negative
    included). A list of Tuples gives a Tuple."""
    items = tuple_values(values)
    if items is None:
        raise CompileError("mux needs a list (or Tuple) of values to choose from")
    if not items:
        raise CompileError("mux needs a non-empty list of values")
    if all(tuple_values(v) is not None and not isinstance(v, E.Expr) for v in items):
        tuples = [tuple_values(v) for v in items]
        if len({len(t) for t in tuples}) != 1:
            raise CompileError("mux of Tuples needs Tuples of one size")
        return Tuple([mux(index, [t[i] for t in tuples]) for i in range(len(tuples[0]))])
    from pixelweave.engine.ir.ops import select

    exprs = [to_expr(v) for v in items]
    t = exprs[0].type()
    for k, e in enumerate(exprs):
        if e.type() != t:
            raise CompileError(
                f"mux needs values of one type, but value 0 has type {t} and value {k} ({e}) has type {e.type()}"
            )
    idx = to_expr(index)
    if not (idx.type().is_int() or idx.type().is_uint()):
        raise CompileError(f"the index of mux must be an integer, but {idx} has type {idx.type()}")
    if len(exprs) == 1:
        return exprs[0]
    result = exprs[-1]
    for k in range(len(exprs) - 2, -1, -1):
        result = select(idx == E.Const(idx.type(), k), exprs[k], result)
    return result
