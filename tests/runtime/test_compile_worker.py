"""The compile worker: a module split in two, one part compiled in a second process, gives
the reference's image; a worker that dies, hangs or refuses falls back to this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import llvmlite.binding as llvm
import numpy as np
import pytest
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.module_split import split_module
from pixelweave.engine.codegen.target import data_layout, initialize_llvm, resolve_target
from pixelweave.engine.lower import lower
from pixelweave.engine.runtime import compile_worker
from pixelweave.engine.runtime.jit import clear_memory_cache, compile_pipeline, compile_statistics, load_native_code

import pixelweave as pw

WIDTH, HEIGHT = 67, 45  # not multiples of the vector width or the split factors: tails run


def chain_pipeline(stages: int) -> pw.Pipeline:
    """input -> s0 -> ... -> s{stages-1}: stencils computed at root, each its own parallel
    loop (a closure function), some vectorized with tails, one with an update."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f = pw.BoundaryConditions.repeat_edge(inp)
    for i in range(stages):
        g = pw.Func(f"s{i}")
        g[x, y] = (f[x - 1, y] + f[x + 1, y + 1]) * 0.5 + float(i)
        if i % 3 == 2:
            g[x, y] = g[x, y] * 0.75
        g.compute_root().parallel(y)
        if i % 2 == 0:
            g.vectorize(x, 8)
        f = g
    return pw.Pipeline(f)


def run(fn, image: np.ndarray) -> np.ndarray:
    out = np.zeros((HEIGHT, WIDTH), np.float32)
    fn({"input": image}, {fn.arguments[-1].name: out})
    return out


@pytest.fixture
def image(rng: np.random.Generator) -> np.ndarray:
    return rng.random((HEIGHT, WIDTH), dtype=np.float32)


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch):
    """A ready worker that takes even small modules, whatever failures came before."""
    monkeypatch.setenv(compile_worker.WORKER_ENV, "1")
    monkeypatch.setattr(compile_worker, "SPLIT_MIN_LINES", 0)
    monkeypatch.setattr(compile_worker, "MAX_WORKER_FAILURES", 10**6)
    assert compile_worker.start_compile_worker(wait_seconds=60)
    yield
    compile_worker.stop_compile_worker()


def module_ir(pipeline: pw.Pipeline) -> str:
    spec = resolve_target("host")
    return generate_module(lower(pipeline).lowered, triple=spec.triple, datalayout=data_layout(spec)).ir


def test_split_parts_are_valid_modules_that_define_each_function_once() -> None:
    ir_text = module_ir(chain_pipeline(8))
    parts = split_module(ir_text, min_lines=0)
    assert parts is not None and len(parts) == 2
    initialize_llvm()
    defined: list[str] = []
    for text in parts:
        module = llvm.parse_assembly(text, context=llvm.create_context())
        module.verify()
        defined += [f.name for f in module.functions if not f.is_declaration]
    whole = llvm.parse_assembly(ir_text, context=llvm.create_context())
    assert sorted(defined) == sorted(f.name for f in whole.functions if not f.is_declaration)
    assert len(defined) == len(set(defined))
    # Both parts hold parallel-loop closures: the split balances them, not one function each.
    assert all(".par_for." in text for text in parts)


def test_small_or_unbalanced_modules_are_not_split() -> None:
    assert split_module(module_ir(chain_pipeline(1))) is None  # a thousand lines
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    serial = pw.Func("serial")
    serial[x, y] = pw.BoundaryConditions.repeat_edge(inp)[x - 1, y + 1] * 2.0
    serial.vectorize(x, 8)
    ir_text = module_ir(pw.Pipeline(serial))  # one function holds almost all of it
    assert split_module(ir_text, min_lines=0) is None
    assert split_module(ir_text, min_lines=0, min_share=0.0) is not None


@pytest.mark.parametrize("level", ["fast", "full"])
def test_worker_compile_matches_reference_and_in_process(
    worker, monkeypatch: pytest.MonkeyPatch, image: np.ndarray, level: str
) -> None:
    pipeline = chain_pipeline(9)
    want = pipeline.realize_reference([WIDTH, HEIGHT], {"input": image})
    jobs = compile_worker.worker_statistics()["jobs"]
    split = compile_pipeline(lower(pipeline).lowered, level=level, cache=False)
    assert compile_worker.worker_statistics()["jobs"] == jobs + 1
    assert len(compile_worker.unbundle_objects(split.native_code().object_code)) == 2
    for _ in range(2):  # intermediate buffers are kept between calls in a global of one part
        np.testing.assert_array_equal(run(split, image), want)
    split.release_memory()
    np.testing.assert_array_equal(run(split, image), want)
    # The bundle travels as NativeCode and links elsewhere like one object.
    shipped = load_native_code(split.native_code())
    np.testing.assert_array_equal(run(shipped, image), want)
    compile_worker.stop_compile_worker()
    monkeypatch.setenv(compile_worker.WORKER_ENV, "0")
    whole = compile_pipeline(lower(pipeline).lowered, level=level, cache=False)
    assert len(compile_worker.unbundle_objects(whole.native_code().object_code)) == 1
    np.testing.assert_array_equal(run(whole, image), run(split, image))


def test_worker_killed_mid_compile_falls_back(worker, image: np.ndarray) -> None:
    pipeline = chain_pipeline(9)
    # Lowered before the timer starts: on a loaded machine lowering alone could outlast it,
    # and the kill would land before the job was sent.
    lowered = lower(pipeline).lowered
    pid = compile_worker.worker_process_id()
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # holds the job unanswered until the kill below
    killer = threading.Timer(2.0, os.kill, (pid, signal.SIGKILL))
    killer.start()
    before = compile_worker.worker_statistics()
    fn = compile_pipeline(lowered, level="full", cache=False)
    killer.join()
    after = compile_worker.worker_statistics()
    assert after["fallbacks"] == before["fallbacks"] + 1 and after["jobs"] == before["jobs"]
    np.testing.assert_array_equal(run(fn, image), pipeline.realize_reference([WIDTH, HEIGHT], {"input": image}))
    # The next compile starts a fresh worker in the background and uses it once ready.
    assert compile_worker.start_compile_worker(wait_seconds=60)
    assert compile_worker.worker_process_id() != pid
    compile_pipeline(lower(pipeline).lowered, level="fast", cache=False)
    assert compile_worker.worker_statistics()["jobs"] == after["jobs"] + 1


def test_hung_worker_times_out_and_falls_back(worker, monkeypatch: pytest.MonkeyPatch, image: np.ndarray) -> None:
    monkeypatch.setattr(compile_worker, "REPLY_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(compile_worker, "REPLY_TIMEOUT_FACTOR", 0.0)
    pipeline = chain_pipeline(9)
    pid = compile_worker.worker_process_id()
    os.kill(pid, signal.SIGSTOP)
    before = compile_worker.worker_statistics()["fallbacks"]
    start = time.perf_counter()
    fn = compile_pipeline(lower(pipeline).lowered, level="fast", cache=False)
    assert time.perf_counter() - start < 30
    assert compile_worker.worker_statistics()["fallbacks"] == before + 1
    assert compile_worker.worker_process_id() is None  # the hung worker was killed
    np.testing.assert_array_equal(run(fn, image), pipeline.realize_reference([WIDTH, HEIGHT], {"input": image}))


def test_worker_with_other_backend_options_is_not_used(worker, monkeypatch, image: np.ndarray) -> None:
    """LLVM's options are process-wide: a worker started with other ones must not compile."""
    monkeypatch.setattr(compile_worker, "BACKEND_OPTIONS", ("-disable-lsr", "-pixelweave-test-option"))
    pipeline = chain_pipeline(9)
    before = compile_worker.worker_statistics()
    fn = compile_pipeline(lower(pipeline).lowered, level="fast", cache=False)
    after = compile_worker.worker_statistics()
    assert after["jobs"] == before["jobs"] and after["fallbacks"] == before["fallbacks"] + 1
    np.testing.assert_array_equal(run(fn, image), pipeline.realize_reference([WIDTH, HEIGHT], {"input": image}))


def test_worker_exits_with_its_parent() -> None:
    program = textwrap.dedent(
        """
        import os
        from pixelweave.engine.runtime import compile_worker
        assert compile_worker.start_compile_worker(wait_seconds=60)
        print(compile_worker.worker_process_id(), flush=True)
        os._exit(0)  # no cleanup: the worker must notice on its own
        """
    )
    env = {**os.environ, compile_worker.WORKER_ENV: "1"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    pid = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def test_worker_whose_parent_left_before_it_was_ready_exits_quietly() -> None:
    """A short script may end while the worker still starts LLVM: the worker's first reply
    then meets a closed pipe, which must end it without a traceback on the script's stderr."""
    program = textwrap.dedent(
        """
        import os
        from pixelweave.engine.runtime import compile_worker
        compile_worker.start_compile_worker(wait_seconds=0)
        print(compile_worker.worker_process_id(), flush=True)
        os._exit(0)
        """
    )
    env = {**os.environ, compile_worker.WORKER_ENV: "1"}
    # stderr is shared with the worker: run() returns once the worker, too, has closed it
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.split()[-1].isdigit()
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def test_object_bundles_round_trip_and_reject_corruption() -> None:
    objects = [b"first object", b"second"]
    bundle = compile_worker.bundle_objects(objects)
    assert compile_worker.unbundle_objects(bundle) == objects
    assert compile_worker.bundle_objects([b"only"]) == b"only"
    assert compile_worker.unbundle_objects(b"\x7fELF plain") == [b"\x7fELF plain"]
    with pytest.raises(ValueError):
        compile_worker.unbundle_objects(bundle[:-1])


def test_split_object_is_cached_as_one_entry(worker, image: np.ndarray) -> None:
    """The two objects of a split compile go to the disk cache together and link from it."""
    pipeline = chain_pipeline(10)
    want = pipeline.realize_reference([WIDTH, HEIGHT], {"input": image})
    jobs = compile_worker.worker_statistics()["jobs"]
    first = compile_pipeline(lower(pipeline).lowered, level="full")
    assert first.cache_hit is None and compile_worker.worker_statistics()["jobs"] == jobs + 1
    np.testing.assert_array_equal(run(first, image), want)
    clear_memory_cache()
    compiled = compile_statistics()["objects_compiled"]
    again = compile_pipeline(lower(chain_pipeline(10)).lowered, level="full")
    assert again.cache_hit == "disk" and compile_statistics()["objects_compiled"] == compiled
    assert len(compile_worker.unbundle_objects(again.native_code().object_code)) == 2
    np.testing.assert_array_equal(run(again, image), want)
    # The pre-lowering cache files the bundle too: a fresh pipeline realizes without LLVM.
    np.testing.assert_array_equal(chain_pipeline(10).realize([WIDTH, HEIGHT], {"input": image}), want)


def test_worker_that_cannot_start_is_given_up(worker, monkeypatch: pytest.MonkeyPatch, image: np.ndarray) -> None:
    """A worker that exits before it is ready: compiles stay in-process, and after
    MAX_WORKER_FAILURES such starts none is tried again."""
    compile_worker.stop_compile_worker()
    monkeypatch.setattr(compile_worker, "MAX_WORKER_FAILURES", compile_worker.worker_statistics()["started"] + 100)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    assert not compile_worker.start_compile_worker(wait_seconds=30)
    monkeypatch.setattr(compile_worker, "MAX_WORKER_FAILURES", 0)
    before = compile_worker.worker_statistics()
    pipeline = chain_pipeline(9)
    fn = compile_pipeline(lower(pipeline).lowered, level="fast", cache=False)
    np.testing.assert_array_equal(run(fn, image), pipeline.realize_reference([WIDTH, HEIGHT], {"input": image}))
    after = compile_worker.worker_statistics()
    assert after["jobs"] == before["jobs"] and after["started"] == before["started"]
    assert not compile_worker.start_compile_worker(wait_seconds=1)


def test_small_modules_start_no_worker(monkeypatch: pytest.MonkeyPatch, image: np.ndarray) -> None:
    """A process that compiles only modules too small to split never pays for a worker."""
    monkeypatch.setenv(compile_worker.WORKER_ENV, "1")
    monkeypatch.setattr(compile_worker, "MAX_WORKER_FAILURES", 10**6)
    compile_worker.stop_compile_worker()
    clear_memory_cache()
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    scaled = pw.Func("scaled")
    scaled[x, y] = inp[x, y] * 2.0  # one serial stage: about 300 lines of IR
    fn = compile_pipeline(lower(pw.Pipeline(scaled)).lowered, level="fast", cache=False)
    assert compile_worker.worker_process_id() is None
    np.testing.assert_array_equal(run(fn, image), image * 2.0)
    monkeypatch.setattr(compile_worker, "SPLIT_MIN_LINES", 0)
    compile_pipeline(lower(chain_pipeline(4)).lowered, level="fast", cache=False)
    assert compile_worker.worker_process_id() is not None  # a module worth splitting starts one
    compile_worker.stop_compile_worker()
