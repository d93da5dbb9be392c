"""Automatic schedules for a pipeline document: the sizes come from its input images, the
schedule from the engine's automatic scheduler, and the result goes back into the
document as per-node directives (what `pixelweave schedule --write` saves)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import numpy as np
from pixelweave.engine.autoschedule import AutoSchedule, auto_schedule
from pixelweave.engine.errors import PixelweaveError
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.output_part import output_part
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document
from pixelweave.nodes.schedule_spec import referenced_node
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


@dataclass
class ScheduleChange:
    """An automatic schedule for a document, as the editor applies it: the new directives of
    the nodes it changes, and the change in words (the schedule text and the loop nest,
    before and after, as unified diffs)."""

    schedules: dict[str, dict[str, list[list[Any]]]]  # node id -> its whole new schedule
    result: AutoSchedule
    directives_diff: str
    loop_nest_diff: str
    seconds_before: float | None = None  # the tuner's times (method "tune"); None for analytic
    seconds_after: float | None = None

    def apply_to(self, doc: Document) -> None:
        """Write the new schedules into doc (a Document), replacing the nodes' old ones."""
        for node_id, schedule in self.schedules.items():
            node = doc.node(node_id)
            for key in list(node.schedule):
                doc.set_schedule(node_id, key, [])
            for key, directives in schedule.items():
                doc.set_schedule(node_id, key, directives)


def _unified(before: str, after: str, what: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), f"{what} before", f"{what} after", lineterm="", n=2
    )
    return "\n".join(lines)


def _document_text(schedules: dict[str, dict[str, list[list[Any]]]]) -> str:
    return "".join(f"# {node_id}\n{format_schedule(s, node_id)}" for node_id, s in schedules.items() if s)


def detached(schedule: dict[str, list[list[Any]]], node_id: str) -> dict[str, list[list[Any]]]:
    """A node's schedule that needs nothing of the other nodes' schedules: its Funcs computed
    (and stored) inside another node's loops are computed at root instead, since that
    node's loops are whatever its own schedule makes them."""
    result: dict[str, list[list[Any]]] = {}
    for key, directives in schedule.items():
        kept = []
        for d in directives:
            outside = referenced_node(d) not in (None, node_id)
            if outside and d[0] == "compute_at":
                kept.append(["compute_root"])
            elif not outside:
                kept.append(list(d))
        result[key] = kept
    return result


def auto_schedule_change(
    doc: Document,
    node_id: str | None = None,
    method: str = "analytic",
    **options: Any,
) -> ScheduleChange:
    """The automatic schedule of a document (a Document; its output part is scheduled, on
    its sample images) for every node, or with node_id for that node alone (the others keep
    theirs). The new document is built and lowered before this returns, so a schedule that
    does not lower is an error here, never an edit. A node scheduled alone is computed
    within its own loops (see `detached`). Options of "tune": budget_s, seed,
    progress(best_seconds, tried), should_stop()."""
    part, _ = output_part(doc)
    if not part.nodes:
        raise NodeError("the document has no output node to schedule for; add an output node")
    if node_id is not None and not part.has_node(node_id):
        raise NodeError("no output reads this node, so it has no schedule to choose", node_id)
    built = build_document(part)
    loop_nest_before = built.loop_nest()
    old = {n.id: {k: [list(d) for d in v] for k, v in n.schedule.items()} for n in part.nodes}
    scheduled = schedule_document(built, built.sample_inputs(), {}, method, **options)
    wanted = [node_id] if node_id is not None else [n.id for n in part.nodes]
    schedules = {i: scheduled.schedules.get(i, {}) for i in wanted}
    if node_id is not None:
        schedules = {node_id: detached(schedules[node_id], node_id)}
    changed = {i: s for i, s in schedules.items() if s != old.get(i, {})}
    after = Document.from_json(part.to_json())
    after.path = part.path
    change = ScheduleChange(changed, scheduled.result, "", "")
    change.apply_to(after)
    try:
        loop_nest_after = build_document(after).loop_nest()
    except PixelweaveError as e:
        where = f"the schedule chosen for `{node_id}` alone" if node_id else "the automatic schedule"
        raise NodeError(
            f"{where} does not lower with the other nodes' schedules ({e}); auto-schedule the whole pipeline instead",
            node_id,
        ) from None
    change.directives_diff = _unified(
        _document_text({i: old.get(i, {}) for i in changed}), _document_text(changed), "schedule"
    )
    change.loop_nest_diff = _unified(loop_nest_before, loop_nest_after, "loop nest")
    tuning = scheduled.result.tuning
    if tuning is not None:
        change.seconds_before, change.seconds_after = tuning.start_seconds, tuning.best_seconds
    return change
