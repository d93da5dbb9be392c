"""The analytic schedule mapped to GPU blocks and threads, for target 'opencl'.

The CPU plan's decisions about what to inline carry over (recomputing a cheap producer
is as good a trade on a GPU); everything else differs: a GPU wants many small work-items
rather than a few strips per core. Each Func that is not inlined becomes its own kernel
(compute_root), tiled into work-groups of GPU_TILE work-items over its two innermost
dimensions (of GPU_TILE_1D over its only one), a third dimension (channels) one more
block dimension and any further ones loops on the host around the kernel. A Func with
update definitions (histograms, scattered reductions) gets no GPU loops, computed at root
serially: its updates may write any point, which a kernel per point cannot. The OpenCL
backend runs such a stage as a kernel of one work-item, so its data stays on the device.
"""

from __future__ import annotations

from pixelweave.engine.autoschedule.analysis import PipelineAnalysis
from pixelweave.engine.autoschedule.analytic import Plan
from pixelweave.engine.autoschedule.directives import Directive, func_labels
from pixelweave.engine.ir.names import unused_name
from pixelweave.engine.pipeline import Pipeline

GPU_TILE = (16, 16)  # work-items per work-group in x and y: 256, a common size on GPUs
GPU_TILE_1D = 64


def gpu_directives(pipeline: Pipeline, plan: Plan, analysis: PipelineAnalysis) -> list[Directive]:
    """The directives of the GPU mapping of plan (its inlining kept)."""
    labels = func_labels(pipeline)
    inlined = set(plan.inlined)
    out: list[Directive] = []
    for f in pipeline.funcs:
        name = labels[id(f)]
        if name in inlined:
            continue
        if not analysis.is_output(f):
            out.append(Directive(name, 0, "compute_root"))
        if f.has_update_definition():
            continue
        args = [a.name for a in f.args()]
        box = analysis.region(f)
        extents = [int(b.hi - b.lo + 1) for b in box]
        if len(args) >= 2 and extents[1] > 1:
            x, y = args[0], args[1]
            tx, ty = unused_name(f"{x}_t", args), unused_name(f"{y}_t", args)
            wx, wy = (min(GPU_TILE[0], extents[0]), min(GPU_TILE[1], extents[1]))
            out.append(Directive(name, 0, "gpu_tile", (x, y, tx, ty, wx, wy)))
            out += [Directive(name, 0, "gpu_blocks", (a,)) for a in args[2:3]]
        else:
            x = args[0]
            out.append(Directive(name, 0, "gpu_tile", (x, unused_name(f"{x}_t", args), min(GPU_TILE_1D, extents[0]))))
    return out


