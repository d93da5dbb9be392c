"""Exporting a pipeline as a native library: NAME.o, libNAME.so and NAME.h for C and C++.

The library is self-contained: the parallel runtime is compiled into it with internal
linkage (its worker threads are joined by a global destructor when the library is
unloaded or the process exits), and only NAME, NAME_argv, NAME_error_message and
NAME_release_memory are exported. It depends on libc, libm and pthreads only.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pixelweave.engine.codegen.llvm import (
    BUFFER_SIZE,
    DIMENSION_SIZE,
    ErrorCode,
    generate_module,
)
from pixelweave.engine.codegen.target import compile_ir_to_object, data_layout, resolve_target
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.debug_calls import DEBUG_HOOKS
from pixelweave.engine.ir.memoize_calls import MEMOIZE_HOOKS
from pixelweave.engine.ir.types import Type
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime.thread_pool import NUM_THREADS_ENV

_C_SCALARS = {
    ("uint", 1): "uint8_t",
    ("int", 8): "int8_t",
    ("int", 16): "int16_t",
    ("int", 32): "int32_t",
    ("int", 64): "int64_t",
    ("uint", 8): "uint8_t",
    ("uint", 16): "uint16_t",
    ("uint", 32): "uint32_t",
    ("uint", 64): "uint64_t",
    ("float", 32): "float",
    ("float", 64): "double",
}


@dataclass(frozen=True)
class ExportedLibrary:
    """Paths of the files export_library wrote."""

    name: str
    object_path: Path
    shared_library_path: Path
    header_path: Path


def export_library(
    lowered: LoweredPipeline,
    name: str | None = None,
    directory: str | Path = ".",
    target: str = "host",
    *,
    level: str = "full",
    checked: bool = False,
) -> ExportedLibrary:
    """Write NAME.o (position independent), libNAME.so (linked with the system `cc`) and
    NAME.h into directory. The entry point is called NAME (default: the pipeline's name).
    target "host" uses every feature of this CPU; "x86-64", "x86-64-v3" (AVX2) and
    "x86-64-v4" (AVX-512) run on any machine of that level; "opencl" runs the GPU-scheduled
    Funcs as OpenCL kernels (engine/runtime/opencl_library.py, which also writes NAME.cl). checked=True tests every load
    and store index against its buffer: a violation makes the call return
    PW_ASSERTION_FAILED with NAME_error_message() naming the buffer and the index (slower:
    for testing a schedule in the program that will use it)."""
    if target == "opencl":  # the host code and an OpenCL runtime, the kernels embedded
        from pixelweave.engine.runtime.opencl_library import export_opencl_library

        if checked:
            raise CompileError("checked=True is available for CPU targets only, not target='opencl'")
        return export_opencl_library(lowered, name, directory, level=level)
    name = name or lowered.name
    if name != lowered.name:
        lowered = dataclasses.replace(lowered, name=name)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    spec = resolve_target(target)
    module = generate_module(
        lowered,
        triple=spec.triple,
        datalayout=data_layout(spec),
        profile=False,
        embed_runtime=True,
        checked=checked,
        features=spec.features,
    )
    refuse_debug_hooks(module.ir, name)
    obj = compile_ir_to_object(module.ir, spec, level, pic=True, jit=False).data
    object_path = directory / f"{name}.o"
    object_path.write_bytes(obj)
    header_path = directory / f"{name}.h"
    header_path.write_text(c_header(lowered, target=spec.name))
    library_path = directory / f"lib{name}.so"
    compiler = shutil.which("cc")
    if compiler is None:
        raise CompileError("cannot link a shared library: no C compiler `cc` on PATH (NAME.o was written)")
    command = [compiler, "-shared", "-o", str(library_path), str(object_path), "-lm", "-lpthread"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise CompileError(f"linking {library_path.name} failed:\n{' '.join(command)}\n{result.stderr}")
    return ExportedLibrary(name, object_path, library_path, header_path)


def refuse_debug_hooks(ir_text: str, name: str) -> None:
    """CompileError if the code calls print or trace hooks, which exist only in this process."""
    if any(f"@{symbol}(" in ir_text for symbol in DEBUG_HOOKS.values()):
        raise CompileError(
            f"pipeline `{name}` uses print, print_when or tracing, which report to Python and so work only in "
            "code compiled here (realize, compile, compile_to_callable); remove them to export it"
        )
    if any(f"@{symbol}(" in ir_text for symbol in MEMOIZE_HOOKS.values()):
        raise CompileError(
            f"pipeline `{name}` memoizes a Func (memoize()), whose cache lives in this Python process and so works "
            "only in code compiled here (realize, compile, compile_to_callable); remove the memoize() to export it"
        )


def c_identifier(name: str) -> str:
    """A Func or parameter name as a C identifier: Func names such as `blur.out` contain dots."""
    import re

    return re.sub(r"[^0-9A-Za-z_]", "_", name)


def _c_parameter(a: Argument) -> str:
    if a.is_buffer():
        return f"{'' if a.is_output else 'const '}pw_buffer_t *{c_identifier(a.name)}"
    return f"{_C_SCALARS[(a.type.code, a.type.bits)]} {c_identifier(a.name)}"


def _describe(a: Argument) -> str:
    t: Type = a.type
    if a.is_buffer():
        role = "output" if a.is_output else "input"
        code = {"int": "PW_TYPE_INT", "uint": "PW_TYPE_UINT", "float": "PW_TYPE_FLOAT"}[t.code]
        return f"{role} buffer of {t}, {a.dimensions} dimension(s) (type_code {code}, type_bits {t.bits})"
    return f"scalar {t}" + (" (0 or 1)" if t.is_bool() else "")


def c_header(lowered: LoweredPipeline, *, target: str = "host") -> str:
    """The C header of an exported pipeline: buffer structs, error codes and prototypes."""
    name = lowered.name
    guard = f"PIXELWEAVE_{name.upper()}_H"
    params = ", ".join(_c_parameter(a) for a in lowered.arguments) or "void"
    arg_docs = "\n".join(f" *   {i}. {a.name}: {_describe(a)}" for i, a in enumerate(lowered.arguments))
    errors = "\n".join(f"    PW_{e.name} = {int(e)}," for e in ErrorCode)
    return f"""\
/* {name}.h: generated by Pixelweave for target {target}. Link with -l{name}. */
#ifndef {guard}
#define {guard}

#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

#ifndef PIXELWEAVE_BUFFER_T_DEFINED
#define PIXELWEAVE_BUFFER_T_DEFINED

/* One dimension of a buffer. Strides count ELEMENTS, not bytes. The element at
 * coordinates (x0, x1, ...) is host[sum((xi - dim[i].min) * dim[i].stride)]. */
typedef struct pw_dimension_t {{
    int32_t min, extent, stride, flags;
}} pw_dimension_t;

/* A buffer descriptor. Dimension 0 is the innermost (fastest varying) one: a row-major
 * h x w image is dim[0] = {{0, w, 1, 0}}, dim[1] = {{0, h, w, 0}} (NumPy's last axis first).
 * Booleans are stored one per byte (type_code PW_TYPE_UINT, type_bits 1). */
typedef struct pw_buffer_t {{
    uint8_t *host;          /* address of the element at the mins */
    int32_t type_code;      /* PW_TYPE_INT, PW_TYPE_UINT or PW_TYPE_FLOAT */
    int32_t type_bits;      /* 1 (bool), 8, 16, 32 or 64 */
    int32_t dimensions;
    int32_t flags;          /* reserved, set to 0 */
    pw_dimension_t *dim;    /* dimensions entries */
}} pw_buffer_t;

enum {{ PW_TYPE_INT = 0, PW_TYPE_UINT = 1, PW_TYPE_FLOAT = 2 }};

/* Return codes of pipeline entry points; the message of a failure is given by
 * NAME_error_message(). */
enum pw_error_code {{
{errors}
}};

#endif /* PIXELWEAVE_BUFFER_T_DEFINED */

/* Runs the pipeline. Arguments, in order:
{arg_docs}
 * Buffers are checked against these types and dimension counts on entry (a mismatch
 * returns PW_BAD_ARGUMENT). Returns PW_SUCCESS (0) or an error code. Parallel loops run
 * on a pool of {NUM_THREADS_ENV} threads (default: one per CPU), started on first use.
 * Safe to call from several threads at once. */
int32_t {name}({params});

/* The same, with args[i] pointing to the i-th argument: the pw_buffer_t for a buffer,
 * the value for a scalar. */
int32_t {name}_argv(void **args);

/* The message of the calling thread's last failure (empty after a success), like errno. */
const char *{name}_error_message(void);

/* Intermediate buffers allocated once per call are kept for the next call (fresh memory
 * costs a page fault per page). This frees them; the next call allocates them again. */
void {name}_release_memory(void);

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""


assert BUFFER_SIZE == 32 and DIMENSION_SIZE == 16, "the header's structs must match the code generator"
