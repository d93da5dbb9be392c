"""Random GPU schedules for the fuzzer's random pipelines (target 'opencl').

`draw_gpu_case(seed)` draws the same pipeline and CPU-style schedule as `draw_case`, then
maps its marks to the GPU as people port a CPU schedule: a parallel loop becomes GPU
blocks, a vectorized loop without a width becomes GPU threads (with a width it stays a
vectorized loop: OpenCL vector code inside a work-item, or a serial loop there for widths
OpenCL has no vector type of), a tile of an output sometimes
becomes a gpu_tile, and an update without GPU loops sometimes runs in one GPU thread.
Cases are unchecked: checked access is a CPU feature. compute_with stays (its fused loops
are mapped like any others, so they may be GPU loops); memoize, fold_storage and
hoist_storage (CPU only: refused at once on OpenCL, they would only waste cases) and
specializations are left out.
"""

from __future__ import annotations

import random

from pixelweave.engine.fuzz.cases import Case, Directive, draw_case, loop_names, without_newer_directives

CPU_ONLY = ("fold_storage", "hoist_storage", "hoist_storage_root")


def draw_gpu_case(seed: int) -> Case:
    """The GPU variant of case `seed` (the same seed always gives the same case)."""
    case = without_newer_directives(draw_case(seed, checked=False), keep=("compute_with",))
    rng = random.Random(seed * 7919 + 1)
    directives: list[Directive] = []
    for d in case.directives:
        if d.kind in CPU_ONLY:
            continue
        if d.kind == "parallel":
            directives.append(Directive(d.func, d.stage, "gpu_blocks", list(d.args)))
        elif d.kind == "vectorize" and len(d.args) == 1 and rng.random() < 0.7:
            directives.append(Directive(d.func, d.stage, "gpu_threads", list(d.args)))
        elif d.kind == "tile" and d.func in case.outputs and rng.random() < 0.5:
            directives.append(Directive(d.func, d.stage, "gpu_tile", list(d.args)))
        else:
            directives.append(d)
    marked = {(d.func, d.stage) for d in directives if d.kind.startswith("gpu_")}
    roots = set(case.outputs) | {d.func for d in directives if d.kind == "compute_root"}
    for func in sorted(roots):
        if (func, 0) not in marked and func in {s.name for s in case.stages if s.kind != "boundary"}:
            directives.append(Directive(func, 0, "gpu_blocks", [_outermost(directives, func)]))
            marked.add((func, 0))
    for stage in case.stages:
        if stage.rvars and (stage.name, 1) not in marked and rng.random() < 0.4:
            directives.append(Directive(stage.name, 1, "gpu_single_thread", []))
    case.directives = directives
    case.target = "opencl"
    return case


def _outermost(directives: list[Directive], func: str) -> str:
    """The outermost loop of func's pure definition after its reshaping directives (a split,
    tile, gpu_tile or fuse may have replaced x and y)."""
    return loop_names(directives, func, 0, ["x", "y"], [])[-1]
