"""A fuzz case's schedule applied to the same pipeline built with Halide (`import halide`),
to learn whether Halide accepts a schedule that Pixelweave refuses, and what it computes.

The case's directives name loops as Pixelweave's do (a split's new loops by the names
given, RVars as `r.x`); Halide resolves names the same way (by the last part of a loop's
name), so each directive maps to the Halide call of the same name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pixelweave.engine.fuzz.cases import Case, Directive

TAILS = {
    "AUTO": "Auto",
    "ROUND_UP": "RoundUp",
    "GUARD_WITH_IF": "GuardWithIf",
    "SHIFT_INWARDS": "ShiftInwards",
}


def _loop(hl: Any, rdoms: dict[str, Any], func: str, name: Any) -> Any:
    if isinstance(name, str) and name.startswith("r."):
        return getattr(rdoms[func], name[2:])
    return hl.Var(name) if isinstance(name, str) else name


CONDITIONS = {
    "": lambda a, _: a,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
}


def apply_directive(
    hl: Any, funcs: dict[str, Any], rdoms: dict[str, Any], d: Directive, params: dict[str, Any] | None = None
) -> None:
    """Apply one directive to the Halide Funcs of a case (raises what Halide raises);
    `params` holds the Halide Params that specialization conditions read."""
    f = funcs[d.func]
    stage = f if d.stage == 0 else f.update(d.stage - 1)
    if d.condition is not None:
        name, op, value = d.condition
        stage = stage.specialize(CONDITIONS[op]((params or {})[name], value))
        if d.kind == "specialize":
            return

    def v(a: Any) -> Any:
        return _loop(hl, rdoms, d.func, a)

    args = d.args
    if d.kind == "split":
        old, outer, inner, factor, tail = args
        stage.split(v(old), v(outer), v(inner), factor, getattr(hl.TailStrategy, TAILS[tail]))
    elif d.kind == "tile":
        x, y, xo, yo, xi, yi, fx, fy, tail = args
        stage.tile(v(x), v(y), v(xo), v(yo), v(xi), v(yi), fx, fy, getattr(hl.TailStrategy, TAILS[tail]))
    elif d.kind == "fuse":
        stage.fuse(v(args[0]), v(args[1]), v(args[2]))
    elif d.kind == "reorder":
        stage.reorder(*[v(a) for a in args])
    elif d.kind in ("vectorize", "unroll"):
        getattr(stage, d.kind)(*[v(args[0]), *args[1:]])
    elif d.kind == "parallel":
        stage.parallel(v(args[0]))
    elif d.kind in ("compute_root", "store_root"):
        getattr(f, d.kind)()
    elif d.kind in ("compute_at", "store_at"):
        getattr(f, d.kind)(funcs[args[0]], hl.Var(args[1]))
    elif d.kind == "bound":
        f.bound(hl.Var(args[0]), args[1], args[2])
    elif d.kind == "reorder_storage":
        f.reorder_storage(*[hl.Var(a) for a in args])
    elif d.kind == "bound_extent":
        f.bound_extent(hl.Var(args[0]), args[1])
    elif d.kind == "align_bounds":
        f.align_bounds(hl.Var(args[0]), args[1], args[2])
    elif d.kind == "align_storage":
        f.align_storage(hl.Var(args[0]), args[1])
    elif d.kind == "store_in":
        f.store_in(getattr(hl.MemoryType, args[0]))
    elif d.kind == "fold_storage":
        f.fold_storage(hl.Var(args[0]), args[1], args[2])
    elif d.kind == "hoist_storage":
        f.hoist_storage(funcs[args[0]], hl.Var(args[1]))
    elif d.kind == "hoist_storage_root":
        f.hoist_storage_root()
    elif d.kind == "specialize_fail":
        stage.specialize_fail(args[0])
    elif d.kind == "compute_with":
        parent, index, var, align = args
        target = funcs[parent] if index == 0 else funcs[parent].update(index - 1)
        stage.compute_with(target, _loop(hl, rdoms, parent, var), getattr(hl.LoopAlignStrategy, align))
    elif d.kind == "memoize":
        f.memoize()
    elif d.kind.startswith("gpu_"):
        _apply_gpu_directive(hl, stage, d, v)
    else:
        raise ValueError(f"no Halide mapping for directive {d.kind}")


def _apply_gpu_directive(hl: Any, stage: Any, d: Directive, v: Any) -> None:
    """The GPU fuzzer's directives (gpu.py); its gpu_tile has tile's arguments."""
    args = d.args
    if d.kind in ("gpu_blocks", "gpu_threads"):
        getattr(stage, d.kind)(*[v(a) for a in args])
    elif d.kind == "gpu_tile":
        x, y, bx, by, tx, ty, fx, fy, tail = args
        stage.gpu_tile(v(x), v(y), v(bx), v(by), v(tx), v(ty), fx, fy, getattr(hl.TailStrategy, TAILS[tail]))
    elif d.kind == "gpu_single_thread":
        stage.gpu_single_thread()
    else:
        raise ValueError(f"no Halide mapping for directive {d.kind}")


# Halide refuses to memoize a Func that reads an image unless memoize_tag() says what stands
# for it; every fuzz pipeline reads `image` (Pixelweave keys it by its contents instead).
MEMOIZED_IMAGE = "Buffer parameter image encountered in computed_cached computation"


def run_in_halide(ns: dict[str, Any], case: Case, inputs: dict[str, Any]) -> tuple[list[np.ndarray] | None, str]:
    """Build the case's algorithm with Halide, apply its schedule and realize it: (the
    requested window of each output, "") or (None, Halide's error). Where Halide refuses
    memoize() only because the Func reads the input image, the schedule is tried again
    without its memoize() calls, which change no value."""
    outputs, error = _realize_in_halide(ns, case, inputs, case.directives)
    if outputs is None and MEMOIZED_IMAGE in error:
        outputs, error = _realize_in_halide(ns, case, inputs, [d for d in case.directives if d.kind != "memoize"])
    return outputs, error


def _realize_in_halide(
    ns: dict[str, Any], case: Case, inputs: dict[str, Any], directives: list[Directive]
) -> tuple[list[np.ndarray] | None, str]:
    import halide as hl
    from pixelweave.engine.fuzz.execute import requested_window, set_halide_inputs

    try:
        outputs, funcs, rdoms, handles = ns["algorithm"](hl)
        for d in directives:
            apply_directive(hl, funcs, rdoms, d, handles)
        set_halide_inputs(hl, handles, inputs)
        pipeline = hl.Pipeline(list(outputs))
        if case.target == "opencl":  # a GPU case runs on Halide's OpenCL target
            target = hl.get_host_target().with_feature(hl.TargetFeature.OpenCL)
            result = pipeline.realize(list(case.sizes), target)
        else:
            result = pipeline.realize(list(case.sizes))
        buffers = [result] if len(outputs) == 1 else [result[i] for i in range(len(outputs))]
        for b in buffers:
            b.copy_to_host()  # a no-op for host buffers
        return [requested_window(b, case.sizes) for b in buffers], ""
    except Exception as err:  # Halide raises RuntimeError/ValueError for refused schedules
        return None, f"{type(err).__name__}: {err}"
