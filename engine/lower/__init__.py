"""Lowering: from a Pipeline and its schedules to a flat loop nest, one pass per file.

`lower()` lists the passes in order; with PIXELWEAVE_DEBUG_LOWER=1 in the environment it
prints the statement after each pass and the time each pass took (as Halide's Lower.cpp
does with HL_DEBUG_CODEGEN).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.allocation_bounds import allocation_bounds
from pixelweave.engine.lower.boundary_fast_path import boundary_fast_path
from pixelweave.engine.lower.bounds_inference import bounds_inference
from pixelweave.engine.lower.collector_pace import paced_collector
from pixelweave.engine.lower.compute_with import fuse_groups
from pixelweave.engine.lower.context import LoweringContext, build_context
from pixelweave.engine.lower.explicit_folding import explicit_storage_folding
from pixelweave.engine.lower.final_simplify import simplify_stmt
from pixelweave.engine.lower.flatten import memory_types_by_buffer, storage_flattening
from pixelweave.engine.lower.hoist_storage import hoist_storage
from pixelweave.engine.lower.inline import inline_functions
from pixelweave.engine.lower.input_checks import add_input_checks
from pixelweave.engine.lower.lift_root_lets import lift_root_lets
from pixelweave.engine.lower.memoization import check_memoized, inject_memoization
from pixelweave.engine.lower.opencl_vectorize import vectorize_loops_for_opencl
from pixelweave.engine.lower.partition_loops import partition_loops
from pixelweave.engine.lower.region import clear_cache as clear_region_cache
from pixelweave.engine.lower.schedule_functions import schedule_functions
from pixelweave.engine.lower.simplify import clear_simplify_cache
from pixelweave.engine.lower.sliding_window import sliding_window
from pixelweave.engine.lower.storage_folding import storage_folding
from pixelweave.engine.lower.streaming_stores import mark_streaming_stores
from pixelweave.engine.lower.tracing import add_tracing
from pixelweave.engine.lower.unroll import unroll_loops
from pixelweave.engine.lower.vectorize import vectorize_loops
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.pipeline import Pipeline
from pixelweave.engine.schedule import Partition
from pixelweave.engine.stmt import ForType, Stmt
from pixelweave.engine.stmt_printer import stmt_to_string


@dataclass
class LoweringResult:
    lowered: LoweredPipeline
    loop_nest: Stmt  # after bounds inference: what the inspector's loop nest shows
    timings: dict[str, float]
    output_regions: dict[str, list[tuple[Any, Any]]] = field(default_factory=dict)  # see output_window.py


def _debug() -> bool:
    return os.environ.get("PIXELWEAVE_DEBUG_LOWER", "") not in ("", "0")


_lowerings = [0]


def lowering_count() -> int:
    """How many times this process has lowered a pipeline (tests use it to see that a
    compile came from the cache keyed before lowering)."""
    return _lowerings[0]


def lower(
    pipeline: Pipeline,
    target: str = "host",
    name: str = "pipeline",
    on_loop_nest: Callable[[Stmt], None] | None = None,
    check: Callable[[], None] | None = None,
) -> LoweringResult:
    """Run every lowering pass in order; `on_loop_nest(stmt)` is called with the loop nest as
    soon as it is made, before the later passes (an editor shows it while they run), and
    `check()` before every pass (it raises to cancel a lowering nobody waits for any more)."""
    _lowerings[0] += 1
    with deep_recursion(), paced_collector():
        return _lower(pipeline, target, name, on_loop_nest=on_loop_nest, check=check)


def lower_loop_nest(pipeline: Pipeline, target: str = "host") -> Stmt:
    """Only the passes up to the loop nest the inspector shows (the same statement as
    `lower(...).loop_nest`), without flattening, vectorization and final simplification:
    what an editor needs on every schedule change, at about half the cost."""
    with deep_recursion(), paced_collector():
        return _lower(pipeline, target, "pipeline", loop_nest_only=True).loop_nest


RECURSION_LIMIT = 20_000


_recursion_lock = threading.Lock()
_recursion_users = [0, 0]  # threads inside deep_recursion, the limit to restore after the last


@contextmanager
def deep_recursion():
    """Inlining builds deep expression trees (a blur of a blur of ...), and the passes and
    the backend recurse over them. The limit is process-wide: it is restored only when the
    last thread inside leaves (the editor lowers on two threads at once)."""
    with _recursion_lock:
        if _recursion_users[0] == 0:
            _recursion_users[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_recursion_users[1], RECURSION_LIMIT))
        _recursion_users[0] += 1
    try:
        yield
    finally:
        with _recursion_lock:
            _recursion_users[0] -= 1
            if _recursion_users[0] == 0:
                sys.setrecursionlimit(_recursion_users[1])


def _lower(
    pipeline: Pipeline,
    target: str,
    name: str,
    loop_nest_only: bool = False,
    on_loop_nest: Callable[[Stmt], None] | None = None,
    check: Callable[[], None] | None = None,
) -> LoweringResult:
    check = check or (lambda: None)
    timings: dict[str, float] = {}
    clear_region_cache()
    clear_simplify_cache()
    ctx = build_context(pipeline, target)
    fuse_groups(ctx)
    _check_target(ctx)
    check_memoized(ctx)
    inline_functions(ctx)

    passes: list[tuple[str, Callable[[Stmt], Stmt]]] = [
        ("bounds inference", lambda s: bounds_inference(ctx, s)),
        ("sliding window", lambda s: sliding_window(ctx, s)),
        ("root lets above storage", lift_root_lets),
        ("allocation bounds", lambda s: allocation_bounds(ctx, s)),
        ("explicit storage folding", lambda s: explicit_storage_folding(ctx, s)),
        ("storage folding", lambda s: storage_folding(ctx, s)),
        ("input and output checks", lambda s: add_input_checks(ctx, s)),
        ("tracing", lambda s: add_tracing(ctx, s)),
    ]
    late: list[tuple[str, Callable[[Stmt], Stmt]]] = [
        ("storage flattening", lambda s: storage_flattening(ctx, s)),
        ("memoization", lambda s: inject_memoization(ctx, s)),
        ("hoisted storage", lambda s: hoist_storage(ctx, s)),
        ("simplification before unrolling", simplify_stmt),
        ("unrolling", unroll_loops),
        ("boundary fast path", boundary_fast_path),
        # OpenCL: only the widths of its vector types; other vectorized loops stay serial
        ("vectorization", vectorize_loops if target != "opencl" else vectorize_loops_for_opencl),
        (
            "loop partitioning",
            (lambda s: partition_loops(s, _partition_policies(ctx))) if target != "opencl" else (lambda s: s),
        ),
        ("simplification", simplify_stmt),
        # CPU targets: the stores of a large output bypass the caches
        ("streaming stores", (lambda s: mark_streaming_stores(ctx, s)) if target != "opencl" else (lambda s: s)),
    ]
    start = time.perf_counter()
    stmt = schedule_functions(ctx)
    _log("schedule functions (loop synthesis and injection)", stmt, start, timings)
    for pass_name, fn in passes:
        check()
        start = time.perf_counter()
        stmt = fn(stmt)
        _log(pass_name, stmt, start, timings)
    loop_nest = stmt
    if on_loop_nest is not None:
        on_loop_nest(loop_nest)
    if loop_nest_only:
        late = []
    for pass_name, fn in late:
        check()
        start = time.perf_counter()
        stmt = fn(stmt)
        _log(pass_name, stmt, start, timings)
    arguments = _arguments(ctx)
    profile_names = [info.name for info in ctx.funcs]
    clear_region_cache()
    clear_simplify_cache()
    lowered = LoweredPipeline(name, arguments, stmt, profile_names, strict_float=False)
    lowered.memory_types = memory_types_by_buffer(ctx)
    return LoweringResult(lowered, loop_nest, timings, ctx.output_regions)


def _log(pass_name: str, stmt: Stmt, start: float, timings: dict[str, float]) -> None:
    elapsed = time.perf_counter() - start
    timings[pass_name] = elapsed
    if _debug():
        print(f"--- after {pass_name} ({elapsed * 1000:.2f} ms):\n{stmt_to_string(stmt)}", file=sys.stderr)


def _check_target(ctx: LoweringContext) -> None:
    for info in ctx.funcs:
        schedules = [(k, s) for k, stage in enumerate(info.stages) for s in stage.schedule.all_schedules()]
        for k, stage_schedule in schedules:
            where = info.name if k == 0 else f"update {k - 1} of {info.name}"
            if getattr(stage_schedule, "single_thread", False):
                gpu = [d.name for d in stage_schedule.dims if d.for_type in (ForType.GPU_BLOCK, ForType.GPU_THREAD)]
                if gpu:
                    raise ScheduleError(
                        f"`{where}` is gpu_single_thread and also maps loop {gpu[0]} to the GPU; use one or the other"
                    )
                if ctx.target != "opencl":
                    raise ScheduleError(
                        f"`{where}` is gpu_single_thread, which needs target='opencl'; "
                        f"the target here is {ctx.target!r}"
                    )
            if ctx.target == "opencl":
                if getattr(stage_schedule, "atomic", False):
                    raise ScheduleError(
                        f"`{where}` is atomic(), which Pixelweave compiles for CPU targets only, not target='opencl'"
                    )
                continue
            for d in stage_schedule.dims:
                if d.for_type in (ForType.GPU_BLOCK, ForType.GPU_THREAD):
                    raise ScheduleError(
                        f"`{where}` maps loop {d.name} to the GPU ({d.for_type.value}), which needs "
                        f"target='opencl'; the target here is {ctx.target!r}"
                    )


def _partition_policies(ctx: LoweringContext) -> dict[str, tuple[Partition, str]]:
    """Loop name -> (the partition policy its schedule set, where it was set), for the
    loops whose policy is not AUTO."""
    policies: dict[str, tuple[Partition, str]] = {}
    for info in ctx.funcs:
        for k, stage in enumerate(info.stages):
            where = f"Func `{info.name}`" if k == 0 else f"update {k - 1} of Func `{info.name}`"
            seen: dict[str, Partition] = {}
            for d in (d for sched in stage.schedule.all_schedules() for d in sched.dims):
                if seen.setdefault(d.name, d.partition) != d.partition:
                    # The branches of a specialized stage share loop names, so one policy per loop.
                    raise ScheduleError(
                        f"loop {d.name} of {where} has different partition policies in its specializations "
                        f"({seen[d.name].value} and {d.partition.value}); Pixelweave applies one policy to a "
                        "loop in every specialization of its stage: give them the same"
                    )
                if d.partition != Partition.AUTO:
                    policies[f"{info.name}.s{k}.{d.name}"] = (d.partition, where)
    return policies


def _arguments(ctx: LoweringContext) -> list[Argument]:
    args = [Argument(im.name(), "buffer", im.type(), im.dimensions()) for im in ctx.images]
    args += [Argument(p.name, "scalar", p.type()) for p in ctx.params]
    for name in ctx.output_names:
        info = ctx.by_name(name)
        args.append(Argument(info.name, "buffer", info.type, len(info.pure_vars), is_output=True))
    return args


I32 = Int(32)
