"""The host part of an OpenCL pipeline as LLVM code (instead of a walk in Python).

engine/codegen/opencl.py turns a lowered pipeline into OpenCL C kernels and a host statement
of lets, asserts, allocations and serial loops around `KernelLaunch`es. This module compiles
that host statement with the CPU code generator (engine/codegen/llvm.py), extended with:

- buffer arguments: checked as on the CPU, then each is copied into a device buffer as one
  block of memory (inputs, and outputs whose strides leave gaps) at entry, and every
  output is read back once at the end; nothing else crosses between host and device. On
  a device whose memory is the host's (a CPU device), nothing is copied where the state
  block asks for it: inputs (and outputs, which the caller asks for only when no output
  overlaps another buffer argument) are buffers over the caller's memory for the call
  (CL_MEM_USE_HOST_PTR), released at its end; an output's is mapped and unmapped after
  the last kernel, which is what makes its contents the host's in OpenCL's rules;
- `Allocate`: a device buffer (cl_mem) instead of host memory; storage that may be the
  output buffer (`Allocate.output_alias`) is the output's device buffer where its
  condition holds (the lowering then skips the copy into the output);
- `KernelLaunch`: clSetKernelArg for each argument, clEnqueueNDRangeKernel, and for
  kernels with assertions a read of their error record (a failure's message names the
  assertion's values, as the CPU's).

Device buffers are kept between calls (fresh device memory is slow) in slots of an OpenCL
state block that the caller owns and binds with `NAME_opencl_bind(state)` before a call:

    offset 0: cl_context, 8: cl_command_queue, 16: the device's name (a C string, for
    messages), 24: a pointer to the cl_kernel handles (in `OpenCLProgram.kernels` order),
    32: nanoseconds spent copying between host and device (added to by every call),
    40: flags (bit 0: inputs in place, bit 1: outputs in place, see above; zero in an
        exported library),
    48 + 16 * i: slot i, { cl_mem, its capacity in bytes; 0 for a buffer over an input }.

`NAME_opencl_state_bytes()` gives the block's size; `NAME_release_memory()` releases the
bound block's device buffers. The OpenCL functions are resolved from libOpenCL by the
dynamic linker (the JIT: `load_opencl_library`; an exported library links -lOpenCL).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pixelweave.engine.codegen.llvm import ErrorCode, GeneratedModule, PipelineCodeGen, add_error_reporting
from pixelweave.engine.codegen.llvm_ir import (
    FunctionBuilder,
    ModuleBuilder,
    Value,
    element_bytes,
    int_const,
    scalar_type,
)
from pixelweave.engine.codegen.opencl import ERROR_SLOTS, Kernel, KernelLaunch, OpenCLProgram
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower import deep_recursion
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime import error_report
from pixelweave.engine.stmt import Allocate, Block, Stmt

STATE_CONTEXT_OFFSET = 0
STATE_QUEUE_OFFSET = 8
STATE_DEVICE_NAME_OFFSET = 16
STATE_KERNELS_OFFSET = 24
STATE_TRANSFER_NS_OFFSET = 32
STATE_FLAGS_OFFSET = 40
STATE_SLOTS_OFFSET = 48
SLOT_BYTES = 16
FLAG_INPUTS_IN_PLACE = 1
FLAG_OUTPUTS_IN_PLACE = 2
CL_MEM_READ_WRITE = 1
CL_MEM_READ_ONLY = 4
CL_MEM_USE_HOST_PTR = 8
CL_MAP_READ = 1

_OPENCL_FUNCTIONS = {
    "clSetKernelArg": "i32 (ptr, i32, i64, ptr)",
    "clEnqueueNDRangeKernel": "i32 (ptr, ptr, i32, ptr, ptr, ptr, i32, ptr, ptr)",
    "clCreateBuffer": "ptr (ptr, i64, i64, ptr, ptr)",
    "clReleaseMemObject": "i32 (ptr)",
    "clEnqueueWriteBuffer": "i32 (ptr, ptr, i32, i64, i64, ptr, i32, ptr, ptr)",
    "clEnqueueReadBuffer": "i32 (ptr, ptr, i32, i64, i64, ptr, i32, ptr, ptr)",
    "clFinish": "i32 (ptr)",
    "clEnqueueMapBuffer": "ptr (ptr, ptr, i32, i64, i64, i64, i32, ptr, ptr, ptr)",
    "clEnqueueUnmapMemObject": "i32 (ptr, ptr, ptr, i32, ptr, ptr)",
}


def bind_symbol(name: str) -> str:
    return f"{name}_opencl_bind"


def state_bytes_symbol(name: str) -> str:
    return f"{name}_opencl_state_bytes"


def host_module_generator(program: OpenCLProgram) -> Callable[..., GeneratedModule]:
    """A module generator (engine/runtime/jit.py `compile_pipeline(generator=...)`) that
    compiles program's host statement in place of the lowered body."""

    def generate(
        lowered: LoweredPipeline,
        *,
        triple: str,
        datalayout: str,
        profile: bool = False,
        checked: bool = False,
        embed_runtime: bool = False,
        features: str = "",  # the CPU's features: the host part reads no lookup tables
    ) -> GeneratedModule:
        if profile or checked:
            raise CompileError("profile and checked builds are available for CPU targets only, not target='opencl'")
        return generate_host_module(lowered, program, triple=triple, datalayout=datalayout, embed_runtime=embed_runtime)

    return generate


def generate_host_module(
    lowered: LoweredPipeline, program: OpenCLProgram, *, triple: str, datalayout: str, embed_runtime: bool = False
) -> GeneratedModule:
    """The LLVM module of program's host part, with the CPU module's entry points
    (NAME, NAME_argv, NAME_argv_context, NAME_error_message, NAME_release_memory) plus
    NAME_opencl_bind and NAME_opencl_state_bytes."""

    body = Block([program.host, _ReadOutputsBack()])
    host_lowered = dataclasses.replace(lowered, body=body, profile_names=[])
    module = ModuleBuilder(lowered.name, triple, datalayout)
    gen = _HostCodeGen(host_lowered, program, module, thread_local_context=embed_runtime)
    with deep_recursion():
        gen.generate()
    if embed_runtime:
        add_error_reporting(module, export=False)
    else:
        error_report.declare_error_reporting(module)
    return GeneratedModule(
        module.render(),
        lowered.name,
        list(lowered.arguments),
        [],
        gen.context_bytes,
        extra_exports=[bind_symbol(lowered.name), state_bytes_symbol(lowered.name)],
    )


class _ReadOutputsBack(Stmt):
    """The end of the host statement: every output is read back from its device buffer."""

    __slots__ = ()

    def children(self):
        return ()

    def with_children(self, c) -> _ReadOutputsBack:
        return self


class _HostCodeGen(PipelineCodeGen):
    def __init__(
        self, lowered: LoweredPipeline, program: OpenCLProgram, module: ModuleBuilder, *, thread_local_context: bool
    ) -> None:
        super().__init__(lowered, module, profile=False, thread_local_context=thread_local_context)
        self.program = program
        self.kernel_index = {id(k): i for i, k in enumerate(program.kernels)}
        self.slots: list[str] = []  # device buffer slots, by name
        self.device_buffers: dict[str, Value] = {}  # buffer name -> its cl_mem in the current scope
        # (argument, cl_mem, host, bytes, whether the cl_mem is over the caller's memory)
        self.outputs: list[tuple[Argument, Value, Value, Value, Value]] = []
        self.argument_slots: list[str] = []  # slots of arguments, which may hold buffers over the caller's memory
        self.state_global = f"@{self.prefix}.cl.state"
        self.zeros_added = False
        self._stmt_dispatch[KernelLaunch] = self._launch
        self._stmt_dispatch[Allocate] = self._device_allocate
        self._stmt_dispatch[_ReadOutputsBack] = self._read_outputs_back
        for name, signature in _OPENCL_FUNCTIONS.items():
            module.declare(name, signature)

    # ------------------------------------------------------------------ module level
    def generate(self) -> None:
        super().generate()
        m = self.module
        m.add_global(f"{self.state_global} = internal global ptr null, align 8")
        bind = self._function(bind_symbol(self.prefix), "void", [("ptr", "state")])
        bind.store(bind.params[0], Value("ptr", self.state_global), 8)
        bind.ret()
        m.add_function(bind.render())
        size = self._function(state_bytes_symbol(self.prefix), "i64", [])
        size.ret(int_const(64, STATE_SLOTS_OFFSET + SLOT_BYTES * len(self.slots)))
        m.add_function(size.render())
        self._device_buffer_function()
        self._host_buffer_function()

    @staticmethod
    def _function(name: str, ret: str, params: list[tuple[str, str]], linkage: str = "") -> FunctionBuilder:
        return FunctionBuilder(name, ret, params, linkage=linkage)

    def _release_memory_function(self) -> None:
        """NAME_release_memory(): release the device buffers of the bound state block."""
        f = self._function(f"{self.prefix}_release_memory", "void", [])
        state = f.load("ptr", Value("ptr", self.state_global), 8, "state")
        release, done = f.new_label("release"), f.new_label("done")
        f.cond_br(f.icmp("ne", state, Value("ptr", "null")), release, done)
        f.start_block(release)
        for i in range(len(self.slots)):
            slot = f.gep("i8", state, int_const(64, STATE_SLOTS_OFFSET + SLOT_BYTES * i), "slot")
            mem = f.load("ptr", slot, 8, "mem")
            free, next_slot = f.new_label("free"), f.new_label("next")
            f.cond_br(f.icmp("ne", mem, Value("ptr", "null")), free, next_slot)
            f.start_block(free)
            f.call("i32", "@clReleaseMemObject", [mem], "rc")
            f.store(Value("ptr", "null"), slot, 8)
            f.store(int_const(64, 0), f.gep("i8", slot, int_const(64, 8), "capacity"), 8)
            f.br(next_slot)
            f.start_block(next_slot)
        f.br(done)
        f.start_block(done)
        f.ret()
        self.module.add_function(f.render())

    def _device_buffer_function(self) -> None:
        """NAME.cl.device_buffer(state, slot, bytes): the slot's cl_mem, made (again) when
        it holds fewer bytes; null when the device has no memory for it."""
        f = self._function(
            f"{self.prefix}.cl.device_buffer", "ptr", [("ptr", "state"), ("ptr", "slot"), ("i64", "bytes")], "internal"
        )
        state, slot, nbytes = f.params
        capacity_field = f.gep("i8", slot, int_const(64, 8), "capacity.p")
        capacity = f.load("i64", capacity_field, 8, "capacity")
        mem = f.load("ptr", slot, 8, "mem")
        reuse, grow, release, create = (f.new_label(n) for n in ("reuse", "grow", "release", "create"))
        f.cond_br(f.icmp("uge", capacity, nbytes, "enough"), reuse, grow)
        f.start_block(reuse)
        f.ret(mem)
        f.start_block(grow)
        f.cond_br(f.icmp("ne", mem, Value("ptr", "null")), release, create)
        f.start_block(release)
        f.call("i32", "@clReleaseMemObject", [mem], "rc")
        f.br(create)
        f.start_block(create)
        error = f.alloca_in_entry("i32", 4, "error")
        f.store(int_const(32, 0), error, 4)
        context = f.load("ptr", state, 8, "context")
        made = f.call(
            "ptr",
            "@clCreateBuffer",
            [context, int_const(64, CL_MEM_READ_WRITE), nbytes, Value("ptr", "null"), error],
            "made",
        )
        ok, kept = self._keep_made_buffer(f, made, error, slot)
        f.store(f.select(ok, nbytes, int_const(64, 0), "new_capacity"), capacity_field, 8)
        f.ret(kept)
        self.module.add_function(f.render())

    def _host_buffer_function(self) -> None:
        """NAME.cl.host_buffer(state, slot, host, bytes, flags): a buffer over the host
        memory [host, host + bytes) (flags: its cl_mem_flags besides CL_MEM_USE_HOST_PTR),
        kept in the slot with capacity 0 (so that a later call copying the argument makes a
        device buffer of its own); the slot's previous buffer is released. Null when the
        device cannot make it."""
        f = self._function(
            f"{self.prefix}.cl.host_buffer",
            "ptr",
            [("ptr", "state"), ("ptr", "slot"), ("ptr", "host"), ("i64", "bytes"), ("i64", "flags")],
            "internal",
        )
        state, slot, host, nbytes, access = f.params
        self._release_slot(f, slot)
        error = f.alloca_in_entry("i32", 4, "error")
        f.store(int_const(32, 0), error, 4)
        context = f.load("ptr", state, 8, "context")
        flags = f.binop("or", access, int_const(64, CL_MEM_USE_HOST_PTR), "flags")
        made = f.call("ptr", "@clCreateBuffer", [context, flags, nbytes, host, error], "made")
        _, kept = self._keep_made_buffer(f, made, error, slot)
        f.ret(kept)
        self.module.add_function(f.render())

    @staticmethod
    def _keep_made_buffer(f: FunctionBuilder, made: Value, error: Value, slot: Value) -> tuple[Value, Value]:
        """Whether clCreateBuffer succeeded, and what the slot now keeps: the buffer, or null."""
        ok = f.binop(
            "and",
            f.icmp("ne", made, Value("ptr", "null")),
            f.icmp("eq", f.load("i32", error, 4, "code"), int_const(32, 0)),
            "ok",
        )
        kept = f.select(ok, made, Value("ptr", "null"), "kept")
        f.store(kept, slot, 8)
        return ok, kept

    @staticmethod
    def _release_slot(f: FunctionBuilder, slot: Value) -> None:
        """Release the slot's buffer, if any, and empty the slot."""
        mem = f.load("ptr", slot, 8, "old")
        free, done = f.new_label("free"), f.new_label("freed")
        f.cond_br(f.icmp("ne", mem, Value("ptr", "null")), free, done)
        f.start_block(free)
        f.call("i32", "@clReleaseMemObject", [mem], "rc")
        f.br(done)
        f.start_block(done)
        f.store(Value("ptr", "null"), slot, 8)
        f.store(int_const(64, 0), f.gep("i8", slot, int_const(64, 8), "capacity"), 8)

    # ------------------------------------------------------------------ helpers
    def _state(self) -> Value:
        return self.b.load("ptr", Value("ptr", self.state_global), 8, "cl.state")

    def _state_field(self, offset: int, hint: str) -> Value:
        return self.b.load("ptr", self._byte_offset(self._state(), offset), 8, hint)

    def _device_name(self) -> Value:
        return self._state_field(STATE_DEVICE_NAME_OFFSET, "device_name")

    def _slot(self, name: str) -> Value:
        if name not in self.slots:
            self.slots.append(name)
        index = self.slots.index(name)
        return self._byte_offset(self._state(), STATE_SLOTS_OFFSET + SLOT_BYTES * index)

    def _device_buffer(self, slot_name: str, nbytes: Value, what: str) -> Value:
        """The kept device buffer of slot_name with room for nbytes (an i64); fails the call
        (naming `what`) when the device has no memory for it."""
        b = self.b
        size = self._int_max(nbytes, int_const(64, 1))
        mem = b.call("ptr", f"@{self.prefix}.cl.device_buffer", [self._state(), self._slot(slot_name), size], "cl_mem")
        self._check(
            b.icmp("ne", mem, Value("ptr", "null")),
            ErrorCode.OUT_OF_MEMORY,
            f"out of device memory: could not allocate {{}} bytes for buffer `{what}` on {{}}",
            [(size, Int(64)), (self._device_name(), None)],
        )
        return mem

    def _check_cl(self, code: Value, message: str, args: list) -> None:
        """Fail with message (its last hole: the OpenCL error code) unless code is CL_SUCCESS."""
        self._check(
            self.b.icmp("eq", code, int_const(32, 0)),
            ErrorCode.ASSERTION_FAILED,
            message,
            [*args, (code, Int(32))],
        )

    def _copy(self, direction: str, mem: Value, host: Value, nbytes: Value, what: str) -> None:
        """A blocking copy of nbytes between host memory and mem (none when nbytes is 0)."""
        b = self.b
        copy, done = b.new_label("copy"), b.new_label("copied")
        b.cond_br(b.icmp("sgt", nbytes, int_const(64, 0)), copy, done)
        b.start_block(copy)
        queue = self._state_field(STATE_QUEUE_OFFSET, "queue")
        start = self._now_ns()
        function = "@clEnqueueWriteBuffer" if direction == "to" else "@clEnqueueReadBuffer"
        null = Value("ptr", "null")
        code = b.call(
            "i32",
            function,
            [queue, mem, int_const(32, 1), int_const(64, 0), nbytes, host, int_const(32, 0), null, null],
            "copy_rc",
        )
        verb = "to" if direction == "to" else "back from"
        self._check_cl(
            code,
            f"could not copy buffer `{what}` {verb} the OpenCL device {{}}: OpenCL error {{}}",
            [(self._device_name(), None)],
        )
        counter = self._byte_offset(self._state(), STATE_TRANSFER_NS_OFFSET)
        elapsed = b.binop("sub", self._now_ns(), start, "copy_ns")
        b.emit(f"atomicrmw add ptr {counter.ref}, {elapsed} monotonic, align 8")
        b.br(done)
        b.start_block(done)

    # ------------------------------------------------------------------ arguments
    def _bind_buffer_argument(self, a: Argument, desc: Value) -> None:
        """The CPU's checks, then the argument's device buffer: one block spanning its
        elements (non-negative strides), filled from the host for inputs."""
        super()._bind_buffer_argument(a, desc)
        b = self.b
        host = self.fn.buffers[a.name].pointer
        span, count = int_const(64, 1), int_const(64, 1)
        empty, negative = Value("i1", "false"), Value("i1", "false")
        for i in range(a.dimensions):
            extent = b.convert("sext", self.fn.scope[f"{a.name}.extent.{i}"], "i64")
            stride = b.convert("sext", self.fn.scope[f"{a.name}.stride.{i}"], "i64")
            empty = b.binop("or", empty, b.icmp("sle", extent, int_const(64, 0)), "empty")
            negative = b.binop("or", negative, b.icmp("slt", stride, int_const(64, 0)), "negative")
            reach = b.binop("mul", b.binop("sub", extent, int_const(64, 1)), stride, "reach")
            span = b.binop("add", span, reach, "span")
            count = b.binop("mul", count, extent, "count")
        self._check(
            b.binop("xor", negative, Value("i1", "true"), "strides_ok"),
            ErrorCode.BAD_ARGUMENT,
            f"buffer `{a.name}` has a negative stride; target opencl copies a buffer to the device as one block "
            "and needs non-negative strides",
            [],
        )
        elements = b.select(empty, int_const(64, 0), span, "elements")
        nbytes = b.binop("mul", elements, int_const(64, element_bytes(a.type)), f"{a.name}.bytes")
        # an output whose strides leave gaps goes to the device first, so that reading it
        # back leaves the gaps as they were (none in place: the kernels leave them alone)
        gaps = b.icmp("ne", elements, count, "gaps")
        bytes_in = b.select(gaps, nbytes, int_const(64, 0), "bytes_in") if a.is_output else nbytes
        mem, in_place = self._argument_buffer(a, host, nbytes, bytes_in)
        if a.is_output:
            self.outputs.append((a, mem, host, nbytes, in_place))
        self.device_buffers[a.name] = mem

    def _argument_buffer(self, a: Argument, host: Value, nbytes: Value, bytes_in: Value) -> tuple[Value, Value]:
        """The argument's cl_mem, and whether it is a buffer over the caller's memory (where
        the state block asks for the argument's kind in place and it is not empty), else
        its kept device buffer, filled with its first bytes_in bytes by a copy."""
        b = self.b
        slot_name = f"argument {a.name}"
        self.argument_slots.append(slot_name)
        flags = b.load("i64", self._byte_offset(self._state(), STATE_FLAGS_OFFSET), 8, "flags")
        bit = FLAG_OUTPUTS_IN_PLACE if a.is_output else FLAG_INPUTS_IN_PLACE
        wanted = b.icmp("ne", b.binop("and", flags, int_const(64, bit)), int_const(64, 0))
        in_place = b.binop("and", wanted, b.icmp("sgt", nbytes, int_const(64, 0)), f"{a.name}.in_place")
        cell = b.alloca_in_entry("ptr", 8, f"{a.name}.cl_mem")
        place, copy, done = b.new_label("in_place"), b.new_label("copy_in"), b.new_label("argument_ready")
        b.cond_br(in_place, place, copy)
        b.start_block(place)
        access = int_const(64, CL_MEM_READ_WRITE if a.is_output else CL_MEM_READ_ONLY)
        mem = b.call(
            "ptr",
            f"@{self.prefix}.cl.host_buffer",
            [self._state(), self._slot(slot_name), host, nbytes, access],
            "cl_mem",
        )
        self._check(
            b.icmp("ne", mem, Value("ptr", "null")),
            ErrorCode.OUT_OF_MEMORY,
            f"could not use buffer `{a.name}` ({{}} bytes) in place on {{}}",
            [(nbytes, Int(64)), (self._device_name(), None)],
        )
        b.store(mem, cell, 8)
        b.br(done)
        b.start_block(copy)
        mem = self._device_buffer(slot_name, nbytes, a.name)
        self._copy("to", mem, host, bytes_in, a.name)
        b.store(mem, cell, 8)
        b.br(done)
        b.start_block(done)
        return b.load("ptr", cell, 8, f"{a.name}.cl_mem"), in_place

    def _release_arguments_in_place(self) -> None:
        """Release the buffers over the caller's memory (a slot with capacity 0 holding a
        buffer): the caller may free or change that memory once the call returns."""
        b = self.b
        for slot_name in self.argument_slots:
            slot = self._slot(slot_name)
            capacity = b.load("i64", b.gep("i8", slot, int_const(64, 8), "capacity.p"), 8, "capacity")
            mem = b.load("ptr", slot, 8, "mem")
            over_input = b.binop(
                "and", b.icmp("eq", capacity, int_const(64, 0)), b.icmp("ne", mem, Value("ptr", "null")), "over_input"
            )
            free, done = b.new_label("release_input"), b.new_label("input_released")
            b.cond_br(over_input, free, done)
            b.start_block(free)
            b.call("i32", "@clReleaseMemObject", [mem], "rc")
            b.store(Value("ptr", "null"), slot, 8)
            b.br(done)
            b.start_block(done)

    def _read_outputs_back(self, s: Stmt) -> None:
        self._finish()  # the kernels first, so that the copies' time is theirs alone
        b = self.b
        for a, mem, host, nbytes, in_place in self.outputs:
            place, copy, done = b.new_label("map"), b.new_label("copy_back"), b.new_label("output_done")
            b.cond_br(in_place, place, copy)
            b.start_block(place)
            self._map_and_unmap(mem, nbytes, a.name)
            b.br(done)
            b.start_block(copy)
            self._copy("back", mem, host, nbytes, a.name)
            b.br(done)
            b.start_block(done)
        self._finish()
        self._release_arguments_in_place()

    def _map_and_unmap(self, mem: Value, nbytes: Value, what: str) -> None:
        """Map and unmap a buffer over the caller's output: its contents are then the
        host's (on a CPU device the memory is the same and nothing is copied)."""
        b = self.b
        queue = self._state_field(STATE_QUEUE_OFFSET, "queue")
        null = Value("ptr", "null")
        error = b.alloca_in_entry("i32", 4, "map_error")
        b.store(int_const(32, 0), error, 4)
        start = self._now_ns()
        mapped = b.call(
            "ptr",
            "@clEnqueueMapBuffer",
            [queue, mem, int_const(32, 1), int_const(64, CL_MAP_READ), int_const(64, 0), nbytes,
             int_const(32, 0), null, null, error],
            "mapped",
        )  # fmt: skip
        code = b.load("i32", error, 4, "map_rc")
        self._check_cl(
            code,
            f"could not read buffer `{what}` back from the OpenCL device {{}}: OpenCL error {{}}",
            [(self._device_name(), None)],
        )
        code = b.call("i32", "@clEnqueueUnmapMemObject", [queue, mem, mapped, int_const(32, 0), null, null], "unmap_rc")
        self._check_cl(
            code,
            f"could not read buffer `{what}` back from the OpenCL device {{}}: OpenCL error {{}}",
            [(self._device_name(), None)],
        )
        counter = self._byte_offset(self._state(), STATE_TRANSFER_NS_OFFSET)
        elapsed = b.binop("sub", self._now_ns(), start, "map_ns")
        b.emit(f"atomicrmw add ptr {counter.ref}, {elapsed} monotonic, align 8")

    def _finish(self) -> None:
        code = self.b.call("i32", "@clFinish", [self._state_field(STATE_QUEUE_OFFSET, "queue")], "finish_rc")
        self._check_cl(code, "the OpenCL device {} failed: OpenCL error {}", [(self._device_name(), None)])

    # ------------------------------------------------------------------ statements
    def _device_allocate(self, s: Allocate) -> None:
        b = self.b
        size = (
            b.convert("sext", self._expr(s.size, hint=f"{s.name}.size"), "i64")
            if s.size.type().bits < 64
            else (self._expr(s.size, hint=f"{s.name}.size"))
        )
        count = self._int_max(size, int_const(64, 0))
        aliased = None
        if s.output_alias is not None:  # storage that is the output's device buffer needs none of its own
            aliased = self._expr(s.output_alias[1], hint=f"{s.name}.is_output")
            count = b.select(aliased, int_const(64, 0), count, f"{s.name}.count")
        nbytes = b.binop("mul", count, int_const(64, element_bytes(s.type)), f"{s.name}.bytes")
        mem = self._device_buffer(s.name, nbytes, s.name)
        if s.output_alias is not None:
            output = self.device_buffers.get(s.output_alias[0])
            if output is None:
                raise CompileError(
                    f"storage `{s.name}` may be output buffer `{s.output_alias[0]}`, which has no device buffer here"
                )
            mem = b.select(aliased, output, mem, s.name)
        outer = self.device_buffers.get(s.name)
        self.device_buffers[s.name] = mem
        try:
            self._stmt(s.body)
        finally:
            if outer is None:
                del self.device_buffers[s.name]
            else:
                self.device_buffers[s.name] = outer

    def _as_i64(self, v: Value) -> Value:
        if v.ty == "i64":
            return v
        return self.b.convert("sext", v, "i64")

    def _launch(self, s: Stmt) -> None:
        assert isinstance(s, KernelLaunch)
        k: Kernel = s.kernel
        b = self.b
        extents = [self._as_i64(self._expr(e, hint="blocks")) for e in k.block_extents]
        launch, skip = b.new_label(f"launch.{k.name}"), b.new_label(f"launched.{k.name}")
        if extents:
            empty = Value("i1", "false")
            for e in extents:
                empty = b.binop("or", empty, b.icmp("sle", e, int_const(64, 0)), "no_blocks")
            b.cond_br(empty, skip, launch)
        else:
            b.br(launch)
        b.start_block(launch)
        mins = [self._expr(e, hint="block_min") for e in k.block_mins]
        kernels = self._state_field(STATE_KERNELS_OFFSET, "kernels")
        kernel = b.load("ptr", b.gep("ptr", kernels, int_const(64, self.kernel_index[id(k)]), "kernel.p"), 8, "kernel")
        status = int_const(32, 0)
        index = 0

        def set_arg(value: Value, size: int) -> None:
            nonlocal status, index
            slot = b.alloca_in_entry(value.ty, 8, "kernel_arg")
            b.store(value, slot, size)
            rc = b.call("i32", "@clSetKernelArg", [kernel, int_const(32, index), int_const(64, size), slot], "arg_rc")
            status = b.binop("or", status, rc, "arg_status")
            index += 1

        for a in k.arguments:
            if a.is_buffer:
                mem = self.device_buffers.get(a.name)
                if mem is None:
                    raise CompileError(
                        f"the OpenCL kernel for Func `{k.func}` uses `{a.name}`, which is no device buffer"
                    )
                set_arg(mem, 8)
                continue
            value = self.fn.scope.get(a.name)
            if value is None:
                raise CompileError(
                    f"the OpenCL kernel for Func `{k.func}` uses `{a.name}`, which the host does not bind"
                )
            if a.type.is_bool():
                set_arg(b.convert("zext", value, "i32"), 4)
            elif value.ty != scalar_type(a.type) or a.type.bits not in (8, 16, 32, 64):
                raise CompileError(f"the OpenCL host cannot pass `{a.name}` of type {a.type} to a kernel")
            else:
                set_arg(value, a.type.bits // 8)
        for m in mins:
            if m.ty != "i32":
                m = b.convert("trunc" if m.ty == "i64" else "sext", m, "i32")
            set_arg(m, 4)
        local = [*k.local_size]
        dims = max(len(local), len(extents), 1)
        local += [1] * (dims - len(local))
        extents += [int_const(64, 1)] * (dims - len(extents))
        global_sizes = [
            b.binop("mul", e, int_const(64, size), "global") for e, size in zip(extents, local, strict=True)
        ]
        for name, t, bound, per_group in k.scratch:
            size = self._int_max(self._as_i64(self._expr(bound, hint=f"{name}.bound")), int_const(64, 1))
            users = int_const(64, 1)
            for e in extents if per_group else global_sizes:
                users = b.binop("mul", users, e, "users")
            nbytes = b.binop("mul", b.binop("mul", size, users), int_const(64, element_bytes(t)), "scratch_bytes")
            set_arg(self._device_buffer(f"{k.name}.{name}", nbytes, name), 8)
            set_arg(size, 8)
        null = Value("ptr", "null")
        record_bytes = int_const(64, 4 * ERROR_SLOTS)
        if k.asserts:
            error = self._device_buffer("error record", record_bytes, "error record")
            zeros = self._zeros()
            queue = self._state_field(STATE_QUEUE_OFFSET, "queue")
            rc = b.call(
                "i32",
                "@clEnqueueWriteBuffer",
                [queue, error, int_const(32, 0), int_const(64, 0), record_bytes, zeros, int_const(32, 0), null, null],
                "clear_rc",
            )
            status = b.binop("or", status, rc, "arg_status")
            set_arg(error, 8)
        self._check_cl(
            status,
            f"could not pass the arguments of the OpenCL kernel for Func `{k.func}` on {{}}: OpenCL error {{}}",
            [(self._device_name(), None)],
        )
        global_array = b.alloca_in_entry(f"[{dims} x i64]", 8, "global_size")
        local_array = b.alloca_in_entry(f"[{dims} x i64]", 8, "local_size")
        for d in range(dims):
            b.store(global_sizes[d], b.gep("i64", global_array, int_const(64, d)), 8)
            b.store(int_const(64, local[d]), b.gep("i64", local_array, int_const(64, d)), 8)
        queue = self._state_field(STATE_QUEUE_OFFSET, "queue")
        rc = b.call(
            "i32",
            "@clEnqueueNDRangeKernel",
            [queue, kernel, int_const(32, dims), null, global_array, local_array, int_const(32, 0), null, null],
            "launch_rc",
        )
        holes = ", ".join("{}" for _ in range(dims)) + ("," if dims == 1 else "")
        self._check_cl(
            rc,
            f"the OpenCL kernel for Func `{k.func}` could not run on {{}} (global size ({holes}), work-group "
            f"{tuple(local)}): OpenCL error {{}}",
            [(self._device_name(), None), *((g, Int(64)) for g in global_sizes)],
        )
        if k.asserts:
            self._check_kernel_asserts(k, error)
        b.br(skip)
        b.start_block(skip)

    def _zeros(self) -> Value:
        """A constant error record of zeros (what a kernel's record is cleared with)."""
        name = f"@{self.prefix}.cl.zeros"
        if not self.zeros_added:
            self.module.add_global(f"{name} = internal constant [{ERROR_SLOTS} x i32] zeroinitializer, align 16")
            self.zeros_added = True
        return Value("ptr", name)

    def _check_kernel_asserts(self, k: Kernel, error: Value) -> None:
        """Read the kernel's error record; a failed assertion fails the call with its message."""
        b = self.b
        record = b.alloca_in_entry(f"[{ERROR_SLOTS} x i32]", 16, "error_record")
        null = Value("ptr", "null")
        queue = self._state_field(STATE_QUEUE_OFFSET, "queue")
        rc = b.call(
            "i32",
            "@clEnqueueReadBuffer",
            [
                queue,
                error,
                int_const(32, 1),
                int_const(64, 0),
                int_const(64, 4 * ERROR_SLOTS),
                record,
                int_const(32, 0),
                null,
                null,
            ],
            "record_rc",
        )
        self._check_cl(
            rc,
            f"the OpenCL kernel for Func `{k.func}` failed on {{}}: OpenCL error {{}}",
            [(self._device_name(), None)],
        )
        failed = b.load("i32", record, 4, "failed")
        values = [b.load("i32", b.gep("i32", record, int_const(64, 1 + j)), 4, "value") for j in range(ERROR_SLOTS - 1)]
        for j, assertion in enumerate(k.asserts):
            args = [(values[n], Int(32)) for n in range(min(len(assertion.args), ERROR_SLOTS - 1))]
            self._check(b.icmp("ne", failed, int_const(32, j + 1)), ErrorCode.ASSERTION_FAILED, assertion.message, args)
