"""The native thread pool (engine/runtime/thread_pool.py): parallel loops of every size,
nested loops, failures inside iterations, and calls that find the workers spinning or
asleep, each checked against the reference evaluator or a known answer."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm_ir import ModuleBuilder
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime import thread_pool
from pixelweave.engine.runtime.jit import compile_pipeline, parallel_runtime_stats
from pixelweave.engine.stmt import AssertStmt, Block, For, ForType, Load, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, scalar, var

F32, I32 = Float(32), Int(32)
POOL_IN_USE = (os.cpu_count() or 1) > 1 and "PIXELWEAVE_NUM_THREADS" not in os.environ


def _blur_rows(parallel_inner: bool) -> pw.Pipeline:
    """A 3x3 sum over a clamped input, parallel over rows (and over columns inside, when
    parallel_inner), vectorized with a tail."""
    x, y, xo, xi = pw.Var("x"), pw.Var("y"), pw.Var("xo"), pw.Var("xi")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    out = pw.Func("out")
    out[x, y] = sum(clamped[x + i, y + j] for i in (-1, 0, 1) for j in (-1, 0, 1))
    if parallel_inner:
        out.split(x, xo, xi, 8).parallel(y).parallel(xo).vectorize(xi, 4)
    else:
        out.parallel(y).vectorize(x, 8)
    return pw.Pipeline(out)


@pytest.mark.parametrize("height", [1, 2, 3, 5, 64, 517])
@pytest.mark.parametrize("parallel_inner", [False, True])
def test_parallel_loops_of_few_and_many_iterations(rng, height: int, parallel_inner: bool) -> None:
    """Extents from one iteration (run serially) to hundreds, a nested parallel loop (run
    serially inside its parent's iteration), widths with vector tails."""
    width = 37
    image = rng.random((height, width), dtype=np.float32)
    pipeline = _blur_rows(parallel_inner)
    fn = pipeline.compile()
    want = pipeline.realize_reference([width, height], {"input": image})
    for _ in range(5):
        np.testing.assert_array_equal(fn([width, height], {"input": image}), want)


def _heavy_rows() -> LoweredPipeline:
    """out[y] = sum over k < work of (k + y) % 7: rows long enough for workers to join in."""
    y, k = var("y"), var("k")
    accumulate = Store("out", E.Add(Load(F32, "out", y), E.Cast(F32, E.Mod(E.Add(k, y), i32(7)))), y)
    body = For(
        "y",
        i32(0),
        var("out.extent.0"),
        ForType.PARALLEL,
        Block([Store("out", E.Const(F32, 0), y), For("k", i32(0), var("work"), ForType.SERIAL, accumulate)]),
    )
    return LoweredPipeline("pool_heavy_rows", [scalar("work", I32), buffer("out", F32, 1, True)], body)


def _busy_wait(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


# Pauses between calls around the spin windows: none, inside WORKER_SPIN_NS, just past it,
# and long enough for every worker to be asleep in the kernel.
GAPS = [0.0, thread_pool.WORKER_SPIN_NS * 0.25e-9, thread_pool.WORKER_SPIN_NS * 1.5e-9, 0.01]


def test_calls_that_find_workers_spinning_or_asleep() -> None:
    """Every call is right whether the workers are still spinning on the last loop's state,
    just going to sleep, or asleep; and the workers do take part after sleeping."""
    fn = compile_pipeline(_heavy_rows())
    rows, work = 48, 20_000
    ks = np.arange(work)
    want = np.array([float(((ks + row) % 7).sum()) for row in range(rows)], np.float32)
    out = np.zeros(rows, np.float32)
    before = parallel_runtime_stats()
    for _ in range(6):
        for gap in GAPS:
            if gap >= 0.001:
                time.sleep(gap)
            else:
                _busy_wait(gap)
            out[:] = -1
            fn({"work": work}, {"out": out})
            np.testing.assert_array_equal(out, want)
    if POOL_IN_USE:
        assert parallel_runtime_stats()["worker_joins"] > before["worker_joins"], "no worker ever ran an iteration"


def _failing_rows() -> LoweredPipeline:
    """Rows y >= limit fail an assertion that names the row."""
    y = var("y")
    row = Block(
        [AssertStmt(E.LT(y, var("limit")), "row {} is past the limit", (y,)), Store("out", E.Mul(y, i32(2)), y)]
    )
    body = For("y", i32(0), var("out.extent.0"), ForType.PARALLEL, row)
    return LoweredPipeline("pool_failing_rows", [scalar("limit", I32), buffer("out", I32, 1, True)], body)


@pytest.mark.parametrize("gap", GAPS)
def test_failures_inside_iterations_are_reported(gap: float) -> None:
    """A failing iteration's message comes back whatever state the workers were in, and
    the next call (the pool reused) computes every row."""
    fn = compile_pipeline(_failing_rows())
    out = np.zeros(200, np.int32)
    for limit in (0, 1, 150, 199):
        time.sleep(gap)
        with pytest.raises(RuntimeFailure) as info:
            fn({"limit": limit}, {"out": out})
        match = re.fullmatch(r"row (\d+) is past the limit", str(info.value))
        assert match is not None and int(match.group(1)) >= limit, str(info.value)
        time.sleep(gap)
        fn({"limit": 200}, {"out": out})
        np.testing.assert_array_equal(out, np.arange(200) * 2)


def test_concurrent_callers_while_workers_spin(rng) -> None:
    """Python threads calling at once: one gets the pool, the others run serially; all right."""
    image = rng.random((97, 61), dtype=np.float32)
    pipeline = _blur_rows(parallel_inner=False)
    fn = pipeline.compile()
    want = pipeline.realize_reference([61, 97], {"input": image})
    failures: list[str] = []

    def call_many() -> None:
        for _ in range(40):
            if not np.array_equal(fn([61, 97], {"input": image}), want):
                failures.append("wrong image")

    threads = [threading.Thread(target=call_many) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _running_threads_other_than(main_tid: int) -> list[int]:
    running = []
    for task in Path("/proc/self/task").iterdir():
        tid = int(task.name)
        if tid == main_tid:
            continue
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] == "R":
            running.append(tid)
    return running


def test_workers_stop_spinning_when_idle() -> None:
    """The spin is bounded: once no loop comes, every worker goes to sleep in the kernel
    instead of burning a core (polled for up to 2 s; the bound is WORKER_SPIN_NS)."""
    fn = compile_pipeline(_heavy_rows())
    out = np.zeros(32, np.float32)
    fn({"work": 20_000}, {"out": out})
    main = threading.get_native_id()
    deadline = time.monotonic() + 2.0
    running = _running_threads_other_than(main)
    while running and time.monotonic() < deadline:
        time.sleep(0.01)
        running = _running_threads_other_than(main)
    assert running == [], f"threads {running} still running 2 s after the last parallel loop"


def test_spin_is_measured_in_time_not_pause_count() -> None:
    """A `pause` lasts ~11 ns on one x86 and ~140 cycles on another, so the spin windows
    are deadlines on the monotonic clock (a count of 2000 pauses was 22 µs here, shorter
    than the gap between two calls from Python, and every call paid a futex wake)."""
    spec = resolve_target("host")
    module = ModuleBuilder("pool_ir", spec.triple, data_layout(spec))
    thread_pool.add_thread_pool(module, arch=spec.arch, export=True, with_destructor=False)
    ir = module.render()
    assert re.search(r"call i32 @clock_gettime\(i32 1, ptr %ts\)", ir)
    assert ir.count("call i64 @pw_pool_deadline(") == 2  # the worker's spin and the caller's
    assert f"i64 {thread_pool.WORKER_SPIN_NS})" in ir and f"i64 {thread_pool.CALLER_SPIN_NS})" in ir
