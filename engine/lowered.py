"""What lowering hands to a backend: the argument list and the flat loop-nest body."""

from __future__ import annotations

from dataclasses import dataclass, field

from pixelweave.engine.ir.types import Type
from pixelweave.engine.schedule import MemoryType
from pixelweave.engine.stmt import Stmt


@dataclass(frozen=True)
class Argument:
    """One argument of a compiled pipeline, in call order (inputs, params, then outputs).

    A buffer argument `b` of d dimensions makes the Int(32) variables `b.min.i`,
    `b.extent.i` and `b.stride.i` (i < d) visible in the body; Load/Store on `b` take a
    flat element index relative to its host pointer. A scalar argument is visible as a
    variable of its own name and type.
    """

    name: str
    kind: str  # "buffer" or "scalar"
    type: Type
    dimensions: int = 0
    is_output: bool = False

    def is_buffer(self) -> bool:
        return self.kind == "buffer"


@dataclass
class LoweredPipeline:
    """A pipeline after lowering: a C identifier, its arguments and its statement.

    profile_names lists the Funcs whose ProducerConsumer blocks a profiling build times,
    in order; error messages come from the AssertStmts inside body. strict_float=False lets
    the backend fuse floating-point multiply-adds, as Halide does by default.
    """

    name: str
    arguments: list[Argument]
    body: Stmt
    profile_names: list[str] = field(default_factory=list)
    strict_float: bool = True
    # store_in() other than MemoryType.Auto, by allocation name (backends place storage by it)
    memory_types: dict[str, MemoryType] = field(default_factory=dict)
