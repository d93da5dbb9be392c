"""Pass 6: storage flattening. Multi-dimensional realizations, stores and calls become
flat allocations, stores and loads with explicit strides.

A Func's storage is dense in its storage order (reorder_storage, else dimension 0
innermost); input and output buffers use the strides of the arrays passed in.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Bool, Int, Type
from pixelweave.engine.ir.visit import find_variables, mutate, substitute
from pixelweave.engine.lower.allocation_bounds import I64, storage_size_check, widen
from pixelweave.engine.lower.context import LoweringContext
from pixelweave.engine.lower.region import calls_by_name
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.schedule import MemoryType
from pixelweave.engine.stmt import (
    Allocate,
    AssertStmt,
    IfThenElse,
    LetStmt,
    Load,
    ProducerConsumer,
    Provide,
    Realize,
    Stmt,
    Store,
    make_block,
)
from pixelweave.engine.stmt_visit import StmtMutator

I32 = Int(32)
STACK_LIMIT_BYTES = 16 * 1024
STACK_REQUEST_LIMIT_BYTES = 1024 * 1024  # store_in(Stack): the most one allocation may put on a thread's stack


def _v(name: str) -> E.Variable:
    return E.Variable(name, I32, "param")


def flat_index(
    name: str,
    args: tuple[E.Expr, ...],
    folds: dict[int, int] | None = None,
    dense_first: bool = True,
    first_stride: int = 1,
) -> E.Expr:
    """sum((arg_i - name.min.i) * name.stride.i). The pipeline's own buffers have the
    constant stride `first_stride` in dimension 0 (1 unless an output_buffer() constraint
    says otherwise; input checks assert it); scratch buffers have the strides of their
    storage order. A folded dimension addresses arg_i mod its fold size."""
    index: E.Expr | None = None
    folds = folds or {}
    for i, a in enumerate(args):
        stride = E.Const(I32, first_stride) if (i == 0 and dense_first) else _v(f"{name}.stride.{i}")
        if i in folds:
            term = E.Mul(E.Mod(a, E.Const(I32, folds[i])), stride)
        else:
            term = E.Mul(E.Sub(a, _v(f"{name}.min.{i}")), stride)
        index = term if index is None else E.Add(index, term)
    return index if index is not None else E.Const(I32, 0)


def storage_flattening(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    orders = {}
    tuple_types = {}
    padding: dict[str, dict[int, int]] = {}
    memory: dict[str, MemoryType] = {}
    for info in ctx.funcs:
        if info.schedule.memory_type is not MemoryType.AUTO:
            memory[info.name] = info.schedule.memory_type
        order = info.schedule.storage_order
        orders[info.name] = [info.pure_vars.index(v) for v in order] if order else list(range(len(info.pure_vars)))
        if len(info.types) > 1:
            tuple_types[info.name] = info.types
        aligned = info.schedule.storage_alignments
        if aligned:
            padding[info.name] = {info.pure_vars.index(v): a for v, a in aligned.items()}
    first_strides = output_first_strides(ctx)
    flatten = _Flatten(orders, first_strides, tuple_types, padding, memory)
    traced = {f.name() for f in ctx.pipeline.funcs if f.traced()}
    flatten.output_alias = {
        internal: output
        for internal, output in ctx.output_copies.items()
        if output not in traced and output not in first_strides
    }
    return flatten.mutate(stmt)


def memory_types_by_buffer(ctx: LoweringContext) -> dict[str, MemoryType]:
    """store_in() of each Func that has one, by the names of its allocations (one per
    value of a Tuple), for the backend that places the storage."""
    out: dict[str, MemoryType] = {}
    for info in ctx.funcs:
        if info.schedule.memory_type is not MemoryType.AUTO:
            tuple_types = {info.name: info.types} if len(info.types) > 1 else {}
            for k in range(len(info.types)):
                out[value_buffer(info.name, k, tuple_types)] = info.schedule.memory_type
    return out


def value_buffer(name: str, value_index: int, tuple_types: dict) -> str:
    """The storage of one value of a Func: `name.i` for a Func returning a Tuple (as Halide
    names it), the Func's own name otherwise."""
    return f"{name}.{value_index}" if name in tuple_types else name


def output_first_strides(ctx: LoweringContext) -> dict[str, int]:
    """Outputs whose dimension-0 stride output_buffer() fixes to something other than 1."""
    strides = {}
    for f in ctx.pipeline.outputs:  # by name: an output stage may be a copy standing in for f
        constraints = f.output_constraints()
        stride = constraints.dim(0).stride() if constraints is not None and f.dimensions() else None
        if stride is not None and stride != 1:
            strides[f.name()] = stride
    return strides


class _Flatten(StmtMutator):
    def __init__(
        self,
        orders: dict[str, list[int]],
        first_strides: dict[str, int],
        tuple_types: dict | None = None,
        padding: dict[str, dict[int, int]] | None = None,
        memory: dict[str, MemoryType] | None = None,
    ) -> None:
        self.memory = memory or {}  # store_in(): Func -> where its storage goes
        self.orders = orders
        self.first_strides = first_strides
        self.tuple_types = tuple_types or {}
        self.padding = padding or {}  # align_storage(): Func -> dimension -> the multiple its extent is padded to
        self.folds: dict[str, dict[int, int]] = {}
        # enclosing lets whose value is a constant (through other such lets): an allocation
        # whose extents name them has a constant size, so it may live on the stack
        self.constant_lets: dict[str, E.Expr] = {}
        # a Func computed for an output and copied into it -> that output: its storage is the
        # output buffer when that holds exactly its region (see Allocate.output_alias)
        self.output_alias: dict[str, str] = {}

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        known = self._constant_value(value)
        if known is None:
            return LetStmt(s.name, value, self.mutate(s.body))
        outer = self.constant_lets.get(s.name)
        self.constant_lets[s.name] = known
        try:
            return LetStmt(s.name, value, self.mutate(s.body))
        finally:
            if outer is None:
                del self.constant_lets[s.name]
            else:
                self.constant_lets[s.name] = outer

    def _constant_value(self, e: E.Expr) -> E.Const | None:
        """e's value when it is constant given the constant lets around it, else None."""
        if isinstance(e, E.Const):
            return e if as_const_int(e) is not None else None
        if not self.constant_lets:
            return None
        names = {v.name for v in find_variables(e)}
        if not names or not names <= self.constant_lets.keys():
            return None
        value = simplify(substitute(e, {n: self.constant_lets[n] for n in names}))
        return value if isinstance(value, E.Const) and as_const_int(value) is not None else None

    def mutate_expr(self, e: E.Expr) -> E.Expr:
        if not calls_by_name(e):
            return e  # no Func or image read in it (most index and loop expressions)

        def fn(node: E.Expr) -> E.Expr | None:
            if isinstance(node, E.Call) and node.call_kind in ("func", "image"):
                args = tuple(self.mutate_expr(a) for a in node.args)
                name = value_buffer(node.name, node.value_index, self.tuple_types)
                return Load(node.type(), name, self._index(name, args))
            return None

        return mutate(e, fn)

    def visit_Provide(self, s: Provide) -> Stmt:  # noqa: N802
        value = self.mutate_expr(s.value)
        args = tuple(self.mutate_expr(a) for a in s.args)
        name = value_buffer(s.name, s.value_index, self.tuple_types)
        return Store(name, value, self._index(name, args), s.atomic)

    def _index(self, name: str, args: tuple[E.Expr, ...]) -> E.Expr:
        internal = name in self.folds
        return flat_index(
            name, args, self.folds.get(name), dense_first=not internal, first_stride=self.first_strides.get(name, 1)
        )

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        # A Func returning a Tuple has one allocation per value, all over the same region.
        types = self.tuple_types.get(s.name, [s.type])
        names = [value_buffer(s.name, i, self.tuple_types) for i in range(len(types))]
        for name in names:
            self.folds[name] = s.folds
        body = self.mutate(s.body)
        if s.name in self.output_alias and not s.folds:
            body = _SkipCopyWhenAliased(self.output_alias[s.name], _alias_condition(s.name)).mutate(body)
        for name, t in reversed(list(zip(names, types, strict=True))):
            body = self._allocate(s.name, name, t, s, body)
        return body

    def _placement(self, func: str, t: Type, constant: int | None, size: E.Expr) -> tuple[bool, Stmt | None]:
        return storage_placement(func, self.memory.get(func, MemoryType.AUTO), t, constant, size)

    def _allocate(self, func: str, name: str, t: Type, s: Realize, body: Stmt) -> Stmt:
        order = self.orders.get(func, list(range(len(s.bounds))))
        bounds = [(E.Const(I32, 0), E.Const(I32, s.folds[i])) if i in s.folds else b for i, b in enumerate(s.bounds)]
        padded = self.padding.get(func, {})
        size_check = None
        if padded:
            # the padded size is checked in 64 bits, as allocation_bounds checks the unpadded one
            wide = [widen(extent) for _, extent in bounds]
            for i, multiple in padded.items():
                m64 = E.Const(I64, multiple)
                wide[i] = E.Mul(E.Div(E.Add(wide[i], E.Const(I64, multiple - 1)), m64), m64)
                m = E.Const(I32, multiple)
                lo, extent = bounds[i]
                bounds[i] = (lo, simplify(E.Mul(E.Div(extent + E.Const(I32, multiple - 1), m), m)))
            size_check = storage_size_check(name, t, [simplify(w) for w in wide])
        size: E.Expr = E.Const(I32, 1)
        strides: dict[int, E.Expr] = {}
        for i in order:
            strides[i] = size
            size = simplify(E.Mul(size, _v(f"{name}.extent.{i}")))
        lets: list[tuple[str, E.Expr]] = []
        for i, (lo, extent) in enumerate(bounds):
            lets.append((f"{name}.min.{i}", lo))
            lets.append((f"{name}.extent.{i}", extent))
        for i in range(len(s.bounds)):
            lets.append((f"{name}.stride.{i}", strides[i]))
        total = simplify(_substitute_lets(size, lets))
        constant = as_const_int(total)
        if constant is None and self.constant_lets:
            known = self._constant_value(total)
            constant = None if known is None else as_const_int(known)
            total = total if known is None else known
        on_stack, stack_check = self._placement(func, t, constant, size)
        # A size that is not constant names the extent lets bound just outside the
        # allocation rather than repeating their (often long) values.
        alias = None
        if func in self.output_alias and not s.folds:
            output, condition = self.output_alias[func], _alias_condition(name)
            alias = (output, condition)
        result: Stmt = Allocate(name, t, total if constant is not None else size, on_stack, body, alias)
        if alias is not None:
            result = LetStmt(condition.name, _same_region(name, output, len(s.bounds)), result)
        if stack_check is not None:
            result = make_block([stack_check, result])
        for let_name, value in reversed(lets):
            result = LetStmt(let_name, value, result)
        return result if size_check is None else make_block([size_check, result])


def storage_placement(
    func: str, memory: MemoryType, t: Type, constant: int | None, size: E.Expr
) -> tuple[bool, Stmt | None]:
    """(on the stack, a run-time size check) for an allocation of `size` elements of t
    (`constant` when known) of Func `func`, whose store_in() asked for `memory`. GPUShared
    (target opencl only) is placed by the OpenCL backend; here it counts as Auto."""
    if memory in (MemoryType.AUTO, MemoryType.GPU_SHARED):
        return constant is not None and constant * max(t.bits // 8, 1) <= STACK_LIMIT_BYTES, None
    if memory is MemoryType.HEAP:
        return False, None
    return _stack_placement(func, memory, t, constant, size)


def _stack_placement(
    func: str, memory: MemoryType, t: Type, constant: int | None, size: E.Expr
) -> tuple[bool, Stmt | None]:
    """(on the stack, a run-time size check) for storage placed by store_in(Stack/Register)."""
    elem_bytes = max(t.bits // 8, 1)
    where = f"store_in(MemoryType.{memory.halide_name}) of Func `{func}`"
    if constant is not None:
        if constant * elem_bytes > STACK_REQUEST_LIMIT_BYTES:
            raise ScheduleError(
                f"{where}: its storage is {constant * elem_bytes} bytes, more than the {STACK_REQUEST_LIMIT_BYTES} "
                "bytes Pixelweave puts on a stack; use MemoryType.Heap or compute it at an inner loop"
            )
        return True, None
    if memory is MemoryType.REGISTER:
        raise ScheduleError(
            f"{where}: register storage needs a constant size, and this one depends on the region computed; "
            "bound() or bound_extent() its dimensions, or use MemoryType.Stack (CPU targets) or Heap"
        )
    total = E.Mul(widen(size), E.Const(I64, elem_bytes))
    check = AssertStmt(
        E.LE(total, E.Const(I64, STACK_REQUEST_LIMIT_BYTES)),
        f"{where}: its storage would be {{}} bytes, more than the {STACK_REQUEST_LIMIT_BYTES} bytes Pixelweave "
        "puts on a stack; use MemoryType.Heap or compute it at an inner loop",
        (total,),
    )
    return True, check


def _substitute_lets(e: E.Expr, lets: list[tuple[str, E.Expr]]) -> E.Expr:
    from pixelweave.engine.ir.visit import substitute

    for name, value in reversed(lets):
        e = substitute(e, {name: value})
    return e


def _alias_condition(name: str) -> E.Variable:
    return E.Variable(f"{name}.is_output", Bool(), "param")


def _same_region(name: str, output: str, dims: int) -> E.Expr:
    """Whether the output buffer holds exactly the region of storage `name`, with its strides."""
    same: E.Expr = E.Const(Bool(), True)
    for i in range(dims):
        for field in ("min", "extent", "stride"):
            same = E.And(same, E.EQ(_v(f"{output}.{field}.{i}"), _v(f"{name}.{field}.{i}")))
    return same


class _SkipCopyWhenAliased(StmtMutator):
    """Around the copy into an output: nothing to copy when the storage computed is the output."""

    def __init__(self, output: str, aliased: E.Variable) -> None:
        self.output, self.aliased = output, aliased

    def visit_ProducerConsumer(self, s: ProducerConsumer) -> Stmt:  # noqa: N802
        if s.is_producer and s.name == self.output:
            return IfThenElse(E.Not(self.aliased), s)
        return self.default(s)
