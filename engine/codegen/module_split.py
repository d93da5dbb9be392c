"""Splitting a generated module's IR text into parts LLVM can compile at the same time.

llvmlite serializes every LLVM call in a process, so a module compiles on one core however
many threads ask. Split into parts of about equal size (by function), the parts compile in
separate processes at once (engine/runtime/compile_worker.py) and their objects link into
one JIT library. A part keeps every declaration, private constant and metadata line of the
module (unused ones cost LLVM nothing); a function or a mutable global used by another part
loses its internal linkage there and is declared in the user. Functions joined by direct
calls stay in one part, so no call LLVM could inline crosses parts: the parallel-loop
closures, which are only passed by address to the runtime, are what moves, and functions
marked noinline (the outlined produce bodies of engine/codegen/llvm.py: called once per
production, never per pixel), whose callers may be in the other part.

The split reads the text ModuleBuilder renders; anything it does not recognize gives no
split (None), so the module compiles whole as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DEFINE = re.compile(
    r"^define (?P<linkage>internal |private )?(?P<ret>.+?) @(?P<name>[A-Za-z0-9_.]+)\((?P<params>.*)\)"
    r"(?P<attributes>[^{]*)"
)
_MUTABLE_GLOBAL = re.compile(
    r"^@(?P<name>[A-Za-z0-9_.]+) = (?P<linkage>internal |private )?global (?P<type>.+) zeroinitializer"
    r"(?P<align>, align \d+)?$"
)
_CONSTANT_GLOBAL = re.compile(r"^@[A-Za-z0-9_.]+ = private unnamed_addr constant ")
BRANCH_WEIGHT = 1500  # characters: about 28 lines of IR
_SYMBOL = re.compile(r"@([A-Za-z0-9_.]+)(\(?)")  # a symbol and, when it is called directly, "("


@dataclass
class _Function:
    name: str
    lines: list[str]
    header: re.Match[str]
    uses: set[str]
    calls: set[str]

    @property
    def weight(self) -> int:
        """LLVM's work on the function, estimated by the length of its text (balanced the
        parts' compile times better than lines: interpolate's 0.60/0.46 s against 0.41/0.68)
        plus BRANCH_WEIGHT per branch: LLVM's time per line grows with the blocks (camera
        pipe, each function compiled alone: 28 us a line in the outlined demosaic, 9 branches,
        53 in its parallel loop body's 1330 lines with 49 branches, 97 in its entry's 590)."""
        return sum(len(line) + 1 for line in self.lines) + BRANCH_WEIGHT * sum(
            1 for line in self.lines if line.startswith("  br ")
        )


def split_module(ir_text: str, parts: int = 2, *, min_lines: int = 2500, min_share: float = 0.2) -> list[str] | None:
    """ir_text as `parts` modules that together define what it defines, the most work
    first (by _Function.weight), or None when that does not pay: fewer than min_lines
    lines, or the smallest part under min_share of them (one function holds most of the
    code), or text this splitter does not know."""
    lines = ir_text.split("\n")
    if parts < 2 or len(lines) < min_lines or _largest_function_lines(lines) > (1 - min_share) * len(lines):
        return None  # (the last test is quick and rules out a module that one function dominates)
    try:
        prologue, functions, epilogue = _parse(lines)
    except ValueError:
        return None
    groups = _call_groups(functions)
    sizes = [0] * parts
    assignment: list[list[_Function]] = [[] for _ in range(parts)]
    for group in sorted(groups, key=lambda g: (-sum(f.weight for f in g), g[0].name)):
        lightest = min(range(parts), key=lambda i: (sizes[i], i))
        assignment[lightest].extend(group)
        sizes[lightest] += sum(f.weight for f in group)
    if min(sizes) < min_share * sum(sizes):
        return None
    owner = {f.name: i for i, part in enumerate(assignment) for f in part}
    by_name = {f.name: f for f in functions}
    mutable = {}
    for line in prologue:
        m = _MUTABLE_GLOBAL.match(line)
        if m:
            mutable[m.group("name")] = m
    # Symbols some part uses but another defines: they need external linkage.
    shared: set[str] = set()
    for i, part in enumerate(assignment):
        for f in part:
            for symbol in f.uses:
                if symbol in owner and owner[symbol] != i:
                    shared.add(symbol)
                elif symbol in mutable and i != 0:
                    shared.add(symbol)  # mutable globals are defined in part 0
    texts = []
    for i, part in enumerate(assignment):
        used = set().union(*(f.uses for f in part)) if part else set()
        out = []
        for line in prologue:
            m = _MUTABLE_GLOBAL.match(line)
            if m is None:
                out.append(line)
            elif i == 0:
                name = m.group("name")
                exported = line.replace(f"@{name} = {m.group('linkage') or ''}global", f"@{name} = global", 1)
                out.append(exported if name in shared else line)
            elif m.group("name") in used:
                out.append(f"@{m.group('name')} = external global {m.group('type')}{m.group('align') or ''}")
        for name in sorted(used):
            if name in owner and owner[name] != i:
                h = by_name[name].header
                out.append(f"declare {h.group('ret')} @{name}({h.group('params')})")
        out.append("")
        for f in part:
            if f.name in shared and f.header.group("linkage"):
                first = f.lines[0].replace(f"define {f.header.group('linkage')}", "define ", 1)
                out.extend([first, *f.lines[1:], ""])
            else:
                out.extend([*f.lines, ""])
        out.extend(epilogue)
        texts.append("\n".join(out))
    return [texts[i] for i in sorted(range(parts), key=lambda i: (-sizes[i], i))]


def _largest_function_lines(lines: list[str]) -> int:
    largest, start = 0, None
    for i, line in enumerate(lines):
        if line.startswith("define "):
            start = i
        elif line == "}" and start is not None:
            largest, start = max(largest, i - start + 1), None
    return largest


def _parse(lines: list[str]) -> tuple[list[str], list[_Function], list[str]]:
    """The lines before the first function, the functions, the lines after the last one."""
    prologue: list[str] = []
    functions: list[_Function] = []
    epilogue: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define "):
            if epilogue:
                raise ValueError("text between functions")
            header = _DEFINE.match(line)
            if header is None:
                raise ValueError(f"unknown function header {line[:80]!r}")
            end = lines.index("}", i)
            body = lines[i : end + 1]
            references = set(_SYMBOL.findall("\n".join(body[1:])))
            uses = {symbol for symbol, _ in references}
            calls = {symbol for symbol, paren in references if paren}
            functions.append(_Function(header.group("name"), body, header, uses, calls))
            i = end + 1
            continue
        if functions:
            if line.strip():
                epilogue.append(line)
        else:
            if line.startswith("@") and not (_MUTABLE_GLOBAL.match(line) or _CONSTANT_GLOBAL.match(line)):
                raise ValueError(f"unknown global {line[:80]!r}")
            prologue.append(line)
        i += 1
    if any(not (line.startswith("!") or line.startswith("attributes ")) for line in epilogue):
        raise ValueError("unknown trailing text")
    return prologue, functions, epilogue


def _call_groups(functions: list[_Function]) -> list[list[_Function]]:
    """Functions joined by direct calls (either way) to functions LLVM may inline, in module
    order within a group."""
    parent = {f.name: f.name for f in functions}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    separate = {f.name for f in functions if "noinline" in f.header.group("attributes").split()}
    for f in functions:
        for callee in f.calls:
            if callee in parent and callee not in separate:
                parent[root(callee)] = root(f.name)
    groups: dict[str, list[_Function]] = {}
    for f in functions:
        groups.setdefault(root(f.name), []).append(f)
    return list(groups.values())
