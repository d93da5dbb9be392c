"""The image of any node, for the editor's preview: the node's output realized on its own.

Only the node and what it reads are built. Their schedules are kept (they are what make
big pipelines fast enough to preview) except where they cannot apply to this smaller
pipeline: a `compute_at`/`store_at` naming a Func outside it, and the previewed Func's own
compute level (it is the output now). If the engine still refuses the schedule, the
preview falls back to computing every Func at root, and says so in its note.

Previews compile at the "fast" level (quick to compile, close in speed for vectorized
code) and may run on inputs shrunk by an integer factor while a value is being dragged;
a pipeline that cannot run that small is retried at full size.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.nodes.document import Document, Problem, _format
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.graph import BuiltGraph
from pixelweave.nodes.pipeline_build import BuiltDocument, _build_nodes
from pixelweave.nodes.run import _environment, evaluate_extent
from pixelweave.nodes.schedule_spec import apply_schedule

import pixelweave as pw

_PLACEMENT = ("compute_at", "store_at", "compute_root", "compute_inline", "store_root")


@dataclass
class PreviewResult:
    """A node's output array with what to compare it with."""

    node_id: str
    port: str
    array: np.ndarray
    reference: np.ndarray | None
    reference_title: str
    scale: int
    note: str
    seconds: float


def _pruned_schedule(node_id: str, schedule: dict[str, list[list[Any]]], keep: set[str], output_key: str | None):
    """The node's directives that still make sense when only `keep` is built."""
    result: dict[str, list[list[Any]]] = {}
    for key, directives in schedule.items():
        kept = []
        for d in directives:
            elsewhere = d and d[0] in ("compute_at", "store_at") and len(d) > 1 and "." in str(d[1])
            if elsewhere and str(d[1]).split(".", 1)[0] not in keep:
                continue
            if key == output_key and d and d[0] in _PLACEMENT:
                continue
            kept.append(d)
        if kept:
            result[key] = kept
    return result


class PreviewComputer:
    """Computes node previews, keeping decoded input images between calls."""

    def __init__(self) -> None:
        self._images: dict[tuple[str, str, str, float, int], np.ndarray] = {}

    def _image(self, built: BuiltDocument, node_id: str, scale: int) -> np.ndarray:
        path = built.input_path(node_id)
        layout, element = built.input_format(node_id)
        key = (str(Path(path).resolve()), layout, element, Path(path).stat().st_mtime, scale)
        if key not in self._images:
            if len(self._images) > 16:
                self._images.clear()
            full = built.read_input(node_id, path)
            self._images[key] = np.ascontiguousarray(full[..., ::scale, ::scale]) if scale > 1 else full
        return self._images[key]

    def compute(
        self,
        doc: Document,
        node_id: str,
        port: str | None = None,
        *,
        scale: int = 1,
        check: Callable[[], None] | None = None,
    ) -> PreviewResult:
        """The node's output (its first port unless `port` is given) on the document's
        sample inputs. DocumentError when the node (or what it reads) has a problem;
        NodeError or an engine error when it cannot run."""
        check = check or (lambda: None)
        start = time.perf_counter()
        keep = upstream_of(doc, node_id)
        if not doc.has_node(node_id):
            raise NodeError(f"there is no node `{node_id}`")
        problems = [p for p in doc._problems() if p.node in keep and p.kind == "node"]
        graph = self._build(doc, node_id, keep, problems)
        check()
        built = BuiltDocument(doc, graph)
        outputs = graph.nodes[node_id].outputs
        port = port or next(iter(outputs))
        value = outputs.get(port)
        if value is None:
            raise NodeError(f"node `{node_id}` has no output `{port}`", node_id)
        output_key = value.func.name().split(".", 1)[1]
        note = ""
        try:
            self._schedule(doc, graph, keep, output_key, node_id)
            array, used = self._realize_any_scale(built, graph, value, scale, check)
        except pw.ScheduleError as e:
            graph = self._build(doc, node_id, keep, [])
            value = graph.nodes[node_id].outputs[port]
            for node in graph.nodes.values():
                for func in node.funcs.values():
                    if func is not value.func:
                        func.compute_root()
            note = f"schedule not usable for this preview ({e}); computed breadth-first"
            array, used = self._realize_any_scale(built, graph, value, scale, check)
        if used > 1:
            note = "; ".join(filter(None, [f"preview at 1/{used} resolution", note]))
        reference, title = self._reference(built, graph, keep, used)
        return PreviewResult(node_id, port, array, reference, title, used, note, time.perf_counter() - start)

    def _build(self, doc: Document, node_id: str, keep: set[str], problems: list[Problem]) -> BuiltGraph:
        if problems:
            raise DocumentError([_format(p) for p in problems], str(doc.path) if doc.path else None)
        found: list[Problem] = []
        sub = Document(doc.name, doc.description, [n for n in doc.nodes if n.id in keep], doc.path)
        built = _build_nodes(sub, set(), found)
        if found or node_id not in built:
            raise DocumentError([_format(p) for p in found] or [f"node `{node_id}` could not be built"])
        images = {p.name(): p for node in built.values() for p in node.image_params}
        params = {p.name: p for node in built.values() for p in node.scalar_params}
        return BuiltGraph(built, images, params, [])

    @staticmethod
    def _schedule(doc: Document, graph: BuiltGraph, keep: set[str], output_key: str, node_id: str) -> None:
        for node in doc.nodes:
            if node.id not in graph.nodes or not node.schedule:
                continue
            schedule = _pruned_schedule(node.id, node.schedule, keep, output_key if node.id == node_id else None)
            refused = apply_schedule(graph, node.id, schedule)
            if refused:
                raise pw.ScheduleError("; ".join(refused))

    def _realize_any_scale(
        self, built: BuiltDocument, graph: BuiltGraph, value: Any, scale: int, check: Callable[[], None]
    ) -> tuple[np.ndarray, int]:
        """Realized at 1/scale, or at full size if the pipeline cannot run that small."""
        try:
            return self._realize(built, graph, value, scale, check)
        except (NodeError, pw.InputError, pw.BoundsError, pw.RuntimeFailure):
            if scale == 1:
                raise
            return self._realize(built, graph, value, 1, check)

    def _realize(
        self, built: BuiltDocument, graph: BuiltGraph, value: Any, scale: int, check: Callable[[], None]
    ) -> tuple[np.ndarray, int]:
        images = {i: self._image(built, i, scale) for i in graph.image_params}
        env = _environment(graph, images, {})
        size = [evaluate_extent(e, env) for e in value.extents]
        if any(s <= 0 for s in size):
            raise NodeError(f"the output would be empty (size {size})")
        pipeline = pw.Pipeline([value.func])
        compiled = pipeline.compile("host", level="fast")
        check()
        inputs = {im.name(): images[im.name()] for im in pipeline.images}
        return compiled(size, inputs), scale

    def _reference(
        self, built: BuiltDocument, graph: BuiltGraph, keep: set[str], scale: int
    ) -> tuple[np.ndarray | None, str]:
        """The first input image the node reads (for side-by-side comparison)."""
        for node in built.document.nodes:
            if node.id in keep and node.id in graph.image_params:
                return self._image(built, node.id, scale), node.id
        return None, ""
