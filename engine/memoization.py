"""Halide's `Func.memoize(eviction_key)`: a Func's values kept across realizations.

A memoized Func is looked up in a process-wide cache (engine/runtime/memoization_cache.py)
before it is produced; on a hit its storage is filled from the cache and its production
skipped, on a miss it is computed and stored. The lowering pass engine/lower/memoization.py
builds the key; it holds what decides the values:

- the Func's identity: a hash of its algorithm and schedule with everything it reads,
  transitively, and of the target (equal pipelines share entries, as realizing a Func
  twice must; Halide keys by the pipeline and Func names and a per-compilation counter);
- the values of the scalar Params it depends on, transitively;
- the region it is computed over and the shape of its storage;
- for every input image it depends on, transitively, its shape and a hash of its contents.
  Here Pixelweave departs from Halide, which refuses an ImageParam (unless memoize_tag says
  what stands for it) and keys a Buffer by nothing at all, so that an array changed in place
  would bring back stale values. Hashing costs a pass over the input per lookup.

The eviction key is not part of the key (as in Halide): it files the stored entry so that
`memoization_cache_evict(key)` can remove it.
"""

from __future__ import annotations

from typing import Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import to_expr
from pixelweave.engine.ir.visit import walk


class EvictionKey:
    """The Expr a memoized Func's entries are filed under (Halide's EvictionKey): an integer
    or bool expression of constants and scalar Params, promoted to a uint64."""

    def __init__(self, expr: Any) -> None:
        self.expr = expr

    def __repr__(self) -> str:
        return f"EvictionKey({self.expr})"


def eviction_key_expr(func_name: str, eviction_key: Any, previous: E.Expr | None) -> E.Expr | None:
    """The checked eviction key Expr of `memoize(eviction_key)` (None: no key); refuses
    what Halide refuses (floats, vectors, a second, different key) and what cannot be
    evaluated where the Func's storage is made (Vars, RVars, Func calls, images)."""
    if isinstance(eviction_key, EvictionKey):
        eviction_key = eviction_key.expr
    if eviction_key is None:
        return None
    try:
        key = to_expr(eviction_key)
    except Exception:
        raise ScheduleError(
            f"memoize() of Func `{func_name}` takes an EvictionKey or an integer Expr, got {eviction_key!r}"
        ) from None
    t = key.type()
    if t.is_float():
        raise ScheduleError(
            f"memoize() of Func `{func_name}`: can't use a floating-point eviction key ({key}); use an integer Expr"
        )
    if t.is_vector():
        raise ScheduleError(f"memoize() of Func `{func_name}`: can't use a vector as an eviction key ({key})")
    for node in walk(key):
        if isinstance(node, E.Call):
            what = "a call to a Func or image" if node.call_kind != "intrinsic" else None
            if what is not None:
                raise ScheduleError(
                    f"memoize() of Func `{func_name}`: the eviction key {key} makes {what}; "
                    "use constants and scalar Params only"
                )
        if isinstance(node, E.Variable) and not (node.kind == "param" and node.owner is node):
            raise ScheduleError(
                f"memoize() of Func `{func_name}`: the eviction key {key} uses `{node.name}`, which has no value "
                "where the Func's storage is made; use constants and scalar Params only"
            )
    if previous is not None and not previous.same_as(key):
        raise ScheduleError(
            f"memoize() of Func `{func_name}`: can't redefine the eviction key; the first definition is {previous}, "
            f"the new one {key}"
        )
    return key
