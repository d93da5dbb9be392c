"""The base class of node types and the catalogue's registry.

A node type is one small declarative class: ports, parameters, a docstring (its tooltip),
a category, and one `build()` returning engine Funcs wrapped in Values. Defining the class
registers it; nothing else needs to change to add a node type.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from pixelweave.engine.ir.types import Type
from pixelweave.nodes.errors import NodeError, ParameterError
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port

if TYPE_CHECKING:
    from pixelweave.nodes.context import BuildContext
    from pixelweave.nodes.values import Value

CATEGORIES = (
    "Inputs and outputs",
    "Point and colour",
    "Stencils",
    "Reductions",
    "Resampling",
    "Blends",
    "Boundary conditions",
    "Custom",
)

_REGISTRY: dict[str, type[NodeType]] = {}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _title(name: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return words[:1] + words[1:].lower()


class NodeType:
    """Base of every node type. Subclasses set `category`, `inputs`, `outputs`, `params`
    and implement `build(ctx, **inputs_and_params)`, which returns a Value, or a dict of
    Values keyed by output port name when there are several outputs.

    Parameters declared `runtime=True` reach build() as engine Params (see
    nodes/runtime_params.py), or as plain values when a document is built with constants,
    so build() computes with them through engine expressions only. Conditions on their
    values that build() cannot test on a Param belong in `check_values`.
    """

    type_name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    category: ClassVar[str] = ""
    inputs: ClassVar[tuple[Port, ...]] = ()
    outputs: ClassVar[tuple[Port, ...]] = (Port("out"),)
    params: ClassVar[tuple[Parameter, ...]] = ()

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if abstract:
            return
        if "type_name" not in cls.__dict__:
            cls.type_name = _snake(cls.__name__)
        if "title" not in cls.__dict__:
            cls.title = _title(cls.__name__)
        if cls.category not in CATEGORIES:
            raise TypeError(f"node type {cls.__name__}: category {cls.category!r} is not one of {CATEGORIES}")
        if not (cls.__doc__ or "").strip():
            raise TypeError(f"node type {cls.__name__} needs a docstring: it is the node's tooltip")
        names = [p.name for p in cls.inputs] + [p.name for p in cls.params]
        if len(set(names)) != len(names):
            raise TypeError(f"node type {cls.__name__}: input and parameter names must all differ: {names}")
        outs = [p.name for p in cls.outputs]
        if not outs or len(set(outs)) != len(outs):
            raise TypeError(f"node type {cls.__name__}: needs uniquely named outputs, got {outs}")
        if cls.build is NodeType.build:
            raise TypeError(f"node type {cls.__name__} needs a build() method returning its Values")
        if cls.type_name in _REGISTRY and _REGISTRY[cls.type_name] is not cls:
            raise TypeError(f"node type name {cls.type_name!r} is defined twice")
        _REGISTRY[cls.type_name] = cls

    def build(self, ctx: BuildContext, **kwargs: Any) -> Value | dict[str, Value]:
        """Every registered subclass overrides this (checked when the class is defined)."""
        raise TypeError(f"{type(self).__name__} is an abstract node type and builds nothing")

    @classmethod
    def tooltip(cls) -> str:
        """The docstring, dedented: what the node does, shown when hovering it."""
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.tooltip().split("\n\n")[0].replace("\n", " ")

    @classmethod
    def input_port(cls, name: str) -> Port | None:
        return next((p for p in cls.inputs if p.name == name), None)

    @classmethod
    def output_port(cls, name: str) -> Port | None:
        return next((p for p in cls.outputs if p.name == name), None)

    @classmethod
    def default_params(cls) -> dict[str, Any]:
        return {p.name: p.default for p in cls.params}

    @classmethod
    def runtime_params(cls) -> tuple[Parameter, ...]:
        """The parameters that are compiled as engine Params (changing them recompiles nothing)."""
        return tuple(p for p in cls.params if p.runtime)

    @classmethod
    def runtime_type(cls, name: str, values: dict[str, Any]) -> Type:
        """The engine type of run-time parameter `name`'s Params: f32, or i32 for an int
        parameter. `values` are the node's checked parameters (an element choice may decide)."""
        import pixelweave as pw

        kind = next(p.kind for p in cls.params if p.name == name)
        return pw.Int(32) if kind == "int" else pw.Float(32)

    @classmethod
    def runtime_param_name(cls, node_id: str, name: str) -> str:
        """The base name of run-time parameter `name`'s Params on node node_id."""
        from pixelweave.nodes.runtime_params import param_name

        return param_name(node_id, name)

    @classmethod
    def runtime_structure(cls, values: dict[str, Any]) -> Any:
        """What the run-time values still decide about the generated code (a JSON-able value,
        part of the document's structure key; None by default): a different result means a
        new build. build() reads the plain values from `ctx.values` to decide it alike."""
        return None

    @classmethod
    def check_values(cls, values: dict[str, Any]) -> list[str]:
        """Problems of checked parameter values taken together (a white point below the black
        point), one message each; none by default. Run on every check of the parameters,
        so that a run-time edit is refused just as a rebuild would refuse it."""
        return []

    @classmethod
    def check_params(cls, given: dict[str, Any], *, complete: bool = False) -> dict[str, Any]:
        """Checked parameter values, defaults filled in; ParameterError on an unknown, missing
        (when `complete`) or bad value. Every problem is reported, one per line."""
        problems = []
        known = {p.name for p in cls.params}
        for name in given:
            if name not in known:
                listed = ", ".join(sorted(known)) or "none"
                problems.append(f"unknown parameter `{name}` for a {cls.type_name} node (its parameters: {listed})")
        values = {}
        for p in cls.params:
            if p.name not in given:
                if complete:
                    problems.append(f"missing parameter `{p.name}`")
                values[p.name] = p.check(p.default)
                continue
            try:
                values[p.name] = p.check(given[p.name])
            except ParameterError as e:
                problems.append(e.detail)
        if not problems:
            problems.extend(cls.check_values(values))
        if problems:
            raise ParameterError("; ".join(problems))
        return values


def node_types() -> dict[str, type[NodeType]]:
    """Every registered node type by type name (the catalogue is imported first)."""
    import pixelweave.nodes.catalogue  # noqa: F401 - importing it registers the node types

    return dict(_REGISTRY)


def node_type(type_name: str) -> type[NodeType]:
    types = node_types()
    if type_name not in types:
        raise NodeError(unknown_type_message(type_name))
    return types[type_name]


def unknown_type_message(type_name: str) -> str:
    """Why type_name is not a node type, with the names it may be a misspelling of, or how
    to load a generator's node type."""
    import difflib

    near = difflib.get_close_matches(type_name, node_types(), n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    if type_name.startswith("generator_") and not near:
        hint = (
            "; it is a generator's node type: load the Python file that defines the generator first "
            "(`--nodes FILE.py` on the command line, or File > Load Generator Nodes in the editor)"
        )
    return f"unknown node type `{type_name}`{hint}"


def forget_node_type(type_name: str) -> None:
    """Unregister a node type made at run time (a generator's, before its file is loaded
    again); the catalogue's own types stay."""
    cls = _REGISTRY.get(type_name)
    if cls is not None and cls.__module__.startswith("pixelweave.nodes.catalogue"):
        raise NodeError(f"`{type_name}` is a built-in node type and cannot be unregistered")
    _REGISTRY.pop(type_name, None)
