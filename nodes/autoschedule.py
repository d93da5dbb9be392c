"""Automatic schedules for a pipeline document: the sizes come from its input images, the
schedule from the engine's automatic scheduler, and the result goes back into the
document as per-node directives (what `pixelweave schedule --write` saves)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pixelweave.engine.autoschedule import AutoSchedule, auto_schedule
from pixelweave.nodes.pipeline_build import BuiltDocument
from pixelweave.nodes.schedule_text import format_schedule

import pixelweave as pw


@dataclass
class DocumentSchedule:
    """The engine's schedule and the same as document directives per node id."""

    result: AutoSchedule
    schedules: dict[str, dict[str, list[list[Any]]]]

    def text(self) -> str:
        """Halide-style text per node, as the editor's schedule field shows it."""
        parts = []
        for node_id, schedule in self.schedules.items():
            if schedule:
                parts.append(f"# {node_id}\n{format_schedule(schedule, node_id)}")
        return "".join(parts)


def set_document_estimates(built: BuiltDocument, images: dict[str, np.ndarray], params: dict[str, Any]) -> None:
    """Estimates for the scheduler: the sizes these images and parameter values give."""
    sizes = built.output_sizes(images, params)
    for node_id in built.output_ids:
        func = built.graph.nodes[node_id].outputs["out"].func
        func.set_estimates([(0, int(n)) for n in sizes[node_id]])
    for node_id, image in built.graph.image_params.items():
        if node_id in images:
            image.set_estimates([(0, int(n)) for n in images[node_id].shape[::-1]])
    for node_id, param in built.graph.scalar_params.items():
        if node_id in params:
            param.set_estimate(params[node_id])


def schedule_document(
    built: BuiltDocument,
    images: dict[str, np.ndarray],
    params: dict[str, Any] | None = None,
    method: str = "analytic",
    **options: Any,
) -> DocumentSchedule:
    """Schedule every Func of the document automatically for these inputs (applied to the
    built graph) and return the schedule, also as document directives. The tuner
    (method "tune") times its candidates on these images."""
    params = dict(params or {})
    set_document_estimates(built, images, params)
    pipeline = pw.Pipeline([built.graph.nodes[i].outputs["out"].func for i in built.output_ids])
    if method == "tune":
        inputs: dict[str, Any] = {im.name(): images[im.name()] for im in pipeline.images}
        inputs.update({p.name: params[p.name] for p in pipeline.params if p.name in params})
        options.setdefault("inputs", inputs)
    result = auto_schedule(pipeline, "host", method, **options)
    schedules = {node_id: built.schedule_of(node_id) for node_id in built.graph.nodes}
    return DocumentSchedule(result, schedules)


def write_schedules(built: BuiltDocument, schedules: dict[str, dict[str, list[list[Any]]]]) -> None:
    """Replace every node's schedule in the document by the given ones (not yet saved)."""
    doc = built.document
    for node_id, schedule in schedules.items():
        node = doc.node(node_id)
        for key in list(node.schedule):
            doc.set_schedule(node_id, key, [])
        for key, directives in schedule.items():
            doc.set_schedule(node_id, key, directives)
