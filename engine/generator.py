"""Halide's Python Generators: a class declaring its parameters, inputs and outputs, whose
`generate()` defines the outputs; usable from Python (`call`, `compile_to_callable`) and
ahead of time (`compile_to_static_library`, ...).

    @pw.generator(name="brighten")
    class Brighten:
        gain = pw.GeneratorParam(2)
        input = pw.InputBuffer(pw.UInt(8), 2)
        offset = pw.InputScalar(pw.Int(32))
        output = pw.OutputBuffer(pw.UInt(8), 2)

        def generate(g):
            x, y = pw.Var("x"), pw.Var("y")
            g.output[x, y] = pw.u8(pw.min(pw.i32(g.input[x, y]) * g.gain + g.offset, 255))

In `generate()`, a GeneratorParam reads as its value, an InputBuffer as an ImageParam (or
the one it was bound to by `call`), an InputScalar as a Param (or the Expr it was bound
to), and an OutputBuffer as the Func to define, named after the attribute.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.coerce import to_expr
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Type


class GeneratorParam:
    """A compile-time setting with a default (int, float, bool, str or Type); values given
    with `generator_params={name: value}` are converted to the default's kind."""

    def __init__(self, default: Any) -> None:
        if not isinstance(default, (bool, int, float, str, Type)):
            raise CompileError(f"a GeneratorParam's default must be a bool, int, float, str or Type, got {default!r}")
        self.default = default

    def convert(self, name: str, value: Any) -> Any:
        kind = type(self.default)
        try:
            if kind is bool and isinstance(value, str):
                if value.lower() not in ("true", "false"):
                    raise ValueError(value)
                return value.lower() == "true"
            if kind is Type:
                if not isinstance(value, Type):
                    raise ValueError(value)
                return value
            return kind(value)
        except (TypeError, ValueError):
            raise CompileError(
                f"GeneratorParam `{name}` is a {kind.__name__} (default {self.default!r}); {value!r} is not one"
            ) from None


class InputBuffer:
    """An input image of a type and dimensionality (an ImageParam inside generate())."""

    def __init__(self, t: Type, dimensions: int) -> None:
        self.type, self.dimensions = t, dimensions


class InputScalar:
    """A scalar input (a Param inside generate())."""

    def __init__(self, t: Type) -> None:
        self.type = t


class OutputBuffer:
    """An output of a type and dimensionality (the Func generate() defines)."""

    def __init__(self, t: Type, dimensions: int) -> None:
        self.type, self.dimensions = t, dimensions


_generators: dict[str, type] = {}

# Halide's autoscheduler names (each a plugin in Halide); Pixelweave plans every one of them, and
# its own name "analytic", with its analytic scheduler (engine/autoschedule).
AUTOSCHEDULER_NAMES = ("Adams2019", "Anderson2021", "Li2018", "Mullapudi2016", "analytic")
_active_target: list[Any] = ["host"]


@contextlib.contextmanager
def GeneratorContext(target: Any = "host") -> Iterator[None]:  # noqa: N802 - Halide's name
    """The target generators made inside the block compile for (Halide's GeneratorContext;
    without one, generators compile for the host)."""
    _active_target.append(target)
    try:
        yield
    finally:
        _active_target.pop()


def _declarations(cls: type) -> dict[str, Any]:
    """Parameters, inputs and outputs in the order the class (and its bases) declare them."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, (GeneratorParam, InputBuffer, InputScalar, OutputBuffer)):
                found[name] = value
    return found


class Generator:
    """Base of generator classes (the `@generator` decorator adds it to a class)."""

    generator_name = ""
    alias_generator_params: dict[str, Any] = {}  # noqa: RUF012 - set per class by @alias

    def __init__(self, generator_params: dict[str, Any] | None = None, target: Any = None) -> None:
        object.__setattr__(self, "_target", target if target is not None else _active_target[-1])
        object.__setattr__(self, "_built", None)
        object.__setattr__(self, "_scheduled", False)
        declared = _declarations(type(self))
        params = {**type(self).alias_generator_params, **(generator_params or {})}
        object.__setattr__(self, "_autoscheduler", self._autoscheduler_name(params))
        for name in params:
            if not isinstance(declared.get(name), GeneratorParam):
                known = ", ".join(n for n, d in declared.items() if isinstance(d, GeneratorParam)) or "none"
                raise CompileError(
                    f"generator `{self.name()}` has no GeneratorParam `{name}` (its GeneratorParams: {known})"
                )
        for name, d in declared.items():
            if isinstance(d, GeneratorParam):
                value = d.convert(name, params[name]) if name in params else d.default
            elif isinstance(d, InputBuffer):
                value = ImageParam(d.type, d.dimensions, name)
            elif isinstance(d, InputScalar):
                value = Param(d.type, name)
            else:
                value = Func(name)
            object.__setattr__(self, name, value)

    @classmethod
    def name(cls) -> str:
        return cls.generator_name or cls.__name__

    def target(self) -> Any:
        """The Target generate() compiles for (a `Target`, as Halide's, even where the
        generator was given an engine target name such as "host")."""
        from pixelweave.engine.target_api import as_target

        return as_target(self._target)

    def natural_vector_size(self, t: Type) -> int:
        return self.target().natural_vector_size(t)

    def using_autoscheduler(self) -> bool:
        """Whether the `autoscheduler` GeneratorParam is set (generate() then leaves the
        schedule to it, which compile_to_callable and the libraries apply)."""
        return self._autoscheduler is not None

    def _autoscheduler_name(self, params: dict[str, Any]) -> str | None:
        """Take Halide's `autoscheduler` (and refuse `autoscheduler.*`) out of params."""
        for key in [k for k in params if k.startswith("autoscheduler.")]:
            raise CompileError(
                f"generator `{self.name()}`: `{key}` is not accepted; Pixelweave's autoscheduler takes no options"
            )
        name = params.pop("autoscheduler", None)
        if name is None or name == "":
            return None
        if name not in AUTOSCHEDULER_NAMES:
            raise CompileError(
                f"generator `{self.name()}`: unknown autoscheduler {name!r} (known: {', '.join(AUTOSCHEDULER_NAMES)})"
            )
        return str(name)

    def scheduled_pipeline(self) -> Any:
        """The pipeline, scheduled by the autoscheduler when one is named (once)."""
        pipeline = self.build_pipeline()
        if self._autoscheduler is not None and not self._scheduled:
            from pixelweave.engine.autoschedule import auto_schedule

            # the analytic scheduler plans for the host's CPU (any CPU target) and refuses a GPU target
            engine_target = self.target().engine_target()
            auto_schedule(pipeline, "opencl" if engine_target == "opencl" else "host", "analytic")
            object.__setattr__(self, "_scheduled", True)
        return pipeline

    def configure(self) -> None:
        """Called before generate(); override to adjust GeneratorParams."""

    def generate(self) -> None:
        raise CompileError(f"generator `{self.name()}` must define generate()")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _declarations(type(self)):
            raise CompileError(
                f"generator `{self.name()}`: `{name}` is a declared parameter, input or output and cannot be replaced"
            )
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ building
    def inputs(self) -> list[Any]:
        """The ImageParams and Params of the inputs, in declaration order."""
        declared = _declarations(type(self))
        return [getattr(self, n) for n, d in declared.items() if isinstance(d, (InputBuffer, InputScalar))]

    def outputs(self) -> list[Func]:
        declared = _declarations(type(self))
        return [getattr(self, n) for n, d in declared.items() if isinstance(d, OutputBuffer)]

    def build_pipeline(self) -> Any:
        """Run configure() and generate() once and return the Pipeline of the outputs,
        after checking each output's type and dimensions against its declaration."""
        from pixelweave.engine.pipeline import Pipeline

        if self._built is None:
            self.configure()
            self.generate()
            declared = _declarations(type(self))
            for name, d in declared.items():
                if not isinstance(d, OutputBuffer):
                    continue
                f = getattr(self, name)
                if not f.defined():
                    raise CompileError(f"generator `{self.name()}` did not define its output `{name}` in generate()")
                if f.type() != d.type or f.dimensions() != d.dimensions:
                    raise CompileError(
                        f"generator `{self.name()}`: output `{name}` is declared {d.type} with {d.dimensions} "
                        f"dimensions, but generate() defined it as {f.type()} with {f.dimensions()}"
                    )
            object.__setattr__(self, "_built", Pipeline(self.outputs()))
        return self._built

    def compile_to_callable(self) -> Any:
        """A Callable taking the inputs in declaration order, then the output Buffers."""
        return self.scheduled_pipeline().compile_to_callable(self.inputs(), self._target)

    def compile_to_static_library(self, filename_prefix: str, fn_name: str = "") -> None:
        """PREFIX.a and PREFIX.h with the entry point fn_name (default: the generator's name)."""
        import re

        fn = fn_name or re.sub(r"[^0-9A-Za-z_]", "_", self.name())
        self.scheduled_pipeline().compile_to_static_library(filename_prefix, self.inputs(), fn, self._target)

    @classmethod
    def call(cls, *args: Any, generator_params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Use the generator inside another algorithm: inputs bound to ImageParams or
        Buffers (InputBuffer) and to Exprs or numbers (InputScalar), positionally in
        declaration order or by name; returns the output Func (a tuple for several)."""
        from pixelweave.engine.buffer_api import Buffer

        generator = cls(generator_params)
        declared = _declarations(cls)
        input_names = [n for n, d in declared.items() if isinstance(d, (InputBuffer, InputScalar))]
        if len(args) > len(input_names):
            raise CompileError(f"generator `{cls.name()}` takes {len(input_names)} inputs, got {len(args)}")
        bound = dict(zip(input_names, args, strict=False))
        for name, value in kwargs.items():
            if name not in input_names:
                raise CompileError(
                    f"generator `{cls.name()}` has no input `{name}` (its inputs: {', '.join(input_names)})"
                )
            if name in bound:
                raise CompileError(f"input `{name}` of generator `{cls.name()}` is given twice")
            bound[name] = value
        missing = [n for n in input_names if n not in bound]
        if missing:
            raise CompileError(f"generator `{cls.name()}` needs its input `{missing[0]}`")
        for name, value in bound.items():
            if isinstance(declared[name], InputBuffer):
                if isinstance(value, Buffer):
                    image = getattr(generator, name)
                    image.set(value)
                    continue
                if not isinstance(value, ImageParam):
                    raise CompileError(
                        f"input `{name}` of generator `{cls.name()}` needs an ImageParam or a Buffer in call(), "
                        f"got {type(value).__name__}"
                    )
            else:
                value = to_expr(value)
            object.__setattr__(generator, name, value)
        generator.build_pipeline()
        outputs = generator.outputs()
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def generator(name: str = "") -> Any:
    """Class decorator registering a Halide-style generator under name (default: the class name)."""

    def register(cls: type) -> type:
        if not isinstance(cls, type):
            raise CompileError("@generator decorates a class")
        registered = name or cls.__name__
        bases = (cls,) if issubclass(cls, Generator) else (cls, Generator)
        made = type(cls.__name__, bases, {"generator_name": registered, "__module__": cls.__module__})
        _generators[registered] = made
        return made

    return register


def alias(**aliases: dict[str, Any]) -> Any:
    """Class decorator (above @generator) registering each keyword as another generator: the
    same class with those GeneratorParams set, e.g. `@alias(blur_auto={"autoscheduler":
    "Mullapudi2016"})`; returns the class unchanged, as Halide's."""

    def register(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, Generator) and cls.generator_name):
            raise CompileError("@alias can only be used in conjunction with @generator (put @alias above it)")
        for name, params in aliases.items():
            if not isinstance(params, dict):
                raise CompileError(f"the generator alias {name} specifies something other than a dict: {params!r}")
            made = type(
                name,
                (cls,),
                {"generator_name": name, "alias_generator_params": dict(params), "__module__": cls.__module__},
            )
            _generators[name] = made
        return cls

    return register


def registered_generators() -> dict[str, type]:
    """Every generator class registered with @generator in this process, by name."""
    return dict(_generators)


def load_generators(path: str) -> dict[str, type]:
    """Run the Python file at path and return the generators it defines (aliases included), by name."""
    import runpy

    before = dict(_generators)
    try:
        namespace = runpy.run_path(path, run_name="pixelweave_generator_file")
    except FileNotFoundError:
        raise CompileError(f"no generator file {path}") from None
    found = {
        c.name(): c
        for c in namespace.values()
        if isinstance(c, type) and issubclass(c, Generator) and c is not Generator and c.generator_name
    }
    found.update({n: c for n, c in _generators.items() if before.get(n) is not c})
    if not found:
        raise CompileError(f"{path} defines no generator (decorate a class with @pixelweave.generator)")
    return found


def export_generator(
    cls: type, directory: str, name: str = "", params: dict[str, Any] | None = None, target: Any = "host"
) -> list[str]:
    """Write DIR/NAME.a and DIR/NAME.h for a generator (as Halide's generator build does);
    returns the paths written."""
    import re
    from pathlib import Path

    name = name or re.sub(r"[^0-9A-Za-z_]", "_", cls.name())
    Path(directory).mkdir(parents=True, exist_ok=True)
    prefix = str(Path(directory) / name)
    cls(params, target).compile_to_static_library(prefix, name)
    return [f"{prefix}.a", f"{prefix}.h"]


def generator_declarations(cls: type) -> dict[str, Any]:
    """A generator class's GeneratorParams, InputBuffers, InputScalars and OutputBuffers by
    attribute name, in the order the class declares them."""
    return _declarations(cls)
