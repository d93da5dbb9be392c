"""Text of lowered statements, as the schedule inspector shows them.

`stmt_to_string` prints everything (allocations, lets, asserts, loads and stores), in the
manner of Halide's lowered-statement dumps. `loop_nest_to_string` prints only the loop
structure, in the format of Halide's `print_loop_nest`.
"""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.ir.printer import expr_to_string as fmt
from pixelweave.engine.schedule import SPECIALIZE_FAIL_MESSAGE
from pixelweave.engine.shared_exprs import NameSource, shared_subexpressions
from pixelweave.engine.stmt import (
    Allocate,
    AssertStmt,
    Block,
    Evaluate,
    For,
    ForType,
    IfThenElse,
    LetStmt,
    ProducerConsumer,
    Provide,
    Realize,
    Stmt,
    Store,
)

INDENT = "  "


def _assert_text(s: AssertStmt, fmt=fmt) -> str:
    args = "".join(f", {fmt(a)}" for a in s.args)
    return f'assert({fmt(s.condition)}, "{s.message}"{args})'


def stmt_to_string(s: Stmt, check: Callable[[], None] | None = None) -> str:
    """Every statement; a large subexpression used more than once in one statement is
    printed once, as `let tN = ...` just before it, so the text stays linear in size.
    `check()` is called before each statement is printed (it raises to cancel)."""
    lines: list[str] = []
    _emit(s, 0, lines, NameSource(), check or (lambda: None))
    return "\n".join(lines) + "\n"


def _own_exprs(s: Stmt) -> list:
    """The expressions a statement prints on its own line(s)."""
    if isinstance(s, Realize):
        return [e for pair in s.bounds for e in pair]
    if isinstance(s, (Block, ProducerConsumer)):
        return []
    return [c for c in s.children() if not isinstance(c, Stmt) and c is not None]


def _emit(s: Stmt, depth: int, out: list[str], names: NameSource, check: Callable[[], None]) -> None:
    check()
    pad = INDENT * depth
    shared = shared_subexpressions(_own_exprs(s), names)
    if shared:
        known: dict[tuple, str] = {}
        for name, value in shared:
            out.append(f"{pad}let {name} = {fmt(value, known)}")
            known[value.key()] = name
        _emit_one(s, depth, out, names, lambda e: fmt(e, known), check)
    else:
        _emit_one(s, depth, out, names, fmt, check)


def _emit_one(s: Stmt, depth: int, out: list[str], names: NameSource, fmt, check: Callable[[], None]) -> None:
    pad = INDENT * depth
    if isinstance(s, Block):
        for c in s.stmts:
            _emit(c, depth, out, names, check)
    elif isinstance(s, LetStmt):
        out.append(f"{pad}let {s.name} = {fmt(s.value)}")
        _emit(s.body, depth, out, names, check)
    elif isinstance(s, AssertStmt):
        out.append(pad + _assert_text(s, fmt))
    elif isinstance(s, For):
        out.append(f"{pad}{s.for_type.value} ({s.name}, {fmt(s.min)}, {fmt(s.extent)}) {{")
        _emit(s.body, depth + 1, out, names, check)
        out.append(pad + "}")
    elif isinstance(s, ProducerConsumer):
        out.append(f"{pad}{'produce' if s.is_producer else 'consume'} {s.name} {{")
        _emit(s.body, depth + 1, out, names, check)
        out.append(pad + "}")
    elif isinstance(s, Realize):
        bounds = ", ".join(f"[{fmt(m)}, {fmt(e)}]" for m, e in s.bounds)
        out.append(f"{pad}realize {s.name}({bounds}) {{")
        _emit(s.body, depth + 1, out, names, check)
        out.append(pad + "}")
    elif isinstance(s, Provide):
        args = ", ".join(fmt(a) for a in s.args)
        element = f"[{s.value_index}]" if s.value_index else ""  # a later value of a Tuple
        out.append(f"{pad}{s.name}({args}){element} = {fmt(s.value)}")
    elif isinstance(s, Allocate):
        where = "stack" if s.on_stack else "heap"
        if s.output_alias is not None:
            where += f", or the output buffer {s.output_alias[0]} if {fmt(s.output_alias[1])}"
        out.append(f"{pad}allocate {s.name}[{s.type} * {fmt(s.size)}] on {where}")
        _emit(s.body, depth, out, names, check)
        out.append(f"{pad}free {s.name}")
    elif isinstance(s, Store):
        streaming = "" if s.streaming is None else f"  (streaming if {fmt(s.streaming)})"
        out.append(f"{pad}{s.buffer}[{fmt(s.index)}] = {fmt(s.value)}{streaming}")
    elif isinstance(s, IfThenElse):
        out.append(f"{pad}if ({fmt(s.condition)}) {{")
        _emit(s.then_case, depth + 1, out, names, check)
        if s.else_case is not None:
            out.append(pad + "} else {")
            _emit(s.else_case, depth + 1, out, names, check)
        out.append(pad + "}")
    elif isinstance(s, Evaluate):
        out.append(f"{pad}{fmt(s.value)}")
    else:
        out.append(f"{pad}<{type(s).__name__}>")


_LOOP_WORDS = {
    ForType.SERIAL: "for",
    ForType.PARALLEL: "parallel",
    ForType.VECTORIZED: "vectorized",
    ForType.UNROLLED: "unrolled",
    ForType.GPU_BLOCK: "gpu_block",
    ForType.GPU_THREAD: "gpu_thread",
}


def loop_nest_to_string(s: Stmt) -> str:
    """Only loops, produce/consume and storage, e.g. `parallel y:` / `vectorized x.v in [0, 7]:`."""
    lines: list[str] = []
    _nest(s, 0, lines)
    return "\n".join(lines) + "\n"


def _short(name: str) -> str:
    """`blur.s0.x.xi` -> `x.xi`: the Func and stage prefix are implied by the enclosing block."""
    parts = name.split(".")
    for i, p in enumerate(parts):
        if p.startswith("s") and p[1:].isdigit():
            return ".".join(parts[i + 1 :])
    return name


def _is_specialization(s: IfThenElse) -> bool:
    """Whether an `if` chooses between loop nests (a specialization): it holds loops and its
    condition reads only run-time parameters (guards of tails and of fused loops read loop
    variables and region bounds)."""
    from pixelweave.engine.ir.visit import find_variables
    from pixelweave.engine.stmt_visit import walk_stmt

    if any(v.kind != "param" for v in find_variables(s.condition)):
        return False
    return any(isinstance(c, For) for c in walk_stmt(s))


def _branches(s: IfThenElse, depth: int, out: list[str], enclosing: frozenset[str]) -> None:
    """`if c1:` / `else if c2:` / `else:` around the loop nest of each branch (specialize())."""
    pad = INDENT * depth
    word = "if"
    while True:
        out.append(f"{pad}{word} {fmt(s.condition)}:")
        _nest(s.then_case, depth + 1, out, enclosing)
        rest = s.else_case
        if isinstance(rest, IfThenElse) and _is_specialization(rest):
            s, word = rest, "else if"
            continue
        if rest is not None:
            out.append(f"{pad}else:")
            _nest(rest, depth + 1, out, enclosing)
        return


def _is_fused_copy(s: For, enclosing: frozenset[str]) -> bool:
    """Whether a loop is a compute_with stage's copy of the loop it is fused into: one
    iteration at the enclosing loop's variable, which the nest already shows."""
    from pixelweave.engine.ir.expr import Const, Variable

    return (
        isinstance(s.extent, Const) and s.extent.value == 1 and isinstance(s.min, Variable) and s.min.name in enclosing
    )


def _nest(s: Stmt, depth: int, out: list[str], enclosing: frozenset[str] = frozenset()) -> None:
    pad = INDENT * depth
    if isinstance(s, Block):
        for c in s.stmts:
            _nest(c, depth, out, enclosing)
    elif isinstance(s, (LetStmt,)):
        _nest(s.body, depth, out, enclosing)
    elif isinstance(s, For) and _is_fused_copy(s, enclosing):
        _nest(s.body, depth, out, enclosing | {s.name})
    elif isinstance(s, For):
        word = _LOOP_WORDS[s.for_type]
        name = _short(s.name)
        if s.for_type in (ForType.VECTORIZED, ForType.UNROLLED):
            from pixelweave.engine.ir.expr import Const

            if isinstance(s.min, Const) and isinstance(s.extent, Const):
                out.append(f"{pad}{word} {name} in [{s.min.value}, {s.min.value + s.extent.value - 1}]:")
            else:
                out.append(f"{pad}{word} {name}:")
        else:
            out.append(f"{pad}{word} {name}:")
        _nest(s.body, depth + 1, out, enclosing | {s.name})
    elif isinstance(s, ProducerConsumer):
        if not s.is_producer and isinstance(s.body, Evaluate):
            return
        out.append(f"{pad}{'produce' if s.is_producer else 'consume'} {s.name}:")
        _nest(s.body, depth + 1, out, enclosing)
    elif isinstance(s, (Realize, Allocate)):
        out.append(f"{pad}store {s.name}:")
        _nest(s.body, depth + 1, out, enclosing)
    elif isinstance(s, IfThenElse) and _is_specialization(s):
        _branches(s, depth, out, enclosing)
    elif isinstance(s, IfThenElse):
        _nest(s.then_case, depth, out, enclosing)
        if s.else_case is not None:
            _nest(s.else_case, depth, out, enclosing)
    elif isinstance(s, AssertStmt) and s.message.startswith(SPECIALIZE_FAIL_MESSAGE):
        out.append(f"{pad}specialize_fail({s.message[len(SPECIALIZE_FAIL_MESSAGE) :]!r})")
    elif isinstance(s, Provide):
        out.append(f"{pad}{s.name}(...) = ...")
    elif isinstance(s, Store):
        out.append(f"{pad}{s.buffer}[...] = ...")
