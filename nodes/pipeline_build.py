"""From a document to a runnable pipeline in one call: `build_document(doc)` checks the
document, builds every node with the engine, applies the schedules and lowers the result
once (which is where the engine refuses impossible schedules), reporting every problem in
one DocumentError. The BuiltDocument it returns knows the document's inputs, parameters
and outputs, and runs or compiles it through a GraphRunner."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.nodes.document import Document, Problem, _format
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.graph import BuiltGraph, BuiltNode, NodeSpec, _build_node
from pixelweave.nodes.images import decode_image, read_image
from pixelweave.nodes.ports import short_type_name
from pixelweave.nodes.run import GraphRunner, output_sizes
from pixelweave.nodes.schedule_spec import apply_schedule, directives_of

import pixelweave as pw


@dataclass
class BuiltDocument:
    """A document built into engine Funcs with its schedules applied."""

    document: Document
    graph: BuiltGraph
    runner: GraphRunner = field(init=False)

    def __post_init__(self) -> None:
        self.runner = GraphRunner(self.graph)

    def pipeline(self) -> pw.Pipeline:
        """One engine Pipeline over every output, in document order."""
        return self.graph.pipeline()

    @property
    def input_ids(self) -> list[str]:
        """Ids of the nodes that take an image at run time, in document order."""
        return [n.id for n in self.document.nodes if n.id in self.graph.image_params]

    @property
    def param_ids(self) -> list[str]:
        """Ids of the run-time scalar parameters, in document order."""
        return [n.id for n in self.document.nodes if n.id in self.graph.scalar_params]

    @property
    def output_ids(self) -> list[str]:
        return list(self.graph.output_ids)

    def input_format(self, node_id: str) -> tuple[str, str]:
        """(layout, element) an input node expects: ("colour", "u8"), ("gray", "f32"), ..."""
        image = self.graph.image_params[node_id]
        return ("colour" if image.dimensions() == 3 else "gray"), short_type_name(image.type())

    def read_input(self, node_id: str, path: str | Path) -> np.ndarray:
        """An image file read in the layout and element type input node_id expects."""
        layout, element = self.input_format(node_id)
        try:
            return read_image(path, layout, element)
        except NodeError as e:
            raise NodeError(e.detail, node_id) from None

    def decode_input(self, node_id: str, data: bytes, name: str) -> np.ndarray:
        """Like read_input, for a file's bytes (name is the file's, for the suffix and messages)."""
        layout, element = self.input_format(node_id)
        try:
            return decode_image(data, name, layout, element)
        except NodeError as e:
            raise NodeError(e.detail, node_id) from None

    def sample_inputs(self, given: dict[str, str | Path] | None = None) -> dict[str, np.ndarray]:
        """Every input image: the given files, the document's sample images for the others."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.input_ids))
        if unknown:
            raise NodeError(f"the document has no input `{unknown[0]}` (its inputs: {', '.join(self.input_ids)})")
        return {node_id: self.read_input(node_id, self.input_path(node_id, given)) for node_id in self.input_ids}

    def input_path(self, node_id: str, given: dict[str, str | Path] | None = None) -> Path:
        """The file an input reads: given, or the node's sample image."""
        if given and node_id in given:
            return Path(given[node_id])
        path = self.document.sample_path(node_id)
        if path is None:
            sample = self.document.node(node_id).params.get("sample", "")
            why = f"its sample image {sample!r} was not found" if sample else "it has no sample image"
            raise NodeError(f"no image for input `{node_id}`: {why}; give one with --input {node_id}=PATH")
        return path

    def output_sizes(self, images: dict[str, np.ndarray], params: dict[str, Any] | None = None) -> dict[str, list[int]]:
        return output_sizes(self.graph, images, dict(params or {}))

    def run(
        self, images: dict[str, np.ndarray], params: dict[str, Any] | None = None, target: str = "host"
    ) -> dict[str, np.ndarray]:
        """Every output by node id (target "reference" for the reference evaluator)."""
        return self.runner.run(images, params, target=target)

    def loop_nest(self, target: str = "host") -> str:
        return self.pipeline().loop_nest(target)

    def lowered_stmt(self, target: str = "host") -> str:
        return self.pipeline().lowered_stmt(target)

    def funcs(self) -> dict[str, list[str]]:
        """Per node id, the local names of the Funcs its schedule can name."""
        return {node_id: sorted(node.funcs) for node_id, node in self.graph.nodes.items()}

    def schedule_of(self, node_id: str) -> dict[str, list[list[Any]]]:
        """The schedule the node's Funcs carry now, as document directives."""
        result: dict[str, list[list[Any]]] = {}
        for func in self.graph.nodes[node_id].funcs.values():
            result.update(directives_of(func, node_id))
        return result


def build_document(doc: Document, *, source: str | None = None, check_lowering: bool = True) -> BuiltDocument:
    """Builds and schedules a document; DocumentError listing every problem (structure,
    parameters, connections, port types, schedules, and with `check_lowering` what lowering
    the scheduled pipeline reveals)."""
    source = source or (str(doc.path) if doc.path is not None else None)
    problems = doc._problems()
    blocked = {p.node for p in problems if p.kind == "node"}
    unscheduled = {p.node for p in problems if p.kind == "schedule"}
    built = _build_nodes(doc, blocked, problems)
    graph = BuiltGraph(
        built,
        {p.name(): p for node in built.values() for p in node.image_params},
        {p.name: p for node in built.values() for p in node.scalar_params},
        [n.id for n in doc.nodes if n.id in built and getattr(built[n.id].node_type, "is_output", False)],
    )
    for node in doc.nodes:
        if node.id in built and node.schedule and node.id not in unscheduled:
            problems.extend(Problem(node.id, "schedule", m) for m in apply_schedule(graph, node.id, node.schedule))
    if not problems and check_lowering:
        problems.extend(_lowering_problems(graph))
    if problems:
        raise DocumentError([_format(p) for p in problems], source)
    return BuiltDocument(doc, graph)


def _build_nodes(doc: Document, blocked: set[str | None], problems: list[Problem]) -> dict[str, BuiltNode]:
    """Builds every buildable node once its sources are built (a node whose source failed
    is skipped silently: the source's problem is the one to fix)."""
    specs = [
        NodeSpec(n.id, n.type, n.params, {port: n.source(port) for port in n.inputs})  # type: ignore[misc]
        for n in doc.nodes
        if n.id not in blocked
    ]
    built: dict[str, BuiltNode] = {}
    failed: set[str] = {i for i in blocked if i}
    pending = list(specs)
    while pending:
        progress = False
        for spec in list(pending):
            sources = [src for src, _ in spec.inputs.values()]
            if any(s in failed for s in sources):
                failed.add(spec.id)
            elif all(s in built for s in sources):
                try:
                    built[spec.id] = _build_node(spec, built)
                except NodeError as e:
                    problems.append(Problem(spec.id, "node", e.detail))
                    failed.add(spec.id)
            else:
                continue
            pending.remove(spec)
            progress = True
        if not progress:
            break
    return built


def _lowering_problems(graph: BuiltGraph) -> list[Problem]:
    """What the engine says when it lowers the scheduled pipeline (schedules it refuses)."""
    if not graph.output_ids:
        return []
    try:
        graph.pipeline().loop_nest()
    except pw.PixelweaveError as e:
        return [engine_problem(graph, e)]
    return []


def engine_problem(graph: BuiltGraph, error: Exception) -> Problem:
    """An engine error met while lowering, attributed to the node whose Func it names."""
    import re

    if isinstance(error, pw.ScheduleError):
        text = str(error)
        # "Func `a.out`" names the Func whose schedule is at fault; other names are context
        names = re.findall(r"Func `([A-Za-z_][A-Za-z0-9_]*)\.", text) + re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)\.", text)
        node = next((n for n in names if n in graph.nodes), None)
        return Problem(node, "schedule", f"the engine refuses the schedule: {error}")
    return Problem(None, "document", f"the pipeline cannot be compiled: {error}")


def open_document(path: str | Path) -> BuiltDocument:
    """Reads, validates and builds a document file in one step (what the command line uses)."""
    from pixelweave.nodes.document import read_document

    return build_document(read_document(path))
