"""Lift, verify and describe: what the `pixelweave lift` command prints and writes. The
description (JSON) lists the function's buffers and parameters, each stage with the engine
definition it became and the source line it came from, and what verification held."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pixelweave.engine.ir.printer import expr_to_string
from pixelweave.nodes.lift.c_lift import CLift, lift_c
from pixelweave.nodes.lift.prove import Proof, prove
from pixelweave.nodes.lift.verify import Differential, differential

FORMAT = "pixelweave.lifted"


@dataclass
class LiftReport:
    """A lifted function with the outcome of each verification."""

    lift: CLift
    differential: Differential
    proof: Proof
    stages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return self.differential.held and (not self.proof.applicable or self.proof.held)

    def lines(self) -> list[str]:
        lifted = self.lift.lifted
        out = [
            f"lifted `{lifted.function}` from {lifted.file} in {self.lift.seconds:.2f} s: {len(self.stages)} stage(s)"
        ]
        for s in self.stages:
            where = f" (line {s['line']})" if s["line"] is not None else ""  # none: made by the lifter
            out.append(f"  {s['func']}{where}: {s['definition']}")
        d = self.differential
        if d.held:
            out.append(f"differential: held on {d.trials} random cases (cc -O2 vs Pixelweave, bit-exact)")
        else:
            out.append(f"differential: FAILED after {d.passed} of {d.trials} cases: {d.failure}")
        p = self.proof
        if not p.applicable:
            out.append(f"z3 proof: not attempted ({p.detail})")
        else:
            out.append(f"z3 proof: {'held' if p.held else 'not established'}: {p.detail}")
        return out

    def to_json(self) -> dict[str, Any]:
        lifted = self.lift.lifted
        return {
            "format": FORMAT,
            "version": 1,
            "file": lifted.file,
            "function": lifted.function,
            "parameters": [
                {
                    "name": n,
                    "kind": k,
                    **(
                        {"type": lifted.buffers[n].elem, "role": lifted.buffers[n].kind}
                        if k == "pointer"
                        else {"type": lifted.scalars[n].type, "role": lifted.scalars[n].role}
                    ),
                }
                for n, k in lifted.params
            ],
            "stages": self.stages,
            "verification": {
                "differential": {
                    "held": self.differential.held,
                    "trials": self.differential.trials,
                    "failure": self.differential.failure,
                },
                "z3": {"applicable": self.proof.applicable, "held": self.proof.held, "detail": self.proof.detail},
            },
            "lift_seconds": round(self.lift.seconds, 3),
        }


def describe_stages(lift: CLift) -> list[dict[str, Any]]:
    """Each Func of the lifted pipeline with its definitions as text."""
    lifted = lift.lifted
    stages = []
    for tag, func in lift.engine.funcs.items():
        if tag in lifted.accumulators:
            continue
        version = lifted.versions.get(tag)
        if version is not None and version.kind == "initial" and lifted.buffers[version.buffer].initial == "image":
            continue
        # a Func the lifter adds for a stage ("#last", "#wide") has the stage's line
        stages.append(_stage(func, lifted.stage_lines.get(tag.partition("#")[0]), "buffer"))
    for name, func in lift.engine.funcs.items():
        if name in lifted.accumulators:
            stages.append(_stage(func, lifted.accumulators[name].line, "reduction"))
    if lift.engine.result is not None:
        stages.append(_stage(lift.engine.result, None, "result"))
    return stages


PRINT_LIMIT = 20000  # operations: a definition unrolled from a loop can be a large DAG


def _printed_size(e, memo: dict | None = None) -> int:
    """How many nodes printing an expression writes (shared subexpressions count each time)."""
    memo = {} if memo is None else memo
    key = id(e)
    if key not in memo:
        total = 1
        for c in e.children():
            total += _printed_size(c, memo)
            if total > PRINT_LIMIT:
                break
        memo[key] = total
    return memo[key]


def _stage(func, line, kind: str) -> dict[str, Any]:
    d = func.definition()
    size = _printed_size(d.value)
    if size > PRINT_LIMIT:
        args = ", ".join(expr_to_string(a) for a in d.args)
        text = f"{func.name()}({args}) = (an expression of more than {PRINT_LIMIT} operations when written out)"
        return {"func": func.name(), "kind": kind, "line": line, "definition": text}
    args = ", ".join(expr_to_string(a) for a in d.args)
    text = f"{func.name()}({args}) = {expr_to_string(d.value)}"
    for u in func.updates():
        uargs = ", ".join(expr_to_string(a) for a in u.args)
        text += f"; {func.name()}({uargs}) = {expr_to_string(u.value)}"
    return {"func": func.name(), "kind": kind, "line": line, "definition": text}


def lift_report(path: str | Path, function: str, trials: int = 8, seed: int = 0) -> LiftReport:
    """Lift a C function and verify it: differential testing always, a z3 proof where it applies."""
    lift = lift_c(path, function)
    d = differential(lift, trials=trials, seed=seed)
    p = prove(lift)
    return LiftReport(lift, d, p, describe_stages(lift))


def save_report(report: LiftReport, path: str | Path) -> None:
    """Write the JSON description atomically."""
    path = Path(path)
    text = json.dumps(report.to_json(), indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


@dataclass
class PythonReport:
    """A lifted Python prototype and its check against CPython on the file's examples."""

    function: str
    seconds: float
    definition: str
    check: Any
    approximate: bool
    lift: Any = None  # the PythonLift

    @property
    def verified(self) -> bool:
        return self.check.held

    def lines(self) -> list[str]:
        mode = " (approximation: float64 computed as float32)" if self.approximate else ""
        return [
            f"lifted `{self.function}` in {self.seconds:.2f} s{mode}",
            f"  {self.definition}",
            f"checked against CPython on the file's example arguments: {'held' if self.check.held else 'FAILED'}: "
            f"{self.check.detail}",
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": 1,
            "function": self.function,
            "approximate": self.approximate,
            "stages": [{"definition": self.definition}],
            "verification": {
                "cpython": {"held": self.check.held, "max_error": self.check.max_error, "detail": self.check.detail}
            },
            "lift_seconds": round(self.seconds, 3),
        }


def load_prototype(path: str | Path, function: str) -> tuple[Any, tuple]:
    """The function and its example arguments from a prototype file: the file defines
    `examples()` returning {function name: (arguments...)}. This runs the file."""
    import importlib.util

    from pixelweave.nodes.lift.errors import LiftError

    path = Path(path)
    if not path.is_file():
        raise LiftError(str(path), None, "the file", "no such file")
    spec = importlib.util.spec_from_file_location(f"pixelweave_prototype_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if not callable(fn):
        raise LiftError(str(path), None, f"function `{function}`", "it is not defined in the file")
    examples = getattr(module, "examples", None)
    if not callable(examples) or function not in examples():
        raise LiftError(
            str(path),
            None,
            f"function `{function}`",
            "the file needs examples() returning {name: (example arguments...)} to type and check it",
        )
    return fn, tuple(examples()[function])


def python_report(path: str | Path, function: str, approximate: bool = False) -> PythonReport:
    """Lift a Python prototype with its examples' types and check it against CPython."""
    import time

    from pixelweave.nodes.lift.python_frontend import check_python, lift_python

    fn, args = load_prototype(path, function)
    start = time.perf_counter()
    lifted = lift_python(fn, args, approximate=approximate, file=str(path))
    seconds = time.perf_counter() - start
    check = check_python(lifted, fn, args)
    definition = _stage(lifted.output, None, "output")["definition"]
    return PythonReport(function, seconds, definition, check, approximate, lifted)
