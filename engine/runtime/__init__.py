"""The run-time side of compiled pipelines: buffers, the thread pool, the JIT, libraries.

`compile_pipeline(lowered, level="fast", profile=False, target="host")` returns a
`CompiledPipeline` callable on NumPy arrays; `export_library(lowered, name, directory,
target)` writes an object file, a shared library and a C header. Names are imported
lazily, because the code generator itself imports `engine.runtime.thread_pool`.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "compile_pipeline": "engine.runtime.jit",
    "CompiledPipeline": "engine.runtime.jit",
    "clear_memory_cache": "engine.runtime.jit",
    "cache_directory": "engine.runtime.jit",
    "parallel_runtime_stats": "engine.runtime.jit",
    "export_library": "engine.runtime.library",
    "ExportedLibrary": "engine.runtime.library",
    "describe_array": "engine.runtime.buffer",
    "BufferStruct": "engine.runtime.buffer",
    "DimensionStruct": "engine.runtime.buffer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'engine.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
