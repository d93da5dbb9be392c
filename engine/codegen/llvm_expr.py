"""Expressions and memory access of the LLVM backend (a part of the code generator).

`ExprCodeGen` turns expression trees into instructions of the current function: scalar
and vector arithmetic (through llvm_semantics for the total operations), Ramp and
Broadcast, and loads and stores: dense vector accesses for stride-1 ramps, one dense load
plus a shuffle for small constant strides, two half-width dense loads and an interleaving
shuffle for ramp(b, 1, n) / 2 (+ an offset), dense loads and a shuffle per residue for
indices that repeat a pattern (llvm_periodic_load), a masked dense load for a ramp clamped
to the image (llvm_clamped_load), byte permutes for a lookup into a small table
(llvm_table_lookup), LLVM gathers and scatters otherwise. Bools
are i1 in registers and bytes in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pixelweave.engine.codegen.llvm_address import WideValue, exact_index64, wide_let
from pixelweave.engine.codegen.llvm_clamped_load import clamped_load, clamped_ramp
from pixelweave.engine.codegen.llvm_gather import gather, scatter
from pixelweave.engine.codegen.llvm_invariant_divide import divide_by_broadcast, divides_by_broadcast
from pixelweave.engine.codegen.llvm_ir import (
    FunctionBuilder,
    ModuleBuilder,
    Value,
    const,
    element_bytes,
    int_const,
    lanes_of,
    llvm_type,
    memory_scalar_type,
    memory_type,
    scalar_type,
    shuffle_operands,
    vector_of,
)
from pixelweave.engine.codegen.llvm_periodic_load import periodic_index, periodic_load
from pixelweave.engine.codegen.llvm_semantics import Semantics
from pixelweave.engine.codegen.llvm_streaming_store import store_fence, streamed_alignment, streaming_store, streams_on
from pixelweave.engine.codegen.llvm_table_lookup import table_lookup, table_window
from pixelweave.engine.codegen.llvm_vector_math import VectorMath, uses_vector_math
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.debug_calls import DEBUG_CALL_PREFIXES, DEBUG_HOOKS
from pixelweave.engine.ir.memoize_calls import BUFFER_ADDRESS_PREFIX, MEMOIZE_CALL_PREFIXES, MEMOIZE_HOOKS
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.stmt import STORE_FENCE, Broadcast, Load, Ramp, Store, constant_int

if TYPE_CHECKING:
    from pixelweave.engine.codegen.llvm import _Function

_I32 = Int(32)

_UNARY_MATH = {
    "sqrt": "llvm.sqrt",
    "exp": "llvm.exp",
    "log": "llvm.log",
    "sin": "llvm.sin",
    "cos": "llvm.cos",
    "tan": "llvm.tan",
    "asin": "llvm.asin",
    "acos": "llvm.acos",
    "atan": "llvm.atan",
    "sinh": "llvm.sinh",
    "cosh": "llvm.cosh",
    "tanh": "llvm.tanh",
    "floor": "llvm.floor",
    "ceil": "llvm.ceil",
    "round": "llvm.roundeven",
    "trunc": "llvm.trunc",
}


_ARITH_OPS = {E.Add: "add", E.Sub: "sub", E.Mul: "mul"}


@dataclass
class BufferRef:
    """A buffer visible in the code: its base pointer and element type."""

    pointer: Value
    type: Type
    # With checked code: the valid flat indices [lo, hi) as i64 values (None: unchecked).
    lo: Value | None = None
    hi: Value | None = None


class ExprCodeGen:
    """Expression code generation; the statement generator in llvm.py derives from it and
    provides `fn` (the function being generated), `module` and `_memo`."""

    fn: _Function
    module: ModuleBuilder
    _memo: dict[tuple, Value] | None
    producing: list[str]  # the Funcs whose production encloses the code being generated
    table_lookups: bool  # the target has byte permutes (llvm_table_lookup)
    constant_sizes: dict[str, int]  # element counts of the constant-size allocations in scope
    # Fail the pipeline with message unless ok (the statement generator provides it).
    _report_bad_access: Callable[[Value, str, list[tuple[Value, Type | None]]], None]

    def _init_expressions(self) -> None:
        """The handler of each expression node type (exact types: no isinstance chains)."""
        self._expr_dispatch: dict[type, Callable[[E.Expr], Value]] = {
            E.Const: self._const,
            E.Variable: self._variable,
            E.Cast: self._cast_expr,
            E.Add: self._arith,
            E.Sub: self._arith,
            E.Mul: self._arith,
            E.Div: self._div,
            E.Mod: self._mod,
            E.Min: self._min_max,
            E.Max: self._min_max,
            E.EQ: self._compare,
            E.NE: self._compare,
            E.LT: self._compare,
            E.LE: self._compare,
            E.GT: self._compare,
            E.GE: self._compare,
            E.And: self._logical,
            E.Or: self._logical,
            E.Not: self._not,
            E.Select: self._select,
            E.Let: self._let,
            E.Call: self._call,
            Load: self._load,
            Ramp: self._ramp,
            Broadcast: self._broadcast,
        }

    @property
    def b(self) -> FunctionBuilder:
        return self.fn.builder

    @property
    def ops(self) -> Semantics:
        return Semantics(self.fn.builder, self.module)

    # ====================================================================== memory
    def _buffer(self, name: str) -> BufferRef:
        ref = self.fn.buffers.get(name)
        if ref is None:
            raise CompileError(f"buffer `{name}` is not an argument or an enclosing allocation")
        return ref

    def _store(self, s: Store) -> None:
        ref = self._buffer(s.buffer)
        value = self._expr(s.value, hint=f"{s.buffer}.value")
        self._check_access(ref, s.buffer, s.index, "store to")
        t = s.value.type().with_lanes(lanes_of(value.ty))
        if t.is_bool():
            value = self.b.convert("zext", value, vector_of("i8", t.lanes))
        elem = memory_scalar_type(t.element_of())
        align = element_bytes(t)
        b = self.b
        if t.lanes == 1:
            p = b.gep(elem, ref.pointer, self._address(s.index), f"{s.buffer}.addr")
            if s.atomic is not None:
                op = _atomic_rmw(s.atomic, t)
                b.assign(elem, f"atomicrmw {op} ptr {p.ref}, {value} monotonic, align {align}", f"{s.buffer}.old")
                return
            b.store(value, p, align)
            return
        if s.atomic is not None:
            raise CompileError(f"the atomic update of `{s.buffer}` reached the backend as a vector store")
        idx = s.index
        if isinstance(idx, Ramp) and constant_int(idx.stride) == 1:
            p = b.gep(elem, ref.pointer, self._address(idx.base), f"{s.buffer}.addr")
            streamed = streamed_alignment(t.lanes * align) if s.streaming is not None else None
            if streamed is not None and streams_on(self.module.triple):
                streaming_store(b, value, p, self._expr(s.streaming, hint="streaming"), streamed, align)
            else:
                b.store(value, p, align)
            return
        scatter(b, self.module, value, elem, ref.pointer, self._index64(self._expr(idx, hint="index")), align)

    def _check_access(self, ref: BufferRef, buffer: str, index: E.Expr, what: str) -> None:
        """In checked code, fail unless every lane of index lies in [ref.lo, ref.hi)."""
        if ref.lo is None or ref.hi is None:
            return
        b = self.b
        idx = self._expr(index, hint="index")
        lo, hi = idx, idx
        if idx.ty.startswith("<"):
            lanes = lanes_of(idx.ty)
            smin = self.module.intrinsic(f"llvm.vector.reduce.smin.v{lanes}i32", "i32", [idx.ty])
            smax = self.module.intrinsic(f"llvm.vector.reduce.smax.v{lanes}i32", "i32", [idx.ty])
            lo, hi = b.call("i32", smin, [idx], "index_min"), b.call("i32", smax, [idx], "index_max")
        lo64, hi64 = self._index64(lo), self._index64(hi)
        ok = b.binop("and", b.icmp("sge", lo64, ref.lo), b.icmp("slt", hi64, ref.hi), "in_bounds")
        producing = self.producing[-1] if self.producing else "the pipeline"
        where = f"`{producing}`" if self.producing else producing
        self._report_bad_access(
            ok,
            f"checked access: {what} `{buffer}` at flat index {{}}..{{}} outside its storage [{{}}, {{}}) "
            f"while computing {where}",
            [(lo64, Int(64)), (hi64, Int(64)), (ref.lo, Int(64)), (ref.hi, Int(64))],
        )

    def _address(self, index: E.Expr) -> Value:
        """The i64 element index of a scalar int32 index expression (exact where it fits:
        llvm_address), so that LLVM can step pointers through loops."""
        return exact_index64(index, self.b, lambda e: self._expr(e, hint="index"), self.fn.wide_lets, self._memo)

    def _wide_let(self, value: E.Expr) -> WideValue | None:
        """The i64 form of a scalar int32 let's value, for the addresses that use it."""
        return wide_let(value, self.b, lambda e: self._expr(e, hint="index"), self.fn.wide_lets, self._memo)

    def _index64(self, index: Value) -> Value:
        ty = "i64" if not index.ty.startswith("<") else index.ty.replace("i32", "i64")
        return self.b.convert("sext", index, ty, "idx")

    # ====================================================================== expressions
    def _expr(self, e: E.Expr, hint: str = "t") -> Value:
        """The value of e. Expression code is straight-line (no branches), so a subtree met
        twice within one top-level expression, the same node or an equal one, reuses its
        first value: inferred bounds repeat subtrees a lot, and emitting them as trees
        multiplied the IR LLVM had to clean up (the "fast" level runs no CSE pass)."""
        memo = self._memo
        if memo is None:  # a top-level expression: its own memo, dropped when it is done
            self._memo = {}
            try:
                return self._expr(e, hint)
            finally:
                self._memo = None
        handler = self._expr_dispatch.get(type(e))
        if handler is None:
            raise CompileError(f"the LLVM backend cannot compile a {type(e).__name__} expression (lowering left it)")
        if not e.children():
            return handler(e)  # a leaf: as cheap to emit again as to look up
        key = e.key()
        hit = memo.get(key)
        if hit is not None:
            return hit
        value = handler(e)
        self._memo[key] = value
        return value

    def _const(self, e: E.Const) -> Value:
        return const(e.type(), e.value)

    def _variable(self, e: E.Variable) -> Value:
        v = self.fn.scope.get(e.name)
        if v is None:
            raise CompileError(f"variable `{e.name}` is used but not defined in the lowered statement")
        expected = llvm_type(e.type())
        if v.ty != expected:
            raise CompileError(f"variable `{e.name}` has type {e.type()} here but was bound to a {v.ty} value")
        return v

    def _let(self, e: E.Let) -> Value:
        value = self._expr(e.value, hint=e.name)
        outer_memo, self._memo = self._memo, {}  # inside, nodes may see another binding
        try:
            with self._bound(e.name, value, self._halved_ramp(e.value) if e.value.type().is_vector() else None):
                return self._expr(e.body)
        finally:
            self._memo = outer_memo

    # ------------------------------------------------------------------ casts
    def _cast_expr(self, e: E.Cast) -> Value:
        v = self._expr(e.value)
        lanes = lanes_of(v.ty)
        return self.ops.cast(v, e.value.type().with_lanes(lanes), e.type().with_lanes(lanes))

    # ------------------------------------------------------------------ arithmetic
    def _arith(self, e: E.BinaryOp) -> Value:
        a, c = self._expr(e.a), self._expr(e.b)
        op = _ARITH_OPS[type(e)]
        if e.type().is_float():
            # Like Halide, allow multiply-adds to fuse (FMA) unless strict: one rounding
            # instead of two, never a NaN or poison that the unfused form would not give.
            flags = "" if self.strict_float else " contract"
            return self.b.binop(f"f{op}{flags}", a, c, "f" + op)
        return self.b.binop(op, a, c, op)

    def _div(self, e: E.Div) -> Value:
        t = e.type()
        if self._by_broadcast(e):
            return divide_by_broadcast(self.b, self.module, self._expr(e.a), self._expr(e.b.value), t, remainder=False)
        a, d = self._expr(e.a), self._expr(e.b)
        if t.is_float():
            return self.b.binop("fdiv", a, d, "fdiv")
        return self.ops.int_div(a, d, t, constant_int(e.b))

    def _mod(self, e: E.Mod) -> Value:
        t = e.type()
        if self._by_broadcast(e):
            return divide_by_broadcast(self.b, self.module, self._expr(e.a), self._expr(e.b.value), t, remainder=True)
        a, d = self._expr(e.a), self._expr(e.b)
        if t.is_float():
            return self.ops.float_mod(a, d, t)
        return self.ops.int_mod(a, d, t, constant_int(e.b))

    @staticmethod
    def _by_broadcast(e: E.Div | E.Mod) -> bool:
        """A vector divided by one run-time value in every lane (llvm_invariant_divide.py)."""
        return isinstance(e.b, Broadcast) and constant_int(e.b) is None and divides_by_broadcast(e.type())

    def _min_max(self, e: E.BinaryOp) -> Value:
        a, c = self._expr(e.a), self._expr(e.b)
        return self.ops.min_max(a, c, e.type().with_lanes(lanes_of(a.ty)), isinstance(e, E.Min))

    def _compare(self, e: E.Compare) -> Value:
        t = e.a.type()
        a, c = self._expr(e.a), self._expr(e.b)
        kind = type(e)
        if t.is_float():
            pred = {E.EQ: "oeq", E.NE: "une", E.LT: "olt", E.LE: "ole", E.GT: "ogt", E.GE: "oge"}[kind]
            return self.b.fcmp(pred, a, c)
        sign = "s" if t.is_int() else "u"
        pred = {E.EQ: "eq", E.NE: "ne", E.LT: "lt", E.LE: "le", E.GT: "gt", E.GE: "ge"}[kind]
        if pred not in ("eq", "ne"):
            pred = sign + pred
        return self.b.icmp(pred, a, c)

    def _logical(self, e: E.BinaryOp) -> Value:
        a, c = self._expr(e.a), self._expr(e.b)
        return self.b.binop("and" if isinstance(e, E.And) else "or", a, c, "logic")

    def _not(self, e: E.Not) -> Value:
        # Compare and Not claim a scalar bool type even for vector operands: trust the value.
        a = self._expr(e.a)
        return self.b.binop("xor", a, const(Type("uint", 1, lanes_of(a.ty)), 1), "not")

    def _select(self, e: E.Select) -> Value:
        cond = self._expr(e.cond)
        return self.b.select(cond, self._expr(e.true_value), self._expr(e.false_value))

    # ------------------------------------------------------------------ vectors
    def _ramp(self, e: Ramp) -> Value:
        t = e.type()
        if t.lanes == 1:
            return self._expr(e.base)
        base = self._splat(self._expr(e.base), t)
        stride = constant_int(e.stride)
        if stride is not None and not t.is_float():
            offsets = self._vector_literal(t, [k * stride for k in range(t.lanes)])
            return self.b.binop("add", base, offsets, "ramp")
        step = self._splat(self._expr(e.stride), t)
        lanes = self._vector_literal(t, list(range(t.lanes)))
        op, mul = ("fadd", "fmul") if t.is_float() else ("add", "mul")
        return self.b.binop(op, base, self.b.binop(mul, step, lanes), "ramp")

    def _vector_literal(self, t: Type, values: list[int | float]) -> Value:
        elem = t.element_of()
        items = ", ".join(f"{const(elem, v)}" for v in values)
        return Value(llvm_type(t), f"<{items}>")

    def _broadcast(self, e: Broadcast) -> Value:
        if e.value.type().lanes != 1:
            raise CompileError(f"broadcast of the vector {e.value} is not supported")
        if e.lanes == 1:
            return self._expr(e.value)
        if isinstance(e.value, E.Const):
            return const(e.type(), e.value.value)
        return self._splat(self._expr(e.value), e.type())

    def _splat(self, scalar: Value, t: Type) -> Value:
        """scalar in every lane of a vector of type t (scalar itself when t has one lane)."""
        if t.lanes == 1 or scalar.ty.startswith("<"):
            return scalar
        ty = vector_of(scalar.ty, t.lanes)
        one = self.b.assign(ty, f"insertelement {ty} poison, {scalar}, i64 0", "splat")
        return self.b.assign(ty, f"shufflevector {one}, {ty} poison, <{t.lanes} x i32> zeroinitializer", "splat")

    def _load(self, e: Load) -> Value:
        ref = self._buffer(e.buffer)
        self._check_access(ref, e.buffer, e.index, "load from")
        t = e.type()
        elem = memory_scalar_type(t.element_of())
        align = element_bytes(t)
        b = self.b
        if t.lanes == 1:
            p = b.gep(elem, ref.pointer, self._address(e.index), f"{e.buffer}.addr")
            return self._from_memory(b.load(elem, p, align, e.buffer), t)
        idx = e.index
        stride = constant_int(idx.stride) if isinstance(idx, Ramp) else None
        if isinstance(idx, Broadcast) or stride == 0:
            scalar_index = idx.value if isinstance(idx, Broadcast) else idx.base
            p = b.gep(elem, ref.pointer, self._address(scalar_index), f"{e.buffer}.addr")
            scalar = self._from_memory(b.load(elem, p, align, e.buffer), t.element_of())
            return self._splat(scalar, t)
        if isinstance(idx, Ramp) and stride is not None and 1 <= abs(stride) <= 4:
            return self._strided_dense_load(ref, e.buffer, idx, stride, t)
        halved = self._halved_ramp(idx) if t.lanes % 2 == 0 and t.lanes >= 4 else None  # two vectors of n/2
        if halved is not None:
            return self._halved_load(ref, e.buffer, halved[0], halved[1], t)
        clamped = clamped_ramp(idx)  # a row's edge clamped to the image: one masked dense load
        if clamped is not None:
            value = clamped_load(b, self.module, elem, clamped, ref.pointer, self._expr, self._address, align, e.buffer)
            return self._from_memory(value, t)
        plan = periodic_index(idx, t.lanes)  # a repeating pattern: dense loads and a shuffle
        if plan is not None:
            residue = self._expr(plan.residue, hint="index") if plan.residue is not None else None
            first = self._address(plan.first_lane)
            loaded = periodic_load(b, elem, ref.pointer, first, residue, plan, t.lanes, align, e.buffer)
            if loaded is not None:
                return self._from_memory(loaded, t)
        if self.table_lookups and elem == "i8" and idx.type().bits == 32:
            size = self.constant_sizes.get(e.buffer)
            window = table_window(idx, t.lanes, size)
            if window is not None and size is not None:  # a small byte table: permutes in registers
                index = self._expr(idx, hint="index")
                return self._from_memory(table_lookup(b, self.module, ref.pointer, size, window, index, e.buffer), t)
        index64 = self._index64(self._expr(idx, hint="index"))
        return self._from_memory(gather(b, self.module, memory_type(t), elem, ref.pointer, index64, align), t)

    def _strided_dense_load(self, ref: BufferRef, buffer: str, idx: Ramp, stride: int, t: Type) -> Value:
        """Lanes base + k*stride for small |stride|: dense loads of exactly the span they
        cover, then a shuffle picking every stride-th element (never reads outside it)."""
        b = self.b
        elem = memory_scalar_type(t.element_of())
        lanes = t.lanes
        span = (lanes - 1) * abs(stride) + 1
        first = idx.base if stride > 0 else E.Add(idx.base, E.Const(_I32, (lanes - 1) * stride))
        start = self._address(first)
        picks = [k * stride if stride > 0 else span - 1 + k * stride for k in range(lanes)]
        if span > lanes >= 4 and lanes & (lanes - 1) == 0:
            return self._from_memory(self._picked_from_chunks(ref, buffer, elem, start, span, picks, t), t)
        p = b.gep(elem, ref.pointer, start, f"{buffer}.addr")
        span_ty = vector_of(elem, span)
        block = b.load(span_ty, p, element_bytes(t), buffer)
        if span == lanes and stride == 1:
            return self._from_memory(block, t)
        mask = ", ".join(f"i32 {i}" for i in picks)
        picked = b.assign(
            memory_type(t), f"shufflevector {block}, {span_ty} poison, <{lanes} x i32> <{mask}>", "strided"
        )
        return self._from_memory(picked, t)

    def _picked_from_chunks(
        self, ref: BufferRef, buffer: str, elem: str, start: Value, span: int, picks: list[int], t: Type
    ) -> Value:
        """Elements `picks` (offsets from start) of a span longer than one vector, read as
        full vectors of the result's width: at offsets 0, w, 2w, ... and the last one ending
        exactly at the span's end (overlapping the one before). A span of 2w - 1 (stride 2)
        was one odd-sized load, which x86 assembled from a dozen partial loads and inserts;
        here it is two loads and one two-source shuffle, and nothing outside the span is read."""
        b = self.b
        width = t.lanes
        chunk_ty = vector_of(elem, width)
        starts = [min(k * width, span - width) for k in range(-(-span // width))]
        chunks = []
        for offset in starts:
            at = start if offset == 0 else b.binop("add", start, int_const(64, offset), "chunk")
            chunks.append(b.load(chunk_ty, b.gep(elem, ref.pointer, at, f"{buffer}.addr"), element_bytes(t), buffer))
        where = []
        for p in picks:
            j = min(p // width, len(chunks) - 1)
            where.append(j * width + p - starts[j])
        first, second = shuffle_operands(b, chunks, elem, width, "span")
        mask = ", ".join(f"i32 {i}" for i in where)
        return b.assign(
            memory_type(t), f"shufflevector {first}, {second}, <{width} x i32> <{mask}>", "strided"
        )

    def _halved_ramp(self, e: E.Expr) -> tuple[Value, Value | None] | None:
        """(b, offset) when the int32 vector index e is ramp(b, 1, lanes) / 2 + x(offset)
        (offset None: zero), seeing through vector lets; else None. Such an index (f[x / 2]
        in a loop vectorized over x, as a demosaic reads its half-resolution planes) names
        each element twice, and a gather would fetch every lane on its own."""
        if isinstance(e, E.Variable):
            return self.fn.halved_ramps.get(e.name)
        if e.type().element_of() != _I32:
            return None
        if isinstance(e, E.Div) and isinstance(e.a, Ramp) and constant_int(e.b) == 2:
            return (self._expr(e.a.base, hint="index"), None) if constant_int(e.a.stride) == 1 else None
        if not isinstance(e, (E.Add, E.Sub)):
            return None
        candidates = [(e.a, e.b)] if isinstance(e, E.Sub) else [(e.a, e.b), (e.b, e.a)]
        for vector, scalar in candidates:
            if not isinstance(scalar, Broadcast):
                continue
            inner = self._halved_ramp(vector)
            if inner is None:
                continue
            b = self.b
            amount = self._expr(scalar.value, hint="index")
            if isinstance(e, E.Sub):
                amount = b.binop("sub", int_const(32, 0), amount, "neg")
            offset = amount if inner[1] is None else b.binop("add", inner[1], amount, "offset")
            return inner[0], offset
        return None

    def _halved_load(self, ref: BufferRef, buffer: str, base: Value, offset: Value | None, t: Type) -> Value:
        """Lanes k = 0 .. n-1 of buffer[(b + k) / 2 + offset] (floor division): the even
        lanes are the n/2 elements from b / 2 + offset, the odd lanes the n/2 from there
        plus b's parity (b odd: one further); two dense loads of elements that some lane
        reads (never outside the lanes' span) and one interleaving shuffle."""
        b = self.b
        half = t.lanes // 2
        elem = memory_scalar_type(t.element_of())
        start = b.binop("ashr", base, int_const(32, 1), "half")
        if offset is not None:
            start = b.binop("add", start, offset, "half")
        odd_start = b.binop("add", start, b.binop("and", base, int_const(32, 1), "parity"), "odd")
        half_ty = vector_of(elem, half)
        align = element_bytes(t)
        even = b.load(half_ty, b.gep(elem, ref.pointer, self._index64(start), f"{buffer}.addr"), align, buffer)
        odd = b.load(half_ty, b.gep(elem, ref.pointer, self._index64(odd_start), f"{buffer}.addr"), align, buffer)
        mask = ", ".join(f"i32 {k // 2 + (half if k % 2 else 0)}" for k in range(t.lanes))
        both = b.assign(memory_type(t), f"shufflevector {even}, {odd}, <{t.lanes} x i32> <{mask}>", "interleaved")
        return self._from_memory(both, t)

    def _from_memory(self, v: Value, t: Type) -> Value:
        if t.is_bool():
            return self.b.icmp("ne", v, const(Type("uint", 8, t.lanes), 0), "bool")
        return v

    # ------------------------------------------------------------------ intrinsics
    def _vector_math(self, name: str, t: Type, args: list[Value]) -> Value:
        """exp, log, pow, sin, cos, atan2 of float32 vectors without per-lane libm calls."""
        vm = VectorMath(self.b, self.module, t)
        if name in ("sin", "cos"):
            return vm.sin_cos(args[0], want_sin=name == "sin")
        return getattr(vm, name)(*args)

    def _call(self, e: E.Call) -> Value:
        if e.call_kind != "intrinsic":
            raise CompileError(
                f"call to {e.call_kind} `{e.name}` reached the LLVM backend; lowering must turn it into a Load"
            )
        name = e.name
        t = e.type()
        if name.startswith(DEBUG_CALL_PREFIXES):
            return self._debug_call(e)
        if name.startswith(MEMOIZE_CALL_PREFIXES):
            return self._memoize_call(e)
        if name == STORE_FENCE:
            store_fence(self.b, self.module)
            return int_const(32, 0)
        if uses_vector_math(name, t):
            return self._vector_math(name, t, [self._expr(a) for a in e.args])
        if name in _UNARY_MATH:
            x = self._expr(e.args[0])
            if not t.is_float():
                raise CompileError(f"{name} needs a floating-point argument, got {t}")
            return self.ops.math_call(_UNARY_MATH[name], t, [x])
        if name in ("pow", "atan2"):
            return self.ops.math_call(f"llvm.{name}", t, [self._expr(a) for a in e.args])
        if name == "is_nan":
            x = self._expr(e.args[0])
            return self.b.fcmp("uno", x, x, "isnan")
        if name == "abs":
            return self.ops.abs(self._expr(e.args[0]), e.args[0].type())
        if name == "absd":
            return self.ops.absd(self._expr(e.args[0]), self._expr(e.args[1]), e.args[0].type())
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            a, c = self._expr(e.args[0]), self._expr(e.args[1])
            return self.b.binop(name.split("_")[1], a, c, name)
        if name == "bitwise_not":
            a = self._expr(e.args[0])
            return self.b.binop("xor", a, const(e.args[0].type(), -1), "bitnot")
        if name in ("shift_left", "shift_right"):
            known = constant_int(e.args[1])
            amount = self._expr(e.args[1]) if known is None else None
            left = name == "shift_left"
            return self.ops.shift(self._expr(e.args[0]), amount, t, e.args[1].type(), left, known)
        raise CompileError(f"the LLVM backend has no implementation of the intrinsic `{name}`")

    def _debug_call(self, e: E.Call) -> Value:
        """print / trace: every argument's bits go to the Python hook named by the call
        (once per vector lane), and argument 0 is the call's value."""
        b = self.b
        prefix, number = e.name.split("#", 1)
        hook = self.module.declare(DEBUG_HOOKS[prefix + "#"], "void (i64, ptr)")
        values = [self._expr(a) for a in e.args]
        lanes = max(lanes_of(v.ty) for v in values)
        slots = b.alloca_in_entry(f"[{len(values)} x i64]", 8, "debug")
        for lane in range(lanes):
            for i, (v, a) in enumerate(zip(values, e.args, strict=True)):
                scalar_t = a.type().element_of()
                if lanes_of(v.ty) > 1:
                    v = b.assign(scalar_type(scalar_t), f"extractelement {v}, i32 {lane}", "lane")
                ptr = b.gep("i64", slots, Value("i64", str(i)))
                b.store(self._as_i64_bits(v, scalar_t), ptr, 8)
            b.call("void", hook, [Value("i64", number), slots])
        return values[0]

    def _memoize_call(self, e: E.Call) -> Value:
        """memoize_lookup / memoize_store: the count of arguments, then every argument's
        bits, go to the Python hook (which returns an int32); buffer_address: a buffer's base."""
        b = self.b
        if e.name.startswith(BUFFER_ADDRESS_PREFIX):
            buffer = e.name[len(BUFFER_ADDRESS_PREFIX) :]
            ref = self.fn.buffers.get(buffer)
            if ref is None:
                raise CompileError(f"memoization reads the address of buffer `{buffer}`, which is not in scope")
            return b.convert("ptrtoint", ref.pointer, "i64", "address")
        prefix, number = e.name.split("#", 1)
        hook = self.module.declare(MEMOIZE_HOOKS[prefix + "#"], "i32 (i64, ptr)")
        values = [self._expr(a) for a in e.args]
        slots = b.alloca_in_entry(f"[{len(values) + 1} x i64]", 8, "memoize")
        b.store(int_const(64, len(values)), slots, 8)
        for i, (v, a) in enumerate(zip(values, e.args, strict=True)):
            if lanes_of(v.ty) > 1:
                raise CompileError(f"memoization passes the vector {a} to the runtime; it takes scalars only")
            b.store(self._as_i64_bits(v, a.type()), b.gep("i64", slots, Value("i64", str(i + 1))), 8)
        return b.call("i32", hook, [Value("i64", number), slots], "cache_result")

    def _as_i64_bits(self, v: Value, t: Type) -> Value:
        b = self.b
        if t.is_float():
            wide = b.convert("fpext", v, "double") if t.bits == 32 else v
            return b.convert("bitcast", wide, "i64")
        if t.bits == 64:
            return v
        return b.convert("sext" if t.is_int() else "zext", v, "i64")


def _atomic_rmw(op: str, t: Type) -> str:
    """The LLVM atomicrmw operation for an atomic() update of element type t."""
    if t.is_float():
        return {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}[op]
    if op in ("min", "max"):
        return op if t.is_int() else f"u{op}"
    return op
