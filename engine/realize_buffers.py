"""Realizing into Halide-style `Buffer`s: shifted domains, output layouts and input bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pixelweave.engine.analysis.interval import Interval
from pixelweave.engine.buffer_api import Buffer
from pixelweave.engine.errors import BoundsError, InputError
from pixelweave.engine.ir.output_buffer import check_output_layout
from pixelweave.engine.reference import ReferenceEvaluator, check_sizes, resolve_inputs

if TYPE_CHECKING:
    from pixelweave.engine.pipeline import Pipeline


def as_output_buffers(value: Any) -> list[Buffer] | None:
    """The Buffers in a realize argument (one, or a list), or None when it holds sizes."""
    if isinstance(value, Buffer):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(b, Buffer) for b in value):
        return list(value)
    if isinstance(value, (list, tuple)) and any(isinstance(b, Buffer) for b in value):
        raise InputError("realize takes a list of sizes or a list of Buffers, not a mixture")
    return None


def allocate_outputs(pipeline: Pipeline, sizes: Any) -> list[Buffer]:
    """One zero-filled Buffer per output over [0, sizes), dense in the dimension order the
    output's stride constraints ask for (interleaved when the channel stride is 1)."""
    sizes = check_sizes(pipeline, sizes)
    buffers = []
    for f in pipeline.outputs:
        constraints = f.output_constraints()
        order = constraints.storage_order() if constraints is not None else list(range(len(sizes)))
        n = len(sizes)
        storage = np.zeros([sizes[d] for d in reversed(order)], dtype=f.type().numpy())
        # storage axis j holds dimension order[n - 1 - j]; the Buffer wants dimension d on axis n - 1 - d
        axis_of = {order[n - 1 - j]: j for j in range(n)}
        view = storage.transpose([axis_of[n - 1 - a] for a in range(n)]) if n else storage
        buffers.append(Buffer(view, name=f.name()))
    return buffers


def realize_into(pipeline: Pipeline, buffers: list[Buffer], inputs: Any, target: Any, checked: bool) -> None:
    """Compute every output over its buffer's domain, writing in place."""
    if len(buffers) != len(pipeline.outputs):
        raise InputError(f"the pipeline has {len(pipeline.outputs)} outputs, but {len(buffers)} Buffers were given")
    first = buffers[0]
    mins = first.mins()
    extents = [first.dim(i).extent() for i in range(first.dimensions())]
    for f, b in zip(pipeline.outputs, buffers, strict=True):
        if b.dimensions() != f.dimensions():
            raise InputError(
                f"output `{f.name()}` has {f.dimensions()} dimensions, but the Buffer given has {b.dimensions()}"
            )
        if b.mins() != mins or [b.dim(i).extent() for i in range(b.dimensions())] != extents:
            raise InputError("the Buffers of a pipeline's outputs must all cover the same domain")
        if b.type() != f.type():
            raise InputError(f"output `{f.name()}` has type {f.type()}, but the Buffer given holds {b.type()}")
        strides = [b.dim(i).stride() for i in range(b.dimensions())]
        check_output_layout(f, mins, extents, strides)
    compiled = pipeline.compile(target, checked=checked)
    compiled(extents, inputs, [b.array() for b in buffers], mins=mins)


def infer_input_bounds(pipeline: Pipeline, sizes: Any) -> None:
    """Set a zero-filled Buffer on every ImageParam that has none, covering what the
    outputs over [0, sizes) read (a Buffer's mins follow the region, as in Halide)."""
    sizes = check_sizes(pipeline, sizes)
    missing = [im for im in pipeline.images if im.get() is None]
    if not missing:
        return
    for im in missing:  # stand-ins, so that the other inputs' values can be bound
        im.set(np.zeros((1,) * im.dimensions(), dtype=im.type().numpy()))
    try:
        images, params = resolve_inputs(pipeline, None)
        evaluator = ReferenceEvaluator(pipeline, images, params)
        evaluator.infer_regions(sizes)
        regions = dict(evaluator.required_images)
    finally:
        for im in missing:
            im.reset()
    for im in missing:
        box: list[Interval] = regions.get(im.name(), [])
        if not box:
            continue
        if any(abs(v) == float("inf") for b in box for v in (b.lo, b.hi)):
            raise BoundsError(f"the region of input `{im.name()}` that the pipeline reads is unbounded")
        extents = [max(int(b.hi - b.lo + 1), 0) for b in box]
        buffer = Buffer(im.type(), extents, name=im.name())
        buffer.set_min([int(b.lo) if not b.is_empty() else 0 for b in box])
        im.set(buffer)
