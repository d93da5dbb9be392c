"""Running a pipeline compiled for target 'opencl': the host part, in Python over pyopencl.

The backend (engine/codegen/opencl.py) leaves a host statement of lets, asserts,
allocations and loops around `KernelLaunch`es; this module walks it. Every buffer lives on
the device: each input is copied there once per call, intermediates are device buffers
kept between calls (fresh memory is slow), and each output is copied back once at the end.
Nothing goes back and forth between consecutive GPU stages. Host expressions (loop
bounds, buffer sizes, checks) are evaluated here with Halide's integer semantics.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pixelweave.engine.codegen.opencl import DeviceLimits, Kernel, KernelLaunch, OpenCLProgram, generate_opencl
from pixelweave.engine.errors import CompileError, InputError, RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Type
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime.opencl_device import OpenCLDevice, select_device
from pixelweave.engine.stmt import (
    Allocate,
    AssertStmt,
    Block,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    ProducerConsumer,
    Stmt,
)


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
    """Generate and build the kernels of a pipeline lowered for target 'opencl'."""
    start = time.perf_counter()
    chosen = select_device(device)
    program = generate_opencl(lowered, device_limits(chosen))
    built = _build(chosen, program)
    return OpenCLPipeline(program, chosen, built, time.perf_counter() - start)


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
    `fn(args, outputs)` with every argument by name, outputs written in place."""

    def __init__(self, program: OpenCLProgram, device: OpenCLDevice, built: Any, compile_seconds: float) -> None:
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
        self._built = built
        self._kernels = {k.name: getattr(built, k.name) for k in program.kernels} if built is not None else {}
        self._scratch: dict[str, Any] = {}  # device buffers of intermediates, kept between calls
        self._error_buffer: Any = None
        self._lock = threading.Lock()

    @property
    def profile(self) -> bool:
        return False

    def release_memory(self) -> None:
        """Free the device buffers kept between calls."""
        self._scratch.clear()

    def __call__(
        self,
        args: Mapping[str, Any] | None = None,
        outputs: Mapping[str, np.ndarray] | None = None,
        *,
        mins: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        with self._lock:  # the kept device buffers serve one call at a time
            self._call(args, outputs, mins)

    def _call(
        self,
        args: Mapping[str, Any] | None,
        outputs: Mapping[str, np.ndarray] | None,
        mins: Mapping[str, Sequence[int]] | None,
    ) -> None:
        import pyopencl as cl

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
        queue = self.device.queue
        env: dict[str, Any] = {}
        buffers: dict[str, Any] = {}
        copies_back: list[tuple[np.ndarray, Any, np.ndarray]] = []
        start = time.perf_counter()
        transfer = 0.0
        for a in self.arguments:
            if a.name not in given:
                raise InputError(f"no value given for {'output' if a.is_output else 'argument'} `{a.name}`")
            value = given[a.name]
            if not a.is_buffer():
                env[a.name] = _scalar(a, value)
                continue
            array = _check_array(a, value)
            dense = np.ascontiguousarray(array)
            for i in range(a.dimensions):
                env[f"{a.name}.min.{i}"] = int((mins or {}).get(a.name, [0] * a.dimensions)[i])
                env[f"{a.name}.extent.{i}"] = int(dense.shape[a.dimensions - 1 - i])
                env[f"{a.name}.stride.{i}"] = int(dense.strides[a.dimensions - 1 - i] // max(dense.itemsize, 1))
            nbytes = max(dense.nbytes, 1)
            t0 = time.perf_counter()
            buf = self.scratch_buffer(f"argument {a.name}", nbytes)  # kept between calls: fresh memory is slow
            if a.is_output:
                copies_back.append((array, buf, dense if dense is not array else array))
            else:
                if dense.nbytes:
                    cl.enqueue_copy(queue, buf, dense, is_blocking=True)
            transfer += time.perf_counter() - t0
            buffers[a.name] = buf
        _Host(self, env, buffers).run(self.program.host)
        queue.finish()
        t0 = time.perf_counter()
        for array, buf, dense in copies_back:
            if dense.nbytes:
                target = dense if dense is array else np.empty_like(dense)
                cl.enqueue_copy(queue, target, buf)
                if target is not array:
                    array[...] = target
        queue.finish()
        transfer += time.perf_counter() - t0
        self.last_run_seconds = time.perf_counter() - start
        self.last_transfer_seconds = transfer

    def scratch_buffer(self, name: str, nbytes: int) -> Any:
        import pyopencl as cl

        buf = self._scratch.get(name)
        if buf is None or buf.size < nbytes:
            try:
                buf = cl.Buffer(self.device.context, cl.mem_flags.READ_WRITE, max(nbytes, 1))
            except cl.Error as e:
                raise RuntimeFailure(
                    f"out of device memory: could not allocate {nbytes} bytes for buffer `{name}` on "
                    f"{self.device.device_name}: {e}"
                ) from None
            self._scratch[name] = buf
        return buf

    def error_buffer(self) -> Any:
        import pyopencl as cl

        if self._error_buffer is None:
            self._error_buffer = cl.Buffer(self.device.context, cl.mem_flags.READ_WRITE, 4 * 8)
        return self._error_buffer

    def __repr__(self) -> str:
        args = ", ".join(a.name for a in self.arguments)
        return f"<OpenCLPipeline {self.name}({args}) on {self.device.label}>"


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


# ------------------------------------------------------------------------------ host statements
class _Host:
    """Walks the host statement, evaluating its expressions and launching kernels."""

    def __init__(self, pipeline: OpenCLPipeline, env: dict[str, Any], buffers: dict[str, Any]) -> None:
        self.pipeline = pipeline
        self.env = env
        self.buffers = buffers

    def run(self, s: Stmt) -> None:
        if isinstance(s, Block):
            for c in s.stmts:
                self.run(c)
        elif isinstance(s, ProducerConsumer):
            self.run(s.body)
        elif isinstance(s, LetStmt):
            old = self.env.get(s.name, _UNBOUND)
            self.env[s.name] = evaluate(s.value, self.env)
            try:
                self.run(s.body)
            finally:
                _restore(self.env, s.name, old)
        elif isinstance(s, AssertStmt):
            if not evaluate(s.condition, self.env):
                values = [evaluate(a, self.env) for a in s.args]
                raise RuntimeFailure(_format(s.message, values))
        elif isinstance(s, Allocate):
            size = int(evaluate(s.size, self.env))
            nbytes = max(size, 0) * max(s.type.bits // 8, 1)
            old = self.buffers.get(s.name)
            self.buffers[s.name] = self.pipeline.scratch_buffer(s.name, nbytes)
            try:
                self.run(s.body)
            finally:
                if old is None:
                    self.buffers.pop(s.name, None)
                else:
                    self.buffers[s.name] = old
        elif isinstance(s, For):
            lo, extent = int(evaluate(s.min, self.env)), int(evaluate(s.extent, self.env))
            old = self.env.get(s.name, _UNBOUND)
            try:
                for i in range(lo, lo + extent):
                    self.env[s.name] = i
                    self.run(s.body)
            finally:
                _restore(self.env, s.name, old)
        elif isinstance(s, IfThenElse):
            if evaluate(s.condition, self.env):
                self.run(s.then_case)
            elif s.else_case is not None:
                self.run(s.else_case)
        elif isinstance(s, KernelLaunch):
            self.launch(s.kernel)
        elif isinstance(s, Evaluate):
            pass
        else:
            raise CompileError(f"the OpenCL host cannot run {type(s).__name__} statements")

    def launch(self, k: Kernel) -> None:
        import pyopencl as cl

        extents = [int(evaluate(e, self.env)) for e in k.block_extents]
        if any(x <= 0 for x in extents):
            return
        mins = [int(evaluate(e, self.env)) for e in k.block_mins]
        args: list[Any] = []
        for a in k.arguments:
            if a.is_buffer:
                args.append(self.buffers[a.name])
            else:
                value = self.env[a.name]
                dtype = np.int32 if a.type.is_bool() else a.type.numpy()
                args.append(np.array(value, dtype=dtype)[()])
        args += [np.int32(m) for m in mins]
        local = list(k.local_size)
        dims = max(len(local), len(extents), 1)
        local += [1] * (dims - len(local))
        extents += [1] * (dims - len(extents))
        global_size = tuple(e * s for e, s in zip(extents, local, strict=True))
        for name, t, bound, per_group in k.scratch:
            size = max(int(evaluate(bound, self.env)), 1)
            users = _product(extents) if per_group else _product(global_size)
            nbytes = size * users * max(t.bits // 8, 1)
            args += [self.pipeline.scratch_buffer(f"{k.name}.{name}", nbytes), np.int64(size)]
        error = None
        if k.asserts:
            error = self.pipeline.error_buffer()
            cl.enqueue_fill_buffer(self.pipeline.device.queue, error, np.int32(0), 0, 4 * 8)
            args.append(error)
        kernel = self.pipeline._kernels[k.name]
        try:
            kernel(self.pipeline.device.queue, global_size, tuple(local), *args)
        except cl.Error as e:
            raise RuntimeFailure(
                f"the OpenCL kernel for Func `{k.func}` could not run on {self.pipeline.device.device_name} "
                f"(global size {global_size}, work-group {tuple(local)}): {e}"
            ) from None
        if error is not None:
            record = np.zeros(8, np.int32)
            cl.enqueue_copy(self.pipeline.device.queue, record, error)
            if record[0]:
                failed = k.asserts[int(record[0]) - 1]
                raise RuntimeFailure(_format(failed.message, [int(v) for v in record[1 : 1 + len(failed.args)]]))


_UNBOUND = object()


def _product(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _restore(env: dict[str, Any], name: str, old: Any) -> None:
    if old is _UNBOUND:
        env.pop(name, None)
    else:
        env[name] = old


def _format(message: str, values: list[Any]) -> str:
    parts = message.split("{}")
    out = parts[0]
    for i, part in enumerate(parts[1:]):
        out += (str(values[i]) if i < len(values) else "?") + part
    return out


# ------------------------------------------------------------------------------ host expressions
def _wrap(v: int, t: Type) -> int:
    if t.is_bool():
        return v & 1
    mask = (1 << t.bits) - 1
    v &= mask
    if t.is_int() and v >> (t.bits - 1):
        v -= 1 << t.bits
    return v


def _euclid_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    r = a - q * b
    if r < 0:
        q += -1 if b > 0 else 1
    return q


def _euclid_mod(a: int, b: int) -> int:
    if b == 0:
        return 0
    r = a % abs(b)
    return r


_COMPARISONS = {
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
    E.Min: lambda a, b: a if a < b else b,
    E.Max: lambda a, b: a if a > b else b,
    E.And: lambda a, b: bool(a) and bool(b),
    E.Or: lambda a, b: bool(a) or bool(b),
}
_FLOAT_OPS = {
    E.Add: lambda x, y: x + y,
    E.Sub: lambda x, y: x - y,
    E.Mul: lambda x, y: x * y,
    E.Div: lambda x, y: x / y,
    E.Mod: lambda x, y: x - y * np.floor(x / y),
}
_INT_OPS = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.Div: _euclid_div,
    E.Mod: _euclid_mod,
}


def evaluate(e: E.Expr, env: dict[str, Any]) -> Any:
    """The value of a scalar host expression (no memory, no math intrinsics)."""
    t = e.type()
    if isinstance(e, E.Const):
        return float(e.value) if t.is_float() else int(e.value)
    if isinstance(e, E.Variable):
        try:
            return env[e.name]
        except KeyError:
            raise CompileError(f"host expression uses `{e.name}`, which is not bound on the host") from None
    if isinstance(e, E.Let):
        old = env.get(e.name, _UNBOUND)
        env[e.name] = evaluate(e.value, env)
        try:
            return evaluate(e.body, env)
        finally:
            _restore(env, e.name, old)
    if isinstance(e, E.Cast):
        return _cast(evaluate(e.value, env), e.value.type(), t)
    if isinstance(e, E.Select):
        return evaluate(e.true_value, env) if evaluate(e.cond, env) else evaluate(e.false_value, env)
    if isinstance(e, E.Not):
        return not evaluate(e.a, env)
    if isinstance(e, E.BinaryOp):
        a, b = evaluate(e.a, env), evaluate(e.b, env)
        compare = _COMPARISONS.get(type(e))
        if compare is not None:
            return compare(a, b)
        if t.is_float():
            dt = t.numpy().type
            with np.errstate(all="ignore"):
                return float(_FLOAT_OPS[type(e)](dt(a), dt(b)))
        return _wrap(_INT_OPS[type(e)](int(a), int(b)), t)
    raise CompileError(f"the OpenCL host cannot evaluate {type(e).__name__} expressions")


def _cast(v: Any, src: Type, dst: Type) -> Any:
    if dst.is_float():
        return float(np.array(v, dtype=dst.numpy()))
    if src.is_float():
        if np.isnan(v) or np.isinf(v):
            return 0
        v = int(v)
    return _wrap(int(v), dst)
