"""The loop-nest IR that lowering produces and backends consume.

Statements (For, LetStmt, Block, ProducerConsumer, Realize, Provide, Allocate, Store,
AssertStmt, IfThenElse, Evaluate) and the expression nodes that exist only in lowered code
(Load, Ramp, Broadcast). Realize/Provide and Func calls are multi-dimensional and disappear
in storage flattening, which turns them into Allocate/Store/Load with one flat index.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int, Type


class ForType(Enum):
    SERIAL = "for"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    GPU_BLOCK = "gpu_block"
    GPU_THREAD = "gpu_thread"


# ---------------------------------------------------------------------------- expressions


class Load(E.Expr):
    """Read `buffer[index]` from flat storage; a vector index gives a vector of lanes."""

    __slots__ = ("buffer", "index")

    def __init__(self, t: Type, buffer: str, index: E.Expr) -> None:
        self._init(_type=t, buffer=buffer, index=index)

    def _fields(self) -> tuple:
        return (self.buffer,)

    def children(self) -> tuple[E.Expr, ...]:
        return (self.index,)

    def with_children(self, children: tuple[E.Expr, ...]) -> Load:
        return Load(self.type(), self.buffer, children[0])

    def to_string(self, fmt) -> str:
        return f"{self.buffer}[{fmt(self.index)}]"


class Ramp(E.Expr):
    """The vector base, base + stride, ..., base + (lanes - 1) * stride."""

    __slots__ = ("base", "lanes", "stride")

    def __init__(self, base: E.Expr, stride: E.Expr, lanes: int) -> None:
        self._init(_type=base.type().with_lanes(lanes), base=base, stride=stride, lanes=lanes)

    def _fields(self) -> tuple:
        return (self.lanes,)

    def children(self) -> tuple[E.Expr, ...]:
        return (self.base, self.stride)

    def with_children(self, children: tuple[E.Expr, ...]) -> Ramp:
        return Ramp(children[0], children[1], self.lanes)

    def to_string(self, fmt) -> str:
        return f"ramp({fmt(self.base)}, {fmt(self.stride)}, {self.lanes})"


class Broadcast(E.Expr):
    """A scalar repeated in every lane of a vector."""

    __slots__ = ("lanes", "value")

    def __init__(self, value: E.Expr, lanes: int) -> None:
        self._init(_type=value.type().with_lanes(lanes), value=value, lanes=lanes)

    def _fields(self) -> tuple:
        return (self.lanes,)

    def children(self) -> tuple[E.Expr, ...]:
        return (self.value,)

    def with_children(self, children: tuple[E.Expr, ...]) -> Broadcast:
        return Broadcast(children[0], self.lanes)

    def to_string(self, fmt) -> str:
        return f"x{self.lanes}({fmt(self.value)})"


# ---------------------------------------------------------------------------- statements


class Stmt:
    """Base class of statements; immutable, rebuilt by passes."""

    __slots__ = ()

    def children(self) -> tuple[Any, ...]:
        """Sub-statements and expressions, in a fixed order matching `with_children`."""
        return ()

    def __str__(self) -> str:
        from pixelweave.engine.stmt_printer import stmt_to_string

        return stmt_to_string(self)


class LetStmt(Stmt):
    __slots__ = ("body", "name", "value")

    def __init__(self, name: str, value: E.Expr, body: Stmt) -> None:
        self.name, self.value, self.body = name, value, body

    def children(self):
        return (self.value, self.body)

    def with_children(self, c) -> LetStmt:
        return LetStmt(self.name, c[0], c[1])


class AssertStmt(Stmt):
    """Fail the pipeline with an error if condition is false.

    The message is a template with `{}` holes filled, in order, by the values of args
    (integer expressions), so that the backend can report run-time values.
    """

    __slots__ = ("args", "condition", "message")

    def __init__(self, condition: E.Expr, message: str, args: tuple[E.Expr, ...] = ()) -> None:
        self.condition, self.message, self.args = condition, message, tuple(args)

    def children(self):
        return (self.condition, *self.args)

    def with_children(self, c) -> AssertStmt:
        return AssertStmt(c[0], self.message, tuple(c[1:]))


class For(Stmt):
    __slots__ = ("body", "extent", "for_type", "min", "name")

    def __init__(self, name: str, min: E.Expr, extent: E.Expr, for_type: ForType, body: Stmt) -> None:  # noqa: A002
        self.name, self.min, self.extent, self.for_type, self.body = name, min, extent, for_type, body

    def children(self):
        return (self.min, self.extent, self.body)

    def with_children(self, c) -> For:
        return For(self.name, c[0], c[1], self.for_type, c[2])


class Block(Stmt):
    __slots__ = ("stmts",)

    def __init__(self, stmts: tuple[Stmt, ...] | list[Stmt]) -> None:
        flat: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Block):
                flat.extend(s.stmts)
            elif s is not None:
                flat.append(s)
        self.stmts = tuple(flat)

    def children(self):
        return self.stmts

    def with_children(self, c) -> Stmt:
        return make_block(list(c))


def make_block(stmts: list[Stmt | None]) -> Stmt:
    kept = [s for s in stmts if s is not None and not (isinstance(s, Block) and not s.stmts)]
    if len(kept) == 1:
        return kept[0]
    return Block(kept)


class ProducerConsumer(Stmt):
    """Marks the statements that produce a Func (`produce f`) or consume it (`consume f`)."""

    __slots__ = ("body", "is_producer", "name")

    def __init__(self, name: str, is_producer: bool, body: Stmt) -> None:
        self.name, self.is_producer, self.body = name, is_producer, body

    def children(self):
        return (self.body,)

    def with_children(self, c) -> ProducerConsumer:
        return ProducerConsumer(self.name, self.is_producer, c[0])


class Realize(Stmt):
    """Multi-dimensional storage for a Func over bounds [(min, extent), ...] within body.

    folds maps a dimension to a circular-buffer size (storage folding): coordinate c of
    that dimension lives at c mod size.
    """

    __slots__ = ("body", "bounds", "folds", "name", "type")

    def __init__(
        self,
        name: str,
        t: Type,
        bounds: tuple[tuple[E.Expr, E.Expr], ...],
        body: Stmt,
        folds: dict[int, int] | None = None,
    ) -> None:
        self.name, self.type, self.bounds, self.body = name, t, tuple(bounds), body
        self.folds = dict(folds or {})

    def children(self):
        return (*[e for b in self.bounds for e in b], self.body)

    def with_children(self, c) -> Realize:
        n = len(self.bounds)
        bounds = tuple((c[2 * i], c[2 * i + 1]) for i in range(n))
        return Realize(self.name, self.type, bounds, c[2 * n], self.folds)


class Provide(Stmt):
    """Multi-dimensional store `name(args) = value`; value_index is the element stored of a
    Func that returns a Tuple (each element has storage of its own, `name.i`)."""

    __slots__ = ("args", "atomic", "name", "value", "value_index")

    def __init__(
        self, name: str, value: E.Expr, args: tuple[E.Expr, ...], value_index: int = 0, atomic: str | None = None
    ) -> None:
        self.name, self.value, self.args, self.value_index = name, value, tuple(args), value_index
        self.atomic = atomic  # "add", "sub", "min" or "max": combine value into the point atomically

    def children(self):
        return (self.value, *self.args)

    def with_children(self, c) -> Provide:
        return Provide(self.name, c[0], tuple(c[1:]), self.value_index, self.atomic)


class Allocate(Stmt):
    """Flat scratch storage of `size` elements for body; freed when body ends (or fails).

    on_stack is decided by lowering: small allocations of constant size live on the stack.
    output_alias, (output buffer, condition): the storage of a Func computed for an output
    (and copied into it) is that output buffer itself, and nothing is allocated, whenever
    the condition holds (the buffer holds exactly the region computed, with its strides).
    """

    __slots__ = ("body", "name", "on_stack", "output_alias", "size", "type")

    def __init__(
        self,
        name: str,
        t: Type,
        size: E.Expr,
        on_stack: bool,
        body: Stmt,
        output_alias: tuple[str, E.Expr] | None = None,
    ) -> None:
        self.name, self.type, self.size, self.on_stack, self.body = name, t, size, on_stack, body
        self.output_alias = output_alias

    def children(self):
        return (self.size, self.body) if self.output_alias is None else (self.size, self.body, self.output_alias[1])

    def with_children(self, c) -> Allocate:
        alias = None if self.output_alias is None else (self.output_alias[0], c[2])
        return Allocate(self.name, self.type, c[0], self.on_stack, c[1], alias)


# The intrinsic (an Evaluate of a Call of no arguments) that orders every streaming store
# before it with every store after it (streaming_stores.py places it).
STORE_FENCE = "streaming_store_fence"
# The narrowest vector store that streams (a non-temporal store of SSE's 16 bytes; LLVM
# splits a narrower non-temporal vector into scalar stores).
STREAMING_MIN_VECTOR_BYTES = 16


class Store(Stmt):
    """Flat store `buffer[index] = value` (vector index and value for vector stores).

    `streaming`, where set, is a per-call condition under which the store may bypass the
    caches (a non-temporal store: streaming_stores.py)."""

    __slots__ = ("atomic", "buffer", "index", "streaming", "value")

    def __init__(
        self, buffer: str, value: E.Expr, index: E.Expr, atomic: str | None = None, streaming: E.Expr | None = None
    ) -> None:
        self.buffer, self.value, self.index = buffer, value, index
        self.atomic = atomic  # as Provide.atomic: an atomic read-modify-write of the element
        self.streaming = streaming

    def children(self):
        return (self.value, self.index) if self.streaming is None else (self.value, self.index, self.streaming)

    def with_children(self, c) -> Store:
        return Store(self.buffer, c[0], c[1], self.atomic, c[2] if len(c) > 2 else None)


class IfThenElse(Stmt):
    """`fast_path`: then_case computes what else_case computes, faster, where condition
    holds (boundary_fast_path.py), so else_case alone may stand for the whole statement."""

    __slots__ = ("condition", "else_case", "fast_path", "then_case")

    def __init__(
        self, condition: E.Expr, then_case: Stmt, else_case: Stmt | None = None, fast_path: bool = False
    ) -> None:
        self.condition, self.then_case, self.else_case = condition, then_case, else_case
        self.fast_path = fast_path and else_case is not None

    def children(self):
        return (self.condition, self.then_case) + ((self.else_case,) if self.else_case is not None else ())

    def with_children(self, c) -> IfThenElse:
        return IfThenElse(c[0], c[1], c[2] if len(c) > 2 else None, self.fast_path)


class Evaluate(Stmt):
    __slots__ = ("value",)

    def __init__(self, value: E.Expr) -> None:
        self.value = value

    def children(self):
        return (self.value,)

    def with_children(self, c) -> Evaluate:
        return Evaluate(c[0])


def no_op() -> Stmt:
    return Evaluate(E.Const(Int(32), 0))


def constant_int(e: E.Expr) -> int | None:
    """The integer value of a constant (or a broadcast constant), else None."""
    while isinstance(e, Broadcast):
        e = e.value
    if isinstance(e, E.Const) and not e.type().is_float():
        return int(e.value)
    return None
