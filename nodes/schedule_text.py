"""Halide-style schedule text for one node, and back.

People who know Halide type schedules as chained calls; documents store them as JSON
directive lists. `parse_schedule_text` reads the former into the latter, one statement per
line (or `;`-separated; a line starting with `.` continues the previous statement):

    out.compute_root().tile(x, y, xo, yo, xi, yi, 64, 32).vectorize(xi, 8).parallel(yo)
    rows.compute_at(out, y)              # a Func of this node
    rows.compute_at(sharpen.out, y)      # a Func of another node
    out.update(0).vectorize(x)
    out.split(y, yo, yi, 16, TailStrategy.GuardWithIf)

Every fault raises a ScheduleTextError that locates it (line, column, length), so an editor
can underline it. `format_schedule` writes a schedule back as text that parses to the same
directives.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.schedule import LoopAlignStrategy, MemoryType
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.schedule_spec import (
    DIRECTIVES,
    FUNC_REF_DIRECTIVES,
    MEMORY_TYPES,
    STAGE_REF,
    TAILS,
    check_directive,
    parse_key,
)

# TailStrategy members as Halide spells them, and the document's names for them.
TAIL_NAMES = {"Auto": "auto", "RoundUp": "round_up", "GuardWithIf": "guard_with_if", "ShiftInwards": "shift_inwards"}
# The other enumerations a directive takes, by Halide's member names.
MEMORY_NAMES = {m.halide_name: m.value for m in MemoryType if m.value in MEMORY_TYPES}
ALIGN_NAMES = {a.name: a.value for a in LoopAlignStrategy}
_ENUMS = {"TailStrategy": TAIL_NAMES, "MemoryType": MEMORY_NAMES, "LoopAlignStrategy": ALIGN_NAMES}
_ENUM_WHAT = {"TailStrategy": "tail strategy", "MemoryType": "memory type", "LoopAlignStrategy": "loop alignment"}
_ENUM_KINDS = {"tail": "TailStrategy", "memory": "MemoryType", "align": "LoopAlignStrategy"}  # argument kind: enum
_ENUM_TEXT = {kind: {v: f"{enum}.{k}" for k, v in _ENUMS[enum].items()} for kind, enum in _ENUM_KINDS.items()}
_MODULES = ("hl", "pw", "halide", "engine")
_TOKEN = re.compile(
    r"(?P<space>[ \t\r]+)|(?P<comment>#[^\n]*)|(?P<newline>\n)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<int>\d+)|(?P<string>\"[^\"\n]*\"|'[^'\n]*')|(?P<punct>[.(),;=-])"
)
_LINE_WIDTH = 100


class ScheduleTextError(NodeError):
    """Schedule text that cannot be read; `line`, `column` (1-based) and `length` locate the
    fault so the editor can underline it, `offset` is its 0-based index in the text."""

    def __init__(self, message: str, node_id: str | None, line: int, column: int, length: int, offset: int) -> None:
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.offset = offset
        super().__init__(message, node_id)


@dataclass(frozen=True)
class _Token:
    kind: str  # name, int, string, punct (text is the character), newline, end
    text: str
    offset: int
    line: int
    column: int


def _tokens(text: str, node_id: str) -> list[_Token]:
    out: list[_Token] = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ScheduleTextError(f"unexpected character {text[pos]!r}", node_id, line, pos - line_start + 1, 1, pos)
        kind = m.lastgroup or ""
        if kind == "newline":
            out.append(_Token("newline", "\n", pos, line, pos - line_start + 1))
            line, line_start = line + 1, m.end()
        elif kind not in ("space", "comment"):
            out.append(_Token(kind, m.group(), pos, line, pos - line_start + 1))
        pos = m.end()
    out.append(_Token("end", "", len(text), line, len(text) - line_start + 1))
    return out


def text_usage(name: str) -> str:
    """A directive's signatures written as calls: `split(var, outer, inner, factor[, tail])`."""
    forms = []
    for sig in DIRECTIVES[name].signatures:
        body = ""
        for arg, kind in sig:
            if kind.endswith("?"):
                body += f"[, {arg}]" if body else f"[{arg}]"
            else:
                body += (", " if body else "") + (f"{arg}..." if kind.endswith("*") else arg)
        forms.append(f"{name}({body})")
    return " or ".join(forms)


class _Parser:
    """Recursive descent over the tokens of one schedule text."""

    def __init__(self, text: str, node_id: str, funcs: Mapping[str, Iterable[str]] | None) -> None:
        self.node_id = node_id
        self.tokens = _tokens(text, node_id)
        self.i = 0
        self.funcs = {k: set(v) for k, v in (funcs or {}).items()}
        self.locals = self.funcs.get(node_id)
        self.schedule: dict[str, list[list[Any]]] = {}

    # -------------------------------------------------------------- token helpers
    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def fail(self, message: str, start: _Token, end: _Token | None = None) -> ScheduleTextError:
        end = end or start
        length = max(1, end.offset + len(end.text) - start.offset) if end.line == start.line else len(start.text)
        return ScheduleTextError(message, self.node_id, start.line, start.column, length, start.offset)

    def is_punct(self, char: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == char

    def expect(self, char: str, what: str) -> _Token:
        if not self.is_punct(char):
            shown = "the end of the line" if self.tok.kind in ("newline", "end") else f"`{self.tok.text}`"
            raise self.fail(f"expected {what}, found {shown}", self.tok)
        t = self.tok
        self.i += 1
        return t

    def skip_newlines(self) -> None:
        while self.tok.kind == "newline" or self.is_punct(";"):
            self.i += 1

    def continues(self) -> bool:
        """A newline followed (after blank lines) by `.` continues the statement."""
        j = self.i
        while self.tokens[j].kind == "newline":
            j += 1
        if j > self.i and self.tokens[j].kind == "punct" and self.tokens[j].text == ".":
            self.i = j
            return True
        return False

    # -------------------------------------------------------------- grammar
    def parse(self) -> dict[str, list[list[Any]]]:
        self.skip_newlines()
        while self.tok.kind != "end":
            self.statement()
            if self.tok.kind not in ("newline", "end") and not self.is_punct(";"):
                raise self.fail(f"expected `.`, `;` or the end of the line, found `{self.tok.text}`", self.tok)
            self.skip_newlines()
        return self.schedule

    def statement(self) -> None:
        first = self.tok
        if first.kind != "name":
            raise self.fail("a statement starts with the Func it schedules, e.g. `out.vectorize(x, 8)`", first)
        names = [first]
        self.i += 1
        while self.is_punct(".") and self.tokens[self.i + 1].kind == "name":
            names.append(self.tokens[self.i + 1])
            self.i += 2
            if self.is_punct("("):
                break
        if not self.is_punct("("):
            raise self.fail(
                f"`{'.'.join(t.text for t in names)}` schedules nothing: call a directive on it, e.g. "
                f"`{names[0].text}.compute_root()`",
                names[0],
                names[-1],
            )
        subject, method = names[:-1], names[-1]
        if not subject:
            raise self.fail(
                f"`{method.text}(...)` needs the Func it schedules in front, e.g. `out.{method.text}(...)`", method
            )
        local = self.subject(subject)
        key = local
        self.call(method, local, [key])

    def subject(self, names: list[_Token]) -> str:
        text = ".".join(t.text for t in names)
        if len(names) == 2 and names[0].text == self.node_id:
            names = names[1:]
        elif len(names) >= 2:
            raise self.fail(
                f"`{text}` is not a Func of node `{self.node_id}`: this text schedules only its own Funcs "
                f"(write `{names[-1].text}.…` for its Func `{names[-1].text}`)",
                names[0],
                names[-1],
            )
        local = names[0].text
        if self.locals is not None and local not in self.locals:
            raise self.fail(self._unknown_func(local, self.node_id, self.locals), names[0])
        return local

    @staticmethod
    def _unknown_func(local: str, node_id: str, known: set[str]) -> str:
        near = difflib.get_close_matches(local, sorted(known), n=1)
        hint = f"; did you mean `{near[0]}`?" if near else ""
        return f"node `{node_id}` has no Func `{local}` (its Funcs: {', '.join(sorted(known)) or 'none'}){hint}"

    def call(self, method: _Token, local: str, key: list[str]) -> None:
        """One directive call and the calls chained after it; key[0] is the current key."""
        while True:
            self.expect("(", f"`(` after `{method.text}`")
            args = self.arguments()
            close = self.expect(")", "`,` or `)`")
            self.directive(method, args, close, local, key)
            if not (self.is_punct(".") or self.continues()):
                return
            self.i += 1
            if self.tok.kind != "name":
                raise self.fail("expected a directive name after `.`", self.tok)
            method = self.tok
            self.i += 1

    def arguments(self) -> list[tuple[_Token, _Token, str | None, Any]]:
        """(first token, last token, keyword or None, value) per argument."""
        args: list[tuple[_Token, _Token, str | None, Any]] = []
        while not self.is_punct(")"):
            while self.tok.kind == "newline":
                self.i += 1
            start = self.tok
            keyword = None
            if start.kind == "name" and self.tokens[self.i + 1].kind == "punct" and self.tokens[self.i + 1].text == "=":
                keyword = start.text
                self.i += 2
            value, last = self.value()
            args.append((start, last, keyword, value))
            while self.tok.kind == "newline":
                self.i += 1
            if not self.is_punct(","):
                break
            self.i += 1
            while self.tok.kind == "newline":
                self.i += 1
        return args

    def value(self) -> tuple[Any, _Token]:
        t = self.tok
        if t.kind == "int":
            self.i += 1
            return int(t.text), t
        if self.is_punct("-") and self.tokens[self.i + 1].kind == "int":
            self.i += 2
            return -int(self.tokens[self.i - 1].text), self.tokens[self.i - 1]
        if t.kind == "string":
            self.i += 1
            return t.text[1:-1], t
        if t.kind != "name":
            shown = "the end of the line" if t.kind in ("newline", "end") else f"`{t.text}`"
            raise self.fail(f"expected an argument (a loop or Func name, or a number), found {shown}", t)
        names = [t]
        self.i += 1
        while self.is_punct(".") and self.tokens[self.i + 1].kind == "name":
            names.append(self.tokens[self.i + 1])
            self.i += 2
        last = names[-1]
        if self.is_punct("(") and self.tokens[self.i + 1].kind == "punct" and self.tokens[self.i + 1].text == ")":
            last = self.tokens[self.i + 1]
            self.i += 2
            called = True
        else:
            called = False
        parts = [n.text for n in names]
        if parts[-1] == "update" and not called and self.is_punct("(") and self.tokens[self.i + 1].kind == "int":
            close = self.tokens[self.i + 2]
            if close.kind == "punct" and close.text == ")":  # a stage: `out.update(0)`
                self.i += 3
                return f"{'.'.join(parts)}({self.tokens[self.i - 2].text})", close
        if len(parts) >= 2 and parts[0] in _MODULES and parts[1] in (*_ENUMS, "LoopLevel"):
            parts = parts[1:]
        if parts[0] in _ENUMS and len(parts) >= 2:
            members = _ENUMS[parts[0]]
            if len(parts) != 2 or parts[1] not in members or called:
                raise self.fail(
                    f"unknown {_ENUM_WHAT[parts[0]]} `{'.'.join(parts)}`; use one of "
                    + ", ".join(f"{parts[0]}.{n}" for n in members),
                    t,
                    last,
                )
            return members[parts[1]], last
        if parts in (["True"], ["False"]) and not called:
            return parts[0] == "True", last
        if parts[0] == "LoopLevel" and len(parts) >= 2:
            if parts[1:] != ["root"]:
                raise self.fail(
                    f"`{'.'.join(parts)}` is not supported here: use LoopLevel.root(), or compute_inline() "
                    "to inline a Func",
                    t,
                    last,
                )
            return "root", last
        if called:
            raise self.fail(f"`{'.'.join(parts)}()` is not an argument: name a loop or a Func", t, last)
        return ".".join(parts), last

    def directive(
        self,
        method: _Token,
        args: list[tuple[_Token, _Token, str | None, Any]],
        close: _Token,
        local: str,
        key: list[str],
    ) -> None:
        name = method.text
        if name == "update":
            if len(args) > 1 or (args and (args[0][2] is not None or not isinstance(args[0][3], int))):
                raise self.fail("`update` takes the index of an update definition, e.g. `out.update(0)`", method, close)
            index = args[0][3] if args else 0
            if index < 0:
                raise self.fail("update indices start at 0", args[0][0], args[0][1])
            key[0] = f"{local}.update({index})"
            return
        spec = DIRECTIVES.get(name)
        if spec is None:
            near = difflib.get_close_matches(name, [*DIRECTIVES, "update"], n=1)
            hint = f"; did you mean `{near[0]}`?" if near else f"; known directives: {', '.join(DIRECTIVES)}"
            raise self.fail(f"unknown directive `{name}`{hint}", method)
        values: list[Any] = []
        for start, _last, keyword, value in args:
            if keyword is not None and not (keyword == "tail" and name in ("split", "tile")):
                raise self.fail(f"`{name}` takes no keyword argument `{keyword}`; usage: {text_usage(name)}", start)
            values.append(value)
        directive = [name, *values]
        is_update = key[0] != local
        why = check_directive(directive, is_update)
        if why is not None:
            why = why.replace(spec.usage(name), text_usage(name))
            bad = re.match(r"argument (\d+) ", why)
            if bad is not None and int(bad.group(1)) <= len(args):
                start, last = args[int(bad.group(1)) - 1][:2]
                raise self.fail(why, start, last)
            if spec.scope == "func" and is_update:
                why = f"`{name}` applies to a whole Func: call it on `{local}`, not on `{key[0]}`"
            raise self.fail(why, method, close)
        if name in FUNC_REF_DIRECTIVES and values and values[0] != "root":
            stage = STAGE_REF.fullmatch(values[0])
            self.check_func_ref(stage.group("func") if stage else values[0], args[0][0], args[0][1])
        self.schedule.setdefault(key[0], []).append(directive)

    def check_func_ref(self, ref: str, start: _Token, last: _Token) -> None:
        node, _, local = ref.rpartition(".")
        node = node or self.node_id
        if "." in node:
            raise self.fail(f"`{ref}` is not a Func name: write `local` or `node.local`", start, last)
        known = self.funcs.get(node)
        if known is not None and local not in known:
            raise self.fail(self._unknown_func(local, node, known), start, last)


def parse_schedule_text(
    text: str, node_id: str, funcs: Mapping[str, Iterable[str]] | None = None
) -> dict[str, list[list[Any]]]:
    """The schedule (document directives by key) that Halide-style text describes.

    `funcs` maps node ids to their Funcs' local names (BuiltDocument.funcs()); when it names
    node_id, only those Funcs may be scheduled, and Func references to a listed node are
    checked too. ScheduleTextError locates the first fault."""
    return _Parser(text, node_id, funcs).parse()


def _arg_text(value: Any, kind: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    enum = _ENUM_TEXT.get(kind.rstrip("?*"), {})
    if value in enum:
        return enum[value]
    if kind.startswith("func") and value == "root":
        return "LoopLevel.root()"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\.update\(\d+\))?", value):
        return value
    return '"' + value.replace('"', "") + '"'


def directive_text(directive: list[Any]) -> str:
    """One directive as a call: `split(y, yo, yi, 16, TailStrategy.GuardWithIf)`."""
    name, args = directive[0], directive[1:]
    spec = DIRECTIVES.get(name)
    kinds: list[str] = []
    if spec is not None:
        sig = next((s for s in spec.signatures if len(s) >= len(args) or s[-1][1].endswith("*")), spec.signatures[0])
        kinds = [sig[min(i, len(sig) - 1)][1] if sig else "" for i in range(len(args))]
        if name in ("split", "tile") and args and args[-1] in TAILS and isinstance(args[-1], str):
            kinds[-1] = "tail"
    return f"{name}({', '.join(_arg_text(a, kinds[i] if i < len(kinds) else '') for i, a in enumerate(args))})"


def format_schedule(schedule: Mapping[str, list[list[Any]]], node_id: str) -> str:
    """Halide-style text for a node's schedule, one statement per key (long chains broken
    into `.call` continuation lines); parse_schedule_text reads it back unchanged."""
    lines: list[str] = []
    for key, directives in schedule.items():
        if not directives:
            continue
        parsed = parse_key(key)
        head = key if parsed is not None else f'"{key}"'
        calls = [directive_text(d) for d in directives]
        one_line = head + "".join(f".{c}" for c in calls)
        if len(one_line) <= _LINE_WIDTH:
            lines.append(one_line)
        else:
            lines.append(f"{head}.{calls[0]}")
            lines.extend(f"    .{c}" for c in calls[1:])
    return "\n".join(lines) + ("\n" if lines else "")


def loops_after(dims: list[str], directives: Iterable[list[Any]]) -> list[str]:
    """The loop names a stage has after its directives, innermost first (what the editor offers
    to split, vectorize or compute at): splits and tiles replace a loop by their new ones,
    a fuse merges two; reorder changes the order; vectorize, unroll and parallel with a factor
    split off an inner loop named as the engine names it (v0, v1, ...: the first short name the
    stage has not used). Unknown loops are left alone."""
    loops = list(dims)
    used = {n.rsplit(".", 1)[-1] for n in dims}

    def generated() -> str:
        k = 0
        while f"v{k}" in used:
            k += 1
        return f"v{k}"

    def replace(old: Any, new: list[str]) -> None:
        if old in loops:
            i = loops.index(old)
            loops[i : i + 1] = new

    for d in directives:
        name, args = d[0], list(d[1:])
        if args and args[-1] in TAILS and name in ("split", "tile"):
            args.pop()
        used.update(a for a in args if isinstance(a, str))
        if name in ("vectorize", "unroll", "parallel") and len(args) == 2 and args[0] in loops:
            inner = generated()
            used.add(inner)
            replace(args[0], [inner, args[0]])
        if name == "split" and len(args) == 4:
            replace(args[0], [args[2], args[1]])
        elif name in ("tile", "gpu_tile") and len(args) == 8:
            x, y, xo, yo, xi, yi = args[:6]
            replace(x, [xi, xo])
            replace(y, [yi, yo])
            if xo in loops and yi in loops:  # inner loops innermost
                loops = [xi, yi] + [n for n in loops if n not in (xi, yi)]
        elif name == "tile" and len(args) == 6:
            x, y, xi, yi = args[:4]
            replace(x, [xi, x])
            replace(y, [yi, y])
            loops = [xi, yi] + [n for n in loops if n not in (xi, yi)]
        elif name == "fuse" and len(args) == 3 and args[0] in loops and args[1] in loops:
            loops.remove(args[1])
            replace(args[0], [args[2]])
        elif name == "reorder" and set(args) <= set(loops):
            positions = sorted(loops.index(a) for a in args)
            for pos, a in zip(positions, args, strict=True):
                loops[pos] = a
    return loops
