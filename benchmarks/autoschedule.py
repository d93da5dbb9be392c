"""Automatic schedules against hand schedules and Halide's autoschedulers, in one run.

    python -m benchmarks.autoschedule [--runs N] [--threads N] [--tune SECONDS] [--apps A,B]
                                      [--apps-only | --examples-only]

Part 1, the benchmark pipelines of benchmarks/apps.py (the same algorithms in both
compilers): Pixelweave's analytic and tuned (--tune seconds) schedules beside Pixelweave's hand schedule (Halide's
apps/ schedules) and, in Halide 21, the hand schedule and the Mullapudi2016, Adams2019
(beam size 1, and its default beam) and Li2018 autoschedulers; with the time each
scheduler took to choose.
Each Halide autoscheduler runs first in a child process: one that fails, or is still
searching after HALIDE_SEARCH_LIMIT_S, is reported in its cell instead of timed.
Part 2, every bundled example document: the default schedule (every pure Func inline),
the document's hand schedule and the analytic schedule, and the speed-up of each over
the default. Times are the least of N alternating runs (robust on a shared machine),
after a warm-up; every result is checked against the others before timing.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks import apps

ROOT = Path(__file__).resolve().parent.parent
HALIDE_SCHEDULERS = (  # (column label, Halide's name of the autoscheduler, its parameters)
    ("Mullapudi2016", "Mullapudi2016", {}),
    ("Adams2019", "Adams2019", {"beam_size": "1"}),
    ("Adams2019 default beam", "Adams2019", {}),  # beam 32: minutes of search; may pass the limit
    ("Li2018", "Li2018", {}),
)


def least_times(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """The least wall time (ms) of each callable, runs alternating between them. Each round
    runs them in a new order (shuffled, from a fixed seed), so that each follows many
    others: what ran just before matters (another compiler's thread pool still spinning,
    the caches full of another image), and a fixed cycle, even one started at a different
    place each round, would always put the same schedule after the same one."""
    for fn in fns.values():
        fn()
    order, shuffler = list(fns), random.Random(runs)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(runs):
        shuffler.shuffle(order)
        for name in order:
            start = time.perf_counter()
            fns[name]()
            best[name] = min(best[name], time.perf_counter() - start)
    return {k: v * 1000 for k, v in best.items()}


# ---------------------------------------------------------------------------- part 1


def app_cases(rng: np.random.Generator) -> list[tuple[str, Callable, dict, list[int], type, float]]:
    """(name, builder, inputs, output sizes, output type, tolerance of the comparison)."""
    return [
        ("blur", apps.build_blur, {"input": rng.integers(0, 4000, (4802, 6402)).astype(np.uint16)}, [6400, 4800],
         np.uint16, 1e-3),
        ("unsharp", apps.build_unsharp, {"input": rng.random((3, 1536, 2560), dtype=np.float32) * 0.9 + 0.1},
         [2560, 1536, 3], np.float32, 1e-3),
        ("harris", apps.build_harris, {"input": rng.random((3, 1030, 1926), dtype=np.float32)}, [1920, 1024],
         np.float32, 1e-3),
        ("bilateral grid", apps.build_bilateral_grid, {"input": rng.random((2560, 1536), dtype=np.float32),
         "r_sigma": 0.1}, [1536, 2560], np.float32, 1e-3),
        ("local Laplacian", apps.build_local_laplacian, {"input": rng.integers(0, 65536, (3, 2560, 1536))
         .astype(np.uint16), "alpha": 1.0, "beta": 1.0}, [1536, 2560, 3], np.uint16, 2.0),
        ("camera pipe", apps.build_camera_pipe, {"input": rng.integers(0, 1024, (1968, 2592)).astype(np.uint16)},
         [2560, 1920, 3], np.uint8, 1.0),
    ]  # fmt: skip


def _load_halide_plugins(hl) -> None:
    folder = Path(hl.__file__).parent / "lib64"
    for name in sorted({name for _, name, _ in HALIDE_SCHEDULERS}):
        found = glob.glob(str(folder / f"libautoschedule_{name.lower()}.*"))
        if not found:
            raise SystemExit(f"the halide package has no {name} autoscheduler in {folder}")
        hl.load_plugin(found[0])


def _set_estimates(m, out, handles: dict, inputs: dict, sizes: list[int]) -> None:
    """Estimates of the output, the input image and every scalar Param (its benchmark value)."""
    rng = (lambda lo, extent: m.Range(lo, extent)) if hasattr(m, "Range") else (lambda lo, extent: (lo, extent))
    out.set_estimates([rng(0, s) for s in sizes])
    handles["input"].set_estimates([rng(0, s) for s in inputs["input"].shape[::-1]])
    for name, value in inputs.items():
        if not isinstance(value, np.ndarray):
            handles[name].set_estimate(float(value))


def _pixelweave_impls(build, inputs, sizes, dtype, tune_s: float) -> tuple[dict, dict, dict]:
    from pixelweave.engine.autoschedule import auto_schedule
    from pixelweave.engine.runtime.buffer import aligned_empty

    import pixelweave as pw

    impls, search, outputs = {}, {}, {}
    for label in ("hand", "analytic", "tune") if tune_s > 0 else ("hand", "analytic"):
        out, handles = build(pw, schedule=(label != "analytic"))  # the tuner starts from the hand schedule too
        pipeline = pw.Pipeline(out)
        if label != "hand":
            _set_estimates(pw, out, handles, inputs, sizes)
            options = {"budget_s": tune_s, "inputs": inputs} if label == "tune" else {}
            chosen = auto_schedule(pipeline, method=label, **options)
            search[label] = chosen.search_seconds
            verdict = getattr(chosen.tuning, "verdict", None)
            if verdict is not None:  # why the tuner kept or replaced the hand schedule
                print(f"  tuner: {'replaced' if verdict.accepted else 'kept'} the hand schedule: {verdict.reason}")
                if not verdict.accepted:  # the same schedule, so the same code: timing it again measures noise
                    search["tune kept hand"] = 1.0
                    continue
        fn = pipeline.compile()
        buf = aligned_empty(sizes[::-1], dtype)
        fn(sizes, inputs, out=buf)
        outputs[f"pw {label}"] = buf
        impls[f"pw {label}"] = lambda fn=fn, buf=buf: fn(sizes, inputs, out=buf)
    return impls, search, outputs


HALIDE_SEARCH_LIMIT_S = 120.0  # a Halide autoscheduler still searching after this is reported, not waited for
HALIDE_TYPES = {np.uint8: ("UInt", 8), np.uint16: ("UInt", 16), np.float32: ("Float", 32)}


def _apply_halide_autoscheduler(hl, build, inputs: dict, sizes: list[int], label: str, threads: int) -> tuple:
    """Build the algorithm in Halide with estimates and apply one autoscheduler: (the
    pipeline, seconds the search took). The input arrays must outlive the pipeline (Halide
    buffers wrap their memory)."""
    _, name, params = next(s for s in HALIDE_SCHEDULERS if s[0] == label)
    out, handles = build(hl, schedule=False)
    for key, value in inputs.items():
        handles[key].set(hl.Buffer(value) if isinstance(value, np.ndarray) else value)
    _set_estimates(hl, out, handles, inputs, sizes)
    pipeline = hl.Pipeline(out)
    start = time.perf_counter()
    options = {"parallelism": str(threads), **params}
    pipeline.apply_autoscheduler(hl.get_jit_target_from_environment(), hl.AutoschedulerParams(name, options))
    return pipeline, time.perf_counter() - start


def _halide_search_probe(case: str, label: str, threads: int) -> None:
    """The child process that tries one Halide autoscheduler first (so that one which
    searches for too long can be stopped): prints its search time as JSON."""
    import json

    import halide as hl

    _load_halide_plugins(hl)
    _, build, inputs, sizes, _, _ = next(c for c in app_cases(np.random.default_rng(0)) if c[0] == case)
    _, seconds = _apply_halide_autoscheduler(hl, build, inputs, sizes, label, threads)
    print(json.dumps({"search": seconds}), flush=True)


def _halide_search_finishes(case: str, label: str, threads: int) -> str | None:
    """None if the autoscheduler finishes within the limit in a child process, else why not."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "benchmarks.autoschedule", "--halide-probe", f"{case}:{label}",
               "--threads", str(threads)]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=HALIDE_SEARCH_LIMIT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return f"search not done in {HALIDE_SEARCH_LIMIT_S:.0f} s"
    if done.returncode != 0 or '"search"' not in done.stdout:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return "failed: " + (lines[-1][:120] if lines else f"exit status {done.returncode}")
    return None


def _halide_impls(case: str, build, inputs, sizes, dtype, threads: int) -> tuple[dict, dict, dict, dict]:
    import halide as hl

    target = hl.get_jit_target_from_environment()
    impls, search, outputs, failed = {}, {}, {}, {}
    for label in ["hand", *(s[0] for s in HALIDE_SCHEDULERS)]:
        if label == "hand":
            out, handles = build(hl, schedule=True)
            for name, value in inputs.items():
                handles[name].set(hl.Buffer(value) if isinstance(value, np.ndarray) else value)
            pipeline = hl.Pipeline(out)
        else:
            why = _halide_search_finishes(case, label, threads)
            if why is None:
                try:
                    pipeline, search[label] = _apply_halide_autoscheduler(hl, build, inputs, sizes, label, threads)
                except Exception as e:
                    why = f"failed: {str(e).splitlines()[0][:120]}"
            if why is not None:
                print(f"  Halide {label}: {why}")
                failed[f"hl {label}"] = why
                continue
        kind, bits = HALIDE_TYPES[dtype]
        buf = hl.Buffer(getattr(hl, kind)(bits), sizes)
        try:
            pipeline.compile_jit(target)
            pipeline.realize(buf)
        except Exception as e:
            print(f"  Halide {label} schedule fails to run: {str(e).splitlines()[0][:160]}")
            failed[f"hl {label}"] = "fails to run"
            continue
        outputs[f"hl {label}"] = np.asarray(buf)
        impls[f"hl {label}"] = lambda pipeline=pipeline, buf=buf: pipeline.realize(buf)
    return impls, search, outputs, failed


def run_apps(runs: int, threads: int, tune_s: float, only: list[str] | None = None) -> list[dict]:
    import halide as hl

    _load_halide_plugins(hl)
    rows = []
    for name, build, inputs, sizes, dtype, tolerance in app_cases(np.random.default_rng(0)):
        if only and name not in only:
            continue
        pw_impls, pw_search, pw_out = _pixelweave_impls(build, inputs, sizes, dtype, tune_s)
        hl_impls, hl_search, hl_out, failed = _halide_impls(name, build, inputs, sizes, dtype, threads)
        # Each schedule against its own compiler's hand schedule; the two hand schedules
        # against each other (the algorithms are written once, but rounding may differ).
        hands = {"pw": pw_out["pw hand"], **({"hl": hl_out["hl hand"]} if "hl hand" in hl_out else {})}
        checks = [(label, out, hands[label[:2]]) for label, out in {**pw_out, **hl_out}.items()]
        checks += [("hl hand", hands["hl"], hands["pw"])] if "hl" in hands else []
        for label, out, reference in checks:
            got, want = np.asarray(out, np.float64), np.asarray(reference, np.float64)
            if not np.allclose(got, want, rtol=1e-3, atol=tolerance):
                worst = float(np.abs(got - want).max())
                print(f"  {name}: {label} differs from the {'Pixelweave ' if label == 'hl hand' else ''}hand "
                      f"schedule's result (by up to {worst:g})")
        times = least_times({**pw_impls, **hl_impls}, runs)
        rows.append({"name": name, "times": times, "failed": failed,
                     "search": {**pw_search, **{f"hl {k}": v for k, v in hl_search.items()}}})  # fmt: skip
        print(f"  {name}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in times.items()), flush=True)
        print("  " + apps_table(rows[-1:]).splitlines()[2], flush=True)  # its row, in case a later one fails
    return rows


def apps_table(rows: list[dict]) -> str:
    """The table of part 1. "analytic / Mullapudi2016" compares the schedulers through two
    code generators; "over own hand" divides each by its compiler's hand schedule first, so
    that a code generation gap common to every schedule (the camera pipe's) cancels."""
    columns = ["pw hand", "pw analytic", "pw tune", "hl hand", "hl Mullapudi2016", "hl Adams2019",
               "hl Adams2019 default beam", "hl Li2018"]
    head = ["pipeline", "Pixelweave hand", "Pixelweave analytic", "Pixelweave tuned", "Halide hand",
            "Mullapudi2016", "Adams2019 (beam 1)", "Adams2019 (default beam)", "Li2018", "analytic / Mullapudi2016",
            "same, each over its own hand", "tuned / Pixelweave hand",
            "search: analytic / Mullapudi / Adams beam 1 / Adams default / Li"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    ratios, relative = [], []
    for r in rows:
        t = r["times"]
        not_run = {"pw tune": "hand kept (same code)" if "tune kept hand" in r["search"] else "—"}
        cells = [f"{t[c]:.2f} ms" if c in t else r.get("failed", {}).get(c, not_run.get(c, "failed")) for c in columns]
        ratio = t["pw analytic"] / t["hl Mullapudi2016"] if "hl Mullapudi2016" in t else float("nan")
        over_hand = ratio * t["hl hand"] / t["pw hand"] if "hl hand" in t else float("nan")
        kept_hand = "tune kept hand" in r["search"]
        tuned = f"{t['pw tune'] / t['pw hand']:.2f}" if "pw tune" in t else ("1.00 (hand kept)" if kept_hand else "—")
        ratios.append(ratio)
        relative.append(over_hand)
        s = r["search"]
        search = " / ".join(f"{s[k]:.2f} s" if k in s else "—" for k in
                            ("analytic", "hl Mullapudi2016", "hl Adams2019", "hl Adams2019 default beam",
                             "hl Li2018"))
        tail = f" | {ratio:.2f} | {over_hand:.2f} | {tuned} | {search} |"
        lines.append(f"| {r['name']} | " + " | ".join(cells) + tail)
    for label, values in (("analytic / Mullapudi2016", ratios), ("the same, each over its own hand", relative)):
        finite = [x for x in values if x == x]
        if finite:
            lines.append(f"\ngeometric mean of {label}: {float(np.exp(np.mean(np.log(finite)))):.2f}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- part 2


EXAMPLE_TIMEOUT_S = 300


def measure_example(path: Path, runs: int) -> None:
    """Time one example (in a child process: an all-inline default can take very long to
    compile); prints one JSON line per result, the default last."""
    import json

    from pixelweave.nodes.autoschedule import schedule_document
    from pixelweave.nodes.pipeline_build import open_document

    built = open_document(path)
    images = built.sample_inputs()
    sizes = built.output_sizes(images, {})

    def runner() -> Callable[[], object]:
        compiled = built.runner.compile(sizes)
        outs = [fn(size, images) for _, size, fn in compiled]
        return lambda: [fn(size, images, out=o) for (_, size, fn), o in zip(compiled, outs, strict=True)]

    hand = runner()
    expected = hand()
    snapshots = {id(f): f.schedule_snapshot() for f in built.pipeline().funcs}
    start = time.perf_counter()
    scheduled = schedule_document(built, images)
    total = time.perf_counter() - start
    print(json.dumps({"search": scheduled.result.search_seconds, "with_check": total}), flush=True)
    analytic = runner()
    for a, b in zip(analytic(), expected, strict=True):
        if not np.allclose(a, b, rtol=1e-4, atol=1e-4):
            print(json.dumps({"warning": "the analytic schedule's result differs from the hand schedule's"}))
    times = least_times({"hand": hand, "analytic": analytic}, runs)
    print(json.dumps(times), flush=True)
    for f in built.pipeline().funcs:
        f.clear_schedule()
    default = runner()
    print(json.dumps(least_times({"default": default}, max(2, runs // 3))), flush=True)
    for f in built.pipeline().funcs:
        f.restore_schedule(snapshots[id(f)])


def run_examples(runs: int, timeout_s: float = EXAMPLE_TIMEOUT_S) -> list[dict]:
    import json
    import subprocess
    import sys

    rows = []
    for path in sorted((ROOT / "resources" / "examples").glob("*.json")):
        command = [sys.executable, "-m", "benchmarks.autoschedule", "--example", str(path), "--runs", str(runs)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
            lines = done.stdout.splitlines()
        except subprocess.TimeoutExpired as e:
            lines = (e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or "").splitlines()
        row: dict = {"name": path.stem, "times": {}}
        for line in lines:
            item = json.loads(line)
            if "search" in item:
                row.update(item)
            elif "warning" in item:
                print(f"  {path.stem}: {item['warning']}")
            else:
                row["times"].update(item)
        rows.append(row)
        print(f"  {path.stem}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in row["times"].items()), flush=True)
    return rows


def examples_table(rows: list[dict], timeout_s: float = EXAMPLE_TIMEOUT_S) -> str:
    lines = ["| example | default (inline) | hand | analytic | hand speed-up | analytic speed-up | "
             "analytic / hand speed-up | search (with the lowering check) |", "|" + " --- |" * 8]
    for r in rows:
        t = r["times"]

        def ms(key: str, t: dict = t) -> str:
            return f"{t[key]:.2f} ms" if key in t else f"not done in {timeout_s:g} s"

        if "default" in t and "hand" in t and "analytic" in t:
            hand_up, auto_up = t["default"] / t["hand"], t["default"] / t["analytic"]
            ups = f"{hand_up:.1f}x | {auto_up:.1f}x | {auto_up / hand_up:.2f}"
        elif "hand" in t and "analytic" in t:
            ups = f"— | — | (hand / analytic time: {t['hand'] / t['analytic']:.2f})"
        else:
            ups = "— | — | —"
        search = f"{r['search']:.2f} s ({r['with_check']:.1f} s)" if "search" in r else "—"
        lines.append(f"| {r['name']} | {ms('default')} | {ms('hand')} | {ms('analytic')} | {ups} | {search} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per implementation")
    parser.add_argument("--threads", type=int, default=2, help="threads for both compilers (default 2)")
    parser.add_argument("--tune", type=float, default=60.0, help="tuner budget per pipeline in seconds (0: no tuner)")
    parser.add_argument("--apps-only", action="store_true")
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument("--example-timeout", type=float, default=EXAMPLE_TIMEOUT_S,
                        help="seconds an example (its all-inline default included) may take (default 300)")
    parser.add_argument("--apps", help="comma-separated pipelines of part 1 to run (default: all)")
    parser.add_argument("--example", metavar="DOC", help=argparse.SUPPRESS)  # the child process of part 2
    parser.add_argument("--halide-probe", metavar="APP:SCHEDULER", help=argparse.SUPPRESS)  # a timed Halide search
    args = parser.parse_args()
    os.environ["PIXELWEAVE_NUM_THREADS"] = str(args.threads)
    os.environ["HL_NUM_THREADS"] = str(args.threads)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    if args.example:
        measure_example(Path(args.example), args.runs)
        return
    if args.halide_probe:
        case, label = args.halide_probe.rsplit(":", 1)
        _halide_search_probe(case, label, args.threads)
        return
    if not args.examples_only:
        only = args.apps.split(",") if args.apps else None
        print(apps_table(run_apps(args.runs, args.threads, args.tune, only)), flush=True)
    if not args.apps_only:
        print(examples_table(run_examples(args.runs, args.example_timeout), args.example_timeout))


if __name__ == "__main__":
    main()
