"""Run many fuzz cases in worker processes that may die without stopping the run.

Each worker is a fresh `python -m pixelweave.engine.fuzz.worker` process that runs a batch
of cases one at a time. A worker that exits mid-case (a segfault in generated code) makes
that case a "crash"; one silent for longer than the per-case timeout is killed and the case
is a "hang". Either way a fresh worker takes the rest of the batch. A worker writes what it prints to
stderr (and, through faulthandler, the Python stack of a fatal signal) to a temporary file,
whose end a crash's message carries: where the process died is the first thing to know.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.fuzz.cases import Case

STARTUP_TIMEOUT = 120.0


@dataclass
class Request:
    case: Case
    halide: bool = False


WORKER_COMMAND = (sys.executable, "-m", "pixelweave.engine.fuzz.worker")


class _Worker:
    def __init__(self, with_halide: bool, command: tuple[str, ...] = WORKER_COMMAND) -> None:
        env = dict(os.environ, PIXELWEAVE_FUZZ_HALIDE="1" if with_halide else "0", PYTHONFAULTHANDLER="1")
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker; closed in close()
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
            env=env,
        )
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.ready = self._read_line(STARTUP_TIMEOUT) == "ready"

    def _read_line(self, timeout: float) -> str | None:
        """The next line; "" when the process closed its output (it died), None when it
        stayed silent for timeout."""
        if not self.selector.select(timeout):
            return None
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def run(self, request: Request, timeout: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        message = json.dumps({"case": request.case.to_json(), "halide": request.halide})
        start = time.perf_counter()
        try:
            self.proc.stdin.write(message + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._died(start)
        line = self._read_line(timeout)
        if line is None:
            self.close()
            return {"outcome": "hang", "message": f"no answer within {timeout:g} s", "seconds": timeout}
        if not line:
            return self._died(start)
        try:
            return json.loads(line)
        except json.JSONDecodeError:  # something wrote to the worker's stdout behind the protocol
            self.close()
            return {"outcome": "internal_error", "message": f"unreadable answer from the worker: {line[:200]!r}"}

    def _died(self, start: float) -> dict[str, Any]:
        code = self.proc.wait()
        stack = self._fatal_stack()
        return {
            "outcome": "crash",
            "message": f"the worker process died (exit status {code}{_signal_name(code)})"
            + (f"; where:\n{stack}" if stack else ""),
            "seconds": round(time.perf_counter() - start, 3),
            "in_halide": _in_halide(stack),
        }

    def _fatal_stack(self, limit: int = 4000) -> str:
        """The end of what the worker wrote to stderr from its last fatal-signal report on."""
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        start = text.rfind("Fatal Python error")
        return (text[start:] if start >= 0 else text)[-limit:].strip()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.selector.close()
        self.stderr.close()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


# Where the worker runs Halide (the oracle), never Pixelweave's own compiled code.
HALIDE_FRAMES = ("fuzz/halide_schedule.py", "in _compare_with_halide")


def _in_halide(stack: str) -> bool:
    """Whether a fatal-signal report shows the worker inside the Halide comparison."""
    return any(frame in stack for frame in HALIDE_FRAMES)


def _signal_name(code: int) -> str:
    if code >= 0:
        return ""
    import signal

    try:
        return f", {signal.Signals(-code).name}"
    except ValueError:
        return ""


class CaseRunner:
    """Runs requests one at a time in a worker; a fresh worker every `batch` cases and after
    a death. `command` starts a worker (the fuzz worker module unless a test swaps it)."""

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        batch: int = 50,
        with_halide: bool = False,
        command: tuple[str, ...] = WORKER_COMMAND,
    ) -> None:
        self.timeout, self.batch, self.with_halide, self.command = timeout, batch, with_halide, command
        self.worker: _Worker | None = None
        self.done_in_worker = 0

    def run(self, request: Request) -> dict[str, Any]:
        if self.worker is None or not self.worker.alive() or self.done_in_worker >= self.batch:
            self.close()
            self.worker = _Worker(self.with_halide, self.command)
            self.done_in_worker = 0
            if not self.worker.ready:
                self.close()
                return {"outcome": "crash", "message": "a worker process failed to start", "seconds": 0}
        result = self.worker.run(request, self.timeout)
        self.done_in_worker += 1
        if result["outcome"] in ("crash", "hang"):
            self.close()
        if result["outcome"] == "crash" and request.halide and result.pop("in_halide", False):
            # Halide's own JIT died on the schedule (it checks less than Pixelweave refuses):
            # the case's verdict is Pixelweave's, so run it again without the comparison.
            again = self.run(Request(request.case, halide=False))
            again["halide_crashed"] = result["message"][:2000]
            return again
        result.pop("in_halide", None)
        return result

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def __enter__(self) -> CaseRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_requests(
    requests: Iterable[Request], *, timeout: float = 60.0, batch: int = 50, with_halide: bool = False
) -> Iterator[tuple[Request, dict[str, Any]]]:
    """Each request with its result, in order."""
    with CaseRunner(timeout=timeout, batch=batch, with_halide=with_halide) as runner:
        for request in requests:
            yield request, runner.run(request)
