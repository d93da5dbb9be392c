"""Backends: lowered statements to machine code.

The CPU backend emits LLVM IR text, one concern per file:

- `llvm.py`: the module (entry points, argument checks, per-call context), statements,
  errors, loops (parallel loops outlined to the thread pool) and allocations;
- `llvm_expr.py`: expressions and memory access (vector loads, stores, gathers);
- `llvm_semantics.py`: Halide's operator semantics as poison-free instruction sequences;
- `llvm_ir.py`: the small textual IR builder;
- `target.py`: targets (host, portable x86-64 levels), optimization levels, object code.

Compiling and calling live in `pixelweave.engine.runtime` (`compile_pipeline`, `export_library`).
"""

from pixelweave.engine.codegen.llvm import ErrorCode, GeneratedModule, generate_module
from pixelweave.engine.codegen.target import LEVELS, TARGETS, TargetSpec, resolve_target

__all__ = ["LEVELS", "TARGETS", "ErrorCode", "GeneratedModule", "TargetSpec", "generate_module", "resolve_target"]
