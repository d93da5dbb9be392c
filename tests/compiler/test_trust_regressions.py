"""Regression tests for the "Trustworthy under every schedule" issue: one test per numbered
case, each comparing compiled output with the reference evaluator (or, for a schedule
Halide refuses, checking that the refusal names the Func, the directive and what is legal)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure, ScheduleError

import pixelweave as pw


def same(pipeline: pw.Pipeline, sizes: list[int], inputs: dict | None = None) -> np.ndarray:
    ours = pipeline.compile(level="fast")(sizes, inputs or {})
    ref = pipeline.realize_reference(sizes, inputs or {})
    np.testing.assert_array_equal(ours, ref)
    return ours


def test_case1_compute_root_store_root_is_redundant_but_legal():
    x = pw.Var("x")
    g, f = pw.Func("g"), pw.Func("f")
    g[x] = x * 2
    f[x] = g[x] + g[x + 1]
    g.compute_root().store_root()
    out = same(pw.Pipeline(f), [10])
    np.testing.assert_array_equal(out, 4 * np.arange(10) + 2)


def test_case2_update_splits_refuse_tails_that_change_the_result():
    x = pw.Var("x")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f = pw.Func("f")
    f[x] = x
    f[x] = f[x] * 2 + 1
    with pytest.raises(
        ScheduleError,
        match=r"split of x in update 0 of Func `f` cannot use TailStrategy.ShiftInwards: it computes some points "
        r"twice.*legal tail strategies here are RoundUp, GuardWithIf and Auto",
    ):
        f.update(0).split(x, xo, xi, 4, pw.TailStrategy.ShiftInwards)
    total = pw.Func("total")
    r = pw.RDom([(0, 10)])
    total[x] = 0
    total[x] += r.x
    ro, ri = pw.RVar("ro"), pw.RVar("ri")
    for tail in (pw.TailStrategy.RoundUp, pw.TailStrategy.ShiftInwards):
        with pytest.raises(
            ScheduleError,
            match=r"split of r\d*\$x in update 0 of Func `total` cannot use TailStrategy.\w+: .* is a reduction "
            r"variable.*legal tail strategies for it are GuardWithIf and Auto",
        ):
            total.update(0).split(r.x, ro, ri, 4, tail)


@pytest.mark.parametrize("tail", [pw.TailStrategy.Auto, pw.TailStrategy.RoundUp, pw.TailStrategy.GuardWithIf])
def test_case2_legal_update_tails_compute_the_reference(tail):
    x = pw.Var("x")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f, out = pw.Func("f"), pw.Func("out")
    f[x] = x
    f[x] = f[x] * 2 + 1
    out[x] = f[x]
    f.compute_root().update(0).split(x, xo, xi, 4, tail)
    np.testing.assert_array_equal(same(pw.Pipeline(out), [10]), 2 * np.arange(10) + 1)


@pytest.mark.parametrize("tail", [pw.TailStrategy.Auto, pw.TailStrategy.GuardWithIf])
def test_case2_rvar_split_counts_each_iteration_once(tail):
    x = pw.Var("x")
    total = pw.Func("total")
    r = pw.RDom([(0, 10)])
    total[x] = 0
    total[x] += r.x + x
    ro, ri = pw.RVar("ro"), pw.RVar("ri")
    total.update(0).split(r.x, ro, ri, 4, tail)
    np.testing.assert_array_equal(same(pw.Pipeline(total), [3]), 45 + 10 * np.arange(3))


@pytest.mark.parametrize("width", [61, 64, 3])
def test_case3_vectorized_update_of_an_output_of_any_width(width):
    x = pw.Var("x")
    col = pw.Func("col")
    r = pw.RDom([(0, 3)])
    col[x] = x
    col[x] += r.x * x
    col.update(0).vectorize(x, 8)
    np.testing.assert_array_equal(same(pw.Pipeline(col), [width]), 4 * np.arange(width))


def test_case3_round_up_split_of_an_output_computes_the_requested_region():
    x, y = pw.Var("x"), pw.Var("y")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f = pw.Func("f")
    f[x, y] = x * 10 + y
    f.split(x, xo, xi, 8, pw.TailStrategy.RoundUp).vectorize(xi)
    same(pw.Pipeline(f), [13, 3])


def test_case3_refusals_name_the_output_not_its_scratch_storage():
    x, y = pw.Var("x"), pw.Var("y")
    xo, xi = pw.Var("xo"), pw.Var("xi")
    g, out = pw.Func("g"), pw.Func("out")
    g[x, y] = x + y
    out[x, y] = g[x, y] + g[x, y + 1]
    out.split(x, xo, xi, 8, pw.TailStrategy.RoundUp)
    g.compute_at(out, xo).store_at(out, xi)
    with pytest.raises(ScheduleError, match=r"Func `g` cannot be stored at loop xi of `out` \(store_at\(`out`, xi\)\): that is not at or outside") as err:
        pw.Pipeline(out).compile(level="fast")
    assert "computed" not in str(err.value).split("legal")[1]


def _three_stage():
    x, y = pw.Var("x"), pw.Var("y")
    g, f, out = pw.Func("g"), pw.Func("f"), pw.Func("out")
    g[x, y] = x + y * 3
    f[x, y] = g[x, y] + g[x + 1, y]
    out[x, y] = f[x, y] + f[x, y + 1]
    return g, f, out, x, y


def test_case4_fuse_after_vectorize_inside_a_func_computed_at_another():
    g, f, out, x, y = _three_stage()
    xo, xi, xy = pw.Var("xo"), pw.Var("xi"), pw.Var("xy")
    out.split(x, xo, xi, 8)
    f.compute_at(out, xo).store_at(out, y).vectorize(x, 4).fuse(x, y, xy)
    same(pw.Pipeline(out), [61, 7])


def test_case4_fuse_after_split_with_a_sliding_window():
    g, f, out, x, y = _three_stage()
    xo, yo, xi, yi = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi")
    out.tile(x, y, xo, yo, xi, yi, 8, 2)
    fx, fi, fu = pw.Var("fx"), pw.Var("fi"), pw.Var("fu")
    f.compute_at(out, yi).store_at(out, yo).split(x, fx, fi, 4).fuse(fx, y, fu)
    g.compute_root()
    same(pw.Pipeline(out), [8, 5])


def test_case4_fuse_whose_extent_varies_with_the_consumer_loop_is_accepted():
    # Once refused: "a coordinate used to call it has no bounds".
    x, y = pw.Var("x"), pw.Var("y")
    g, f, out = pw.Func("g"), pw.Func("f"), pw.Func("out")
    g[x, y] = x + y * 3
    f[x, y] = g[x, y] + g[x + 1, y]
    out[x, y] = f[x + y, y] + f[x, y + 1]
    f.compute_at(out, y).fuse(x, y, pw.Var("fu"))
    g.compute_root()
    same(pw.Pipeline(out), [10, 6])


@pytest.mark.parametrize("level", ["y", "x"])
def test_case4_producer_computed_inside_a_fused_loop(level):
    g, f, out, x, y = _three_stage()
    fu = pw.Var("fu")
    f.compute_at(out, level).fuse(x, y, fu)
    g.compute_at(f, fu)
    same(pw.Pipeline(out), [13, 5])


def _sliding_pair():
    x, y = pw.Var("x"), pw.Var("y")
    h, out = pw.Func("h"), pw.Func("out")
    h[x, y] = x + y * 7
    out[x, y] = h[x, y] + h[x + 1, y + 1]
    return h, out, x, y


def test_case5_storage_shared_by_the_iterations_of_a_parallel_loop_is_refused():
    h, out, x, y = _sliding_pair()
    out.parallel(x)
    h.store_at(out, y).compute_at(out, x)
    with pytest.raises(
        ScheduleError,
        match=r"Func `h` is stored outside the parallel loop x of `out` \(store_at\(`out`, y\)\) but computed "
        r"inside it \(compute_at\(`out`, x\)\).*legal store levels for `h` computed there are: store_at\(`out`, x\)",
    ):
        pw.Pipeline(out).compile(level="fast")
    h, out, x, y = _sliding_pair()
    out.parallel(y)
    h.store_root().compute_at(out, x)
    with pytest.raises(ScheduleError, match=r"outside the parallel loop y of `out` .* are: store_at\(`out`, y\), store_at\(`out`, x\)"):
        pw.Pipeline(out).compile(level="fast")


def test_case5_storage_inside_the_parallel_loop_is_legal():
    h, out, x, y = _sliding_pair()
    out.parallel(y)
    h.store_at(out, y).compute_at(out, x)
    same(pw.Pipeline(out), [16, 16])


def test_case6_bound_of_an_output_smaller_than_the_request_is_a_runtime_failure():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x
    f.bound(x, 0, 1)
    fn = pw.Pipeline(f).compile(level="fast")
    with pytest.raises(
        RuntimeFailure,
        match=r"Func `f` is requested or read over \[0, 9\] in x .*outside the bound\(x, ...\) "
        r"it was given, \[0, 0\]",
    ):
        fn([10], {})
    np.testing.assert_array_equal(fn([1], {}), [0])


def test_case6_bound_of_an_output_larger_than_the_request_computes_the_request():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 3
    f.bound(x, 0, 10)
    np.testing.assert_array_equal(same(pw.Pipeline(f), [4]), [0, 3, 6, 9])


def test_case7_augmented_assignment_to_a_saved_reference_builds_an_expression():
    x = pw.Var("x")
    f, g = pw.Func("f"), pw.Func("g")
    f[x] = x
    ref = f[x]
    ref += 10
    ref += 1
    g[x] = ref
    assert f.num_update_definitions() == 0 and g.defined()
    np.testing.assert_array_equal(same(pw.Pipeline(g), [5]), np.arange(5) + 11)


def test_case7_augmented_assignment_to_a_func_is_still_an_update():
    x = pw.Var("x")
    f, total = pw.Func("f"), pw.Func("total")
    f[x] = pw.u8(x)
    f[x] += 3
    f[x] *= 2
    total[x] += pw.i32(x) * 2  # an undefined Func starts from the identity
    assert f.num_update_definitions() == 2 and total.num_update_definitions() == 1
    np.testing.assert_array_equal(same(pw.Pipeline(f), [4]), [6, 8, 10, 12])
    np.testing.assert_array_equal(same(pw.Pipeline(total), [3]), [0, 2, 4])


@pytest.mark.parametrize(("rounding", "size", "last"), [(pw.round, 46, 96), (pw.floor, 91, 189)])
def test_case8_float32_rounded_index_is_bounded_like_the_hardware_rounds(rounding, size, last):
    # float32(45) * float32(0.7) is exactly 31.5 in float32 (rounds to 32) but 31.4999... in
    # float64; the reference's interval analysis must follow float32 arithmetic.
    x = pw.Var("x")
    lut, f = pw.Func("lut"), pw.Func("f")
    lut[x] = x * 3
    f[x] = lut[pw.i32(rounding(pw.f32(x) * pw.f32(0.7)))]
    lut.compute_root()
    out = same(pw.Pipeline(f), [size])
    assert out[-1] == last  # Halide 21 computes the same


def _used_by_two_stages():
    x, y = pw.Var("x"), pw.Var("y")
    p, g, f = pw.Func("p"), pw.Func("g"), pw.Func("f")
    p[x, y] = x * 2 + y
    g[x, y] = p[x, y] + p[x + 2, y]
    f[x, y] = g[x, y]
    f[x, y] += g[x + 1, y - 1]
    return p, g, f, x, y


def test_case9_compute_at_a_consumer_whose_two_stages_use_it():
    p, g, f, x, y = _used_by_two_stages()
    g.compute_at(f, y)
    same(pw.Pipeline(f), [13, 5])
    p, g, f, x, y = _used_by_two_stages()
    g.compute_at(f, y).vectorize(x, 4)
    p.compute_at(g, y)  # a producer of the Func computed once per stage goes with each copy
    f.update(0).vectorize(x, 4)
    same(pw.Pipeline(f), [13, 5])


@pytest.mark.parametrize("store", ["root", "y"])
def test_case9_one_storage_outside_the_per_stage_copies(store):
    p, g, f, x, y = _used_by_two_stages()
    g.compute_at(f, x)
    g.store_root() if store == "root" else g.store_at(f, y)
    p.compute_at(g, y)
    same(pw.Pipeline(f), [13, 9])


def test_case9_storage_inside_the_per_stage_copies_is_refused_clearly():
    p, g, f, x, y = _used_by_two_stages()
    g.compute_at(f, y).store_at(f, x)
    with pytest.raises(
        ScheduleError,
        match=r"Func `g` cannot be stored at loop x of `f` \(store_at\(`f`, x\)\): that is not at or outside where it "
        r"is computed \(loop y of `f`, in each loop of that name that uses it\); legal store levels for `g` are: "
        r"store_root\(\), store_at\(`f`, y\) or a loop of the same consumer outside it",
    ):
        pw.Pipeline(f).compile(level="fast")


def test_case2_auto_tail_of_a_loop_made_by_an_earlier_update_split_is_guarded():
    """Fuzzer seed 777001596: an AUTO split of the inner loop of an update's split rounded it up
    past its extent, applying the update twice to the next outer iteration's rows."""
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    clamped = pw.BoundaryConditions.repeat_edge(image)
    s1 = pw.Func("s1")
    s1[x, y] = clamped[x, y]
    r = pw.RDom([(0, 1), (0, 2)])
    s1[x, y] += clamped[x + r.x, y + r.y]
    s1.update(0).split(y, pw.Var("yo"), pw.Var("yi"), 2, tail=pw.TailStrategy.GUARD_WITH_IF)
    s1.update(0).split(pw.Var("yi"), pw.Var("yio"), pw.Var("yii"), 4)
    pipeline = pw.Pipeline(s1)
    inputs = {"image": np.arange(7 * 5, dtype=np.uint16).reshape(7, 5)}
    np.testing.assert_array_equal(
        pipeline.compile(level="fast", checked=True)([5, 7], inputs), pipeline.realize_reference([5, 7], inputs)
    )


def test_case2_round_up_of_a_loop_made_by_an_earlier_update_split_is_refused():
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = x + y
    f[x, y] += 1
    f.update(0).split(y, pw.Var("yo"), pw.Var("yi"), 2, tail=pw.TailStrategy.GUARD_WITH_IF)
    with pytest.raises(ScheduleError, match=r"cannot use TailStrategy.RoundUp: y.yi comes from an earlier split"):
        f.update(0).split(pw.Var("yi"), pw.Var("yio"), pw.Var("yii"), 4, tail=pw.TailStrategy.ROUND_UP)
