"""Launch overhead of one parallel loop on the native thread pool.

    python benchmarks/parallel_overhead.py [--loops 20000] [--extent 2]

Compiles a pipeline whose body is a serial loop of `loops` parallel loops with an empty
body, so the whole measurement runs inside one native call (no Python in between), and
reports microseconds per parallel loop:

- back to back: workers are still spinning from the previous loop (a pipeline's stages);
- cold: one parallel loop per call after a pause, so workers sleep in the kernel and the
  caller pays a futex wake (a serial pipeline is timed the same way for comparison).

The number of threads is PIXELWEAVE_NUM_THREADS (default: one per CPU).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lowered import Argument, LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline, parallel_runtime_stats
from pixelweave.engine.stmt import Evaluate, For, ForType


def empty_loops(extent: int, for_type: ForType) -> LoweredPipeline:
    zero, loops = E.Const(Int(32), 0), E.Variable("loops", Int(32))
    inner = For("j", zero, E.Const(Int(32), extent), for_type, Evaluate(zero))
    body = For("i", zero, loops, ForType.SERIAL, inner)
    return LoweredPipeline(f"empty_{for_type.value}_{extent}", [Argument("loops", "scalar", Int(32))], body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=20000)
    parser.add_argument("--extent", type=int, default=2, help="iterations of each parallel loop")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    parallel = compile_pipeline(empty_loops(args.extent, ForType.PARALLEL), level="full")
    serial = compile_pipeline(empty_loops(args.extent, ForType.SERIAL), level="full")
    parallel({"loops": 1})  # start the pool
    print(f"threads: {parallel_runtime_stats()['workers'] + 1}, parallel loops of {args.extent} empty iterations")

    per_loop = []
    for _ in range(args.repeats):
        parallel({"loops": args.loops})
        per_loop.append(parallel.last_run_seconds / args.loops * 1e6)
    print(f"back to back: {statistics.median(per_loop):.3f} us per parallel loop (median of {args.repeats})")

    def cold(fn) -> float:
        times = []
        for _ in range(41):
            time.sleep(0.02)  # longer than the workers' spin: they go to sleep
            fn({"loops": 1})
            times.append(fn.last_run_seconds * 1e6)
        return statistics.median(times)

    cold_parallel, cold_serial = cold(parallel), cold(serial)
    print(
        f"cold call: {cold_parallel:.1f} us with one parallel loop, {cold_serial:.1f} us serial "
        f"(launch overhead {cold_parallel - cold_serial:.1f} us)"
    )


if __name__ == "__main__":
    main()
