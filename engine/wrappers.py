"""Wrapper and clone Funcs (Halide's `Func.in_`, `ImageParam.in_` and `Func.clone_in`).

A wrapper is a new Func `w[args] = f[args]` that takes f's place in some consumers, so it
can be scheduled on its own (staging loads of f or of an input image in a tile, in another
layout or vectorized differently); a clone is a copy of f's definitions and schedule that
takes its place the same way, so one consumer can compute f another way. Wrapping for given
consumers rewrites their definitions at once. A global wrapper (`f.in_()`) stands for f in
every Func of a pipeline that calls it: those consumers are known only when a Pipeline
collects its Funcs, which is when the calls are redirected (as Halide does when it lowers).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.implicit import implicit_var
from pixelweave.engine.ir.param import ImageParam
from pixelweave.engine.ir.visit import mutate, walk

Wrapped = Func | ImageParam

_generation = itertools.count(1)
_current_generation = 0
_global_wrappers_made = [False]  # until one is, collecting a pipeline has nothing to redirect


@dataclass
class Wrappers:
    """The wrappers and clones made of one Func or image (its `wrapping` attribute). The
    consumers are held here too, so the ids used as keys stay theirs."""

    by_consumer: dict[int, tuple[Func, Func]] = field(default_factory=dict)  # id -> (consumer, wrapper or clone)
    global_wrapper: Func | None = None
    made: set[int] = field(default_factory=set)  # id() of every wrapper and clone of it (held above)


@dataclass(frozen=True)
class Origin:
    """What a wrapper or clone stands for (its `wrapper_of` attribute)."""

    wrapped: Any  # the Func or ImageParam
    is_clone: bool


def wrapping_generation() -> int:
    """Grows whenever a wrapper or clone is made: a Pipeline that collected its Funcs
    before then collects them again."""
    return _current_generation


def _bump() -> None:
    global _current_generation
    _current_generation = next(_generation)


def wrapped_by(w: Func) -> Wrapped | None:
    """The Func or image that `w` wraps or clones, or None for an ordinary Func."""
    return None if w.wrapper_of is None else w.wrapper_of.wrapped


def _record(f: Wrapped) -> Wrappers:
    if f.wrapping is None:
        f.wrapping = Wrappers()
    return f.wrapping


def _consumer_list(f: Wrapped, consumers: Any, directive: str) -> list[Func]:
    items = list(consumers) if isinstance(consumers, (list, tuple)) else [consumers]
    if not items:
        raise ScheduleError(f"{directive} of `{f.name()}` needs at least one consumer Func")
    out: list[Func] = []
    for c in items:
        if not isinstance(c, Func):
            raise ScheduleError(f"{directive} of `{f.name()}` takes consumer Funcs, got {c!r}")
        if c is f:
            raise ScheduleError(f"{directive} of `{f.name()}` cannot wrap `{f.name()}` in itself")
        if not c.defined():
            raise ScheduleError(
                f"{directive} of `{f.name()}`: Func `{c.name()}` has no definition yet; define it first"
            )
        if any(c is o for o in out):
            raise ScheduleError(f"{directive} of `{f.name()}` names Func `{c.name()}` twice")
        out.append(c)
    return out


def _check_calls(f: Wrapped, targets: list[Func], directive: str) -> None:
    for c in targets:
        if not _calls(c, f):
            raise ScheduleError(
                f"{directive} of `{f.name()}`: Func `{c.name()}` does not call `{f.name()}`, so there is "
                "nothing to wrap"
            )


def _definitions(c: Func) -> list[Definition]:
    return [c.definition(), *c.updates()]


def _definition_exprs(d: Definition) -> list[E.Expr]:
    exprs = [*d.all_values(), *d.args]
    if d.predicate is not None:
        exprs.append(d.predicate)
    return exprs


def _is_call_of(node: E.Expr, f: Wrapped) -> bool:
    return isinstance(node, E.Call) and node.call_kind in ("func", "image") and node.target is f


def _calls(c: Func, f: Wrapped) -> bool:
    return any(_is_call_of(n, f) for d in _definitions(c) for e in _definition_exprs(d) for n in walk(e))


def _calls_replaced(f: Wrapped, w: Func) -> Callable[[E.Expr], E.Expr]:
    """An Expr rewriter that makes every call of f a call of w (same coordinates and value)."""

    def fn(node: E.Expr) -> E.Expr | None:
        if not _is_call_of(node, f):
            return None
        args = tuple(mutate(a, fn) for a in node.args)
        return E.Call(node.type(), w.name(), args, "func", w, node.value_index)

    return lambda e: mutate(e, fn)


def _redirect(c: Func, f: Wrapped, w: Func) -> None:
    """Make every call of f in c's definitions a call of w."""
    rewrite = _calls_replaced(f, w)
    for d in _definitions(c):
        d.value = rewrite(d.value)
        d.extra_values = tuple(rewrite(v) for v in d.extra_values)
        d.args = tuple(rewrite(a) for a in d.args)
        if d.predicate is not None:
            d.predicate = rewrite(d.predicate)


def _pure_args(f: Wrapped) -> list[Any]:
    if isinstance(f, ImageParam):
        return [implicit_var(i) for i in range(f.dimensions())]
    return list(f.args())


def _new_wrapper(f: Wrapped, name: str, directive: str) -> Func:
    w = Func(name)
    args = _pure_args(f)
    w[tuple(args)] = f[tuple(args)]
    w.freeze_definitions(f"made by {directive} as a wrapper of `{f.name()}`")
    w.wrapper_of = Origin(f, is_clone=False)
    _record(f).made.add(id(w))
    return w


def _check_wrappable(f: Wrapped, directive: str) -> None:
    if isinstance(f, Func) and not f.defined():
        raise ScheduleError(f"{directive} of `{f.name()}` needs `{f.name()}` to be defined first")


def wrap_in(f: Wrapped, consumers: Any = None) -> Func:
    """f.in_(g) / f.in_([g, h]) / f.in_(): the wrapper Func that stands for f in those
    consumers (in every consumer for f.in_()); asking again returns the same wrapper."""
    directive = "in_()" if consumers is None else "in_(...)"
    _check_wrappable(f, directive)
    record = _record(f)
    if consumers is None:
        if record.global_wrapper is None:
            record.global_wrapper = _new_wrapper(f, f"{f.name()}_global_wrapper", f"{f.name()}.in_()")
            _global_wrappers_made[0] = True
            _bump()
        return record.global_wrapper
    targets = _consumer_list(f, consumers, directive)
    again = _made_before(f, record, targets, clone=False, directive=directive)
    if again is not None:
        return again
    _check_calls(f, targets, directive)
    label = "_".join(c.name() for c in targets)
    w = _new_wrapper(f, f"{f.name()}_in_{label}", f"{f.name()}.in_({', '.join(c.name() for c in targets)})")
    for c in targets:
        _redirect(c, f, w)
        record.by_consumer[id(c)] = (c, w)
    _bump()
    return w


def _made_before(f: Wrapped, record: Wrappers, targets: list[Func], clone: bool, directive: str) -> Func | None:
    """The wrapper (or clone) made earlier for exactly these consumers, None if none of them
    has one; ScheduleError if some have another one."""
    known = [record.by_consumer[id(c)][1] if id(c) in record.by_consumer else None for c in targets]
    if all(k is None for k in known):
        return None
    first = known[0]
    if first is not None and all(k is first for k in known) and _is_clone(first) == clone:
        return first
    taken = ", ".join(f"`{c.name()}`" for c, k in zip(targets, known, strict=True) if k is not None)
    what = "clone" if clone else "wrapper"
    raise ScheduleError(
        f"{directive} of `{f.name()}`: another wrapper or clone of `{f.name()}` already stands for it in "
        f"{taken}; make one {what} for all of its consumers at once"
    )


def _is_clone(w: Func) -> bool:
    return w.wrapper_of is not None and w.wrapper_of.is_clone


def clone_in(f: Func, consumers: Any) -> Func:
    """f.clone_in(g) / f.clone_in([g, h]): a copy of f (its definitions and its schedule)
    that those consumers call instead of f; asking again returns the same clone."""
    if not isinstance(f, Func):
        raise ScheduleError(f"clone_in needs a Func, got {f!r}")
    _check_wrappable(f, "clone_in(...)")
    record = _record(f)
    targets = _consumer_list(f, consumers, "clone_in(...)")
    again = _made_before(f, record, targets, clone=True, directive="clone_in(...)")
    if again is not None:
        return again
    _check_calls(f, targets, "clone_in(...)")
    label = "_".join(c.name() for c in targets)
    clone = Func(f"{f.name()}_clone_in_{label}")
    _copy_definitions(f, clone)
    clone.restore_schedule(f.schedule_snapshot())
    clone.wrapper_of = Origin(f, is_clone=True)
    record.made.add(id(clone))
    for c in targets:
        _redirect(c, f, clone)
        record.by_consumer[id(c)] = (c, clone)
    _bump()
    return clone


def _copy_definitions(f: Func, clone: Func) -> None:
    """clone's definitions are f's, with f's references to itself made references to clone."""
    rewrite = _calls_replaced(f, clone)

    def copy(d: Definition) -> Definition:
        return Definition(
            tuple(rewrite(a) for a in d.args),
            rewrite(d.value),
            d.rdom,
            None if d.predicate is None else rewrite(d.predicate),
            None,
            d.pure_vars,
            tuple(rewrite(v) for v in d.extra_values),
        )

    clone.adopt_definitions(copy(f.definition()), [copy(d) for d in f.updates()])


def apply_global_wrappers(c: Func) -> None:
    """Redirect c's calls of every Func or image that has a global wrapper to that wrapper,
    unless c is that wrapper, one of its other wrappers or clones, or the Func itself."""
    if not _global_wrappers_made[0]:
        return
    callees: dict[int, Wrapped] = {}
    for d in _definitions(c):
        for e in _definition_exprs(d):
            for n in walk(e):
                if isinstance(n, E.Call) and n.call_kind in ("func", "image") and n.target is not c:
                    callees.setdefault(id(n.target), n.target)
    for callee in callees.values():
        record = callee.wrapping
        if record is None or record.global_wrapper is None or id(c) in record.made:
            continue
        _redirect(c, callee, record.global_wrapper)
