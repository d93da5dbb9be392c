"""Lifted stages: one stage of a C function or Python prototype lifted by `pixelweave lift`
(nodes/lift/), kept as a declarative engine definition (nodes/lift/definition_json.py)."""

from __future__ import annotations

from typing import Any

from pixelweave.nodes.context import BuildContext
from pixelweave.nodes.errors import ParameterError
from pixelweave.nodes.lift.definition_json import StageInputs, build_stage, check_definition
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

CATEGORY = "Custom"
PORTS = ("a", "b", "c", "d", "e", "f", "g", "h")

# The default: a copy of the gray image on input a.
IDENTITY = {
    "type": "u8",
    "layout": "gray",
    "reads": {"a": "the input"},
    "extents": {"exprs": [["extent", "a", 0], ["extent", "a", 1]], "roots": [0, 1]},
    "pure": {"exprs": [["var", 0], ["var", 1], ["call", "a", "u8", 0, 1]], "value": 2},
    "updates": [],
}


class LiftedStage(NodeType):
    """One stage of lifted C or Python code (File > Import Function…, `pixelweave lift -o`):
    an engine definition kept as data, the operations of the original code spelled out in
    Halide's terms.

    The inputs a..h carry the buffers, stages and scalar parameters the stage reads (its
    `definition` names them: buffer `src` on a, parameter `width` on b...). Reads of an
    input of another element type convert by value. A reduction or a histogram is an
    update over an RDom. `verification` says how the lifted function was checked against
    the original (differential testing against cc -O2, a z3 proof, or CPython on the
    prototype's examples); `source` is the file and line the stage came from.
    """

    category = CATEGORY
    inputs = tuple(
        Port(p, "any", "any", doc="a buffer, stage or scalar the definition reads", optional=True) for p in PORTS
    )
    outputs = (Port("out", "any", "any", doc="the stage: gray f[x, y], colour f[x, y, c], array f[i] or scalar"),)
    params = (
        Parameter(
            "definition",
            "data",
            IDENTITY,
            doc="the stage's engine definition as JSON operations (see docs/lifting.md)",
        ),
        Parameter("verification", "string", "not verified", doc="how the lifted function was checked"),
        Parameter("source", "string", "", doc="the file and line the stage was lifted from"),
    )

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        try:
            check_definition(values["definition"], PORTS)
        except ParameterError as e:
            return [e.detail]
        return []

    def build(
        self, ctx: BuildContext, definition: dict[str, Any], verification: str, source: str, **ports: Value
    ) -> Value:
        layout = definition["layout"]
        pure_vars = {"gray": (ctx.x, ctx.y), "colour": (ctx.x, ctx.y, ctx.c), "array": (ctx.i,), "scalar": ()}[layout]
        inputs = StageInputs({k: v for k, v in ports.items() if v is not None}, pure_vars, ctx.error)
        out = ctx.func("out")
        try:
            layout, extents = build_stage(definition, out, inputs)
        except (ValueError, TypeError, AssertionError, IndexError) as e:
            raise ctx.error(f"the definition cannot be built: {e}") from None
        return Value(out, layout, tuple(extents))
