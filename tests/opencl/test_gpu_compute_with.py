"""compute_with on target opencl: fused GPU block and thread loops, as Halide fuses them
(test/correctness/compute_with.cpp, `multiple_outputs_on_gpu_test`), compute what the
reference evaluator computes, with both stages in one kernel."""

import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

SIZES = ([37, 29], [5, 3], [64, 32])  # tails in both dimensions, a region smaller than a tile, whole tiles


def _fused_pair(schedule: str) -> pw.Pipeline:
    """f and g read the same input and not each other; h reads g over a region that is
    both shifted and wider than f's, so aligning the fused loops matters."""
    x, y, xi, yi, yo = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi"), pw.Var("yo")
    source, f, g, h = pw.Func("source"), pw.Func("f"), pw.Func("g"), pw.Func("h")
    source[x, y] = x * 7 + y * 3 + 1
    f[x, y] = 100 - source[x, y]
    g[x, y] = x * 3 + source[x, y]
    h[x, y] = f[x, y] + g[x / 2 - 3, y / 3 + 2] + g[x * 2 + 1, y - 5]
    source.compute_root()
    h.gpu_tile(x, y, xi, yi, 8, 8)
    g_tile = (4, 2) if schedule in ("blocks_mixed_tiles", "threads_mixed_tiles") else (8, 4)
    if schedule == "serial_outside_blocks":
        f.compute_root().split(y, yo, y, 8).gpu_tile(x, y, xi, yi, 8, 4)
        g.compute_root().split(y, yo, y, 8).gpu_tile(x, y, xi, yi, 8, 4)
    else:
        f.compute_root().gpu_tile(x, y, xi, yi, 8, 4)
        g.compute_root().gpu_tile(x, y, xi, yi, *g_tile)
    at, align = {
        "blocks": (x, pw.LoopAlignStrategy.AlignEnd),
        "blocks_mixed_tiles": (x, pw.LoopAlignStrategy.AlignStart),
        "outer_block_only": (y, pw.LoopAlignStrategy.NoAlign),
        "threads": (xi, pw.LoopAlignStrategy.AlignEnd),
        "threads_mixed_tiles": (yi, pw.LoopAlignStrategy.AlignStart),
        "serial_outside_blocks": (x, pw.LoopAlignStrategy.AlignStart),
    }[schedule]
    g.compute_with(f, at, align)
    return pw.Pipeline(h)


@pytest.mark.parametrize(
    "schedule",
    ["blocks", "blocks_mixed_tiles", "outer_block_only", "threads", "threads_mixed_tiles", "serial_outside_blocks"],
)
def test_compute_with_fuses_gpu_loops(opencl_device, schedule):
    pipeline = _fused_pair(schedule)
    for sizes in SIZES:
        compiled = assert_matches_reference(pipeline, sizes, [])
    # source, the fused f and g, h: f and g share one kernel
    assert compiled.kernel_source.count("__kernel") == 3


def test_fused_loops_of_different_gpu_kinds_are_refused(opencl_device):
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = x + y
    g[x, y] = x - y
    f.compute_root().gpu_tile(x, y, xi, yi, 8, 4)
    g.compute_root().tile(x, y, xi, yi, 8, 4).gpu_blocks(x).gpu_threads(xi)
    g.compute_with(f, x)
    with pytest.raises(ScheduleError, match=r"for types of dim 1 of f.s0\(y.y is gpu_block\) and g.s0\(y.y is for\)"):
        pw.Pipeline([f, g]).compile(target="opencl")


def test_two_outputs_fused_at_their_block_loops(opencl_device):
    """Halide's own GPU compute_with test: two `gpu_tile`d outputs computed with each other."""
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    source, f, g = pw.Func("source"), pw.Func("f"), pw.Func("g")
    source[x, y] = x + y + 1
    f[x, y] = 100 - source[x, y]
    g[x, y] = x + source[x, y]
    source.compute_root()
    f.compute_root().gpu_tile(x, y, xi, yi, 8, 8)
    g.compute_root().gpu_tile(x, y, xi, yi, 8, 8)
    g.compute_with(f, x, pw.LoopAlignStrategy.AlignEnd)
    compiled = assert_matches_reference(pw.Pipeline([f, g]), [37, 29], [])
    assert compiled.kernel_source.count("__kernel") == 2


def test_host_loops_fused_on_target_opencl(opencl_device):
    """Stages without GPU loops fused on target opencl (which runs them in one kernel of a
    single work-item) compute what the reference does; the target used to refuse them."""
    x, y = pw.Var("x"), pw.Var("y")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = x + y
    g[x, y] = x * y
    g.compute_with(f, y)
    compiled = assert_matches_reference(pw.Pipeline([f, g]), [13, 7], [])
    assert compiled.kernel_source.count("__kernel") == 1


@pytest.mark.parametrize("memory", [None, "GPUShared"])
def test_producers_at_a_block_loop_fused_at_their_thread_loops(opencl_device, memory):
    """f and g computed at the consumer's block loop, each over its own thread loops, then
    fused there: one pass of the work-group computes both, so one barrier separates them
    from the consumer instead of two."""
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    f, g, h = pw.Func("f"), pw.Func("g"), pw.Func("h")
    f[x, y] = x * 5 - y
    g[x, y] = x + y * 3
    h[x, y] = f[x, y] + g[x + 1, y] + f[x - 1, y + 1]
    h.gpu_tile(x, y, xi, yi, 8, 8)
    f.compute_at(h, x).gpu_threads(x, y)
    g.compute_at(h, x).gpu_threads(x, y)
    if memory is not None:
        f.store_in(getattr(pw.MemoryType, memory))
        g.store_in(getattr(pw.MemoryType, memory))
    g.compute_with(f, x, pw.LoopAlignStrategy.AlignEnd)
    for sizes in SIZES:
        compiled = assert_matches_reference(pw.Pipeline(h), sizes, [])
    assert compiled.kernel_source.count("__kernel") == 1
    assert compiled.kernel_source.count("barrier(") == 1
