"""Compiling pipelines in-process: LLVM -> object code -> LLJIT, with a two-level cache.

`compile_pipeline(lowered)` generates the module's IR, looks its key up in an in-memory
cache of linked libraries and then in an on-disk cache of object files
(PIXELWEAVE_CACHE_DIR, default ~/.cache/pixelweave), and only on a miss runs LLVM. The key
hashes the IR text, the target (triple, CPU, features), the level and the llvmlite/LLVM
versions. Object files are stored with a checksum: a corrupted or truncated file is
detected before LLVM sees it, discarded and recompiled.

A second cache is keyed before lowering (`compiled_by_structure`): by the structural key of
the algorithm and schedule (engine/structural_key.py) with the same target parts. It maps
to what the generated module needs besides its object code (entry symbols, arguments, the
loop-nest text), in memory and as a small JSON record on disk, so that reopening a document
or undoing an edit costs neither lowering nor LLVM.

A compiled pipeline travels to other processes (Dask workers) as `NativeCode`: its object
code, the runtime's object code and the calling metadata, which `load_native_code` links
there without lowering or LLVM. `compile_statistics()` counts the work done in this
process, so callers can check that nothing was recompiled.

On a miss, a large module compiles in two parts at once, one in a worker process
(compile_worker.py); its object code is then a bundle of two objects, linked as one library
and cached as one entry.

Linking uses llvmlite's LLJIT, which raises on unresolved symbols (MCJIT silently leaves
them at address 0). The parallel runtime (thread_pool.py) is one JIT library per process,
linked once and never unloaded, because its worker threads live as long as the process.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import hashlib
import json
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llvmlite
import llvmlite.binding as llvm
import numpy as np
from pixelweave.engine.codegen.llvm import (
    CONTEXT_MESSAGE_OFFSET,
    CONTEXT_PROFILE_OFFSET,
    ERROR_MESSAGE_BYTES,
    ErrorCode,
    GeneratedModule,
    add_error_reporting,
    generate_module,
)
from pixelweave.engine.codegen.llvm_ir import ModuleBuilder
from pixelweave.engine.codegen.target import (
    BACKEND_OPTIONS,
    FULL_PIPELINE,
    LEVELS,
    TargetSpec,
    check_level,
    create_target_machine,
    data_layout,
    missing_host_features,
    resolve_target,
)
from pixelweave.engine.errors import CompileError, InputError, RuntimeFailure
from pixelweave.engine.ir.types import Type
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime import error_report, thread_pool
from pixelweave.engine.runtime.argument_block import ArgumentBlock
from pixelweave.engine.runtime.compile_worker import compile_module, unbundle_objects
from pixelweave.engine.runtime.debug_hooks import debug_hook_addresses
from pixelweave.engine.runtime.memoization_cache import memoize_hook_addresses

CACHE_DIR_ENV = "PIXELWEAVE_CACHE_DIR"
CODEGEN_VERSION = "pixelweave-llvm-4"
MEMORY_CACHE_ENTRIES = 64
DISK_CACHE_ENTRIES = 2000  # the oldest object files beyond this many are deleted
_OBJECT_MAGIC = b"PWOBJ1\n"

_lock = threading.RLock()  # the JIT and the caches; LLVM compiles run in private contexts outside it
_statistics = {"pipelines_compiled": 0, "objects_compiled": 0, "native_code_loaded": 0}


def compile_statistics() -> dict[str, int]:
    """Work done in this process so far: pipelines compiled (IR generated), object files
    compiled by LLVM (cache misses, the runtime's included) and NativeCode loaded."""
    with _lock:
        return dict(_statistics)


# ------------------------------------------------------------------------------ JIT libraries


@dataclass
class _JitLibrary:
    """A linked library; its code stays mapped as long as this object (the tracker) lives."""

    tracker: Any
    addresses: dict[str, int]

    def __getitem__(self, symbol: str) -> int:
        return self.addresses[symbol]


class _Jit:
    """The process-wide LLJIT instance and its runtime library."""

    def __init__(self, runtime_object: bytes | None = None) -> None:
        spec = resolve_target("host")
        self.spec = spec
        self._target_machine = create_target_machine(spec, "full")
        self.lljit = llvm.create_lljit_compiler(self._target_machine)
        self._count = 0
        if runtime_object is None:
            runtime = ModuleBuilder("pw_runtime", spec.triple, data_layout(spec))
            thread_pool.add_thread_pool(runtime, arch=spec.arch, export=True, with_destructor=False)
            add_error_reporting(runtime, export=True)
            runtime_object, _ = _object_code(runtime.render(), spec, "full", use_cache=True)
        self.runtime_object = runtime_object
        exports = [thread_pool.PARALLEL_FOR, thread_pool.STATS, error_report.REPORT_ERROR, error_report.TYPE_NAME]
        self.runtime = self.link(runtime_object, "pw_runtime", exports, runtime=False)
        # Never unloaded: workers may sleep in its code until the process exits.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(self.runtime))
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(self.lljit))

    def link(
        self, obj: bytes, name: str, exports: Sequence[str], *, runtime: bool = True, release: str | None = None
    ) -> _JitLibrary:
        """Link obj as a new JIT library; `release` names a function that frees the memory
        the library keeps between calls, run before the library's code is unmapped."""
        self._count += 1
        builder = llvm.JITLibraryBuilder()
        for part in unbundle_objects(obj):  # a module compiled in parts links as one library
            builder.add_object_img(part)
        if runtime:
            builder.add_jit_library("pw_runtime")
        builder.add_current_process()
        for symbol, address in {**debug_hook_addresses(), **memoize_hook_addresses()}.items():
            builder.import_symbol(symbol, address)
        for symbol in exports:
            builder.export_symbol(symbol)
        library_name = name if not runtime else f"{name}.{self._count}"
        tracker = builder.link(self.lljit, library_name)
        library = _JitLibrary(tracker, {s: tracker[s] for s in exports})
        if release is not None:
            finalizer = weakref.finalize(library, _release_library_memory, tracker[release], tracker)
            finalizer.atexit = False
        return library


def _release_library_memory(address: int, tracker: Any) -> None:
    """Free a library's kept scratch storage; holding tracker keeps its code mapped until then."""
    ctypes.CFUNCTYPE(None)(address)()
    del tracker


_jit: _Jit | None = None


def _get_jit(runtime_object: bytes | None = None) -> _Jit:
    """The process's JIT; the first call links runtime_object when given (shipped from
    another process) instead of compiling the runtime here."""
    global _jit
    with _lock:
        if _jit is None:
            _jit = _Jit(runtime_object)
        return _jit


def parallel_runtime_stats() -> dict[str, int]:
    """Worker threads of the process-wide pool (-1 before first use) and how many times a
    worker joined a parallel loop (to check that loops really ran on several threads)."""
    jit = _get_jit()
    out = (ctypes.c_int64 * 2)()
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.runtime[thread_pool.STATS])(ctypes.addressof(out))
    return {"workers": int(out[0]), "worker_joins": int(out[1])}


# ------------------------------------------------------------------------------ the cache


def cache_directory() -> Path:
    """Where object files are cached: $PIXELWEAVE_CACHE_DIR, else ~/.cache/pixelweave."""
    configured = os.environ.get(CACHE_DIR_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "pixelweave"


def cache_key(ir_text: str, spec: TargetSpec, level: str, *, pic: bool = False) -> str:
    h = hashlib.sha256()
    for part in (
        CODEGEN_VERSION,
        llvmlite.__version__,
        ".".join(map(str, llvm.llvm_version_info)),
        spec.triple,
        spec.cpu,
        spec.features,
        " ".join(BACKEND_OPTIONS),
        FULL_PIPELINE,
        level,
        "pic" if pic else "jit",
        ir_text,
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _read_cached_object(path: Path) -> bytes | None:
    """The object stored at path, or None if missing or corrupted (then it is removed)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header = len(_OBJECT_MAGIC) + 32
    if len(blob) > header and blob.startswith(_OBJECT_MAGIC):
        digest, data = blob[len(_OBJECT_MAGIC) : header], blob[header:]
        if hashlib.sha256(data).digest() == digest:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: pruned last
            return data
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def _write_cached_object(path: Path, data: bytes) -> None:
    """Store data atomically (temporary file + rename); a cache that cannot be written is
    simply not used."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".o")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_OBJECT_MAGIC + hashlib.sha256(data).digest() + data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune_disk_cache(path.parent)
    except OSError:
        pass


def _prune_disk_cache(directory: Path) -> None:
    """Keep the newest DISK_CACHE_ENTRIES object files and as many structure records (only
    runs after a compile miss)."""
    for suffix in (".o", ".structure.json"):
        entries = [e for e in os.scandir(directory) if e.name.endswith(suffix) and not e.name.startswith(".")]
        if len(entries) <= DISK_CACHE_ENTRIES:
            continue
        entries.sort(key=lambda e: e.stat().st_mtime)
        for e in entries[: len(entries) - DISK_CACHE_ENTRIES]:
            with contextlib.suppress(OSError):
                os.unlink(e.path)


def _object_code(ir_text: str, spec: TargetSpec, level: str, *, use_cache: bool) -> tuple[bytes, bool]:
    """Object code for ir_text and whether it came from the disk cache."""
    key = cache_key(ir_text, spec, level)
    path = cache_directory() / f"{key}.o"
    if use_cache:
        data = _read_cached_object(path)
        if data is not None:
            return data, True
    data = compile_module(ir_text, spec, level)
    with _lock:
        _statistics["objects_compiled"] += 1
    if use_cache:
        _write_cached_object(path, data)
    return data, False


@dataclass
class _MemoryEntry:
    """Object code of a compiled module and, while some CompiledPipeline uses it, its linked
    library (held weakly, so that the scratch memory of unused pipelines is freed)."""

    object_code: bytes
    library: weakref.ref[_JitLibrary] | None = None


_memory_cache: collections.OrderedDict[str, _MemoryEntry] = collections.OrderedDict()


def clear_memory_cache() -> None:
    """Forget compiled modules (pipelines already compiled keep theirs)."""
    with _lock:
        _memory_cache.clear()
        _structure_cache.clear()


# ------------------------------------------------------------------------------ the cache before lowering


@dataclass
class _StructureRecord:
    """What a structural key maps to: the generated module without its IR text, the key of
    its object code and the loop nest its lowering printed."""

    ir_key: str
    name: str
    arguments: list[Argument]
    profile_names: list[str]
    context_bytes: int
    loop_nest: str

    def to_json(self) -> str:
        args = [
            [a.name, a.kind, a.type.code, a.type.bits, a.type.lanes, a.dimensions, a.is_output] for a in self.arguments
        ]
        return json.dumps(
            {
                "ir_key": self.ir_key,
                "name": self.name,
                "arguments": args,
                "profile_names": self.profile_names,
                "context_bytes": self.context_bytes,
                "loop_nest": self.loop_nest,
            }
        )

    @staticmethod
    def from_json(text: str) -> _StructureRecord:
        data = json.loads(text)
        arguments = [
            Argument(name, kind, Type(code, bits, lanes), dims, bool(out))
            for name, kind, code, bits, lanes, dims, out in data["arguments"]
        ]
        return _StructureRecord(
            str(data["ir_key"]),
            str(data["name"]),
            arguments,
            [str(n) for n in data["profile_names"]],
            int(data["context_bytes"]),
            str(data["loop_nest"]),
        )


_structure_cache: collections.OrderedDict[str, _StructureRecord] = collections.OrderedDict()
STRUCTURE_CACHE_ENTRIES = 256


def structure_cache_key(structure: str, spec: TargetSpec, level: str, profile: bool) -> str:
    """The pre-lowering key: a pipeline's structural key with everything else that decides
    the object code (compiler versions, target, level, profiling)."""
    return cache_key(f"structure:{structure}:profile={profile}", spec, level)


def _structure_path(key: str) -> Path:
    return cache_directory() / f"{key}.structure.json"


def _read_structure_record(key: str) -> _StructureRecord | None:
    path = _structure_path(key)
    try:
        return _StructureRecord.from_json(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            path.unlink()  # unreadable: forget it, the next compile writes it again
        return None


def _write_structure_record(key: str, record: _StructureRecord) -> None:
    path = _structure_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(record.to_json())
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def compiled_by_structure(
    structure: str, level: str = "fast", profile: bool = False, target: str = "host"
) -> tuple[CompiledPipeline, str] | None:
    """The compiled code and loop-nest text of a pipeline whose structural key is `structure`,
    from memory or disk, without lowering or LLVM; None when neither cache has it."""
    start = time.perf_counter()
    check_level(level)
    spec = resolve_target(target)
    if missing_host_features(spec):
        return None
    key = structure_cache_key(structure, spec, level, profile)
    jit = _get_jit()
    with _lock:
        record = _structure_cache.get(key)
        hit = "memory"
        if record is None:
            record = _read_structure_record(key)
            hit = "disk"
            if record is None:
                return None
        entry = _memory_cache.get(record.ir_key)
        library = entry.library() if entry is not None and entry.library is not None else None
        if entry is None:
            obj = _read_cached_object(cache_directory() / f"{record.ir_key}.o")
            if obj is None:
                return None
            entry = _MemoryEntry(obj)
            _memory_cache[record.ir_key] = entry
            while len(_memory_cache) > MEMORY_CACHE_ENTRIES:
                _memory_cache.popitem(last=False)
            hit = "disk"
        module = GeneratedModule("", record.name, record.arguments, record.profile_names, record.context_bytes)
        exports = _exports(module)
        if library is None:
            try:
                library = jit.link(entry.object_code, record.name, exports, release=module.release_memory_symbol)
            except RuntimeError:
                _memory_cache.pop(record.ir_key, None)
                _structure_cache.pop(key, None)
                return None
        entry.library = weakref.ref(library)
        _memory_cache.move_to_end(record.ir_key)
        _remember_structure(key, record)
    native = CompiledPipeline(
        module,
        library,
        level=level,
        target=spec,
        compile_seconds=time.perf_counter() - start,
        cache_hit=f"structure-{hit}",
        object_code=entry.object_code,
    )
    return native, record.loop_nest


def cached_loop_nest(structure: str, target: str = "host") -> str | None:
    """The loop nest printed when a pipeline of this structural key was compiled (at any
    level, from memory or disk), or None: the inspector shows it without lowering again."""
    spec = resolve_target(target)
    with _lock:
        for level in LEVELS:
            key = structure_cache_key(structure, spec, level, False)
            record = _structure_cache.get(key) or _read_structure_record(key)
            if record is not None and record.loop_nest:
                return record.loop_nest
    return None


def _remember_structure(key: str, record: _StructureRecord) -> None:
    _structure_cache[key] = record
    _structure_cache.move_to_end(key)
    while len(_structure_cache) > STRUCTURE_CACHE_ENTRIES:
        _structure_cache.popitem(last=False)


def _exports(module: GeneratedModule) -> list[str]:
    return [
        module.entry_symbol,
        module.argv_symbol,
        module.argv_context_symbol,
        module.error_message_symbol,
        module.release_memory_symbol,
        *module.extra_exports,
    ]


# ------------------------------------------------------------------------------ compiling


def compile_pipeline(
    lowered: LoweredPipeline,
    level: str = "fast",
    profile: bool = False,
    target: str = "host",
    *,
    cache: bool = True,
    structure: str | None = None,
    loop_nest: str = "",
    checked: bool = False,
    generator: Callable[..., GeneratedModule] = generate_module,
) -> CompiledPipeline:
    """Compile a lowered pipeline to native code in this process.

    level "fast" compiles quickly for interactive previews; "full" is LLVM's -O2 pipeline
    with its vectorizers, as engine/codegen/target.py tunes it. profile=True times every produced Func
    (`CompiledPipeline.last_profile`: seconds per Func, inclusive of producers nested in it;
    inside parallel loops, the sum over threads). target is "host" or a portable x86-64
    level this CPU can run. cache=False skips both caches (for measuring compile time).
    `structure` (a structural key of the pipeline before lowering) also files the result in
    the pre-lowering cache, with `loop_nest` (the text its lowering printed).
    checked=True tests every load and store index against its buffer (a violation raises
    RuntimeFailure naming the buffer, the index and the Func); for tests and debugging.
    `generator` makes the module (generate_module's signature); the OpenCL backend's host
    code passes its own.
    """
    start = time.perf_counter()
    check_level(level)
    spec = resolve_target(target)
    missing = missing_host_features(spec)
    if missing:
        raise CompileError(
            f"target {target} needs CPU features this machine lacks ({', '.join(missing)}), so its code cannot "
            "run here; use export_library to build for other machines"
        )
    jit = _get_jit()
    module = generator(
        lowered,
        triple=spec.triple,
        datalayout=data_layout(spec),
        profile=profile,
        checked=checked,
        features=spec.features,
    )
    with _lock:
        _statistics["pipelines_compiled"] += 1
    key = cache_key(module.ir, spec, level)
    exports = _exports(module)

    def link(obj: bytes) -> _JitLibrary:
        return jit.link(obj, lowered.name, exports, release=module.release_memory_symbol)

    with _lock:
        entry = _memory_cache.get(key) if cache else None
    if entry is None:
        # LLVM runs outside the lock, in a context of its own (compile_ir_to_object), so a
        # long compile in one thread does not hold up a small one in another.
        obj, from_disk = _object_code(module.ir, spec, level, use_cache=cache)
    with _lock:
        if entry is None and cache and key in _memory_cache:
            entry = _memory_cache[key]  # another thread compiled it meanwhile
        library = entry.library() if entry is not None and entry.library is not None else None
        hit: str | None = "memory" if entry is not None else None
        if entry is None:
            hit = "disk" if from_disk else None
            try:
                library = link(obj)
            except RuntimeError:
                if not from_disk:
                    raise
                # A valid-looking but unusable cached object: recompile it once.
                obj, _ = _object_code(module.ir, spec, level, use_cache=False)
                _write_cached_object(cache_directory() / f"{key}.o", obj)
                library, hit = link(obj), None
            entry = _MemoryEntry(obj)
            if cache:
                _memory_cache[key] = entry
                while len(_memory_cache) > MEMORY_CACHE_ENTRIES:
                    _memory_cache.popitem(last=False)
        elif library is None:
            library = link(entry.object_code)
        if cache:
            _memory_cache.move_to_end(key)
        entry.library = weakref.ref(library)
        if cache and structure is not None:
            record = _StructureRecord(
                key, module.name, list(module.arguments), list(module.profile_names), module.context_bytes, loop_nest
            )
            skey = structure_cache_key(structure, spec, level, profile)
            _remember_structure(skey, record)
            if not (cache_directory() / f"{key}.o").exists():
                _write_cached_object(cache_directory() / f"{key}.o", entry.object_code)
            _write_structure_record(skey, record)
    return CompiledPipeline(
        module,
        library,
        level=level,
        target=spec,
        compile_seconds=time.perf_counter() - start,
        cache_hit=hit,
        object_code=entry.object_code,
    )


@dataclass(frozen=True)
class NativeCode:
    """A compiled pipeline in a form another process can link without compiling anything:
    its object code, the parallel runtime's object code, the target it was built for and
    the metadata needed to call it. Picklable (this is what a Dask worker receives)."""

    name: str
    arguments: list[Argument]
    profile_names: list[str]
    context_bytes: int
    level: str
    target: TargetSpec
    object_code: bytes
    runtime_object: bytes
    runtime_target: TargetSpec

    def module(self) -> GeneratedModule:
        """The calling metadata as a GeneratedModule (without IR text)."""
        return GeneratedModule("", self.name, list(self.arguments), list(self.profile_names), self.context_bytes)


def load_native_code(code: NativeCode) -> CompiledPipeline:
    """Link NativeCode made by `CompiledPipeline.native_code()` (possibly in another process
    or on another machine) into this process; CompileError if this CPU cannot run it."""
    start = time.perf_counter()
    missing = _features_missing_here(code.target)
    if missing:
        raise CompileError(
            f"pipeline `{code.name}` was compiled for CPU {code.target.cpu}, and this machine lacks features it "
            f"uses ({', '.join(missing)}); compile it for a portable target (x86-64-v3, ...) to run it here"
        )
    # The runtime is built for the sending machine's CPU even when the pipeline is portable:
    # a machine that lacks its features compiles its own (once per process) instead.
    runtime_fits = not _features_missing_here(code.runtime_target)
    jit = _get_jit(code.runtime_object if runtime_fits else None)
    module = code.module()
    key = "shipped:" + hashlib.sha256(code.object_code).hexdigest()
    with _lock:
        entry = _memory_cache.get(key)
        library = entry.library() if entry is not None and entry.library is not None else None
        if entry is None:
            entry = _MemoryEntry(code.object_code)
            _memory_cache[key] = entry
            while len(_memory_cache) > MEMORY_CACHE_ENTRIES:
                _memory_cache.popitem(last=False)
        _memory_cache.move_to_end(key)
        if library is None:
            exports = [
                module.entry_symbol,
                module.argv_symbol,
                module.argv_context_symbol,
                module.error_message_symbol,
                module.release_memory_symbol,
            ]
            library = jit.link(code.object_code, code.name, exports, release=module.release_memory_symbol)
            entry.library = weakref.ref(library)
            _statistics["native_code_loaded"] += 1
    return CompiledPipeline(
        module,
        library,
        level=code.level,
        target=code.target,
        compile_seconds=time.perf_counter() - start,
        cache_hit="shipped",
        object_code=code.object_code,
    )


def _features_missing_here(spec: TargetSpec) -> list[str]:
    """Features code for spec enables that this machine's CPU lacks."""
    if spec.name != "host":
        return missing_host_features(spec)
    if spec.triple.split("-", 1)[0] != llvm.get_process_triple().split("-", 1)[0]:
        return [spec.triple]
    host = llvm.get_host_cpu_features()
    wanted = [f[1:] for f in spec.features.split(",") if f.startswith("+")]
    return [f for f in wanted if not host.get(f, False)]


class CompiledPipeline:
    """A pipeline compiled to native code, callable on NumPy arrays.

    Call it with every argument by name: arrays for buffers (inputs and outputs; outputs
    are written in place), numbers for scalars, e.g. `fn({"input": a, "gain": 2.0},
    outputs={"out": o})`. The native code runs without the GIL, on the persistent thread
    pool for parallel loops. A failure inside the generated code raises RuntimeFailure
    with its message. Intermediate buffers allocated once per call are kept for the next
    call (fresh memory costs page faults); `release_memory()` frees them.
    `compile_seconds` and `last_run_seconds` time compilation and the last native call
    separately; `last_profile` holds {Func: seconds} in profiling builds.
    """

    def __init__(
        self,
        module: GeneratedModule,
        library: _JitLibrary,
        *,
        level: str,
        target: TargetSpec,
        compile_seconds: float,
        cache_hit: str | None,
        object_code: bytes,
    ) -> None:
        self.name = module.name
        self.arguments: list[Argument] = module.arguments
        self.llvm_ir: str | None = module.ir or None  # None when it came from the pre-lowering cache
        self.level = level
        self.target = target
        self.compile_seconds = compile_seconds
        self.cache_hit = cache_hit
        self.profile_names = list(module.profile_names)
        self.last_run_seconds: float | None = None
        self.last_profile: dict[str, float] | None = None
        self._library = library
        self._object_code = object_code
        self._context_bytes = module.context_bytes
        self._argv_entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(
            library[module.argv_context_symbol]
        )
        self._release_memory = ctypes.CFUNCTYPE(None)(library[module.release_memory_symbol])
        self.entry_address = library[module.entry_symbol]
        self._argument_names = frozenset(a.name for a in self.arguments)
        # argv's layout, worked out once; call_in_order's blocks end with the call's context
        self._argument_block = ArgumentBlock(self.arguments, reserve=self._context_bytes)
        self._spare_blocks: list[ctypes.Array] = []  # call_in_order's blocks of finished calls

    @property
    def profile(self) -> bool:
        return bool(self.profile_names)

    def __call__(
        self,
        args: Mapping[str, Any] | None = None,
        outputs: Mapping[str, np.ndarray] | None = None,
        *,
        mins: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        given = dict(args or {})
        for name, value in (outputs or {}).items():
            if name in given:
                raise InputError(f"argument `{name}` is given twice")
            given[name] = value
        names = self._argument_names
        if not names.issuperset(given) or (mins and not names.issuperset(mins)):
            for name in [*given, *(mins or {})]:
                if name not in names:
                    choices = ", ".join(a.name for a in self.arguments) or "none"
                    raise InputError(
                        f"`{name}` is not an argument of pipeline `{self.name}` (its arguments: {choices})"
                    )
        self.call_named(given, mins)

    def call_named(self, given: dict[str, Any], mins: Mapping[str, Sequence[int]] | None = None) -> None:
        """Run on `given`, every argument by name (inputs and outputs in one dict), whose
        names the caller knows to be this pipeline's (Compiled's common call: __call__ without
        its merging and name checks, which cost as much as the packing on a small image).
        The values are checked as by __call__."""
        argv, keep_alive = self._argument_block.pack(given, mins)
        self._run(argv)
        del keep_alive

    def call_in_order(self, values: Sequence[Any]) -> bool:
        """Run on one value per argument, in `arguments` order, when every value is of the
        common kind (ArgumentBlock.pack_in_order: arrays at the origin that need no copy,
        plain numbers); False, having run nothing and raised nothing, otherwise (call_named
        then checks the values with its messages). Compiled's common call: no dict of
        arguments to build and look names up in."""
        # A block of a finished call is reused (two fresh zeroed allocations cost ~3 us of a
        # call from Python whose caches the last call's images evicted): pack_in_order writes
        # every field it reads, and the generated code clears the context when it starts.
        # list.pop and append are atomic, so calls from several threads never share one.
        spare = self._spare_blocks
        try:
            block = spare.pop()
        except IndexError:
            block = None
        packed = self._argument_block.pack_in_order(values, block)
        if packed is None:
            if block is not None:
                spare.append(block)
            return False
        block = packed[0]
        self._run(block, block, self._argument_block.size)
        spare.append(block)  # not after a failure: that block is dropped
        return True

    def _run(self, argv: ctypes.Array, context: ctypes.Array | None = None, context_offset: int = 0) -> None:
        """Call the generated code on a packed argument block (its arrays kept alive by the
        caller) with the call's context (a fresh one, or the bytes of `context` from
        context_offset on)."""
        if context is None:
            context = ctypes.create_string_buffer(self._context_bytes)  # this call's message and profile
        start = time.perf_counter()
        code = self._argv_entry(ctypes.addressof(argv), ctypes.addressof(context) + context_offset)  # without the GIL
        self.last_run_seconds = time.perf_counter() - start
        if self.profile_names:
            offset = context_offset + CONTEXT_PROFILE_OFFSET
            counters = (ctypes.c_int64 * len(self.profile_names)).from_buffer(context, offset)
            self.last_profile = {n: counters[i] * 1e-9 for i, n in enumerate(self.profile_names)}
        if code != 0:
            raise RuntimeFailure(self._failure_message(code, context, context_offset))

    def native_code(self) -> NativeCode:
        """This pipeline's object code and calling metadata, to link in another process
        with `load_native_code` (nothing is compiled there)."""
        return NativeCode(
            self.name,
            list(self.arguments),
            list(self.profile_names),
            self._context_bytes,
            self.level,
            self.target,
            self._object_code,
            _get_jit().runtime_object,
            _get_jit().spec,
        )

    def symbol_address(self, symbol: str) -> int:
        """The address of an exported symbol of the linked code (one of the module's exports)."""
        return self._library[symbol]

    def release_memory(self) -> None:
        """Free the intermediate buffers kept for the next call (they are also freed when the
        last CompiledPipeline using this code is garbage collected)."""
        self._release_memory()

    def _failure_message(self, code: int, context: ctypes.Array, context_offset: int = 0) -> str:
        start = context_offset + CONTEXT_MESSAGE_OFFSET
        raw = context.raw[start : start + ERROR_MESSAGE_BYTES]
        message = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
        if not message:
            try:
                kind = ErrorCode(code).name.lower().replace("_", " ")
            except ValueError:
                kind = "unknown error"
            message = f"pipeline `{self.name}` failed with error code {code} ({kind})"
        return message

    def __repr__(self) -> str:
        args = ", ".join(a.name for a in self.arguments)
        return f"<CompiledPipeline {self.name}({args}) level={self.level} target={self.target.name}>"
