"""Streaming (non-temporal) vector stores on x86, and the fence that orders them.

A non-temporal vector store must be aligned to its own width (16, 32 or 64 bytes): LLVM
turns a less aligned one into a scalar store per 8 bytes. Whether the address is aligned
is known only when the pipeline runs (the output buffer's address and row stride, the
loop's start), so each marked store tests it, with the per-call condition of its output
(engine/lower/streaming_stores.py), and stores plainly when either fails. Both branches
are loop-invariant in the common case (a row of a dense output advances by whole vectors),
so the test is predicted, and LLVM may unswitch it.
"""

from __future__ import annotations

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, int_const
from pixelweave.engine.stmt import STREAMING_MIN_VECTOR_BYTES

# Wider vectors stream as several 64-byte stores (a cache line each).
LINE_BYTES = 64


def streams_on(triple: str) -> bool:
    """Whether streaming stores are emitted for this target (x86-64: MOVNT*)."""
    return triple.startswith("x86_64")


def streamed_alignment(vector_bytes: int) -> int | None:
    """The alignment a streaming store of vector_bytes needs, or None if it cannot stream."""
    line = min(vector_bytes & -vector_bytes, LINE_BYTES)
    return line if line >= STREAMING_MIN_VECTOR_BYTES else None


def streaming_store(
    b: FunctionBuilder, value: Value, pointer: Value, condition: Value, alignment: int, plain_alignment: int
) -> None:
    """Store value at pointer, bypassing the caches where condition holds and pointer is
    aligned to alignment bytes."""
    address = b.convert("ptrtoint", pointer, "i64", "stream.addr")
    offset = b.binop("and", address, int_const(64, alignment - 1), "stream.misaligned")
    aligned = b.icmp("eq", offset, int_const(64, 0), "stream.aligned")
    go = b.binop("and", condition, aligned, "stream.go")
    stream, plain, done = b.new_label("stream"), b.new_label("stream_plain"), b.new_label("stream_done")
    b.cond_br(go, stream, plain)
    b.start_block(stream)
    b.emit(f"store {value}, ptr {pointer.ref}, align {alignment}, !nontemporal !{{i32 1}}")
    b.br(done)
    b.start_block(plain)
    b.store(value, pointer, plain_alignment)
    b.br(done)
    b.start_block(done)


def store_fence(b: FunctionBuilder, module: ModuleBuilder) -> None:
    """Order the streaming stores before this point with every store after it (SFENCE)."""
    if streams_on(module.triple):
        b.call("void", module.intrinsic("llvm.x86.sse.sfence", "void", []), [])
