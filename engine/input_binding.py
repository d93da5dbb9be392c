"""Binding an algorithm's inputs: the algorithm written against ImageParams and Params (a
Generator's InputBuffers and InputScalars) is made to read other Funcs (with their extents)
and Exprs instead, so it can run inside a larger pipeline (a generator used as a node of a
document).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import mutate
from pixelweave.engine.schedule import StageSchedule


@dataclass(frozen=True)
class ImageBinding:
    """What an ImageParam becomes: a Func of the same type and dimensions, defined over
    mins 0 and the given extents (int32 Exprs, one per dimension)."""

    func: Func
    extents: tuple[E.Expr, ...]


def bind_inputs(
    outputs: list[Func], images: dict[ImageParam, ImageBinding], scalars: dict[Param, E.Expr] | None = None
) -> None:
    """Rewrite, in place, every Func the outputs reach so that it reads each bound image's
    Func instead (calls of the image become calls of the Func, `image.dim(i).min()` becomes
    0 and `extent()` the binding's extent) and each bound Param's Expr instead of the Param.
    Reading an image's stride, or an image with an `in_()` wrapper, is refused (a Func has
    neither)."""
    from pixelweave.engine.pipeline import Pipeline

    for image, binding in images.items():
        _check_binding(image, binding)
    for param, value in (scalars or {}).items():
        if value.type() != param.type():
            raise CompileError(f"input `{param.name}` is {param.type()}; it cannot be bound to a {value.type()} value")
    rewrite = _rewriter(images, scalars or {})
    for f in Pipeline(outputs).funcs:
        for d in [f.definition(), *f.updates()]:
            _rewrite_definition(d, rewrite)
        bounds = f.schedule_of().bounds
        for var, (lo, extent) in list(bounds.items()):
            bounds[var] = tuple(rewrite(v) if isinstance(v, E.Expr) else v for v in (lo, extent))


def _check_binding(image: ImageParam, binding: ImageBinding) -> None:
    f = binding.func
    if image.wrapping is not None:
        raise CompileError(f"input `{image.name()}` has an in_() wrapper, which a bound input cannot keep")
    if f.type() != image.type() or f.dimensions() != image.dimensions():
        raise CompileError(
            f"input `{image.name()}` is {image.type()} with {image.dimensions()} dimensions; it cannot read "
            f"Func `{f.name()}`, which is {f.type()} with {f.dimensions()}"
        )
    if len(binding.extents) != image.dimensions():
        raise CompileError(
            f"input `{image.name()}` has {image.dimensions()} dimensions, but {len(binding.extents)} extents were given"
        )
    if any(e.type() != Int(32) for e in binding.extents):
        raise CompileError(f"the extents bound to input `{image.name()}` must be int32 expressions")


def _rewriter(images: dict[ImageParam, ImageBinding], scalars: dict[Param, E.Expr]) -> Callable[[E.Expr], E.Expr]:
    by_id = {id(image): (image, b) for image, b in images.items()}
    scalar_by_id = {id(p): value for p, value in scalars.items()}

    def fn(node: E.Expr) -> E.Expr | None:
        if isinstance(node, E.Variable) and node.kind == "param" and id(node.owner) in scalar_by_id:
            return scalar_by_id[id(node.owner)]
        if isinstance(node, E.Call) and node.call_kind == "image" and id(node.target) in by_id:
            _, b = by_id[id(node.target)]
            args = tuple(mutate(a, fn) for a in node.args)
            return E.Call(node.type(), b.func.name(), args, "func", b.func, 0)
        if isinstance(node, E.Variable) and node.kind == "param" and id(node.owner) in by_id:
            image, b = by_id[id(node.owner)]
            _, field, index = node.name.rsplit(".", 2)
            if field == "min":
                return E.int_const(0)
            if field == "extent":
                return b.extents[int(index)]
            raise CompileError(
                f"the algorithm reads the {field} of input `{image.name()}` (dimension {index}); a bound input "
                "has only mins and extents"
            )
        return None

    return lambda e: mutate(e, fn)


def _rewrite_definition(d: Definition, rewrite: Callable[[E.Expr], E.Expr]) -> None:
    if d.schedule is not None:
        _rewrite_specializations(d.schedule, rewrite)
    d.value = rewrite(d.value)
    d.extra_values = tuple(rewrite(v) for v in d.extra_values)
    d.args = tuple(rewrite(a) for a in d.args)
    if d.predicate is not None:
        d.predicate = rewrite(d.predicate)
    if d.rdom is not None:
        d.rdom.bounds = [(rewrite(lo), rewrite(extent)) for lo, extent in d.rdom.bounds]
        d.rdom.predicates = [rewrite(p) for p in d.rdom.predicates]


def _rewrite_specializations(schedule: StageSchedule, rewrite: Callable[[E.Expr], E.Expr]) -> None:
    """specialize() conditions may test the bound Params and image sizes too."""
    for spec in schedule.specializations:
        if spec.condition is not None:
            spec.condition = rewrite(spec.condition)
        if spec.schedule is not None:
            _rewrite_specializations(spec.schedule, rewrite)
