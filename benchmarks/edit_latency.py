"""Edit latency of the bundled examples: how long a person waits for the loop nest and the
picture after opening a document and after each kind of edit.

    python benchmarks/edit_latency.py [--examples blur,camera_pipeline] [--repeats 3] [--warm-disk-cache]

For every resources/examples/*.json at its sample images' size, through the node layer as
the editor uses it (nodes.editing.EditSession, nodes.inspection.inspect_document,
nodes.preview.PreviewComputer for the picture of the document's first output):

- open -> loop nest: read the file, build, lower and print the loop nest (the editor shows it
  as soon as lowering has made it; "checked" adds the later passes, which may still refuse
  the schedule);
- open -> picture: read the file and compute the output's preview (its first compile);
- run-time edit -> picture: change one run-time parameter (EditSession.set_param), then the
  preview again ("preview" column), and the same edit taken by the compiled scheduled
  pipeline (`BuiltDocument.update` + run, "scheduled" column); `compiles` counts the
  compiles the preview path ran (LLVM objects, engine.runtime.jit.compile_statistics, or the
  preview's own count of kernels compiled, PreviewResult.compiles, where it has one);
- structural edit -> picture: change a parameter that changes the structure (a boundary
  kind, a choice, a radius) of one node, then the preview;
- undo -> picture: undo that edit, then the preview.

CPU columns (in parentheses) are the process's CPU time, all threads together: on a
shared machine they show the work done, which wall times under load do not. Times are the
median of --repeats runs of each edit; the run-time edit takes a new value each time (the
steps of a slider drag), so no run finds its picture in the preview's image cache. The
disk cache of compiled objects is a fresh temporary folder unless --warm-disk-cache, so
"open" includes the compiles a first opening pays. The targets of
the issue: a run-time edit shows its picture within 50 ms, or within twice the pipeline's
own run time ("run" column, the scheduled pipeline at level full) where that is longer.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.0f}" if seconds >= 0.1 else f"{seconds * 1e3:.1f}"


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _runtime_edit(doc: Any, count: int) -> tuple[str, str, list[Any]] | None:
    """(node id, parameter, `count` different valid values, none the document's) of the first
    run-time parameter, floats first: the steps of a slider drag, each a value not seen yet."""
    from pixelweave.nodes.node_type import node_type

    candidates = []
    for node in doc.nodes:
        cls = node_type(node.type)
        for p in cls.runtime_params():
            value = node.params[p.name]
            steps = [(k + 1) / count for k in range(count)]  # fractions of the way to the far value
            if p.kind == "float":
                lo = p.minimum if p.minimum is not None else value - 1.0
                hi = p.maximum if p.maximum is not None else value + 1.0
                far = value + 0.25 * (hi - value) if value < hi else value - 0.25 * (value - lo)
                alternatives = [value + t * (far - value) for t in steps]
            elif p.kind == "colour":
                alternatives = [[v + t * (min(1.0, v * 0.8 + 0.1) - v) for v in value] for t in steps]
            elif p.kind == "matrix":
                alternatives = [[[w * (1 - 0.1 * t) for w in row] for row in value] for t in steps]
            elif p.kind == "curve":
                alternatives = [[[x, y + t * (min(1.0, y * 0.9 + 0.05) - y)] for x, y in value] for t in steps]
            else:
                continue
            values = {k: v for k, v in node.params.items()}
            try:
                for alternative in alternatives:
                    if alternative == value:
                        raise ValueError("a step that changes nothing")
                    values[p.name] = alternative
                    cls.check_params(values)
            except Exception:  # a value the node refuses: try the next parameter
                continue
            candidates.append((0 if p.kind == "float" else 1, node.id, p.name, alternatives))
    if not candidates:
        return None
    _, node_id, name, values = min(candidates, key=lambda c: c[0])
    return node_id, name, values


def _structural_edits(doc: Any) -> list[tuple[str, str, Any]]:
    """Structural edits to try, in order: a boundary kind, another choice, an int one larger."""
    from pixelweave.nodes.node_type import node_type

    edits = []
    for node in doc.nodes:
        if node.type in ("image_input", "output"):
            continue
        for p in node_type(node.type).params:
            if p.runtime:
                continue
            value = node.params[p.name]
            if p.kind == "choice":
                others = [c for c in p.choices if c != value and c != "none"]
                if others:
                    rank = 0 if p.name == "boundary" else 1
                    edits.append((rank, node.id, p.name, others[0]))
            elif p.kind == "int" and (p.maximum is None or value + 1 <= p.maximum):
                edits.append((2, node.id, p.name, value + 1))
    return [(n, p, v) for _, n, p, v in sorted(edits, key=lambda e: e[0])]


def measure(path: Path, repeats: int) -> dict[str, Any]:
    from pixelweave.engine.runtime.jit import compile_statistics
    from pixelweave.nodes.document import read_document
    from pixelweave.nodes.editing import EditSession
    from pixelweave.nodes.inspection import inspect_document
    from pixelweave.nodes.pipeline_build import build_document
    from pixelweave.nodes.preview import PreviewComputer

    row: dict[str, Any] = {"example": path.stem}
    shown: list[tuple[float, float]] = []
    start, cpu = time.perf_counter(), time.process_time()
    row["open_checked"], inspection = _timed(
        lambda: inspect_document(
            read_document(path),
            statement=False,
            on_loop_nest=lambda _: shown.append((time.perf_counter(), time.process_time())),
        )
    )
    row["open_loop_nest"] = shown[0][0] - start if shown else row["open_checked"]
    row["open_loop_nest_cpu"] = shown[0][1] - cpu if shown else time.process_time() - cpu
    if not inspection.ok:
        raise RuntimeError(f"{path.name}: {inspection.problems}")
    previews = PreviewComputer()
    session = EditSession(read_document(path))
    doc = session.document
    output = next(n.id for n in doc.nodes if n.type == "output")

    def picture() -> Any:
        return previews.compute(session.document, output)

    row["open_picture"], first = _timed(lambda: (session.load(read_document(path)), picture())[1])
    row["size"] = "x".join(map(str, first.array.shape[::-1][:2]))

    # the scheduled pipeline, for its run time and the run-time edit through BuiltDocument.update
    built = build_document(session.document)
    images = built.sample_inputs()
    built.runner.run(images)
    runs = [_timed(lambda: built.runner.run(images))[0] for _ in range(max(3, repeats))]
    row["run"] = min(runs)

    edit = _runtime_edit(session.document, repeats)
    row["param"] = None
    if edit is not None:
        node_id, name, values = edit
        row["param"] = f"{node_id}.{name}"
        preview_times, preview_cpu, scheduled_times, compiles = [], [], [], 0
        for k in range(repeats):
            value = values[k]
            before = compile_statistics()["objects_compiled"]
            cpu = time.process_time()
            seconds, (_, shown) = _timed(lambda v=value: (session.set_param(node_id, name, v, merge=True), picture()))
            # LLVM compiles, or the preview's own count of kernels compiled where it keeps one
            compiles += max(compile_statistics()["objects_compiled"] - before, getattr(shown, "compiles", 0))
            preview_times.append(seconds)
            preview_cpu.append(time.process_time() - cpu)
            seconds, taken = _timed(lambda: (built.update(session.document), built.runner.run(images))[0])
            if not taken:
                raise RuntimeError(f"{path.name}: the edit of {node_id}.{name} was not taken as a run-time edit")
            scheduled_times.append(seconds)
        session.end_merge()
        row["edit_preview"] = statistics.median(preview_times)
        row["edit_preview_cpu"] = statistics.median(preview_cpu)
        row["edit_scheduled"] = statistics.median(scheduled_times)
        row["edit_compiles"] = compiles

    row["structural"] = None
    for node_id, name, value in _structural_edits(session.document):
        try:
            cpu = time.process_time()
            seconds, _ = _timed(lambda n=node_id, p=name, v=value: (session.set_param(n, p, v), picture()))
            row["structural_cpu"] = time.process_time() - cpu
        except Exception:  # an edit this document cannot take: undo it, try another
            if session.can_undo() and session.undo_label() == f"Change {node_id}.{name}":
                session.undo()
            continue
        row["structural"] = f"{node_id}.{name}={value}"
        row["structural_picture"] = seconds
        row["undo_picture"], _ = _timed(lambda: (session.undo(), picture()))
        break
    return row


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| example | size | open → loop nest (CPU) | checked | open → picture | run-time edit | "
        "→ picture (preview, CPU) | → picture (scheduled) | compiles | run | target | structural edit | "
        "→ picture (CPU) | undo → picture |"
    )
    lines = [head, "|" + " --- |" * head.count(" | ") + " --- |"]
    for r in rows:
        target = max(0.05, 2 * r["run"])
        ok = ""
        if r.get("param"):
            ok = "yes" if r["edit_preview"] <= target else "no"
        lines.append(
            f"| {r['example']} | {r['size']} | {_ms(r['open_loop_nest'])} ({_ms(r['open_loop_nest_cpu'])}) | "
            f"{_ms(r['open_checked'])} | "
            f"{_ms(r['open_picture'])} | "
            f"{r.get('param') or 'none'} | {_ms(r.get('edit_preview'))} ({_ms(r.get('edit_preview_cpu'))}) | "
            f"{_ms(r.get('edit_scheduled'))} | "
            f"{r.get('edit_compiles', '—')} | {_ms(r['run'])} | {_ms(target)} {ok} | {r.get('structural') or 'none'} | "
            f"{_ms(r.get('structural_picture'))} ({_ms(r.get('structural_cpu'))}) | {_ms(r.get('undo_picture'))} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default="", help="comma-separated example names (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="edits timed per example (median reported)")
    parser.add_argument("--warm-disk-cache", action="store_true", help="keep the user's disk cache of objects")
    args = parser.parse_args()
    if not args.warm_disk_cache:
        os.environ["PIXELWEAVE_CACHE_DIR"] = tempfile.mkdtemp(prefix="pw-edit-latency-")
    paths = sorted((ROOT / "resources" / "examples").glob("*.json"))
    if args.examples:
        wanted = set(args.examples.split(","))
        paths = [p for p in paths if p.stem in wanted]
    rows = []
    for path in paths:
        rows.append(measure(path, args.repeats))
        print(f"measured {path.stem}", file=sys.stderr, flush=True)
    print("Times in ms. target: the larger of 50 ms and twice the run time; 'yes' if the preview path meets it.")
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
