"""Pixelweave against Halide, NumPy and OpenCV on eight pipelines, in one run.

    python -m benchmarks.run_apps [--runs N] [--threads N] [--only NAME,...] [--opencl | --opencl-only]

Pipelines: blur, unsharp, Harris, bilateral grid, camera pipe, local Laplacian,
interpolate and histogram equalization, each with the algorithm and CPU schedule of
Halide's apps/ folder in both compilers (benchmarks/apps.py). For each it prints the
median wall time and the median CPU time (all threads) of Pixelweave and Halide, measured
in alternating runs (one of ours, one of theirs, ...: robust on a shared machine), their
ratios, the memory-bandwidth bound (the median time of a multi-threaded copy of the
compulsory bytes: every input byte read once, every output byte written once, timed in
the same rotation), NumPy and OpenCV where written, and the JIT compile time of both
compilers. Both compilers write
into preallocated outputs; everything is warmed up before it is timed, and the results of
the two compilers are checked to agree first.

--opencl adds the OpenCL comparison for the pipelines with a GPU schedule (blur, unsharp,
Harris, bilateral grid, local Laplacian: Halide's GPU schedules from its apps/ folder):
Pixelweave's target "opencl" against Halide's OpenCL target on the same device (pyopencl's
first usable one, e.g. pocl's CPU device; Halide picks its own, the first OpenCL device
too), same algorithm and GPU schedule. A run is one call from host arrays to a host array:
both copy the input to the device (Halide's input is marked host-dirty before every run),
run, and copy the output back. Pixelweave's transfer time is reported apart.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from pixelweave.engine.runtime.buffer import aligned_empty

from benchmarks import apps, numpy_cv


@dataclass
class Case:
    name: str
    description: str
    build: Callable
    inputs: dict
    sizes: list[int]
    dtype: type
    numpy_fn: Callable | None
    opencv_fn: Callable | None
    tolerance: float = 1e-3


def cases(rng: np.random.Generator) -> list[Case]:
    blur_in = rng.integers(0, 4000, (4802, 6402)).astype(np.uint16)
    unsharp_in = (rng.random((3, 1536, 2560), dtype=np.float32) * 0.9 + 0.1).astype(np.float32)
    harris_in = rng.random((3, 1030, 1926), dtype=np.float32)
    bilateral_in = rng.random((2560, 1536), dtype=np.float32)
    # 256 columns wider than Halide's app feeds it: the RoundUp tails of g_r, g_b and
    # deinterleaved compute up to 63 half-resolution columns past what the output needs,
    # and Pixelweave's bounds include the input those columns read (x < 2832; Halide's
    # infer_input_bounds asks for x < 2580), so both get this wider input.
    raw_in = rng.integers(0, 1024, (1968, 2848)).astype(np.uint16)
    laplacian_in = rng.integers(0, 65536, (3, 2560, 1536)).astype(np.uint16)
    rgba = rng.random((4, 2560, 1536), dtype=np.float32)
    rgba[3] = (rgba[3] > 0.5).astype(np.float32)  # alpha zero or one, as the app's input
    rgba[3, :2, :2] = 1.0  # so that no pixel's pyramid is empty
    gray_u8 = np.clip(rng.normal(90, 30, (1536, 2560)), 0, 255).astype(np.uint8)
    return [
        Case("blur", "3x3 box blur, 6400x4800 u16", apps.build_blur, {"input": blur_in}, [6400, 4800],
             np.uint16, lambda: numpy_cv.blur_numpy(blur_in), lambda: numpy_cv.blur_opencv(blur_in)),
        Case("unsharp", "unsharp mask, 2560x1536 RGB f32", apps.build_unsharp, {"input": unsharp_in},
             [2560, 1536, 3], np.float32, lambda: numpy_cv.unsharp_numpy(unsharp_in),
             lambda: numpy_cv.unsharp_opencv(unsharp_in)),
        Case("harris", "Harris response, 1920x1024 RGB f32", apps.build_harris, {"input": harris_in},
             [1920, 1024], np.float32, lambda: numpy_cv.harris_numpy(harris_in),
             lambda: numpy_cv.harris_opencv(harris_in)),
        Case("bilateral_grid", "bilateral grid, 1536x2560 gray f32", apps.build_bilateral_grid,
             {"input": bilateral_in, "r_sigma": 0.1}, [1536, 2560], np.float32,
             lambda: numpy_cv.bilateral_grid_numpy(bilateral_in), None),
        Case("camera_pipe", "camera pipe, 2848x1968 raw u16 -> 2560x1920 RGB u8", apps.build_camera_pipe,
             {"input": raw_in}, [2560, 1920, 3], np.uint8, None, None, tolerance=1.0),
        Case("local_laplacian", "local Laplacian, 1536x2560 RGB u16", apps.build_local_laplacian,
             {"input": laplacian_in, "alpha": 1.0, "beta": 1.0}, [1536, 2560, 3], np.uint16, None, None,
             tolerance=2.0),
        Case("interpolate", "interpolate, 1536x2560 RGBA f32", apps.build_interpolate, {"input": rgba},
             [1536, 2560, 3], np.float32, None, None),
        Case("histogram_equalization", "histogram equalization, 2560x1536 u8", apps.build_histogram_equalization,
             {"input": gray_u8}, [2560, 1536], np.uint8, None, lambda: numpy_cv.equalize_opencv(gray_u8),
             tolerance=0.0),
    ]  # fmt: skip


HALIDE_TYPES = {np.uint8: ("UInt", 8), np.uint16: ("UInt", 16), np.float32: ("Float", 32)}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    for _ in range(2):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def alternating_ms(
    ours: Callable[[], object],
    theirs: Callable[[], object],
    runs: int,
    unpartitioned: Callable[[], object] | None = None,
    bound: Callable[[], object] | None = None,
) -> dict[str, float]:
    """Median wall and process CPU time (all threads) of each, runs alternating, so that
    all see the same load from other processes on a shared machine. Also the spread of
    the wall times (max / min), a measure of the noise. `unpartitioned` (optional) is
    Pixelweave with loop partitioning switched off, `bound` the bandwidth bound's copy,
    both timed in the same rotation (a bound timed apart sees other load)."""
    optional = {"unpartitioned_wall": unpartitioned, "bound": bound}
    fns = [ours, theirs] + [fn for fn in optional.values() if fn is not None]
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
        fn()
    for _ in range(runs):
        for k, fn in enumerate(fns):
            start_cpu, start = time.process_time(), time.perf_counter()
            fn()
            wall[k].append(time.perf_counter() - start)
            cpu[k].append(time.process_time() - start_cpu)
    out = {
        "pw_wall": statistics.median(wall[0]) * 1000,
        "hl_wall": statistics.median(wall[1]) * 1000,
        "pw_cpu": statistics.median(cpu[0]) * 1000,
        "hl_cpu": statistics.median(cpu[1]) * 1000,
        "spread": max(max(w) / min(w) for w in wall[:2]),
    }
    k = 2
    for key, fn in optional.items():
        if fn is not None:
            out[key] = statistics.median(wall[k]) * 1000
            k += 1
    return out


def never_partition(pipeline_funcs: list) -> None:
    """Partition.Never on every loop of every stage: Pixelweave without loop partitioning."""
    for f in pipeline_funcs:
        f.never_partition_all()
        for k in range(f.num_update_definitions()):
            f.update(k).never_partition_all()


class BandwidthCopy:
    """The memory-bandwidth bound's work: copying the compulsory bytes. A copy reads n and
    writes n bytes, so n is half of (input bytes + output bytes); chunks are copied on
    `threads` threads (NumPy's copy releases the GIL), as the compilers' parallel loops use
    every core. Call it to run one copy; close() ends its threads."""

    def __init__(self, compulsory_bytes: int, threads: int) -> None:
        n = max(compulsory_bytes // 2, 1)
        self.src, self.dst = np.ones(n, np.uint8), np.empty(n, np.uint8)
        bounds = np.linspace(0, n, threads * 4 + 1).astype(np.int64)
        self.chunks = [(int(a), int(b)) for a, b in itertools.pairwise(bounds)]
        self.pool = ThreadPoolExecutor(threads)

    def _copy_chunk(self, chunk: tuple[int, int]) -> None:
        a, b = chunk
        np.copyto(self.dst[a:b], self.src[a:b])

    def __call__(self) -> None:
        list(self.pool.map(self._copy_chunk, self.chunks))

    def close(self) -> None:
        self.pool.shutdown()


def check_agreement(case: Case, ours: np.ndarray, theirs: np.ndarray) -> None:
    """The two compilers agree within the case's tolerance on all but a few pixels (float
    rounding differs where the algorithm divides by small numbers, as local Laplacian does)."""
    diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    off = diff > case.tolerance + 1e-3 * np.abs(theirs.astype(np.float64))
    if off.mean() > 1e-4:
        raise AssertionError(f"{case.name}: {off.sum()} of {off.size} values differ, up to {diff.max()}")


def run(runs: int, only: set[str] | None = None, partition_effect: bool = False) -> list[dict]:
    import halide as hl

    import pixelweave as pw

    warnings.filterwarnings("ignore", category=RuntimeWarning)
    threads = int(os.environ.get("PIXELWEAVE_NUM_THREADS", os.cpu_count() or 1))
    rows = []
    for case in cases(np.random.default_rng(0)):
        if only and case.name not in only:
            continue
        out_pw, _ = case.build(pw)
        pipeline = pw.Pipeline(out_pw)
        start = time.perf_counter()
        fn = pipeline.compile(level="full")
        pw_compile = time.perf_counter() - start
        ours = aligned_empty(case.sizes[::-1], case.dtype)  # Halide allocates its output aligned too
        fn(case.sizes, case.inputs, out=ours)

        out_hl, handles = case.build(hl)
        for name, value in case.inputs.items():
            handles[name].set(hl.Buffer(value) if isinstance(value, np.ndarray) else value)
        start = time.perf_counter()
        out_hl.compile_jit()
        hl_compile = time.perf_counter() - start
        kind, bits = HALIDE_TYPES[case.dtype]
        theirs = hl.Buffer(getattr(hl, kind)(bits), case.sizes)
        out_hl.realize(theirs)
        check_agreement(case, ours, np.asarray(theirs))

        run_ours = lambda fn=fn, case=case, ours=ours: fn(case.sizes, case.inputs, out=ours)  # noqa: E731
        run_theirs = lambda out_hl=out_hl, theirs=theirs: out_hl.realize(theirs)  # noqa: E731
        run_unpartitioned = None
        if partition_effect:
            out_np, _ = case.build(pw)
            plain = pw.Pipeline(out_np)
            never_partition(plain.funcs)
            fn_np = plain.compile(level="full")
            ours_np = aligned_empty(case.sizes[::-1], case.dtype)
            run_unpartitioned = lambda fn=fn_np, case=case, out=ours_np: fn(case.sizes, case.inputs, out=out)  # noqa: E731
        compulsory = ours.nbytes + sum(v.nbytes for v in case.inputs.values() if isinstance(v, np.ndarray))
        bound = BandwidthCopy(compulsory, threads)
        try:
            times = alternating_ms(run_ours, run_theirs, runs, run_unpartitioned, bound)
        finally:
            bound.close()
        row = {
            "name": case.name,
            "description": case.description,
            **times,
            "numpy": median_ms(case.numpy_fn, max(3, runs // 4)) if case.numpy_fn else None,
            "opencv": median_ms(case.opencv_fn, runs) if case.opencv_fn else None,
            "pw_compile": pw_compile * 1000,
            "hl_compile": hl_compile * 1000,
        }
        rows.append(row)
    return rows


GPU_BUILDERS = {
    "blur": lambda m: apps.build_blur(m, gpu=True),
    "unsharp": lambda m: apps.build_unsharp(m, gpu=True),
    "harris": lambda m: apps.build_harris(m, gpu=True),
    "bilateral_grid": lambda m: apps.build_bilateral_grid(m, gpu=True),
    "local_laplacian": lambda m: apps.build_local_laplacian(m, gpu=True),
}
GPU_LABELS: dict[str, str] = {}  # how a GPU row differs from the CPU one, where it does
# more GPU schedules of a pipeline, (label, builder); the same schedule on both sides
GPU_VARIANTS = {"blur": [("4-lane vectors per work-item", lambda m: apps.build_blur(m, gpu=True, gpu_vector=4))]}


def run_opencl(runs: int, only: set[str] | None = None) -> list[dict]:
    """Pixelweave OpenCL vs Halide OpenCL, per pipeline with a GPU schedule (and its variants)."""
    rows = []
    for case in cases(np.random.default_rng(0)):
        if case.name not in GPU_BUILDERS or (only and case.name not in only):
            continue
        main = (GPU_LABELS.get(case.name, ""), GPU_BUILDERS[case.name])
        for label, build in [main, *GPU_VARIANTS.get(case.name, [])]:
            rows.append(_opencl_row(case, label, build, runs))
    return rows


def _opencl_row(case, label: str, build, runs: int) -> dict:
    """One GPU schedule of a pipeline: Pixelweave's and Halide's OpenCL targets."""
    import halide as hl

    import pixelweave as pw

    out_pw, _ = build(pw)
    start = time.perf_counter()
    fn = pw.Pipeline(out_pw).compile(target="opencl")
    pw_compile = time.perf_counter() - start
    ours = aligned_empty(case.sizes[::-1], case.dtype)
    fn(case.sizes, case.inputs, out=ours)

    target = hl.get_host_target().with_feature(hl.TargetFeature.OpenCL)
    out_hl, handles = build(hl)
    buffers = {}
    for name, value in case.inputs.items():
        if isinstance(value, np.ndarray):
            buffers[name] = hl.Buffer(value)
            handles[name].set(buffers[name])
        else:
            handles[name].set(value)
    start = time.perf_counter()
    out_hl.compile_jit(target)
    hl_compile = time.perf_counter() - start
    hl_type = hl.UInt(16) if case.dtype == np.uint16 else hl.Float(32)
    theirs = hl.Buffer(hl_type, case.sizes)

    def run_theirs(out_hl=out_hl, theirs=theirs, buffers=buffers, target=target):
        for b in buffers.values():
            b.set_host_dirty(True)  # a new input every call, as Pixelweave copies it every call
        out_hl.realize(theirs, target)
        theirs.copy_to_host()

    run_theirs()
    check_agreement(case, ours, np.asarray(theirs))
    run_ours = lambda fn=fn, case=case, ours=ours: fn(case.sizes, case.inputs, out=ours)  # noqa: E731
    transfers = []

    def run_ours_noting_transfers(run_ours=run_ours, fn=fn, transfers=transfers):
        run_ours()
        transfers.append(fn.native.last_transfer_seconds)

    times = alternating_ms(run_ours_noting_transfers, run_theirs, runs)  # pocl's threads count in the CPU time
    return {
        "name": case.name,
        "description": case.description + (f", {label}" if label else ""),
        "device": fn.native.device.label,
        "pixelweave": times["pw_wall"],
        "halide": times["hl_wall"],
        "cpu_ratio": times["pw_cpu"] / times["hl_cpu"],
        "spread": times["spread"],
        "transfer": statistics.median(transfers[2:]) * 1000,
        "pw_compile": pw_compile * 1000,
        "hl_compile": hl_compile * 1000,
    }


def opencl_table(rows: list[dict]) -> str:
    lines = [
        "| pipeline (OpenCL) | Pixelweave | of which transfers | Halide | Pixelweave / Halide (wall) | same, CPU "
        "time | JIT compile (Pixelweave / Halide) | noise (max/min wall) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['description']} | {r['pixelweave']:.1f} ms | {r['transfer']:.1f} ms | {r['halide']:.1f} ms | "
            f"{r['pixelweave'] / r['halide']:.2f} | {r['cpu_ratio']:.2f} | "
            f"{r['pw_compile']:.0f} ms / {r['hl_compile']:.0f} ms | {r['spread']:.2f} |"
        )
    if rows:
        lines.append(f"\nOpenCL device (Pixelweave): {rows[0]['device']}; load average {os.getloadavg()[0]:.1f}")
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    lines = [
        "| pipeline | Pixelweave | Halide | Pixelweave / Halide (wall) | same, CPU time | bandwidth bound | "
        "Pixelweave / bound | NumPy | OpenCV | JIT compile (Pixelweave / Halide) | noise (max/min wall) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        np_ms = f"{r['numpy']:.0f} ms" if r["numpy"] is not None else "—"
        cv = f"{r['opencv']:.1f} ms" if r["opencv"] is not None else "—"
        lines.append(
            f"| {r['description']} | {r['pw_wall']:.2f} ms | {r['hl_wall']:.2f} ms | "
            f"{r['pw_wall'] / r['hl_wall']:.2f} | {r['pw_cpu'] / r['hl_cpu']:.2f} | {r['bound']:.2f} ms | "
            f"{r['pw_wall'] / r['bound']:.1f} | {np_ms} | {cv} | "
            f"{r['pw_compile']:.0f} ms / {r['hl_compile']:.0f} ms | {r['spread']:.2f} |"
            + (f" {r['unpartitioned_wall'] / r['pw_wall']:.2f} |" if "unpartitioned_wall" in r else "")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per implementation")
    parser.add_argument("--threads", type=int, default=None, help="threads for both compilers")
    parser.add_argument("--only", default="", help="comma-separated pipeline names (default: all)")
    parser.add_argument(
        "--partition-effect",
        action="store_true",
        help="also time Pixelweave with loop partitioning off (last column: its time / partitioned time)",
    )
    parser.add_argument("--opencl", action="store_true", help="also compare the OpenCL targets (GPU schedules)")
    parser.add_argument("--opencl-only", action="store_true", help="only the OpenCL comparison")
    args = parser.parse_args()
    if args.threads:
        os.environ["PIXELWEAVE_NUM_THREADS"] = str(args.threads)
        os.environ["HL_NUM_THREADS"] = str(args.threads)
    only = {n.strip() for n in args.only.split(",") if n.strip()} or None
    with tempfile.TemporaryDirectory() as cache:
        # a fresh compile cache: the compile times are real, and no object from an older compiler is run
        os.environ["PIXELWEAVE_CACHE_DIR"] = cache
        if not args.opencl_only:
            rows = run(args.runs, only, args.partition_effect)
            text = table(rows)
            if args.partition_effect:
                first, second, *rest = text.splitlines()
                text = "\n".join([first + " unpartitioned / partitioned (wall) |", second + " --- |", *rest])
            print(text)
        if args.opencl or args.opencl_only:
            print(opencl_table(run_opencl(args.runs, only)))


if __name__ == "__main__":
    main()
