"""The OpenCL backend: GPU loop nests of a lowered pipeline as OpenCL C kernels.

`generate_opencl(lowered, device_limits)` splits the lowered statement into a host part and
kernels. A kernel is the statement under an outermost GPU loop: its chain of nested
`gpu_block` loops (up to three; the innermost is dimension 0, as in Halide) becomes the
NDRange's work-groups, and each `gpu_thread` loop nest inside a block becomes the
work-items of the group. The work-group size per dimension is the largest constant thread
extent; every thread loop strides by it (`for (t = local_id; t < extent; t += size)`), so
any extent is covered exactly once. Code between thread loops runs uniformly in every
work-item of the group, stores there run in work-item 0 only, and a barrier follows each
thread loop nest and each such store. Allocations at block level are `__local`, inside
thread loops private; store_in() overrides that as Halide does (`_placed_allocate`).
Statements outside any GPU loop that write memory (Funcs without a
GPU schedule) run as kernels of one work-item, so every buffer lives on the device: inputs
are copied there once per call and outputs back once (engine/runtime/opencl_host.py).

The host part stays an IR statement (lets, asserts, allocations, loops around kernels)
with each kernel replaced by a `KernelLaunch`; the runtime walks it over pyopencl.
Vectorized loops of 2, 3, 4, 8 or 16 lanes are OpenCL vector code inside a work-item
(engine/codegen/opencl_vector.py); other vectorized loops run as serial loops there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pixelweave.engine.codegen.opencl_expr import ExprEmitter, c_literal, c_type, memory_type, sanitize
from pixelweave.engine.codegen.opencl_indices import index_only_lets
from pixelweave.engine.codegen.opencl_pure_loops import spread_pure_loops
from pixelweave.engine.codegen.opencl_uniform_values import hoist_uniform_values
from pixelweave.engine.codegen.opencl_vector import dense_base, lane, vector_c_type
from pixelweave.engine.errors import CompileError, ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Type, UInt
from pixelweave.engine.ir.visit import substitute, walk
from pixelweave.engine.lower.intervals import SymInterval, interval_of
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.schedule import MemoryType
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
    Ramp,
    Stmt,
    Store,
    make_block,
)
from pixelweave.engine.stmt_visit import stmt_exprs, walk_stmt

_GPU = (ForType.GPU_BLOCK, ForType.GPU_THREAD)
MAX_PRIVATE_BYTES = 64 * 1024  # a private array larger than this is refused (registers and stack)
DEFAULT_THREADS = (16, 8, 1)  # work-group size per dimension when no thread loop has a constant extent
LOCAL_ALIGNMENT = 128  # bytes: a double16
MAX_FOLDED_NODES = 400  # a let larger than this (inlined) is left out of private index folding
ERROR_SLOTS = 8  # the error record: [assert id + 1, up to 7 argument values]


@dataclass
class KernelArgument:
    name: str  # the IR name: a buffer or a variable
    c_name: str
    type: Type
    is_buffer: bool


@dataclass
class Kernel:
    """One OpenCL kernel and how to launch it."""

    name: str
    func: str  # the Func whose production the kernel is part of (named in errors)
    arguments: list[KernelArgument]
    block_mins: list[E.Expr]  # host expressions, dimension 0 first
    block_extents: list[E.Expr]
    local_size: tuple[int, ...]
    asserts: list[AssertStmt] = field(default_factory=list)  # failures are recorded, by index
    # storage of non-constant size: (name, element type, host bound on its size, per_group)
    scratch: list[tuple[str, Type, E.Expr, bool]] = field(default_factory=list)
    first_line: int = 0  # lines of the program source this kernel occupies
    last_line: int = 0
    source: str = ""


class KernelLaunch(Stmt):
    """Run kernel on the device (the host part's only new statement)."""

    __slots__ = ("kernel",)

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def children(self):
        return ()

    def with_children(self, c) -> KernelLaunch:
        return self


@dataclass
class DeviceLimits:
    max_work_group_size: int = 256
    max_work_item_sizes: tuple[int, ...] = (256, 256, 64)
    local_memory_bytes: int = 32 * 1024
    supports_double: bool = True


@dataclass
class OpenCLProgram:
    """The generated kernels (one program source) and the host statement launching them."""

    name: str
    source: str
    kernels: list[Kernel]
    host: Stmt
    arguments: list


def contains_gpu_loop(s: Stmt) -> bool:
    return any(isinstance(n, For) and n.for_type in _GPU for n in walk_stmt(s))


def _has_side_effects(s: Stmt) -> bool:
    return any(isinstance(n, (Store, AssertStmt)) for n in walk_stmt(s))


def _fits_one_kernel(s: Stmt, memory_types: dict[str, MemoryType]) -> bool:
    """Whether every allocation inside s can be a private array (constant and small, and
    not asked to be Heap or GPUShared memory); otherwise the loops around it run on the
    host and it becomes a device buffer."""
    for n in walk_stmt(s):
        if isinstance(n, Allocate) and (
            not isinstance(n.size, E.Const)
            or int(n.size.value) * max(n.type.bits // 8, 1) > MAX_PRIVATE_BYTES
            or memory_types.get(n.name) in (MemoryType.HEAP, MemoryType.GPU_SHARED)
        ):
            return False
    return True


def _host_expr(e: E.Expr) -> bool:
    """Whether the host can evaluate e (a scalar without memory reads or math intrinsics)."""
    return e.type().lanes == 1 and not any(isinstance(n, (Load, E.Call)) for n in walk(e))


def generate_opencl(lowered: LoweredPipeline, limits: DeviceLimits | None = None) -> OpenCLProgram:
    """Kernels and host statement for a pipeline lowered for target 'opencl'."""
    gen = _Generator(lowered.name, limits or DeviceLimits(), lowered.memory_types)
    host = gen.host(lowered.body, None)
    helpers = "".join(gen.helpers.values())
    header = ["#pragma OPENCL FP_CONTRACT OFF"]
    if gen.uses_double:
        header.insert(0, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines = [*header, *helpers.splitlines()]
    for k in gen.kernels:
        k.first_line = len(lines) + 1
        lines.extend(k.source.splitlines())
        k.last_line = len(lines)
    return OpenCLProgram(lowered.name, "\n".join(lines) + "\n", gen.kernels, host, list(lowered.arguments))


class _Generator:
    def __init__(self, name: str, limits: DeviceLimits, memory_types: dict[str, MemoryType]) -> None:
        self.name = name
        self.limits = limits
        self.memory_types = memory_types  # store_in(), by allocation name
        self.kernels: list[Kernel] = []
        self.helpers: dict[str, str] = {}
        self.uses_double = False

    # ------------------------------------------------------------------ the host part
    def host(self, s: Stmt, func: str | None) -> Stmt:
        """s with every part that must run on the device replaced by kernel launches."""
        gpu = contains_gpu_loop(s)
        if isinstance(s, For) and s.for_type in _GPU:
            return self.launch(s, func)
        if isinstance(s, Block):
            return make_block([self.host(c, func) for c in s.stmts])
        if isinstance(s, ProducerConsumer):
            return ProducerConsumer(s.name, s.is_producer, self.host(s.body, s.name if s.is_producer else func))
        if isinstance(s, Allocate):
            self._check_device_buffer(s)
            return Allocate(s.name, s.type, s.size, False, self.host(s.body, func), s.output_alias)
        if isinstance(s, Evaluate) and not _has_side_effects(s):
            return s
        if isinstance(s, LetStmt) and (gpu or _host_expr(s.value) or not _fits_one_kernel(s, self.memory_types)):
            return self._host_let(s, func)
        if isinstance(s, AssertStmt) and all(_host_expr(e) for e in s.children()):
            return s
        if isinstance(s, IfThenElse) and (gpu or _host_expr(s.condition)):
            self._require_host(s.condition, "a condition", func)
            other = self.host(s.else_case, func) if s.else_case is not None else None
            return IfThenElse(s.condition, self.host(s.then_case, func), other)
        if isinstance(s, For) and (gpu or not _fits_one_kernel(s, self.memory_types)):
            self._require_host(s.min, s.name, func)
            self._require_host(s.extent, s.name, func)
            return For(s.name, s.min, s.extent, ForType.SERIAL, self.host(s.body, func))
        if gpu:
            raise CompileError(f"the OpenCL backend cannot run {type(s).__name__} around the GPU loops of `{func}`")
        spread = spread_pure_loops(s)  # a pure definition's loops: across work-items
        if spread is not None:
            return self.launch(spread, func)
        return self.launch(s, func)  # serial code with effects: one work-item on the device

    def _check_device_buffer(self, s: Allocate) -> None:
        """Storage outside every kernel is a buffer in global device memory (Heap, Stack,
        Register and Auto alike: Halide's host stack is copied to the device too); refuse
        GPUShared there, which would need a work-group."""
        if self.memory_types.get(s.name) is MemoryType.GPU_SHARED:
            raise ScheduleError(
                f"store_in(MemoryType.GPUShared) of `{s.name}`: GPUShared is the local memory of one GPU work-group, "
                f"and `{s.name}` is computed outside any GPU block loop (at the root or at a loop that runs on the "
                "host); compute_at() a gpu_blocks loop of its consumer, or use MemoryType.Heap or Auto"
            )

    def _host_let(self, s: LetStmt, func: str | None) -> Stmt:
        self._require_host(s.value, s.name, func)
        return LetStmt(s.name, s.value, self.host(s.body, func))

    def _require_host(self, e: E.Expr, what: str, func: str | None) -> None:
        if not _host_expr(e):
            raise CompileError(
                f"the OpenCL backend evaluates `{what}` (around the GPU loops of `{func or self.name}`) on the host, "
                "and it reads memory or calls a math function; compute it inside a GPU-scheduled Func instead"
            )

    # ------------------------------------------------------------------ kernels
    def launch(self, root: Stmt, func: str | None) -> Stmt:
        """The kernel launch for root, inside the host lets of the work-item-invariant
        values moved out of the kernel (opencl_uniform_values.py)."""
        prefix = f"{sanitize(self.name)}_k{len(self.kernels)}.uniform"
        root, values = hoist_uniform_values(root, _bound_names(root), prefix)
        launch: Stmt = KernelLaunch(self.kernel(root, func))
        for name, value in reversed(values):
            launch = LetStmt(name, value, launch)
        return launch

    def kernel(self, root: Stmt, func: str | None) -> Kernel:
        name = f"{sanitize(self.name)}_k{len(self.kernels)}"
        func_name = func or _first_produced(root) or self.name
        builder = _KernelBuilder(name, func_name, root, self)
        kernel = builder.build()
        self.kernels.append(kernel)
        return kernel


def _first_produced(s: Stmt) -> str | None:
    for n in walk_stmt(s):
        if isinstance(n, ProducerConsumer) and n.is_producer:
            return n.name
        if isinstance(n, Store):
            return n.buffer
    return None


def _bound_names(s: Stmt) -> set[str]:
    names: set[str] = set()
    for n in walk_stmt(s):
        if isinstance(n, (LetStmt, For)):
            names.add(n.name)
    for e in stmt_exprs(s):
        for node in walk(e):
            if isinstance(node, E.Let):
                names.add(node.name)
    return names


class _KernelBuilder:
    def __init__(self, name: str, func: str, root: Stmt, gen: _Generator) -> None:
        self.name, self.func, self.root, self.gen = name, func, root, gen
        self._counter = 0
        self.em = ExprEmitter(self._fresh, gen.helpers)
        self.local_decls: list[str] = []
        self.asserts: list[AssertStmt] = []
        self.local_size: tuple[int, ...] = (1,)
        self.threaded = False
        self.intervals: dict[str, SymInterval] = {}  # kernel variables as ranges of host expressions
        self.scratch: list[tuple[str, Type, E.Expr, bool]] = []
        self.kernel_vars: set[str] = set()
        self.constant_extents: dict[int, int] = {}  # thread loops (by id) of constant extent
        self.in_threads = False  # generating the body of a GPU thread loop nest
        self.local_bytes = 0  # __local storage declared so far
        # Private arrays and, for folding their indices, the kernel's lets in scope as
        # expressions of loop variables and arguments (None where too large to inline).
        self.private_arrays: set[str] = set()
        self.let_values: dict[str, E.Expr | None] = {}
        self.rebinding_depth = 0  # > 0 inside a rebinding of a name in scope: folding off
        self.em.rewrite_index = self._private_index
        self.index_lets = index_only_lets(root)  # lets computed as address arithmetic
        # ranges of the loop variables in scope, in terms of lets' values (for decide_min_max)
        self.loop_ranges: dict[str, SymInterval] = {}
        self.em.decide_min_max = self._decide_min_max
        self.aligned_arrays: set[str] = set()  # C names of the __local arrays declared aligned
        self.em.aligned_vector = self._aligned_vector

    def _fresh(self, hint: str) -> str:
        self._counter += 1
        return f"{sanitize(hint)[-40:]}_{self._counter}"

    def _error(self, message: str) -> ScheduleError:
        return ScheduleError(f"`{self.func}` cannot run on the GPU: {message}")

    def build(self) -> Kernel:
        em = self.em
        root = self.root
        free_vars, buffers = self._free_names(root)
        arguments = [KernelArgument(b, sanitize(b) + "_buf", t, True) for b, t in buffers.items()]
        for b, t in buffers.items():
            em.buffers[b] = (sanitize(b) + "_buf", t)
        for v, t in free_vars.items():
            c_name = "a_" + sanitize(v)
            arguments.append(KernelArgument(v, c_name, t, False))
            em.names[0][v] = c_name
        # The chain of block loops whose bounds the host can compute.
        blocks: list[For] = []
        s = root
        bound_inside: set[str] = set()
        while isinstance(s, For) and s.for_type == ForType.GPU_BLOCK and len(blocks) < 3:
            used = {n.name for e in (s.min, s.extent) for n in walk(e) if isinstance(n, E.Variable)}
            if used & bound_inside or not (_host_expr(s.min) and _host_expr(s.extent)):
                break
            blocks.append(s)
            bound_inside.add(s.name)
            s = s.body
        block_mins = [b.min for b in reversed(blocks)]
        block_extents = [b.extent for b in reversed(blocks)]
        body_lines_start = len(em.lines)
        for dim, loop in enumerate(reversed(blocks)):
            em.push_scope()
            em.declare(loop.name, loop.min.type(), f"a_bmin{dim} + (int)get_group_id({dim})")
            self._bind_interval(loop.name, self._loop_interval(loop))
        if blocks or (isinstance(s, For) and s.for_type == ForType.GPU_THREAD):
            self.threaded = True
            self.local_size = self._choose_local_size(s)
            self._block_level(s)
        else:
            self._serial(s)
        body = em.lines[body_lines_start:]
        if body and body[-1].strip().startswith("barrier(") and body[-1].startswith("  barrier"):
            body.pop()  # nothing follows the last thread loops
        loaded_only = self._loaded_only(root)
        self.gen.uses_double |= em.uses_double
        # Device buffers never alias: each argument, allocation and scratch is its own buffer.
        params = [
            f"__global {'const ' if a.name in loaded_only else ''}{memory_type(a.type)} *restrict {a.c_name}"
            for a in arguments
            if a.is_buffer
        ]
        params += [f"{self._arg_type(a.type)} {a.c_name}" for a in arguments if not a.is_buffer]
        params += [f"int a_bmin{d}" for d in range(len(blocks))]
        for name, t, _bound, _per_group in self.scratch:
            params += [f"__global {memory_type(t)} *scratch_{sanitize(name)}", f"long scratch_{sanitize(name)}_size"]
        if self.asserts:
            params.append("__global int *pw_error")
        attributes = ""
        if self.threaded:
            sizes = [*self.local_size, 1, 1][:3]
            attributes = f"__attribute__((reqd_work_group_size({sizes[0]}, {sizes[1]}, {sizes[2]}))) "
        source_lines = [f"{attributes}__kernel void {self.name}(", "    " + ",\n    ".join(params) + ") {"]
        source_lines += ["  " + d for d in self.local_decls]
        source_lines += body
        source_lines.append("}")
        for a in arguments:
            if a.is_buffer and a.type.is_float() and a.type.bits == 64:
                self.gen.uses_double = True
        return Kernel(
            self.name,
            self.func,
            arguments,
            block_mins,
            block_extents,
            self.local_size,
            list(self.asserts),
            list(self.scratch),
            source="\n".join(source_lines) + "\n",
        )

    @staticmethod
    def _loaded_only(root: Stmt) -> set[str]:
        stored = {n.buffer for n in walk_stmt(root) if isinstance(n, Store)}
        loaded = {node.buffer for e in stmt_exprs(root) for node in walk(e) if isinstance(node, Load)}
        return loaded - stored

    @staticmethod
    def _arg_type(t: Type) -> str:
        return "int" if t.is_bool() else c_type(t)

    def _free_names(self, root: Stmt) -> tuple[dict[str, Type], dict[str, Type]]:
        """Variables used but not bound inside root, and buffers not allocated inside it."""
        bound = _bound_names(root)
        allocated = {n.name for n in walk_stmt(root) if isinstance(n, Allocate)}
        free: dict[str, Type] = {}
        buffers: dict[str, Type] = {}
        for n in walk_stmt(root):
            if isinstance(n, Store) and n.buffer not in allocated:
                buffers.setdefault(n.buffer, n.value.type().element_of())
        for e in stmt_exprs(root):
            for node in walk(e):
                if isinstance(node, E.Variable) and node.name not in bound:
                    free.setdefault(node.name, node.type())
                elif isinstance(node, Load) and node.buffer not in allocated:
                    buffers.setdefault(node.buffer, node.type().element_of())
        return free, buffers

    # ------------------------------------------------------------------ work-group size
    def _thread_chains(self, s: Stmt) -> list[list[For]]:
        """The nests of thread loops at block level, each outermost first; records the
        extents that are constant once the lets around them are substituted."""
        chains: list[list[For]] = []
        stack: list[tuple[Stmt, dict[str, E.Expr]]] = [(s, {})]
        while stack:
            n, env = stack.pop()
            if isinstance(n, For) and n.for_type == ForType.GPU_THREAD:
                chain = [n]
                while (
                    isinstance(chain[-1].body, For) and chain[-1].body.for_type == ForType.GPU_THREAD and len(chain) < 3
                ):
                    chain.append(chain[-1].body)
                for loop in chain:
                    extent = simplify(substitute(loop.extent, env)) if env else loop.extent
                    if isinstance(extent, E.Const):
                        self.constant_extents[id(loop)] = int(extent.value)
                chains.append(chain)
                continue
            if isinstance(n, LetStmt):
                env = {**env, n.name: substitute(n.value, env) if env else n.value}
                stack.append((n.body, env))
                continue
            if isinstance(n, For):
                env = {k: v for k, v in env.items() if k != n.name}
            stack.extend((c, env) for c in n.children() if isinstance(c, Stmt))
        return chains

    def _choose_local_size(self, s: Stmt) -> tuple[int, ...]:
        chains = self._thread_chains(s)
        dims = max((len(c) for c in chains), default=1)
        sizes = [0] * dims
        for chain in chains:
            for dim, loop in enumerate(reversed(chain)):
                extent = self.constant_extents.get(id(loop))
                if extent is not None:
                    sizes[dim] = max(sizes[dim], extent)
        sizes = [size if size > 0 else DEFAULT_THREADS[d] for d, size in enumerate(sizes)]
        limits = self.gen.limits
        sizes = [min(size, limits.max_work_item_sizes[d]) for d, size in enumerate(sizes)]
        while _product(sizes) > limits.max_work_group_size:
            d = max(range(dims), key=lambda i: sizes[i])
            sizes[d] = (sizes[d] + 1) // 2
        return tuple(max(size, 1) for size in sizes)

    # ------------------------------------------------------------------ block level
    def _barrier(self) -> None:
        self.em.line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    def _block_level(self, s: Stmt) -> None:
        """Statements run by every work-item of a group alike (uniform control flow)."""
        em = self.em
        if not any(isinstance(n, For) and n.for_type == ForType.GPU_THREAD for n in walk_stmt(s)):
            if _has_side_effects(s):
                lid_zero = " && ".join(f"get_local_id({d}) == 0" for d in range(len(self.local_size)))
                em.open_block(f"if ({lid_zero})")
                self._serial(s)
                em.close_block()
                self._barrier()
            else:
                self._serial(s)
            return
        if isinstance(s, For) and s.for_type == ForType.GPU_THREAD:
            self._thread_nest(s)
            self._barrier()
        elif isinstance(s, Block):
            for c in s.stmts:
                self._block_level(c)
        elif isinstance(s, ProducerConsumer):
            self._block_level(s.body)
        elif isinstance(s, LetStmt):
            value = em.index(s.value) if s.name in self.index_lets else em.expr(s.value)
            rebinding = em.lookup(s.name) is not None
            em.push_scope(hide=rebinding)
            em.declare(s.name, s.value.type(), value)
            old = self._bind_interval(s.name, self._let_interval(s.value))
            self._enter_let(s.name, s.value, rebinding)
            self._block_level(s.body)
            self._leave_let(s.name, rebinding)
            self._restore_interval(s.name, old)
            em.pop_scope()
        elif isinstance(s, Allocate):
            self._allocate(s, local=True, body=self._block_level)
        elif isinstance(s, For):
            self._for(s, self._block_level)
        elif isinstance(s, IfThenElse):
            self._if(s, self._block_level)
        else:
            raise self._error(f"unexpected {type(s).__name__} around its GPU thread loops")

    def _thread_nest(self, outer: For) -> None:
        chain = [outer]
        while isinstance(chain[-1].body, For) and chain[-1].body.for_type == ForType.GPU_THREAD and len(chain) < 3:
            chain.append(chain[-1].body)
        em = self.em
        opened = rebound = 0
        saved: list[tuple[str, SymInterval | None]] = []
        ranges: list[tuple[str, SymInterval | None]] = []
        for loop in chain:
            dim = len(chain) - 1 - chain.index(loop)
            if dim >= len(self.local_size):
                raise self._error("its GPU thread loops nest deeper than the work-group's dimensions")
            size = self.local_size[dim]
            lo, extent = em.expr(loop.min), em.expr(loop.extent)
            t = loop.min.type()
            counter = self._fresh(f"tid{dim}")
            const_extent = self.constant_extents.get(id(loop))
            if const_extent == size:  # one iteration per work-item: no loop
                em.line("{")
                em.indent += 1
                em.push_scope()
                em.line(f"int {counter} = (int)get_local_id({dim});")
            elif const_extent is not None and const_extent < size:
                em.line(f"int {counter} = (int)get_local_id({dim});")
                em.open_block(f"if ({counter} < {const_extent})")
            else:
                head = f"for (int {counter} = (int)get_local_id({dim}); {counter} < {extent}; {counter} += {size})"
                em.open_block(head)
            rebinding = em.lookup(loop.name) is not None
            em.push_scope(hide=rebinding)
            em.declare(loop.name, t, f"({c_type(t)})({lo} + {counter})")
            saved.append((loop.name, self._bind_interval(loop.name, self._loop_interval(loop))))
            ranges.append((loop.name, self._bind_range(loop, const_extent)))
            self.rebinding_depth += rebinding
            rebound += rebinding
            opened += 1
        self.in_threads = True
        self._serial(chain[-1].body)
        self.in_threads = False
        self.rebinding_depth -= rebound
        for name, old in reversed(ranges):
            self._restore_range(name, old)
        for name, old in reversed(saved):
            self._restore_interval(name, old)
        for _ in range(opened):
            em.pop_scope()
            em.close_block()

    # ------------------------------------------------------------------ serial code (one work-item)
    def _serial(self, s: Stmt) -> None:
        em = self.em
        if isinstance(s, Block):
            for c in s.stmts:
                self._serial(c)
        elif isinstance(s, ProducerConsumer):
            self._serial(s.body)
        elif isinstance(s, LetStmt):
            value = em.index(s.value) if s.name in self.index_lets else em.expr(s.value)
            rebinding = em.lookup(s.name) is not None
            em.push_scope(hide=rebinding)
            em.declare(s.name, s.value.type(), value)
            old = self._bind_interval(s.name, self._let_interval(s.value))
            self._enter_let(s.name, s.value, rebinding)
            self._serial(s.body)
            self._leave_let(s.name, rebinding)
            self._restore_interval(s.name, old)
            em.pop_scope()
        elif isinstance(s, Store):
            ref = em.buffers.get(s.buffer)
            if ref is None:
                raise CompileError(f"buffer `{s.buffer}` is not an argument or an allocation of the OpenCL kernel")
            if s.value.type().lanes != 1:
                self._vector_store(s, ref[0])
                em.forget_loads_of(s.buffer)
                return
            value = em.expr(s.value)
            index = em.index(em.index_of(s.buffer, s.index))
            if s.value.type().is_bool():
                value = f"(uchar)({value})"
            em.line(f"{ref[0]}[{index}] = {value};")
            em.forget_loads_of(s.buffer)
        elif isinstance(s, For):
            self._for(s, self._serial)
        elif isinstance(s, IfThenElse):
            self._if(s, self._serial)
        elif isinstance(s, Allocate):
            self._allocate(s, local=False, body=self._serial)
        elif isinstance(s, AssertStmt):
            self._assert(s)
        elif isinstance(s, Evaluate):
            em.expr(s.value)
        else:
            raise CompileError(f"the OpenCL backend cannot generate {type(s).__name__} statements")

    def _vector_store(self, s: Store, pointer: str) -> None:
        """vstoreN for a dense store (element alignment suffices), else a scatter in lane order."""
        em = self.em
        t = s.value.type()
        n = t.lanes
        value = em.expr(s.value)
        if t.is_bool():
            value = em.vector_cast(value, t, UInt(8).with_lanes(n))  # -1/0 masks -> bytes 1/0
        base = dense_base(em.index_of(s.buffer, s.index))
        if base is not None:
            if not t.is_bool() and self._aligned_vector(pointer, base, n):
                em.line(f"*((__local {vector_c_type(t)} *)({pointer} + {em.index(base)})) = {value};")
            else:
                em.line(f"vstore{n}({value}, 0, {pointer} + {em.index(base)});")
            return
        index = em.index(s.index)
        for k in range(n):
            em.line(f"{pointer}[{lane(index, k)}] = {lane(value, k)};")

    def _for(self, s: For, body) -> None:
        if self._single_iteration(s):  # a let: no loop for the compiler to remove first
            body(LetStmt(s.name, s.min, s.body))
            return
        em = self.em
        lo, extent = em.expr(s.min), em.expr(s.extent)
        t = s.min.type()
        ct = c_type(t)
        counter = self._fresh("i")
        em.open_block(f"for ({ct} {counter} = 0; {counter} < {extent}; {counter}++)")
        rebinding = em.lookup(s.name) is not None
        em.push_scope(hide=rebinding)
        em.declare(s.name, t, f"({ct})({lo} + {counter})")
        old = self._bind_interval(s.name, self._loop_interval(s))
        old_range = self._bind_range(s, None)
        self.rebinding_depth += rebinding
        body(s.body)
        self.rebinding_depth -= rebinding
        self._restore_range(s.name, old_range)
        self._restore_interval(s.name, old)
        em.pop_scope()
        em.close_block()

    def _if(self, s: IfThenElse, body) -> None:
        em = self.em
        cond = em.expr(s.condition)
        em.open_block(f"if ({cond})")
        body(s.then_case)
        if s.else_case is not None:
            em.close_block(" else {")
            em.indent += 1
            em.push_scope()
            body(s.else_case)
            em.close_block()
        else:
            em.close_block()

    def _allocate(self, s: Allocate, local: bool, body) -> None:
        em = self.em
        memory = self.gen.memory_types.get(s.name, MemoryType.AUTO)
        if memory is not MemoryType.AUTO:
            self._placed_allocate(s, memory, body)
            return
        size = s.size
        if not isinstance(size, E.Const):
            self._scratch_allocate(s, per_group=local, body=body)
            return
        count = max(int(size.value), 1)
        elem = memory_type(s.type)
        nbytes = count * max(s.type.bits // 8, 1)
        c_name = self._fresh(s.name)
        if local:
            self._declare_local(s.name, elem, c_name, count, nbytes)
        else:
            if nbytes > MAX_PRIVATE_BYTES:
                raise self._error(
                    f"its storage `{s.name}` in GPU private memory needs {nbytes} bytes (at most "
                    f"{MAX_PRIVATE_BYTES}); compute it at a finer loop level or at root"
                )
            em.line(f"{elem} {c_name}[{count}];")
            self.private_arrays.add(s.name)
        self._emit_with_buffer(s, c_name, body)

    def _declare_local(self, name: str, elem: str, c_name: str, count: int, nbytes: int) -> None:
        """A __local array at kernel scope, within the device's local memory (all of them together)."""
        self.local_bytes += nbytes
        if self.local_bytes > self.gen.limits.local_memory_bytes:
            raise self._error(
                f"its storage `{name}` in GPU local memory needs {nbytes} bytes, which brings the kernel's local "
                f"memory to {self.local_bytes} bytes, more than the device's {self.gen.limits.local_memory_bytes}; "
                "use smaller GPU tiles"
            )
        # aligned for the widest vector, so that vectors at multiples of their width are
        # whole aligned accesses (see _aligned_vector)
        self.local_decls.append(f"__attribute__((aligned({LOCAL_ALIGNMENT}))) __local {elem} {c_name}[{count}];")
        self.aligned_arrays.add(c_name)

    def _placed_allocate(self, s: Allocate, memory: MemoryType, body) -> None:
        """Storage with a store_in(), placed as Halide places it in a GPU kernel: Heap in
        global device memory (a slice per work-group at block level, per work-item inside
        the thread loops); GPUShared in local memory (at block level shared by the group,
        inside the thread loops a slice per work-item); Register and Stack in private
        memory of one work-item, inside the thread loops (or in a one-work-item kernel)."""
        where = f"store_in(MemoryType.{memory.halide_name}) of `{s.name}`"
        at_block_level = self.threaded and not self.in_threads
        if memory is MemoryType.HEAP:
            self._scratch_allocate(s, per_group=at_block_level, body=body)
            return
        count = self._constant_bound(s.size)
        elem = memory_type(s.type)
        c_name = self._fresh(s.name)
        em = self.em
        if memory in (MemoryType.REGISTER, MemoryType.STACK):
            if at_block_level:
                raise ScheduleError(
                    f"{where}: {memory.halide_name} storage is private to one GPU work-item, and `{s.name}` is "
                    "computed at a GPU block loop, outside the thread loops, where the work-group shares it; "
                    "compute_at() a gpu_threads loop, or use MemoryType.GPUShared"
                )
            if count is None:
                raise ScheduleError(
                    f"{where}: private memory of a GPU work-item needs a constant size, and this one ({s.size}) "
                    "depends on the region computed; bound() its dimensions or use MemoryType.Heap"
                )
            nbytes = count * max(s.type.bits // 8, 1)
            if nbytes > MAX_PRIVATE_BYTES:
                raise ScheduleError(
                    f"{where}: it needs {nbytes} bytes of private memory per work-item, more than {MAX_PRIVATE_BYTES}; "
                    "compute it at a finer loop level or use MemoryType.Heap"
                )
            em.line(f"{elem} {c_name}[{count}];")
            self.private_arrays.add(s.name)
        elif memory is MemoryType.GPU_SHARED:
            if not self.threaded:
                raise ScheduleError(
                    f"{where}: GPUShared is the local memory of one GPU work-group, and `{s.name}` is computed "
                    "outside any GPU block loop; compute_at() a gpu_blocks loop of its consumer"
                )
            if count is None:
                raise ScheduleError(
                    f"{where}: local memory is sized when the kernel is built, and this size ({s.size}) has no "
                    "constant bound; bound() its dimensions, use a constant tile, or use MemoryType.Heap"
                )
            elem_bytes = max(s.type.bits // 8, 1)
            if at_block_level:
                self._declare_local(s.name, elem, c_name, count, count * elem_bytes)
            else:  # a slice per work-item of the group, as Halide stripes it
                group = _product(self.local_size)
                self._declare_local(s.name, elem, c_name + "_all", count * group, count * group * elem_bytes)
                lid = "(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))"
                em.line(f"__local {elem} *{c_name} = {c_name}_all + {lid} * {count};")
        else:
            raise ScheduleError(f"{where}: the OpenCL backend cannot place {memory.halide_name} memory")
        self._emit_with_buffer(s, c_name, body)

    def _emit_with_buffer(self, s: Allocate, c_name: str, body) -> None:
        """The allocation's body, with its name bound to the C array `c_name` inside it."""
        em = self.em
        outer = em.buffers.get(s.name)
        em.buffers[s.name] = (c_name, s.type.element_of())
        body(s.body)
        if outer is None:
            del em.buffers[s.name]
        else:
            em.buffers[s.name] = outer

    def _constant_bound(self, size: E.Expr) -> int | None:
        """The allocation's size, or a constant bound on it over the kernel's loops; None if neither."""
        if isinstance(size, E.Const):
            return max(int(size.value), 1)
        hi = self._interval(size).hi
        hi = simplify(hi) if hi is not None else None
        return max(int(hi.value), 1) if isinstance(hi, E.Const) else None

    # ------------------------------------------------------------------ private array indices
    def _enter_let(self, name: str, value: E.Expr, rebinding: bool) -> None:
        """Remember a let's value in terms of loop variables and arguments (for folding
        private array indices); a rebinding of a name in scope turns folding off inside it."""
        self.rebinding_depth += rebinding
        self.let_values[name] = None
        if rebinding or value.type().lanes != 1 or value.type().is_float():
            return
        known = {k: v for k, v in self.let_values.items() if v is not None}
        expanded = substitute(value, known)
        if _dag_size(expanded, MAX_FOLDED_NODES) <= MAX_FOLDED_NODES and not _reads_memory(expanded):
            self.let_values[name] = expanded

    def _leave_let(self, name: str, rebinding: bool) -> None:
        self.rebinding_depth -= rebinding
        self.let_values.pop(name, None)

    def _known_lets(self) -> dict[str, E.Expr]:
        return {k: v for k, v in self.let_values.items() if v is not None}

    def _bind_range(self, loop: For, const_extent: int | None) -> SymInterval | None:
        """Record the loop variable's range (min to min + extent - 1, the extent constant:
        the thread loop's, or the loop's own once lets are substituted); the old one back."""
        old = self.loop_ranges.pop(loop.name, None)
        known = self._known_lets()
        extent = const_extent
        if extent is None:
            folded = simplify(substitute(loop.extent, known))
            extent = int(folded.value) if isinstance(folded, E.Const) else None
        if extent is not None and extent >= 1 and not self.rebinding_depth:
            lo = simplify(substitute(loop.min, known))
            self.loop_ranges[loop.name] = SymInterval(lo, simplify(E.Add(lo, E.Const(lo.type(), extent - 1))))
        return old

    def _restore_range(self, name: str, old: SymInterval | None) -> None:
        self.loop_ranges.pop(name, None)
        if old is not None:
            self.loop_ranges[name] = old

    def _decide_min_max(self, e: E.Expr) -> E.Expr | None:
        """The operand of a min or max in an address that every work-item takes, proved
        from the lets and the loop ranges in scope (Halide's simplifier drops such clamps,
        e.g. a tile's shift inwards that no work-item of an even tile reaches); None if
        unproved. Only addresses ask: their arithmetic is exact (no wrapping)."""
        t = e.type()
        if self.rebinding_depth or not t.is_int() or t.bits != 32 or t.lanes != 1:
            return None
        difference = simplify(substitute(E.Sub(e.a, e.b), self._known_lets()))
        if any(isinstance(n, Load) for n in walk(difference)):
            return None
        span = interval_of(difference, self.loop_ranges)
        hi = simplify(span.hi) if span.hi is not None else None
        lo = simplify(span.lo) if span.lo is not None else None
        a_first = isinstance(hi, E.Const) and int(hi.value) <= 0  # a <= b everywhere
        b_first = isinstance(lo, E.Const) and int(lo.value) >= 0  # a >= b everywhere
        if isinstance(e, E.Min):
            return e.a if a_first else e.b if b_first else None
        return e.b if a_first else e.a if b_first else None

    def _aligned_vector(self, pointer: str, base: E.Expr, lanes: int) -> bool:
        """Whether a dense vector at base of the C array `pointer` is an aligned whole
        vector: an aligned __local array, a power-of-two width and a base that is a
        multiple of it given the kernel's lets (as Halide's `((__local T4 *)p)[i / 4]`;
        vloadN assumes only the element's alignment, which costs pocl ~30% on a blur)."""
        if pointer not in self.aligned_arrays or lanes & (lanes - 1) or self.rebinding_depth:
            return False
        return _multiple_of(simplify(substitute(base, self._known_lets())), lanes)

    def _single_iteration(self, loop: For) -> bool:
        """Whether the kernel's lets make the loop's extent 1 (a Func computed per point
        at a loop of its consumer, as `ratio` in unsharp: the region's max is its min)."""
        if self.rebinding_depth:
            return False
        extent = simplify(substitute(loop.extent, self._known_lets()))
        return isinstance(extent, E.Const) and int(extent.value) == 1

    def _private_index(self, buffer: str, index: E.Expr) -> E.Expr:
        """A private array's index as a constant where the kernel's lets make it one (per
        lane for a dense vector): OpenCL compilers keep a private array in registers only
        when every access to it has a constant index, as Halide's simplified indices have;
        otherwise the array lives in memory, per work-item, and work-items vectorized
        together read it with gathers."""
        if buffer not in self.private_arrays or self.rebinding_depth:
            return index
        base = dense_base(index)
        scalar = index if index.type().lanes == 1 else base
        if scalar is None:
            return index
        known = {k: v for k, v in self.let_values.items() if v is not None}
        folded = simplify(substitute(scalar, known))
        if not isinstance(folded, E.Const):
            return index
        return folded if scalar is index else Ramp(folded, E.Const(folded.type(), 1), index.type().lanes)

    # ------------------------------------------------------------------ ranges of kernel variables
    def _interval(self, e: E.Expr) -> SymInterval:
        return interval_of(e, self.intervals)

    def _let_interval(self, e: E.Expr) -> SymInterval:
        return self._interval(e) if e.type().lanes == 1 else SymInterval(None, None)

    def _loop_interval(self, loop: For) -> SymInterval:
        lo, extent = self._interval(loop.min), self._interval(loop.extent)
        if lo.lo is None or lo.hi is None or extent.hi is None:
            return SymInterval(lo.lo, None)
        return SymInterval(lo.lo, simplify(E.Sub(E.Add(lo.hi, extent.hi), E.Const(lo.hi.type(), 1))))

    def _bind_interval(self, name: str, interval: SymInterval) -> SymInterval | None:
        old = self.intervals.get(name)
        self.intervals[name] = interval
        self.kernel_vars.add(name)
        return old

    def _restore_interval(self, name: str, old: SymInterval | None) -> None:
        if old is None:
            self.intervals.pop(name, None)
        else:
            self.intervals[name] = old

    def _scratch_allocate(self, s: Allocate, per_group: bool, body) -> None:
        """Storage whose size varies inside the kernel: a slice of a device buffer per
        work-group (block level) or per work-item, sized by a bound the host computes."""
        em = self.em
        bound = self._interval(s.size).hi
        if (
            bound is None
            or not _host_expr(bound)
            or any(isinstance(n, E.Variable) and n.name in self.kernel_vars for n in walk(bound))
        ):
            raise self._error(
                f"its storage `{s.name}` inside a GPU kernel has a size ({s.size}) with no upper bound the host "
                "can compute; compute it at a loop level where its bounds are fixed, or compute it at root"
            )
        c_name = self._fresh(s.name)
        # An unrolled loop repeats its body, so one Func's storage may be allocated several
        # times in a kernel: each copy gets a scratch buffer (and kernel argument) of its own.
        slot, copy = s.name, 1
        while any(sanitize(n) == sanitize(slot) for n, *_ in self.scratch):
            copy += 1
            slot = f"{s.name}.copy{copy}"
        arg = f"scratch_{sanitize(slot)}"
        self.scratch.append((slot, s.type.element_of(), bound, per_group))
        if per_group:
            linear = "(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2)))"
        else:
            linear = (
                "(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)))"
            )
        em.line(f"__global {memory_type(s.type)} *{c_name} = {arg} + (long){linear} * {arg}_size;")
        self._emit_with_buffer(s, c_name, body)

    def _assert(self, s: AssertStmt) -> None:
        em = self.em
        index = len(self.asserts)
        self.asserts.append(s)
        cond = em.expr(s.condition)
        em.open_block(f"if (!({cond}))")
        args = [em.expr(a) for a in s.args[: ERROR_SLOTS - 1]]
        em.open_block(f"if (atomic_cmpxchg((volatile __global int *)pw_error, 0, {index + 1}) == 0)")
        for k, a in enumerate(args):
            em.line(f"pw_error[{k + 1}] = (int){a};")
        em.close_block()
        em.close_block()


def _multiple_of(e: E.Expr, n: int) -> bool:
    """Whether the integer e is a multiple of n for every value of its variables: e as a
    sum of constant multiples of terms (terms equal on both sides of a min or max taken
    out of it, as min(m + 4x, m + 12) = m + min(4x, 12)), each a multiple."""
    return _sum_multiple_of(*_linear_terms(e), n)


# A term: its structural key -> (what it is: an expression, or the two sums of a min or
# max with their common terms taken out; its coefficient).
_Terms = dict[object, tuple[object, int]]


def _linear_terms(e: E.Expr) -> tuple[_Terms, int]:
    if isinstance(e, E.Const):
        return {}, int(e.value)
    if isinstance(e, (E.Add, E.Sub)):
        (ta, ca), (tb, cb) = _linear_terms(e.a), _linear_terms(e.b)
        sign = 1 if isinstance(e, E.Add) else -1
        out = dict(ta)
        for k, (what, coef) in tb.items():
            total = out.get(k, (what, 0))[1] + sign * coef
            if total:
                out[k] = (what, total)
            else:
                out.pop(k, None)
        return out, ca + sign * cb
    if isinstance(e, E.Mul):
        for factor, other in ((e.a, e.b), (e.b, e.a)):
            if isinstance(factor, E.Const):
                c = int(factor.value)
                terms, const = _linear_terms(other)
                return ({k: (what, coef * c) for k, (what, coef) in terms.items() if coef * c}, const * c)
    if isinstance(e, (E.Min, E.Max)):
        (ta, ca), (tb, cb) = _linear_terms(e.a), _linear_terms(e.b)
        common = {k: v for k, v in ta.items() if k in tb and tb[k][1] == v[1]}  # equal keys: equal terms
        rest_a = {k: v for k, v in ta.items() if k not in common}
        rest_b = {k: v for k, v in tb.items() if k not in common}
        inner = ((rest_a, ca), (rest_b, cb))
        key = ("minmax", type(e).__name__, _terms_key(rest_a, ca), _terms_key(rest_b, cb))
        return {**common, key: (inner, 1)}, 0
    return {e.key(): (e, 1)}, 0


def _terms_key(terms: _Terms, const: int) -> tuple:
    return (tuple(sorted(((repr(k), coef) for k, (_, coef) in terms.items()))), const)


def _sum_multiple_of(terms: _Terms, const: int, n: int) -> bool:
    if const % n:
        return False
    for what, coef in terms.values():
        m = n // math.gcd(abs(coef), n)
        if m == 1:
            continue
        if not isinstance(what, tuple):
            return False
        (ta, ca), (tb, cb) = what
        if not (_sum_multiple_of(ta, ca, m) and _sum_multiple_of(tb, cb, m)):
            return False
    return True


def _dag_size(e: E.Expr, limit: int) -> int:
    """The number of distinct nodes of e, counting stops past limit."""
    seen: set[int] = set()
    todo = [e]
    while todo and len(seen) <= limit:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        todo.extend(node.children())
    return len(seen)


def _reads_memory(e: E.Expr) -> bool:
    """Whether e loads (a value that may differ where an index using it is folded)."""
    return any(isinstance(n, Load) for n in walk(e))


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


__all__ = [
    "DeviceLimits",
    "Kernel",
    "KernelArgument",
    "KernelLaunch",
    "OpenCLProgram",
    "c_literal",
    "contains_gpu_loop",
    "generate_opencl",
]
