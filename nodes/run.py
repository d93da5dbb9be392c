"""Running a built graph: the size of each output from its inputs, then one compiled engine
Pipeline per group of equally sized outputs (Halide realizes several outputs together only
when they share a size)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pixelweave.engine.ir.expr import Const, Expr
from pixelweave.engine.ir.visit import find_variables, substitute
from pixelweave.engine.lower.simplify import simplify
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.graph import BuiltGraph

import pixelweave as pw


def input_environment(graph: BuiltGraph, images: dict[str, np.ndarray], params: dict[str, Any]) -> dict[str, Expr]:
    """The values of the image sizes and parameters, to evaluate extents with."""
    env: dict[str, Expr] = {}
    for name, image in graph.image_params.items():
        if name not in images:
            raise NodeError(f"no image was given for input `{name}`", name)
        array = images[name]
        if array.ndim != image.dimensions():
            raise NodeError(
                f"input `{name}` needs an array with {image.dimensions()} dimensions, got shape {array.shape}", name
            )
        for i in range(image.dimensions()):
            env[f"{name}.extent.{i}"] = _int(array.shape[array.ndim - 1 - i])
            env[f"{name}.min.{i}"] = _int(0)
    for name, p in graph.scalar_params.items():
        value = params.get(name, p.get())
        env[name] = pw.cast(p.type(), value) if not isinstance(value, Expr) else value
    return env


def _int(n: int) -> Expr:
    return pw.cast(pw.Int(32), int(n))


def evaluate_extent(e: Expr, env: dict[str, Expr]) -> int:
    """The integer value of an extent expression once input sizes and parameters are known."""
    value = simplify(substitute(e, env))
    if not isinstance(value, Const):
        unknown = ", ".join(sorted({v.name for v in find_variables(value)})) or str(value)
        raise NodeError(f"cannot compute an output size: it depends on {unknown}")
    return int(value.value)


def output_sizes(graph: BuiltGraph, images: dict[str, np.ndarray], params: dict[str, Any]) -> dict[str, list[int]]:
    """Per output node id, the sizes to realize it over (Func dimension order)."""
    env = input_environment(graph, images, params)
    sizes = {}
    for node_id, value in zip(graph.output_ids, graph.output_values(), strict=True):
        sizes[node_id] = [evaluate_extent(e, env) for e in value.extents]
        if any(s <= 0 for s in sizes[node_id]):
            raise NodeError(f"the output would be empty (size {sizes[node_id]})", node_id)
    return sizes


class GraphRunner:
    """Compiles a built graph once per target and runs it on images and parameter values."""

    def __init__(self, graph: BuiltGraph) -> None:
        self.graph = graph
        self._pipelines: dict[tuple[str, ...], pw.Pipeline] = {}

    def groups(self, sizes: dict[str, list[int]]) -> list[tuple[tuple[str, ...], list[int]]]:
        """Output ids grouped by equal size, in document order."""
        groups: dict[tuple[int, ...], list[str]] = {}
        for node_id in self.graph.output_ids:
            groups.setdefault(tuple(sizes[node_id]), []).append(node_id)
        return [(tuple(ids), list(size)) for size, ids in groups.items()]

    def pipeline(self, ids: tuple[str, ...]) -> pw.Pipeline:
        if ids not in self._pipelines:
            self._pipelines[ids] = pw.Pipeline([self.graph.nodes[i].outputs["out"].func for i in ids])
        return self._pipelines[ids]

    def compile(
        self,
        sizes: dict[str, list[int]],
        target: str = "host",
        level: str = "full",
        profile: bool = False,
        device: str | None = None,
    ):
        """The compiled callables, one per output group (`device`: the OpenCL device
        "platform:device" for target "opencl", None for the default one)."""
        extra = {"device": device} if device is not None else {}
        return [
            (ids, size, self.pipeline(ids).compile(target, level=level, profile=profile, **extra))
            for ids, size in self.groups(sizes)
        ]

    def run(
        self,
        images: dict[str, np.ndarray],
        params: dict[str, Any] | None = None,
        target: str = "host",
        level: str = "full",
        device: str | None = None,
    ) -> dict[str, np.ndarray]:
        """Every output by node id. target "reference" evaluates with the reference evaluator;
        `device` picks the OpenCL device of target "opencl" ("platform:device")."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.graph.scalar_params))
        if unknown:
            known = ", ".join(sorted(self.graph.scalar_params)) or "none"
            raise NodeError(f"unknown parameter `{unknown[0]}` (the pipeline's parameters: {known})")
        sizes = output_sizes(self.graph, images, params)
        results: dict[str, np.ndarray] = {}
        for ids, size in self.groups(sizes):
            p = self.pipeline(ids)
            # only what this pipeline reads: a connected but unused input is not an error
            inputs: dict[str, Any] = {im.name(): images[im.name()] for im in p.images}
            inputs.update({q.name: params[q.name] for q in p.params if q.name in params})
            if target == "reference":
                out = p.realize_reference(size, inputs)
            else:
                extra = {"device": device} if device is not None else {}
                out = p.compile(target, level=level, **extra)(size, inputs)
            outs = out if isinstance(out, list) else [out]
            results.update(zip(ids, outs, strict=True))
        return results
