"""Inputs and outputs used in place on a CPU device (CL_MEM_USE_HOST_PTR) instead of
copied: the same images as with copies and as the reference, at sizes with tails, for an
input that is also the output (which keeps the output's copy), for a new array every call
and for an array changed between calls."""

import numpy as np
import pytest

import pixelweave as pw

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y = pw.Var("x"), pw.Var("y")
xo, yo, xi, yi = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi")


def _blur() -> pw.Pipeline:
    """A 3x3 blur with a boundary condition (the output has the input's size) and blur_x
    per tile in local memory, as the benchmark's GPU schedule."""
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    bx, by = pw.Func("bx"), pw.Func("by")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) // 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 3
    by.gpu_tile(x, y, xo, yo, xi, yi, 16, 8)
    bx.compute_at(by, xo).gpu_threads(x, y)
    return pw.Pipeline(by)


def test_the_default_on_a_cpu_device(opencl_device) -> None:
    fn = _blur().compile(target="opencl")
    assert fn.native.inputs_in_place == opencl_device.shares_host_memory
    assert fn.native.outputs_in_place == opencl_device.shares_host_memory


@pytest.mark.parametrize("sizes", [(16, 8), (37, 21)], ids=str)
@pytest.mark.parametrize("inputs_in_place", [True, False], ids=["inputs_in_place", "inputs_copied"])
@pytest.mark.parametrize("outputs_in_place", [True, False], ids=["outputs_in_place", "outputs_copied"])
def test_same_image_as_the_reference(sizes, inputs_in_place, outputs_in_place, rng) -> None:
    pipeline = _blur()
    fn = pipeline.compile(target="opencl")
    fn.native.inputs_in_place = inputs_in_place
    fn.native.outputs_in_place = outputs_in_place
    data = rng.integers(0, 65536, sizes[::-1]).astype(np.uint16)
    ref = pipeline.realize_reference(list(sizes), {"input": data})
    out = np.full(sizes[::-1], 12345, np.uint16)
    fn(list(sizes), {"input": data}, out=out)
    np.testing.assert_array_equal(out, ref)
    input_slot, output_slot = fn.native.device_buffers()[:2]
    # in place, the buffer over the caller's array is released at the end of the call
    assert (input_slot == 0) == inputs_in_place
    assert (output_slot == 0) == outputs_in_place


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "copied"])
def test_an_input_that_is_also_the_output(in_place, rng) -> None:
    """The kernels read the input as it was: an output that overlaps an input is written
    to its device buffer and copied back after the last kernel."""
    pipeline = _blur()
    fn = pipeline.compile(target="opencl")
    fn.native.inputs_in_place = in_place
    assert fn.native.outputs_in_place
    data = rng.integers(0, 65536, (21, 37)).astype(np.uint16)
    ref = pipeline.realize_reference([37, 21], {"input": data.copy()})
    fn([37, 21], {"input": data}, out=data)
    np.testing.assert_array_equal(data, ref)
    assert fn.native.device_buffers()[1] != 0  # the output's own device buffer
    whole = rng.integers(0, 65536, 21 * 37 + 50).astype(np.uint16)
    # contiguous views of one block of memory that overlap
    source, target = whole[: 21 * 37].reshape(21, 37), whole[50:].reshape(21, 37)
    ref = pipeline.realize_reference([37, 21], {"input": source.copy()})
    fn([37, 21], {"input": source}, out=target)
    np.testing.assert_array_equal(target, ref)


def test_new_and_changed_arrays_between_calls(rng) -> None:
    pipeline = _blur()
    fn = pipeline.compile(target="opencl")
    assert fn.native.inputs_in_place
    first = rng.integers(0, 65536, (21, 37)).astype(np.uint16)
    second = rng.integers(0, 65536, (9, 70)).astype(np.uint16)[:, 3:]  # not at the start of its memory
    for data in (first, second, first):
        ref = pipeline.realize_reference(list(data.shape[::-1]), {"input": data})
        np.testing.assert_array_equal(fn(list(data.shape[::-1]), {"input": data}), ref)
    first[5:9, 10:20] = 7
    ref = pipeline.realize_reference([37, 21], {"input": first})
    np.testing.assert_array_equal(fn([37, 21], {"input": first}), ref)
    fn.native.inputs_in_place = False  # a copy after calls in place makes a device buffer again
    np.testing.assert_array_equal(fn([37, 21], {"input": first}), ref)
    assert fn.native.device_buffers()[0] != 0
