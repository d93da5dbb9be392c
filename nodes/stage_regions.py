"""The regions over which the preview computes each stage, remembered across run-time edits.

Bounds inference (engine.reference.required_regions) takes a few milliseconds per call on a
pipeline of dozens of Funcs, as much as a stage's kernel. Its result depends on the output
box, the input images' sizes and only those scalar values that can reach a coordinate: the
ones in the arguments of calls, in the left-hand sides and reduction domains of
definitions, and in the values of the Funcs such arguments call (their value bounds bound
a coordinate computed from them). An edit of any other run-time value (a gain, an alpha)
finds the regions remembered; an edit of a crop's offset computes them again.
"""

from __future__ import annotations

import weakref
from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.pipeline import func_definitions
from pixelweave.engine.reference import required_regions

import pixelweave as pw

KEPT_PER_OUTPUT = 8


def coordinate_scalars(pipeline: pw.Pipeline) -> frozenset[str]:
    """Names of the scalars (Params, image sizes) a coordinate of some call in pipeline may
    depend on."""
    names: set[str] = set()
    value_funcs: list[pw.Func] = []  # Funcs whose values bound a coordinate

    def coordinate(e: E.Expr) -> None:
        for node in walk(e):
            if isinstance(node, E.Variable) and node.kind == "param":
                names.add(node.name)
            elif isinstance(node, E.Call) and node.call_kind == "func":
                value_funcs.append(node.target)

    for f in pipeline.funcs:
        for d in func_definitions(f):
            exprs = [*d.all_values(), *d.args] + ([d.predicate] if d.predicate is not None else [])
            for e in exprs:
                for node in walk(e):
                    if isinstance(node, E.Call) and node.call_kind != "intrinsic":
                        for arg in node.args:
                            coordinate(arg)
            for arg in d.args:
                coordinate(arg)
            if d.predicate is not None:
                coordinate(d.predicate)
            if d.rdom is not None:
                for lo, extent in d.rdom.bounds:
                    coordinate(lo)
                    coordinate(extent)
    seen: set[int] = set()
    while value_funcs:
        g = value_funcs.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        for d in func_definitions(g):
            for e in [*d.all_values(), *d.args]:
                coordinate(e)
    return frozenset(names)


class StageRegions:
    """required_regions of each previewed output, remembered per output Func by the output
    box, the input images' shapes and the values of its coordinate scalars."""

    def __init__(self) -> None:
        self._known: weakref.WeakKeyDictionary[pw.Func, tuple[frozenset[str], dict[Any, dict]]] = (
            weakref.WeakKeyDictionary()
        )
        self.computed = 0  # bounds inferences run (tests read it)

    def regions(
        self,
        pipeline: pw.Pipeline,
        box: list[tuple[int, int]],
        images: dict[str, Any],
        scalars: dict[str, Any],
    ) -> dict[str, list[tuple[int, int]]]:
        """Per Func name, the box the stage-by-stage preview computes it over (as
        required_regions gives it for pipeline's one output over box)."""
        output = pipeline.outputs[0]
        known = self._known.get(output)
        if known is None:
            known = (coordinate_scalars(pipeline), {})
            self._known[output] = known
        names, memo = known
        key = (
            tuple(box),
            tuple(sorted((name, array.shape) for name, array in images.items())),
            tuple(sorted((name, scalars.get(name)) for name in names)),
        )
        found = memo.get(key)
        if found is None:
            found = required_regions(pipeline, [box], {**images, **scalars})
            self.computed += 1
            if len(memo) >= KEPT_PER_OUTPUT:
                memo.pop(next(iter(memo)))
            memo[key] = found
        return found
