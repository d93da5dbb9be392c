"""GPU schedules on target 'opencl' give the reference evaluator's image.

Every family runs on the installed OpenCL device (pocl's CPU device in CI): blocks and
threads from gpu_tile in its 1-, 2- and 3-D forms, gpu_blocks and gpu_threads alone,
producers in local memory (compute_at a block loop) and private memory (compute_at a thread
loop), device-resident intermediates, Funcs without a GPU schedule beside GPU ones,
gpu_single_thread, update definitions, boundary conditions and gathers.
"""

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
xo, yo, xi, yi = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi")


def _blur(boundary: str = "repeat_edge", t=None):
    inp = pw.ImageParam(t or pw.UInt(16), 2, "input")
    clamped = getattr(pw.BoundaryConditions, boundary)(inp)
    bx, by = pw.Func("blur_x"), pw.Func("blur_y")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
    return inp, bx, by


def _u16(rng, h=37, w=45):
    return rng.integers(0, 65535, (h, w), dtype=np.uint16)


BLUR_SCHEDULES = {
    "tile, producer inlined": lambda bx, by: by.gpu_tile(x, y, xo, yo, xi, yi, 16, 16),
    "tile guarded": lambda bx, by: by.gpu_tile(x, y, xo, yo, xi, yi, 8, 4, tail=pw.TailStrategy.GUARD_WITH_IF),
    "producer in local memory": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8),
        bx.compute_at(by, xo).gpu_threads(x, y),
    ),
    "producer in local memory, computed by work-item 0": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8),
        bx.compute_at(by, xo),
    ),
    "producer in private memory": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8),
        bx.compute_at(by, xi),
    ),
    "two kernels, intermediate on the device": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 16, 8),
        bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8),
    ),
    "CPU-scheduled producer, GPU consumer": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 16, 8),
        bx.compute_root().vectorize(x, 8),
    ),
    "1-D tile with block names": lambda bx, by: by.gpu_tile(x, xo, xi, 16),
    "1-D tile without block names": lambda bx, by: by.gpu_tile(y, yi, 4),
    "2-D tile without block names": lambda bx, by: by.gpu_tile(x, y, xi, yi, 4, 4),
    "blocks and threads without splits": lambda bx, by: by.gpu_blocks(y).gpu_threads(x),
    "threads only": lambda bx, by: by.gpu_threads(x, y),
    "blocks only": lambda bx, by: by.gpu_blocks(x, y),
    "single thread": lambda bx, by: by.gpu_single_thread(),
    "vectorized inside threads": lambda bx, by: (
        by.gpu_tile(x, y, xo, yo, xi, yi, 16, 4),
        bx.compute_at(by, xo).vectorize(x, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(BLUR_SCHEDULES))
def test_blur_schedules(name, rng):
    inp, bx, by = _blur()
    BLUR_SCHEDULES[name](bx, by)
    assert_matches_reference(pw.Pipeline(by), [45, 37], {"input": _u16(rng)})


@pytest.mark.parametrize(
    "boundary", ["repeat_edge", "constant_exterior", "mirror_image", "mirror_interior", "repeat_image"]
)
def test_boundary_conditions(boundary, rng):
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    source = (
        pw.BoundaryConditions.constant_exterior(inp, 0.5)
        if boundary == "constant_exterior"
        else getattr(pw.BoundaryConditions, boundary)(inp)
    )
    f = pw.Func("f")
    f[x, y] = source[x - 3, y + 2] * 2.0 + source[x + 5, y - 4]
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8, tail=pw.TailStrategy.GUARD_WITH_IF)
    data = rng.random((19, 23), dtype=np.float32)
    assert_matches_reference(pw.Pipeline(f), [30, 26], {"input": data})


def test_three_dimensional_tile(rng):
    inp = pw.ImageParam(pw.UInt(8), 3, "input")
    f = pw.Func("f")
    zo, zi = pw.Var("zo"), pw.Var("zi")
    f[x, y, c] = pw.cast(pw.UInt(8), (pw.cast(pw.UInt(16), inp[x, y, c]) * (c + 1)) // 2)
    f.gpu_tile(x, y, c, xo, yo, zo, xi, yi, zi, 8, 4, 3)
    data = rng.integers(0, 256, (3, 20, 24), dtype=np.uint8)
    assert_matches_reference(pw.Pipeline(f), [24, 20, 3], {"input": data})


def test_gather_from_a_lookup_table(rng):
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    lut = pw.ImageParam(pw.Int(16), 1, "lut")
    f = pw.Func("f")
    f[x, y] = lut[pw.cast(pw.Int(32), inp[x, y])] * 3 - lut[255 - pw.cast(pw.Int(32), inp[x, y])]
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    data = rng.integers(0, 256, (16, 24), dtype=np.uint8)
    table = rng.integers(-3000, 3000, 256, dtype=np.int16)
    assert_matches_reference(pw.Pipeline(f), [24, 16], {"input": data, "lut": table})


def test_reduction_update_on_gpu_threads(rng):
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    r = pw.RDom([(0, 5)], "r")
    f = pw.Func("f")
    f[x, y] = 0
    f[x, y] += inp[pw.clamp(x + r.x - 2, 0, 31), y]
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    f.update(0).gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    data = rng.integers(-1000, 1000, (12, 32), dtype=np.int32)
    assert_matches_reference(pw.Pipeline(f), [32, 12], {"input": data})


def test_scan_with_rows_on_gpu_blocks(rng):
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    r = pw.RDom([(1, 19)], "r")
    f = pw.Func("f")
    f[x, y] = inp[x, y]
    f[r.x, y] = f[r.x - 1, y] + inp[r.x, y]
    f.gpu_blocks(y)
    f.update(0).gpu_blocks(y)
    data = rng.random((7, 20), dtype=np.float32)
    assert_matches_reference(pw.Pipeline(f), [20, 7], {"input": data}, exact=False)


def test_histogram_update_in_a_single_gpu_thread(rng):
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    r = pw.RDom([(0, 16), (0, 12)], "r")
    hist, out = pw.Func("hist"), pw.Func("out")
    hist[x] = 0
    hist[pw.cast(pw.Int(32), inp[r.x, r.y]) // 16] += 1
    out[x] = hist[x] * 2
    hist.compute_root().gpu_tile(x, xo, xi, 4)
    hist.update(0).gpu_single_thread()
    out.gpu_tile(x, xo, xi, 8)
    data = rng.integers(0, 256, (12, 16), dtype=np.uint8)
    assert_matches_reference(pw.Pipeline(out), [16], {"input": data})


def test_two_outputs(rng):
    inp, bx, by = _blur()
    by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    assert_matches_reference(pw.Pipeline([by, bx]), [20, 12], {"input": _u16(rng)})


def test_loop_nest_and_kernel_source(rng):
    inp, bx, by = _blur()
    by.gpu_tile(x, y, xo, yo, xi, yi, 16, 16)
    bx.compute_at(by, xo).gpu_threads(x, y)
    p = pw.Pipeline(by)
    nest = p.loop_nest("opencl")
    assert "gpu_block y.yo:" in nest and "gpu_block x.xo:" in nest
    assert "gpu_thread x.xi:" in nest and "gpu_thread x:" in nest
    fn = p.compile(target="opencl")
    src = fn.kernel_source
    assert src.count("__kernel void") == 1
    assert "__local ushort" in src and "barrier(" in src
    assert "reqd_work_group_size(16, 18, 1)" in src  # blur_x needs 18 rows per 16-row tile, as in Halide


def test_gpu_single_thread_needs_the_opencl_target():
    inp, bx, by = _blur()
    by.gpu_single_thread()
    with pytest.raises(ScheduleError, match=r"`blur_y` is gpu_single_thread, which needs target='opencl'"):
        pw.Pipeline(by).compile()


def test_gpu_single_thread_and_gpu_loops_together_are_refused():
    inp, bx, by = _blur()
    by.gpu_single_thread().gpu_blocks(y)
    with pytest.raises(ScheduleError, match="gpu_single_thread and also maps loop"):
        pw.Pipeline(by).compile(target="opencl")


def test_gpu_tile_with_a_wrong_number_of_arguments():
    inp, bx, by = _blur()
    with pytest.raises(ScheduleError, match=r"gpu_tile in Func `blur_y` takes .* got 5 arguments"):
        by.gpu_tile(x, y, xo, yo, 4)


def test_storage_shared_by_gpu_threads_is_refused():
    inp, bx, by = _blur()
    by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    bx.compute_at(by, xi).store_at(by, xo)
    with pytest.raises(ScheduleError, match="gpu_thread loop"):
        pw.Pipeline(by).compile(target="opencl")


def test_inputs_are_checked_before_any_kernel_runs(rng):
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    f = pw.Func("f")
    f[x, y] = inp[x + 1, y]
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8, tail=pw.TailStrategy.GUARD_WITH_IF)
    with pytest.raises(pw.RuntimeFailure, match=r"input `input` is read at x = 20, beyond its maximum 19"):
        pw.Pipeline(f).compile(target="opencl")([20, 4], {"input": _u16(rng, 4, 20)})


def test_repeated_calls_reuse_device_buffers(rng):
    inp, bx, by = _blur()
    by.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    p = pw.Pipeline(by)
    fn = p.compile(target="opencl")
    # copies to and from device buffers, as on a GPU (a CPU device uses the arrays in place)
    fn.native.inputs_in_place = fn.native.outputs_in_place = False
    kept = []
    for _ in range(2):
        data = _u16(rng, 30, 40)
        np.testing.assert_array_equal(fn([40, 30], {"input": data}), p.realize_reference([40, 30], {"input": data}))
        kept.append(fn.native.device_buffers())
        assert 0 < fn.native.last_transfer_seconds < fn.native.last_run_seconds
    # the input's, the output's and the intermediate's device buffers, made once
    assert len(kept[0]) == 3 and all(kept[0]) and kept[1] == kept[0]
    fn.native.release_memory()
    assert fn.native.device_buffers() == [0, 0, 0]
    data = _u16(rng, 30, 40)
    np.testing.assert_array_equal(fn([40, 30], {"input": data}), p.realize_reference([40, 30], {"input": data}))
    # in place, only the intermediate has a device buffer once the call returns
    fn.native.inputs_in_place = fn.native.outputs_in_place = True
    np.testing.assert_array_equal(fn([40, 30], {"input": data}), p.realize_reference([40, 30], {"input": data}))
    assert [bool(m) for m in fn.native.device_buffers()] == [False, False, True]
