"""Generators as node types: each `@pixelweave.generator` class of a Python file becomes a
node type of the Custom category, so a Halide-style generator can be dropped into a
document like any other node.

The node's input ports are the generator's InputBuffers (1, 2 or 3 dimensions: an array,
a gray or a colour image of the declared element type); its parameters are the
GeneratorParams (structural: changing one rebuilds) and the InputScalars (run-time Params:
changing one re-runs compiled code; their default is the estimate generate() sets, else 0);
its outputs are the OutputBuffers, each as large as the first input image with at least as
many dimensions. The generator's own schedule comes with it, and the document's schedule
directives apply on top, by the Func names generate() gave.

A document names such a node's type `generator_<name>` but never the file: loading a
document runs no code, so the file is loaded first, explicitly (`--nodes FILE.py` on the
command line, `load_generator_nodes(path)`, or File > Load Generator Nodes in the editor).
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pixelweave.engine.errors import CompileError, PixelweaveError
from pixelweave.engine.generator import (
    GeneratorParam,
    InputBuffer,
    InputScalar,
    OutputBuffer,
    generator_declarations,
    load_generators,
)
from pixelweave.engine.input_binding import ImageBinding, bind_inputs
from pixelweave.engine.ir.coerce import cast
from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.func import func_name_prefix
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.convert import TYPES
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.node_type import NodeType, forget_node_type, node_types
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import ELEMENT_GROUPS, Port, short_type_name
from pixelweave.nodes.values import Value

if TYPE_CHECKING:
    from pixelweave.nodes.context import BuildContext

TYPE_PREFIX = "generator_"
LAYOUTS = {0: "scalar", 1: "array", 2: "gray", 3: "colour"}
PORT_LAYOUTS = {1: "array", 2: "gray", 3: "colour"}


def generator_type_name(generator_name: str) -> str:
    """The node type name of a generator: `generator_` and its name made an identifier."""
    return TYPE_PREFIX + re.sub(r"[^0-9A-Za-z_]", "_", generator_name).lower()


def load_generator_nodes(path: str | Path) -> list[type[NodeType]]:
    """Run the Python file at path and register a node type for each generator it defines
    (replacing the node types an earlier load of a generator of the same name made).
    Whatever the file's code raises comes back as a CompileError naming the file."""
    with user_code(f"{path}"):
        generators = load_generators(str(path))
    return [generator_node_type(cls, source=str(path)) for cls in generators.values()]


@contextlib.contextmanager
def user_code(where: str, node_id: str | None = None) -> Iterator[None]:
    """Runs a generator file's code: any error it raises, of whatever kind, becomes a
    CompileError (a NodeError when node_id is given) that says where."""
    try:
        yield
    except NodeError:
        raise
    except PixelweaveError as e:
        if node_id is None:
            raise CompileError(f"{where}: {e}") from e
        raise NodeError(f"{where}: {e}", node_id) from e
    except Exception as e:  # user code may raise anything; the caller gets one error kind
        message = f"{where}: {type(e).__name__}: {e}"
        if node_id is None:
            raise CompileError(message) from e
        raise NodeError(message, node_id) from e


def generator_node_type(generator_class: type, source: str = "") -> type[NodeType]:
    """A node type building `generator_class` (a class made by `@pixelweave.generator`).
    CompileError when the generator cannot be a node (see the module docstring)."""
    name = generator_class.name()
    declared = generator_declarations(generator_class)
    where = f"generator `{name}`"
    images = {n: d for n, d in declared.items() if isinstance(d, InputBuffer)}
    outputs = {n: d for n, d in declared.items() if isinstance(d, OutputBuffer)}
    for n, d in [*images.items(), *outputs.items()]:
        if short_type_name(d.type) not in ELEMENT_GROUPS["any"]:
            raise CompileError(f"{where}: `{n}` is {d.type}, which no node port carries")
    for n, d in images.items():
        if d.dimensions not in PORT_LAYOUTS:
            raise CompileError(f"{where}: input `{n}` has {d.dimensions} dimensions; a node input has 1, 2 or 3")
    for n, d in outputs.items():
        if d.dimensions not in LAYOUTS:
            raise CompileError(f"{where}: output `{n}` has {d.dimensions} dimensions; a node output has 0 to 3")
        if d.dimensions and not any(i.dimensions >= d.dimensions for i in images.values()):
            raise CompileError(
                f"{where}: output `{n}` has {d.dimensions} dimensions, but no input buffer has as many to give it "
                "its size"
            )
    estimates = _scalar_estimates(generator_class)
    params = tuple(_parameter(n, d, estimates.get(n)) for n, d in declared.items() if _is_parameter(d))
    type_name = generator_type_name(name)
    if type_name in node_types():
        existing = node_types()[type_name]
        if getattr(existing, "generator_class", None) is None:
            raise CompileError(f"{where}: its node type name `{type_name}` is taken by a built-in node type")
        forget_node_type(type_name)
    doc = _user_docstring(generator_class) or f"The generator `{name}`"
    origin = f" (from {Path(source).name})" if source else ""
    namespace = {
        "__doc__": f"{doc}\n\nThe generator `{name}`{origin}; its InputScalars are run-time parameters.",
        "type_name": type_name,
        "title": name,
        "category": "Custom",
        "inputs": tuple(
            Port(n, PORT_LAYOUTS[d.dimensions], short_type_name(d.type), doc=f"InputBuffer {d.type}")
            for n, d in images.items()
        ),
        "outputs": tuple(
            Port(n, LAYOUTS[d.dimensions], short_type_name(d.type), doc=f"OutputBuffer {d.type}")
            for n, d in outputs.items()
        ),
        "params": params,
        "generator_class": generator_class,
        "source": source,
        "build": _build,
        "runtime_type": classmethod(_runtime_type),
    }
    return type(f"Generator_{type_name}", (NodeType,), namespace)


def _user_docstring(generator_class: type) -> str:
    """The docstring the user's class (or a base of theirs) gives, not the Generator base's."""
    from pixelweave.engine.generator import Generator

    for klass in generator_class.__mro__:
        if klass in (Generator, object):
            continue
        if klass.__dict__.get("__doc__"):
            return inspect.cleandoc(klass.__doc__)
    return ""


def _is_parameter(d: Any) -> bool:
    return isinstance(d, (GeneratorParam, InputScalar))


def _scalar_estimates(generator_class: type) -> dict[str, float | int | None]:
    """The estimate generate() gives each InputScalar with the default GeneratorParams
    (a generator that cannot be built with its defaults cannot be a node either)."""
    with user_code(f"generator `{generator_class.name()}` does not build with its defaults"):
        instance = generator_class()
        instance.build_pipeline()
    declared = generator_declarations(generator_class)
    return {n: getattr(instance, n).estimate for n, d in declared.items() if isinstance(d, InputScalar)}


def _parameter(name: str, d: Any, estimate: Any) -> Parameter:
    if isinstance(d, InputScalar):
        t: Type = d.type
        if t.is_bool():
            return Parameter(name, "bool", bool(estimate or False), doc="InputScalar bool (rebuilds)")
        if t.is_float():
            return Parameter(name, "float", float(estimate or 0.0), doc=f"InputScalar {t}", runtime=True)
        lo, hi = t.min(), t.max()
        lo, hi = max(lo, -(2**31)), min(hi, 2**31 - 1)  # run-time ints travel as int32
        default = min(max(int(estimate or 0), lo), hi)
        return Parameter(name, "int", default, minimum=lo, maximum=hi, doc=f"InputScalar {t}", runtime=True)
    default = d.default
    if isinstance(default, Type):
        choices = tuple(TYPES)
        if short_type_name(default) not in choices:
            raise CompileError(f"GeneratorParam `{name}`: its default type {default} is not one of {choices}")
        return Parameter(name, "choice", short_type_name(default), choices=choices, doc="GeneratorParam (a type)")
    kind = {bool: "bool", int: "int", float: "float", str: "string"}[type(default)]
    return Parameter(name, kind, default, doc="GeneratorParam")


def _runtime_type(cls: type[NodeType], name: str, values: dict[str, Any]) -> Type:
    from pixelweave.engine.ir.types import Float, Int

    d = generator_declarations(cls.generator_class)[name]  # type: ignore[attr-defined]
    return Float(32) if d.type.is_float() else Int(32)


def _build(self: NodeType, ctx: BuildContext, **given: Any) -> Value | dict[str, Value]:
    """Instantiate the generator with the node's GeneratorParams, run generate() with its
    own ImageParams and Params (so set_estimate, width() and boundary conditions work as in
    Halide), then bind those to the node's inputs and run-time parameters."""
    cls = type(self)
    generator_class = cls.generator_class  # type: ignore[attr-defined]
    declared = generator_declarations(generator_class)
    settings = {}
    for n, d in declared.items():
        if isinstance(d, GeneratorParam):
            value = given[n]
            settings[n] = TYPES[value] if isinstance(d.default, Type) else value
    prefix = f"{ctx.node_id}."
    with user_code(f"generator `{generator_class.name()}`", ctx.node_id), func_name_prefix(prefix):
        instance = generator_class(settings)
        instance.build_pipeline()
    inputs: dict[str, Value] = {n: given[n] for n, d in declared.items() if isinstance(d, InputBuffer)}
    images = {getattr(instance, n): ImageBinding(v.func, v.extents) for n, v in inputs.items()}
    scalars = {
        getattr(instance, n): _scalar_value(d.type, given[n]) for n, d in declared.items() if isinstance(d, InputScalar)
    }
    outputs = instance.outputs()
    with user_code(f"generator `{generator_class.name()}`", ctx.node_id):
        bind_inputs(outputs, images, scalars)
    from pixelweave.engine.pipeline import Pipeline

    for f in Pipeline(outputs).funcs:
        if f.name().startswith(prefix):
            ctx.funcs[f.name()[len(prefix) :]] = f
    result = {}
    ordered = list(inputs.values())
    for n, d in declared.items():
        if not isinstance(d, OutputBuffer):
            continue
        f = getattr(instance, n)
        source = next((v for v in ordered if len(v.extents) >= d.dimensions), None) if d.dimensions else None
        extents = tuple(source.extents[: d.dimensions]) if source is not None else ()
        result[n] = Value(f, LAYOUTS[d.dimensions], extents)
    return result if len(result) > 1 else next(iter(result.values()))


def _scalar_value(t: Type, value: Any) -> Expr:
    """A node parameter (an engine Param when run-time, else a plain value) as the
    InputScalar's type."""
    return cast(t, value)
