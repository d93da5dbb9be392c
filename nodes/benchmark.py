"""Timing a built document: compile once, warm up, run N times on the same inputs into the
same output arrays, and keep what a person comparing schedules needs (median, spread,
throughput, compile time, the time of each node from a profiling build, the loop nest).

The command line (`pixelweave bench`) and the editor's benchmark panel both call
`run_benchmark`, so their numbers mean the same thing. Also here, because they are plain
text work that the panel only displays: a one-line summary of a document's schedules and
the lines that differ between two loop nests.
"""

from __future__ import annotations

import difflib
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ProgressCallback = Callable[[int, int, str], None]


class BenchmarkStopped(Exception):
    """`should_stop()` asked for the benchmark to end before all runs were done."""


@dataclass
class BenchmarkResult:
    """What one benchmark measured. Times are in seconds; per_node_ms in milliseconds per run."""

    document_name: str
    target: str
    runs: int
    times: list[float]
    median: float
    minimum: float
    maximum: float
    megapixels: float  # output megapixels per run (width x height of every output)
    megapixels_per_second: float
    compile_seconds: float
    output_count: int
    per_node_ms: dict[str, float] = field(default_factory=dict)  # node id -> mean ms per run (profiling build)
    loop_nest: str = ""
    profiled: bool = True

    def per_node_share(self) -> dict[str, float]:
        """Each node's fraction of the summed per-node time, largest first (0..1)."""
        total = sum(self.per_node_ms.values()) or 1.0
        ordered = sorted(self.per_node_ms.items(), key=lambda kv: -kv[1])
        return {node_id: ms / total for node_id, ms in ordered}

    def report_lines(self) -> list[str]:
        """The lines `pixelweave bench` prints for this result."""
        lines = [
            f"{self.document_name}: {self.output_count} output(s), {self.megapixels:.3f} megapixels per run",
            f"compile: {self.compile_seconds * 1e3:.1f} ms (target {self.target})",
            f"run ({self.runs} runs): median {self.median * 1e3:.3f} ms, min {self.minimum * 1e3:.3f} ms, "
            f"max {self.maximum * 1e3:.3f} ms, {self.megapixels_per_second:.1f} megapixels/s",
        ]
        if self.profiled:
            lines.append(
                "time per node, mean per run (each node's own time, without the producers computed inside "
                "its loops; thread time, summed over the threads of parallel loops):"
            )
            for node_id, share in self.per_node_share().items():
                lines.append(f"  {node_id:<24} {self.per_node_ms[node_id]:9.3f} ms  {100 * share:5.1f}%")
        return lines


def run_benchmark(
    built: Any,
    images: dict[str, np.ndarray],
    params: dict[str, Any] | None = None,
    runs: int = 10,
    target: str = "host",
    profile: bool = True,
    progress: ProgressCallback | None = None,
    should_stop: Callable[[], Any] | None = None,
    device: str | None = None,
) -> BenchmarkResult:
    """Benchmarks a BuiltDocument on the given input images and parameter values.

    Compiles once (timed apart), runs once to warm up (fresh memory is slow on first touch)
    and to allocate the output arrays that every timed run then writes into. With `profile`
    the profiling build is timed and gives each node's own time. `progress(done, total,
    text)` is called after each run; `should_stop()` before each run may raise (the editor
    passes its cancel token's check) or return True, which raises BenchmarkStopped.
    `device` picks the OpenCL device ("platform:device") for target "opencl", which is
    never profiled (the engine times CPU code only).
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    params = dict(params or {})
    profile = profile and target != "opencl"  # the engine profiles CPU code only

    def report(done: int, text: str) -> None:
        if progress is not None:
            progress(done, runs, text)

    def check() -> None:
        if should_stop is not None and should_stop():
            raise BenchmarkStopped("the benchmark was stopped")

    check()
    sizes = built.output_sizes(images, params)
    report(0, "compiling")
    start = time.perf_counter()
    compiled = built.runner.compile(sizes, target=target, profile=profile, device=device)
    compile_seconds = time.perf_counter() - start
    check()
    inputs = {**images, **params}
    report(0, "warming up")
    outs = [fn(size, inputs) for _, size, fn in compiled]
    times: list[float] = []
    per_node: dict[str, float] = defaultdict(float)
    for run in range(runs):
        check()
        start = time.perf_counter()
        for (_, size, fn), out in zip(compiled, outs, strict=True):
            fn(size, inputs, out=out)
        times.append(time.perf_counter() - start)
        if profile:
            for _, _, fn in compiled:
                for func_name, seconds in (fn.last_profile or {}).items():
                    per_node[func_name.split(".", 1)[0]] += seconds
        report(run + 1, f"run {run + 1} of {runs}: {times[-1] * 1e3:.3f} ms")
    megapixels = output_megapixels(sizes)
    median = statistics.median(times)
    return BenchmarkResult(
        document_name=built.document.name,
        target=target,
        runs=runs,
        times=times,
        median=median,
        minimum=min(times),
        maximum=max(times),
        megapixels=megapixels,
        megapixels_per_second=megapixels / median if median > 0 else float("inf"),
        compile_seconds=compile_seconds,
        output_count=len(sizes),
        per_node_ms={node_id: seconds / runs * 1e3 for node_id, seconds in per_node.items()},
        loop_nest=built.loop_nest(target),
        profiled=profile,
    )


def output_megapixels(sizes: dict[str, list[int]]) -> float:
    """Megapixels written per run: width x height of each output (channels not counted)."""
    return sum(size[0] * (size[1] if len(size) > 1 else 1) for size in sizes.values()) / 1e6


def schedule_summary(document_json: dict[str, Any], target: str = "host") -> str:
    """One line naming the scheduled Funcs and their directives ("result.out: split x2,
    parallel; sharpen.blur_x: compute_at"), so a history row says which schedule it timed:
    the CPU schedules, or for target "opencl" the OpenCL ones (the line then starts "OpenCL:")."""
    parts = []
    for node in document_json.get("nodes", []):
        if target == "opencl":
            schedule = (node.get("schedules") or {}).get("opencl") or {}
        else:
            schedule = node.get("schedule") or {}
        for key, directives in sorted(schedule.items()):
            names: dict[str, int] = {}
            for directive in directives:
                if isinstance(directive, list) and directive:
                    names[str(directive[0])] = names.get(str(directive[0]), 0) + 1
            if names:
                text = ", ".join(name if n == 1 else f"{name} x{n}" for name, n in names.items())
                parts.append(f"{node.get('id')}.{key}: {text}")
    text = "; ".join(parts) if parts else "default schedule (everything inline)"
    return f"OpenCL: {text}" if target == "opencl" else text


def differing_lines(a: str, b: str) -> tuple[set[int], set[int]]:
    """Indices of the lines of text a and of text b that are not shared by the other
    (a line-by-line diff), for highlighting two loop nests side by side."""
    lines_a, lines_b = a.splitlines(), b.splitlines()
    only_a, only_b = set(range(len(lines_a))), set(range(len(lines_b)))
    matcher = difflib.SequenceMatcher(a=lines_a, b=lines_b, autojunk=False)
    for block in matcher.get_matching_blocks():
        only_a -= set(range(block.a, block.a + block.size))
        only_b -= set(range(block.b, block.b + block.size))
    return only_a, only_b


def compare_per_node(a: BenchmarkResult, b: BenchmarkResult) -> list[tuple[str, float | None, float | None]]:
    """(node id, ms in a, ms in b) for every node either result timed, slowest first."""
    ids = sorted(set(a.per_node_ms) | set(b.per_node_ms), key=lambda n: -max(a.per_node_ms.get(n, 0.0),
                                                                            b.per_node_ms.get(n, 0.0)))  # fmt: skip
    return [(n, a.per_node_ms.get(n), b.per_node_ms.get(n)) for n in ids]
