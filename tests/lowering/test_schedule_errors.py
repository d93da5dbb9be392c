"""One test per impossible schedule: each is rejected before any code is generated, with
a message that says what is wrong and, where it helps, what is legal."""

from __future__ import annotations

import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw


def two_stage():
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = inp[x, y] * 2
    g[x, y] = f[x, y] + f[x + 1, y]
    return f, g, x, y


def test_compute_at_a_loop_the_consumer_does_not_have():
    f, g, x, y = two_stage()
    f.compute_at(g, pw.Var("z"))
    with pytest.raises(ScheduleError, match=r"`g` has no loop named z, so Func `f` cannot be computed or stored there \(compute_at\(`g`, z\)\); "
        r"its loops are g\.x, g\.y"):
        pw.Pipeline(g).loop_nest()


def test_compute_at_a_func_that_does_not_use_it():
    x = pw.Var("x")
    inp = pw.ImageParam(pw.UInt(8), 1, "input")
    f, g, h = pw.Func("f"), pw.Func("g"), pw.Func("h")
    f[x] = inp[x]
    g[x] = f[x] + 1
    h[x] = g[x] + f[x]
    f.compute_at(g, x)
    g.compute_root()
    with pytest.raises(ScheduleError, match=r"Func `f` cannot be computed at loop x of `g` \(compute_at\(`g`, x\)\): that loop does not "
        r"enclose every use of `f`; legal compute levels for `f` are: compute_root\(\)$"):
        pw.Pipeline(h).loop_nest()


def test_storage_inside_computation():
    f, g, x, y = two_stage()
    f.compute_at(g, y).store_at(g, x)
    with pytest.raises(
        ScheduleError, match=r"Func `f` cannot be stored at loop x of `g` \(store_at\(`g`, x\)\): that is not at or outside where "
        r"it is computed \(at loop y of `g`\); legal store levels for `f` are: store_root\(\), store_at\(`g`, y\)$"
    ):
        pw.Pipeline(g).loop_nest()


def test_store_at_with_compute_root():
    f, g, x, y = two_stage()
    f.compute_root().store_at(g, y)
    with pytest.raises(ScheduleError, match=r"not at or outside where it is computed \(at the root\)"):
        pw.Pipeline(g).loop_nest()


def test_vectorize_a_dimension_of_non_constant_extent():
    f, g, x, y = two_stage()
    g.vectorize(x)
    with pytest.raises(ScheduleError, match=r"cannot vectorize loop x of Func `g`: its extent .* is not a constant"):
        pw.Pipeline(g).lowered_stmt()


def test_unroll_a_dimension_of_non_constant_extent():
    f, g, x, y = two_stage()
    g.unroll(y)
    with pytest.raises(ScheduleError, match=r"cannot unroll loop y of Func `g`"):
        pw.Pipeline(g).lowered_stmt()


def test_nested_unrolls_beyond_the_copies_limit_are_refused():
    """Each loop within the per-loop limit, but 16 x 16 x 2 copies of one body: refused at
    once (it compiled for 85 s), while 16 x 16 copies still unroll."""
    f, g, x, y = two_stage()
    xo, xi, yo, yi = pw.Var("xo"), pw.Var("xi"), pw.Var("yo"), pw.Var("yi")
    g.split(x, xo, xi, 16).split(y, yo, yi, 16).unroll(xi).unroll(yi).unroll(xo, 2)
    with pytest.raises(ScheduleError, match=r"refusing to unroll .* 512 copies of one body \(at most 256\)"):
        pw.Pipeline(g).lowered_stmt()
    f, g, x, y = two_stage()
    g.split(x, xo, xi, 16).split(y, yo, yi, 16).unroll(xi).unroll(yi)
    assert pw.Pipeline(g).lowered_stmt().count("g[") >= 256


def test_parallel_reduction_variable():
    x = pw.Var("x")
    inp = pw.ImageParam(pw.UInt(8), 1, "input")
    r = pw.RDom([(0, 10)], name="r")
    total = pw.Func("total")
    total[x] = 0
    total[x] += pw.i32(inp[r.x + x])
    with pytest.raises(ScheduleError, match=r"cannot parallelize reduction variable r\$x of update 0 of Func `total`"):
        total.update(0).parallel(r.x)
    with pytest.raises(ScheduleError, match=r"cannot vectorize reduction variable"):
        total.update(0).vectorize(r.x, 8)
    total.update(0).parallel(x)  # a pure variable of an update may be parallel


def test_schedule_naming_an_unknown_var():
    f, g, x, y = two_stage()
    with pytest.raises(
        ScheduleError, match=r"Func `g` has no dimension named q; its loops are \(outermost first\) y, x"
    ):
        g.parallel(pw.Var("q"))


def test_split_factor_must_be_a_positive_constant():
    f, g, x, y = two_stage()
    with pytest.raises(ScheduleError, match=r"split factor .* must be positive"):
        g.split(x, pw.Var("xo"), pw.Var("xi"), 0)
    with pytest.raises(ScheduleError, match=r"must be a positive integer constant"):
        g.vectorize(x, 2.5)


def test_fuse_needs_the_outer_loop_outside_the_inner_one():
    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    f = pw.Func("f")
    f[x, y, c] = x + y + c
    with pytest.raises(ScheduleError, match=r"must be the loop directly outside"):
        f.fuse(c, x, pw.Var("cx"))


def test_gpu_schedule_on_the_host():
    f, g, x, y = two_stage()
    g.gpu_tile(x, y, pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi"), 16, 16)
    with pytest.raises(ScheduleError, match=r"maps loop .* to the GPU .* needs target='opencl'"):
        pw.Pipeline(g).loop_nest()


def test_output_cannot_be_computed_at():
    f, g, x, y = two_stage()
    h = pw.Func("h")
    h[x, y] = g[x, y]
    g.compute_at(h, x)
    with pytest.raises(ScheduleError, match=r"`g` is an output of the pipeline, so it is always computed at the root"):
        pw.Pipeline([g, h]).loop_nest()


def test_inline_func_with_loop_schedule():
    f, g, x, y = two_stage()
    f.vectorize(x, 8)
    with pytest.raises(ScheduleError, match=r"`f` is computed inline, so its loops cannot be scheduled"):
        pw.Pipeline(g).loop_nest()


def test_compute_inline_of_a_reduction():
    x = pw.Var("x")
    r = pw.RDom([(0, 4)])
    f = pw.Func("f")
    f[x] = 0
    f[x] += r.x
    with pytest.raises(ScheduleError, match=r"cannot be computed inline because it has update definitions"):
        f.compute_inline()


def test_update_index_out_of_range():
    f, g, x, y = two_stage()
    with pytest.raises(ScheduleError, match=r"Func `g` has 0 update definitions, not an update 0"):
        g.update(0)


def test_reorder_storage_must_list_every_dimension():
    f, g, x, y = two_stage()
    with pytest.raises(ScheduleError, match=r"reorder_storage of `f` must list each of its dimensions \(x, y\) once"):
        f.reorder_storage(y)


def test_bound_of_an_unknown_dimension():
    f, g, x, y = two_stage()
    with pytest.raises(ScheduleError, match=r"no pure dimension c to bound"):
        g.bound(pw.Var("c"), 0, 3)


def test_unbounded_producer_region():
    x = pw.Var("x")
    inp = pw.ImageParam(pw.Int(32), 1, "input")
    lut, out = pw.Func("lut"), pw.Func("out")
    lut[x] = x * 2
    out[x] = lut[inp[x]]
    lut.compute_root()
    with pytest.raises(ScheduleError, match=r"cannot bound the region of `lut`"):
        pw.Pipeline(out).loop_nest()


def test_shift_inwards_in_an_update():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x
    f[x] = f[x] + 1
    with pytest.raises(ScheduleError, match=r"update 0 of Func `f` cannot use TailStrategy.ShiftInwards.*RoundUp"):
        f.update(0).split(x, pw.Var("xo"), pw.Var("xi"), 4, pw.TailStrategy.ShiftInwards)


def test_round_up_on_a_reduction_variable():
    x = pw.Var("x")
    r = pw.RDom([(0, 10)])
    f = pw.Func("f")
    f[x] = 0
    f[x] += r.x
    with pytest.raises(ScheduleError, match=r"cannot use TailStrategy.RoundUp: .* reduction variable.*GuardWithIf"):
        f.update(0).split(r.x, pw.RVar("ro"), pw.RVar("ri"), 4, pw.TailStrategy.RoundUp)


def test_storage_outside_a_parallel_loop_the_computation_is_inside():
    f, g, x, y = two_stage()
    g.parallel(y)
    f.store_root().compute_at(g, y)
    with pytest.raises(ScheduleError, match=r"`f` is stored outside the parallel loop y of `g` \(store_root\(\)\) but computed inside it"):
        pw.Pipeline(g).loop_nest()


def test_refusals_about_an_output_that_other_stages_read_use_the_name_its_author_gave():
    """Such an output is computed into scratch storage under an internal name; refusals
    show only the names the schedule uses."""
    x, y = pw.Var("x"), pw.Var("y")
    g, out, h = pw.Func("g"), pw.Func("out"), pw.Func("h")
    g[x, y] = x + y
    out[x, y] = g[x, y] * 2
    h[x, y] = out[x, y] + out[x + 1, y]
    out.unroll(x)
    with pytest.raises(ScheduleError, match=r"^cannot unroll loop x of Func `out`: its extent \(") as unrolled:
        pw.Pipeline([out, h]).compile(level="fast")
    out.serial(x)
    g.compute_at(out, pw.Var("xo"))
    with pytest.raises(ScheduleError, match=r"`out` has no loop named xo, .*compute_at\(`out`, xo\).*out\.x") as at:
        pw.Pipeline([out, h]).compile(level="fast")
    assert "_computed" not in str(unrolled.value) + str(at.value)
