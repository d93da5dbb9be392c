"""Boundary conditions: a Func defined everywhere from an image or Func with known bounds.

Each condition rewrites the coordinates so that the source is only read inside its bounds;
the final clamp is a no-op on values but gives interval analysis tight bounds. The
optional `name` (not in Halide) names the new Func, so that a node graph can keep its node
ids in every Func name.
"""

from __future__ import annotations

from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir import ops
from pixelweave.engine.ir.coerce import cast, is_python_number, literal_of_type, to_expr
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.param import ImageParam
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.var import Var

Bounds = list[tuple[Any, Any] | None]


def _source_bounds(source: Func | ImageParam, bounds: Bounds | None, kind: str) -> list:
    if isinstance(source, ImageParam):
        dims = source.dimensions()
        if bounds is None:
            bounds = [(source.dim(i).min(), source.dim(i).extent()) for i in range(dims)]
    elif isinstance(source, Func):
        dims = source.dimensions()
        if bounds is None:
            raise CompileError(f"{kind} of Func `{source.name()}` needs bounds: a (min, extent) pair per dimension")
    else:
        raise CompileError(f"{kind} needs an ImageParam or a Func, got {type(source).__name__}")
    if len(bounds) > dims:
        raise CompileError(f"{kind}: {len(bounds)} bounds given for a source with {dims} dimensions")
    result = []
    for i in range(dims):
        pair = bounds[i] if i < len(bounds) else None
        if pair is None:
            result.append(None)
            continue
        lo, extent = (cast(Int(32), to_expr(v)) for v in pair)
        result.append((lo, extent))
    return result


def _name(source: Func | ImageParam) -> str:
    return source.name()


def _build(
    source: Func | ImageParam, bounds: Bounds | None, kind: str, coord_fn, value_fn=None, name: str | None = None
) -> Func:
    pairs = _source_bounds(source, bounds, kind)
    args = [Var(f"{kind}_{i}") for i in range(len(pairs))]
    coords, inside = [], None
    for v, pair in zip(args, pairs, strict=True):
        if pair is None:
            coords.append(v)
            continue
        lo, extent = pair
        hi = lo + extent - 1
        cond = (v >= lo) & (v <= hi)
        wrapped = ops.clamp(coord_fn(v, lo, extent), lo, hi)
        # Inside the bounds the coordinate is itself; the clamp around it (a no-op on values)
        # gives interval analysis tight bounds and compiled code a clamp-free fast path.
        coords.append(
            ops.clamp(v, lo, hi)
            if kind in ("repeat_edge", "constant_exterior")
            else ops.clamp(ops.select(cond, v, wrapped), lo, hi)
        )
        inside = cond if inside is None else inside & cond
    f = Func(name or f"{_name(source)}_{kind}")
    value = source[tuple(coords)]
    f[tuple(args)] = value_fn(value, inside) if value_fn is not None else value
    return f


def repeat_edge(source: Func | ImageParam, bounds: Bounds | None = None, name: str | None = None) -> Func:
    """Outside the bounds, the nearest edge pixel (clamp to edge)."""
    return _build(source, bounds, "repeat_edge", lambda v, lo, extent: v, name=name)


def constant_exterior(
    source: Func | ImageParam, value: Any, bounds: Bounds | None = None, name: str | None = None
) -> Func:
    """Outside the bounds, a constant value."""
    t = source.type()
    if is_python_number(value):
        exterior = literal_of_type(value, t, " in constant_exterior")
    else:
        exterior = to_expr(value)
    if exterior.type() != t:
        raise CompileError(
            f"constant_exterior: the exterior value {exterior} has type {exterior.type()}, "
            f"but `{source.name()}` has type {t}"
        )

    def pick(inner: E.Expr, inside: E.Expr | None) -> E.Expr:
        return inner if inside is None else ops.select(inside, inner, exterior)

    return _build(source, bounds, "constant_exterior", lambda v, lo, extent: v, pick, name=name)


def repeat_image(source: Func | ImageParam, bounds: Bounds | None = None, name: str | None = None) -> Func:
    """Outside the bounds, the image tiles the plane (wrap around)."""
    return _build(source, bounds, "repeat_image", lambda v, lo, extent: (v - lo) % extent + lo, name=name)


def mirror_image(source: Func | ImageParam, bounds: Bounds | None = None, name: str | None = None) -> Func:
    """Outside the bounds, the image reflected with the edge pixel repeated (abccba)."""

    def coord(v: E.Expr, lo: E.Expr, extent: E.Expr) -> E.Expr:
        c = (v - lo) % (2 * extent)
        return ops.select(c < extent, c, 2 * extent - 1 - c) + lo

    return _build(source, bounds, "mirror_image", coord, name=name)


def mirror_interior(source: Func | ImageParam, bounds: Bounds | None = None, name: str | None = None) -> Func:
    """Outside the bounds, the image reflected about the edge pixel (abcba)."""

    def coord(v: E.Expr, lo: E.Expr, extent: E.Expr) -> E.Expr:
        limit = extent - 1
        c = (v - lo) % (2 * limit)
        return ops.select(c < extent, c, 2 * limit - c) + lo

    return _build(source, bounds, "mirror_interior", coord, name=name)


class BoundaryConditions:
    """Halide's namespace of boundary conditions (`BoundaryConditions.repeat_edge(...)`)."""

    repeat_edge = staticmethod(repeat_edge)
    constant_exterior = staticmethod(constant_exterior)
    repeat_image = staticmethod(repeat_image)
    mirror_image = staticmethod(mirror_image)
    mirror_interior = staticmethod(mirror_interior)
