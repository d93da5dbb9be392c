"""Schedules in documents: JSON directive lists turned into engine schedule calls, and back.

A node's schedule maps the local name of one of its Funcs ("out", "rows", or
"out.update(0)" for an update definition) to a list of directives applied in order, each
a JSON list `[name, args...]`:

    {"rows": [["compute_at", "out", "y"], ["vectorize", "x", 8]],
     "out": [["split", "y", "y", "yi", 16], ["parallel", "y"], ["vectorize", "x", 8]]}

`check_schedule` finds what is wrong without building anything (unknown directives, wrong
arity or argument types); `apply_schedule` calls the engine on a built graph and reports
what the engine refuses, with its ScheduleError message. `directives_of` goes the other
way: the schedule an engine Func carries, as directives (what the editor shows).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pixelweave.engine.schedule import (
    GPU_MEMORY_TYPES,
    LoopAlignStrategy,
    LoopLevel,
    MemoryType,
    Partition,
    StageSchedule,
    TailStrategy,
)
from pixelweave.engine.stmt import ForType

import pixelweave as pw

if TYPE_CHECKING:
    from pixelweave.nodes.graph import BuiltGraph

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LOOP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
KEY = re.compile(r"(?P<local>[A-Za-z_][A-Za-z0-9_]*)(?:\.update\((?P<update>\d+)\))?")
STAGE_REF = re.compile(r"(?P<func>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)(?:\.update\((?P<update>\d+)\))?")
TAILS = tuple(t.value for t in (TailStrategy.AUTO, TailStrategy.ROUND_UP, TailStrategy.GUARD_WITH_IF,
                                 TailStrategy.SHIFT_INWARDS))  # fmt: skip
MEMORY_TYPES = tuple(m.value for m in GPU_MEMORY_TYPES)  # the memory types Pixelweave places storage in
ALIGNS = tuple(a.value for a in LoopAlignStrategy)

# Argument kinds: "loop" names an existing loop (may be a dotted name such as "x.xi"),
# "new" names a new loop, "factor" is a positive integer, "int" any integer, "tail" one of
# TAILS, "func" a Func reference ("local", "node.local" or "root"), "stage" a Func reference
# with an optional ".update(k)", "bool" true or false, "memory" one of MEMORY_TYPES, "align"
# one of ALIGNS. A trailing "?" marks an optional argument, "*" any number (at least one).
_LOOP, _NEW, _FACTOR, _INT, _TAIL, _FUNC = "loop", "new", "factor", "int", "tail", "func"
_STAGE, _BOOL, _MEMORY, _ALIGN = "stage", "bool", "memory", "align"


@dataclass(frozen=True)
class DirectiveSpec:
    """One directive: whether it applies to a whole Func or to one stage, and its signatures
    (each a tuple of (argument name, kind))."""

    scope: str  # "func" (the call schedule: all stages) or "stage"
    signatures: tuple[tuple[tuple[str, str], ...], ...]
    doc: str

    def usage(self, name: str) -> str:
        forms = []
        for sig in self.signatures:
            parts = [name]
            for arg, kind in sig:
                parts.append(f"({arg})" if kind.endswith("?") else (f"{arg}..." if kind.endswith("*") else arg))
            forms.append("[" + ", ".join(parts) + "]")
        return " or ".join(forms)


def _sig(*args: str) -> tuple[tuple[str, str], ...]:
    return tuple(tuple(a.split(":")) for a in args)  # type: ignore[misc]


DIRECTIVES: dict[str, DirectiveSpec] = {
    "compute_root": DirectiveSpec("func", (_sig(),), "compute all of it before its consumers run"),
    "compute_inline": DirectiveSpec("func", (_sig(),), "substitute it into its uses (the default of pure Funcs)"),
    "compute_at": DirectiveSpec(
        "func", (_sig("func:func", "var:loop"), _sig("root:func")), "compute it inside loop `var` of Func `func`"
    ),
    "store_root": DirectiveSpec("func", (_sig(),), "allocate it outside all loops (a sliding window with compute_at)"),
    "store_at": DirectiveSpec(
        "func", (_sig("func:func", "var:loop"), _sig("root:func")), "allocate it inside loop `var` of Func `func`"
    ),
    "bound": DirectiveSpec(
        "func", (_sig("var:new", "min:int", "extent:factor"),), "promise that only [min, min + extent) is needed"
    ),
    "reorder_storage": DirectiveSpec("func", (_sig("vars:new*"),), "storage order, innermost (stride 1) first"),
    "bound_extent": DirectiveSpec(
        "func", (_sig("var:new", "extent:factor"),), "compute exactly `extent` points of a dimension"
    ),
    "align_bounds": DirectiveSpec(
        "func",
        (_sig("var:new", "modulus:factor", "remainder:int?"),),
        "widen the computed region to start at remainder mod modulus, a multiple of modulus long",
    ),
    "align_extent": DirectiveSpec(
        "func", (_sig("var:new", "modulus:factor"),), "widen the computed region to a multiple of modulus"
    ),
    "align_storage": DirectiveSpec(
        "func", (_sig("var:new", "alignment:factor"),), "pad the storage of a dimension to a multiple"
    ),
    "fold_storage": DirectiveSpec(
        "func",
        (_sig("var:new", "extent:factor", "fold_forward:bool?"),),
        "store a dimension in a circular buffer of `extent` slots",
    ),
    "hoist_storage": DirectiveSpec(
        "func",
        (_sig("func:func", "var:loop"), _sig("root:func")),
        "make the allocation once per iteration of loop `var` of Func `func` (or once, at the root)",
    ),
    "hoist_storage_root": DirectiveSpec("func", (_sig(),), "make the allocation once, outside all loops"),
    "store_in": DirectiveSpec(
        "func", (_sig("memory:memory"),), f"put the storage in one memory: {', '.join(MEMORY_TYPES)}"
    ),
    "memoize": DirectiveSpec("func", (_sig(),), "keep its values across runs while its inputs are unchanged"),
    "split": DirectiveSpec(
        "stage",
        (_sig("var:loop", "outer:new", "inner:new", "factor:factor", "tail:tail?"),),
        "split a loop into outer * factor + inner",
    ),
    "fuse": DirectiveSpec("stage", (_sig("inner:loop", "outer:loop", "fused:new"),), "merge two adjacent loops"),
    "reorder": DirectiveSpec("stage", (_sig("vars:loop*"),), "reorder loops, innermost first"),
    "tile": DirectiveSpec(
        "stage",
        (
            _sig(
                "x:loop",
                "y:loop",
                "xo:new",
                "yo:new",
                "xi:new",
                "yi:new",
                "xfactor:factor",
                "yfactor:factor",
                "tail:tail?",
            ),
            _sig("x:loop", "y:loop", "xi:new", "yi:new", "xfactor:factor", "yfactor:factor", "tail:tail?"),
        ),
        "split two loops and put the inner ones innermost",
    ),
    "vectorize": DirectiveSpec("stage", (_sig("var:loop", "width:factor?"),), "run a loop as SIMD lanes"),
    "unroll": DirectiveSpec("stage", (_sig("var:loop", "factor:factor?"),), "replicate a loop's body"),
    "parallel": DirectiveSpec("stage", (_sig("var:loop", "task_size:factor?"),), "run a loop on several threads"),
    "serial": DirectiveSpec("stage", (_sig("var:loop"),), "run a loop one iteration after another (the default)"),
    "gpu_blocks": DirectiveSpec("stage", (_sig("vars:loop*"),), "map loops to GPU work-groups"),
    "gpu_threads": DirectiveSpec("stage", (_sig("vars:loop*"),), "map loops to GPU work-items"),
    "gpu_tile": DirectiveSpec(
        "stage",
        (_sig("x:loop", "y:loop", "xo:new", "yo:new", "xi:new", "yi:new", "xsize:factor", "ysize:factor"),),
        "tile, then map the outer loops to blocks and the inner ones to threads",
    ),
    "gpu_single_thread": DirectiveSpec("stage", (_sig(),), "run the stage on the GPU in one work-item"),
    "never_partition": DirectiveSpec(
        "stage", (_sig("vars:loop*"),), "keep loops whole (no prologue, steady state and epilogue)"
    ),
    "always_partition": DirectiveSpec(
        "stage", (_sig("vars:loop*"),), "partition loops, failing to compile where there is nothing to partition"
    ),
    "never_partition_all": DirectiveSpec("stage", (_sig(),), "never_partition on every loop of the stage"),
    "always_partition_all": DirectiveSpec("stage", (_sig(),), "always_partition on every loop of the stage"),
    "compute_with": DirectiveSpec(
        "stage",
        (_sig("stage:stage", "var:loop", "align:align?"),),
        "fuse this stage's loops, outermost down to `var`, with another Func's stage",
    ),
    "atomic": DirectiveSpec(
        "stage",
        (_sig("override_associativity_test:bool?"),),
        "make an update's stores atomic read-modify-writes, so its reduction loops may run in parallel",
    ),
}


LEVEL_DIRECTIVES = ("compute_at", "store_at", "hoist_storage")  # a Func's loop, or "root"
FUNC_REF_DIRECTIVES = (*LEVEL_DIRECTIVES, "compute_with")  # the first argument names a Func


def referenced_node(directive: Any) -> str | None:
    """The other node whose Func a directive names ("node.local", "node.local.update(0)"),
    or None (a Func of its own node, the root, or a directive naming no Func)."""
    if not isinstance(directive, list) or len(directive) < 2 or directive[0] not in FUNC_REF_DIRECTIVES:
        return None
    m = STAGE_REF.fullmatch(str(directive[1]))
    if m is None or "." not in m.group("func"):
        return None
    return m.group("func").partition(".")[0]


def rename_referenced_node(directive: list[Any], renamed: dict[str, str]) -> None:
    """Point a directive's Func reference at a node's new id (in place)."""
    node = referenced_node(directive)
    if node is not None and node in renamed:
        directive[1] = renamed[node] + str(directive[1])[len(node) :]


def parse_key(key: str) -> tuple[str, int | None] | None:
    """'out' -> ('out', None); 'out.update(1)' -> ('out', 1); None if malformed."""
    m = KEY.fullmatch(key)
    if m is None:
        return None
    return m.group("local"), None if m.group("update") is None else int(m.group("update"))


# ---------------------------------------------------------------------------- static checks


def _check_arg(value: Any, kind: str) -> str | None:
    """Why value is not of the kind, or None."""
    kind = kind.rstrip("?*")
    if kind == _BOOL:
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if kind in (_FACTOR, _INT):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, got {value!r}"
        if kind == _FACTOR and value < 1:
            return f"must be a positive integer, got {value}"
        return None
    if not isinstance(value, str):
        return f"must be a name (a string), got {value!r}"
    if kind == _TAIL and value not in TAILS:
        return f"must be one of {', '.join(TAILS)}, got {value!r}"
    if kind == _MEMORY and value not in MEMORY_TYPES:
        return f"must be one of {', '.join(MEMORY_TYPES)}, got {value!r}"
    if kind == _ALIGN and value not in ALIGNS:
        return f"must be one of {', '.join(ALIGNS)}, got {value!r}"
    if kind == _STAGE and not STAGE_REF.fullmatch(value):
        return f'must be a Func or an update of one ("local", "node.local", "local.update(0)"), got {value!r}'
    if kind == _NEW and not IDENTIFIER.fullmatch(value):
        return f"must be a loop name (letters, digits, underscores), got {value!r}"
    if kind in (_LOOP, _FUNC) and not LOOP_NAME.fullmatch(value):
        return f"must be a {'Func' if kind == _FUNC else 'loop'} name, got {value!r}"
    return None


def _matches(sig: tuple[tuple[str, str], ...], args: list[Any]) -> bool:
    """Whether the argument count fits the signature."""
    required = [k for _, k in sig if not k.endswith("?")]
    if sig and sig[-1][1].endswith("*"):
        return len(args) >= 1
    return len(required) <= len(args) <= len(sig)


def check_directive(directive: Any, scope_is_update: bool = False) -> str | None:
    """What is wrong with one directive (name, arity, argument types), or None."""
    if not isinstance(directive, list) or not directive or not isinstance(directive[0], str):
        return f"a directive must be a list [name, arguments...], got {directive!r}"
    name, args = directive[0], directive[1:]
    spec = DIRECTIVES.get(name)
    if spec is None:
        near = difflib.get_close_matches(name, DIRECTIVES, n=1)
        hint = f"; did you mean {near[0]}?" if near else f"; known directives: {', '.join(DIRECTIVES)}"
        return f"unknown directive `{name}`{hint}"
    if spec.scope == "func" and scope_is_update:
        return f"`{name}` applies to a whole Func: put it under the Func's own name, not under an update"
    candidates = [s for s in spec.signatures if _matches(s, args)]
    if not candidates:
        n = len(args)
        return f"`{name}` takes {spec.usage(name)}; got {n} argument{'s' if n != 1 else ''}"
    if name in LEVEL_DIRECTIVES and args and args[0] == "root" and len(args) != 1:
        return f'`{name}` at "root" takes no loop: write ["{name}", "root"]'
    if name in LEVEL_DIRECTIVES and len(args) == 1 and args[0] != "root":
        return f"`{name}` takes {spec.usage(name)}; a Func needs one of its loops"
    sig = candidates[0]
    for i, value in enumerate(args):
        arg_name, kind = sig[min(i, len(sig) - 1)]
        why = _check_arg(value, kind)
        if why is not None:
            return f"argument {i + 1} ({arg_name}) of `{name}` {why}"
    return None


def check_schedule(schedule: Any) -> list[str]:
    """Every static problem of a node's schedule object (no engine involved)."""
    if not isinstance(schedule, dict):
        return [f"the schedule must be an object mapping Func names to directive lists, got {schedule!r}"]
    problems = []
    for key, directives in schedule.items():
        parsed = parse_key(key)
        if parsed is None:
            problems.append(f'schedule key {key!r} is not a Func name such as "out" or "out.update(0)"')
            continue
        if not isinstance(directives, list):
            problems.append(f"the schedule of `{key}` must be a list of directives, got {directives!r}")
            continue
        for i, d in enumerate(directives):
            why = check_directive(d, parsed[1] is not None)
            if why is not None:
                problems.append(f"schedule of `{key}`, directive {i + 1}: {why}")
    return problems


# ---------------------------------------------------------------------------- applying


def resolve_func(graph: BuiltGraph, node_id: str, ref: str) -> pw.Func:
    """A Func named by a directive: "local" in node_id, or "node.local" in another node."""
    from pixelweave.nodes.errors import NodeError

    node, _, local = ref.partition(".") if "." in ref else (node_id, "", ref)
    try:
        return graph.func(node, local)
    except NodeError as e:
        raise pw.ScheduleError(f"Func reference {ref!r}: {e}") from None


_AT_ROOT = {"compute_at": "compute_root", "store_at": "store_root", "hoist_storage": "hoist_storage_root"}


def resolve_stage(graph: BuiltGraph, node_id: str, ref: str) -> Any:
    """The stage a compute_with names: a Func reference, with ".update(k)" for an update."""
    m = STAGE_REF.fullmatch(ref)
    if m is None:
        raise pw.ScheduleError(f"stage reference {ref!r} is not a Func or `func.update(k)`")
    func = resolve_func(graph, node_id, m.group("func"))
    return func if m.group("update") is None else func.update(int(m.group("update")))


def _apply(graph: BuiltGraph, node_id: str, target: Any, directive: list[Any]) -> None:
    name, args = directive[0], list(directive[1:])
    if name in LEVEL_DIRECTIVES:
        if args[0] == "root":
            getattr(target, _AT_ROOT[name])()
        else:
            getattr(target, name)(resolve_func(graph, node_id, args[0]), args[1])
        return
    if name == "store_in":
        target.store_in(MemoryType(args[0]))
        return
    if name == "compute_with":
        align = LoopAlignStrategy(args[2]) if len(args) > 2 else LoopAlignStrategy.Auto
        target.compute_with(resolve_stage(graph, node_id, args[0]), args[1], align)
        return
    if name in ("split", "tile") and args and args[-1] in TAILS and isinstance(args[-1], str):
        tail = TailStrategy(args.pop())
        getattr(target, name)(*args, tail=tail)
        return
    getattr(target, name)(*args)


def apply_schedule(graph: BuiltGraph, node_id: str, schedule: dict[str, list[list[Any]]]) -> list[str]:
    """Applies a (statically checked) schedule to the node's Funcs in a built graph; returns
    a problem per Func whose directives the engine refused (the engine's message included).
    Directives after a refused one in the same list are not applied."""
    problems = []
    funcs = graph.nodes[node_id].funcs
    for key, directives in schedule.items():
        local, update = parse_key(key)  # type: ignore[misc]
        if local not in funcs:
            names = ", ".join(sorted(funcs)) or "none"
            near = difflib.get_close_matches(local, funcs, n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            problems.append(f"schedule names Func `{local}`{hint}, which this node does not have; its Funcs: {names}")
            continue
        func = funcs[local]
        try:
            target = func if update is None else func.update(update)
        except pw.PixelweaveError as e:
            problems.append(f"schedule of `{key}`: {e}")
            continue
        for i, d in enumerate(directives):
            try:
                _apply(graph, node_id, target, d)
            except pw.PixelweaveError as e:
                problems.append(f"schedule of `{key}`, directive {i + 1} {_show(d)}: the engine refuses it: {e}")
                break
    return problems


def _show(directive: list[Any]) -> str:
    import json

    return json.dumps(directive)


# ---------------------------------------------------------------------------- the inverse


def _ref(name: str, dims: list[str]) -> str:
    """The shortest name the engine resolves to this loop: its last part when unambiguous."""
    short = name.rsplit(".", 1)[-1]
    if short == name:
        return name
    if short not in dims and sum(1 for d in dims if d.rsplit(".", 1)[-1] == short) == 1:
        return short
    return name


def _level(level: LoopLevel, node_id: str) -> list[Any]:
    if level.kind == "root":
        return ["root"]
    name = level.func.name()
    node, _, local = name.partition(".")
    return [local if node == node_id else name, level.var]


_MARKS = {
    ForType.PARALLEL: "parallel",
    ForType.VECTORIZED: "vectorize",
    ForType.UNROLLED: "unroll",
    ForType.GPU_BLOCK: "gpu_blocks",
    ForType.GPU_THREAD: "gpu_threads",
}


def _stage_directives(definition: Any, shorthand: bool = True) -> list[list[Any]]:
    """The directives that give a stage its loops. With `shorthand`, the splits that
    vectorize/unroll/parallel made with a width are folded back into them, unless a reorder
    has to name the loops those splits made up (then the splits are written out in full)."""
    schedule: StageSchedule | None = definition.schedule
    if schedule is None:
        return []
    dims = [d.name for d in StageSchedule.for_definition(definition).dims]
    kinds = {d.name: d.for_type for d in schedule.dims}
    marked: set[str] = set()
    out: list[list[Any]] = []
    for s in schedule.splits:
        if s.kind == "split":
            i = dims.index(s.old)
            folded = _shorthand(s, kinds) if shorthand else None
            if folded is not None:
                mark, loop = folded
                out.append([mark, _ref(s.old, dims), s.factor])
                marked.add(loop)
            else:
                outer, inner = s.outer[len(s.old) + 1 :], s.inner[len(s.old) + 1 :]
                d: list[Any] = ["split", _ref(s.old, dims), outer, inner, s.factor]
                if s.tail is not TailStrategy.AUTO:
                    d.append(s.tail.value)
                out.append(d)
            dims[i : i + 1] = [s.inner, s.outer]
        elif s.kind == "fuse":
            fused, outer, inner = s.old, s.outer, s.inner
            i, j = dims.index(inner), dims.index(outer)
            if j != i + 1:  # they were made adjacent by a reorder before the fuse
                rest = [n for n in dims if n != outer]
                rest.insert(rest.index(inner) + 1, outer)
                out.append(["reorder", *(_ref(n, rest) for n in rest)])
                dims = rest
                i = dims.index(inner)
            out.append(["fuse", _ref(inner, dims), _ref(outer, dims), fused])
            dims[i : i + 2] = [fused]
        else:
            raise pw.ScheduleError(f"cannot express a {s.kind} of loop {s.old} as a directive")
    final = [d.name for d in schedule.dims]
    if final != dims:
        out.append(["reorder", *(_ref(n, final) for n in final)])
    if marked and any(d[0] == "reorder" for d in out):
        return _stage_directives(definition, shorthand=False)
    for d in schedule.dims:
        if d.for_type in _MARKS and d.name not in marked:
            out.append([_MARKS[d.for_type], _ref(d.name, final)])
    return out


_FRESH = re.compile(r"v\d+")


def _shorthand(s: Any, kinds: dict[str, ForType]) -> tuple[str, str] | None:
    """(directive, the loop it marks) when a split is the one vectorize(v, width),
    unroll(v, factor) or parallel(v, task_size) makes, else None."""
    last = s.old.rsplit(".", 1)[-1]
    if (
        s.tail is not TailStrategy.AUTO
        or s.outer != f"{s.old}.{last}"
        or not _FRESH.fullmatch(s.inner[len(s.old) + 1 :])
    ):
        return None
    inner, outer = kinds.get(s.inner), kinds.get(s.outer)
    if inner in (ForType.VECTORIZED, ForType.UNROLLED):
        return _MARKS[inner], s.inner
    if inner is ForType.SERIAL and outer is ForType.PARALLEL:
        return "parallel", s.outer
    return None


def directives_of(func: pw.Func, node_id: str) -> dict[str, list[list[Any]]]:
    """The schedule a Func carries now, as document directives keyed as in documents
    ("out", "out.update(0)"), with Funcs of node_id named by their local names. Applying
    the result to a freshly built Func gives the same loops; defaults produce nothing."""
    local = func.name().partition(".")[2] or func.name()
    result: dict[str, list[list[Any]]] = {}
    call: list[list[Any]] = []
    state = func.schedule_of()
    if state.compute_level.kind == "root":
        call.append(["compute_root"])
    elif state.compute_level.kind == "at":
        call.append(["compute_at", *_level(state.compute_level, node_id)])
    if state.store_level is not None and state.store_level.kind == "root":
        call.append(["store_root"])
    elif state.store_level is not None and state.store_level.kind == "at":
        call.append(["store_at", *_level(state.store_level, node_id)])
    for var, (lo, extent) in state.bounds.items():
        if isinstance(lo, int) and isinstance(extent, int):
            call.append(["bound", var, lo, extent])
    if state.storage_order is not None:
        call.append(["reorder_storage", *state.storage_order])
    call.extend(_storage_directives(state, node_id))
    pure = call + _stage_directives(func.definition()) + _stage_extras(func, func.definition(), node_id)
    if pure:
        result[local] = pure
    for k, d in enumerate(func.updates()):
        stage = _stage_directives(d) + _stage_extras(func, d, node_id)
        if stage:
            result[f"{local}.update({k})"] = stage
    return result


def _storage_directives(state: Any, node_id: str) -> list[list[Any]]:
    """The directives that place and shape a Func's storage. As with bound(), extents given
    as expressions are left out: only a node's own code sets those, and it sets them again."""
    out: list[list[Any]] = []
    for var, extent in state.bound_extents.items():
        if isinstance(extent, int):
            out.append(["bound_extent", var, extent])
    for var, (modulus, remainder) in state.alignments.items():
        out.append(["align_extent", var, modulus] if remainder is None else ["align_bounds", var, modulus, remainder])
    for var, alignment in state.storage_alignments.items():
        out.append(["align_storage", var, alignment])
    for var, (extent, forward) in state.storage_folds.items():
        out.append(["fold_storage", var, extent] + ([] if forward else [False]))
    if state.hoist_level is not None:
        out.append(["hoist_storage", *_level(state.hoist_level, node_id)])
    if state.memory_type is not MemoryType.AUTO:
        out.append(["store_in", state.memory_type.value])
    if state.memoized and state.memoize_eviction_key is None:  # an eviction key is an Expr: code only
        out.append(["memoize"])
    return out


def _stage_extras(func: pw.Func, definition: Any, node_id: str) -> list[list[Any]]:
    """A stage's directives beyond its loops: partition controls, GPU single thread, atomic
    stores and compute_with."""
    from pixelweave.engine.self_reference import atomic_form, is_associative

    schedule: StageSchedule | None = definition.schedule
    if schedule is None:
        return []
    final = [d.name for d in schedule.dims]
    out: list[list[Any]] = []
    for policy, directive in ((Partition.NEVER, "never_partition"), (Partition.ALWAYS, "always_partition")):
        loops = [d.name for d in schedule.dims if d.partition is policy]
        if loops:
            out.append([directive, *(_ref(n, final) for n in loops)])
    if schedule.single_thread:
        out.append(["gpu_single_thread"])
    if schedule.atomic:
        form = atomic_form(func, definition)
        out.append(["atomic"] if form is None or is_associative(form[0]) else ["atomic", True])
    fuse = schedule.fuse_level
    if fuse is not None:
        parent = fuse.func.name()
        node, _, local = parent.partition(".")
        ref = (local if node == node_id else parent) + ("" if fuse.stage == 0 else f".update({fuse.stage - 1})")
        aligns = [a for v, a in fuse.align if not (v == fuse.var and a is LoopAlignStrategy.Auto)]
        if len(fuse.align) > 1 or any(v != fuse.var for v, _ in fuse.align):
            raise pw.ScheduleError(
                f"compute_with of `{func.name()}` aligns several loops ({fuse.align}); a document's compute_with "
                "aligns only the fused loop"
            )
        out.append(["compute_with", ref, fuse.var, *(a.value for a in aligns)])
    return out
