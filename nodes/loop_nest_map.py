"""Which lines of a loop nest (or of the full lowered statement) belong to which node.

The inspector highlights the loops and buffers of the selected node and selects a node when
one of its lines is clicked; both need to know, per line, whose it is. Engine Funcs are
named "<node id>.<local>". In the loop nest a loop names no Func, so a loop belongs to the
Func whose `produce` block encloses it (a `consume` block is inside its consumer's produce
block and changes nothing); `store F:`, `produce F:`, `consume F:` and `F(...) = ...` name
theirs. In the full statement every line names what it concerns (`for (F.s0.y, ...)`,
`allocate F[...]`, `let F.min.0 = ...`), so the first Func name of a known node decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LOOP_KINDS = ("for", "parallel", "vectorized", "unrolled", "gpu_block", "gpu_thread")
_FUNC = r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*"
_NEST_LINE = re.compile(
    rf"(?P<pad> *)(?:(?P<block>produce|consume|store) (?P<func>{_FUNC}):"
    rf"|(?P<loop>{'|'.join(LOOP_KINDS)}) (?P<var>[^:]+?)(?: in \[[^\]]*\])?:"
    rf"|(?P<compute>{_FUNC})\(.*)\s*$"
)
_STMT_HEAD = re.compile(rf"\s*(?:(?P<loop>{'|'.join(LOOP_KINDS)}) \(|(?P<block>produce|consume|allocate|free|let) )?")
_ANY_FUNC = re.compile(rf"(?<![A-Za-z0-9_.])({_FUNC})")


@dataclass(frozen=True)
class NestLine:
    """One line: its node and Func ("<node id>.<local>") or None, what the line is (produce,
    consume, store, allocate, free, loop, compute, let or other) and, for loops, the loop kind
    (for, parallel, vectorized, unrolled, gpu_block, gpu_thread)."""

    number: int  # 0-based
    node: str | None
    func: str | None
    kind: str
    loop_kind: str | None = None


def _node_of(func: str | None, node_ids: set[str]) -> str | None:
    if func is None:
        return None
    node = func.partition(".")[0]
    return node if node in node_ids else None


def map_loop_nest(text: str, node_ids: Iterable[str]) -> list[NestLine]:
    """Per line of Pipeline.loop_nest() text, whose it is (see the module docstring)."""
    ids = set(node_ids)
    producers: list[tuple[int, str]] = []  # (indent, func) of the enclosing produce blocks
    out: list[NestLine] = []
    for number, line in enumerate(text.splitlines()):
        m = _NEST_LINE.match(line)
        if m is None or not line.strip():
            out.append(NestLine(number, None, None, "other"))
            continue
        indent = len(m.group("pad"))
        while producers and producers[-1][0] >= indent:
            producers.pop()
        enclosing = producers[-1][1] if producers else None
        if m.group("block"):
            func, kind = m.group("func"), m.group("block")
            if kind == "produce":
                producers.append((indent, func))
            out.append(NestLine(number, _node_of(func, ids), func, kind))
        elif m.group("loop"):
            out.append(NestLine(number, _node_of(enclosing, ids), enclosing, "loop", m.group("loop")))
        else:
            func = m.group("compute")
            out.append(NestLine(number, _node_of(func, ids), func, "compute"))
    return out


def map_statement(text: str, node_ids: Iterable[str]) -> list[NestLine]:
    """Per line of Pipeline.lowered_stmt() text, whose it is: the first Func of a known node
    the line names (closing braces and lines naming none belong to no node)."""
    ids = set(node_ids)
    out: list[NestLine] = []
    for number, line in enumerate(text.splitlines()):
        head = _STMT_HEAD.match(line)
        kind = "other"
        loop_kind = None
        if head is not None and head.group("loop"):
            kind, loop_kind = "loop", head.group("loop")
        elif head is not None and head.group("block"):
            kind = head.group("block")
        func = next((f for f in _ANY_FUNC.findall(line) if _node_of(f, ids) is not None), None)
        if func is not None:
            func = ".".join(func.split(".")[:2])
            if kind == "other" and re.match(rf"\s*{re.escape(func)}\[", line):
                kind = "compute"
        out.append(NestLine(number, _node_of(func, ids), func, kind, loop_kind))
    return out


def lines_of_node(mapping: list[NestLine], node_id: str) -> list[int]:
    """Line numbers (0-based) that belong to a node: what the inspector highlights."""
    return [line.number for line in mapping if line.node == node_id]


def node_at_line(mapping: list[NestLine], number: int) -> str | None:
    """The node a clicked line belongs to, or None."""
    return mapping[number].node if 0 <= number < len(mapping) else None
