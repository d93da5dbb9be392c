"""What the editor shows about a whole document after each edit: its loop nest (and the
full lowered statement on request), the problems found, each attributed to its node, and
per node the Funcs a schedule can name with their loops and consumers.

One call, `inspect_document`, run off the GUI thread; the result is plain data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pixelweave.engine.lower import lower
from pixelweave.engine.runtime.jit import cached_loop_nest
from pixelweave.engine.schedule import StageSchedule
from pixelweave.engine.stmt_printer import loop_nest_to_string, stmt_to_string
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document, engine_problem

import pixelweave as pw

_NODE_PREFIX = re.compile(r"node `([A-Za-z_][A-Za-z0-9_]*)`: ")


@dataclass
class Inspection:
    """The state of a document as the engine sees it."""

    loop_nest: str = ""
    statement: str = ""
    problems: list[tuple[str | None, str]] = field(default_factory=list)
    # node id -> schedule key ("out", "out.update(0)") -> loop names, outermost first
    loops: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # node id -> Funcs of other nodes that read it ("node.local") with their loops
    consumers: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    schedules: dict[str, dict[str, list[list[Any]]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problems_of(self, node_id: str) -> list[str]:
        return [m for n, m in self.problems if n == node_id]


def split_problem(line: str) -> tuple[str | None, str]:
    """'node `blur`: message' -> ('blur', 'message'); other lines -> (None, line)."""
    m = _NODE_PREFIX.match(line)
    return (m.group(1), line[m.end() :]) if m else (None, line)


def _loops(definition: Any) -> list[str]:
    """A definition's loops, outermost first, after the splits its schedule made."""
    schedule = definition.schedule or StageSchedule.for_definition(definition)
    return [d.name for d in reversed(schedule.dims)]


def _stage_loops(func: Any) -> dict[str, list[str]]:
    local = func.name().split(".", 1)[1]
    result = {local: _loops(func.definition())}
    for i, update in enumerate(func.updates()):
        result[f"{local}.update({i})"] = _loops(update)
    return result


def _readers(built: BuiltDocument) -> dict[str, list[tuple[str, list[str]]]]:
    """For every node, the Funcs of the nodes connected to its outputs (candidates for
    compute_at), with their pure loops."""
    result: dict[str, list[tuple[str, list[str]]]] = {n: [] for n in built.graph.nodes}
    for doc_node in built.document.nodes:
        if doc_node.id not in built.graph.nodes:
            continue
        for port in doc_node.inputs:
            src = doc_node.source(port)
            if src is None or src[0] not in result:
                continue
            for func in built.graph.nodes[doc_node.id].funcs.values():
                entry = (func.name(), _loops(func.definition()))
                if entry not in result[src[0]]:
                    result[src[0]].append(entry)
    return result


def inspect_document(doc: Document, *, statement: bool = True, check: Callable[[], None] | None = None) -> Inspection:
    """Builds and lowers the document; problems are collected, never raised."""
    check = check or (lambda: None)
    result = Inspection()
    try:
        built = build_document(doc, check_lowering=False)
    except DocumentError as e:
        result.problems = [split_problem(line) for line in e.problems]
        return result
    except NodeError as e:
        result.problems = [(e.node, e.detail)]
        return result
    for node_id, node in built.graph.nodes.items():
        result.loops[node_id] = {}
        for func in node.funcs.values():
            result.loops[node_id].update(_stage_loops(func))
        result.schedules[node_id] = built.document.node(node_id).schedule
    result.consumers = _readers(built)
    check()
    pipeline = built.pipeline()
    cached = None if statement else cached_loop_nest(pipeline.structural_key("host"))
    if cached is not None:  # compiled before (undo, reopening): no need to lower again
        result.loop_nest = cached
        return result
    try:
        lowering = lower(pipeline, "host")  # one lowering gives both texts
        result.loop_nest = loop_nest_to_string(lowering.loop_nest)
        if statement:
            result.statement = stmt_to_string(lowering.lowered.body)
    except pw.PixelweaveError as e:  # what the engine refuses is reported on its node
        problem = engine_problem(built.graph, e)
        result.problems = [(problem.node, problem.message)]
    return result
