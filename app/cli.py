"""The `pixelweave` command line: run, inspect, benchmark, export and batch-process pipeline
documents without the editor (never imports Qt).

Errors print one line `pixelweave: error: ...` on stderr (a document's problems follow it,
one per line) and exit with 2 for a wrong command line, 1 for a failure; `--debug` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn

from pixelweave.app.progress import progress_bar

PROG = "pixelweave"
COMMANDS = ("run", "inspect", "bench", "export", "batch")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")


class UsageError(Exception):
    """The command line asks for something impossible (exit status 2)."""


class Failure(Exception):
    """The command could not do its work (exit status 1)."""


class _ParseExit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and returns instead of exiting."""

    def error(self, message: str) -> NoReturn:
        print(f"{PROG}: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise _ParseExit(2)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            print(message, file=sys.stderr, end="")
        raise _ParseExit(status)


# ---------------------------------------------------------------------------- arguments


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Image-processing pipelines as node graphs, compiled with schedules to fast native code.",
        epilog=(
            "Run `pixelweave COMMAND --help` for the options of a command. Without a command, "
            "`pixelweave [--nodes FILE.py] [DOC.json]` opens the desktop editor, and "
            "`pixelweave --screenshot PNG DOC.json` saves a picture of it."
        ),
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    common.add_argument(
        "--nodes",
        action="append",
        default=[],
        metavar="FILE.py",
        help="load the @pixelweave.generator classes of a Python file as node types (runs its code); repeatable",
    )
    inputs = _Parser(add_help=False)
    inputs.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="image file for input node NAME (default: the document's sample image); repeatable",
    )
    inputs.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value of a run-time parameter (default: the document's): NODE.PARAM=VALUE for a node's parameter "
        "(a JSON list for a colour, curve or matrix), or the Param's NAME as `inspect` lists it; repeatable",
    )
    target = _Parser(add_help=False)
    target.add_argument("--target", default="host", help="code generation target (default: host)")

    run = commands.add_parser(
        "run",
        parents=[common, inputs, target],
        help="run a document on images and write its outputs",
        description="Run a pipeline document and write its outputs. With one output node, --output PATH names "
        "the file (or an existing directory, which gets ID.png). With several, --output DIR writes DIR/ID.png "
        "for each output node ID, or --output ID=PATH (repeatable) writes only the outputs named.",
    )
    run.add_argument("doc", metavar="DOC", help="the pipeline document (.json)")
    run.add_argument("--output", "-o", action="append", required=True, metavar="PATH|ID=PATH", help="where to write")
    run.set_defaults(handler=cmd_run)

    inspect = commands.add_parser(
        "inspect",
        parents=[common, target],
        help="print a document's inputs, outputs, Funcs and loop nest",
        description="Print the document's inputs, parameters, outputs and schedulable Funcs, then the loop nest "
        "its schedules produce (or, with --stmt, the full lowered statement).",
    )
    inspect.add_argument("doc", metavar="DOC", help="the pipeline document (.json)")
    inspect.add_argument("--stmt", action="store_true", help="print the lowered statement instead of the loop nest")
    inspect.set_defaults(handler=cmd_inspect)

    bench = commands.add_parser(
        "bench",
        parents=[common, inputs, target],
        help="time a document on its sample inputs",
        description="Compile once (the compile time is reported apart), then run N times on the sample inputs "
        "and print the median, minimum and maximum time and the output megapixels per second.",
    )
    bench.add_argument("doc", metavar="DOC", help="the pipeline document (.json)")
    bench.add_argument("--runs", type=_positive, default=10, metavar="N", help="timed runs (default 10)")
    bench.add_argument("--profile", action="store_true", help="also print the time spent in each node")
    bench.set_defaults(handler=cmd_bench)

    schedule = commands.add_parser(
        "schedule",
        parents=[common, inputs],
        help="choose a schedule for a document automatically",
        description="Choose a schedule for every Func of the document automatically (reuse analysis and a cost "
        "model, for the sizes of its inputs; with --tune, then a search timing candidates on the inputs), print "
        "it as Halide-style text per node with the time before and after, and with --write save it into the "
        "document.",
    )
    schedule.add_argument(
        "--tune", type=_positive_seconds, metavar="SECONDS", help="search this long for a faster schedule"
    )
    schedule.add_argument("--seed", type=int, default=0, help="random seed of the search (default 0)")
    schedule.add_argument("doc", metavar="DOC", help="the pipeline document (.json)")
    schedule.add_argument("--write", action="store_true", help="save the schedule into the document")
    schedule.add_argument(
        "--runs", type=_positive, default=5, metavar="N", help="timed runs before and after (default 5)"
    )
    schedule.set_defaults(handler=cmd_schedule)

    export = commands.add_parser(
        "export",
        parents=[common, target],
        help="write a native library (NAME.o, libNAME.so, NAME.h) and a README",
        description="Compile the document to a self-contained native library callable from C, C++ or Python "
        "(ctypes), and write DIR/README.md explaining its arguments. Targets: host, x86-64, x86-64-v2, x86-64-v3, "
        "x86-64-v4.",
    )
    export.add_argument(
        "doc", metavar="DOC", help="the pipeline document (.json), or a Python file of @pixelweave.generator classes"
    )
    export.add_argument(
        "--generator", metavar="NAME", help="for a .py file: the generator to export (NAME.a and NAME.h)"
    )
    export.add_argument(
        "--generator-param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="for a .py file: a GeneratorParam value; repeatable",
    )
    export.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    export.add_argument("--name", metavar="NAME", help="C name of the entry point (default: from the document)")
    export.add_argument(
        "--python", action="store_true", help="also write NAME.py, a module calling the library on NumPy arrays"
    )
    export.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="documented default of a run-time parameter argument (otherwise the document's value), named as for "
        "run; repeatable",
    )
    export.set_defaults(handler=cmd_export)

    batch = commands.add_parser(
        "batch",
        parents=[common, inputs, target],
        help="run a document over many files",
        description="Compile once and run over every file matching a glob pattern, writing DIR/STEM.png "
        "(DIR/STEM_ID.png for each output node ID when there are several). Exactly one --input holds a pattern "
        "(*, ? or [...], ** for sub-directories); other inputs use their sample images or --input NAME=PATH. "
        "Unreadable files are skipped and listed; the exit status is then 1. With --dask, the files are spread "
        "over a Dask distributed cluster: the document is compiled once here and its object code shipped to the "
        "workers, which need Pixelweave installed but no shared file system.",
    )
    batch.add_argument("doc", metavar="DOC", help="the pipeline document (.json)")
    batch.add_argument("--output-dir", required=True, metavar="DIR", help="directory for the results")
    batch.add_argument(
        "--jobs", "-j", type=_positive, metavar="N",
        help="files processed at once (default 1); with --dask local, the worker processes (default: the cores)",
    )  # fmt: skip
    batch.add_argument(
        "--dask", metavar="ADDRESS",
        help="run on the Dask scheduler at ADDRESS (tcp://host:8786), or `local` for a cluster on this machine",
    )  # fmt: skip
    batch.add_argument(
        "--retries", type=_non_negative, default=2, metavar="N",
        help="with --dask, times a failed task is tried again (default 2)",
    )  # fmt: skip
    batch.set_defaults(handler=cmd_batch)

    lift = commands.add_parser(
        "lift",
        parents=[common],
        help="lift a C function into Pixelweave stages and verify it",
        description="Lift a C function (loops over pointer rows, see docs/lifting.md) into engine stages, then "
        "verify it: always by differential testing (the original compiled with cc -O2 against the lifted "
        "pipeline, on random sizes, strides and values, bit-exact), and for straight-line integer kernels by a "
        "z3 bit-vector proof. Prints the stages and what was verified and how; -o writes the lifted function as "
        "a pipeline document (one lifted_stage node per stage, the verification on each) that `pixelweave run` "
        "and the editor open; --report writes the stages and verification as JSON. "
        "A Python prototype (.py, explicit loops over NumPy arrays) is lifted with the types of the example "
        "arguments its examples() function returns, and checked against CPython on them. "
        "The exit status is 1 when the function cannot be lifted or a verification fails.",
    )
    lift.add_argument("file", metavar="FILE", help="the C file (.c) or Python prototype (.py)")
    lift.add_argument("--function", required=True, metavar="NAME", help="the function to lift")
    lift.add_argument("-o", "--output", metavar="DOC.json", help="write the lifted function as a pipeline document")
    lift.add_argument("--report", metavar="OUT.json", help="write the lifted stages and verification as JSON")
    lift.add_argument("--trials", type=_positive, default=8, metavar="N", help="random cases to compare (default 8)")
    lift.add_argument("--approximate", action="store_true", help="for a Python prototype: compute float64 as float32")
    lift.set_defaults(handler=cmd_lift)
    return parser


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got {n}")
    return n


def _non_negative(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a whole number, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"needs a whole number (0 or more), got {n}")
    return n


EDITOR_OPTIONS = ("--screenshot", "--size")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _wants_editor(argv: list[str]) -> bool:
    """No arguments, a document path, or an editor option: open the editor, not a command."""
    if not argv:
        return True
    first = argv[0]
    if first.startswith("--screenshot") or first.startswith("--size") or first.startswith("--nodes"):
        return True
    return not first.startswith("-") and first not in COMMANDS and first.endswith(".json")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `pixelweave` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = make_parser()
    if _wants_editor(argv):
        from pixelweave.app.editor.launch import run_editor  # the only way from here to Qt, and only when asked

        return run_editor(argv)
    try:
        args = parser.parse_args(argv)
    except _ParseExit as e:
        return e.code
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 0
    debug = getattr(args, "debug", False)
    from pixelweave.engine.errors import PixelweaveError

    try:
        _load_node_files(getattr(args, "nodes", []))
        return args.handler(args) or 0
    except BrokenPipeError:  # the reader went away (`pixelweave inspect DOC | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as e:
        return _report(e, 2, debug)
    except (Failure, PixelweaveError, OSError) as e:
        return _report(e, 1, debug)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _load_node_files(paths: list[str]) -> None:
    """The --nodes files: their generators become node types before the document is read."""
    if not paths:
        return
    from pixelweave.nodes.generator_nodes import load_generator_nodes

    for path in paths:
        load_generator_nodes(path)


def _report(error: Exception, status: int, debug: bool) -> int:
    if debug:
        traceback.print_exception(error)
    text = str(error) if not isinstance(error, OSError) or not error.strerror else _os_message(error)
    print(f"{PROG}: error: {text}", file=sys.stderr)
    return status


def _os_message(e: OSError) -> str:
    return f"{e.strerror}: {e.filename}" if e.filename else str(e.strerror)


# ---------------------------------------------------------------------------- helpers


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """NAME=VALUE options as a dict; UsageError on a malformed or repeated one."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{option} needs NAME=VALUE, got {item!r}")
        if name in out:
            raise UsageError(f"{option} {name} is given twice")
        out[name] = value
    return out


def _open(path: str, target: str = "host") -> Any:
    """The document built with the schedules for target: its nodes' OpenCL schedules for
    `--target opencl`, their CPU schedules for any other target."""
    from pixelweave.nodes.pipeline_build import open_document

    return open_document(path, target)


def _inputs(built: Any, items: list[str]) -> dict[str, str]:
    given = _pairs(items, "--input")
    for name in given:
        if name not in built.input_ids:
            known = ", ".join(built.input_ids) or "none"
            raise UsageError(f"the document has no input `{name}` (its inputs: {known})")
    return given


def _node_param(built: Any, name: str, text: str) -> dict[str, int | float]:
    """--param NODE.PARAM=VALUE: the Param values of a node's run-time parameter, checked as
    the document checks it (range, kind, and together with the node's other values)."""
    from pixelweave.nodes.errors import ParameterError
    from pixelweave.nodes.node_type import node_type
    from pixelweave.nodes.runtime_params import node_runtime_values

    node_id, _, param = name.partition(".")
    doc = built.document
    if not doc.has_node(node_id):
        raise UsageError(f"--param {name}: the document has no node `{node_id}`")
    node = doc.node(node_id)
    cls = node_type(node.type)
    declared = {p.name: p for p in cls.params}
    if param not in declared:
        known = ", ".join(p.name for p in cls.runtime_params()) or "none"
        raise UsageError(f"--param {name}: a {cls.type_name} node has no parameter `{param}` (run-time ones: {known})")
    if not declared[param].runtime:
        raise UsageError(
            f"--param {name}: `{param}` changes the structure of the pipeline, so it is not a run-time parameter; "
            "change it in the document"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise UsageError(f"--param {name}: {text!r} is not a number or a JSON list") from None
    try:
        values = cls.check_params({**node.params, param: value})
    except ParameterError as e:
        raise UsageError(f"--param {name}: {e.detail}") from None
    base = cls.runtime_param_name(node_id, param)
    return {k: v for k, v in node_runtime_values(cls, node_id, values).items() if k == base or k.startswith(base + "_")}


def _params(built: Any, items: list[str]) -> dict[str, int | float]:
    """--param values checked against the parameters' types and ranges."""
    values: dict[str, int | float] = {}
    for name, text in _pairs(items, "--param").items():
        if "." in name:
            values.update(_node_param(built, name, text))
            continue
        p = built.graph.scalar_params.get(name)
        if p is None:
            known = ", ".join(built.param_ids) or "none"
            raise UsageError(f"the document has no parameter `{name}` (its parameters: {known})")
        is_float = p.type().is_float()
        try:
            value: int | float = float(text) if is_float else int(text)
        except ValueError:
            raise UsageError(f"--param {name}: {text!r} is not {'a number' if is_float else 'an integer'}") from None
        lo, hi = p.range
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            shown = f"[{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}]"
            raise UsageError(f"--param {name}={text} is outside its range {shown}")
        values[name] = value
    return values


def _same_file(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _refuse_overwrite(outputs: list[Path], protected: list[Path]) -> None:
    for out in outputs:
        for p in protected:
            if _same_file(out, p):
                raise Failure(f"refusing to overwrite {p}: it is an input of this run")


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise UsageError(f"output {str(path)!r} needs an image file extension ({', '.join(IMAGE_SUFFIXES)})")


def _write(path: Path, array: Any) -> None:
    from pixelweave.nodes.images import write_image

    try:
        write_image(path, array)
    except OSError:
        raise
    except Exception as e:  # imageio raises many kinds (unsupported format for the data, ...)
        raise Failure(f"cannot write {path}: {e}") from e


def _describe_array(a: Any) -> str:
    shape = "x".join(str(n) for n in reversed(a.shape[-2:])) if a.ndim >= 2 else str(a.shape)
    kind = {2: "gray", 3: "colour"}.get(a.ndim, f"{a.ndim}-d")
    return f"{shape} {kind} {a.dtype}"


# ---------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    built = _open(args.doc, args.target)
    given = _inputs(built, args.input)
    params = _params(built, args.param)
    plan = _output_plan(built, args.output)
    sources = {i: built.input_path(i, given) for i in built.input_ids}
    _refuse_overwrite(list(plan.values()), [*sources.values(), Path(args.doc)])
    images = {i: built.read_input(i, path) for i, path in sources.items()}
    results = built.run(images, params, target=args.target)
    for node_id, path in plan.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, results[node_id])
        print(f"{node_id}: wrote {path} ({_describe_array(results[node_id])})")
    return 0


def _output_plan(built: Any, specs: list[str]) -> dict[str, Path]:
    """Output node id -> file, from the --output options (see `pixelweave run --help`)."""
    outs = built.output_ids
    named: dict[str, Path] = {}
    plain: list[Path] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if sep and name.isidentifier() and path:
            if name not in outs:
                raise UsageError(
                    f"--output {spec}: the document has no output `{name}` (its outputs: {', '.join(outs)})"
                )
            if name in named:
                raise UsageError(f"--output {name} is given twice")
            named[name] = Path(path)
        else:
            plain.append(Path(spec))
    if plain and named:
        raise UsageError("give either --output PATH or --output ID=PATH options, not both")
    if len(plain) > 1:
        raise UsageError("--output PATH is given more than once; use --output ID=PATH for several outputs")
    if named:
        for path in named.values():
            _check_suffix(path)
        return named
    target = plain[0]
    if len(outs) == 1 and not target.is_dir():
        _check_suffix(target)
        return {outs[0]: target}
    if target.exists() and not target.is_dir():
        raise UsageError(
            f"the document has {len(outs)} outputs ({', '.join(outs)}): --output must be a directory, "
            "or give --output ID=PATH for each"
        )
    return {o: target / f"{o}.png" for o in outs}


# ---------------------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    built = _open(args.doc, args.target)
    doc = built.document
    print(f"# {doc.name} ({args.doc})")
    for node_id in built.input_ids:
        layout, element = built.input_format(node_id)
        sample = doc.node(node_id).params.get("sample") or "none"
        print(f"# input {node_id}: {layout} {element}, sample {sample}")
    for node_id in built.param_ids:
        p = built.graph.scalar_params[node_id]
        lo, hi = p.range
        bounds = "" if lo is None and hi is None else f", range [{lo}, {hi}]"
        print(f"# parameter {node_id}: {p.type()} = {p.get()}{bounds}")
    for node_id in built.output_ids:
        print(f"# output {node_id}")
    for node_id, locals_ in built.funcs().items():
        print(f"# Funcs of {node_id}: {', '.join(locals_)}")
    print(built.lowered_stmt(args.target) if args.stmt else built.loop_nest(args.target), end="")
    return 0


# ---------------------------------------------------------------------------- bench


def cmd_bench(args: argparse.Namespace) -> int:
    from pixelweave.nodes.benchmark import run_benchmark

    if args.profile and args.target == "opencl":
        raise UsageError("--profile times CPU code only; it cannot be used with --target opencl")
    built = _open(args.doc, args.target)
    given = _inputs(built, args.input)
    params = _params(built, args.param)
    images = built.sample_inputs(given)
    with progress_bar(args.runs, "bench", unit="run") as bar:

        def progress(done: int, total: int, text: str) -> None:
            bar.set_postfix_str(text, refresh=False)
            bar.update(done - bar.n)

        result = run_benchmark(
            built, images, params, runs=args.runs, target=args.target, profile=args.profile, progress=progress
        )
    for line in result.report_lines():
        print(line)
    return 0


# ---------------------------------------------------------------------------- schedule


def cmd_schedule(args: argparse.Namespace) -> int:
    from pixelweave.nodes.autoschedule import schedule_document, write_schedules
    from pixelweave.nodes.benchmark import run_benchmark

    built = _open(args.doc)
    params = _params(built, args.param)
    images = built.sample_inputs(_inputs(built, args.input))
    before = run_benchmark(built, images, params, runs=args.runs, profile=False).median
    if args.tune:

        def progress(best: float, tried: int) -> None:
            print(f"\r# tuning: {tried} candidates tried, best {best * 1e3:.2f} ms", end="", file=sys.stderr)

        scheduled = schedule_document(
            built, images, params, "tune", budget_s=args.tune, seed=args.seed, progress=progress
        )
        print(file=sys.stderr)
    else:
        scheduled = schedule_document(built, images, params)
    after = run_benchmark(built, images, params, runs=args.runs, profile=False).median
    print(scheduled.text(), end="")
    print(
        f"# {scheduled.result.method} schedule chosen in {scheduled.result.search_seconds:.2f} s; "
        f"time {before * 1e3:.2f} ms with the document's schedule, {after * 1e3:.2f} ms with this one "
        f"({before / after:.2f}x)"
    )
    if args.write:
        write_schedules(built, scheduled.schedules)
        path = built.document.save(args.doc)
        print(f"# written into {path}")
    return 0


# ---------------------------------------------------------------------------- export


def cmd_export(args: argparse.Namespace) -> int:
    if args.doc.endswith(".py"):
        return _export_generator(args)
    from pixelweave.app.library_readme import write_library_readme
    from pixelweave.nodes.document import read_document
    from pixelweave.nodes.export import (
        build_for_export,
        default_export_name,
        export_library,
        export_name_problem,
        export_python_module,
        note_left_out,
    )
    from pixelweave.nodes.output_part import left_out_text

    built, left_out = build_for_export(read_document(args.doc), args.target)
    for param_name, value in _params(built, args.param).items():
        built.graph.scalar_params[param_name].set(value)  # the exported arguments' defaults
    name = args.name or default_export_name(built.document.name or Path(args.doc).stem)
    problem = export_name_problem(name, "python" if args.python else "library")
    if problem:
        raise UsageError(f"--name: {problem}")
    directory = Path(args.out)
    export = export_python_module if args.python else export_library
    with progress_bar(2, "export", unit="step") as bar:
        bar.set_postfix_str("compiling and linking")
        result = note_left_out(export(built, directory, name, args.target), left_out)
        bar.update(1)
        write_library_readme(built, result)
        bar.update(1)
    if left_out:
        print(f"pixelweave export: {left_out_text(left_out)}", file=sys.stderr)
    for path in result.files:
        print(f"wrote {path}")
    return 0


def _export_generator(args: argparse.Namespace) -> int:
    """`export FILE.py --generator NAME`: a generator's static library and header."""
    from pixelweave.engine.generator import export_generator, load_generators

    generators = load_generators(args.doc)
    if args.generator is None and len(generators) != 1:
        raise UsageError(f"--generator: {args.doc} defines {', '.join(sorted(generators))}; name one")
    chosen = args.generator or next(iter(generators))
    if chosen not in generators:
        raise UsageError(
            f"--generator: no generator `{chosen}` in {args.doc} (it defines {', '.join(sorted(generators))})"
        )
    params = {}
    for item in args.generator_param:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--generator-param needs NAME=VALUE, got {item!r}")
        params[key] = value
    for path in export_generator(generators[chosen], args.out, args.name or "", params, args.target):
        print(f"wrote {path}")
    return 0


# ---------------------------------------------------------------------------- batch


def _batch_input(given: dict[str, str]) -> tuple[str, str]:
    """(input name, pattern) of the batched input: the only one, or the one with a wildcard."""
    if not given:
        raise UsageError("batch needs --input NAME=GLOB for the input to vary")
    if len(given) == 1:
        return next(iter(given.items()))
    patterns = [(n, v) for n, v in given.items() if glob.has_magic(v)]
    if len(patterns) != 1:
        raise UsageError("give exactly one --input NAME=GLOB with a wildcard (*, ?, [...]); other --input are fixed")
    return patterns[0]


def cmd_lift(args: argparse.Namespace) -> int:
    from pixelweave.nodes.lift.errors import LiftError
    from pixelweave.nodes.lift.report import lift_report, python_report, save_report
    from pixelweave.nodes.lift.to_document import c_document, python_document

    if not args.file.endswith((".c", ".py")):
        raise UsageError(f"lift takes a C file (.c) or a Python prototype (.py), got {args.file}")
    prototype = args.file.endswith(".py")
    try:
        if prototype:
            # a document's inputs and parameters are at most f32: it computes float64 as float32
            approximate = args.approximate or bool(args.output)
            report = python_report(args.file, args.function, approximate=approximate)
        else:
            report = lift_report(args.file, args.function, trials=args.trials)
    except LiftError as e:
        raise Failure(str(e)) from e
    lifted = None
    if args.output:
        try:
            lifted = python_document(report) if prototype else c_document(report)
        except ValueError as e:
            print("\n".join(report.lines()))
            raise Failure(f"cannot write `{args.function}` as a pipeline document: {e}") from e
    for line in lifted.lines if lifted is not None else report.lines():
        print(line)
    if lifted is not None:
        lifted.document.save(args.output)
        print(f"wrote {args.output}: a pipeline document with {len(lifted.document.nodes)} nodes")
    if args.report:
        save_report(report, args.report)
        print(f"wrote {args.report}")
    return 0 if report.verified else 1


def cmd_batch(args: argparse.Namespace) -> int:
    built = _open(args.doc, args.target)
    given = _inputs(built, args.input)
    params = _params(built, args.param)
    name, pattern = _batch_input(given)
    files = sorted(Path(p) for p in glob.glob(os.path.expanduser(pattern), recursive=True) if Path(p).is_file())
    if not files:
        raise Failure(f"no file matches {pattern!r}")
    out_dir = Path(args.output_dir)
    inside = [f for f in files if _same_file(f.parent, out_dir)]
    if inside:
        raise Failure(f"refusing to write into {out_dir}: it holds input files (such as {inside[0].name})")
    fixed = {i: built.read_input(i, built.input_path(i, given)) for i in built.input_ids if i != name}
    plan = {f: _batch_outputs(built, f, out_dir) for f in files}
    _check_unique(plan)
    _refuse_overwrite([p for paths in plan.values() for p in paths.values()], [*files, Path(args.doc)])
    out_dir.mkdir(parents=True, exist_ok=True)
    with progress_bar(len(files), "batch", unit="file") as bar:

        def advance(label: str) -> None:
            bar.set_postfix_str(label, refresh=False)
            bar.update(1)

        if args.dask:
            skipped, where = _batch_on_dask(args, built, name, fixed, params, files, plan, advance)
        else:
            skipped, where = _batch_here(args, built, name, fixed, params, files, plan, advance), ""
    done = len(files) - len(skipped)
    print(f"processed {done} of {len(files)} files into {out_dir}{where}")
    for f, why in sorted(skipped):
        print(f"{PROG}: skipped {f}: {why}", file=sys.stderr)
    if skipped:
        raise Failure(f"{len(skipped)} of {len(files)} files could not be processed")
    return 0


def _batch_here(
    args: argparse.Namespace,
    built: Any,
    name: str,
    fixed: dict[str, Any],
    params: dict[str, Any],
    files: list[Path],
    plan: dict[Path, dict[str, Path]],
    advance: Callable[[str], None],
) -> list[tuple[Path, str]]:
    """Runs the files in this process, --jobs at once; returns the files skipped and why."""
    lock = threading.Lock()
    skipped: list[tuple[Path, str]] = []

    def attempt(f: Path) -> bool:
        from pixelweave.engine.errors import PixelweaveError

        try:
            results = built.run({**fixed, name: built.read_input(name, f)}, params, target=args.target)
            for node_id, path in plan[f].items():
                _write(path, results[node_id])
            return True
        except (PixelweaveError, Failure, OSError) as e:
            with lock:
                skipped.append((f, str(e)))
            return False
        finally:
            with lock:
                advance(f.name)

    # The first file compiles the pipeline; the rest reuse the compiled code in parallel.
    remaining = list(files)
    while remaining and not attempt(remaining.pop(0)):
        pass
    with ThreadPoolExecutor(max_workers=args.jobs or 1) as pool:
        list(pool.map(attempt, remaining))
    return skipped


def _batch_on_dask(
    args: argparse.Namespace,
    built: Any,
    name: str,
    fixed: dict[str, Any],
    params: dict[str, Any],
    files: list[Path],
    plan: dict[Path, dict[str, Path]],
    advance: Callable[[str], None],
) -> tuple[list[tuple[Path, str]], str]:
    """Runs the files on a Dask cluster (see app/dask_batch.py); returns the files skipped
    and a note on where the work ran for the summary line."""
    from pixelweave.app.dask_batch import ClusterError, dask_client, run_on_cluster
    from pixelweave.engine.errors import PixelweaveError
    from pixelweave.nodes.batch_job import prepare_batch_job
    from pixelweave.nodes.images import write_encoded_image

    if args.target == "reference":
        raise UsageError("--dask ships compiled code to the workers; --target reference cannot be used with it")
    example, skipped = None, []
    for f in files:  # the output sizes of one readable file decide the compiled groups of outputs
        try:
            example = built.read_input(name, f)
            break
        except (PixelweaveError, OSError):
            continue
    if example is None:
        raise Failure(f"none of the {len(files)} files matching the pattern can be read as an image")
    job = prepare_batch_job(built, name, fixed, params, example, target=args.target)

    def write(f: Path, result: Any) -> None:
        for node_id, path in plan[f].items():
            write_encoded_image(path, result.outputs[node_id])

    try:
        with dask_client(args.dask, args.jobs) as client:
            report = run_on_cluster(client, job, files, write, advance, retries=args.retries)
    except ClusterError as e:
        raise Failure(str(e)) from None
    skipped.extend(report.skipped)
    compiled = report.worker_compiles["pipelines_compiled"] + report.worker_compiles["objects_compiled"]
    note = (
        f" on {report.workers} Dask worker{'s' if report.workers != 1 else ''} ({args.dask}); "
        f"compiled once here, {compiled} compile{'s' if compiled != 1 else ''} on the workers"
    )
    return skipped, note


def _batch_outputs(built: Any, f: Path, out_dir: Path) -> dict[str, Path]:
    outs = built.output_ids
    if len(outs) == 1:
        return {outs[0]: out_dir / f"{f.stem}.png"}
    return {o: out_dir / f"{f.stem}_{o}.png" for o in outs}


def _check_unique(plan: dict[Path, dict[str, Path]]) -> None:
    seen: dict[str, Path] = {}
    for f, paths in plan.items():
        for p in paths.values():
            key = os.path.realpath(p)
            if key in seen:
                raise Failure(f"{seen[key]} and {f} would both be written to {p}: their names clash")
            seen[key] = f


if __name__ == "__main__":
    sys.exit(main())
