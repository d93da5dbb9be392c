"""Lift the VizGen-style Python prototypes (tests/lift/prototypes.py) and report the speed-up
of the lifted, scheduled pipeline over CPython running the prototype and over the same
algorithm vectorized with NumPy, in float64 and in the float32 approximation mode.

    python benchmarks/lift_prototypes.py [--size 256] [--repeats 5]

Schedule (the same for every prototype): every array the prototype fills computed at root,
rows in parallel, columns vectorized 8 wide. CPython runs once (it is slow); NumPy and the
lifted code report the median of --repeats runs, compilation excluded.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_prototypes():
    spec = importlib.util.spec_from_file_location("lift_prototypes", ROOT / "tests" / "lift" / "prototypes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from pixelweave.nodes.lift.python_frontend import _used, check_python, engine_inputs, lift_python

    import pixelweave as pw

    prototypes = load_prototypes()
    examples = prototypes.examples(args.size)
    print(
        f"{'prototype':12s} {'mode':8s} {'CPython ms':>11s} {'NumPy ms':>9s} {'lifted ms':>10s} "
        f"{'vs CPython':>11s} {'vs NumPy':>9s}  check"
    )
    for name in ("composite", "mandelbrot", "blur", "harris"):
        fn = getattr(prototypes, name)
        fn_np = getattr(prototypes, f"{name}_numpy")
        ex = examples[name]
        start = time.perf_counter()
        fn(*ex)
        cpython = time.perf_counter() - start
        numpy_t = median_time(lambda fn_np=fn_np, ex=ex: fn_np(*ex), args.repeats)
        for approximate in (False, True):
            lifted = lift_python(fn, ex, approximate=approximate)
            check = check_python(lifted, fn, ex)
            for func in lifted.stages.values():
                dims = func.args()
                if func is not lifted.output:
                    func.compute_root()
                func.parallel(dims[-1]).vectorize(dims[-2] if len(dims) == 3 else dims[0], 8)
            pipeline = pw.Pipeline(lifted.output)
            compiled = pipeline.compile()
            inputs = _used(pipeline, engine_inputs(lifted.inputs, ex, approximate))
            sizes = list(reversed(lifted.output_shape))
            ours = median_time(
                lambda compiled=compiled, sizes=sizes, inputs=inputs: compiled(sizes, inputs), args.repeats
            )
            mode = "float32" if approximate else "float64"
            print(
                f"{name:12s} {mode:8s} {cpython * 1e3:11.1f} {numpy_t * 1e3:9.2f} {ours * 1e3:10.2f} "
                f"{cpython / ours:10.0f}x {numpy_t / ours:8.1f}x  {check.detail}",
                flush=True,
            )

    return 0


if __name__ == "__main__":
    sys.exit(main())
