"""A node's image computed on an OpenCL device with the document's OpenCL schedules: what
the editor's preview shows when its target is an OpenCL device.

The CPU preview goes stage by stage (compositor.py); here the node and what it reads are
built with their OpenCL schedules and compiled as one pipeline whose output is the node's
port, so the picture is what the GPU mapping computes. A directive that names a Func
outside that pipeline (a producer computed at a block loop of a node downstream) cannot
apply there: that node's schedule is left out of the preview and a note says so. When the
engine refuses the scheduled pipeline, the picture is computed without schedules (noted).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pixelweave.nodes.document import Document
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.pipeline_build import build_what_can_be_built
from pixelweave.nodes.ports import short_type_name
from pixelweave.nodes.run import evaluate_extent, input_environment

import pixelweave as pw

InputImage = Callable[[Document, str, str, str, int], tuple[np.ndarray, str]]


def compute_on_device(
    doc: Document,
    node_id: str,
    port: str | None,
    scale: int,
    input_image: InputImage,
    device: str | None = None,
) -> tuple[np.ndarray, str]:
    """The output `port` (default: the first) of node_id computed for target "opencl" on
    `device`, and a note; `input_image(doc, id, layout, element, scale)` gives the inputs."""
    keep = upstream_of(doc, node_id)
    problems = doc.node_problems(keep)
    if problems:
        raise DocumentError(problems, str(doc.path) if doc.path else None)
    part = Document.from_json(doc.to_json())
    part.path = doc.path
    part.nodes = [n for n in part.nodes if n.id in keep]
    part.groups = []
    try:
        return _compute(part, node_id, port, scale, input_image, device, [])
    except pw.ScheduleError as e:
        for node in part.nodes:
            node.schedules.pop("opencl", None)
        note = f"the OpenCL schedules are not used in the preview ({e})"
        return _compute(part, node_id, port, scale, input_image, device, [note])


def _compute(
    part: Document,
    node_id: str,
    port: str | None,
    scale: int,
    input_image: InputImage,
    device: str | None,
    notes: list[str],
) -> tuple[np.ndarray, str]:
    built, problems = build_what_can_be_built(part, target="opencl")
    for p in problems:
        if p.kind == "schedule" and p.target == "opencl" and p.node:
            notes.append(f"{p.node}: its OpenCL schedule is not used in the preview ({p.message})")
    if node_id not in built.graph.nodes:
        raise NodeError("the node could not be built", node_id)
    outputs = built.graph.nodes[node_id].outputs
    port = port or next(iter(outputs))
    value = outputs.get(port)
    if value is None:
        raise NodeError(f"node `{node_id}` has no output `{port}`", node_id)
    images: dict[str, np.ndarray] = {}
    for name, param in built.graph.image_params.items():
        layout = "colour" if param.dimensions() == 3 else "gray"
        images[name] = input_image(part, name, layout, short_type_name(param.type()), scale)[0]
    size = [evaluate_extent(e, input_environment(built.graph, images, {})) for e in value.extents]
    if any(s <= 0 for s in size):
        raise NodeError(f"the output would be empty (size {size})", node_id)
    pipeline = pw.Pipeline([value.func])
    inputs: dict[str, object] = {im.name(): images[im.name()] for im in pipeline.images}
    inputs.update({p.name: p.get() for p in pipeline.params if p.get() is not None})
    extra = {"device": device} if device is not None else {}
    array = pipeline.compile("opencl", level="fast", **extra)(size, inputs)
    return np.ascontiguousarray(array), "; ".join(notes)
