"""Lowering cost per pass, and a dump of every lowered statement to check that a speed-up
of the lowering changes none of its output.

    python -m benchmarks.lowering_profile --dump DIR        # statement text of every app and example
    python -m benchmarks.lowering_profile --passes [--apps local_laplacian ...] [--repeats 3]
    python -m benchmarks.lowering_profile --profile APP [--sort tottime] [--limit 40]

--dump writes, per benchmark app (benchmarks/apps.py; with gpu=True also the OpenCL source
and host statement, where the app has a GPU schedule) and per example document
(resources/examples/*.json, through nodes), the loop nest and the fully lowered statement
as text; `diff -r` two dumps taken before and after a change. --passes prints the CPU time of
the whole lowering (the least of --repeats) and each pass's wall time from that run.
--profile runs cProfile over one app's lowering.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compile_latency import APPS

GPU_APPS = ["blur", "unsharp", "harris", "bilateral_grid", "local_laplacian"]  # apps with gpu=True
EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"


def _lower_app(name: str):
    from pixelweave.engine.lower import lower

    import pixelweave as pw

    out, _ = APPS[name](pw)
    return lower(pw.Pipeline(out))


def dump(directory: Path) -> None:
    from pixelweave.engine.stmt_printer import loop_nest_to_string, stmt_to_string
    from pixelweave.nodes.document import read_document
    from pixelweave.nodes.pipeline_build import build_document

    directory.mkdir(parents=True, exist_ok=True)
    for name in APPS:
        result = _lower_app(name)
        (directory / f"app-{name}.loop_nest.txt").write_text(loop_nest_to_string(result.loop_nest))
        (directory / f"app-{name}.stmt.txt").write_text(stmt_to_string(result.lowered.body))
        print(name, flush=True)
    for name in GPU_APPS:
        from pixelweave.engine.codegen.opencl import generate_opencl
        from pixelweave.engine.lower import lower

        import pixelweave as pw

        out, _ = APPS[name](pw, gpu=True)
        program = generate_opencl(lower(pw.Pipeline(out), target="opencl").lowered)
        (directory / f"app-{name}.opencl.txt").write_text(program.source + "\n" + stmt_to_string(program.host))
        print(name, "(OpenCL)", flush=True)
    for path in sorted(EXAMPLES.glob("*.json")):
        built = build_document(read_document(path), check_lowering=False)
        (directory / f"example-{path.stem}.loop_nest.txt").write_text(built.loop_nest())
        (directory / f"example-{path.stem}.stmt.txt").write_text(built.lowered_stmt())
        print(path.stem, flush=True)


def passes(names: list[str], repeats: int) -> None:
    for name in names:
        runs = []
        for _ in range(repeats):
            cpu = time.process_time()
            result = _lower_app(name)
            runs.append((time.process_time() - cpu, result.timings))
        cpu, timings = min(runs, key=lambda r: r[0])
        top = sorted(timings.items(), key=lambda kv: -kv[1])[:6]
        print(f"{name}: lowering {cpu:.3f} s CPU (least of {repeats}); " + ", ".join(f"{k} {v:.3f}" for k, v in top))


def profile(name: str, sort: str, limit: int) -> None:
    _lower_app(name)  # imports and first-use costs out of the way
    profiler = cProfile.Profile()
    profiler.enable()
    _lower_app(name)
    profiler.disable()
    pstats.Stats(profiler).sort_stats(sort).print_stats(limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--passes", action="store_true")
    parser.add_argument("--profile")
    parser.add_argument("--apps", nargs="*", default=list(APPS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    if args.dump:
        dump(args.dump)
    if args.passes:
        passes(args.apps, args.repeats)
    if args.profile:
        profile(args.profile, args.sort, args.limit)


if __name__ == "__main__":
    main()
