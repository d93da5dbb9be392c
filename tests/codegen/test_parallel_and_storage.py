"""Parallel loops on the native thread pool, and stack / heap allocations."""

from __future__ import annotations

import os

import numpy as np
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline, parallel_runtime_stats
from pixelweave.engine.stmt import Allocate, Block, For, ForType, Load, ProducerConsumer, Store

from tests.codegen.builders import buffer, i32, scalar, var

F32, I32 = Float(32), Int(32)


def test_parallel_loop_result_and_threads() -> None:
    """out[y] = sum of a long serial loop: heavy enough rows that workers join in."""
    y, k = var("y"), var("k")
    accumulate = Store("out", E.Add(Load(F32, "out", y), E.Cast(F32, E.Mod(E.Add(k, y), i32(7)))), y)
    body = For(
        "y",
        i32(0),
        var("out.extent.0"),
        ForType.PARALLEL,
        Block([Store("out", E.Const(F32, 0), y), For("k", i32(0), var("work"), ForType.SERIAL, accumulate)]),
    )
    fn = compile_pipeline(LoweredPipeline("heavy_rows", [scalar("work", I32), buffer("out", F32, 1, True)], body))
    before = parallel_runtime_stats()
    out = np.zeros(64, np.float32)
    for _ in range(3):
        fn({"work": 100_000}, {"out": out})
    ks = np.arange(100_000)
    want = np.array([float(((ks + row) % 7).sum()) for row in range(64)], np.float32)
    np.testing.assert_array_equal(out, want)
    after = parallel_runtime_stats()
    if (os.cpu_count() or 1) > 1 and "PIXELWEAVE_NUM_THREADS" not in os.environ:
        assert after["workers"] >= 1
        assert after["worker_joins"] > before["worker_joins"], "no worker thread ever ran an iteration"


def test_nested_parallel_loops() -> None:
    y, x = var("y"), var("x")
    value = E.Add(E.Mul(y, i32(1000)), x)
    inner = For(
        "x", i32(0), var("out.extent.0"), ForType.PARALLEL, Store("out", value, E.Add(E.Mul(y, var("out.stride.1")), x))
    )
    body = For("y", i32(0), var("out.extent.1"), ForType.PARALLEL, inner)
    fn = compile_pipeline(LoweredPipeline("nested_parallel", [buffer("out", I32, 2, True)], body))
    out = np.full((37, 53), -1, np.int32)
    for _ in range(20):
        fn({}, {"out": out})
    np.testing.assert_array_equal(out, np.arange(37)[:, None] * 1000 + np.arange(53)[None, :])


def test_stack_allocations_constant_and_dynamic() -> None:
    """A constant-size scratch array inside a parallel loop, and a run-time-size one inside a
    long serial loop (200000 iterations: an alloca per iteration would overflow the stack)."""
    y, j = var("y"), var("j")
    fill = For("j", i32(0), i32(16), ForType.SERIAL, Store("tmp", E.Mul(j, y), j))
    total = For("j", i32(0), i32(16), ForType.SERIAL, Store("out", E.Add(Load(I32, "out", y), Load(I32, "tmp", j)), y))
    constant = For(
        "y", i32(0), var("out.extent.0"), ForType.PARALLEL,
        Allocate("tmp", I32, i32(16), True, Block([Store("out", i32(0), y), fill, total])),
    )  # fmt: skip
    size = E.Add(E.Mod(y, i32(100)), i32(1000))
    dyn_fill = For("j", i32(0), size, ForType.SERIAL, Store("dyn", j, j))
    dynamic = For(
        "y", i32(0), i32(200_000), ForType.SERIAL,
        Allocate("dyn", I32, size, True, Block([dyn_fill, Store("last", Load(I32, "dyn", E.Sub(size, i32(1))), i32(0))])),
    )  # fmt: skip
    args = [buffer("out", I32, 1, True), buffer("last", I32, 1, True)]
    fn = compile_pipeline(LoweredPipeline("stack_allocations", args, Block([constant, dynamic])))
    out, last = np.zeros(50, np.int32), np.zeros(1, np.int32)
    fn({}, {"out": out, "last": last})
    np.testing.assert_array_equal(out, np.arange(50) * sum(range(16)))
    assert last[0] == (199_999 % 100) + 999


def test_heap_allocation_as_intermediate(rng) -> None:
    x = var("x")
    n = var("out.extent.0")
    produce = ProducerConsumer(
        "tmp", True, For("x", i32(0), n, ForType.SERIAL, Store("tmp", E.Mul(Load(F32, "inp", x), E.Const(F32, 2.0)), x))
    )
    consume = ProducerConsumer(
        "tmp", False, For("x", i32(0), n, ForType.SERIAL, Store("out", Load(F32, "tmp", E.Sub(E.Sub(n, i32(1)), x)), x))
    )
    body = Allocate("tmp", F32, n, False, Block([produce, consume]))
    fn = compile_pipeline(LoweredPipeline("heap_intermediate", [buffer("inp", F32), buffer("out", F32, 1, True)], body))
    inp = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(inp)
    fn({"inp": inp}, {"out": out})
    np.testing.assert_array_equal(out, (inp * 2)[::-1])


def test_concurrent_calls_from_python_threads(rng) -> None:
    """Several threads call one pipeline at once (the GIL is released): the second caller
    of a busy pool runs its loops serially, a busy scratch slot makes it allocate its own."""
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.stencil_chain import stencil_chain

    fn = compile_pipeline(stencil_chain(3, "concurrent_chain"))
    images = [rng.random((40, 64), dtype=np.float32) for _ in range(4)]

    def expected(image: np.ndarray) -> np.ndarray:
        """Each stage writes rows [1, h-1) and columns [16, w-16) and leaves its borders
        unwritten, so after 3 stages only [3, h-3) x [18, w-18) is defined."""
        current = image
        for _ in range(3):
            c, nxt = current, np.zeros_like(image)
            nxt[1:-1, 16:-16] = (
                c[1:-1, 15:-17] + c[1:-1, 16:-16] + c[1:-1, 17:-15] + c[:-2, 16:-16] + c[2:, 16:-16]
            ) * np.float32(0.2)
            current = nxt
        return current[3:-3, 18:-18]

    def work(k: int) -> bool:
        ok = True
        for _ in range(25):
            out = np.zeros_like(images[k])
            fn({"input": images[k]}, {"out": out})
            ok &= bool(np.allclose(out[3:-3, 18:-18], expected(images[k]), rtol=1e-5))
        return ok

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))
    fn.release_memory()
    out = np.zeros_like(images[0])
    fn({"input": images[0]}, {"out": out})
    assert np.allclose(out[3:-3, 18:-18], expected(images[0]), rtol=1e-5)


def test_native_calls_release_the_gil() -> None:
    """While a long call runs in a thread, the main thread keeps executing Python."""
    import threading
    import time

    y, k = var("y"), var("k")
    accumulate = Store("out", E.Add(Load(F32, "out", y), E.Cast(F32, k)), y)
    body = For(
        "y", i32(0), var("out.extent.0"), ForType.SERIAL, For("k", i32(0), var("work"), ForType.SERIAL, accumulate)
    )
    fn = compile_pipeline(LoweredPipeline("long_call", [scalar("work", I32), buffer("out", F32, 1, True)], body))
    window: list[float] = []

    def call() -> None:
        out = np.zeros(4, np.float32)
        window.append(time.perf_counter())
        fn({"work": 30_000_000}, {"out": out})
        window.append(time.perf_counter())

    thread = threading.Thread(target=call)
    samples = []
    thread.start()
    while thread.is_alive():
        samples.append(time.perf_counter())
    thread.join()
    start, end = window
    inside = [t for t in samples if start <= t <= end]
    assert end - start > 0.05, "the call was too short to tell"
    gaps = np.diff([start, *inside, end])
    assert gaps.max() < 0.5 * (end - start), f"the main thread stalled for {gaps.max():.3f} s of {end - start:.3f} s"
