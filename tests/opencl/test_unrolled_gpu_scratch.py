"""A Func computed inside an unrolled loop of a GPU kernel, with storage whose size varies
in the kernel (scratch storage in device memory): unrolling repeats the loop body, so the
kernel allocates that storage once per copy. Halide runs these schedules on its OpenCL
target; each copy gets scratch storage of its own and the image equals the reference.
(Found by the GPU schedule fuzzer, seed 5833.)
"""

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y = pw.Var("x"), pw.Var("y")
yo, yi = pw.Var("yo"), pw.Var("yi")


def _downsample_and_stencil():
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    k = pw.Param(pw.UInt(16), "k", 4)
    edge = pw.BoundaryConditions.mirror_image(image)
    scaled, down, out = pw.Func("scaled"), pw.Func("down"), pw.Func("out")
    scaled[x, y] = edge[x, y] * k + pw.u16(y)
    down[x, y] = scaled[x, 2 * y - 1] / 2 + scaled[x, 2 * y] / 2
    out[x, y] = ((down[x + 2, y - 1] + down[x, y - 1]) / 2 + down[x - 1, y - 2]) / 2
    return image, edge, out


def _inputs(image_shape):
    rng = np.random.default_rng(5833)
    return {"image": rng.integers(0, 1000, image_shape).astype(np.uint16), "k": 4}


@pytest.mark.parametrize("sizes", [[1, 4], [5, 11], [9, 20]])
def test_boundary_func_at_an_unrolled_loop_inside_gpu_blocks(sizes):
    image, edge, out = _downsample_and_stencil()
    out.split(y, yo, yi, 8, tail=pw.TailStrategy.AUTO)
    out.unroll(yo, 2)
    out.unroll(x, 3)
    out.unroll(yi)
    edge.compute_at(out, yi)
    out.gpu_blocks(yo)
    assert_matches_reference(pw.Pipeline([out]), sizes, _inputs((20, 35)))


@pytest.mark.parametrize("sizes", [[6, 5], [13, 7]])
def test_producer_at_an_unrolled_loop_inside_gpu_threads(sizes):
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    edge = pw.BoundaryConditions.repeat_edge(image)
    blur_x, blur_y = pw.Func("blur_x"), pw.Func("blur_y")
    blur_x[x, y] = (edge[x - 1, y] + edge[x, y] + edge[x + 1, y]) / 3
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3
    blur_y.split(y, yo, yi, 2, tail=pw.TailStrategy.GUARD_WITH_IF).unroll(yi)
    blur_y.gpu_blocks(yo).gpu_threads(x)
    blur_x.compute_at(blur_y, yi)
    edge.compute_at(blur_y, yi)
    image_values = np.random.default_rng(7).integers(0, 1000, (9, 14)).astype(np.uint16)
    assert_matches_reference(pw.Pipeline([blur_y]), sizes, {"image": image_values})
