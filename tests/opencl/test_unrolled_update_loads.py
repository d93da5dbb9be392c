"""An update unrolled over its reduction domain on target 'opencl': each unrolled copy of
the body must read the value the previous copy stored. The unroll pass repeats the very same
body in each copy (a LetStmt per copy), so the copies may share the Load node of the Func's
own value; a kernel that reused the temporary loaded before the previous copy's store lost
every copy but the last (the max test; found by the GPU fuzz campaign, seed 7000116). The
other two cover the stores of GPU threads and of vectors."""

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y = pw.Var("x"), pw.Var("y")


def _image(shape):
    return {"image": np.random.default_rng(116).integers(0, 1000, shape).astype(np.uint16)}


@pytest.mark.parametrize("sizes", [[1, 1], [3, 5]])
def test_unrolled_max_update_without_a_gpu_schedule(sizes):
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    edge = pw.BoundaryConditions.repeat_image(image)
    out = pw.Func("out")
    r = pw.RDom([(0, 1), (0, 2)])
    out[x, y] = pw.u16(0)
    out[x, y] = pw.max(out[x, y], edge[x + r.x, y + r.y])
    out.update(0).unroll(r.y)
    assert_matches_reference(pw.Pipeline([out]), sizes, _image((2, 2)))


@pytest.mark.parametrize("sizes", [[7, 3], [16, 5]])
def test_unrolled_sum_update_in_gpu_threads(sizes):
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    edge = pw.BoundaryConditions.repeat_edge(image)
    out = pw.Func("out")
    r = pw.RDom([(0, 1), (-1, 3)])
    out[x, y] = pw.u16(0)
    out[x, y] += edge[x + r.x, y + r.y]
    xo, xi = pw.Var("xo"), pw.Var("xi")
    out.gpu_tile(x, xo, xi, 4)
    out.update(0).unroll(r.y).gpu_tile(x, xo, xi, 4, tail=pw.TailStrategy.GUARD_WITH_IF)
    assert_matches_reference(pw.Pipeline([out]), sizes, _image((6, 9)))


def test_unrolled_update_with_vector_stores():
    image = pw.ImageParam(pw.Float(32), 2, "image")
    out = pw.Func("out")
    r = pw.RDom([(0, 1), (0, 3)])
    out[x, y] = pw.f32(1)
    out[x, y] = out[x, y] * 0.5 + image[x + r.x, y + r.y]
    xo, xi = pw.Var("xo"), pw.Var("xi")
    out.update(0).split(x, xo, xi, 4).vectorize(xi).unroll(r.y).gpu_blocks(xo)
    values = np.random.default_rng(3).random((10, 12)).astype(np.float32)
    assert_matches_reference(pw.Pipeline([out]), [8, 6], {"image": values}, exact=False)
