"""Pure variables (Var) and reduction domains (RDom, RVar)."""

from __future__ import annotations

import itertools
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import cast, to_expr
from pixelweave.engine.ir.ops import attach_operators, logical_and
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import find_calls, find_variables

_var_counter = itertools.count()
_rdom_counter = itertools.count()


class Var(E.Variable):
    """A pure variable: a dimension of a Func's domain (always int32)."""

    __slots__ = ()

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name if name is not None else f"v{next(_var_counter)}", Int(32), "var")


class RVar(E.Variable):
    """One dimension of a reduction domain; iterates from min to min + extent - 1."""

    __slots__ = ()

    @property
    def rdom(self) -> RDom:
        return self.owner[0]

    @property
    def index(self) -> int:
        return self.owner[1]

    def min(self) -> E.Expr:
        return self.rdom.bounds[self.index][0]

    def extent(self) -> E.Expr:
        return self.rdom.bounds[self.index][1]


def _bound_expr(value: Any, what: str) -> E.Expr:
    e = to_expr(value)
    if e.type().is_float():
        raise CompileError(f"{what} must be an integer, but {e} has type {e.type()}")
    e = cast(Int(32), e)
    for v in find_variables(e):
        if v.kind != "param":
            raise CompileError(
                f"{what} must be known before the pipeline runs (a constant or a Param), "
                f"but it depends on {'reduction variable' if v.kind == 'rvar' else 'Var'} {v.name}"
            )
    for c in find_calls(e):
        if c.call_kind != "intrinsic":
            raise CompileError(
                f"{what} must be known before the pipeline runs (a constant or a Param), but it calls {c.name}"
            )
    return e


class RDom:
    """A reduction domain: a box of (min, extent) ranges, optionally restricted by `where`.

    Iteration is lexicographic with the first dimension (r.x) innermost, as in Halide.
    A one-dimensional RDom can be used directly as an expression (its x).
    """

    _DIM_NAMES = ("x", "y", "z", "w")

    def __init__(self, *ranges: Any, name: str | None = None) -> None:
        from pixelweave.engine.ir.param import ImageParam

        if ranges and isinstance(ranges[-1], str) and name is None:
            # Halide's bindings take the name as the last positional argument.
            *rest, name = ranges
            ranges = tuple(rest)
        if len(ranges) == 1 and isinstance(ranges[0], ImageParam):
            image = ranges[0]
            pairs = [(image.dim(i).min(), image.dim(i).extent()) for i in range(image.dimensions())]
        elif (
            len(ranges) == 1
            and isinstance(ranges[0], (list, tuple))
            and ranges[0]
            and all(isinstance(r, (list, tuple)) for r in ranges[0])
        ):
            pairs = list(ranges[0])
        elif len(ranges) % 2 == 0 and ranges and not any(isinstance(r, (list, tuple)) for r in ranges):
            pairs = [(ranges[i], ranges[i + 1]) for i in range(0, len(ranges), 2)]
        else:
            raise CompileError(
                "RDom takes a list of (min, extent) pairs, e.g. RDom([(0, 10), (0, 20)]), or an ImageParam"
            )
        self.name = name if name is not None else f"r{next(_rdom_counter)}"
        self.bounds: list[tuple[E.Expr, E.Expr]] = []
        self.vars: list[RVar] = []
        for i, pair in enumerate(pairs):
            if len(pair) != 2:
                raise CompileError(f"RDom {self.name}: range {i} must be a (min, extent) pair, got {pair!r}")
            suffix = self._DIM_NAMES[i] if i < 4 else str(i)
            what = f"the bounds of RDom {self.name} (dimension {suffix})"
            self.bounds.append((_bound_expr(pair[0], what), _bound_expr(pair[1], what)))
            self.vars.append(RVar(f"{self.name}${suffix}", Int(32), "rvar", owner=(self, i)))
        self.predicates: list[E.Expr] = []

    def dimensions(self) -> int:
        return len(self.vars)

    def defined(self) -> bool:
        """Always True: an RDom object always has its ranges (Halide's `RDom.defined`)."""
        return True

    def same_as(self, other: RDom) -> bool:
        return self is other

    def __len__(self) -> int:
        return len(self.vars)

    def __getitem__(self, i: int) -> RVar:
        return self.vars[i]

    def __getattr__(self, attr: str) -> RVar:
        if attr in self._DIM_NAMES:
            i = self._DIM_NAMES.index(attr)
            if i < len(self.__dict__.get("vars", ())):
                return self.vars[i]
            raise CompileError(f"RDom {self.__dict__.get('name')} has no dimension {attr}")
        raise AttributeError(attr)

    def where(self, predicate: Any) -> RDom:
        """Restrict the domain to points where the predicate holds (may use calls and Params)."""
        p = to_expr(predicate)
        if not p.type().is_bool():
            raise CompileError(f"RDom {self.name}.where needs a bool predicate, got {p.type()}")
        for v in find_variables(p):
            if v.kind == "var":
                raise CompileError(f"the predicate of RDom {self.name} uses pure Var {v.name}")
            if v.kind == "rvar" and v.rdom is not self:
                raise CompileError(f"the predicate of RDom {self.name} uses {v.name} of another RDom")
        self.predicates.append(p)
        return self

    def predicate(self) -> E.Expr | None:
        result = None
        for p in self.predicates:
            result = p if result is None else logical_and(result, p)
        return result

    def _as_expr(self) -> E.Expr:
        if len(self.vars) != 1:
            raise CompileError(f"RDom {self.name} has {len(self.vars)} dimensions; use {self.name}.x etc.")
        return self.vars[0]

    def __repr__(self) -> str:
        ranges = ", ".join(f"({m}, {e})" for m, e in self.bounds)
        return f"RDom {self.name}[{ranges}]"


attach_operators(RDom)
