"""Long-running schedule fuzzer: random pipelines with random schedules, compiled (with
checked loads and stores) and compared with the reference evaluator, and the reference
compared with Halide on a share of the cases.

    python tools/fuzz_schedules.py --seed 1 --cases 20000 --time-budget 7200 --out fuzz-results
    python tools/fuzz_schedules.py --target opencl --time-budget 900 --out gpu-fuzz-results

With `--target opencl` the schedules are GPU schedules (engine/fuzz/gpu.py: gpu_blocks,
gpu_threads, gpu_tile, gpu_single_thread), compiled for the OpenCL device without checked
access; a refused case run in Halide (the Halide share) uses Halide's OpenCL target.

Each case runs in a worker process; a crash or a hang costs that case only and is reported
with its script. Failures are shrunk and written to OUT as standalone reproducers
(`OUT/<outcome>_seed<N>.py`, and the unshrunk `..._original.py`); OUT/summary.json holds the
counts (rewritten as the run goes). The exit status is 1 when any case failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pixelweave.engine.fuzz.campaign import Campaign


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (case i is drawn from seed*1e6 + i)")
    parser.add_argument("--cases", type=int, default=1000, help="cases to run (excluded known-bug shapes not counted)")
    parser.add_argument("--time-budget", type=float, default=None, help="stop starting cases after this many seconds")
    parser.add_argument("--workers", type=int, default=1, help="worker processes running cases at once")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take before it is a hang")
    parser.add_argument("--halide-every", type=int, default=5, help="compare with Halide on every n-th case; 0: never")
    parser.add_argument("--unchecked", action="store_true", help="compile without checked loads and stores")
    parser.add_argument("--no-shrink", action="store_true", help="write failing cases without shrinking them")
    parser.add_argument("--out", type=Path, default=Path("fuzz-results"), help="folder for reproducers and summary")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--target", choices=("host", "opencl"), default="host", help="host: CPU schedules; opencl: GPU schedules"
    )
    args = parser.parse_args(argv)
    campaign = Campaign(
        seed=args.seed,
        cases=args.cases,
        time_budget=args.time_budget,
        workers=max(args.workers, 1),
        halide_every=max(args.halide_every, 0),
        timeout=args.timeout,
        checked=not args.unchecked,
        shrink_failures=not args.no_shrink,
        out=args.out,
        progress=not args.quiet,
        target=args.target,
    )
    summary = campaign.run()
    print(json.dumps({k: v for k, v in summary.items() if k != "refusal_kinds"}, indent=1))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
