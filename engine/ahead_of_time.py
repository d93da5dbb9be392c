"""Halide's ahead-of-time outputs for a Pipeline: object, static library, header, assembly,
LLVM assembly, and `compile_to_callable`.

Every output uses the C ABI of engine/runtime/library.py (pw_buffer_t descriptors, the
parallel runtime compiled in). `arguments` orders the inputs of the entry point as in
Halide: it must name every ImageParam and Param the pipeline uses, and only those.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pixelweave.engine.buffer_api import Buffer
from pixelweave.engine.errors import CompileError, InputError
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.target_api import engine_target_name

if TYPE_CHECKING:
    from pixelweave.engine.pipeline import Pipeline


def _input_name(a: Any) -> str:
    if isinstance(a, ImageParam):
        return a.name()
    if isinstance(a, Param):
        return a.name
    raise CompileError(f"an argument list holds ImageParams and Params, got {type(a).__name__}")


def check_arguments(pipeline: Pipeline, arguments: list[Any] | None) -> list[str]:
    """The pipeline's input names in the order of `arguments` (None: the pipeline's own
    order), or CompileError naming what is missing or extra, as Halide refuses it."""
    used = [im.name() for im in pipeline.images] + [p.name for p in pipeline.params]
    if arguments is None:
        return used
    given = [_input_name(a) for a in arguments]
    missing = [n for n in used if n not in given]
    if missing:
        raise CompileError(
            f"Generated code refers to parameter {missing[0]}, which was not found in the argument list "
            f"(given: {', '.join(given) or 'none'}; the pipeline uses: {', '.join(used)})"
        )
    extra = [n for n in given if n not in used]
    if extra:
        raise CompileError(f"argument {extra[0]} is not used by the pipeline (it uses: {', '.join(used) or 'none'})")
    if len(set(given)) != len(given):
        raise CompileError(f"the argument list names an input twice: {', '.join(given)}")
    return given


def lowered_for_export(pipeline: Pipeline, arguments: list[Any] | None, fn_name: str, target: Any) -> LoweredPipeline:
    """The pipeline lowered under C name fn_name, its entry point's inputs ordered as `arguments`."""
    from pixelweave.engine.lower import lower

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", fn_name):
        raise CompileError(f"function name {fn_name!r} must be a C identifier (letters, digits, underscores)")
    order = check_arguments(pipeline, arguments)
    lowered = lower(pipeline, engine_target_name(target), name=fn_name).lowered
    by_name = {a.name: a for a in lowered.arguments}
    outputs = [a for a in lowered.arguments if a.is_output]
    return dataclasses.replace(lowered, arguments=[by_name[n] for n in order] + outputs)


def _module(lowered: LoweredPipeline, target: Any) -> tuple[str, Any]:
    from pixelweave.engine.codegen.llvm import generate_module
    from pixelweave.engine.codegen.target import data_layout, resolve_target
    from pixelweave.engine.lower import deep_recursion
    from pixelweave.engine.runtime.library import refuse_debug_hooks

    if engine_target_name(target) == "opencl":  # the host part (the kernels are OpenCL C)
        from pixelweave.engine.runtime.opencl_library import host_module_ir

        with deep_recursion():
            return host_module_ir(lowered), resolve_target("host")
    spec = resolve_target(engine_target_name(target))
    with deep_recursion():
        module = generate_module(
            lowered,
            triple=spec.triple,
            datalayout=data_layout(spec),
            profile=False,
            embed_runtime=True,
            features=spec.features,
        )
    refuse_debug_hooks(module.ir, lowered.name)
    return module.ir, spec


def compile_to_object(pipeline: Pipeline, filename: str, arguments: Any, fn_name: str, target: Any) -> Path:
    """A position-independent object file defining fn_name (and fn_name_argv, ...); for
    target opencl with the kernels and the OpenCL runtime in it (link -lOpenCL)."""
    from pixelweave.engine.codegen.target import compile_ir_to_object

    lowered = lowered_for_export(pipeline, arguments, fn_name, target)
    path = Path(filename)
    if engine_target_name(target) == "opencl":
        from pixelweave.engine.runtime.opencl_library import write_opencl_object

        write_opencl_object(lowered, path)
        return path
    ir, spec = _module(lowered, target)
    path.write_bytes(compile_ir_to_object(ir, spec, "full", pic=True, jit=False).data)
    return path


def compile_to_header(pipeline: Pipeline, filename: str, arguments: Any, fn_name: str, target: Any) -> Path:
    """The C header declaring fn_name and the buffer descriptor type."""
    from pixelweave.engine.runtime.library import c_header

    lowered = lowered_for_export(pipeline, arguments, fn_name, target)
    path = Path(filename)
    if engine_target_name(target) == "opencl":
        from pixelweave.engine.runtime.opencl_library import opencl_header

        path.write_text(opencl_header(lowered))
        return path
    path.write_text(c_header(lowered, target=engine_target_name(target)))
    return path


def compile_to_static_library(pipeline: Pipeline, prefix: str, arguments: Any, fn_name: str, target: Any) -> Path:
    """PREFIX.a (the object in an archive with a symbol index) and PREFIX.h, as Halide's."""
    archiver = shutil.which("ar")
    if archiver is None:
        raise CompileError("cannot write a static library: no archiver `ar` on PATH")
    object_path = Path(f"{prefix}.o")
    compile_to_object(pipeline, str(object_path), arguments, fn_name, target)
    compile_to_header(pipeline, f"{prefix}.h", arguments, fn_name, target)
    library = Path(f"{prefix}.a")
    library.unlink(missing_ok=True)
    result = subprocess.run([archiver, "rcs", str(library), str(object_path)], capture_output=True, text=True)
    object_path.unlink()
    if result.returncode != 0:
        raise CompileError(f"writing {library.name} failed: {result.stderr}")
    return library


def compile_to_assembly(pipeline: Pipeline, filename: str, arguments: Any, fn_name: str, target: Any) -> Path:
    """The target's assembly text for the pipeline (after LLVM's optimization)."""
    import llvmlite.binding as llvm
    from pixelweave.engine.codegen.target import create_target_machine, optimize_module

    lowered = lowered_for_export(pipeline, arguments, fn_name, target)
    ir, spec = _module(lowered, target)
    module = llvm.parse_assembly(ir, context=llvm.create_context())
    tm = create_target_machine(spec, "full", pic=True, jit=False)
    module.triple = spec.triple
    optimize_module(module, tm, "full")
    path = Path(filename)
    path.write_text(tm.emit_assembly(module))
    return path


def compile_to_llvm_assembly(pipeline: Pipeline, filename: str, arguments: Any, fn_name: str, target: Any) -> Path:
    """The LLVM IR (.ll text) the backend compiles, before optimization."""
    lowered = lowered_for_export(pipeline, arguments, fn_name, target)
    ir, _ = _module(lowered, target)
    path = Path(filename)
    path.write_text(ir)
    return path


class Callable:
    """Halide's Callable: `c(input..., output...)` with the inputs in the order of the
    argument list (arrays or Buffers for images, numbers for Params) and then one output
    Buffer (or array) per output, filled in place over its mins. Keywords by name work too."""

    def __init__(self, pipeline: Pipeline, arguments: Any, target: Any) -> None:
        self._pipeline = pipeline
        self._inputs = check_arguments(pipeline, arguments)
        self._outputs = [f.name() for f in pipeline.outputs]
        self._compiled = pipeline.compile(target)
        self._target = target

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        from pixelweave.engine.realize_buffers import realize_into

        names = self._inputs + self._outputs
        if len(args) > len(names):
            raise InputError(f"this Callable takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise InputError(f"`{key}` is not an argument of this Callable ({', '.join(names)})")
            if key in given:
                raise InputError(f"argument `{key}` is given twice")
            given[key] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise InputError(f"no value given for `{missing[0]}` (this Callable takes {', '.join(names)})")
        outputs = [given[n] if isinstance(given[n], Buffer) else Buffer(given[n]) for n in self._outputs]
        inputs = {n: given[n] for n in self._inputs}
        realize_into(self._pipeline, outputs, inputs, self._target, False)
