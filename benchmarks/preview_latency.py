"""Preview latency of the compositor path on every bundled example.

    python benchmarks/preview_latency.py [--scale 1] [EXAMPLE ...]

Each example runs in a fresh process with an empty compile cache directory, and reports:

- open (cold): document open -> picture of its first output, nothing cached anywhere;
- reopen (disk): the same in a new compositor with the in-memory caches cleared, so kernels
  come from the disk cache (what reopening a document in a new session costs);
- schedule edit: the schedule of the node with the most Funcs gets its first `vectorize`
  width changed (or a `vectorize x 4` added) -> picture, with the stage kernels compiled
  and run for it (a schedule never changes the values, so cached images stand);
- param edit: that node's first numeric parameter changed (a float by 10 %, an integer by
  one) -> picture: the node's stages whose definitions changed and what lies downstream run;
- undo (both edits) -> picture.
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
    schedule_edit = _timed(computer, session.document, output, scale)
    param = _edited_param(session.document, biggest)
    param_edit = None
    if param is not None:
        session.set_param(biggest, *param)
        param_edit = _timed(computer, session.document, output, scale)
        session.undo()
    session.undo()
    undone = _timed(computer, session.document, output, scale)
    assert (undone[0].array == first.array).all() and (again.array == first.array).all()
    return {
        "example": name,
        "size": "x".join(map(str, first.array.shape)),
        "open_s": round(opened, 3),
        "open_compiles": first.compiles,
        "reopen_s": round(reopened, 3),
        "edited_node": biggest,
        "schedule_edit": _summary(schedule_edit),
        "param_edit": f"{param[0]}={param[1]:g}: {_summary(param_edit)}" if param and param_edit else "-",
        "undo": _summary(undone),
    }


def _edited_param(doc, node_id: str):
    for name, value in sorted(doc.node(node_id).params.items()):
        if isinstance(value, float):
            return name, round(value * 1.1, 6)
        if isinstance(value, int) and not isinstance(value, bool):
            return name, value - 1 if value > 1 else value + 1
    return None


def _timed(computer, doc, output: str, scale: int):
    start = time.perf_counter()
    result = computer.compute(doc, output, scale=scale)
    return result, time.perf_counter() - start


def _summary(timed) -> str:
    result, seconds = timed
    return f"{seconds:.3f} s ({result.compiles} compiled, {result.runs} run)"


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
    columns = ["example", "size", "open_s", "open_compiles", "reopen_s", "edited_node", "schedule_edit", "param_edit"]
    columns += ["undo"]
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
