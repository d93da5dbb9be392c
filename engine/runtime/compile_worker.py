"""A compile worker process: LLVM on a second core while this process uses the first.

llvmlite holds one process-wide lock around every LLVM call, so threads cannot run two
compiles at once; a second process can. `compile_module` splits a large module in two
(engine/codegen/module_split.py), sends one part to the worker and compiles the other here
at the same time, and returns both objects as one bundle (`bundle_objects`), which the JIT
links into one library. Small modules, a worker not started or not yet ready, a busy worker
(another thread's compile), or any failure (worker died, hung past the timeout, refused
the job) compile in this process as before: never a crash, never a hang.

The worker is `python -m pixelweave.engine.runtime.compile_worker`, started in the
background (`start_compile_worker`, or lazily by the first compile of a
module large enough to split) — a fresh interpreter,
never a fork of a process that may run Qt or native threads. It exits when this process
does (its stdin closes, or its parent process id changes). It reports the CPU seconds of
each job, so benchmarks can count them (`worker_statistics`). PIXELWEAVE_COMPILE_WORKER=0
turns it off.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO

from pixelweave.engine.codegen.module_split import split_module
from pixelweave.engine.codegen.target import BACKEND_OPTIONS, TargetSpec, compile_ir_to_object

WORKER_ENV = "PIXELWEAVE_COMPILE_WORKER"
# Waiting for the worker's part after ours is done: this many seconds plus REPLY_TIMEOUT_FACTOR
# times our part's time (its part is the smaller one); past that it is presumed hung.
REPLY_TIMEOUT_SECONDS = 10.0
REPLY_TIMEOUT_FACTOR = 4.0
MAX_WORKER_FAILURES = 3  # then this process stops starting workers
# Modules shorter than this many lines of IR compile whole (and a process that compiles
# only those never starts a worker). The pipe and the second link cost about a millisecond:
# a one-stage pipeline of 423 lines (its entry points, checks and one parallel loop) compiled
# in 17 ms split against 25 ms whole, the blur app's 644 lines in 45 against 60 ms.
SPLIT_MIN_LINES = 400
_BUNDLE_MAGIC = b"PWBUNDLE1\n"
_HEADER = struct.Struct("<Q")


# ------------------------------------------------------------------------------ object bundles


def bundle_objects(objects: list[bytes]) -> bytes:
    """Several object files as one bytes value (one object stays itself)."""
    if len(objects) == 1:
        return objects[0]
    return _BUNDLE_MAGIC + _HEADER.pack(len(objects)) + b"".join(_HEADER.pack(len(o)) + o for o in objects)


def unbundle_objects(data: bytes) -> list[bytes]:
    """The object files in data (made by bundle_objects, or a plain object file)."""
    if not data.startswith(_BUNDLE_MAGIC):
        return [data]
    offset = len(_BUNDLE_MAGIC)
    objects = []
    try:
        (count,) = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        for _ in range(count):
            (size,) = _HEADER.unpack_from(data, offset)
            offset += _HEADER.size
            objects.append(data[offset : offset + size])
            offset += size
    except struct.error as exc:
        raise ValueError("corrupted object bundle") from exc
    if offset != len(data) or any(len(o) == 0 for o in objects):
        raise ValueError("corrupted object bundle")
    return objects


# ------------------------------------------------------------------------------ framing


def _write_frame(stream: BinaryIO, payload: Any) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_frame(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("compile worker closed its pipe")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("compile worker closed its pipe")
    return pickle.loads(data)


# ------------------------------------------------------------------------------ the client


class _Worker:
    """One worker process and its pipes; `ready` once it has initialized LLVM."""

    def __init__(self) -> None:
        self.owner_pid = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pixelweave.engine.runtime.compile_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        self.ready = False
        self._greeting_lock = threading.Lock()

    def poll_ready(self) -> bool:
        """Whether the worker has said it is ready (reads its greeting without waiting)."""
        with self._greeting_lock:
            if not self.ready and self.process.poll() is None:
                readable, _, _ = select.select([self.process.stdout], [], [], 0)
                if readable:
                    greeting = _read_frame(self.process.stdout)
                    self.ready = greeting == {"ready": True}
        return self.ready and self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()


_lock = threading.Lock()  # guards _worker and _statistics
_busy = threading.Lock()  # one job at a time; a second compiling thread works in-process
_worker: _Worker | None = None
_failures = 0
_statistics = {"jobs": 0, "fallbacks": 0, "worker_cpu_seconds": 0.0, "started": 0}


def worker_enabled() -> bool:
    """Whether this process may use a compile worker (not in a frozen bundle, not turned off)."""
    turned_off = os.environ.get(WORKER_ENV, "1") == "0"
    return not turned_off and not getattr(sys, "frozen", False) and _failures < MAX_WORKER_FAILURES


def start_compile_worker(wait_seconds: float = 0.0) -> bool:
    """Start the worker in the background if it is not running; wait up to wait_seconds
    for it to be ready (an editor starts it at launch without waiting; a benchmark waits).
    Whether it is ready."""
    global _worker, _failures
    if not worker_enabled():
        return False
    with _lock:
        if _worker is None or _worker.owner_pid != os.getpid() or _worker.process.poll() is not None:
            try:
                _worker = _Worker()
                _statistics["started"] += 1
            except OSError:
                _worker, _failures = None, _failures + 1
                return False
    deadline = time.monotonic() + wait_seconds
    while True:
        if _ready_worker(start=False) is not None:
            return True
        with _lock:
            starting = _worker
        if starting is None or starting.process.poll() is not None or time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def stop_compile_worker() -> None:
    """Stop the worker (the next compile starts a new one in the background)."""
    global _worker
    with _lock:
        worker, _worker = _worker, None
    if worker is not None and worker.owner_pid == os.getpid():
        worker.kill()


def worker_process_id() -> int | None:
    """The worker's process id while one runs (for tests and diagnostics)."""
    with _lock:
        return _worker.process.pid if _worker is not None and _worker.process.poll() is None else None


def worker_statistics() -> dict[str, float]:
    """Jobs the worker compiled, jobs that fell back to this process after a failure, the
    worker's CPU seconds on its jobs (add them to this process's CPU time) and starts."""
    with _lock:
        return dict(_statistics)


def _ready_worker(*, start: bool = True) -> _Worker | None:
    """The worker if it is ready now; otherwise None, having started one for later if `start`."""
    global _failures, _worker
    with _lock:
        worker = _worker
        if worker is not None and worker.process.poll() is not None and not worker.ready:
            _failures += 1  # it died before it was ready: a worker that cannot start is not retried forever
            _worker = None
    if worker is None or worker.owner_pid != os.getpid() or worker.process.poll() is not None:
        if start and worker_enabled():
            start_compile_worker()
        return None
    try:
        return worker if worker.poll_ready() else None
    except (OSError, EOFError, pickle.UnpicklingError):
        _worker_failed(worker)
        return None


def _worker_failed(worker: _Worker) -> None:
    global _worker, _failures
    worker.kill()
    with _lock:
        if _worker is worker:
            _worker = None
        _failures += 1
        _statistics["fallbacks"] += 1


def compile_module(ir_text: str, spec: TargetSpec, level: str) -> bytes:
    """Object code for ir_text (a bundle when it was compiled in two parts at once)."""
    # Split first: a process that only compiles small modules never starts a worker.
    parts = split_module(ir_text, min_lines=SPLIT_MIN_LINES) if worker_enabled() else None
    worker = _ready_worker() if parts is not None else None
    if worker is None or parts is None or not _busy.acquire(blocking=False):
        return compile_ir_to_object(ir_text, spec, level).data
    try:
        return bundle_objects(_compile_parts(worker, parts, spec, level))
    finally:
        _busy.release()


def _compile_parts(worker: _Worker, parts: list[str], spec: TargetSpec, level: str) -> list[bytes]:
    """The last part (split_module's least work) in the worker, the others here at the same
    time; a part the worker does not return compiles here."""
    remote = len(parts) - 1
    job = {"ir": parts[remote], "spec": spec, "level": level, "options": BACKEND_OPTIONS}
    reply: dict[str, Any] = {}

    def exchange() -> None:
        try:
            _write_frame(worker.process.stdin, job)
            reply.update(_read_frame(worker.process.stdout))
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
            reply["broken"] = f"{type(exc).__name__}: {exc}"

    thread = threading.Thread(target=exchange, name="pixelweave-compile-worker-io", daemon=True)
    thread.start()
    start = time.perf_counter()
    objects: dict[int, bytes] = {}
    try:
        for i, part in enumerate(parts):
            if i != remote:
                objects[i] = compile_ir_to_object(part, spec, level).data
    finally:
        thread.join(REPLY_TIMEOUT_SECONDS + REPLY_TIMEOUT_FACTOR * (time.perf_counter() - start))
        if thread.is_alive() or "broken" in reply:
            _worker_failed(worker)  # died or hung; killing it ends the exchange thread's read
            thread.join(5)
    with _lock:
        _statistics["worker_cpu_seconds"] += reply.get("cpu_seconds", 0.0)
        if "object" in reply:
            _statistics["jobs"] += 1
        elif "error" in reply:
            _statistics["fallbacks"] += 1  # the worker refused the job; it stays
    if "object" in reply:
        objects[remote] = reply["object"]
    else:
        objects[remote] = compile_ir_to_object(parts[remote], spec, level).data
    return [objects[i] for i in range(len(parts))]


# ------------------------------------------------------------------------------ the worker


def _exit_with_parent() -> None:
    """Exit when the parent process is gone, even mid-compile or while a forked child of
    the parent still holds our stdin open. (Not PR_SET_PDEATHSIG: it fires when the parent's
    *thread* that started us ends, and compiles run on short-lived threads.)"""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="pixelweave-compile-worker-watchdog", daemon=True).start()


def main() -> None:
    """Serve compile jobs from stdin until it closes: {"ir", "spec", "level", "options"}
    -> {"object", "cpu_seconds"} or {"error"}."""
    _exit_with_parent()
    from pixelweave.engine.codegen.target import initialize_llvm

    # Nothing else may write into the reply pipe: file descriptor 1 (LLVM's and print's)
    # becomes stderr, and replies go to a private duplicate of the pipe.
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    initialize_llvm()
    try:
        _serve(stdin, stdout)
    except BrokenPipeError:
        # The parent exited (a short script ends before the worker is ready): no one is
        # left to answer, and the flush at exit would fail again with a traceback.
        os._exit(0)


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    _write_frame(stdout, {"ready": True})
    while True:
        try:
            job = _read_frame(stdin)
        except EOFError:
            return
        cpu = time.process_time()
        try:
            if tuple(job["options"]) != BACKEND_OPTIONS:
                raise ValueError(f"backend options {job['options']} differ from the worker's {BACKEND_OPTIONS}")
            reply = {"object": compile_ir_to_object(job["ir"], job["spec"], job["level"]).data}
        except Exception as exc:  # reported to the parent, which compiles the part itself
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        reply["cpu_seconds"] = time.process_time() - cpu
        _write_frame(stdout, reply)


if __name__ == "__main__":
    main()
