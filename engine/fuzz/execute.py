"""Run one fuzz case in this process and classify what happened.

Outcomes: "ok" (compiled output equals the reference; a case with a memoized Func is
realized again, from the cache, and with a changed Param), "refused" (a clear PixelweaveError
naming a Func of the case), "expected_failure" (the RuntimeFailure of a specialize_fail()
that the Param values reach, as in Halide), and the failures: "wrong" (output differs from the reference),
"out_of_bounds" (checked mode caught an access outside a buffer), "unclear_refusal" (a
refusal that does not name a Func of the case, the directive at fault and what would be legal),
"internal_error" (any other exception),
"reference_error" (the reference evaluator failed where compiled code ran) and
"halide_mismatch" (the reference differs from Halide on the algorithm). "crash" and "hang"
are decided by the driver, which sees the worker process die or stall.
"""

from __future__ import annotations

import re
import time
import traceback
from typing import Any

import numpy as np
from pixelweave.engine.fuzz.cases import ATOL, RTOL, Case, expected_failures, realizations, render_script

import pixelweave as pw

FAILURES = (
    "wrong",
    "out_of_bounds",
    "unclear_refusal",
    "internal_error",
    "reference_error",
    "halide_mismatch",
    "crash",
    "hang",
)
HALIDE_RTOL = HALIDE_ATOL = 1e-4
CHECKED_MARK = "checked access"


def namespace(case: Case) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "pixelweave_fuzz_case"}
    exec(compile(render_script(case), f"<fuzz case {case.seed}>", "exec"), ns)
    return ns


def signature(message: str) -> str:
    """A message with numbers and generated names blurred, to group refusals by kind."""
    text = message.splitlines()[0] if message else ""
    text = re.sub(r"\bs\d+\b", "sN", text)
    text = re.sub(r"-?\d+", "N", text)
    text = re.sub(r"\b[xy](?:[oif]\d*)+\b", "v", text)
    return text[:160]


DIRECTIVES = re.compile(
    r"\b(split|tile|fuse|reorder|reorder_storage|vectorize|unroll|parallel|compute_at|store_at|compute_root|"
    r"store_root|compute_inline|bound|bound_extent|align_bounds|align_extent|align_storage|store_in|gpu_blocks|"
    r"fold_storage|hoist_storage|hoist_storage_root|specialize|specialize_fail|compute_with|memoize|"
    r"gpu_threads|gpu_tile)\b"
)
ALTERNATIVES = re.compile(
    r"\blegal\b|\buse\b|\bgive\b|\bfirst\b|\bremove\b|\bclamp\b|\bor compute\b|\bmust\b|\bonly\b|\bneeds\b"
)


def refusal_gaps(message: str, names: set[str]) -> list[str]:
    """What a refusal fails to say, of: a Func of the case (in backquotes), the directive at
    fault and what would be legal instead; [] for a clear refusal."""
    gaps = []
    if not any(m in names for m in re.findall(r"`([^`]+)`", message)):
        gaps.append("no Func of the case")
    if not DIRECTIVES.search(message):
        gaps.append("no directive")
    if not ALTERNATIVES.search(message):
        gaps.append("nothing about what is legal")
    return gaps


def _same(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> str | None:
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    if a.dtype.kind == "f":
        bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
        bad = a != b
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {a.size} values differ; first at {where}: {a[where]!r} vs {b[where]!r}"


def run_case(case: Case, with_halide: bool = False, target: str | None = None) -> dict[str, Any]:
    """Build, schedule, compile (checked if the case says so) for target (the case's own
    when None), run and compare one case. with_halide: compare the reference with Halide,
    and for a refused case record whether Halide accepts the same schedule
    ("halide_schedule": "accepted" or "refused")."""
    start = time.perf_counter()
    result = _run(case, with_halide, target or case.target)
    if with_halide and result["outcome"] == "refused":
        result["halide_schedule"] = _halide_schedule_verdict(case)
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result


def _refusal(case: Case, err: Exception, phase: str, funcs: dict[str, Any] | None = None) -> dict[str, Any]:
    """A refusal must name a Func (or input) of the case in backquotes, the directive at
    fault and what would be legal."""
    message = f"{type(err).__name__}: {err}"
    if CHECKED_MARK in str(err):
        return {"outcome": "out_of_bounds", "message": message, "phase": phase}
    names = {s.name for s in case.stages} | {"image", "k"} | {f.name() for f in (funcs or {}).values()}
    gaps = refusal_gaps(str(err), names)
    if gaps:
        message = f"{message} [unclear: {', '.join(gaps)}]"
    outcome = "unclear_refusal" if gaps else "refused"
    return {"outcome": outcome, "message": message, "phase": phase, "signature": signature(message)}


def _run(case: Case, with_halide: bool, target: str = "host") -> dict[str, Any]:
    try:
        ns = namespace(case)
        outputs, funcs, rdoms, handles = ns["algorithm"](pw)
        inputs = ns["make_inputs"]()
    except pw.PixelweaveError as err:
        return _refusal(case, err, "algorithm")
    except Exception:
        return {"outcome": "internal_error", "message": traceback.format_exc(limit=-6), "phase": "algorithm"}
    pipeline = None
    try:
        ns["schedule"](funcs, rdoms, handles)
        pipeline = pw.Pipeline(outputs)
        compiled = pipeline.compile(target, level="fast", checked=case.checked)
    except pw.PixelweaveError as err:
        return _refusal(case, err, "compile", funcs)
    except Exception:
        return {"outcome": "internal_error", "message": traceback.format_exc(limit=-8), "phase": "compile"}
    failures = expected_failures(case)
    first_reference: list | None = None
    for n, changed in enumerate(realizations(case), 1):
        run_inputs = {**inputs, **changed}
        which = "" if n == 1 else f" (realization {n}, inputs changed: {changed or 'none'})"
        try:
            ours = compiled(case.sizes, run_inputs)
        except pw.RuntimeFailure as err:
            if any(failure in str(err) for failure in failures):
                return {"outcome": "expected_failure", "message": str(err)}
            if "specialize_fail() was chosen" in str(err):
                return {"outcome": "wrong", "message": f"a specialization holds, yet {err}{which}", "phase": "run"}
            return _refusal(case, err, "run", funcs)
        except pw.PixelweaveError as err:
            return _refusal(case, err, "run", funcs)
        except Exception:
            return {"outcome": "internal_error", "message": traceback.format_exc(limit=-6), "phase": "run"}
        if failures:
            return {"outcome": "wrong", "message": f"ran past specialize_fail(): {failures[0]}", "phase": "run"}
        try:
            reference = pipeline.realize_reference(case.sizes, run_inputs)
        except Exception as err:
            return {"outcome": "reference_error", "message": f"{type(err).__name__}: {err}", "phase": "reference"}
        ours_list = ours if isinstance(ours, list) else [ours]
        ref_list = reference if isinstance(reference, list) else [reference]
        first_reference = first_reference or ref_list
        for f, a, b in zip(outputs, ours_list, ref_list, strict=True):
            diff = _same(a, b, RTOL, ATOL)
            if diff is not None:
                return {"outcome": "wrong", "message": f"output `{f.name()}`{which}: {diff}", "phase": "compare"}
    if with_halide and first_reference is not None:
        return _compare_with_halide(ns, case, inputs, first_reference)
    return {"outcome": "ok"}


def _halide_schedule_verdict(case: Case) -> str:
    from pixelweave.engine.fuzz.halide_schedule import run_in_halide

    try:
        ns = namespace(case)
        inputs = ns["make_inputs"]()
    except Exception:
        return "refused"
    outputs, _ = run_in_halide(ns, case, inputs)
    return "refused" if outputs is None else "accepted"


def _compare_with_halide(ns: dict[str, Any], case: Case, inputs: dict[str, Any], ref_list: list) -> dict[str, Any]:
    import halide as hl

    try:
        outputs, _, _, handles = ns["algorithm"](hl)
        set_halide_inputs(hl, handles, inputs)
        result = hl.Pipeline(list(outputs)).realize(list(case.sizes))
        buffers = [result] if len(outputs) == 1 else [result[i] for i in range(len(outputs))]
        theirs = [requested_window(b, case.sizes) for b in buffers]
    except Exception as err:
        return {"outcome": "ok", "halide": f"halide refused: {type(err).__name__}: {err}"[:300]}
    for name, a, b in zip(case.outputs, ref_list, theirs, strict=True):
        diff = _same(a, b, HALIDE_RTOL, HALIDE_ATOL)
        if diff is not None:
            return {
                "outcome": "halide_mismatch",
                "message": f"reference vs halide, `{name}`: {diff}",
                "phase": "halide",
            }
    return {"outcome": "ok", "halide": "same"}


def set_halide_inputs(hl: Any, handles: dict[str, Any], inputs: dict[str, Any]) -> None:
    """Give the Halide pipeline's image and Params the case's values."""
    for name, value in inputs.items():
        handles[name].set(hl.Buffer(np.ascontiguousarray(value)) if name == "image" else value)


def requested_window(buffer: Any, sizes: list[int]) -> np.ndarray:
    """The [0, size) window of a Halide output buffer (an output that another output reads
    comes back over everything that was needed, with its own mins)."""
    array = np.asarray(buffer)
    dims = buffer.dimensions()
    window = []
    for axis in range(array.ndim):
        d = dims - 1 - axis
        start = -buffer.dim(d).min()
        window.append(slice(start, start + sizes[d]))
    return array[tuple(window)].copy()
