"""bound_extent, align_bounds and align_extent against Halide 21: the same programs and
schedules give the same images, the region computed is widened or fixed as asked, and a
read beyond a bound_extent raises instead of reading unwritten storage."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure, ScheduleError

import pixelweave as pw
from tests.language.halide_compare import check


def _tiled_stencil(m):
    x, y = m.Var("x"), m.Var("y")
    f = m.Func("f")
    f[x, y] = x * 3 + y * 5
    g = m.Func("g")
    g[x, y] = f[x - 1, y] + f[x + 1, y] * 2
    xo, xi = m.Var("xo"), m.Var("xi")
    g.split(x, xo, xi, 8)
    return {"f": f, "g": g, "out": g, "x": x, "y": y, "xo": xo}


def _fixed_extent_unrolled(m):
    funcs = _tiled_stencil(m)
    funcs["f"].compute_at(funcs["g"], funcs["xo"]).bound_extent(funcs["x"], 10).unroll(funcs["x"])
    return funcs


def _fixed_extent_vectorized(m):
    funcs = _tiled_stencil(m)
    funcs["f"].compute_at(funcs["g"], funcs["xo"]).bound_extent(funcs["x"], 16).vectorize(funcs["x"])
    return funcs


def _aligned(m):
    funcs = _tiled_stencil(m)
    funcs["f"].compute_root().align_bounds(funcs["x"], 8, 3)
    return funcs


def _aligned_extent(m):
    funcs = _tiled_stencil(m)
    funcs["f"].compute_at(funcs["g"], funcs["xo"]).align_extent(funcs["x"], 4)
    return funcs


@pytest.mark.parametrize("build", [_fixed_extent_unrolled, _fixed_extent_vectorized, _aligned, _aligned_extent])
def test_same_image_as_halide(build):
    check(build, [24, 3])
    funcs = build(pw)
    pipeline = pw.Pipeline(funcs["out"])
    out = pipeline.compile(checked=True)([24, 3])
    np.testing.assert_array_equal(out, pipeline.realize_reference([24, 3]))


def test_a_constant_extent_lets_the_loop_be_unrolled_or_vectorized_without_a_split():
    assert "unrolled x:" in pw.Pipeline(_fixed_extent_unrolled(pw)["out"]).loop_nest()
    assert "vectorized x:" in pw.Pipeline(_fixed_extent_vectorized(pw)["out"]).loop_nest()
    assert ", 1, 16)] = ramp(" in pw.Pipeline(_fixed_extent_vectorized(pw)["out"]).lowered_stmt()
    # Without bound_extent the region per tile is also 10 wide (its bounds are lets of
    # constant difference): it unrolls, as in Halide. At the root its extent is the output's.
    def unrolled_per_tile(m):
        funcs = _tiled_stencil(m)
        funcs["f"].compute_at(funcs["g"], funcs["xo"]).unroll(funcs["x"])
        return funcs

    check(unrolled_per_tile, [24, 3])
    funcs = _tiled_stencil(pw)
    funcs["f"].compute_root().unroll(funcs["x"])
    with pytest.raises(ScheduleError, match="not a constant"):
        pw.Pipeline(funcs["out"]).compile()


def test_alignment_widens_the_region_computed():
    from pixelweave.engine.tracing import set_trace_handler

    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    g = pw.Func("g")
    g[x] = f[x + 1]  # g over [0, 6) reads f over [1, 6]
    f.compute_root().align_bounds(x, 4, 3).trace_realizations()
    events = []
    set_trace_handler(events.append)
    try:
        out = pw.Pipeline(g).compile(checked=True)([6], None)
    finally:
        set_trace_handler(None)
    np.testing.assert_array_equal(out, 2 * np.arange(1, 7))
    begins = [e.coordinates for e in events if e.event == "begin_realization" and e.func == "f"]
    assert begins == [(-1, 8)]  # min -1 is 3 modulo 4, extent 8 a multiple of 4, covers [1, 6]


def test_reading_beyond_a_bound_extent_raises():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    g = pw.Func("g")
    g[x] = f[x + 1]
    f.compute_root().bound_extent(x, 3)
    with pytest.raises(
        RuntimeFailure, match=r"Func `f` is read over \[1, 6\] in x.*outside the bound_extent\(x, \.\.\.\)"
    ):
        pw.Pipeline(g).compile()([6], None)
    np.testing.assert_array_equal(pw.Pipeline(g).compile()([3], None), [2, 4, 6])


def test_a_bound_extent_on_an_output_is_a_promise_about_the_request():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    f.bound_extent(x, 8)
    np.testing.assert_array_equal(pw.Pipeline(f).compile()([8]), 2 * np.arange(8))
    np.testing.assert_array_equal(pw.Pipeline(f).compile()([5]), 2 * np.arange(5))
    with pytest.raises(RuntimeFailure, match="outside the bound_extent"):
        pw.Pipeline(f).compile()([9])


def test_bad_arguments_are_refused_with_the_func_and_the_directive():
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x] = x
    with pytest.raises(ScheduleError, match="bound_extent of Func `f` needs one of its pure dimensions \\(x\\), got y"):
        f.bound_extent(y, 4)
    with pytest.raises(ScheduleError, match=r"bound_extent\(x\) of `f` must be positive, got 0"):
        f.bound_extent(x, 0)
    with pytest.raises(ScheduleError, match=r"modulus given to align_bounds\(x\) of `f` must be a positive int"):
        f.align_bounds(x, 0)
    with pytest.raises(ScheduleError, match=r"remainder given to align_bounds\(x\) of `f` must be an int"):
        f.align_bounds(x, 4, 1.5)
    with pytest.raises(ScheduleError, match=r"modulus given to align_extent\(x\) of `f` must be a positive int"):
        f.align_extent(x, "4")


def test_a_fixed_extent_that_the_updates_exceed_is_refused():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = 0
    r = pw.RDom([(0, 20)])
    f[r.x] = f[r.x] + r.x
    g = pw.Func("g")
    g[x] = f[x]
    f.compute_root().bound_extent(x, 4)
    with pytest.raises(ScheduleError, match=r"bound_extent\(x, 4\) of Func `f`: its update definitions write"):
        pw.Pipeline(g).compile()


def test_directives_survive_a_schedule_snapshot_and_show_in_the_schedule_text():
    from pixelweave.engine.autoschedule.directives import current_schedule_text

    funcs = _tiled_stencil(pw)
    f, x = funcs["f"], funcs["x"]
    f.compute_root().bound_extent(x, 12).align_bounds(x, 4, 2)
    snapshot = f.schedule_snapshot()
    f.clear_schedule()
    assert not f.schedule_of().bound_extents
    f.restore_schedule(snapshot)
    assert f.schedule_of().bound_extents == {"x": 12} and f.schedule_of().alignments == {"x": (4, 2)}
    text = current_schedule_text(pw.Pipeline(funcs["out"]))
    assert "bound_extent(x, 12)" in text and "align_bounds(x, 4, 2)" in text


def _storage_aligned(m):
    funcs = _tiled_stencil(m)
    funcs["f"].compute_root().align_storage(funcs["x"], 16)
    return funcs


def test_align_storage_pads_the_extent_and_gives_the_same_image_as_halide():
    check(_storage_aligned, [21, 5])
    pipeline = pw.Pipeline(_storage_aligned(pw)["out"])
    extent = next(line for line in pipeline.lowered_stmt().splitlines() if "let f.extent.0 = " in line)
    assert extent.endswith("/ 16) * 16)")
    out = pipeline.compile(checked=True)([21, 5])
    np.testing.assert_array_equal(out, pipeline.realize_reference([21, 5]))
    with pytest.raises(ScheduleError, match=r"modulus given to align_storage\(x\) of `f` must be a positive int"):
        _tiled_stencil(pw)["f"].align_storage(pw.Var("x"), 0)


def test_padding_that_would_overflow_32_bit_indexing_is_refused():
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = pw.u8(x + y)
    g = pw.Func("g")
    g[x, y] = f[x, y]
    # 30000 rows of 65537 u8 values fit in 2 GiB; padded to 131072 per row they do not
    f.compute_root().bound(x, 0, 65537).bound(y, 0, 30000).align_storage(x, 65536)
    with pytest.raises(
        RuntimeFailure, match=r"the storage of `f` would need at least \d+ bytes \(131072 x 30000 elements of uint8\)"
    ):
        pw.Pipeline(g).compile()([4, 4])
