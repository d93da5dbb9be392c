"""store_in(MemoryType) on target 'opencl', against Halide 21's OpenCL target on the same
device and the reference evaluator: GPUShared is work-group local memory (a slice per
work-item inside the thread loops), Register and Stack private memory of a work-item, Heap
global device memory, Auto as the compute level decides. What cannot work is refused when
compiling, with the reason: GPUShared outside any GPU block loop, private memory shared by
a work-group (Halide computes garbage there), sizes without a constant bound, and the
memory types of other devices."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

SIZES = [40, 30]
DATA = np.random.default_rng(5).random((37, 45), dtype=np.float32)


def _build(m, memory: str, where: str):
    """g reads a 3x2 stencil of f; f is computed per GPU block (its own thread loops), per
    work-item of g, or at the root, and stored in `memory`."""
    x, y = m.Var("x"), m.Var("y")
    xo, yo, xi, yi = m.Var("xo"), m.Var("yo"), m.Var("xi"), m.Var("yi")
    inp = m.ImageParam(m.Float(32), 2, "input")
    f, g = m.Func("f"), m.Func("g")
    f[x, y] = inp[x, y] * 2.0 + 1.0
    g[x, y] = f[x, y] + f[x + 2, y] + f[x, y + 1]
    g.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    if where == "block":
        f.compute_at(g, xo).gpu_threads(x, y)
    elif where == "thread":
        f.compute_at(g, xi)
    else:
        f.compute_root()
    f.store_in(getattr(m.MemoryType, memory))
    return g, inp


def _halide_opencl(memory: str, where: str) -> np.ndarray:
    import halide as hl

    g, inp = _build(hl, memory, where)
    inp.set(hl.Buffer(DATA))
    out = hl.Buffer(hl.Float(32), SIZES)
    target = hl.get_host_target().with_feature(hl.TargetFeature.OpenCL)
    g.realize(out, target)
    out.copy_to_host()
    return np.asarray(out)


PLACED = [
    ("block", "GPUShared", r"__local float f_\d+\[\d+\];"),
    ("block", "Heap", r"__global float \*f_\d+ = scratch_f \+ \(long\)\(get_group_id"),
    ("block", "Auto", r"__local float f_\d+\[\d+\];"),
    ("thread", "GPUShared", r"__local float \*f_\d+ = f_\d+_all \+ \(get_local_id"),
    ("thread", "Heap", r"__global float \*f_\d+ = scratch_f \+ \(long\)\(get_global_id"),
    ("thread", "Register", r"\n\s+float f_\d+\[6\];"),
    ("thread", "Stack", r"\n\s+float f_\d+\[6\];"),
    ("thread", "Auto", r"\n\s+float f_\d+\[6\];"),
    ("root", "Heap", None),
    ("root", "Stack", None),
    ("root", "Auto", None),
]


@pytest.mark.parametrize(("where", "memory", "declaration"), PLACED)
def test_storage_goes_where_it_is_asked_and_the_image_is_halides(where, memory, declaration):
    g, _ = _build(pw, memory, where)
    fn = assert_matches_reference(pw.Pipeline(g), SIZES, {"input": DATA})
    np.testing.assert_array_equal(fn(SIZES, {"input": DATA}), _halide_opencl(memory, where))
    if declaration is not None:
        assert re.search(declaration, fn.kernel_source), fn.kernel_source
    if memory != "GPUShared" and where == "thread":
        assert "__local" not in fn.kernel_source


def test_a_gpu_shared_slice_per_work_item_is_its_own():
    """Inside the thread loops every work-item of the group gets a slice of one __local
    array, sized for the whole group: no work-item reads another's values."""
    g, _ = _build(pw, "GPUShared", "thread")
    fn = pw.Pipeline(g).compile(target="opencl")
    total = re.search(r"__local float f_\d+_all\[(\d+)\];", fn.kernel_source)
    assert total is not None and int(total.group(1)) == 6 * 8 * 8


def test_private_or_shared_memory_where_it_cannot_be_is_refused():
    for memory in ("Register", "Stack"):
        g, _ = _build(pw, memory, "block")
        with pytest.raises(ScheduleError, match=rf"store_in\(MemoryType.{memory}\) of `f`: {memory} storage is private"):
            pw.Pipeline(g).compile(target="opencl")
    g, _ = _build(pw, "GPUShared", "root")
    with pytest.raises(ScheduleError, match="computed outside any GPU block loop"):
        pw.Pipeline(g).compile(target="opencl")


def _scaled(memory: str, where: str):
    """f's region per block depends on a run-time scale: no constant size."""
    x, y, xo, yo, xi, yi = (pw.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    scale = pw.Param(pw.Int(32), "scale", 2)
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = x + y
    g[x, y] = f[x, y] + f[x + scale, y]
    g.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    (f.compute_at(g, xo).gpu_threads(x, y) if where == "block" else f.compute_at(g, xi)).store_in(
        getattr(pw.MemoryType, memory)
    )
    return pw.Pipeline(g), scale


def test_storage_without_a_constant_size_is_refused_where_it_needs_one_and_heap_takes_it():
    pipeline, _ = _scaled("GPUShared", "block")
    with pytest.raises(ScheduleError, match="local memory is sized when the kernel is built"):
        pipeline.compile(target="opencl")
    pipeline, _ = _scaled("Stack", "thread")
    with pytest.raises(ScheduleError, match="private memory of a GPU work-item needs a constant size"):
        pipeline.compile(target="opencl")
    pipeline, _ = _scaled("Register", "thread")
    with pytest.raises(ScheduleError, match=r"register storage needs a constant size.* or Heap"):
        pipeline.compile(target="opencl")
    pipeline, scale = _scaled("Heap", "block")
    fn = pipeline.compile(target="opencl")
    for value in (1, 3):
        scale.set(value)
        np.testing.assert_array_equal(fn([20, 9]), pipeline.realize_reference([20, 9]))


def test_other_devices_memory_types_are_refused_and_gpu_shared_needs_the_gpu():
    f = pw.Func("f")
    x = pw.Var("x")
    f[x] = x
    for memory, device in (("GPUTexture", "GPU texture"), ("LockedCache", "Hexagon"), ("VTCM", "Hexagon"), ("AMXTile", "AMX")):
        with pytest.raises(ScheduleError, match=rf"Pixelweave has no {memory} memory \(Halide's is for .*{device}"):
            f.store_in(getattr(pw.MemoryType, memory))
    g, _ = _build(pw, "GPUShared", "block")
    with pytest.raises(ScheduleError, match="GPUShared is the local memory of a GPU work-group, placed on target='opencl'"):
        pw.Pipeline(g).compile()


def test_storage_of_a_func_without_a_gpu_schedule_stays_correct():
    """Stack and Register storage of a CPU-scheduled Func runs in a one-work-item kernel."""
    x, y, xo, xi = pw.Var("x"), pw.Var("y"), pw.Var("xo"), pw.Var("xi")
    for memory in ("Stack", "Register", "Heap"):
        f, g = pw.Func("f"), pw.Func("g")
        f[x, y] = x * 3 + y
        g[x, y] = f[x - 1, y] + f[x + 1, y]
        g.split(x, xo, xi, 8)
        f.compute_at(g, xo).store_in(getattr(pw.MemoryType, memory))
        assert_matches_reference(pw.Pipeline(g), [24, 3], {})
