"""Running a pipeline compiled for target 'opencl': kernels built and launched over OpenCL.

The backend (engine/codegen/opencl.py) makes OpenCL C kernels, which pyopencl builds here,
and a host statement of lets, asserts, allocations and loops around `KernelLaunch`es,
which is compiled to native code by LLVM like a CPU pipeline
(engine/codegen/opencl_host_llvm.py): it calls the OpenCL C API itself (clSetKernelArg,
clEnqueueNDRangeKernel, ...) with the context, queue and kernels pyopencl made. Every
buffer lives on the device: each input is copied there once per call, intermediates are
device buffers kept between calls (fresh memory is slow), and each output is copied back
once at the end. Nothing goes back and forth between consecutive GPU stages. On a CPU
device (whose memory is the host's) nothing is copied: the kernels read the caller's
inputs and write its outputs where they are (`inputs_in_place`, `outputs_in_place`;
an output overlapping another buffer argument is still copied back).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pixelweave.engine.codegen.opencl import DeviceLimits, OpenCLProgram, generate_opencl
from pixelweave.engine.codegen.opencl_host_llvm import (
    FLAG_INPUTS_IN_PLACE,
    FLAG_OUTPUTS_IN_PLACE,
    SLOT_BYTES,
    STATE_FLAGS_OFFSET,
    STATE_SLOTS_OFFSET,
    bind_symbol,
    host_module_generator,
    state_bytes_symbol,
)
from pixelweave.engine.errors import CompileError, InputError
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime.opencl_device import HOW_TO_GET_ONE, OpenCLDevice, select_device


@dataclass(frozen=True)
class OpenCLTarget:
    """What `Compiled` reads of a target: its name (and the device, for people)."""

    name: str
    device: str


def device_limits(device: OpenCLDevice) -> DeviceLimits:
    d = device.device
    return DeviceLimits(
        max_work_group_size=int(d.max_work_group_size),
        max_work_item_sizes=tuple(int(v) for v in d.max_work_item_sizes),
        local_memory_bytes=int(d.local_mem_size),
        supports_double=device.supports_double,
    )


def compile_opencl(lowered: LoweredPipeline, device: str | None = None) -> OpenCLPipeline:
    """Generate and build the kernels of a pipeline lowered for target 'opencl', and
    compile its host part with LLVM."""
    from pixelweave.engine.runtime.jit import compile_pipeline

    start = time.perf_counter()
    chosen = select_device(device)
    program = generate_opencl(lowered, device_limits(chosen))
    built = _build(chosen, program)
    load_opencl_library()
    host = compile_pipeline(lowered, level="fast", generator=host_module_generator(program))
    return OpenCLPipeline(program, chosen, built, host, time.perf_counter() - start)


_opencl_library_loaded = False


def load_opencl_library() -> None:
    """Make libOpenCL's functions visible to the JIT's symbol lookup (once per process)."""
    global _opencl_library_loaded
    if _opencl_library_loaded:
        return
    import llvmlite.binding as llvm

    path = ctypes.util.find_library("OpenCL")
    if path is None:
        raise CompileError(f"target 'opencl' needs the OpenCL ICD loader libOpenCL.so; to get one, {HOW_TO_GET_ONE}")
    llvm.load_library_permanently(path)
    _opencl_library_loaded = True


# "file.cl:LINE:COL: error: ..." (clang) or "error: file.cl:LINE:COL: ..." (pocl)
_LINE = re.compile(r":(\d+):(\d+):\s*(?:fatal )?error|error:\s*\S*?:(\d+):(\d+):", re.IGNORECASE)


def _build(device: OpenCLDevice, program: OpenCLProgram) -> Any:
    import pyopencl as cl

    if not program.kernels:
        return None
    try:
        return cl.Program(device.context, program.source).build()
    except cl.Error as e:
        log = str(e)
        match = _LINE.search(log)
        lines = program.source.splitlines()
        where = ""
        culprit = None
        if match:
            line = int(match.group(1) or match.group(3))
            culprit = next((k for k in program.kernels if k.first_line <= line <= k.last_line), None)
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            where = f" at line {line} of the kernel source: {text}"
        func = culprit.func if culprit is not None else program.name
        raise CompileError(
            f"the OpenCL kernel for Func `{func}` did not build on {device.device_name}{where}\n{log.strip()}"
        ) from None


class OpenCLPipeline:
    """A pipeline compiled for an OpenCL device, called like the CPU's CompiledPipeline:
    `fn(args, outputs)` with every argument by name, outputs written in place. Its host
    code (a CompiledPipeline) runs with this pipeline's OpenCL state block bound: the
    context, queue, kernels and the device buffers it keeps between calls."""

    def __init__(
        self, program: OpenCLProgram, device: OpenCLDevice, built: Any, host: Any, compile_seconds: float
    ) -> None:
        self.name = program.name
        self.program = program
        self.arguments: list[Argument] = program.arguments
        self.kernel_source = program.source
        self.device = device
        self.target = OpenCLTarget("opencl", device.label)
        self.level = "full"
        self.compile_seconds = compile_seconds
        self.profile_names: list[str] = []
        self.last_run_seconds: float | None = None
        # of last_run_seconds, the time copying inputs to the device and outputs back
        self.last_transfer_seconds: float | None = None
        self.last_profile: dict[str, float] | None = None
        self.host = host
        self._built = built
        # kept alive as long as the state block holds their handles
        self._kernels = [getattr(built, k.name) for k in program.kernels] if built is not None else []
        self._kernel_handles = (ctypes.c_void_p * max(len(self._kernels), 1))(*(k.int_ptr for k in self._kernels))
        self._device_name = ctypes.create_string_buffer(device.device_name.encode("utf-8", "replace"))
        state_bytes = ctypes.CFUNCTYPE(ctypes.c_int64)(host.symbol_address(state_bytes_symbol(self.name)))()
        self._state = (ctypes.c_void_p * (state_bytes // 8))()
        self._state[0] = device.context.int_ptr
        self._state[1] = device.queue.int_ptr
        self._state[2] = ctypes.addressof(self._device_name)
        self._state[3] = ctypes.addressof(self._kernel_handles)
        self.inputs_in_place = device.shares_host_memory
        # outputs written where the caller has them, in calls where no output overlaps
        # another buffer argument (checked per call: its own flag bit is set then)
        self.outputs_in_place = device.shares_host_memory
        self._bind = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(host.symbol_address(bind_symbol(self.name)))
        self._finalizer = weakref.finalize(self, _pending_releases.append, (self._bind, host, self._state))
        self._finalizer.atexit = False  # the process's end frees the device memory anyway

    @property
    def profile(self) -> bool:
        return False

    @property
    def inputs_in_place(self) -> bool:
        """Whether the kernels read the caller's input arrays where they are instead of a
        copy on the device: the default on a device whose memory is the host's (a CPU
        device), where the copy is pure cost. False copies inputs as on any device.
        `outputs_in_place` is the same for outputs (the kernels write the caller's
        arrays), in calls where no output overlaps another buffer argument."""
        return self._flag(FLAG_INPUTS_IN_PLACE)

    @inputs_in_place.setter
    def inputs_in_place(self, value: bool) -> None:
        self._set_flag(FLAG_INPUTS_IN_PLACE, value)

    def _flag(self, bit: int) -> bool:
        return bool(int(self._state[STATE_FLAGS_OFFSET // 8] or 0) & bit)

    def _set_flag(self, bit: int, value: bool) -> None:
        flags = int(self._state[STATE_FLAGS_OFFSET // 8] or 0) & ~bit
        self._state[STATE_FLAGS_OFFSET // 8] = flags | (bit if value else 0)

    def device_buffers(self) -> list[int]:
        """The cl_mem handles the host code keeps between calls (0 for a slot not made yet
        or released), in slot order: what tests check reuse with."""
        slots = self._state[STATE_SLOTS_OFFSET // 8 :]
        step = SLOT_BYTES // 8
        return [int(slots[i] or 0) for i in range(0, len(slots), step)]

    def release_memory(self) -> None:
        """Free the device buffers kept between calls."""
        with _call_lock:
            _release_pending()
            _release_state(self._bind, self.host, self._state)

    def call_named(self, given: dict[str, Any], mins: Mapping[str, Sequence[int]] | None = None) -> None:
        """Run on every argument by name, inputs and outputs in one dict (the CPU pipeline's
        shortcut for Compiled's common call; here the same checks as any call)."""
        self(given, None, mins=mins)

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
        known = {a.name for a in self.arguments}
        for name in given:
            if name not in known:
                choices = ", ".join(a.name for a in self.arguments) or "none"
                raise InputError(f"`{name}` is not an argument of pipeline `{self.name}` (its arguments: {choices})")
        inputs: dict[str, Any] = {}
        results: dict[str, np.ndarray] = {}
        copies_back: list[tuple[np.ndarray, np.ndarray]] = []
        for a in self.arguments:
            if a.name not in given:
                raise InputError(f"no value given for {'output' if a.is_output else 'argument'} `{a.name}`")
            value = given[a.name]
            if not a.is_buffer():
                inputs[a.name] = _scalar(a, value)
                continue
            array = _check_array(a, value)
            dense = np.ascontiguousarray(array)  # one block of memory, copied to the device at once
            if a.is_output:
                results[a.name] = dense
                if dense is not array:
                    copies_back.append((array, dense))
            else:
                inputs[a.name] = dense
        outputs_in_place = self.outputs_in_place and not _overlaps(
            [v for v in inputs.values() if isinstance(v, np.ndarray)], list(results.values())
        )
        start = time.perf_counter()
        with _call_lock:  # the bound state is the library's, shared by pipelines of equal code
            _release_pending()
            self._set_flag(FLAG_OUTPUTS_IN_PLACE, outputs_in_place)
            self._state[4] = None  # the copies' nanoseconds
            self._bind(ctypes.addressof(self._state))
            try:
                self.host(inputs, results, mins=mins)
            finally:
                self._bind(None)
            transfer_ns = int(self._state[4] or 0)
        for array, dense in copies_back:
            array[...] = dense
        self.last_run_seconds = time.perf_counter() - start
        self.last_transfer_seconds = transfer_ns * 1e-9

    def __repr__(self) -> str:
        args = ", ".join(a.name for a in self.arguments)
        return f"<OpenCLPipeline {self.name}({args}) on {self.device.label}>"


_call_lock = threading.Lock()
# States of collected pipelines whose device buffers are still to be released. Their
# finalizers only append here: the garbage collector may run them anywhere, even between
# another call's bind and its native code, where releasing would unbind that call's state.
_pending_releases: list[tuple[Any, Any, Any]] = []


def _release_pending() -> None:
    """Release the device buffers of collected pipelines (the caller holds _call_lock)."""
    while _pending_releases:
        _release_state(*_pending_releases.pop())


def _release_state(bind: Any, host: Any, state: Any) -> None:
    """Release the device buffers a state block keeps (the caller holds _call_lock)."""
    bind(ctypes.addressof(state))
    try:
        host.release_memory()
    finally:
        bind(None)


def _overlaps(inputs: list[np.ndarray], outputs: list[np.ndarray]) -> bool:
    """Whether an output may share memory with an input or another output (then outputs
    are written to device buffers and copied back, so that no kernel reads what another
    has written)."""
    for i, out in enumerate(outputs):
        if any(np.may_share_memory(out, other) for other in [*inputs, *outputs[i + 1 :]]):
            return True
    return False


def _check_array(a: Argument, value: Any) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise InputError(f"buffer argument `{a.name}` must be a NumPy array, got {type(value).__name__}")
    if value.ndim != a.dimensions:
        raise InputError(f"buffer `{a.name}` must have {a.dimensions} dimensions, got an array of shape {value.shape}")
    want = a.type.numpy()
    if value.dtype != want:
        raise InputError(f"buffer `{a.name}` must have dtype {want}, got {value.dtype}")
    if a.is_output and not value.flags.writeable:
        raise InputError(f"output `{a.name}` is read-only")
    return value


def _scalar(a: Argument, value: Any) -> int | float | bool:
    t = a.type
    if isinstance(value, (np.ndarray,)) and value.ndim == 0:
        value = value.item()
    if t.is_float():
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise InputError(f"scalar `{a.name}` must be a number, got {type(value).__name__}")
        return float(np.array(value, dtype=t.numpy()))
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise InputError(f"scalar `{a.name}` of type {t} must be an integer, got {value!r}")
    if not isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_)):
        raise InputError(f"scalar `{a.name}` must be a number, got {type(value).__name__}")
    v = int(value)
    if t.is_bool():
        return bool(v & 1)
    if not t.can_represent(v):
        raise InputError(f"scalar `{a.name}` = {v} does not fit in {t}")
    return v
