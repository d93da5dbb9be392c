"""What the editor shows about a whole document after each edit: its loop nest (and the
full lowered statement on request), the problems found, each attributed to its node, and
per node the Funcs a schedule can name with their loops and the levels they may be computed at.

One call, `inspect_document`, run off the GUI thread; the result is plain data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower import lower
from pixelweave.engine.pipeline import definition_exprs, func_definitions
from pixelweave.engine.runtime.jit import cached_loop_nest
from pixelweave.engine.schedule import StageSchedule
from pixelweave.engine.stmt import ForType
from pixelweave.engine.stmt_printer import loop_nest_to_string, stmt_to_string
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.output_part import nodes_reaching_outputs, output_ids
from pixelweave.nodes.pipeline_build import BuiltDocument, build_what_can_be_built, engine_problem

import pixelweave as pw

_NODE_PREFIX = re.compile(r"node `([A-Za-z_][A-Za-z0-9_]*)`: ")


EMPTY_DOCUMENT = (
    "The document is empty: add nodes from the palette on the left (or press Tab on the canvas) "
    "and connect them to an Output node; its loop nest appears here"
)
NO_OUTPUT = "No loop nest yet: the pipeline has no Output node; add one and connect what it should show"
HAS_PROBLEMS = "The pipeline has problems: see the Log and the red nodes"

# loops a Func cannot be computed or stored in: one iteration is a SIMD lane or a GPU work-item
_NOT_A_LEVEL = (ForType.VECTORIZED, ForType.GPU_THREAD)

Level = tuple[str, list[str]]  # (Func reference as a directive writes it, its loops outermost first)


@dataclass
class Inspection:
    """The state of a document as the engine sees it."""

    loop_nest: str = ""
    statement: str = ""
    problems: list[tuple[str | None, str]] = field(default_factory=list)
    # node id -> schedule key ("out", "out.update(0)") -> the stage's own loops before any
    # directive, innermost first (what the schedule's directives start from)
    loops: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # node id -> Func key ("out") -> where that Func may be computed: the Funcs that use it
    # (through inlined ones), each with its loops that can hold it, outermost first
    levels: dict[str, dict[str, list[Level]]] = field(default_factory=dict)
    schedules: dict[str, dict[str, list[list[Any]]]] = field(default_factory=dict)
    # nodes built but not read by any output: not in the loop nest
    left_out: list[str] = field(default_factory=list)
    # what the inspector says instead of a loop nest ("" when there is one)
    message: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def problems_of(self, node_id: str) -> list[str]:
        return [m for n, m in self.problems if n == node_id]


def split_problem(line: str) -> tuple[str | None, str]:
    """'node `blur`: message' -> ('blur', 'message'); other lines -> (None, line)."""
    m = _NODE_PREFIX.match(line)
    return (m.group(1), line[m.end() :]) if m else (None, line)


def _pure_loops(definition: Any) -> list[str]:
    """A stage's loops before its schedule, innermost first: stable names a directive starts from."""
    return [d.name for d in StageSchedule.for_definition(definition).dims]


def _stage_loops(func: Any) -> dict[str, list[str]]:
    local = func.name().split(".", 1)[1]
    result = {local: _pure_loops(func.definition())}
    for i, update in enumerate(func.updates()):
        result[f"{local}.update({i})"] = _pure_loops(update)
    return result


def _short(name: str, names: list[str]) -> str:
    """The name a directive uses for a loop: its last part when no other loop shares it."""
    last = name.rsplit(".", 1)[-1]
    return last if sum(1 for n in names if n.rsplit(".", 1)[-1] == last) == 1 else name


def _loops_outermost(func: Any) -> list[tuple[str, str, bool]]:
    """A Func's pure-stage loops after its schedule, outermost first: (full name, the name a
    directive uses, whether another Func can be computed in it)."""
    definition = func.definition()
    dims = (definition.schedule or StageSchedule.for_definition(definition)).dims
    names = [d.name for d in dims]
    return [(d.name, _short(d.name, names), d.for_type not in _NOT_A_LEVEL) for d in reversed(dims)]


def _is_inlined(func: Any, outputs: set[int]) -> bool:
    """Whether lowering substitutes the Func into its uses (an output or a reduction never is)."""
    if id(func) in outputs or func.updates():
        return False
    return func.schedule_of().compute_level.is_inline()


class _Levels:
    """Where each Func may be computed: the loops that enclose every use of it. A use inside
    Func U lies inside all of U's loops and inside the loops U itself is computed in (its
    *path*); the legal levels are what the paths of all users have in common, outermost first.
    Inlined Funcs have no loops: their users are looked through."""

    def __init__(self, built: BuiltDocument) -> None:
        graph = built.graph
        self.names = {id(f): (node_id, local) for node_id, n in graph.nodes.items() for local, f in n.funcs.items()}
        self.funcs = {id(f): f for n in graph.nodes.values() for f in n.funcs.values()}
        self.outputs = {id(v.func) for node_id in graph.output_ids for v in graph.nodes[node_id].outputs.values()}
        self.users: dict[int, list[Any]] = {}
        for f in self.funcs.values():
            for d in func_definitions(f):
                for e in definition_exprs(d):
                    for n in walk(e):
                        if isinstance(n, E.Call) and n.call_kind == "func" and n.target is not f:
                            users = self.users.setdefault(id(n.target), [])
                            if all(u is not f for u in users):
                                users.append(f)
        self._paths: dict[int, list[tuple[int, str]] | None] = {}

    def _path(self, func: Any) -> list[tuple[int, str]]:
        """The loops (Func id, full loop name) a non-inlined Func is computed inside, outermost first."""
        key = id(func)
        if key in self._paths:
            return self._paths[key] or []  # None: being computed (a cycle in a broken schedule)
        self._paths[key] = None
        level = func.schedule_of().compute_level
        path: list[tuple[int, str]] = []
        if key not in self.outputs and level.kind == "at" and id(level.func) in self.funcs:
            host = level.func
            loops = _loops_outermost(host)
            at = next((i for i, (full, short, _) in enumerate(loops) if level.var in (full, short)), None)
            if at is not None:
                path = self._path(host) + [(id(host), full) for full, _, _ in loops[: at + 1]]
        self._paths[key] = path
        return path

    def _users(self, func: Any) -> list[Any]:
        """The Funcs with loops that use func, looking through inlined ones."""
        found: list[Any] = []
        seen: set[int] = set()
        stack = list(self.users.get(id(func), []))
        while stack:
            user = stack.pop()
            if id(user) in seen:
                continue
            seen.add(id(user))
            if _is_inlined(user, self.outputs):
                stack.extend(self.users.get(id(user), []))
            elif id(user) in self.funcs:
                found.append(user)
        return found

    def of(self, func: Any, node_id: str) -> list[Level]:
        users = self._users(func)
        if not users or id(func) in self.outputs:
            return []
        paths = [self._path(u) + [(id(u), full) for full, _, _ in _loops_outermost(u)] for u in users]
        common = paths[0]
        for other in paths[1:]:
            n = 0
            while n < min(len(common), len(other)) and common[n] == other[n]:
                n += 1
            common = common[:n]
        levels: list[Level] = []
        for host_id, full in common:
            loop = next(lp for lp in _loops_outermost(self.funcs[host_id]) if lp[0] == full)
            if not loop[2]:
                continue
            host_node, host_local = self.names[host_id]
            ref = host_local if host_node == node_id else f"{host_node}.{host_local}"
            if levels and levels[-1][0] == ref:
                levels[-1][1].append(loop[1])
            else:
                levels.append((ref, [loop[1]]))
        return levels


def _levels(built: BuiltDocument) -> dict[str, dict[str, list[Level]]]:
    """Per node and Func: where it may be computed (see _Levels)."""
    levels = _Levels(built)
    return {
        node_id: {local: levels.of(f, node_id) for local, f in node.funcs.items()}
        for node_id, node in built.graph.nodes.items()
    }


def inspect_document(
    doc: Document,
    *,
    statement: bool = True,
    check: Callable[[], None] | None = None,
    on_loop_nest: Callable[[str], None] | None = None,
    target: str = "host",
) -> Inspection:
    """Builds what can be built and lowers what the outputs read; problems are collected,
    never raised. A node not connected to an output (a scratch node) is reported on its own
    and hides nothing about the others: they keep their loops, and the loop nest is shown
    when every problem lies outside what the outputs read. `on_loop_nest(text)` receives the
    loop nest as soon as lowering has made it, before the later passes that may still refuse
    the schedule (their problems arrive with the result). With target "opencl" the nodes'
    OpenCL schedules are applied and the pipeline is lowered for OpenCL (no device needed)."""
    check = check or (lambda: None)
    result = Inspection()
    if not doc.nodes:
        result.message = EMPTY_DOCUMENT
        return result
    try:
        built, problems = build_what_can_be_built(doc, target=target)
    except NodeError as e:
        result.problems = [(e.node, e.detail)]
        result.message = HAS_PROBLEMS
        return result
    result.problems = [(p.node, p.message) for p in problems]
    for node_id, node in built.graph.nodes.items():
        result.loops[node_id] = {}
        for func in node.funcs.values():
            result.loops[node_id].update(_stage_loops(func))
        result.schedules[node_id] = built.document.node(node_id).schedule_for(target)
    result.levels = _levels(built)
    reaching = nodes_reaching_outputs(doc)
    result.left_out = [n.id for n in doc.nodes if n.id not in reaching]
    if not output_ids(doc):
        result.message = NO_OUTPUT
        return result
    if any(p.node is None or p.node in reaching for p in problems):
        result.message = HAS_PROBLEMS
        return result
    check()
    pipeline = built.pipeline()
    cached = None if statement else cached_loop_nest(pipeline.structural_key(target))
    if cached is not None:  # compiled before (undo, reopening): no need to lower again
        result.loop_nest = cached
        if on_loop_nest is not None:
            on_loop_nest(cached)
        return result
    early = None if on_loop_nest is None else (lambda stmt: on_loop_nest(loop_nest_to_string(stmt)))
    try:
        # one lowering gives both texts; `check` cancels between passes and while printing
        lowering = lower(pipeline, target, on_loop_nest=early, check=check)
        result.loop_nest = loop_nest_to_string(lowering.loop_nest)
        if statement:
            result.statement = stmt_to_string(lowering.lowered.body, check)
    except pw.PixelweaveError as e:  # what the engine refuses is reported on its node
        problem = engine_problem(built.graph, e, target)
        result.problems.append((problem.node, problem.message))
        result.message = HAS_PROBLEMS
    return result
