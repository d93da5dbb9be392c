"""Building a graph of node instances into engine Funcs: topological order, port checks,
one BuildContext per node. The document layer turns its JSON into NodeSpecs and calls this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.node_type import NodeType, node_type
from pixelweave.nodes.runtime_params import make_params
from pixelweave.nodes.values import Value

import pixelweave as pw


@dataclass
class NodeSpec:
    """One node instance: its id, type, parameter values and, per input port, the
    (source node id, source output port) it is connected to."""

    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class BuiltNode:
    spec: NodeSpec
    node_type: type[NodeType]
    params: dict[str, Any]
    outputs: dict[str, Value]
    funcs: dict[str, pw.Func]
    image_params: list[pw.ImageParam]
    scalar_params: list[pw.Param]


@dataclass
class BuiltGraph:
    """The engine side of a graph: every node's Funcs and outputs, the inputs and
    parameters it needs, and its output nodes in order."""

    nodes: dict[str, BuiltNode]
    image_params: dict[str, pw.ImageParam]
    scalar_params: dict[str, pw.Param]
    output_ids: list[str]

    def output_values(self) -> list[Value]:
        return [self.nodes[i].outputs["out"] for i in self.output_ids]

    def pipeline(self) -> pw.Pipeline:
        """One engine Pipeline over every output node, in document order."""
        return pw.Pipeline([v.func for v in self.output_values()])

    def func(self, node_id: str, local_name: str) -> pw.Func:
        node = self.nodes.get(node_id)
        if node is None:
            raise NodeError(f"there is no node `{node_id}`")
        if local_name not in node.funcs:
            names = ", ".join(sorted(node.funcs)) or "none"
            raise NodeError(f"has no Func `{local_name}` (its Funcs: {names})", node_id)
        return node.funcs[local_name]


def topological_order(specs: list[NodeSpec]) -> list[NodeSpec]:
    """Specs with every node after its sources; NodeError naming a cycle or a dangling edge."""
    by_id = {s.id: s for s in specs}
    for s in specs:
        for port, (src, _) in s.inputs.items():
            if src not in by_id:
                raise NodeError(f"input `{port}` is connected to node `{src}`, which does not exist", s.id)
    order: list[NodeSpec] = []
    state: dict[str, str] = {}

    def visit(s: NodeSpec, path: list[str]) -> None:
        if state.get(s.id) == "done":
            return
        if state.get(s.id) == "active":
            cycle = [*path[path.index(s.id) :], s.id]
            raise NodeError(f"the connections form a cycle: {' -> '.join(reversed(cycle))}", s.id)
        state[s.id] = "active"
        for src, _ in s.inputs.values():
            visit(by_id[src], [*path, s.id])
        state[s.id] = "done"
        order.append(s)

    for s in specs:
        visit(s, [])
    return order


def build_graph(specs: list[NodeSpec]) -> BuiltGraph:
    """Builds every node in dependency order; NodeError (with the node id) on the first fault."""
    ids = [s.id for s in specs]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise NodeError(f"node id `{duplicates[0]}` is used by more than one node", duplicates[0])
    built: dict[str, BuiltNode] = {}
    image_params: dict[str, pw.ImageParam] = {}
    scalar_params: dict[str, pw.Param] = {}
    for spec in topological_order(specs):
        node = build_node(spec, built)
        built[spec.id] = node
    for node in built.values():
        image_params.update({p.name(): p for p in node.image_params})
        scalar_params.update({p.name: p for p in node.scalar_params})
    outputs = [s.id for s in specs if getattr(built[s.id].node_type, "is_output", False)]
    if not outputs:
        raise NodeError("the pipeline has no output node; add an Output node and connect it")
    return BuiltGraph(built, image_params, scalar_params, outputs)


def build_node(spec: NodeSpec, built: dict[str, BuiltNode], runtime: bool = True) -> BuiltNode:
    """One node built with the engine, its sources already in `built`; NodeError on a fault.
    With `runtime` its run-time parameters become engine Params (the spec's values their
    defaults), else constants."""
    try:
        cls = node_type(spec.type)
        params = cls.check_params(spec.params)
    except NodeError as e:
        raise e.at_node(spec.id) from None
    arguments = dict(params)
    ctx = BuildContext(spec.id)
    ctx.values = dict(params)
    if runtime:
        for p in cls.runtime_params():
            arguments[p.name] = make_params(cls, spec.id, p, params[p.name], params)
            ctx.scalar_params.extend(_leaves(arguments[p.name]))
    inputs: dict[str, Value] = {}
    for port_name in spec.inputs:
        if cls.input_port(port_name) is None:
            names = ", ".join(p.name for p in cls.inputs) or "none"
            raise NodeError(f"a {cls.type_name} node has no input `{port_name}` (its inputs: {names})", spec.id)
    for port in cls.inputs:
        if port.name not in spec.inputs:
            if port.optional:
                continue
            raise NodeError(f"input `{port.name}` is not connected", spec.id)
        src_id, src_port = spec.inputs[port.name]
        source = built[src_id]
        if src_port not in source.outputs:
            names = ", ".join(source.outputs)
            raise NodeError(
                f"input `{port.name}` is connected to output `{src_port}` of node `{src_id}`, which has only {names}",
                spec.id,
            )
        value = source.outputs[src_port]
        why = port.mismatch(value.layout, value.type)
        if why is not None:
            raise NodeError(f"{why} (from node `{src_id}`)", spec.id)
        inputs[port.name] = value
    try:
        result = cls().build(ctx, **inputs, **arguments)
    except NodeError as e:
        raise e.at_node(spec.id) from None
    except pw.PixelweaveError as e:
        raise NodeError(str(e), spec.id) from None
    outputs = result if isinstance(result, dict) else {cls.outputs[0].name: result}
    for port in cls.outputs:
        if port.name not in outputs:
            raise NodeError(f"build() did not produce output `{port.name}`", spec.id)
        why = port.mismatch(outputs[port.name].layout, outputs[port.name].type)
        if why is not None:
            raise NodeError(f"build() produced a bad output: {why}", spec.id)
    return BuiltNode(spec, cls, params, outputs, dict(ctx.funcs), ctx.image_params, ctx.scalar_params)


def _leaves(value: Any) -> list[pw.Param]:
    """The Params of a run-time value (a Param, or nested tuples of them)."""
    if isinstance(value, pw.Param):
        return [value]
    return [q for v in value for q in _leaves(v)]
