"""The run-time side of compiled pipelines: buffers, the thread pool, the JIT, libraries.

`compile_pipeline(lowered, level="fast", profile=False, target="host")` returns a
`CompiledPipeline` callable on NumPy arrays; `export_library(lowered, name, directory,
target)` writes an object file, a shared library and a C header. Names are imported
lazily, because the code generator itself imports `pixelweave.engine.runtime.thread_pool`.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "compile_pipeline": "pixelweave.engine.runtime.jit",
    "CompiledPipeline": "pixelweave.engine.runtime.jit",
    "clear_memory_cache": "pixelweave.engine.runtime.jit",
    "cache_directory": "pixelweave.engine.runtime.jit",
    "parallel_runtime_stats": "pixelweave.engine.runtime.jit",
    "export_library": "pixelweave.engine.runtime.library",
    "ExportedLibrary": "pixelweave.engine.runtime.library",
    "describe_array": "pixelweave.engine.runtime.buffer",
    "BufferStruct": "pixelweave.engine.runtime.buffer",
    "DimensionStruct": "pixelweave.engine.runtime.buffer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'pixelweave.engine.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
