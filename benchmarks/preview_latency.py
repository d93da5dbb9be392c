"""Preview latency of the compositor path on every bundled example.

    python benchmarks/preview_latency.py [--scale 1] [EXAMPLE ...]

Each example runs in a fresh process with an empty compile cache directory, and reports:

- open (cold): document open -> picture of its first output, nothing cached anywhere;
- reopen (disk): the same in a new compositor with the in-memory caches cleared, so kernels
  come from the disk cache (what reopening a document in a new session costs);
- edit: a structural edit of one node (the schedule of the node with the most Funcs gets
  its first `vectorize` width changed, or a `vectorize x 4` added) -> picture, with the
  stage kernels compiled and run for it;
- undo: back to the document before the edit -> picture (kernels compiled, run).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"


def _edited_schedule(doc, node_id: str) -> dict:
    from pixelweave.nodes.pipeline_build import build_document

    node = doc.node(node_id)
    schedule = copy.deepcopy(node.schedule)
    for directives in schedule.values():
        for d in directives:
            if d and d[0] == "vectorize" and len(d) > 2:
                d[2] = 16 if d[2] != 16 else 8
                return schedule
    funcs = build_document(doc, check_lowering=False).funcs()[node_id]
    local = "out" if "out" in funcs else funcs[0]
    schedule.setdefault(local, []).append(["vectorize", "x", 4])
    return schedule


def one(name: str, scale: int) -> dict:
    from pixelweave.engine.runtime.jit import clear_memory_cache
    from pixelweave.nodes.document import read_document
    from pixelweave.nodes.editing import EditSession
    from pixelweave.nodes.pipeline_build import build_document
    from pixelweave.nodes.preview import PreviewComputer

    start = time.perf_counter()
    doc = read_document(EXAMPLES / f"{name}.json")
    built = build_document(doc, check_lowering=False)
    output = built.output_ids[0]
    computer = PreviewComputer()
    first = computer.compute(doc, output, scale=scale)
    opened = time.perf_counter() - start

    clear_memory_cache()
    start = time.perf_counter()
    again = PreviewComputer().compute(read_document(EXAMPLES / f"{name}.json"), output, scale=scale)
    reopened = time.perf_counter() - start

    session = EditSession(doc)
    biggest = max(built.graph.nodes, key=lambda n: len(built.graph.nodes[n].funcs))
    session.set_schedule(biggest, _edited_schedule(doc, biggest))
    start = time.perf_counter()
    edited = computer.compute(session.document, output, scale=scale)
    edit_seconds = time.perf_counter() - start
    session.undo()
    start = time.perf_counter()
    undone = computer.compute(session.document, output, scale=scale)
    undo_seconds = time.perf_counter() - start
    assert (undone.array == first.array).all() and (again.array == first.array).all()
    return {
        "example": name,
        "size": "x".join(map(str, first.array.shape)),
        "open_s": round(opened, 3),
        "open_compiles": first.compiles,
        "reopen_s": round(reopened, 3),
        "edited_node": biggest,
        "edit_s": round(edit_seconds, 3),
        "edit_compiles": edited.compiles,
        "edit_runs": edited.runs,
        "undo_s": round(undo_seconds, 3),
        "undo_compiles": undone.compiles,
        "undo_runs": undone.runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.scale)))
        return
    names = args.examples or sorted(p.stem for p in EXAMPLES.glob("*.json"))
    columns = ["example", "size", "open_s", "open_compiles", "reopen_s", "edited_node", "edit_s", "edit_compiles"]
    columns += ["edit_runs", "undo_s", "undo_compiles", "undo_runs"]
    print(" | ".join(columns))
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, PIXELWEAVE_CACHE_DIR=cache)
            command = [sys.executable, __file__, "--one", name, "--scale", str(args.scale)]
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        if done.returncode != 0:
            why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode
            print(f"{name} | failed: {why}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(" | ".join(str(row[c]) for c in columns), flush=True)


if __name__ == "__main__":
    main()
