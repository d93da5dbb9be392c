"""What lifting a function produces, before it becomes engine code: buffers and their
versions (each loop that writes a buffer makes a new version: a stage), accumulators
(reductions into scalars), the function's parameters, and what each stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from pixelweave.nodes.lift.symbolic import Tree


@dataclass
class Buffer:
    """A pointer parameter, a heap buffer or a local array, seen as rows of elements."""

    name: str
    elem: str
    kind: str  # "input" | "output" (a written pointer parameter) | "temp" | "table"
    line: int | None = None
    initial: str = "image"  # image | zero | undefined | table
    table: tuple = ()
    stride: tuple[str, int] | None = None  # (parameter, bytes per unit of it)
    versions: list[str] = field(default_factory=list)  # version tags, oldest first
    written: bool = False
    read: bool = False

    @property
    def current(self) -> str:
        return self.versions[-1]


@dataclass
class Piece:
    """Where one store applies (its conditions on the coordinates) and what it writes."""

    value: Tree
    conditions: dict[str, Tree]
    line: int | None
    region: tuple  # (row tree, col tree, loop symbols, outermost first)
    lane: tuple | None = None  # (loop symbol, lanes, residue, base column, trip) for merging lanes


@dataclass
class Version:
    """One state of a buffer: its initial contents, or a stage that overwrites part of the
    previous version (pure pieces, newest last) or scatters into it (an update over an RDom)."""

    tag: str
    buffer: str
    kind: str  # initial | pure | scatter
    previous: str | None = None
    dims: tuple[str, ...] = ()  # extra dimensions (loop symbols a per-iteration buffer is expanded over)
    pieces: list[Piece] = field(default_factory=list)
    scatters: list[tuple] = field(default_factory=list)  # (row, col, value, rdom loops, predicate, line)
    line: int | None = None


@dataclass
class Accumulator:
    """A scalar reduced by a loop nest: init at the enclosing loops' point, then updated over
    an RDom (the reduction loops)."""

    name: str
    type: str
    pure: tuple[str, ...]  # enclosing loop symbols: the Func's dimensions
    init: Tree
    update: Tree  # the self-reference is ("func", type, name, pure symbols)
    rdom: tuple[tuple[str, Tree], ...]
    line: int | None


@dataclass
class Scalar:
    """A parameter of the function that is not a pointer."""

    name: str
    type: str
    role: str = "value"  # value | extent | stride


@dataclass
class Lifted:
    """Everything lifting one C function found."""

    file: str
    function: str
    params: list[tuple[str, str]]  # (name, "pointer" | "scalar") in C order
    scalars: dict[str, Scalar]
    buffers: dict[str, Buffer]
    versions: dict[str, Version]
    accumulators: dict[str, Accumulator]
    loops: dict[str, Tree]  # loop symbol -> trip count
    result: Tree | None = None  # the returned value, if any
    result_type: str | None = None
    reads: list[tuple] = field(default_factory=list)  # (buffer, row, col, loops) of every load
    writes: list[tuple] = field(default_factory=list)  # (buffer, row, col, loops) of every store
    straight_line: bool = False
    stage_lines: dict[str, int | None] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # declared parameter ranges

    def bounds(self) -> tuple:
        """The declared ranges of integer parameters, as interval() takes them."""
        return tuple(
            (n, int(lo), int(hi))
            for n, (lo, hi) in sorted(self.ranges.items())
            if n in self.scalars and n[:1] != "_" and self.scalars[n].type[0] in "iu"
        )
