"""Compile latency: whole-pipeline JIT compile of the benchmark apps beside Halide's, and
the LLVM backend's levels on a stencil chain.

    python -m benchmarks.compile_latency [--apps blur,unsharp,...] [--repeats 3]
    python -m benchmarks.compile_latency --chain [--stages 10] [--size 1920x1080]
    python -m benchmarks.compile_latency --boundary-chain [--stages 50] [--repeats 3]
    python -m benchmarks.compile_latency --backend-options [--apps ...] [--repeats 3]

Apps (default): blur, unsharp, Harris, bilateral grid, camera pipe, local Laplacian and
interpolate
(benchmarks/apps.py: the same algorithm and schedule for both compilers). For each, in the
same run, the time from a fresh Pipeline to callable native code (lowering, LLVM IR, LLVM
passes and code generation, linking; the compile caches off) beside Halide's
`compile_jit()` of a fresh Func, as wall and process CPU time (the least of --repeats;
CPU time is robust to other processes on a shared machine), and their ratios. Also the
split of Pixelweave's time into lowering and the rest, and the time from opening the
local Laplacian example document to its loop nest.

--chain: a chain of 5-point stencils compiled at "fast" and "full" with run times.
--boundary-chain: lowering time of a 1-D chain of boundary-conditioned compute_root stages
(each a 3-tap blur of the previous one behind repeat_edge, mirror_image or a constant
exterior; the issue's target is under 1 s for 50 stages), the least of --repeats.
The compile worker (engine/runtime/compile_worker.py) is started and waited for before
timing; PIXELWEAVE_COMPILE_WORKER=0 measures everything in this one process. Its CPU time
on each compile is reported beside this process's and counted in the CPU ratio.

--backend-options: each app's IR compiled (LLVM and linking) with LLVM's own code generation
pipeline and with Pixelweave's BACKEND_OPTIONS (engine/codegen/target.py), in alternating
processes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import apps

APPS = {
    "blur": apps.build_blur,
    "unsharp": apps.build_unsharp,
    "harris": apps.build_harris,
    "bilateral_grid": apps.build_bilateral_grid,
    "camera_pipe": apps.build_camera_pipe,
    "local_laplacian": apps.build_local_laplacian,
    "interpolate": apps.build_interpolate,
}
LOCAL_LAPLACIAN_DOCUMENT = Path(__file__).resolve().parent.parent / "resources" / "examples" / "local_laplacian.json"


def _timed(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def pixelweave_compile(build, level: str) -> dict[str, float]:
    """Fresh Pipeline -> native code with the caches off; lowering timed apart. "cpu" is
    this process's CPU time, "worker_cpu" the compile worker's on its part of this compile
    (engine/runtime/compile_worker.py), "total_cpu" both."""
    from pixelweave.engine.lower import lower
    from pixelweave.engine.runtime.compile_worker import worker_statistics
    from pixelweave.engine.runtime.jit import compile_pipeline

    import pixelweave as pw

    out, _ = build(pw)
    pipeline = pw.Pipeline(out)
    worker0 = worker_statistics()["worker_cpu_seconds"]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    lowering = lower(pipeline)
    lower_wall, lower_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    compile_pipeline(lowering.lowered, level=level, cache=False)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    worker_cpu = worker_statistics()["worker_cpu_seconds"] - worker0
    return {
        "wall": wall,
        "cpu": cpu,
        "worker_cpu": worker_cpu,
        "total_cpu": cpu + worker_cpu,
        "lower_wall": lower_wall,
        "lower_cpu": lower_cpu,
    }


def halide_compile(build) -> dict[str, float]:
    import halide as hl

    out, _ = build(hl)
    wall, cpu, _ = _timed(out.compile_jit)
    return {"wall": wall, "cpu": cpu}


def best(samples: list[dict[str, float]]) -> dict[str, float]:
    return {k: min(s[k] for s in samples) for k in samples[0]}


def open_to_loop_nest() -> tuple[float, float]:
    from pixelweave.nodes.pipeline_build import open_document

    wall, cpu, _ = _timed(lambda: open_document(LOCAL_LAPLACIAN_DOCUMENT).loop_nest())
    return wall, cpu


def run_apps(names: list[str], repeats: int, level: str) -> None:
    from pixelweave.engine.runtime.compile_worker import start_compile_worker

    warnings.filterwarnings("ignore", category=RuntimeWarning)
    # The compile worker starts before timing, as an editor starts it at launch.
    worker = "ready" if start_compile_worker(wait_seconds=10.0) else "off (PIXELWEAVE_COMPILE_WORKER=0 or failed)"
    print(
        f"| app | Pixelweave wall / CPU here + worker CPU (s) | of which lowering, CPU | Halide wall / CPU (s) "
        f"| ratio wall | ratio CPU (here + worker) |   (level {level!r}, least of {repeats}, compile worker {worker})"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name in names:
        build = APPS[name]
        ours, theirs = [], []
        for _ in range(repeats):  # alternating, so both see the same machine load
            ours.append(pixelweave_compile(build, level))
            theirs.append(halide_compile(build))
        o, t = best(ours), best(theirs)
        print(
            f"| {name} | {o['wall']:.2f} / {o['cpu']:.2f} + {o['worker_cpu']:.2f} | {o['lower_cpu']:.2f} "
            f"| {t['wall']:.2f} / {t['cpu']:.2f} | {o['wall'] / t['wall']:.2f} | {o['total_cpu'] / t['cpu']:.2f} |"
        )
    wall, cpu = open_to_loop_nest()
    print(f"\nlocal Laplacian example: open document -> loop nest: {wall:.2f} s wall, {cpu:.2f} s CPU")


def run_chain(stages: int, size: str, repeats: int) -> None:
    from pixelweave.engine.codegen.llvm import generate_module
    from pixelweave.engine.codegen.target import data_layout, resolve_target
    from pixelweave.engine.runtime.jit import compile_pipeline

    from benchmarks.stencil_chain import stencil_chain

    width, height = (int(v) for v in size.split("x"))
    lowered = stencil_chain(stages)
    spec = resolve_target("host")
    start = time.perf_counter()
    module = generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec))
    print(f"IR generation: {1e3 * (time.perf_counter() - start):.1f} ms, {len(module.ir.splitlines())} lines of IR")
    image = np.random.default_rng(0).random((height, width), dtype=np.float32)
    out = np.zeros_like(image)
    compile_pipeline(lowered, level="fast", cache=False)  # warm LLVM up
    for level in ("fast", "full"):
        seconds = []
        for _ in range(repeats):
            fn = compile_pipeline(lowered, level=level, cache=False)
            seconds.append(fn.compile_seconds)
        runs = []
        for _ in range(repeats + 2):
            fn({"input": image}, {"out": out})
            runs.append(fn.last_run_seconds)
        print(
            f"{level:>4}: compile {1e3 * statistics.median(seconds):7.1f} ms (median of {repeats}), "
            f"run {1e3 * min(runs[2:]):7.2f} ms (best), {stages} stages on {width}x{height} float32"
        )
    cached = compile_pipeline(lowered, level="full")
    cached = compile_pipeline(lowered, level="full")
    print(f"cache hit ({cached.cache_hit}): {1e3 * cached.compile_seconds:.2f} ms")


def boundary_chain(stages: int, boundary: str):
    """input -> s0 -> ... -> s{stages-1} -> out, each stage a 3-tap blur of the previous one
    behind a boundary condition, computed at root."""
    import pixelweave as pw

    x = pw.Var("x")
    inp = pw.ImageParam(pw.Float(32), 1, "input")
    bounds = [(inp.dim(0).min(), inp.dim(0).extent())]
    bc = pw.BoundaryConditions
    if boundary == "constant_exterior":

        def make(src, b=None):
            return bc.constant_exterior(src, 0.0, b)
    else:
        make = getattr(bc, boundary)
    f = make(inp)
    for i in range(stages):
        g = pw.Func(f"s{i}")
        g[x] = (f[x - 1] + f[x] + f[x + 1]) * 0.25
        g.compute_root()
        f = make(g, bounds)
    out = pw.Func("out")
    out[x] = f[x]
    return pw.Pipeline(out)


def run_boundary_chain(stages: int, repeats: int) -> None:
    from pixelweave.engine.lower import lower

    print("| boundary | stages | lower wall (s) | lower CPU (s) |\n| --- | --- | --- | --- |")
    for boundary in ("repeat_edge", "mirror_image", "constant_exterior"):
        walls, cpus = [], []
        for _ in range(repeats):
            pipeline = boundary_chain(stages, boundary)
            wall, cpu = time.perf_counter(), time.process_time()
            lower(pipeline, "host")
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(f"| {boundary} | {stages} | {min(walls):.2f} | {min(cpus):.2f} |")


def llvm_seconds(name: str, backend_options: bool, repeats: int) -> float:
    """Least CPU time of LLVM and linking (compile_pipeline, caches off) for one app's IR;
    without Pixelweave's BACKEND_OPTIONS when backend_options is False. Run in a process of
    its own: LLVM's options are set once per process."""
    import importlib

    target = importlib.import_module("pixelweave.engine.codegen.target")
    if not backend_options:
        target.BACKEND_OPTIONS = ()
    from pixelweave.engine.lower import lower
    from pixelweave.engine.runtime.jit import compile_pipeline

    import pixelweave as pw

    warnings.filterwarnings("ignore", category=RuntimeWarning)
    out, _ = APPS[name](pw)
    lowered = lower(pw.Pipeline(out)).lowered
    return min(_timed(lambda: compile_pipeline(lowered, level="full", cache=False))[1] for _ in range(repeats))


def run_backend_options(names: list[str], repeats: int) -> None:
    """The same IR compiled with LLVM's own code generation pipeline and with Pixelweave's
    BACKEND_OPTIONS, in alternating processes (least of 2 x --repeats compiles each)."""
    import subprocess

    from pixelweave.engine.codegen.target import BACKEND_OPTIONS

    print(f"| app | LLVM's defaults, CPU (s) | with {' '.join(BACKEND_OPTIONS)}, CPU (s) | change |")
    print("| --- | --- | --- | --- |")
    root = str(Path(__file__).resolve().parent.parent)
    for name in names:
        best = {False: float("inf"), True: float("inf")}
        for _ in range(2):
            for options in (False, True):
                program = (
                    "from benchmarks.compile_latency import llvm_seconds\n"
                    f"print(llvm_seconds({name!r}, {options}, {repeats}))"
                )
                done = subprocess.run(
                    [sys.executable, "-c", program], cwd=root, capture_output=True, text=True, check=True
                )
                best[options] = min(best[options], float(done.stdout.split()[-1]))
        print(f"| {name} | {best[False]:.3f} | {best[True]:.3f} | {100 * (best[True] / best[False] - 1):+.0f} % |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS), help="comma-separated, from: " + ", ".join(APPS))
    parser.add_argument("--level", default="full", choices=["fast", "full"])
    parser.add_argument("--chain", action="store_true", help="the stencil-chain benchmark instead")
    parser.add_argument("--boundary-chain", action="store_true", help="lowering of a boundary-conditioned chain")
    parser.add_argument(
        "--backend-options", action="store_true", help="LLVM + linking with and without BACKEND_OPTIONS, same IR"
    )
    parser.add_argument("--stages", type=int, default=None, help="chain length (10; 50 with --boundary-chain)")
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.chain:
        run_chain(args.stages or 10, args.size, args.repeats)
    elif args.boundary_chain:
        run_boundary_chain(args.stages or 50, args.repeats)
    elif args.backend_options:
        run_backend_options([a for a in args.apps.split(",") if a], args.repeats)
    else:
        run_apps([a for a in args.apps.split(",") if a], args.repeats, args.level)


if __name__ == "__main__":
    main()
