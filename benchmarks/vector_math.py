"""Vectorized math against per-element libm calls, Halide and NumPy.

    python -m benchmarks.vector_math [--runs N] [--size N]

For exp, log, pow, sin, cos and atan2 on float32: f(x) = fn(input(x)) computed by
Pixelweave vectorized 16 lanes wide and parallel (the vector code of
engine/codegen/llvm_vector_math.py), by the same schedule without vectorization (one libm
call per element, what a vector loop cost before), by Halide with the same schedule, and
by NumPy. Median wall times of alternating runs, on a fresh compile cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np

FUNCTIONS = ["exp", "log", "pow", "sin", "cos", "atan2"]
NUMPY = {"exp": np.exp, "log": np.log, "pow": np.power, "sin": np.sin, "cos": np.cos, "atan2": np.arctan2}


def build(m, name: str, lanes: int):
    x, xo, xi = m.Var("x"), m.Var("xo"), m.Var("xi")
    a, b = m.ImageParam(m.Float(32), 1, "a"), m.ImageParam(m.Float(32), 1, "b")
    f = m.Func("f")
    fn = getattr(m, name)
    f[x] = fn(a[x], b[x]) if name in ("pow", "atan2") else fn(a[x])
    f.split(x, xo, xi, 1 << 14).parallel(xo)
    if lanes > 1:
        f.vectorize(xi, lanes)
    return f, a, b


def alternating(fns: list[Callable[[], object]], runs: int) -> list[float]:
    times: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(runs):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=1 << 22)
    args = parser.parse_args()
    os.environ["PIXELWEAVE_CACHE_DIR"] = tempfile.mkdtemp()
    import halide as hl

    import pixelweave as pw

    rng = np.random.default_rng(0)
    n = args.size
    a = (rng.random(n, dtype=np.float32) * 8 + 0.01).astype(np.float32)
    b = (rng.standard_normal(n) * 3).astype(np.float32)
    print("| function | Pixelweave vector | Pixelweave per-element libm | Halide | NumPy | libm / vector |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in FUNCTIONS:
        inputs = {"a": a, "b": b} if name in ("pow", "atan2") else {"a": a}
        runs = []
        for lanes in (16, 1):
            f, _, _ = build(pw, name, lanes)
            fn = pw.Pipeline(f).compile(level="full")
            out = np.empty(n, np.float32)
            runs.append(lambda fn=fn, out=out, inputs=inputs: fn([n], inputs, out=out))
        f_hl, a_hl, b_hl = build(hl, name, 16)
        a_hl.set(hl.Buffer(a))
        if name in ("pow", "atan2"):
            b_hl.set(hl.Buffer(b))
        f_hl.compile_jit()
        out_hl = hl.Buffer(hl.Float(32), [n])
        runs.append(lambda f_hl=f_hl, out_hl=out_hl: f_hl.realize(out_hl))
        numpy_fn = NUMPY[name]
        runs.append(lambda numpy_fn=numpy_fn, name=name: numpy_fn(a, b) if name in ("pow", "atan2") else numpy_fn(a))
        vec, scalar, halide, numpy_ms = alternating(runs, args.runs)
        print(f"| {name} | {vec:.2f} ms | {scalar:.2f} ms | {halide:.2f} ms | {numpy_ms:.2f} ms | {scalar / vec:.1f} |")


if __name__ == "__main__":
    main()
