"""The sizes the automatic scheduler plans for, from `set_estimate(s)` as in Halide.

Every output needs an estimate of each dimension; an input image needs estimates when the
algorithm reads its size (a boundary condition, an RDom over it); a Param without an
estimate counts at its current value. A missing estimate is an error that names the Func
or input and the call that gives it.
"""

from __future__ import annotations

from pixelweave.engine.analysis.interval import Interval
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.param import ImageParam
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.pipeline import Pipeline, definition_exprs, func_definitions

Box = list[Interval]


def output_boxes(pipeline: Pipeline) -> dict[int, Box]:
    """The estimated region of each output, or ScheduleError naming what is missing."""
    boxes: dict[int, Box] = {}
    for f in pipeline.outputs:
        given = f.estimates()
        names = [a.name for a in f.args()]
        missing = [n for n in names if n not in given]
        if missing:
            example = ", ".join(f"({0}, {1000})" for _ in names)
            raise ScheduleError(
                f"the automatic scheduler needs the size of output Func `{f.name()}`: dimension"
                f"{'s' if len(missing) > 1 else ''} {', '.join(missing)} {'have' if len(missing) > 1 else 'has'} "
                f"no estimate; call {f.name()}.set_estimate({missing[0]}, min, extent) for each, or "
                f"{f.name()}.set_estimates([{example}])"
            )
        boxes[id(f)] = [Interval(given[n][0], given[n][0] + given[n][1] - 1) for n in names]
    return boxes


def _images_whose_size_is_read(pipeline: Pipeline) -> dict[int, ImageParam]:
    found: dict[int, ImageParam] = {}
    for f in pipeline.funcs:
        for d in func_definitions(f):
            for e in definition_exprs(d):
                for node in walk(e):
                    if isinstance(node, E.Variable) and node.kind == "param" and isinstance(node.owner, ImageParam):
                        found.setdefault(id(node.owner), node.owner)
    return found


def parameter_scope(pipeline: Pipeline) -> dict[str, Interval]:
    """Point intervals for every Param and every input dimension the algorithm reads."""
    scope: dict[str, Interval] = {}
    for p in pipeline.params:
        value = p.estimate if p.estimate is not None else p.get()
        if value is None:
            raise ScheduleError(
                f"the automatic scheduler needs a value for Param `{p.name}`: give it a default, "
                f"set() it, or call {p.name}.set_estimate(value)"
            )
        scope[p.name] = Interval(value, value)
    for image in _images_whose_size_is_read(pipeline).values():
        given = image.estimates()
        missing = [i for i in range(image.dimensions()) if i not in given]
        if missing:
            example = ", ".join("(0, 1000)" for _ in range(image.dimensions()))
            raise ScheduleError(
                f"the automatic scheduler needs the size of input image `{image.name()}` (the algorithm reads "
                f"its bounds): dimension{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
                f"{'have' if len(missing) > 1 else 'has'} no estimate; call "
                f"{image.name()}.set_estimates([{example}]) with its (min, extent) per dimension"
            )
        for i in range(image.dimensions()):
            lo, extent = given[i]
            dim = image.dim(i)
            scope[dim.min().name] = Interval(lo, lo)
            scope[dim.extent().name] = Interval(extent, extent)
    return scope
