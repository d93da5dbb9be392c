"""Run-time parameters: node parameters compiled as engine Params instead of constants.

A node type marks the parameters that do not change the structure of the computation with
`Parameter(..., runtime=True)`. Building a node turns each such value into engine Params
(one per number: a colour gives three, a 3x3 matrix nine, a curve two per point) named
stably after the node and the parameter, `<node id>__<parameter>` (plus `_r`/`_g`/`_b`,
`_<row>_<column>` or `_<point>_x`/`_y`), so that the loop nest, the generated code and
exported signatures are the same on every rebuild. A new value then only sets Params:
the compiled code is reused.

`structure_key(doc)` is the document without its run-time values (but with what a node
type says they still decide, `NodeType.runtime_structure`): two documents with the same key
compile to the same code, and `runtime_values(doc)` gives the Param values that tell them
apart.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pixelweave.engine.ir.types import Type
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.parameters import Parameter

import pixelweave as pw

if TYPE_CHECKING:
    from pixelweave.nodes.document import Document
    from pixelweave.nodes.node_type import NodeType

COLOUR_COMPONENTS = ("r", "g", "b")


def param_name(node_id: str, parameter: str) -> str:
    """The stable, identifier-safe base name of a run-time parameter's Params."""
    return f"{node_id}__{parameter}"


def _numbers(base: str, p: Parameter, value: Any) -> list[tuple[str, Any]]:
    """(Param name, number) for every number of a checked value, in a fixed order."""
    if p.kind in ("int", "float"):
        return [(base, value)]
    if p.kind == "colour":
        return [(f"{base}_{k}", v) for k, v in zip(COLOUR_COMPONENTS, value, strict=True)]
    if p.kind == "matrix":
        return [(f"{base}_{j}_{i}", w) for j, row in enumerate(value) for i, w in enumerate(row)]
    if p.kind == "curve":
        return [(f"{base}_{n}_{axis}", v) for n, point in enumerate(value) for axis, v in zip("xy", point, strict=True)]
    raise ValueError(f"parameter `{p.name}` of kind {p.kind} cannot be run-time")


def _scalar(t: Type, value: Any) -> int | float:
    return float(value) if t.is_float() else int(value)


def make_params(cls: type[NodeType], node_id: str, p: Parameter, value: Any, values: dict[str, Any]) -> Any:
    """The value as build() receives it at run time: a Param for a number, a tuple of Params
    for a colour, a tuple of rows for a matrix, a tuple of (x, y) Params for a curve. Each
    Param's default is the document's value; `values` are the node's checked parameters."""
    t = cls.runtime_type(p.name, values)
    base = cls.runtime_param_name(node_id, p.name)
    made = []
    for name, number in _numbers(base, p, value):
        q = pw.Param(t, name, _scalar(t, number))
        if p.kind in ("int", "float") and (p.minimum is not None or p.maximum is not None):
            q.set_range(p.minimum, p.maximum)
        made.append(q)
    if p.kind in ("int", "float"):
        return made[0]
    if p.kind == "colour":
        return tuple(made)
    if p.kind == "matrix":
        width = len(value[0])
        return tuple(tuple(made[j * width : (j + 1) * width]) for j in range(len(value)))
    return tuple((made[2 * n], made[2 * n + 1]) for n in range(len(value)))


def node_runtime_values(cls: type[NodeType], node_id: str, values: dict[str, Any]) -> dict[str, int | float]:
    """Param name -> number for every run-time parameter of one node (checked values)."""
    out: dict[str, int | float] = {}
    for p in cls.params:
        if p.runtime:
            t = cls.runtime_type(p.name, values)
            base = cls.runtime_param_name(node_id, p.name)
            out.update((name, _scalar(t, number)) for name, number in _numbers(base, p, values[p.name]))
    return out


def runtime_values(doc: Document) -> dict[str, int | float]:
    """Param name -> number for every run-time parameter of every node of the document."""
    from pixelweave.nodes.node_type import node_type

    out: dict[str, int | float] = {}
    for node in doc.nodes:
        cls = node_type(node.type)
        out.update(node_runtime_values(cls, node.id, cls.check_params(node.params)))
    return out


def _shape(p: Parameter, value: Any) -> Any:
    """What of a run-time value is structure: nothing for a number, the size of the rest."""
    if not isinstance(value, (list, tuple)) or not value or not isinstance(value[0], (list, tuple)):
        return [p.kind] if p.kind in ("int", "float", "colour") else value  # a bad value: kept, to be reported
    if p.kind == "matrix":
        return ["matrix", len(value), len(value[0])]
    if p.kind == "curve":
        return ["curve", len(value)]
    return [p.kind]


def structure_key(doc: Document) -> str:
    """The document as text without its run-time values (nor editor positions, name and
    description): equal keys build the same Funcs and compile to the same code."""
    from pixelweave.nodes.node_type import node_types

    types = node_types()
    nodes = []
    for node in doc.nodes:
        params, derived = node_structure(types.get(node.type), node.params)
        nodes.append([node.id, node.type, params, derived, dict(node.inputs), node.all_schedules()])
    return json.dumps(nodes, sort_keys=True)


def node_structure(cls: type[NodeType] | None, params: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """One node's parameters without their run-time values, and what the node type says
    those values still decide: nodes with equal structure build the same Funcs, told apart
    only by their Params' values (the preview keeps a node's Funcs across run-time edits)."""
    runtime = {p.name: p for p in cls.params if p.runtime} if cls is not None else {}
    shaped = {k: (_shape(runtime[k], v) if k in runtime else v) for k, v in params.items()}
    derived = None
    if runtime:
        try:
            derived = cls.runtime_structure(cls.check_params(params))
        except NodeError:
            derived = None  # refused values: BuiltDocument.update and builds report them
    return shaped, derived
