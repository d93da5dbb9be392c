"""Compile latency and run time of the LLVM backend at each level, on a mid-size pipeline.

    python benchmarks/compile_latency.py [--stages 10] [--size 1920x1080]

Compiles a chain of 5-point stencils (benchmarks/stencil_chain.py) with the cache off, at
"fast" and "full", and runs each on a float32 image. Prints seconds per compile (median
of a few) and milliseconds per run (best of a few, after a warm-up).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.runtime.jit import compile_pipeline

from benchmarks.stencil_chain import stencil_chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, default=10)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    lowered = stencil_chain(args.stages)
    spec = resolve_target("host")
    start = time.perf_counter()
    module = generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec))
    print(f"IR generation: {1e3 * (time.perf_counter() - start):.1f} ms, {len(module.ir.splitlines())} lines of IR")
    image = np.random.default_rng(0).random((height, width), dtype=np.float32)
    out = np.zeros_like(image)
    compile_pipeline(lowered, level="fast", cache=False)  # warm LLVM up
    for level in ("fast", "full"):
        seconds = []
        for _ in range(args.repeats):
            fn = compile_pipeline(lowered, level=level, cache=False)
            seconds.append(fn.compile_seconds)
        runs = []
        for _ in range(args.repeats + 2):
            fn({"input": image}, {"out": out})
            runs.append(fn.last_run_seconds)
        print(
            f"{level:>4}: compile {1e3 * statistics.median(seconds):7.1f} ms (median of {args.repeats}), "
            f"run {1e3 * min(runs[2:]):7.2f} ms (best), {args.stages} stages on {width}x{height} float32"
        )
    cached = compile_pipeline(lowered, level="full")
    cached = compile_pipeline(lowered, level="full")
    print(f"cache hit ({cached.cache_hit}): {1e3 * cached.compile_seconds:.2f} ms")


if __name__ == "__main__":
    main()
