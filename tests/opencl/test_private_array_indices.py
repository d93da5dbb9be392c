"""Private arrays of a work-item are indexed by constants where the kernel's lets make the
index one, so the OpenCL compiler keeps them in registers (pocl otherwise keeps a copy per
work-item in memory and gathers from it); where the index varies it stays as it was.
Both give the reference's image, at sizes whose last GPU tiles shift inwards."""

import re

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, xi, yi, xu = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi"), pw.Var("xu")


def _gradient_pipeline(unrolled: bool) -> tuple[pw.Func, pw.ImageParam]:
    """Harris's first stages with Halide's GPU schedule: gray in local memory per tile, a
    2-row x 4-column wrapper of gray per work-item in private memory (vectors of 2),
    read by a 3x3 gradient of 2 pixels per work-item."""
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    gray, ix = pw.Func("gray"), pw.Func("Ix")
    gray[x, y] = inp[x + 1, y + 1] * 0.5 + 1.0
    ix[x, y] = (
        gray[x - 1, y - 1] * -1.0 + gray[x + 1, y - 1]
        + gray[x - 1, y] * -2.0 + gray[x + 1, y] * 2.0
        + gray[x - 1, y + 1] * -1.0 + gray[x + 1, y + 1]
    )  # fmt: skip
    ix.tile(x, y, xi, yi, 14, 6).split(xi, xi, xu, 2).unroll(xu).gpu_blocks(x, y).gpu_threads(xi, yi)
    gray.compute_at(ix, x).gpu_threads(x, y)
    wrapper = gray.in_(ix).compute_at(ix, xi).vectorize(x, 2)
    if unrolled:
        wrapper.unroll(x).unroll(y)
    return ix, inp


def _private_accesses(source: str) -> list[str]:
    """The index of every access to a private array of the kernel source."""
    names = re.findall(r"^\s+float (\w+)\[\d+\];$", source, re.MULTILINE)
    assert names, "the schedule puts a private array in the kernel"
    found = []
    for name in names:
        found += re.findall(rf"(?<!float ){name}\[([^\]]*)\]", source)
        found += re.findall(rf"\b{name} \+ (.*?)\);", source)
    return found


@pytest.mark.parametrize("sizes", [(14, 6), (31, 13), (45, 20)], ids=str)
def test_unrolled_wrapper_indices_are_constants(sizes, rng) -> None:
    out, inp = _gradient_pipeline(unrolled=True)
    data = rng.uniform(-10, 10, (sizes[1] + 4, sizes[0] + 4)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), list(sizes), {"input": data})
    accesses = _private_accesses(fn.native.kernel_source)
    assert len(accesses) >= 12  # 4 vector stores and 6 x 2 loads
    assert all(re.fullmatch(r"\(\(int\)\d+L\)", a) for a in accesses), accesses


def test_a_wrapper_indexed_by_a_loop_keeps_its_varying_index(rng) -> None:
    out, inp = _gradient_pipeline(unrolled=False)
    data = rng.uniform(-10, 10, (24, 35)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), [31, 20], {"input": data})
    accesses = _private_accesses(fn.native.kernel_source)
    assert any(not re.fullmatch(r"\(\(int\)\d+L\)", a) for a in accesses), accesses
