"""Cost of computing an output into scratch storage and copying it out.

    python benchmarks/output_round_up_copy.py [--size 2048] [--repeats 15]

An output whose split rounds up (explicitly, or by default on a pure variable of an update)
may iterate past the requested region, so it is computed into scratch storage and the
requested region copied into the output buffer, as Halide's realize does. This compares a
vectorized, parallel update with a RoundUp split (scratch and copy) against the same
schedule with GuardWithIf (computed in place), and reports the median times.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pixelweave as pw


def build(tail: pw.TailStrategy) -> pw.Pipeline:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "inp")
    f = pw.Func("f")
    r = pw.RDom([(0, 4)])
    f[x, y] = inp[x, y]
    f[x, y] += inp[x, y] * pw.f32(r.x)
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f.update(0).split(x, xo, xi, 8, tail).vectorize(xi).parallel(y)
    f.vectorize(x, 8).parallel(y)
    return pw.Pipeline(f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    n = args.size
    image = np.random.default_rng(0).random((n, n), dtype=np.float32)
    for name, tail in (
        ("RoundUp (scratch + copy)", pw.TailStrategy.RoundUp),
        ("GuardWithIf (in place)", pw.TailStrategy.GuardWithIf),
    ):
        fn = build(tail).compile()
        fn([n, n], {"inp": image})
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            fn([n, n], {"inp": image})
            times.append(time.perf_counter() - start)
        print(f"{name:26s} {statistics.median(times) * 1000:8.2f} ms  ({n}x{n} float32)")


if __name__ == "__main__":
    main()
