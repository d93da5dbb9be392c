"""From a document to a runnable pipeline in one call: `build_document(doc)` checks the
document, builds every node with the engine, applies the schedules and lowers the result
once (which is where the engine refuses impossible schedules), reporting every problem in
one DocumentError. The BuiltDocument it returns knows the document's inputs, parameters
and outputs, and runs or compiles it through a GraphRunner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.nodes.document import HOST, SCHEDULE_TARGETS, Document, Problem, format_problem, schedule_target
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.graph import BuiltGraph, BuiltNode, NodeSpec, build_node
from pixelweave.nodes.images import decode_image, read_image
from pixelweave.nodes.ports import short_type_name
from pixelweave.nodes.run import GraphRunner, output_sizes
from pixelweave.nodes.runtime_params import runtime_values, structure_key
from pixelweave.nodes.schedule_spec import apply_schedule, directives_of

import pixelweave as pw


@dataclass
class BuiltDocument:
    """A document built into engine Funcs with its schedules applied."""

    document: Document
    graph: BuiltGraph
    runtime_params: bool = True
    target: str = HOST  # whose schedules were applied: "host" (the CPU's) or "opencl"
    runner: GraphRunner = field(init=False)
    structure: str = field(init=False)

    def __post_init__(self) -> None:
        self.runner = GraphRunner(self.graph)
        self.structure = structure_key(self.document)

    def update(self, doc: Document) -> bool:
        """Takes the run-time parameter values of doc when doc has this build's structure
        (only run-time values, positions, name or description differ): its Params are set,
        and nothing is rebuilt, lowered or compiled. False, with nothing changed, when doc
        needs a new build (or this one holds constants). ParameterError on a bad value."""
        if not self.runtime_params or structure_key(doc) != self.structure:
            return False
        values = runtime_values(doc)
        missing = sorted(set(values) - set(self.graph.scalar_params))
        if missing:
            return False
        for name, value in values.items():
            self.graph.scalar_params[name].set(value)
        self.document = doc
        return True

    def pipeline(self) -> pw.Pipeline:
        """One engine Pipeline over every output, in document order."""
        return self.graph.pipeline()

    @property
    def input_ids(self) -> list[str]:
        """Ids of the nodes that take an image at run time, in document order."""
        return [n.id for n in self.document.nodes if n.id in self.graph.image_params]

    @property
    def param_ids(self) -> list[str]:
        """Names of the run-time Params, in document order: a scalar parameter node's is its
        id, a node's run-time parameter's `<node id>__<parameter>` (see runtime_params.py)."""
        return [
            p.name
            for n in self.document.nodes
            if n.id in self.graph.nodes
            for p in self.graph.nodes[n.id].scalar_params
        ]

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
        self,
        images: dict[str, np.ndarray],
        params: dict[str, Any] | None = None,
        target: str | None = None,
        device: str | None = None,
    ) -> dict[str, np.ndarray]:
        """Every output by node id, compiled for target (default: the one this build's
        schedules are for; "reference" for the reference evaluator) and for "opencl" on
        `device` ("platform:device", None for the default)."""
        return self.runner.run(images, params, target=target or self.target, device=device)

    def loop_nest(self, target: str | None = None) -> str:
        return self.pipeline().loop_nest(target or self.target)

    def lowered_stmt(self, target: str | None = None) -> str:
        return self.pipeline().lowered_stmt(target or self.target)

    def funcs(self) -> dict[str, list[str]]:
        """Per node id, the local names of the Funcs its schedule can name."""
        return {node_id: sorted(node.funcs) for node_id, node in self.graph.nodes.items()}

    def schedule_of(self, node_id: str) -> dict[str, list[list[Any]]]:
        """The schedule the node's Funcs carry now, as document directives."""
        result: dict[str, list[list[Any]]] = {}
        for func in self.graph.nodes[node_id].funcs.values():
            result.update(directives_of(func, node_id))
        return result


def build_document(
    doc: Document,
    *,
    source: str | None = None,
    check_lowering: bool = True,
    runtime_params: bool = True,
    target: str = HOST,
) -> BuiltDocument:
    """Builds and schedules a document for a compile target (its nodes' OpenCL schedules for
    "opencl", their CPU schedules for any other); DocumentError listing every problem
    (structure, parameters, connections, port types, schedules, and with `check_lowering`
    what lowering the scheduled pipeline for that target reveals). Run-time parameters
    become engine Params (their document values the defaults) unless `runtime_params` is
    False: then they are constants, as a pipeline specialized to these values."""
    source = source or (str(doc.path) if doc.path is not None else None)
    built, problems = build_what_can_be_built(doc, runtime_params=runtime_params, target=target)
    if not problems and check_lowering:
        problems.extend(_lowering_problems(built.graph, built.target))
    if problems:
        raise DocumentError([format_problem(p) for p in problems], source)
    return built


def check_every_target(doc: Document, *, source: str | None = None) -> BuiltDocument:
    """Builds and lowers the document with its CPU schedules and, when any node has one, with
    its OpenCL schedules too (lowering needs no OpenCL device); DocumentError listing every
    problem of both. Returns the CPU build."""
    source = source or (str(doc.path) if doc.path is not None else None)
    problems: list[str] = []
    built: BuiltDocument | None = None
    for target in (HOST, *SCHEDULE_TARGETS):
        if target != HOST and not any(n.schedules.get(target) for n in doc.nodes):
            continue
        try:
            result = build_document(doc, source=source, target=target)
        except DocumentError as e:
            problems.extend(p for p in e.problems if p not in problems)
            continue
        built = built or result
    if problems or built is None:
        raise DocumentError(problems, source)
    return built


def build_what_can_be_built(
    doc: Document, *, runtime_params: bool = True, target: str = HOST
) -> tuple[BuiltDocument, list[Problem]]:
    """Every node that can be built, with the schedules for `target` that can be applied, and
    the problems instead of an error: what a document under edit is inspected with, so that
    one scratch node not connected yet hides nothing about the others. A node whose problem
    blocks it (and whatever reads it) is missing from the graph; the outputs are those that
    built. Problems of the schedules of other targets are listed but block nothing."""
    kind = schedule_target(target)
    problems = doc._problems()
    blocked = {p.node for p in problems if p.kind == "node"}
    unscheduled = {p.node for p in problems if p.kind == "schedule" and p.target == kind}
    built = build_nodes(doc, blocked, problems, runtime=runtime_params)
    problems.extend(_name_clashes(built))
    graph = BuiltGraph(
        built,
        {p.name(): p for node in built.values() for p in node.image_params},
        {p.name: p for node in built.values() for p in node.scalar_params},
        [n.id for n in doc.nodes if n.id in built and getattr(built[n.id].node_type, "is_output", False)],
    )
    title = "" if kind == HOST else "OpenCL schedule: "
    for node in doc.nodes:
        schedule = node.schedule_for(kind)
        if node.id in built and schedule and node.id not in unscheduled:
            problems.extend(
                Problem(node.id, "schedule", f"{title}{m}", kind) for m in apply_schedule(graph, node.id, schedule)
            )
    return BuiltDocument(doc, graph, runtime_params, kind), problems


def _name_clashes(built: dict[str, BuiltNode]) -> list[Problem]:
    """A node id equal to another node's run-time Param name (`a__gain`) would make two
    pipeline inputs of one name."""
    owners: dict[str, str] = {}
    problems = []
    for node_id, node in built.items():
        for name in [p.name() for p in node.image_params] + [p.name for p in node.scalar_params]:
            if name in owners and owners[name] != node_id:
                problems.append(
                    Problem(
                        node_id,
                        "node",
                        f"its input `{name}` has the name of an input of node `{owners[name]}`; rename one",
                    )
                )
            owners.setdefault(name, node_id)
    return problems


def build_nodes(
    doc: Document,
    blocked: set[str | None],
    problems: list[Problem],
    reuse: Callable[[NodeSpec, dict[str, BuiltNode]], BuiltNode | None] | None = None,
    *,
    runtime: bool = True,
) -> dict[str, BuiltNode]:
    """Builds every buildable node once its sources are built (a node whose source failed
    is skipped silently: the source's problem is the one to fix), in dependency order.
    `reuse(spec, built)` may hand back a node built earlier instead (the preview keeps
    nodes whose definition and sources did not change)."""
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
                    kept = reuse(spec, built) if reuse is not None else None
                    built[spec.id] = kept if kept is not None else build_node(spec, built, runtime)
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


def _lowering_problems(graph: BuiltGraph, target: str = HOST) -> list[Problem]:
    """What the engine says when it lowers the scheduled pipeline (schedules it refuses)."""
    if not graph.output_ids:
        return []
    try:
        graph.pipeline().check_schedules(target)  # every pass; its loop nest is then remembered
    except pw.PixelweaveError as e:
        return [engine_problem(graph, e, target)]
    return []


def engine_problem(graph: BuiltGraph, error: Exception, target: str = HOST) -> Problem:
    """An engine error met while lowering for target, attributed to the node whose Func it names."""
    import re

    if isinstance(error, pw.ScheduleError):
        text = str(error)
        # "Func `a.out`" names the Func whose schedule is at fault; other names are context
        names = re.findall(r"Func `([A-Za-z_][A-Za-z0-9_]*)\.", text) + re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)\.", text)
        node = next((n for n in names if n in graph.nodes), None)
        which = "schedule" if target == HOST else "OpenCL schedule"
        return Problem(node, "schedule", f"the engine refuses the {which}: {error}", target)
    return Problem(None, "document", f"the pipeline cannot be compiled: {error}")


def open_document(path: str | Path, target: str = HOST) -> BuiltDocument:
    """Reads, validates and builds a document file in one step for a compile target (what the
    command line uses): the nodes' OpenCL schedules for "opencl", their CPU ones otherwise."""
    from pixelweave.nodes.document import read_document

    return build_document(read_document(path), target=target)
