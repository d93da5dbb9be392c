"""What the OpenCL backend simplifies in kernels, each checked against the reference at
sizes with tails: the serial loops of a pure definition outside GPU loops (the copy into a
bound() output) run across work-items; a loop of one iteration is a let; an address's
min/max clamp that no work-item reaches is dropped, one that some work-item reaches kept."""

import re

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
xo, yo, xi, yi = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi")


def _kernels(source: str) -> list[str]:
    return re.split(r"(?=^__attribute__|^__kernel)", source, flags=re.MULTILINE)[1:]


@pytest.mark.parametrize("sizes", [(16, 8), (70, 9)], ids=str)
def test_the_copy_into_a_bound_output_runs_across_work_items(sizes, rng) -> None:
    inp = pw.ImageParam(pw.Float(32), 3, "input")
    out = pw.Func("out")
    out[x, y, c] = inp[x, y, c] * 2.0 + 1.0
    out.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 8, 4).bound(c, 0, 3).unroll(c)
    data = rng.uniform(-5, 5, (3, sizes[1], sizes[0])).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), [*sizes, 3], {"input": data})
    kernels = _kernels(fn.native.kernel_source)
    assert len(kernels) == 2  # the Func, and the copy of its storage into the output
    assert all("get_local_id(0)" in k and "for (" not in k for k in kernels), kernels


def test_an_update_without_a_gpu_schedule_stays_on_one_work_item(rng) -> None:
    inp = pw.ImageParam(pw.Int(32), 1, "input")
    f, g = pw.Func("f"), pw.Func("g")
    f[x] = inp[x]
    r = pw.RDom([(1, 40)])
    f[r.x] = f[r.x - 1] + f[r.x]  # a scan: its points depend on each other
    f.compute_root()
    g[x] = f[x] * 3
    g.gpu_tile(x, xo, xi, 8)
    data = rng.integers(-1000, 1000, 41).astype(np.int32)
    fn = assert_matches_reference(pw.Pipeline(g), [41], {"input": data})
    scan = [k for k in _kernels(fn.native.kernel_source) if "get_local_id" not in k]
    assert scan and all("for (" in k for k in scan), fn.native.kernel_source


def _paired_tile(width: int) -> tuple[pw.Func, pw.ImageParam]:
    """blur_y per tile in local memory, 2 neighbouring pixels per work-item (unsharp's
    schedule); its x extent per tile is width + 2."""
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    by, out = pw.Func("by"), pw.Func("out")
    by[x, y] = inp[x, y] + inp[x, y + 1] * 2.0
    out[x, y] = by[x, y] + by[x + 2, y]
    out.gpu_tile(x, y, xo, yo, xi, yi, width, 4)
    by.compute_at(out, xo).unroll(x, 2).gpu_threads(x, y)
    return out, inp


def _pair_base(source: str) -> str:
    """The definition of by's per-work-item x (the first of its pair)."""
    definitions = dict(re.findall(r"^\s+int (\w+) = (.*);$", source, re.MULTILINE))
    name = re.search(r"^\s+int (by_s0_x_\d+) = ", source, re.MULTILINE).group(1)
    text = definitions[name]
    while text in definitions:
        text = definitions[text]
    return text


def test_a_clamp_no_work_item_reaches_is_dropped(rng) -> None:
    out, inp = _paired_tile(8)  # by's tile is 10 wide: 5 pairs, none shifted inwards
    data = rng.uniform(-5, 5, (14, 45)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), [43, 10], {"input": data})
    assert "?" not in _pair_base(fn.native.kernel_source), fn.native.kernel_source


def test_a_clamp_a_work_item_reaches_is_kept(rng) -> None:
    out, inp = _paired_tile(7)  # by's tile is 9 wide: the last pair shifts inwards
    data = rng.uniform(-5, 5, (14, 45)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), [43, 10], {"input": data})
    assert "?" in _pair_base(fn.native.kernel_source), fn.native.kernel_source


def test_a_func_computed_per_point_has_no_loop(rng) -> None:
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    ratio, out = pw.Func("ratio"), pw.Func("out")
    ratio[x, y] = inp[x, y] / (inp[x + 1, y] + 3.0)
    out[x, y, c] = ratio[x, y] * (c + 1)
    out.reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 8, 4).bound(c, 0, 3).unroll(c)
    ratio.compute_at(out, xi)
    data = rng.uniform(1, 5, (9, 30)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline(out), [29, 9, 3], {"input": data})
    main = next(k for k in _kernels(fn.native.kernel_source) if "ratio" in k)
    assert "for (" not in main, main


def _vector_tile(tile: int) -> tuple[pw.Func, pw.ImageParam]:
    """The 4-lane blur: bx per tile in local memory, 4 neighbouring pixels per work-item."""
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    bx, by = pw.Func("bx"), pw.Func("by")
    xv = pw.Var("xv")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
    by.tile(x, y, xo, yo, xi, yi, tile, 4).split(xi, xi, xv, 4).vectorize(xv).gpu_blocks(xo, yo).gpu_threads(xi, yi)
    bx.compute_at(by, xo).split(x, x, xv, 4).vectorize(xv).gpu_threads(x, y)
    return by, inp


@pytest.mark.parametrize("tile, aligned", [(16, True), (6, False)], ids=["16-wide", "6-wide"])
def test_local_vectors_at_multiples_of_their_width_are_aligned_accesses(tile, aligned, rng) -> None:
    """A 16-wide tile's vectors start at multiples of 4 in local memory: whole aligned
    vectors. A 6-wide tile's last vector shifts inwards to an odd start: vload/vstore."""
    out, inp = _vector_tile(tile)
    data = rng.integers(0, 65536, (23, 47)).astype(np.uint16)
    fn = assert_matches_reference(pw.Pipeline(out), [45, 21], {"input": data})
    source = fn.native.kernel_source
    assert re.search(r"__attribute__\(\(aligned\(\d+\)\)\) __local ushort bx_\d+\[", source), source
    whole = re.findall(r"\*\(\(__local ushort4 \*\)\(bx_\d+ \+", source)
    element = re.findall(r"v(?:load|store)4\((?:t_\d+, )?0, bx_\d+ \+", source)
    if aligned:
        assert len(whole) == 4 and not element, source  # one store, three loads
    else:
        assert not whole and len(element) == 4, source
