"""A structural key of a pipeline, computed before lowering: equal structure, equal key.

The key hashes what decides the generated code: every Func's definitions (expression trees,
in which a Func is referred to by its name), its schedule, the types and dimensions of the
input images, the types of the scalar Params (not their values: those are run-time
arguments), the outputs, the target, the compile level and the profiling switch. It never
looks at Python object identity or at lowered code, so a pipeline rebuilt from the same
document (in this process or another) has the same key, and computing it costs a walk over
the definitions, far less than lowering.

Names the engine invents for reduction domains and split loops (`r12`, `x.v7`) differ from
run to run; they are replaced by their order of appearance so that a rebuilt pipeline keys
the same. The on-disk cache outlives the compiler that filled it, so every key also hashes
the compiler's own sources: a changed compiler never runs code an older one generated.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.schedule import StageSchedule

if TYPE_CHECKING:
    from pixelweave.engine.pipeline import Pipeline

KEY_VERSION = "pixelweave-structure-8"  # bumped when the code or loop nest text cached for a structure changes
ENGINE_ROOT = Path(__file__).resolve().parent


@functools.cache
def compiler_digest() -> bytes:
    """A digest of every source file of the engine (read once per process, a few ms)."""
    h = hashlib.sha256()
    for path in sorted(ENGINE_ROOT.rglob("*.py")):
        h.update(path.relative_to(ENGINE_ROOT).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.digest()
_AUTO_NAME = re.compile(r"\b[rv]\d+\b")


class _Writer:
    """Serializes expression DAGs as numbered lines, each shared node once (linear size)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._numbers: dict[int, int] = {}
        self._keep: list[E.Expr] = []  # ids stay valid while the writer lives

    def expr(self, root: E.Expr) -> str:
        stack: list[tuple[E.Expr, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in self._numbers:
                continue
            children = node.children()
            if not expanded:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(children) if id(c) not in self._numbers)
                continue
            fields = ",".join(repr(f) for f in node._fields())
            refs = ",".join(f"#{self._numbers[id(c)]}" for c in children)
            number = len(self._numbers)
            self._numbers[id(node)] = number
            self._keep.append(node)
            self.lines.append(f"#{number}={type(node).__name__}[{node.type()}]({fields};{refs})")
        return f"#{self._numbers[id(root)]}"


def _definition_text(w: _Writer, d: Definition, schedules: bool) -> str:
    values = ",".join(w.expr(v) for v in d.all_values())
    parts = ["args(" + ",".join(w.expr(a) for a in d.args) + ")", "value(" + values + ")"]
    if d.predicate is not None:
        parts.append("where(" + w.expr(d.predicate) + ")")
    if d.rdom is not None:
        bounds = ",".join(f"{w.expr(lo)}:{w.expr(extent)}" for lo, extent in d.rdom.bounds)
        parts.append(f"rdom({d.rdom.name};{bounds})")
    parts.append("pure(" + ",".join(d.pure_vars) + ")")
    if schedules:
        schedule = d.schedule if d.schedule is not None else StageSchedule.for_definition(d)  # made when lowered
        parts.append("schedule(" + repr(schedule) + ")")
    return " ".join(parts)


def _func_text(w: _Writer, f: Func, schedules: bool) -> str:
    definitions = [_definition_text(w, d, schedules) for d in [f.definition(), *f.updates()]]
    placement = f" call_schedule({f.schedule_of()!r})" if schedules else ""
    constraints = f.output_constraints()
    if constraints is not None and constraints.constraints:
        placement += f" output_buffer({sorted(constraints.constraints.items())!r})"
    return f"func {f.name()}{placement} " + " | ".join(definitions)


def structure_text(pipeline: Pipeline, *, schedules: bool = True) -> str:
    """The text the key hashes (readable, for tests and debugging); without `schedules`,
    only the algorithm (what decides the values computed, not how)."""
    w = _Writer()
    funcs = [_func_text(w, f, schedules) for f in pipeline.funcs]
    header = [
        "outputs " + ",".join(f.name() for f in pipeline.outputs),
        "images " + ",".join(f"{im.name()}:{im.type()}:{im.dimensions()}" for im in pipeline.images),
        "params " + ",".join(f"{p.name}:{p.type()}" for p in pipeline.params),
    ]
    text = "\n".join([*header, *w.lines, *funcs])
    return _canonical_names(text, pipeline)


def _canonical_names(text: str, pipeline: Pipeline) -> str:
    """Renames the engine's invented loop and reduction names (`v12`, `r3`) by order of first
    appearance; names that are arguments or Funcs are kept (compiled code is called by them)."""
    kept = (
        {f.name() for f in pipeline.funcs} | {im.name() for im in pipeline.images} | {p.name for p in pipeline.params}
    )
    mapping: dict[str, str] = {}
    for name in _AUTO_NAME.findall(text):
        if name not in kept and name not in mapping:
            mapping[name] = f"\u00a7{len(mapping)}"  # cannot be an identifier, so cannot collide
    if not mapping:
        return text
    return _AUTO_NAME.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


def structural_key(pipeline: Pipeline, *parts: Any, schedules: bool = True) -> str:
    """A hex digest of the pipeline's structure and of `parts` (target, level, ...); without
    `schedules`, of its algorithm only (equal keys: equal values, however scheduled)."""
    h = hashlib.sha256()
    h.update(KEY_VERSION.encode() if schedules else b"algorithm:" + KEY_VERSION.encode())
    h.update(compiler_digest())
    for part in parts:
        h.update(b"\0")
        h.update(str(part).encode())
    h.update(b"\0")
    h.update(structure_text(pipeline, schedules=schedules).encode())
    return h.hexdigest()
