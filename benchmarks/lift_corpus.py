"""Lift the C corpus (tests/lift/corpus) and report, per function: whether it lifted, the time
lifting took, how it was verified (differential testing against cc -O2 always; a z3 proof for
straight-line integer kernels), and the lifted pipeline's time with a schedule against the
original compiled with `cc -O3`, on one large image.

    python benchmarks/lift_corpus.py                # everything (a few minutes)
    python benchmarks/lift_corpus.py --no-speed     # lifting and verification only
    python benchmarks/lift_corpus.py --only blend   # functions whose name contains "blend"

The schedule is the one lifting chooses from each function's structure
(nodes/lift/schedule.py: strips of output rows in parallel, columns vectorized as wide as the
element type allows, earlier versions of a buffer inlined, temporaries per strip);
`--generic` uses instead one schedule for every function (outputs and temporaries at root,
rows in parallel, columns vectorized 16 wide). Times are of the compiled code alone (C through
ctypes; the pipeline writing into preallocated arrays), excluding compilation; the C and the
pipeline run alternately, --repeats times each, so that both see the same load on a shared
machine, each on fresh copies of the buffers made just before its run (so both find them
equally warm in cache). The table shows medians of wall-clock times ("x") and of CPU times
("cpu x": the process's CPU time during the call, all threads together, which a loaded
machine changes less than the wall-clock time); the summary also gives the ratio of the
fastest runs and the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "lift" / "corpus"


def corpus_functions(only: str | None) -> list[tuple[Path, str]]:
    found = []
    for path in sorted(CORPUS.glob("*.c")):
        for name in re.findall(r"^(?:void|int|uint32_t)\s+(\w+)\(", path.read_text(), re.M):
            if only is None or only in name:
                found.append((path, name))
    return found


def large_scalars(lift, width: int, height: int) -> dict:
    """Parameter values for the speed run: extents as the image size, declared ranges at
    their top (radius 4), other values mid-range."""
    from pixelweave.nodes.lift import symbolic as S

    lifted = lift.lifted
    scalars = {}
    for name, s in lifted.scalars.items():
        if name in lifted.ranges:
            hi = lifted.ranges[name][1]
            scalars[name] = int(hi) if S.is_int(s.type) else float(hi)
        elif s.role == "stride":
            scalars[name] = 0
        elif not S.is_int(s.type):
            scalars[name] = 0.5
        elif s.role == "extent":
            low = name.lower()
            scalars[name] = height if ("height" in low or low in ("h", "rows")) else width
            if low == "n":
                scalars[name] = width * height
        else:
            scalars[name] = 128
    return scalars


def schedule(lift, generic: bool = False) -> None:
    """The lifter's schedule, or (generic) the same one for every function."""
    if not generic:
        from pixelweave.nodes.lift.schedule import schedule_lifted

        schedule_lifted(lift.engine)
        return
    engine = lift.engine
    for tag, func in engine.funcs.items():
        if tag in lift.lifted.accumulators and func.dimensions() == 2:
            # a reduction per pixel (a window): computed per output row, vectorized across it
            out = next(iter(engine.outputs.values()), None)
            if out is not None and out.dimensions() == 2:
                func.compute_at(out, out.args()[1]).vectorize(func.args()[0], 16)
                func.update(0).vectorize(func.args()[0], 16)
            continue
        if tag in lift.lifted.accumulators or func.has_update_definition():
            continue
        version = lift.lifted.versions.get(tag)
        if version is None or version.kind != "pure" or version.dims:
            continue
        args = func.args()
        if len(args) != 2:
            continue
        col, row = args[0], args[1]
        is_output = any(f is func for f in engine.outputs.values())
        if not is_output:
            func.compute_root()
        func.parallel(row).vectorize(col, 16)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="only functions whose name contains this")
    parser.add_argument("--no-speed", action="store_true", help="skip the timing against cc -O3")
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--generic", action="store_true", help="one schedule for every function")
    parser.add_argument("--trials", type=int, default=8, help="random cases per differential test")
    args = parser.parse_args()

    from pixelweave.nodes.lift.c_lift import lift_c
    from pixelweave.nodes.lift.errors import LiftError
    from pixelweave.nodes.lift.prove import prove
    from pixelweave.nodes.lift.verify import differential

    rows = []
    functions = corpus_functions(args.only)
    header = ("function", "lift s", "differential", "z3", "cc -O3 ms", "lifted ms", "x", "cpu x")
    print(
        f"{header[0]:36s} {header[1]:>6s} "
        + " ".join(f"{h:>12s}" for h in header[2:4])
        + " "
        + " ".join(f"{h:>10s}" for h in header[4:6])
        + f" {header[6]:>6s} {header[7]:>6s}"
    )
    for path, name in functions:
        row = {"name": name, "lifted": False}
        try:
            lift = lift_c(path, name)
        except LiftError as e:
            row["refused"] = str(e)
            rows.append(row)
            print(f"{name:36s} refused: {e}")
            continue
        row.update(lifted=True, lift_s=lift.seconds)
        d = differential(lift, trials=args.trials)
        start = time.perf_counter()
        p = prove(lift)
        row["prove_s"] = time.perf_counter() - start
        row["differential"] = d.held
        row["z3"] = (
            "proved"
            if p.applicable and p.held
            else ("gave up" if p.applicable and "gave up" in p.detail else ("FAILED" if p.applicable else "n/a"))
        )
        c_ms = ours_ms = None
        if not args.no_speed:
            try:
                c_ms, ours_ms, row["c_min"], row["ours_min"], row["c_cpu"], row["ours_cpu"] = speed(lift, path, args)
            except Exception as e:  # a timing problem is reported, not fatal to the survey
                row["speed_error"] = repr(e)[:200]
        row["c_ms"], row["ours_ms"] = c_ms, ours_ms
        rows.append(row)
        ratio = f"{c_ms / ours_ms:6.2f}" if c_ms and ours_ms else "     -"
        cpu_ratio = f"{row['c_cpu'] / row['ours_cpu']:6.2f}" if c_ms and ours_ms and row["ours_cpu"] else "     -"
        print(
            f"{name:36s} {lift.seconds:6.2f} {'held' if d.held else 'FAILED':>12s} {row['z3']:>12s} "
            f"{_ms(c_ms)} {_ms(ours_ms)} {ratio} {cpu_ratio}",
            flush=True,
        )
    lifted = [r for r in rows if r["lifted"]]
    times = [r["lift_s"] for r in lifted]
    print()
    print(f"lift rate: {len(lifted)}/{len(rows)} = {100 * len(lifted) / max(1, len(rows)):.1f}%")
    if times:
        print(f"lift time per function: mean {statistics.mean(times):.3f} s, max {max(times):.3f} s")
    print(f"differential testing held: {sum(r['differential'] for r in lifted)}/{len(lifted)}")
    z3_counts = {k: sum(r["z3"] == k for r in lifted) for k in ("proved", "gave up", "FAILED", "n/a")}
    print(
        f"z3 proofs: {z3_counts['proved']} proved, {z3_counts['gave up']} gave up (timeout), "
        f"{z3_counts['FAILED']} failed, {z3_counts['n/a']} not applicable (reductions, temporaries, floats)"
    )
    timed = [r for r in lifted if r.get("c_ms") and r.get("ours_ms")]
    if timed:
        ratios = [r["c_ms"] / r["ours_ms"] for r in timed]
        faster = sum(x > 1 for x in ratios)
        print(
            f"speed vs cc -O3 ({args.width}x{args.height}): {faster}/{len(timed)} faster; "
            f"geometric mean {statistics.geometric_mean(ratios):.2f}x, min {min(ratios):.2f}x, max {max(ratios):.2f}x"
            " (medians)"
        )
        best = [r["c_min"] / r["ours_min"] for r in timed]
        print(
            f"fastest runs: {sum(x > 1 for x in best)}/{len(timed)} faster; "
            f"geometric mean {statistics.geometric_mean(best):.2f}x, min {min(best):.2f}x, max {max(best):.2f}x"
        )
        cpu = [r["c_cpu"] / r["ours_cpu"] for r in timed if r["ours_cpu"]]
        if cpu:
            print(
                f"CPU time (all threads): {sum(x > 1 for x in cpu)}/{len(cpu)} less than the C's; "
                f"geometric mean {statistics.geometric_mean(cpu):.2f}x, min {min(cpu):.2f}x, max {max(cpu):.2f}x"
            )
    print(f"load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


def _ms(value: float | None) -> str:
    return f"{value:10.2f}" if value else "         -"


def speed(lift, path: Path, args) -> tuple[float, float, float, float]:
    """(cc -O3 ms, lifted ms) medians and minimums on one large case, run alternately."""
    from pixelweave.nodes.lift.regions import ELEM_BYTES, buffer_layout, written_extent
    from pixelweave.nodes.lift.to_engine import NP_TYPES
    from pixelweave.nodes.lift.verify import allocate, call_original, compile_original

    import pixelweave as pw

    rng = np.random.default_rng(1)
    scalars = large_scalars(lift, args.width, args.height)
    buffers = allocate(lift, rng, scalars, lift.lifted.ranges)
    lib = compile_original(path, "-O3")
    schedule(lift, args.generic)
    engine = lift.engine
    lifted = lift.lifted

    def pipeline_inputs(work: dict) -> dict:
        inputs = {name: scalars[name] for name in engine.params}
        for key in engine.images:
            bname = key[: -len("_in")] if key.endswith("_in") else key
            rows, stride = buffer_layout(lifted, bname, scalars, work[bname].size)
            elem = lifted.buffers[bname].elem
            inputs[key] = work[bname][: rows * stride * ELEM_BYTES[elem]].view(NP_TYPES[elem]).reshape(rows, stride)
        return inputs

    read = {key[: -len("_in")] if key.endswith("_in") else key for key in engine.images}
    calls = []
    # outputs the schedule computes in one loop nest are one pipeline (schedule.fusable_outputs)
    groups = [[n] for n in engine.outputs if n not in engine.fused_outputs]
    if engine.fused_outputs:
        groups.insert(0, list(engine.fused_outputs))
    for names in groups:
        cols, rows = written_extent(lifted, names[0], scalars)
        outs = [np.zeros((rows, cols), NP_TYPES[lifted.buffers[n].elem]) for n in names]  # as C writes
        funcs = [engine.outputs[n] for n in names]
        calls.append((pw.Pipeline(funcs if len(funcs) > 1 else funcs[0]).compile(), [cols, rows], outs))
    if engine.result is not None:
        calls.append((pw.Pipeline(engine.result).compile(), [], None))
    c_times, ours, c_cpu, ours_cpu = [], [], [], []
    for attempt in range(args.repeats + 1):  # the first of each warms up and is not counted
        # each side gets fresh copies of the buffers it reads and writes just before its run,
        # so that both find them as warm in cache
        work = {k: v.copy() for k, v in buffers.items()}
        start, cpu = time.perf_counter(), time.process_time()
        call_original(lib, lift, scalars, work)
        c_time, c_cpu_time = time.perf_counter() - start, time.process_time() - cpu
        inputs = pipeline_inputs({k: buffers[k].copy() for k in read})
        outs = [[a.copy() for a in out] if out is not None else None for _, _, out in calls]
        start, cpu = time.perf_counter(), time.process_time()
        for (fn, sizes, _), out in zip(calls, outs, strict=True):
            if out is None:
                fn(sizes, inputs)
            else:
                fn(sizes, inputs, out=out if len(out) > 1 else out[0])
        if attempt:
            ours.append(time.perf_counter() - start)
            ours_cpu.append(time.process_time() - cpu)
            c_times.append(c_time)
            c_cpu.append(c_cpu_time)
    return (
        statistics.median(c_times) * 1e3,
        statistics.median(ours) * 1e3,
        min(c_times) * 1e3,
        min(ours) * 1e3,
        statistics.median(c_cpu) * 1e3,
        statistics.median(ours_cpu) * 1e3,
    )


if __name__ == "__main__":
    sys.exit(main())
