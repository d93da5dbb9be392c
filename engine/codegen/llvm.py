"""Lowered statements -> LLVM IR text: the CPU backend.

`generate_module` turns a LoweredPipeline into one LLVM module holding:

- `int32_t NAME(args...)`: a `pw_buffer_t*` per buffer argument, the value of each scalar
  argument (bools as uint8_t); 0 on success, an error code (ErrorCode) on failure;
- `int32_t NAME_argv(void **args)`: the same through an array of pointers;
- `int32_t NAME_argv_context(void **args, void *context)`: the same with a per-call context
  (CONTEXT_* layout: the failure message and the profile counters of this call);
- `const char *NAME_error_message(void)`: the message of this thread's last failure;
- `void NAME_release_memory(void)`: frees the intermediate buffers kept between calls.

Expressions become explicit LLVM vector operations when they have lanes. Every operation
is total: integer division and modulo are Euclidean with x/0 == 0, shifts never reach an
LLVM shift by >= the bit width, float -> int conversions saturate. No nsw/nuw flags, no
`inbounds`: the generated code has no poison or undefined behaviour of its own.

Errors (a failed AssertStmt, a failed allocation, a bad buffer argument) write a message
once into a module buffer, free the heap allocations live at that point and return a code;
a parallel loop's outlined body returns its code through the runtime to its caller.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum

from pixelweave.engine.codegen.llvm_address import WideValue
from pixelweave.engine.codegen.llvm_expr import BufferRef, ExprCodeGen
from pixelweave.engine.codegen.llvm_ir import (
    TRUE,
    FunctionBuilder,
    ModuleBuilder,
    Value,
    element_bytes,
    int_const,
    lanes_of,
    memory_scalar_type,
)
from pixelweave.engine.codegen.llvm_table_lookup import supports_table_lookup
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.memoize_calls import BUFFER_ADDRESS_PREFIX
from pixelweave.engine.ir.types import Bool, Float, Int, Type, UInt
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime import error_report, thread_pool
from pixelweave.engine.stmt import (
    Allocate,
    AssertStmt,
    Block,
    Evaluate,
    For,
    ForType,
    IfThenElse,
    LetStmt,
    Load,
    ProducerConsumer,
    Stmt,
    Store,
    constant_int,
)


class ErrorCode(IntEnum):
    """Return codes of generated entry points (also written into exported headers)."""

    SUCCESS = 0
    ASSERTION_FAILED = 1
    OUT_OF_MEMORY = 2
    BAD_ARGUMENT = 3
    DEVICE_ERROR = 4  # target opencl: no usable device, or the kernels did not build there


# Layout of pw_buffer_t and pw_dimension_t (x86-64 / AArch64 LP64), in bytes.
BUFFER_HOST_OFFSET = 0
BUFFER_TYPE_CODE_OFFSET = 8
BUFFER_TYPE_BITS_OFFSET = 12
BUFFER_DIMENSIONS_OFFSET = 16
BUFFER_FLAGS_OFFSET = 20
BUFFER_DIM_OFFSET = 24
BUFFER_SIZE = 32
DIMENSION_SIZE = 16
TYPE_CODES = {"int": 0, "uint": 1, "float": 2}

ERROR_MESSAGE_BYTES = 1024
# The per-call context: a failure's claim flag (i32), its message, then one int64 of
# nanoseconds per profiled Func.
CONTEXT_CLAIMED_OFFSET = 0
CONTEXT_MESSAGE_OFFSET = 8
CONTEXT_PROFILE_OFFSET = CONTEXT_MESSAGE_OFFSET + ERROR_MESSAGE_BYTES
_CONTEXT = "<context>"  # its name among a closure's captured values


def context_bytes(profile_count: int) -> int:
    """Size of the per-call context of a module with profile_count profiled Funcs."""
    return CONTEXT_PROFILE_OFFSET + 8 * profile_count


HEAP_ALIGNMENT = 64
# Produce bodies outlined into functions of their own (_CodeGen._outlined_produce), so that
# a module one parallel loop's body dominates splits into parts that compile at once
# (engine/codegen/module_split.py). Counted in distinct statement and expression nodes:
# only pipelines of at least OUTLINE_MIN_PIPELINE_NODES (3 to 4.5 lines of IR a node, and
# modules under 2500 lines compile whole anyway), only inside a function holding at least
# OUTLINE_DOMINANT_SHARE of them (one that would keep the module from splitting), and only
# bodies of at least OUTLINE_MIN_SHARE of them (or OUTLINE_MIN_NODES, the larger). Smaller
# pipelines, and modules that split without it, compile exactly as before.
OUTLINE_MIN_PIPELINE_NODES = 700
OUTLINE_DOMINANT_SHARE = 0.5
OUTLINE_MIN_SHARE = 0.08
OUTLINE_MIN_NODES = 50
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class GeneratedModule:
    """The IR text of one pipeline and the symbols a caller needs."""

    ir: str
    name: str
    arguments: list[Argument]
    profile_names: list[str]
    context_bytes: int
    extra_exports: list[str] = field(default_factory=list)  # symbols a backend's host side adds

    @property
    def entry_symbol(self) -> str:
        return self.name

    @property
    def argv_symbol(self) -> str:
        return f"{self.name}_argv"

    @property
    def argv_context_symbol(self) -> str:
        return f"{self.name}_argv_context"

    @property
    def error_message_symbol(self) -> str:
        return f"{self.name}_error_message"

    @property
    def release_memory_symbol(self) -> str:
        return f"{self.name}_release_memory"


def generate_module(
    lowered: LoweredPipeline,
    *,
    triple: str,
    datalayout: str,
    profile: bool = False,
    embed_runtime: bool = False,
    checked: bool = False,
    features: str = "",
) -> GeneratedModule:
    """LLVM IR for lowered, for a CPU with LLVM's feature string `features` (what it may use
    beyond what LLVM chooses itself, such as byte-permute table lookups). With embed_runtime
    (exported libraries) the thread pool is compiled into the module with internal linkage
    and NAME's context (its last error message) is thread-local; otherwise the pool is
    declared (the JIT links the process-wide runtime) and callers pass a context of their
    own through NAME_argv_context. With checked, every load and store tests its index
    against its buffer and fails the call (ASSERTION_FAILED, naming the buffer, the index
    and the Func being computed) instead."""
    if not _C_IDENTIFIER.match(lowered.name):
        raise CompileError(f"pipeline name `{lowered.name}` is not a C identifier")
    seen: set[str] = set()
    for a in lowered.arguments:
        if a.kind not in ("buffer", "scalar"):
            raise CompileError(f"argument `{a.name}` has unknown kind `{a.kind}`")
        if a.name in seen:
            raise CompileError(f"pipeline `{lowered.name}` has two arguments named `{a.name}`")
        seen.add(a.name)
    module = ModuleBuilder(lowered.name, triple, datalayout)
    gen = _CodeGen(
        lowered,
        module,
        profile=profile,
        thread_local_context=embed_runtime,
        checked=checked,
        outline_produces=True,
        features=features,
    )
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        gen.generate()
    finally:
        sys.setrecursionlimit(old_limit)
    if embed_runtime:
        thread_pool.add_thread_pool(module, arch=triple.split("-", 1)[0], export=False, with_destructor=True)
        add_error_reporting(module, export=False)
    else:
        error_report.declare_error_reporting(module)
        if gen.uses_parallel_runtime:
            module.declare(thread_pool.PARALLEL_FOR, thread_pool.PARALLEL_FOR_SIGNATURE)
    return GeneratedModule(
        module.render(),
        lowered.name,
        list(lowered.arguments),
        gen.profile_names if profile else [],
        gen.context_bytes,
    )


def add_error_reporting(module: ModuleBuilder, *, export: bool) -> None:
    """The shared failure reporter and type names (engine/runtime/error_report.py) for this
    code generator's context layout and type codes."""
    error_report.add_error_reporting(
        module,
        export=export,
        message_offset=CONTEXT_MESSAGE_OFFSET,
        message_bytes=ERROR_MESSAGE_BYTES,
        type_names=[
            (TYPE_CODES[t.code], t.bits, str(t))
            for t in (
                Bool(),
                Int(8),
                Int(16),
                Int(32),
                Int(64),
                UInt(8),
                UInt(16),
                UInt(32),
                UInt(64),
                Float(32),
                Float(64),
            )
        ],
    )


# ------------------------------------------------------------------------------ analysis


def _walk_names(stmt: Stmt) -> list[str]:
    """Variable and buffer names used anywhere in stmt, in first-use order (for closures);
    then the output buffers that storage in stmt may alias."""
    seen: dict[str, None] = {}
    aliased: list[str] = []
    visited: set[int] = set()
    stack: list[object] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Expr):
            if id(node) in visited:
                continue
            visited.add(id(node))
            if isinstance(node, E.Variable):
                seen.setdefault(node.name, None)
            elif isinstance(node, Load):
                seen.setdefault(node.buffer, None)
            elif isinstance(node, E.Call) and node.name.startswith(BUFFER_ADDRESS_PREFIX):
                # a memoized Func's key hashes an input it reads through other Funcs only
                seen.setdefault(node.name[len(BUFFER_ADDRESS_PREFIX) :], None)
            stack.extend(reversed(node.children()))
        elif isinstance(node, Stmt):
            if isinstance(node, Store):
                seen.setdefault(node.buffer, None)
            elif isinstance(node, Allocate) and node.output_alias is not None:
                aliased.append(node.output_alias[0])
            stack.extend(reversed([c for c in node.children() if c is not None]))
    for name in aliased:
        seen.setdefault(name, None)
    return list(seen)


def _node_count(stmt: Stmt, limit: int, *, in_function: bool) -> int:
    """Distinct statement and expression nodes of stmt, counted up to limit (the walk stops
    there: callers only ask whether a body reaches a size). With in_function, the bodies of
    parallel loops are left out: they become functions of their own."""
    visited: set[int] = set()
    stack: list[object] = [stmt]
    count = 0
    while stack and count < limit:
        node = stack.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        count += 1
        if in_function and isinstance(node, For) and node.for_type == ForType.PARALLEL:
            stack.extend((node.min, node.extent))
        else:
            stack.extend(node.children())  # type: ignore[attr-defined]
    return count


def _printf_template(message: str, args: list[Type | None]) -> tuple[str, list[Type | None]]:
    """A printf format for a `{}` template: holes become %lld/%llu/%g (%s for a None type:
    a string pointer), `%` is escaped."""
    pieces = message.replace("%", "%%").split("{}")
    out = [pieces[0]]
    used: list[Type | None] = []
    for i, piece in enumerate(pieces[1:]):
        if i < len(args):
            t = args[i]
            if t is None:
                out.append("%s")
            else:
                out.append("%g" if t.is_float() else ("%llu" if t.is_uint() and t.bits == 64 else "%lld"))
            used.append(t)
        else:
            out.append("{}")
        out.append(piece)
    return "".join(out), used


# ------------------------------------------------------------------------------ code generation


def _buffer_fields(ref: BufferRef) -> list[Value]:
    """What a parallel loop's closure carries for a buffer: its pointer, and in checked
    code its valid index range."""
    if ref.lo is None or ref.hi is None:
        return [ref.pointer]
    return [ref.pointer, ref.lo, ref.hi]


@dataclass
class _HeapEntry:
    """Heap storage live at some point: freed on scope exit and on every error path.

    Storage from a scratch slot (claimed is an i1 that is true when this call owns the
    slot) is kept for the next call instead: releasing it just clears the slot's flag.
    """

    pointer: Value
    claimed: Value | None = None
    in_use_flag: Value | None = None


@dataclass
class _Function:
    """Code generation state of one LLVM function (the entry or an outlined loop body)."""

    builder: FunctionBuilder
    context: Value
    is_entry: bool = False
    loop_depth: int = 0
    scope: dict[str, Value] = field(default_factory=dict)
    # vector lets whose value is ramp(b, 1, n) / 2 + offset: name -> (b, offset); see _halved_ramp
    halved_ramps: dict[str, tuple[Value, Value | None]] = field(default_factory=dict)
    # scalar int32 lets of index arithmetic: name -> their i64 form (llvm_address)
    wide_lets: dict[str, WideValue] = field(default_factory=dict)
    buffers: dict[str, BufferRef] = field(default_factory=dict)
    live_heap: list[_HeapEntry] = field(default_factory=list)
    timespec: Value | None = None
    unwind: _Unwind | None = None
    outline_produces: bool = False  # large produce bodies in it become functions of their own
    # buffers bound to storage of their own (an Allocate that may not be the output buffer):
    # no other pointer reaches that memory
    distinct_storage: set[str] = field(default_factory=set)


@dataclass
class _Closure:
    """The caller's state an outlined body reads, stored field by field into one stack
    struct whose address the body gets: scalar values (the call's context first), buffer
    fields (_buffer_fields), and with let forms the i64 forms (wide_lets) and halved ramps
    of the captured lets, so the body's addresses come out as they would inline. The
    pointers of distinct storage (`arguments`) are passed as noalias arguments instead:
    loaded from memory, LLVM could no longer tell that stores into one storage leave the
    loads of another alone (camera pipe's outlined demosaic took a fifth longer)."""

    struct_ty: str
    pointer: Value
    variables: list[tuple[str, Value]]
    buffers: list[tuple[str, BufferRef, list[Value]]]  # fields in the struct
    arguments: list[str] = field(default_factory=list)  # buffers whose pointer is an argument
    wide: list[tuple[str, WideValue]] = field(default_factory=list)
    halved: list[tuple[str, tuple[Value, Value | None]]] = field(default_factory=list)


@dataclass
class _Unwind:
    """A function's shared failure exits: the error code slot, and the release block of
    each heap allocation (by the entry's identity)."""

    code: Value
    labels: dict[int, tuple[_HeapEntry, str]]
    pending: list[int] = field(default_factory=list)  # live_heap indices whose blocks are due


class _CodeGen(ExprCodeGen):
    def __init__(
        self,
        lowered: LoweredPipeline,
        module: ModuleBuilder,
        *,
        profile: bool,
        thread_local_context: bool,
        checked: bool = False,
        outline_produces: bool = False,
        features: str = "",
    ) -> None:
        self.lowered = lowered
        self.checked = checked
        self.table_lookups = supports_table_lookup(features)
        self.constant_sizes: dict[str, int] = {}  # allocations of a constant element count in scope
        # Backends whose statements hold per-scope values of their own (OpenCL's device
        # buffers) keep every produce body inline: only this backend's state is captured.
        self.outline_produces = outline_produces
        self._pipeline_nodes = 0
        self.producing: list[str] = []
        self.module = module
        self.strict_float = lowered.strict_float
        self.profile = profile
        self.thread_local_context = thread_local_context
        self.profile_names: list[str] = list(lowered.profile_names)
        self._profile_stack: list[int] = []  # indices of the Funcs whose production encloses
        self.uses_parallel_runtime = False
        self.scratch_slots: list[str] = []
        self._memo: dict[tuple, Value] | None = None
        self.fn: _Function
        self.prefix = lowered.name
        self.global_context = f"@{self.prefix}.context"
        self._init_expressions()
        self._stmt_dispatch: dict[type, Callable[[Stmt], None]] = {
            LetStmt: self._let_stmt,
            AssertStmt: self._assert_stmt,
            For: self._for,
            Block: self._block,
            ProducerConsumer: self._producer_consumer,
            Allocate: self._allocate,
            Store: self._store,
            IfThenElse: self._if_then_else,
            Evaluate: self._evaluate,
        }

    # ====================================================================== module level
    def generate(self) -> None:
        """Every function of the module. The body runs in NAME.run(context, args...): the
        context (CONTEXT_* layout) holds the claim flag and message of a failure and the
        profile counters of one call, so concurrent calls never mix them up."""
        m = self.module
        params = self._entry_parameters()
        self._run_function(params)
        self._reset_context_function()
        context_type = f"[{self.context_bytes} x i8]"
        storage = "internal thread_local global" if self.thread_local_context else "internal global"
        m.add_global(f"{self.global_context} = {storage} {context_type} zeroinitializer, align 16")
        entry = FunctionBuilder(self.prefix, "i32", params)
        entry.call("void", f"@{self.prefix}.reset_context", [Value("ptr", self.global_context)])
        entry.ret(entry.call("i32", f"@{self.prefix}.run", [Value("ptr", self.global_context), *entry.params], "rc"))
        m.add_function(entry.render())
        self._argv_function(f"{self.prefix}_argv", with_context=False)
        self._argv_function(f"{self.prefix}_argv_context", with_context=True)
        error_fn = FunctionBuilder(f"{self.prefix}_error_message", "ptr", [])
        error_fn.ret(self._byte_offset_in(error_fn, Value("ptr", self.global_context), CONTEXT_MESSAGE_OFFSET))
        m.add_function(error_fn.render())
        self._release_memory_function()

    @property
    def context_bytes(self) -> int:
        return context_bytes(len(self.profile_names) if self.profile else 0)

    def _entry_parameters(self) -> list[tuple[str, str]]:
        params = []
        for a in self.lowered.arguments:
            if a.is_buffer():
                params.append(("ptr", a.name))
            else:
                params.append((memory_scalar_type(a.type), a.name))
        return params

    def _run_function(self, params: list[tuple[str, str]]) -> None:
        builder = FunctionBuilder(f"{self.prefix}.run", "i32", [("ptr", "context"), *params], linkage="internal")
        if self.outline_produces:
            self._pipeline_nodes = _node_count(self.lowered.body, sys.maxsize, in_function=False)
        self.fn = _Function(builder, is_entry=True, context=builder.params[0])
        self.fn.outline_produces = self._dominates(self.lowered.body)
        b = self.b
        for a, p in zip(self.lowered.arguments, b.params[1:], strict=True):
            if a.is_buffer():
                self._bind_buffer_argument(a, p)
            elif a.type.is_bool():
                self.fn.scope[a.name] = b.icmp("ne", p, int_const(8, 0), a.name)
            else:
                self.fn.scope[a.name] = p
        self._stmt(self.lowered.body)
        b.ret(int_const(32, 0))
        self.module.add_function(b.render())

    def _reset_context_function(self) -> None:
        """Clear a context before a call (written after the body: profiling may have added
        Funcs, which fixes the counters' size)."""
        f = FunctionBuilder(f"{self.prefix}.reset_context", "void", [("ptr", "context")], linkage="internal")
        (context,) = f.params
        memset = self.module.intrinsic("llvm.memset.p0.i64", "void", ["ptr", "i8", "i64", "i1"])
        f.call("void", memset, [context, int_const(8, 0), int_const(64, self.context_bytes), Value("i1", "false")])
        f.ret()
        self.module.add_function(f.render())

    def _release_memory_function(self) -> None:
        """NAME_release_memory(): free the scratch storage kept between calls (slots in use
        by a running call are left alone)."""
        f = FunctionBuilder(f"{self.prefix}_release_memory", "void", [])
        free = self.module.declare("free", "void (ptr)")
        for slot in self.scratch_slots:
            flag = f.assign("ptr", f"getelementptr {{ ptr, i64, i32 }}, ptr @{slot}, i32 0, i32 2", "in_use")
            claim = f.assign("{ i32, i1 }", f"cmpxchg ptr {flag.ref}, i32 0, i32 1 acquire monotonic, align 4", "claim")
            claimed = f.assign("i1", f"extractvalue {{ i32, i1 }} {claim.ref}, 1", "claimed")
            release, next_slot = f.new_label("release"), f.new_label("next")
            f.cond_br(claimed, release, next_slot)
            f.start_block(release)
            f.call("void", free, [f.load("ptr", Value("ptr", f"@{slot}"), 8, "kept")])
            f.store(Value("ptr", "null"), Value("ptr", f"@{slot}"), 8)
            capacity = f.assign("ptr", f"getelementptr {{ ptr, i64, i32 }}, ptr @{slot}, i32 0, i32 1", "capacity")
            f.store(int_const(64, 0), capacity, 8)
            f.emit(f"store atomic i32 0, ptr {flag.ref} release, align 4")
            f.br(next_slot)
            f.start_block(next_slot)
        f.ret()
        self.module.add_function(f.render())

    def _bind_buffer_argument(self, a: Argument, desc: Value) -> None:
        b = self.b
        name = a.name
        is_null = b.icmp("eq", desc, Value("ptr", "null"), "isnull")
        self._check(
            b.binop("xor", is_null, TRUE, "nonnull"),
            ErrorCode.BAD_ARGUMENT,
            f"buffer argument `{name}` is a NULL pointer",
            [],
        )
        code = b.load("i32", self._byte_offset(desc, BUFFER_TYPE_CODE_OFFSET), 4, f"{name}.type_code")
        bits = b.load("i32", self._byte_offset(desc, BUFFER_TYPE_BITS_OFFSET), 4, f"{name}.type_bits")
        dims = b.load("i32", self._byte_offset(desc, BUFFER_DIMENSIONS_OFFSET), 4, f"{name}.dimensions")
        want_code, want_bits = TYPE_CODES[a.type.code], a.type.bits
        type_ok = b.binop(
            "and",
            b.icmp("eq", code, int_const(32, want_code)),
            b.icmp("eq", bits, int_const(32, want_bits)),
            "type_ok",
        )
        self._check(
            type_ok,
            ErrorCode.BAD_ARGUMENT,
            f"buffer `{name}` holds {{}} elements (type_code {{}}, type_bits {{}}), but the pipeline expects "
            f"{a.type} (type_code {want_code}, type_bits {want_bits})",
            [(self._type_name(code, bits), None), (code, Int(32)), (bits, Int(32))],
        )
        self._check(
            b.icmp("eq", dims, int_const(32, a.dimensions)),
            ErrorCode.BAD_ARGUMENT,
            f"buffer `{name}` has {{}} dimensions, but the pipeline expects {a.dimensions}",
            [(dims, Int(32))],
        )
        host = b.load("ptr", self._byte_offset(desc, BUFFER_HOST_OFFSET), 8, f"{name}.host")
        self._check(
            b.icmp("ne", host, Value("ptr", "null")),
            ErrorCode.BAD_ARGUMENT,
            f"buffer `{name}` has a NULL host pointer",
            [],
        )
        self.fn.buffers[name] = BufferRef(host, a.type)
        if a.dimensions == 0:
            if self.checked:
                self.fn.buffers[name] = BufferRef(host, a.type, int_const(64, 0), int_const(64, 1))
            return
        dim = b.load("ptr", self._byte_offset(desc, BUFFER_DIM_OFFSET), 8, f"{name}.dim")
        self._check(
            b.icmp("ne", dim, Value("ptr", "null")),
            ErrorCode.BAD_ARGUMENT,
            f"buffer `{name}` has a NULL dim array",
            [],
        )
        for i in range(a.dimensions):
            for j, field_name in enumerate(("min", "extent", "stride")):
                var = f"{name}.{field_name}.{i}"
                p = self._byte_offset(dim, DIMENSION_SIZE * i + 4 * j)
                self.fn.scope[var] = b.load("i32", p, 4, var)
        if self.checked:
            self.fn.buffers[name] = self._argument_span(name, host, a)

    def _argument_span(self, name: str, host: Value, a: Argument) -> BufferRef:
        """The flat indices an argument buffer holds, relative to its host pointer (which
        points at its min corner): the sums of min(0, (extent-1)*stride) and max(0, ...)."""
        b = self.b
        lo, hi, empty = int_const(64, 0), int_const(64, 1), Value("i1", "false")
        for i in range(a.dimensions):
            extent = b.convert("sext", self.fn.scope[f"{name}.extent.{i}"], "i64")
            stride = b.convert("sext", self.fn.scope[f"{name}.stride.{i}"], "i64")
            empty = b.binop("or", empty, b.icmp("sle", extent, int_const(64, 0)), "empty")
            reach = b.binop("mul", b.binop("sub", extent, int_const(64, 1)), stride, "reach")
            lo = b.binop("add", lo, self._int_min(reach, int_const(64, 0)), "span_lo")
            hi = b.binop("add", hi, self._int_max(reach, int_const(64, 0)), "span_hi")
        return BufferRef(host, a.type, lo, b.select(empty, lo, hi, "span_end"))

    def _type_name(self, code: Value, bits: Value) -> Value:
        """A pointer to the name of the element type (code, bits) of a descriptor."""
        return self.b.call("ptr", f"@{error_report.TYPE_NAME}", [code, bits], "type_name")

    def _byte_offset(self, base: Value, offset: int) -> Value:
        if offset == 0:
            return base
        return self.b.gep("i8", base, int_const(64, offset), "field")

    def _argv_function(self, name: str, *, with_context: bool) -> None:
        """NAME_argv(args): args[i] points to the i-th argument. NAME_argv_context also takes
        the caller's context (the JIT passes one per call); exported libraries keep it internal."""
        params = [("ptr", "args")] + ([("ptr", "context")] if with_context else [])
        linkage = "internal" if with_context and self.thread_local_context else ""
        f = FunctionBuilder(name, "i32", params, linkage=linkage)
        args = f.params[0]
        values = []
        for i, a in enumerate(self.lowered.arguments):
            slot = f.gep("ptr", args, int_const(64, i), f"{a.name}.slot")
            pointer = f.load("ptr", slot, 8, f"{a.name}.ptr")
            if a.is_buffer():
                values.append(pointer)
            else:
                ty = memory_scalar_type(a.type)
                values.append(f.load(ty, pointer, element_bytes(a.type), a.name))
        if with_context:
            context = f.params[1]
            f.call("void", f"@{self.prefix}.reset_context", [context])
            result = f.call("i32", f"@{self.prefix}.run", [context, *values], "result")
        else:
            result = f.call("i32", f"@{self.prefix}", values, "result")
        f.ret(result)
        self.module.add_function(f.render())

    @staticmethod
    def _byte_offset_in(f: FunctionBuilder, base: Value, offset: int) -> Value:
        return base if offset == 0 else f.gep("i8", base, int_const(64, offset), "field")

    # ====================================================================== errors
    def _report_bad_access(self, ok: Value, message: str, args: list[tuple[Value, Type | None]]) -> None:
        self._check(ok, ErrorCode.ASSERTION_FAILED, message, args)

    def _check(self, ok: Value, code: ErrorCode, message: str, args: list[tuple[Value, Type | None]]) -> None:
        """Continue if ok, else report message (its `{}` holes filled by args) and fail."""
        b = self.b
        fail_label, ok_label = b.new_label("fail"), b.new_label("ok")
        b.cond_br(ok, ok_label, fail_label, likely=True)
        b.start_block(fail_label)
        self._fail(code, message, args)
        b.start_block(ok_label)

    def _fail(self, code: ErrorCode | Value, message: str | None, args: list[tuple[Value, Type | None]]) -> None:
        """Write the message if no other failure did first, free live heap storage, return."""
        b = self.b
        if message is not None:
            template, used = _printf_template(message, [t for _, t in args])
            fmt = self.module.string_constant(template)
            printf_args = []
            for (v, t), _ in zip(args, used, strict=False):
                if t is None:
                    printf_args.append(v)
                elif t.is_float():
                    printf_args.append(b.convert("fpext", v, "double") if v.ty == "float" else v)
                elif t.bits < 64:
                    printf_args.append(b.convert("zext" if t.is_uint() else "sext", v, "i64"))
                else:
                    printf_args.append(v)
            # one call to the shared reporter (it claims the context and formats the message)
            b.call(
                "void",
                f"@{error_report.REPORT_ERROR}",
                [self.fn.context, fmt, *printf_args],
                fnty=error_report.REPORT_ERROR_SIGNATURE,
            )
        result = int_const(32, int(code)) if isinstance(code, ErrorCode) else code
        if not self.fn.live_heap:
            b.ret(result)
            return
        # Every failure point with the same live storage shares one chain of release blocks
        # (one per allocation) instead of repeating the releases: error paths were most of
        # the code of pipelines with many allocations (and of LLVM's work on it).
        unwind = self.fn.unwind
        if unwind is None:
            unwind = self.fn.unwind = _Unwind(b.alloca_in_entry("i32", 4, "error_code"), {})
        b.store(result, unwind.code, 4)
        b.br(self._unwind_label(len(self.fn.live_heap) - 1))
        self._emit_pending_unwind()

    def _unwind_label(self, index: int) -> str:
        """The block that releases live_heap[index] and those below it, then returns the
        stored error code; blocks not made yet are made after the caller's branch (every
        allocation below index is live at that point, so its pointer dominates them)."""
        unwind, entries, b = self.fn.unwind, self.fn.live_heap, self.b
        hit = unwind.labels.get(id(entries[index]))
        if hit is not None:
            return hit[1]
        low = index
        while low > 0 and id(entries[low - 1]) not in unwind.labels:
            low -= 1
        for i in range(low, index + 1):  # the entry is kept so that its id is never reused
            unwind.labels[id(entries[i])] = (entries[i], b.new_label("unwind"))
        unwind.pending = list(range(index, low - 1, -1))
        return unwind.labels[id(entries[index])][1]

    def _emit_pending_unwind(self) -> None:
        unwind, entries, b = self.fn.unwind, self.fn.live_heap, self.b
        for i in unwind.pending:
            b.start_block(unwind.labels[id(entries[i])][1])
            self._release_heap(entries[i])
            if i == 0:
                b.ret(b.load("i32", unwind.code, 4, "error_code"))
            else:
                b.br(unwind.labels[id(entries[i - 1])][1])
        unwind.pending = []

    def _release_heap(self, entry: _HeapEntry) -> None:
        b = self.b
        free = self.module.declare("free", "void (ptr)")
        if entry.claimed is None or entry.in_use_flag is None:
            b.call("void", free, [entry.pointer])
            return
        keep, drop, done = b.new_label("keep_scratch"), b.new_label("free_storage"), b.new_label("released")
        b.cond_br(entry.claimed, keep, drop)
        b.start_block(keep)
        b.emit(f"store atomic i32 0, ptr {entry.in_use_flag.ref} release, align 4")
        b.br(done)
        b.start_block(drop)
        b.call("void", free, [entry.pointer])
        b.br(done)
        b.start_block(done)

    # ====================================================================== statements
    def _stmt(self, s: Stmt) -> None:
        handler = self._stmt_dispatch.get(type(s))
        if handler is None:
            raise CompileError(f"the LLVM backend cannot compile a {type(s).__name__} statement (lowering left it)")
        handler(s)

    @contextmanager
    def _bound(
        self,
        name: str,
        value: Value,
        halved: tuple[Value, Value | None] | None = None,
        wide: WideValue | None = None,
    ) -> Iterator[None]:
        scope, halved_ramps, wide_lets = self.fn.scope, self.fn.halved_ramps, self.fn.wide_lets
        had, old = name in scope, scope.get(name)
        old_halved = halved_ramps.pop(name, None)
        old_wide = wide_lets.pop(name, None)
        scope[name] = value
        if halved is not None:
            halved_ramps[name] = halved
        if wide is not None:
            wide_lets[name] = wide
        try:
            yield
        finally:
            wide_lets.pop(name, None)
            if old_wide is not None:
                wide_lets[name] = old_wide
            if had:
                scope[name] = old  # type: ignore[assignment]
            else:
                del scope[name]
            halved_ramps.pop(name, None)
            if old_halved is not None:
                halved_ramps[name] = old_halved

    @contextmanager
    def _bound_buffer(self, name: str, ref: BufferRef, *, distinct: bool = False) -> Iterator[None]:
        """name bound to ref in the body; distinct: ref is storage no other pointer reaches."""
        buffers, owned = self.fn.buffers, self.fn.distinct_storage
        old, was_distinct = buffers.get(name), name in owned
        buffers[name] = ref
        if distinct:
            owned.add(name)
        else:
            owned.discard(name)
        try:
            yield
        finally:
            if old is not None:
                buffers[name] = old
            else:
                del buffers[name]
            if was_distinct:
                owned.add(name)
            else:
                owned.discard(name)

    def _let_stmt(self, s: LetStmt) -> None:
        value = self._expr(s.value, hint=s.name)
        vector = s.value.type().is_vector()
        halved, wide = (self._halved_ramp(s.value), None) if vector else (None, self._wide_let(s.value))
        with self._bound(s.name, value, halved, wide):
            self._stmt(s.body)

    def _block(self, s: Block) -> None:
        for c in s.stmts:
            self._stmt(c)

    def _evaluate(self, s: Evaluate) -> None:
        if not isinstance(s.value, E.Const):
            self._expr(s.value)

    def _assert_stmt(self, s: AssertStmt) -> None:
        cond_const = constant_int(s.condition)
        if cond_const is not None and cond_const != 0:
            return
        b = self.b
        # The message's values are mostly subtrees of the condition (a storage-size check
        # reports the size and extents it compared): one expression memo for both, so the
        # failure block reuses what the test computed (it is that block's only predecessor)
        # instead of computing it again; the recomputed 64-bit bounds of the storage checks
        # were a fifth of local Laplacian's IR.
        self._memo = {}
        try:
            cond = self._expr(s.condition, hint="assert")
            if cond.ty.startswith("<"):
                lanes = lanes_of(cond.ty)
                reduce = self.module.intrinsic(f"llvm.vector.reduce.and.v{lanes}i1", "i1", [cond.ty])
                cond = b.call("i1", reduce, [cond], "all")
            fail_label, ok_label = b.new_label("assert_failed"), b.new_label("assert_ok")
            b.cond_br(cond, ok_label, fail_label, likely=True)
            b.start_block(fail_label)
            args = []
            for a in s.args:
                v = self._expr(a)
                if lanes_of(v.ty) > 1:  # a message reports one value: the first lane
                    v = b.assign(v.ty.split(" x ")[1].rstrip(">"), f"extractelement {v}, i32 0", "lane0")
                args.append((v, a.type().element_of()))
        finally:
            self._memo = None
        self._fail(ErrorCode.ASSERTION_FAILED, s.message, args)
        b.start_block(ok_label)

    def _if_then_else(self, s: IfThenElse) -> None:
        c = constant_int(s.condition)
        if c is not None:
            taken = s.then_case if c else s.else_case
            if taken is not None:
                self._stmt(taken)
            return
        b = self.b
        cond = self._expr(s.condition, hint="if")
        then_label, end_label = b.new_label("then"), b.new_label("endif")
        else_label = b.new_label("else") if s.else_case is not None else end_label
        b.cond_br(cond, then_label, else_label)
        b.start_block(then_label)
        self._stmt(s.then_case)
        b.br(end_label)
        if s.else_case is not None:
            b.start_block(else_label)
            self._stmt(s.else_case)
            b.br(end_label)
        b.start_block(end_label)

    def _producer_consumer(self, s: ProducerConsumer) -> None:
        if s.is_producer:
            self.producing.append(s.name)
        try:
            self._produce_or_consume(s)
        finally:
            if s.is_producer:
                self.producing.pop()

    def _produce_or_consume(self, s: ProducerConsumer) -> None:
        if not (self.profile and s.is_producer):
            self._produce_body(s)
            return
        if s.name not in self.profile_names:
            self.profile_names.append(s.name)
        index = self.profile_names.index(s.name)
        start = self._now_ns()
        self._profile_stack.append(index)
        try:
            self._produce_body(s)
        finally:
            self._profile_stack.pop()
        elapsed = self.b.binop("sub", self._now_ns(), start, "elapsed")
        self._profile_count("add", index, elapsed)
        if self._profile_stack:  # exclusive times, as Halide's profiler: not in the enclosing Func
            self._profile_count("sub", self._profile_stack[-1], elapsed)

    def _profile_count(self, op: str, index: int, nanoseconds: Value) -> None:
        counter = self._byte_offset(self.fn.context, CONTEXT_PROFILE_OFFSET + 8 * index)
        self.b.emit(f"atomicrmw {op} ptr {counter.ref}, {nanoseconds} monotonic, align 8")

    def _now_ns(self) -> Value:
        b = self.b
        if self.fn.timespec is None:
            self.fn.timespec = b.alloca_in_entry("{ i64, i64 }", 8, "timespec")
        clock = self.module.declare("clock_gettime", "i32 (i32, ptr)")
        b.call("i32", clock, [int_const(32, 1), self.fn.timespec], "clk")  # CLOCK_MONOTONIC
        sec = b.load("i64", self.fn.timespec, 8, "sec")
        nsec = b.load("i64", b.gep("i64", self.fn.timespec, int_const(64, 1), "nsec.p"), 8, "nsec")
        return b.binop("add", b.binop("mul", sec, int_const(64, 1_000_000_000)), nsec, "now")

    # ------------------------------------------------------------------ outlined produce bodies
    def _dominates(self, body: Stmt) -> bool:
        """Whether body, a function's code, is so large a share of a large pipeline that the
        module could not split with it whole: then its large produce bodies are outlined."""
        total = self._pipeline_nodes
        if not self.outline_produces or total < OUTLINE_MIN_PIPELINE_NODES:
            return False
        share = math.ceil(OUTLINE_DOMINANT_SHARE * total)
        return _node_count(body, share, in_function=True) >= share

    def _produce_body(self, s: ProducerConsumer) -> None:
        if s.is_producer and self.fn.outline_produces:
            least = max(OUTLINE_MIN_NODES, math.ceil(OUTLINE_MIN_SHARE * self._pipeline_nodes))
            if _node_count(s.body, least, in_function=True) >= least:
                self._outlined_produce(s)
                return
        self._stmt(s.body)

    def _outlined_produce(self, s: ProducerConsumer) -> None:
        """s's body as a noinline function called once here through a closure, like a
        parallel loop's body: a function the module splitter may put in the other part (one
        call per production crosses parts, never one per pixel). Its failures return their
        code here, which releases this function's storage and returns it on."""
        b = self.b
        closure = self._pack_closure(s.body, f"closure.{s.name}", exclude=None, let_forms=True)
        outlined = self.module.unique_symbol(f"{self.prefix}.produce.{s.name}")
        outer = self.fn
        inner = FunctionBuilder(
            outlined,
            "i32",
            [("ptr", "closure"), *(("ptr noalias", name) for name in closure.arguments)],
            linkage="internal",
            attributes="noinline nounwind",
        )
        # It runs exactly where the body would: once per call when the caller is the entry
        # outside loops, so its allocations may keep their storage between calls as there.
        self.fn = _Function(inner, context=Value("ptr", "null"), is_entry=outer.is_entry, loop_depth=outer.loop_depth)
        try:
            self._unpack_closure(closure, inner.params[0], [Value("ptr", p.ref) for p in inner.params[1:]])
            self.fn.outline_produces = self._dominates(s.body)
            self._stmt(s.body)
            inner.ret(int_const(32, 0))
            self.module.add_function(inner.render())
        finally:
            self.fn = outer
        passed = [outer.buffers[name].pointer for name in closure.arguments]
        rc = b.call("i32", f"@{outlined}", [closure.pointer, *passed], "produce_rc")
        fail_label, ok_label = b.new_label("produce_failed"), b.new_label("produce_ok")
        b.cond_br(b.icmp("eq", rc, int_const(32, 0)), ok_label, fail_label, likely=True)
        b.start_block(fail_label)
        self._fail(rc, None, [])
        b.start_block(ok_label)

    def _pack_closure(self, body: Stmt, hint: str, *, exclude: str | None, let_forms: bool) -> _Closure:
        """The closure of body (names it uses that are in scope here, exclude aside), stored."""
        b = self.b
        variables: list[tuple[str, Value]] = []
        captured_buffers: list[tuple[str, BufferRef]] = []
        for name in _walk_names(body):
            if name == exclude:
                continue
            if name in self.fn.scope:
                variables.append((name, self.fn.scope[name]))
            if name in self.fn.buffers:
                captured_buffers.append((name, self.fn.buffers[name]))
        variables.insert(0, (_CONTEXT, self.fn.context))
        arguments = [name for name, _ in captured_buffers if let_forms and name in self.fn.distinct_storage]
        buffers = [
            (name, ref, _buffer_fields(ref)[1:] if name in arguments else _buffer_fields(ref))
            for name, ref in captured_buffers
        ]
        values = [v for _, v in variables] + [v for _, _, fields in buffers for v in fields]
        wide: list[tuple[str, WideValue]] = []
        halved: list[tuple[str, tuple[Value, Value | None]]] = []
        if let_forms:
            for name, _ in variables[1:]:
                if name in self.fn.wide_lets:
                    wide.append((name, self.fn.wide_lets[name]))
                    values.append(self.fn.wide_lets[name][0])
                if name in self.fn.halved_ramps:
                    base, offset = self.fn.halved_ramps[name]
                    halved.append((name, (base, offset)))
                    values.extend([base] if offset is None else [base, offset])
        field_types = [v.ty for v in values]
        struct_ty = "{ " + ", ".join(field_types) + " }" if field_types else "{}"
        pointer = b.alloca_in_entry(struct_ty, 16, hint)
        for k, v in enumerate(values):
            p = b.assign("ptr", f"getelementptr {struct_ty}, ptr {pointer.ref}, i32 0, i32 {k}", "capture")
            b.store(v, p, 1 if v.ty == "i1" else 8)
        return _Closure(struct_ty, pointer, variables, buffers, arguments, wide, halved)

    def _unpack_closure(self, closure: _Closure, pointer: Value, arguments: Sequence[Value] = ()) -> None:
        """Bind what closure holds in the function being generated (self.fn), read through
        pointer, the closure's address there; arguments are the pointers of
        closure.arguments."""
        inner = self.b
        k = 0
        passed = dict(zip(closure.arguments, arguments, strict=True))
        self.fn.distinct_storage.update(passed)

        def load(ty: str, name: str, align: int) -> Value:
            nonlocal k
            p = inner.assign("ptr", f"getelementptr {closure.struct_ty}, ptr {pointer.ref}, i32 0, i32 {k}", "field")
            k += 1
            return inner.load(ty, p, align, name)

        for name, v in closure.variables:
            loaded = load(v.ty, name, 1 if v.ty == "i1" else 8)
            if name == _CONTEXT:
                self.fn.context = loaded
            else:
                self.fn.scope[name] = loaded
        for name, ref, fields in closure.buffers:
            loaded_fields = [load(v.ty, name, 8) for v in fields]
            if name in passed:
                loaded_fields.insert(0, passed[name])
            self.fn.buffers[name] = BufferRef(loaded_fields[0], ref.type, *loaded_fields[1:])
        for name, (value, bound) in closure.wide:
            self.fn.wide_lets[name] = (load(value.ty, f"{name}.wide", 8), bound)
        for name, (base, offset) in closure.halved:
            loaded_base = load(base.ty, f"{name}.base", 8)
            self.fn.halved_ramps[name] = (loaded_base, None if offset is None else load(offset.ty, f"{name}.offset", 8))

    # ------------------------------------------------------------------ loops
    def _for(self, s: For) -> None:
        if s.for_type == ForType.PARALLEL:
            self._parallel_for(s)
        elif s.for_type == ForType.SERIAL:
            self._serial_for(s)
        else:
            raise CompileError(
                f"loop `{s.name}` is {s.for_type.value}: lowering must turn vectorized and unrolled loops "
                "into vector code / copies before the LLVM backend (GPU loops need a GPU backend)"
            )

    def _serial_for(self, s: For) -> None:
        b = self.b
        lo, extent = self._loop_bounds(s)
        ty = lo.ty
        end = b.binop("add", lo, extent, f"{s.name}.end")
        body_label, latch_label, after_label = (
            b.new_label(f"for.{s.name}"),
            b.new_label(f"next.{s.name}"),
            b.new_label(f"end.{s.name}"),
        )
        pre_label = b.current_label
        b.cond_br(b.icmp("slt", lo, end, "enter"), body_label, after_label)
        b.start_block(body_label)
        counter = b.fresh_value(ty, s.name)
        following = b.fresh_value(ty, f"{s.name}.next")
        b.emit(f"{counter.ref} = phi {ty} [ {lo.ref}, %{pre_label} ], [ {following.ref}, %{latch_label} ]")
        self.fn.loop_depth += 1
        try:
            with self._bound(s.name, counter):
                self._stmt(s.body)
        finally:
            self.fn.loop_depth -= 1
        b.br(latch_label)
        b.start_block(latch_label)
        b.emit(f"{following.ref} = add {ty} {counter.ref}, 1")
        b.cond_br(b.icmp("slt", following, end, "again"), body_label, after_label)
        b.start_block(after_label)

    def _loop_bounds(self, s: For) -> tuple[Value, Value]:
        lo = self._expr(s.min, hint=f"{s.name}.min")
        extent = self._expr(s.extent, hint=f"{s.name}.extent")
        if lo.ty != extent.ty or lo.ty not in ("i8", "i16", "i32", "i64"):
            raise CompileError(
                f"loop `{s.name}` needs scalar integer bounds of one type, got min {s.min.type()} "
                f"and extent {s.extent.type()}"
            )
        return lo, extent

    def _parallel_for(self, s: For) -> None:
        self.uses_parallel_runtime = True
        b = self.b
        lo, extent = self._loop_bounds(s)
        if lo.ty != "i32":
            raise CompileError(f"parallel loop `{s.name}` must have Int(32) bounds, got {s.min.type()}")
        closure = self._pack_closure(s.body, f"closure.{s.name}", exclude=s.name, let_forms=False)

        outlined = self.module.unique_symbol(f"{self.prefix}.par_for.{s.name}")
        outer = self.fn
        inner = FunctionBuilder(outlined, "i32", [("ptr", "closure"), ("i32", s.name)], linkage="internal")
        self.fn = _Function(inner, context=Value("ptr", "null"))
        try:
            cl, index = inner.params
            self._unpack_closure(closure, cl)
            self.fn.outline_produces = self._dominates(s.body)
            self.fn.scope[s.name] = index
            # Profiling counts thread time: each task's time goes to the Func whose production
            # encloses the loop, and the launching thread's wait is taken off it below.
            enclosing = self._profile_stack[-1] if self.profile and self._profile_stack else None
            task_start = self._now_ns() if enclosing is not None else None
            self._stmt(s.body)
            if enclosing is not None:
                self._profile_count("add", enclosing, inner.binop("sub", self._now_ns(), task_start, "task"))
            inner.ret(int_const(32, 0))
            self.module.add_function(inner.render())
        finally:
            self.fn = outer
        launch = self._now_ns() if enclosing is not None else None
        rc = b.call(
            "i32", f"@{thread_pool.PARALLEL_FOR}", [Value("ptr", f"@{outlined}"), closure.pointer, lo, extent], "par_rc"
        )
        if enclosing is not None:
            self._profile_count("sub", enclosing, b.binop("sub", self._now_ns(), launch, "wait"))
        fail_label, ok_label = b.new_label("par_failed"), b.new_label("par_ok")
        b.cond_br(b.icmp("eq", rc, int_const(32, 0)), ok_label, fail_label, likely=True)
        b.start_block(fail_label)
        self._fail(rc, None, [])
        b.start_block(ok_label)

    # ------------------------------------------------------------------ storage
    def _allocate(self, s: Allocate) -> None:
        """Storage for s's body; its element count is known to the body's loads while
        constant (a lookup table in registers: llvm_table_lookup)."""
        size_const = constant_int(s.size)
        if size_const is None or s.output_alias is not None:
            self._allocate_storage(s)
            return
        outer = self.constant_sizes.get(s.name)
        self.constant_sizes[s.name] = size_const
        try:
            self._allocate_storage(s)
        finally:
            if outer is None:
                del self.constant_sizes[s.name]
            else:
                self.constant_sizes[s.name] = outer

    def _allocate_storage(self, s: Allocate) -> None:
        b = self.b
        elem = memory_scalar_type(s.type.element_of())
        size_const = constant_int(s.size)
        if s.on_stack and size_const is not None:
            count = max(size_const, 1)
            slot = b.alloca_in_entry(f"[{count} x {elem}]", HEAP_ALIGNMENT, s.name)
            ref = self._scratch_ref(slot, s.type, int_const(64, size_const), s)
            with self._bound_buffer(s.name, ref, distinct=s.output_alias is None):
                self._stmt(s.body)
            return
        size = self._expr(s.size, hint=f"{s.name}.size")
        if s.output_alias is not None:  # storage that is the output buffer needs nothing of its own
            aliased = self._expr(s.output_alias[1], hint=f"{s.name}.is_output")
            size = b.assign(size.ty, f"select i1 {aliased.ref}, {size.ty} 0, {size}", f"{s.name}.size")
        if s.on_stack:
            stacksave = self.module.intrinsic("llvm.stacksave.p0", "ptr", [])
            stackrestore = self.module.intrinsic("llvm.stackrestore.p0", "void", ["ptr"])
            saved = b.call("ptr", stacksave, [], "stack")
            count = self._int_max(size, int_const(32, 1))
            slot = b.assign("ptr", f"alloca {elem}, {count}, align {HEAP_ALIGNMENT}", s.name)
            ref = self._scratch_ref(slot, s.type, b.convert("sext", size, "i64"), s)
            with self._bound_buffer(s.name, ref, distinct=s.output_alias is None):
                self._stmt(s.body)
            b.call("void", stackrestore, [saved])
            return
        count64 = self._int_max(b.convert("sext", size, "i64"), int_const(64, 0))
        nbytes = b.binop("mul", count64, int_const(64, element_bytes(s.type)), f"{s.name}.bytes")
        padded = b.binop("add", self._int_max(nbytes, int_const(64, 1)), int_const(64, HEAP_ALIGNMENT - 1))
        rounded = b.binop("and", padded, int_const(64, -HEAP_ALIGNMENT), "alloc_bytes")
        if self.fn.is_entry and self.fn.loop_depth == 0:
            entry = self._scratch_allocation(s.name, rounded)
        else:
            aligned_alloc = self.module.declare("aligned_alloc", "ptr (i64, i64)")
            entry = _HeapEntry(b.call("ptr", aligned_alloc, [int_const(64, HEAP_ALIGNMENT), rounded], s.name))
        self.fn.live_heap.append(entry)  # before the check: its failure path releases the slot
        self._check(
            b.icmp("ne", entry.pointer, Value("ptr", "null")),
            ErrorCode.OUT_OF_MEMORY,
            f"out of memory: could not allocate {{}} bytes for buffer `{s.name}`",
            [(nbytes, Int(64))],
        )
        try:
            ref = self._scratch_ref(entry.pointer, s.type, count64, s)
            with self._bound_buffer(s.name, ref, distinct=s.output_alias is None):
                self._stmt(s.body)
        finally:
            self.fn.live_heap.pop()
        self._release_heap(entry)

    def _scratch_ref(self, pointer: Value, t: Type, count: Value, s: Allocate) -> BufferRef:
        """An allocation of count elements; checked code knows its valid indices [0, count).
        Storage that may be the output buffer (s.output_alias) is that buffer when aliased."""
        ref = BufferRef(pointer, t.element_of())
        if self.checked:
            ref = BufferRef(pointer, t.element_of(), int_const(64, 0), count)
        if s.output_alias is None:
            return ref
        output = self.fn.buffers.get(s.output_alias[0])
        if output is None:
            raise CompileError(f"storage `{s.name}` may be output buffer `{s.output_alias[0]}`, which is not in scope")
        aliased = self._expr(s.output_alias[1], hint=f"{s.name}.is_output")

        def pick(mine: Value | None, theirs: Value | None) -> Value | None:
            if mine is None or theirs is None:
                return mine
            return self.b.assign(mine.ty, f"select i1 {aliased.ref}, {theirs}, {mine}", s.name)

        return BufferRef(pick(ref.pointer, output.pointer), ref.type, pick(ref.lo, output.lo), pick(ref.hi, output.hi))

    def _scratch_allocation(self, name: str, nbytes: Value) -> _HeapEntry:
        """Heap storage kept between calls (fresh pages cost a fault each, and memory freed
        for a while goes back to the hypervisor: PLATFORM-NOTES). Only for allocations that
        run once per call. A call that finds the slot busy (the same pipeline running on
        another thread) allocates and frees its own storage."""
        b, m = self.b, self.module
        slot = m.unique_symbol(f"{self.prefix}.scratch.{name}")
        m.add_global(f"@{slot} = internal global {{ ptr, i64, i32 }} zeroinitializer, align 16")
        self.scratch_slots.append(slot)
        pointer_field = Value("ptr", f"@{slot}")
        capacity_field = b.assign("ptr", f"getelementptr {{ ptr, i64, i32 }}, ptr @{slot}, i32 0, i32 1", "capacity")
        flag = b.assign("ptr", f"getelementptr {{ ptr, i64, i32 }}, ptr @{slot}, i32 0, i32 2", "in_use")
        aligned_alloc = m.declare("aligned_alloc", "ptr (i64, i64)")
        free = m.declare("free", "void (ptr)")
        claim = b.assign("{ i32, i1 }", f"cmpxchg ptr {flag.ref}, i32 0, i32 1 acquire monotonic, align 4", "claim")
        claimed = b.assign("i1", f"extractvalue {{ i32, i1 }} {claim.ref}, 1", "claimed")
        owned, check_size, grow, reuse_done, fresh, merge = (
            b.new_label(f"{name}.owned"),
            b.new_label(f"{name}.check_size"),
            b.new_label(f"{name}.grow"),
            b.new_label(f"{name}.reused"),
            b.new_label(f"{name}.fresh"),
            b.new_label(f"{name}.ready"),
        )
        b.cond_br(claimed, owned, fresh)
        b.start_block(owned)
        b.br(check_size)
        b.start_block(check_size)
        capacity = b.load("i64", capacity_field, 8, "capacity")
        kept = b.load("ptr", pointer_field, 8, "kept")
        b.cond_br(b.icmp("uge", capacity, nbytes, "enough"), reuse_done, grow)
        b.start_block(grow)
        b.call("void", free, [kept])
        grown = b.call("ptr", aligned_alloc, [int_const(64, HEAP_ALIGNMENT), nbytes], f"{name}.grown")
        got = b.icmp("ne", grown, Value("ptr", "null"), "got")
        b.store(grown, pointer_field, 8)
        b.store(b.select(got, nbytes, int_const(64, 0), "new_capacity"), capacity_field, 8)
        b.br(reuse_done)
        b.start_block(reuse_done)
        from_slot = b.assign("ptr", f"phi ptr [ {kept.ref}, %{check_size} ], [ {grown.ref}, %{grow} ]", "from_slot")
        b.br(merge)
        b.start_block(fresh)
        own = b.call("ptr", aligned_alloc, [int_const(64, HEAP_ALIGNMENT), nbytes], f"{name}.own")
        b.br(merge)
        b.start_block(merge)
        pointer = b.assign("ptr", f"phi ptr [ {from_slot.ref}, %{reuse_done} ], [ {own.ref}, %{fresh} ]", name)
        return _HeapEntry(pointer, claimed, flag)

    def _int_max(self, a: Value, b_: Value) -> Value:
        fn = self.module.intrinsic(f"llvm.smax.{a.ty}", a.ty, [a.ty, a.ty])
        return self.b.call(a.ty, fn, [a, b_], "max")

    def _int_min(self, a: Value, b_: Value) -> Value:
        fn = self.module.intrinsic(f"llvm.smin.{a.ty}", a.ty, [a.ty, a.ty])
        return self.b.call(a.ty, fn, [a, b_], "min")


# The statement code generator, for backends whose host code extends its statements
# (engine/codegen/opencl_host_llvm.py: kernel launches and device buffers).
PipelineCodeGen = _CodeGen
