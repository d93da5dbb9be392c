"""`pw.main()`: Halide's generator command line, run at the end of a file of generators
(`if __name__ == "__main__": pw.main()`), e.g.

    python my_generators.py -g bilateral_grid -o out/ -e static_library,h target=host s_sigma=4

`-g` names the generator (aliases included), `-o` the directory, `-e` what to write,
`-f` the entry point's name and `-n` the files' base name; each NAME=VALUE sets a
GeneratorParam, `target=` the Target and `autoscheduler=` the autoscheduler.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pixelweave.engine.errors import CompileError

# Halide's emit names -> the suffix of the file each writes
EMITS = {
    "static_library": ".a",
    "h": ".h",
    "o": ".o",
    "object": ".o",
    "assembly": ".s",
    "llvm_assembly": ".ll",
    "stmt": ".stmt",
    "stmt_html": ".stmt.html",
}
DEFAULT_EMITS = ("static_library", "h")
_FLAGS = {"-g": "generator", "-o": "output_dir", "-e": "emit", "-f": "function_name", "-n": "file_base_name"}

USAGE = (
    "usage: python FILE.py -g GENERATOR -o OUTPUT_DIR [-e static_library,h,o,assembly,llvm_assembly,stmt,stmt_html] "
    "[-f FUNCTION_NAME] [-n FILE_BASE_NAME] [target=TARGET] [autoscheduler=NAME] [PARAM=VALUE ...]"
)


def parse_arguments(argv: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(flags by name, NAME=VALUE pairs) of a generator command line (argv[0] is the program)."""
    flags: dict[str, str] = {}
    pairs: dict[str, str] = {}
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg in _FLAGS:
            if not args:
                raise CompileError(f"{arg} needs a value. {USAGE}")
            flags[_FLAGS[arg]] = args.pop(0)
        elif arg.startswith("-"):
            raise CompileError(f"unknown flag {arg} (Pixelweave takes {', '.join(_FLAGS)}). {USAGE}")
        else:
            key, sep, value = arg.partition("=")
            if not sep or not key:
                raise CompileError(f"expected NAME=VALUE, got {arg!r}. {USAGE}")
            pairs[key] = value
    for needed in ("generator", "output_dir"):
        if needed not in flags:
            flag = next(k for k, v in _FLAGS.items() if v == needed)
            raise CompileError(f"{flag} is required. {USAGE}")
    return flags, pairs


def main(argv: list[str] | None = None) -> list[str]:
    """Build one registered generator as the command line asks (Halide's `hl.main()`);
    returns the paths written."""
    from pixelweave.engine.generator import registered_generators
    from pixelweave.engine.target_api import Target

    flags, pairs = parse_arguments(sys.argv if argv is None else argv)
    generators = registered_generators()
    name = flags["generator"]
    if name not in generators:
        raise CompileError(f"no generator `{name}` is registered (known: {', '.join(sorted(generators)) or 'none'})")
    emits = flags["emit"].split(",") if "emit" in flags else list(DEFAULT_EMITS)
    unknown = [e for e in emits if e not in EMITS]
    if unknown:
        raise CompileError(f"unknown emit `{unknown[0]}`; Pixelweave writes {', '.join(EMITS)}")
    target: Any = Target(pairs.pop("target", "host"))
    fn_name = flags.get("function_name", name)
    base = Path(flags["output_dir"]) / flags.get("file_base_name", fn_name)
    Path(flags["output_dir"]).mkdir(parents=True, exist_ok=True)
    generator = generators[name](pairs, target)
    return emit_files(generator, str(base), fn_name, emits)


def emit_files(generator: Any, prefix: str, fn_name: str, emits: list[str]) -> list[str]:
    """Write PREFIX + suffix for each emit name; returns the paths written."""
    pipeline = generator.scheduled_pipeline()
    inputs, target = generator.inputs(), generator.target()
    written = []
    for emit in emits:
        path = prefix + EMITS[emit]
        if emit == "static_library":
            pipeline.compile_to_static_library(prefix, inputs, fn_name, target)
        elif emit == "h":
            pipeline.compile_to_header(path, inputs, fn_name, target)
        elif emit in ("o", "object"):
            pipeline.compile_to_object(path, inputs, fn_name, target)
        elif emit == "assembly":
            pipeline.compile_to_assembly(path, inputs, fn_name, target)
        elif emit == "llvm_assembly":
            pipeline.compile_to_llvm_assembly(path, inputs, fn_name, target)
        else:
            pipeline.compile_to_lowered_stmt(path, inputs, "html" if emit == "stmt_html" else "text", target)
        written.append(path)
    return written
