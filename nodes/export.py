"""Shipping a document: the compiled native library (NAME.o, libNAME.so, NAME.h) with a text
saying how to call it from C, or the same library plus a self-contained Python module
NAME.py that loads it with ctypes and takes and returns NumPy arrays.

The command line (`pixelweave export`) and the editor's export dialog both call these, so
the files and the advice they print are the same. `export_kinds()` and `export_targets()`
list what can be chosen, with the reason when something cannot be (the OpenCL source alone:
it is written beside the library exported for target "opencl").
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pixelweave.engine.codegen.target import TARGETS
from pixelweave.engine.ir import expr as ir
from pixelweave.engine.lowered import Argument
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.output_part import left_out_text, output_part

# Names a generated module cannot take: it would shadow what it imports, or not be importable.
_RESERVED_MODULE_NAMES = frozenset({"ctypes", "numpy", "np", "os", "sys"})
_TARGET_NOTES = {
    "host": "this machine's CPU, every feature it has (fastest; may not run on older CPUs)",
    "x86-64": "any 64-bit x86 CPU (SSE2 only)",
    "x86-64-v2": "x86-64 with SSE4.2 and POPCNT (CPUs from about 2009)",
    "x86-64-v3": "x86-64 with AVX2 and FMA (CPUs from about 2015)",
    "x86-64-v4": "x86-64 with AVX-512 (recent server and desktop CPUs)",
    "opencl": "the nodes' OpenCL schedules as kernels on an OpenCL device, the rest on this CPU",
}
_C_TYPES = {"bool": "uint8_t", "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "f32": "float", "f64": "double"}  # fmt: skip
_CTYPES = {"bool": "c_uint8", "u8": "c_uint8", "u16": "c_uint16", "u32": "c_uint32", "u64": "c_uint64",
           "i8": "c_int8", "i16": "c_int16", "i32": "c_int32", "i64": "c_int64",
           "f32": "c_float", "f64": "c_double"}  # fmt: skip
_LAYOUTS = {0: "scalar ()", 1: "array (n,)", 2: "gray (h, w)", 3: "planar colour (3, h, w)"}


@dataclass(frozen=True)
class ExportKind:
    """Something the export can write, and why not when it cannot."""

    key: str  # "library", "python" or "opencl"
    title: str
    available: bool
    reason: str = ""


@dataclass
class ExportResult:
    """What an export wrote: the files in order of interest, and how to call them."""

    kind: str
    name: str
    target: str
    directory: Path
    files: list[Path]
    usage: str
    arguments: list[Argument] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # nodes not connected to an output, not exported

    def file_sizes(self) -> list[tuple[Path, int]]:
        """(path, size in bytes) of each file written, for a summary."""
        return [(p, p.stat().st_size) for p in self.files]


def build_for_export(doc: Document, target: str = "host") -> tuple[Any, list[str]]:
    """The BuiltDocument of what the outputs read (with the nodes' OpenCL schedules for
    target "opencl"), and the ids of the nodes left out (a scratch node, a branch not wired
    yet), so that those never stop an export. DocumentError for a problem in what is
    exported; NodeError when there is no output at all."""
    from pixelweave.nodes.pipeline_build import build_document

    part, left_out = output_part(doc)
    if not part.nodes:
        raise NodeError("the document has no output node, so there is nothing to export; add an Output node")
    return build_document(part, target="opencl" if target == "opencl" else "host"), left_out


def note_left_out(result: ExportResult, left_out: list[str]) -> ExportResult:
    """Records the nodes an export left out, and says so at the top of its usage text."""
    result.left_out = list(left_out)
    if left_out:
        result.usage = f"Note: {left_out_text(left_out)}.\n\n{result.usage}"
    return result


def export_kinds() -> list[ExportKind]:
    """The kinds of export, each with its availability and the reason it is unavailable."""
    return [
        ExportKind("library", "Native library (libNAME.so, NAME.o, NAME.h)", True),
        ExportKind("python", "Python module (NAME.py beside libNAME.so)", True),
        ExportKind(
            "opencl",
            "OpenCL source",
            False,
            "OpenCL source: not available alone — choose target opencl: the library and the Python module "
            "then run the GPU-scheduled nodes as OpenCL kernels and NAME.cl (their source) is written beside them",
        ),
    ]


def export_targets() -> list[tuple[str, str]]:
    """(target name, what it runs on) for every target the library exporter accepts."""
    return [(t, _TARGET_NOTES.get(t, t)) for t in (*TARGETS, "opencl")]


def default_export_name(document_name: str, fallback: str = "pipeline") -> str:
    """A C identifier made from a document's name ("Unsharp mask" -> "unsharp_mask")."""
    name = re.sub(r"\W+", "_", (document_name or fallback).lower()).strip("_") or fallback
    return f"pw_{name}" if name[0].isdigit() else name


def export_name_problem(name: str, kind: str = "library") -> str | None:
    """Why name cannot be the entry point (and module) name, or None when it can."""
    if not name:
        return "give a name: the C function and the files are called by it"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{name!r} is not a C identifier: use letters, digits and underscores, not starting with a digit"
    if kind == "python" and (keyword.iskeyword(name) or name in _RESERVED_MODULE_NAMES):
        return f"{name!r} cannot name a Python module (it is a keyword or shadows a module the file imports)"
    return None


def _check(name: str, kind: str, target: str) -> None:
    problem = export_name_problem(name, kind)
    if problem:
        raise NodeError(problem)
    if target not in (*TARGETS, "opencl"):
        raise NodeError(f"unknown target `{target}`; legal targets are {', '.join(TARGETS)}, opencl")


def _short(a: Argument) -> str:
    from pixelweave.nodes.ports import short_type_name

    return short_type_name(a.type)


# Names the generated module defines or uses itself; an argument so named gets a trailing "_".
_MODULE_NAMES = frozenset({"ctypes", "os", "np", "run", "release_memory", "OUTPUTS", "w", "h", "main"})


def _variable(a: Argument) -> str:
    """The identifier examples use for an argument: outputs by their node id."""
    base = re.sub(r"\W", "_", a.name.split(".", 1)[0] if a.is_output else a.name)
    clash = keyword.iskeyword(base) or base in _MODULE_NAMES or base.startswith("_")
    return f"{base}_" if clash else base


def export_library(built: Any, directory: str | Path, name: str, target: str = "host") -> ExportResult:
    """Writes libNAME.so, NAME.h and NAME.o for a BuiltDocument into directory; the usage text
    gives the C prototype and a short C program calling it."""
    from pixelweave.engine.lower import deep_recursion, lower
    from pixelweave.engine.runtime.library import c_header
    from pixelweave.engine.runtime.library import export_library as write_library

    _check(name, "library", target)
    with deep_recursion():
        lowering = lower(built.pipeline(), "opencl" if target == "opencl" else "host", name=name)
        library = write_library(lowering.lowered, name, directory, target)
    arguments = list(lowering.lowered.arguments)
    header = c_header(lowering.lowered, target=target)
    prototype = next(line for line in header.splitlines() if line.startswith(f"int32_t {name}("))
    usage = "\n".join(
        [
            f"Target {target}. The entry point, declared in {name}.h:",
            "",
            f"    {prototype}",
            "",
            "Arguments, in order: " + "; ".join(_argument_text(built, a) for a in arguments) + ".",
            "Buffers are pw_buffer_t descriptors; strides count elements, dimension 0 is x (the last NumPy axis).",
            f"It returns 0 on success, else an error code; {name}_error_message() says what went wrong.",
            "",
            "Calling it from C:",
            "",
            _c_example(built, name, arguments),
            "",
            f"Build: cc main.c -I. -L. -l{name} -Wl,-rpath,. -o main   (or link {name}.o with -lm -lpthread"
            + (" -lOpenCL)" if target == "opencl" else ")"),
        ]
    )
    files = [library.shared_library_path, library.header_path, library.object_path]
    if target == "opencl":  # the kernels are embedded in the library; this copy is for reading
        files.append(library.kernel_source_path)
        usage += (
            f"\n\nThe GPU-scheduled nodes run as OpenCL kernels (their source, for reading: {name}.cl). The "
            "first call picks the device ($PIXELWEAVE_OPENCL_DEVICE=platform:device, else the first usable one)."
        )
    return ExportResult("library", name, target, Path(directory), files, usage, arguments)


def _argument_text(built: Any, a: Argument) -> str:
    if a.is_buffer():
        role = "output" if a.is_output else "input"
        return f"{_variable(a)} ({role}, {_short(a)} {_LAYOUTS.get(a.dimensions, f'{a.dimensions}-d')})"
    p = built.graph.scalar_params.get(a.name)
    default = f", default {p.get()}" if p is not None else ""
    return f"{a.name} ({_C_TYPES[_short(a)]}{default})"


def _c_example(built: Any, name: str, arguments: list[Argument]) -> str:
    lines = [f'    #include "{name}.h"', "    #include <stdio.h>", "    #include <stdlib.h>", "",
             "    int main(void) {", "        int32_t w = 640, h = 480;"]  # fmt: skip
    call = []
    for a in arguments:
        v = _variable(a)
        if not a.is_buffer():
            p = built.graph.scalar_params.get(a.name)
            lines.append(f"        {_C_TYPES[_short(a)]} {v} = {p.get() if p is not None else 0};")
            call.append(v)
            continue
        n, ctype = a.dimensions, _C_TYPES[_short(a)]
        extents, strides = ["w", "h", "3"][:n], ["1", "w", "w * h"][:n]
        dims = ", ".join(f"{{0, {e}, {s}, 0}}" for e, s in zip(extents, strides, strict=True)) or "{0, 1, 1, 0}"
        code = {"int": "PW_TYPE_INT", "uint": "PW_TYPE_UINT", "float": "PW_TYPE_FLOAT"}[a.type.code]
        lines += [
            f"        {ctype} *{v}_data = calloc({' * '.join(extents) or '1'}, sizeof({ctype}));",
            f"        pw_dimension_t {v}_dim[] = {{{dims}}};",
            f"        pw_buffer_t {v} = {{(uint8_t *){v}_data, {code}, {a.type.bits}, {n}, 0, {v}_dim}};",
        ]
        call.append(f"&{v}")
    lines += [
        f"        if ({name}({', '.join(call)}) != 0) {{",
        f'            fprintf(stderr, "{name}: %s\\n", {name}_error_message());',
        "            return 1;",
        "        }",
        "        return 0;",
        "    }",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- Python module


class _NotPython(Exception):
    """An extent expression the generated module cannot compute."""


def _python_expr(e: ir.Expr, inputs: dict[str, str], params: dict[str, str]) -> str:
    """Python source computing an output extent from the input arrays and parameters."""
    if isinstance(e, ir.Const):
        return repr(e.value)
    if isinstance(e, ir.Variable):
        m = re.fullmatch(r"(\w+)\.(extent|min)\.(\d+)", e.name)
        if m and m.group(1) in inputs:
            return "0" if m.group(2) == "min" else f"{inputs[m.group(1)]}.shape[-{int(m.group(3)) + 1}]"
        if e.name in params:
            return params[e.name]
        raise _NotPython(e.name)

    def sub(x: ir.Expr) -> str:
        return _python_expr(x, inputs, params)

    if isinstance(e, ir.Cast):
        return f"{'float' if e.type().is_float() else 'int'}({sub(e.value)})"
    if isinstance(e, (ir.Div, ir.Mod)) and not e.type().is_float():
        return f"_euclid_{'div' if isinstance(e, ir.Div) else 'mod'}({sub(e.a)}, {sub(e.b)})"
    if isinstance(e, (ir.Min, ir.Max)):
        return f"{e.symbol}({sub(e.a)}, {sub(e.b)})"
    if isinstance(e, ir.BinaryOp):
        symbol = {"&&": "and", "||": "or"}.get(e.symbol, e.symbol)
        return f"({sub(e.a)} {symbol} {sub(e.b)})"
    if isinstance(e, ir.Not):
        return f"(not {sub(e.a)})"
    if isinstance(e, ir.Select):
        return f"({sub(e.true_value)} if {sub(e.cond)} else {sub(e.false_value)})"
    raise _NotPython(str(e))


def _output_shape(built: Any, a: Argument, inputs: dict[str, str], params: dict[str, str]) -> str:
    node_id = a.name.split(".", 1)[0]
    extents = built.graph.nodes[node_id].outputs["out"].extents
    try:
        parts = [_python_expr(e, inputs, params) for e in reversed(extents)]
    except _NotPython as e:
        raise NodeError(
            f"the size of output `{node_id}` depends on {e}, which the Python module cannot compute"
        ) from None
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _signature(built: Any, arguments: list[Argument]) -> list[str]:
    """run()'s parameters: the input arrays, then each scalar with its document value as default."""
    names = [_variable(a) for a in arguments if a.is_buffer() and not a.is_output]
    for a in arguments:
        if not a.is_buffer():
            p = built.graph.scalar_params.get(a.name)
            names.append(f"{_variable(a)}={p.get() if p is not None else 0!r}")
    return names


def python_call_example(built: Any, name: str, arguments: list[Argument]) -> list[str]:
    """Two indented lines: importing the module and calling run() with its defaults."""
    returns = ", ".join(_variable(a) for a in arguments if a.is_output)
    return [f"    import {name}", f"    {returns} = {name}.run({', '.join(_signature(built, arguments))})"]


def python_module_source(built: Any, name: str, target: str, arguments: list[Argument]) -> str:
    """The text of NAME.py: loads libNAME.so from its own folder and defines run(...)."""
    inputs = [a for a in arguments if a.is_buffer() and not a.is_output]
    scalars = [a for a in arguments if not a.is_buffer()]
    outputs = [a for a in arguments if a.is_output]
    input_vars = {a.name: _variable(a) for a in inputs}
    param_vars = {a.name: _variable(a) for a in scalars}
    signature = _signature(built, arguments)
    described = "; ".join(f"{_variable(a)}: {a.type.numpy()} {_LAYOUTS.get(a.dimensions, '')}" for a in inputs)
    returns = ", ".join(_variable(a) for a in outputs)
    body = [
        f'"""{name}: the Pixelweave pipeline "{built.document.name}", compiled for target {target}.',
        "",
        *python_call_example(built, name, arguments),
        "",
        f"Inputs: {described or 'none'}. Returns {'a tuple of ' if len(outputs) > 1 else ''}NumPy arrays",
        f"({returns}). Needs lib{name}.so in this file's folder.",
        '"""',
        "",
        "import ctypes",
        "import os",
        "",
        "import numpy as np",
        "",
        f"OUTPUTS = ({', '.join(repr(_variable(a)) for a in outputs)}{',' if len(outputs) == 1 else ''})",
        f'_library = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib{name}.so"))',
        "",
        "",
        "class _Dimension(ctypes.Structure):",
        '    _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32),',
        '                ("flags", ctypes.c_int32)]',
        "",
        "",
        "class _Buffer(ctypes.Structure):",
        '    _fields_ = [("host", ctypes.c_void_p), ("type_code", ctypes.c_int32), ("type_bits", ctypes.c_int32),',
        '                ("dimensions", ctypes.c_int32), ("flags", ctypes.c_int32),',
        '                ("dim", ctypes.POINTER(_Dimension))]',
        "",
        "",
        f"_library.{name}.restype = ctypes.c_int32",
        f"_library.{name}.argtypes = [",
        *(f"    {'ctypes.POINTER(_Buffer)' if a.is_buffer() else 'ctypes.' + _CTYPES[_short(a)]}," for a in arguments),
        "]",
        f"_library.{name}_error_message.restype = ctypes.c_char_p",
        f"_library.{name}_release_memory.restype = None",
        "",
        "",
        "def _euclid_div(a, b):",
        "    return 0 if b == 0 else (a // b if b > 0 else -(a // -b))",
        "",
        "",
        "def _euclid_mod(a, b):",
        "    return 0 if b == 0 else a % abs(b)",
        "",
        "",
        "def _array(value, name, dtype, ndim):",
        '    """The argument as a C-contiguous array, refusing a wrong type or dimension count."""',
        "    array = np.asarray(value)",
        "    if array.dtype != dtype or array.ndim != ndim:",
        "        raise TypeError(",
        '            f"{name} must be a {ndim}-dimensional {np.dtype(dtype)} array, "',
        '            f"got {array.ndim} dimension(s) of {array.dtype}"',
        "        )",
        "    return np.ascontiguousarray(array)",
        "",
        "",
        "def _buffer(array, keep):",
        "    dims = (_Dimension * max(array.ndim, 1))(",
        "        *[_Dimension(0, n, s // array.itemsize, 0) for n, s in zip(array.shape[::-1], array.strides[::-1])]",
        "    )",
        "    keep.append(dims)",
        '    code = {"i": 0, "u": 1, "b": 1, "f": 2}[array.dtype.kind]',
        '    bits = 1 if array.dtype.kind == "b" else array.itemsize * 8',
        "    return _Buffer(array.ctypes.data, code, bits, array.ndim, 0, dims)",
        "",
        "",
        f"def run({', '.join(signature)}):",
        f'    """Runs the pipeline; returns {returns}."""',
    ]
    for a in inputs:
        v = input_vars[a.name]
        body.append(f'    {v} = _array({v}, "{v}", np.{a.type.numpy().name}, {a.dimensions})')
    for a in outputs:
        shape = _output_shape(built, a, input_vars, param_vars)
        body.append(f"    {_variable(a)} = np.empty({shape}, dtype=np.{a.type.numpy().name})")
    call = []
    for a in arguments:
        v = _variable(a)
        call.append(f"ctypes.byref(_buffer({v}, _keep))" if a.is_buffer() else f"ctypes.{_CTYPES[_short(a)]}({v})")
    body += [
        "    _keep = []  # the dimension tables must outlive the call",
        f"    _status = _library.{name}(",
        *(f"        {argument}," for argument in call),
        "    )",
        "    if _status != 0:",
        f'        raise RuntimeError(f"{name} failed ({{_status}}): {{_library.{name}_error_message().decode()}}")',
        f"    return {returns}",
        "",
        "",
        "def release_memory():",
        '    """Frees the scratch buffers the library keeps between calls."""',
        f"    _library.{name}_release_memory()",
        "",
    ]
    return "\n".join(body)


def export_python_module(built: Any, directory: str | Path, name: str, target: str = "host") -> ExportResult:
    """Writes the native library and NAME.py beside it: `import NAME; NAME.run(arrays...)`."""
    _check(name, "python", target)
    library = export_library(built, directory, name, target)
    source = python_module_source(built, name, target, library.arguments)
    module_path = Path(directory) / f"{name}.py"
    module_path.write_text(source, encoding="utf-8")
    usage = "\n".join(
        [
            f"Target {target}. {name}.py loads lib{name}.so from its own folder with ctypes (needs NumPy only):",
            "",
            *python_call_example(built, name, library.arguments),
            "",
            f"run() takes NumPy arrays of exactly the element type and layout listed in {name}.py and returns new",
            f"arrays. Keep {name}.py and lib{name}.so together; put their folder on sys.path or PYTHONPATH.",
        ]
    )
    files = [module_path, *library.files]
    return ExportResult("python", name, target, Path(directory), files, usage, library.arguments)
