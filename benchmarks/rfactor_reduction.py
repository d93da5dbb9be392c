"""rfactor: a full-image sum and an argmax, as a serial reduction and split with
rfactor into rows reduced in parallel (and vectorized), in Pixelweave and in Halide.

    python -m benchmarks.rfactor_reduction [--size 4096] [--repeats 20]

Prints the best time of each variant in milliseconds; both libraries run the same
algorithm and schedule, and the results are checked to agree.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import halide as hl
import numpy as np

import pixelweave as pw


def build(m: Any, size: int, kind: str, factor: bool) -> tuple[Any, Any]:
    u = m.Var("u")
    inp = m.ImageParam(m.Float(32), 2, "input")
    r = m.RDom([(0, size), (0, size)])
    f = m.Func("f")
    if kind == "sum":
        f[()] = m.f32(0)
        f[()] = f[()] + inp[r.x, r.y]
    else:  # argmax in the form Halide can rfactor: the last of equal values wins
        f[()] = (m.f32(-1e30), 0, 0)
        f[()] = (m.max(inp[r.x, r.y], f[()][0]), m.select(f[()][0] > inp[r.x, r.y], f[()][1], r.x),
                 m.select(f[()][0] > inp[r.x, r.y], f[()][2], r.y))  # fmt: skip
    if factor:
        intm = f.update(0).rfactor([(r.y, u)])
        intm.compute_root().update(0).parallel(u, 16)
    return f, inp


def best_ms(run, repeats: int) -> float:
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    image = np.random.default_rng(0).random((args.size, args.size), dtype=np.float32)
    for kind in ("sum", "argmax"):
        for factor in (False, True):
            f, _ = build(pw, args.size, kind, factor)
            compiled = pw.Pipeline(f).compile()
            ours = compiled([], {"input": image})
            hf, hinp = build(hl, args.size, kind, factor)
            hinp.set(hl.Buffer(image))
            hp = hl.Pipeline(hf)
            hp.compile_jit()
            theirs = hp.realize([])
            ours_list = ours if isinstance(ours, list) else [ours]
            theirs_list = [np.asarray(b) for b in (theirs if isinstance(theirs, (list, tuple)) else [theirs])]
            for a, b in zip(ours_list, theirs_list, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-3)
            ms = best_ms(lambda compiled=compiled: compiled([], {"input": image}), args.repeats)
            hms = best_ms(lambda hp=hp: hp.realize([]), args.repeats)
            label = f"{kind:6s} {'rfactor(r.y) parallel' if factor else 'serial':22s}"
            print(f"{label} pixelweave {ms:8.2f} ms   halide {hms:8.2f} ms")


if __name__ == "__main__":
    main()
