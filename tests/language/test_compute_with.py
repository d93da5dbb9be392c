"""Stage.compute_with / Func.compute_with against Halide 21: fused loop nests compute
Halide's image (and the reference evaluator's) under every LoopAlignStrategy, and what
Halide refuses, or what Pixelweave does not fuse, is refused with the reason."""

from __future__ import annotations

import re

import halide as hl
import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.lower import lower_loop_nest

import pixelweave as pw
from tests.language.halide_compare import assert_same, check

ALIGNS = ["Auto", "AlignStart", "AlignEnd", "NoAlign"]


def _nest(outputs, target: str = "host") -> str:
    """The loop nest with every bound written out."""
    return str(lower_loop_nest(pw.Pipeline(outputs), target))


def _two_producers(align: str = "Auto", fuse_at: str = "y", schedule=None):
    """f and g feed out, which reads g over a shifted, half-size region: their ranges differ."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + 10 * y
        g[x, y] = x * y - 3
        out[x, y] = f[x, y] + g[x // 2 + 1, y // 2 + 5] * 100
        f.compute_root()
        g.compute_root()
        if schedule is not None:
            schedule(m, f, g, x, y)
        v = {"x": x, "y": y}[fuse_at] if isinstance(fuse_at, str) and fuse_at in "xy" else m.Var(fuse_at)
        g.compute_with(f, v, getattr(m.LoopAlignStrategy, align))
        return {"out": out, "f": f, "g": g}

    return build


@pytest.mark.parametrize("align", ALIGNS)
def test_two_producers_fused_at_the_root_under_each_alignment(align):
    check(_two_producers(align), [9, 7])
    nest = _nest(_two_producers(align)(pw)["out"])
    # one loop over y runs both bodies: f's loop over x, then g's (in a loop of one iteration)
    assert len(re.findall(r"for \(f\.s0\.y,", nest)) == 1
    assert "for (g.s0.y," in nest and "for (g.s0.x," in nest and "for (f.s0.x," in nest
    fused = nest[nest.index("for (f.s0.y,") :]
    assert fused.index("for (f.s0.x,") < fused.index("for (g.s0.y,") < fused.index("consume")


@pytest.mark.parametrize("align", ALIGNS)
def test_fused_down_to_the_inner_loop(align):
    check(_two_producers(align, "x"), [9, 7])
    nest = _nest(_two_producers(align, "x")(pw)["out"])
    assert len(re.findall(r"for \(f\.s0\.x,", nest)) == 1 and "for (g.s0.x, " in nest


def _split_vectorized(m, f, g, x, y):
    yo, yi = m.Var("yo"), m.Var("yi")
    for h in (f, g):
        h.split(y, yo, yi, 2).vectorize(x, 4)


@pytest.mark.parametrize("align", ["Auto", "AlignStart", "AlignEnd"])
def test_splits_and_vectorized_inner_loops_before_fusing(align):
    build = _two_producers(align, "yo", _split_vectorized)
    check(build, [13, 9])
    nest = _nest(build(pw)["out"])
    assert len(re.findall(r"for \(f\.s0\.y\.yo,", nest)) == 1 and "vectorized (g.s0.x.v" in nest


def _vectorized_x(width: int, tail: str = "Auto"):
    def schedule(m, f, g, x, y):
        xo, xi = m.Var("xo"), m.Var("xi")
        for h in (f, g):
            h.split(x, xo, xi, width, getattr(m.TailStrategy, tail)).vectorize(xi)

    return schedule


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("width", [4, 8])
def test_fused_vectorized_loop_runs_both_bodies_in_one_vector_loop(align, width):
    # f and g cover different ranges (out reads g over a shifted, half-size region), so in
    # the fused vector loop each body is guarded, lane by lane, to its own range
    build = _two_producers(align, "xi", _vectorized_x(width))
    for sizes in ([9, 7], [13, 5], [16, 3]):
        check(build, sizes)
    nest = _nest(build(pw)["out"])
    assert len(re.findall(rf"vectorized \(f\.s0\.x\.xi, 0, {width}\)", nest)) == 1
    assert "vectorized (g.s0" not in nest
    fused = nest[nest.index("vectorized (f.s0.x.xi") : nest.index("consume f")]
    assert "f(f.s0.x, f.s0.y) =" in fused and "g(g.s0.x, g.s0.y) =" in fused


@pytest.mark.parametrize("tail", ["GuardWithIf", "ShiftInwards", "RoundUp"])
def test_fused_vectorized_loop_under_each_tail_strategy(tail):
    check(_two_producers("Auto", "xi", _vectorized_x(4, tail)), [11, 6])


def test_two_outputs_fused_at_their_vectorized_loop():
    # two outputs tiled alike, fused at the vectorized inner loop of their tiles, the later
    # one reading its producer at twice the rate
    def build(m):
        x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
        image, f, g = m.Func("image"), m.Func("f"), m.Func("g")
        image[x, y] = x * 3 + y * 7
        f[x, y] = image[x + 2, y + 2]
        g[x, y] = image[2 * x, y] / 2 + image[2 * x + 1, y] / 2
        image.compute_root()
        for h in (f, g):
            h.tile(x, y, xo, yo, xi, yi, 4, 4).parallel(yo).vectorize(xi)
        f.compute_with(g, xi, m.LoopAlignStrategy.NoAlign)
        return {"out": [f, g]}

    for sizes in ([12, 8], [10, 7]):
        check(build, sizes)


def test_fused_vectorized_loops_are_refused_on_opencl():
    f, g, x, y = _pair(pw)
    xo, xi = pw.Var("xo"), pw.Var("xi")
    f.split(x, xo, xi, 4).vectorize(xi)
    g.split(x, xo, xi, 4).vectorize(xi)
    g.compute_with(f, xi)
    with pytest.raises(ScheduleError, match=r"fused loop x\.xi is vectorized; on target opencl Pixelweave fuses serial"):
        _nest([f, g], "opencl")


def _rows(m):
    """Vars x, y, yo, yi and Funcs inp, f, g, out: out reads f three rows around y and g two
    rows below it, so their regions differ and both march down a strip of rows of out."""
    x, y, yo, yi = (m.Var(n) for n in ("x", "y", "yo", "yi"))
    inp, f, g, out = m.Func("inp"), m.Func("f"), m.Func("g"), m.Func("out")
    inp[x, y] = x * 7 - y * y + 3
    f[x, y] = inp[x - 1, y] + 2 * inp[x + 1, y]
    g[x, y] = inp[x, y - 1] * 3 - inp[x, y + 1]
    out[x, y] = f[x, y - 1] + f[x, y] + f[x, y + 1] + g[x, y + 1] * g[x, y + 2]
    return x, y, yo, yi, inp, f, g, out


def _strips(align: str, f_store: str, g_store: str, width: int = 4, strip: int = 4):
    """Halide's Harris schedule in small: out computed in strips of rows; f and g computed
    per row of a strip, fused down to their vector loop's outer x, each stored per strip
    (store_at), at the root (store_root) or per row ("compute"), over _rows's Funcs."""

    def build(m):
        x, y, yo, yi, inp, f, g, out = _rows(m)
        out.split(y, yo, yi, strip).parallel(yo).vectorize(x, width)
        inp.compute_root()
        for h, store in ((f, f_store), (g, g_store)):
            h.compute_at(out, yi).vectorize(x, width)
            if store == "strip":
                h.store_at(out, yo)
            elif store == "root":
                h.store_root()
        f.compute_with(g, x, getattr(m.LoopAlignStrategy, align))
        return {"out": out}

    return build


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("f_store, g_store", [("strip", "strip"), ("strip", "compute"), ("compute", "strip")])
def test_fused_funcs_stored_outside_their_compute_level_slide_down_the_strip(align, f_store, g_store):
    # (Halide accepts this; Pixelweave refused it before: each Func is now stored at its own
    # store level, and slides along the rows of the strip like a Func computed alone)
    build = _strips(align, f_store, g_store)
    for sizes in ([9, 8], [10, 11], [8, 3]):  # whole strips, a partial last strip, one partial strip
        check(build, sizes)
    stmt = pw.Pipeline(build(pw)["out"]).lowered_stmt("host")
    for name, store in (("f", f_store), ("g", g_store)):
        # stored per strip: each row after a strip's first computes only its new row
        assert (f"let {name}.s0.y.min = select(" in stmt) == (store == "strip"), name
    nest = pw.Pipeline(build(pw)["out"]).loop_nest()
    strip_level = nest[nest.index("parallel y.yo:") : nest.index("for y.yi:")]
    assert ("store f:" in strip_level) == (f_store == "strip") and ("store g:" in strip_level) == (g_store == "strip")


@pytest.mark.parametrize("seed", range(12))
def test_random_strip_schedules_of_fused_funcs_stored_apart(seed):
    """Random strip heights, vector widths, tails, alignments, store levels and sizes of the
    schedule above, against the reference evaluator (bounded; the fuzzer's long runs draw
    compute_with at the root only)."""
    rng = np.random.default_rng(seed)
    x, y, yo, yi, xo, xi = (pw.Var(n) for n in ("x", "y", "yo", "yi", "xo", "xi"))
    inp, f, g, out = pw.Func("inp"), pw.Func("f"), pw.Func("g"), pw.Func("out")
    inp[x, y] = x * 7 - y * y + 3
    f[x, y] = inp[x - 1, y] + 2 * inp[x + 1, y - int(rng.integers(0, 3))]
    g[x, y] = inp[x, y - 1] * 3 - inp[x, y + 1]
    reach = [int(v) for v in rng.integers(-2, 3, 3)]
    out[x, y] = f[x, y + reach[0]] + f[x, y + reach[1]] + g[x, y + reach[2]] * g[x, y + 1]
    tail = [pw.TailStrategy.GuardWithIf, pw.TailStrategy.ShiftInwards, pw.TailStrategy.RoundUp][rng.integers(0, 3)]
    width, strip = int(rng.choice([1, 4, 8])), int(rng.integers(1, 6))
    out.split(y, yo, yi, strip)
    parallel = rng.random() < 0.5
    if parallel:
        out.parallel(yo)
    inp.compute_root()
    for h in (f, g):
        h.compute_at(out, yi)
        if width > 1:
            h.split(x, xo, xi, width, tail if h is f else pw.TailStrategy.GuardWithIf).vectorize(xi)
        store = rng.choice(["strip", "compute"] if parallel else ["strip", "compute", "root"])
        if store == "strip":
            h.store_at(out, yo)
        elif store == "root":
            h.store_root()
    fuse_at = xo if width > 1 and rng.random() < 0.5 else (x if width == 1 else y)
    align = [pw.LoopAlignStrategy.Auto, pw.LoopAlignStrategy.AlignStart, pw.LoopAlignStrategy.AlignEnd][
        rng.integers(0, 3)
    ]
    child, parent = (f, g) if rng.random() < 0.5 else (g, f)
    child.compute_with(parent, fuse_at, align)
    pipeline = pw.Pipeline(out)
    sizes = [int(rng.integers(1, 14)), int(rng.integers(1, 12))]
    np.testing.assert_array_equal(np.asarray(pipeline.realize(sizes)), pipeline.realize_reference(sizes))


def test_a_fused_func_stored_at_the_root_outside_a_serial_loop():
    def build(m):
        x, y, yo, yi = (m.Var(n) for n in ("x", "y", "yo", "yi"))
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y * 10
        g[x, y] = x * y
        out[x, y] = f[x, y] + f[x, y + 2] - g[x + 1, y]
        out.split(y, yo, yi, 3)
        for h in (f, g):
            h.compute_at(out, yi)
        f.store_root()
        f.compute_with(g, x)
        return {"out": out}

    for sizes in ([6, 7], [5, 9]):
        check(build, sizes)
    assert "let f.s0.y.min = select(" in pw.Pipeline(build(pw)["out"]).lowered_stmt("host")


@pytest.mark.parametrize("p", [1, 5])
def test_fused_funcs_computed_in_each_branch_of_a_specialized_consumer(p):
    # (found by the fuzzer: the group was computed in the first branch only, and the
    # other branch's loop read storage that did not exist there)
    def build(m):
        x, y, yo, yi, inp, f, g, out = _rows(m)
        q = m.Param(m.Int(32), "q", p)
        inp.compute_root()
        out.split(y, yo, yi, 3)
        out.specialize(q != 5).parallel(yo)
        for h in (f, g):
            h.compute_at(out, yi).vectorize(x, 4)
        g.store_at(out, yo)
        f.compute_with(g, x, m.LoopAlignStrategy.AlignEnd)
        return {"out": out}

    for sizes in ([9, 10], [5, 4]):
        check(build, sizes)


@pytest.mark.parametrize("p", [1, 5])
@pytest.mark.parametrize("g_store", ["compute", "strip", "root"])
def test_fused_funcs_computed_at_a_loop_each_branch_of_a_consumer_places_differently(p, g_store):
    # (refused before: one branch reorders the loops, so no one loop encloses every use;
    # the group is computed at yi in each branch, as a single Func is)
    def build(m):
        x, y, yo, yi, inp, f, g, out = _rows(m)
        q = m.Param(m.Int(32), "q", p)
        inp.compute_root()
        out.split(y, yo, yi, 3)
        out.specialize(q == 5).reorder(yi, x, yo)
        for h in (f, g):
            h.compute_at(out, yi)
        if g_store == "strip":
            g.store_at(out, yo)
        elif g_store == "root":
            g.store_root()
        g.compute_with(f, x, m.LoopAlignStrategy.AlignStart)
        return {"out": out}

    for sizes in ([9, 10], [5, 4]):
        check(build, sizes)


@pytest.mark.parametrize("g_store", ["compute", "root"])
def test_fused_funcs_computed_once_per_consumer_stage_that_reads_them(g_store):
    # out's pure stage and its update both read f and g: the pair is computed at y of each
    # stage, as a single Func is in Halide
    def build(m):
        x, y, yo, yi, inp, f, g, out = _rows(m)
        out[x, y] = out[x, y] * 2 - f[x, y + 1] + g[x, y - 1]
        inp.compute_root()
        for h in (f, g):
            h.compute_at(out, y)
        if g_store == "root":
            g.store_root()
        g.compute_with(f, x, m.LoopAlignStrategy.AlignEnd)
        return {"out": out}

    for sizes in ([9, 10], [3, 2]):
        check(build, sizes)
    stmt = pw.Pipeline(build(pw)["out"]).lowered_stmt("host")
    assert stmt.count("produce f") == 2 and stmt.count("produce g") == 2


def test_hoist_storage_of_a_fused_func_allocates_it_outside():
    # (it was silently left where the Func is stored before)
    def build(m):
        x, y, yo, yi, inp, f, g, out = _rows(m)
        inp.compute_root()
        out.split(y, yo, yi, 4)
        for h in (f, g):
            h.compute_at(out, yi)
        f.hoist_storage(out, yo)
        f.compute_with(g, x)
        return {"out": out}

    for sizes in ([9, 10], [4, 3]):
        check(build, sizes)
    stmt = pw.Pipeline(build(pw)["out"]).lowered_stmt("host")
    assert stmt.index("allocate f[") < stmt.index("for (out.s0.y.yi,") < stmt.index("allocate g[")


def test_fused_funcs_stored_outside_a_parallel_loop_they_are_computed_in_are_refused():
    build = _strips("Auto", "root", "compute")
    with pytest.raises(ScheduleError, match=r"Func `f` is stored outside the parallel loop yo of `out`.*race"):
        pw.Pipeline(build(pw)["out"]).compile()


def test_a_store_at_of_a_fused_func_computed_at_the_root_is_refused():
    f, g, x, y = _pair(pw)
    out = pw.Func("out")
    out[x, y] = f[x, y] + g[x, y]
    f.compute_root().store_at(out, y)
    g.compute_root()
    g.compute_with(f, y)
    with pytest.raises(ScheduleError, match=r"Func `f` cannot be stored at loop y of `out`.*computed \(at the root\)"):
        pw.Pipeline(out).compile()


def test_fused_funcs_stored_inside_their_compute_level_are_refused():
    f, g, x, y = _pair(pw)
    xo, xi = pw.Var("xo"), pw.Var("xi")
    out = pw.Func("out")
    out[x, y] = f[x, y] + g[x, y]
    out.split(x, xo, xi, 4)
    f.compute_at(out, y).store_at(out, xo)
    g.compute_at(out, y)
    g.compute_with(f, x)
    with pytest.raises(ScheduleError, match=r"Func `f` cannot be stored at loop xo of `out`.*not at or outside"):
        pw.Pipeline(out).compile()


def test_parallel_fused_loops():
    def par(m, f, g, x, y):
        f.parallel(y)
        g.parallel(y)

    build = _two_producers("AlignStart", "y", par)
    check(build, [9, 7])
    assert "parallel (f.s0.y," in _nest(build(pw)["out"])


def test_two_outputs_of_one_pipeline_fused():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g = m.Func("f"), m.Func("g")
        f[x, y] = x * 2 + y
        g[x, y] = m.cast(m.Float(32), x - y) * 0.5
        g.compute_with(f, y)
        return f, g

    theirs = [np.asarray(b).copy() for b in hl.Pipeline(list(build(hl))).realize([10, 6])]
    pipeline = pw.Pipeline(list(build(pw)))
    assert_same([np.asarray(b) for b in pipeline.realize([10, 6])], theirs)
    assert_same([np.asarray(b) for b in pipeline.realize_reference([10, 6])], theirs)
    nest = _nest(list(build(pw)))
    assert len(re.findall(r"for \(f\.s0\.y,", nest)) == 1 and "for (g.s0.y, f.s0.y, 1)" in nest
    # the inspector's view: one loop over y holds f's loop over x, then g's (g's copy of the
    # fused loop, one iteration at f's y, is not shown as a loop of its own)
    shown = (
        "produce f:\n  produce g:\n    for y:\n      for x:\n        f(...) = ...\n      for x:\n        g(...) = ...\n"
    )
    assert pipeline.loop_nest().startswith(shown)


def test_fused_at_an_inner_loop_of_a_consumer_with_a_func_computed_at_the_fused_loop():
    """Halide's documentation example: `input` is computed at f's y, which is also g's."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp, f, g, out = m.Func("inp"), m.Func("f"), m.Func("g"), m.Func("out")
        inp[x, y] = x + y * 7
        f[x, y] = inp[x, y]
        g[x, y] = inp[2 * x, 2 * y]
        out[x, y] = f[x, y] - g[x // 2, y // 2]
        yo, yi = m.Var("yo"), m.Var("yi")
        out.split(y, yo, yi, 4)
        f.compute_at(out, yo)
        g.compute_at(out, yo)
        g.compute_with(f, y)
        inp.compute_at(f, y)
        return {"out": out}

    check(build, [11, 13])
    nest = _nest(build(pw)["out"])
    fused = nest[nest.index("for (f.s0.y,") :]
    assert fused.index("produce inp") < fused.index("for (f.s0.x,") < fused.index("for (g.s0.y,")


def test_func_computed_at_a_fused_loop_of_the_child():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        h, f, g, out = m.Func("h"), m.Func("f"), m.Func("g"), m.Func("out")
        h[x, y] = x - 2 * y
        f[x, y] = x + y
        g[x, y] = h[x, y + 1] + h[x + 1, y]
        out[x, y] = f[x, y] * 3 + g[x, y + 2]
        f.compute_root()
        g.compute_root()
        g.compute_with(f, y, m.LoopAlignStrategy.AlignStart)
        h.compute_at(g, y)
        return {"out": out}

    check(build, [8, 6])


def test_update_of_one_func_fused_with_the_pure_stage_of_another():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y
        f[x, y] += f[x, y] * 2
        g[x, y] = x * 5 - y
        g[x, y] += 1
        out[x, y] = f[x, y] + g[x + 2, y] * 10
        f.compute_root()
        g.compute_root()
        g.update(0).compute_with(f.update(0), y, [(y, m.LoopAlignStrategy.AlignEnd)])
        return {"out": out}

    check(build, [9, 5])
    nest = _nest(build(pw)["out"])
    assert len(re.findall(r"for \(f\.s1\.y,", nest)) == 1 and "for (g.s1.y," in nest


def test_pure_stage_fused_with_an_update():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        r = m.RDom([(0, 3)])
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y
        f[x, y] = f[x, y] * 2 + 1
        g[x, y] = 0
        g[x, y] += x * r.x + y
        out[x, y] = f[x, y] + g[x, y] * 10
        f.compute_root()
        g.compute_root()
        f.update(0).compute_with(g, y)
        return {"out": out}

    check(build, [7, 6])


def _refused_in_both(build, pattern: str, halide_pattern: str | None = None) -> None:
    with pytest.raises(hl.HalideError, match=halide_pattern or pattern):
        outs = build(hl)
        hl.Pipeline(outs).realize([6, 4])
    with pytest.raises(ScheduleError, match=pattern):
        pw.Pipeline(build(pw)).compile()


def _pair(m):
    x, y = m.Var("x"), m.Var("y")
    f, g = m.Func("f"), m.Func("g")
    f[x, y] = x + y
    g[x, y] = x * y
    return f, g, x, y


def test_fusing_with_a_stage_of_the_same_func_is_refused():
    def build(m):
        f, _, x, y = _pair(m)
        f[x, y] += 1
        f.update(0).compute_with(f, y)
        return [f]

    with pytest.raises(hl.HalideError, match=r"Cannot schedule f\S*\.update\(0\) to be computed with f\S*\.s0\.y"):
        build(hl)
    with pytest.raises(ScheduleError, match=r"cannot schedule update 0 of Func `f` to be computed with f\.s0\.y"):
        build(pw)


def test_dependent_funcs_are_refused():
    def build(m):
        f, g, x, y = _pair(m)
        g[x, y] = f[x, y] * 2
        g.compute_with(f, y)
        return [f, g]

    _refused_in_both(build, "there is dependency between")


def test_funcs_fused_with_the_same_parent_that_depend_on_each_other_are_refused():
    def build(m):
        f, g, x, y = _pair(m)
        h = m.Func("h")
        h[x, y] = g[x, y + 1] + 1  # row y of h needs row y + 1 of g, not computed yet in the fused loop
        g.compute_with(f, y)
        h.compute_with(f, y)
        return [f, g, h]

    _refused_in_both(build, "there is dependency between g and h", "Stuck in a loop computing a realization order")


def test_a_cycle_of_compute_with_is_refused():
    def build(m):
        f, g, _, y = _pair(m)
        g.compute_with(f, y)
        f.compute_with(g, y)
        return [f, g]

    _refused_in_both(build, "Found cyclic dependencies between compute_with of")


def test_a_loop_that_does_not_exist_is_refused():
    def build(m):
        f, g, _, _ = _pair(m)
        g.compute_with(f, m.Var("z"))
        return [f, g]

    _refused_in_both(build, "Invalid compute_with: cannot find z in f")


def test_fused_loops_of_different_kinds_or_order_are_refused():
    def parallel_one(m):
        f, g, x, y = _pair(m)
        f.parallel(y)
        g.compute_with(f, x)
        return [f, g]

    _refused_in_both(parallel_one, r"for types of dim 1 of f\S*\.s0\(y is parallel\) and g\S*\.s0\(y is for\)")

    def reordered(m):
        f, g, x, y = _pair(m)
        g.reorder(y, x)
        g.compute_with(f, y)
        return [f, g]

    _refused_in_both(reordered, "# of fused dims of f")


def test_different_compute_levels_are_refused():
    def build(m):
        f, g, x, y = _pair(m)
        out = m.Func("out")
        out[x, y] = f[x, y] + g[x, y]
        f.compute_root()
        g.compute_at(out, y)
        g.compute_with(f, y)
        return [out]

    _refused_in_both(build, "the compute levels of f")


def test_what_pixelweave_does_not_fuse_is_refused_with_the_reason():
    # a chain: h with g, g with f
    f, g, x, y = _pair(pw)
    h = pw.Func("h")
    h[x, y] = x - y
    g.compute_with(f, y)
    h.compute_with(g, y)
    with pytest.raises(ScheduleError, match="does not fuse a chain of compute_with"):
        pw.Pipeline([f, g, h]).compile()
    # a level that is not a loop
    with pytest.raises(ScheduleError, match=r"needs a loop of another stage, not LoopLevel.root\(\)"):
        g.compute_with(pw.LoopLevel.root())
    # a bad align
    with pytest.raises(ScheduleError, match="must be a LoopAlignStrategy or a list"):
        g.compute_with(f, y, "start")


def test_loop_level_form_and_func_form_fuse_the_pure_stage():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y
        g[x, y] = x - y
        out[x, y] = f[x, y] * g[x, y + 1]
        f.compute_root()
        g.compute_root()
        return {"out": out, "f": f, "g": g}

    def with_loop_level(funcs):
        y = pw.Var("y")
        funcs["g"].compute_with(pw.LoopLevel.at(funcs["f"], y), pw.LoopAlignStrategy.AlignStart)

    check(build, [5, 4], (with_loop_level,))
    funcs = build(pw)
    with_loop_level(funcs)
    assert len(re.findall(r"for \(f\.s0\.y,", _nest(funcs["out"]))) == 1
    assert [m for m in dir(pw.LoopAlignStrategy) if not m.startswith("_") and m[0].isupper()] == sorted(
        m for m in dir(hl.LoopAlignStrategy) if not m.startswith("_") and m[0].isupper()
    )


def test_an_isolated_func_drops_its_compute_with():
    """A preview computes one Func on its own: the stage it was fused with is not there."""
    from pixelweave.engine.isolate import isolate

    f, g, x, y = _pair(pw)
    g.split(y, pw.Var("yo"), pw.Var("yi"), 2)
    f.split(y, pw.Var("yo"), pw.Var("yi"), 2)
    g.compute_with(f, pw.Var("yo"))
    isolated = isolate(g)
    assert "for (g.s0.y.yo," in str(lower_loop_nest(isolated.pipeline)).replace(isolated.func.name(), "g")
    np.testing.assert_array_equal(
        np.asarray(isolated.pipeline.realize([5, 3])), np.fromfunction(lambda r, c: r * c, (3, 5), dtype=np.int32)
    )


def test_updates_fused_along_a_reduction_variable():
    def build(m):
        x = m.Var("x")
        r = m.RDom([(0, 4), (0, 3)], "r")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x] = x
        f[r.x] += r.y * 3
        g[x] = 1
        g[r.x + 1] = g[r.x] * 2 + r.y  # a scan: each point reads the one before
        out[x] = f[x] + g[x] * 100
        f.compute_root()
        g.compute_root()
        g.update(0).compute_with(f.update(0), r.y, m.LoopAlignStrategy.AlignStart)
        return {"out": out}

    check(build, [8])
    nest = _nest(build(pw)["out"])
    assert (
        len(re.findall(r"for \(f\.s1\.r\$y,", nest)) == 1
        and "for (g.s1.r$y, ((f.s1.r$y + g.s1.r$y.min) - f.s1.r$y.min), 1)" in nest
    )


def test_a_func_reading_one_of_the_pair_is_computed_after_the_fused_loops():
    """out visits X (which reads g) before f: the pair is realized together, before X."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        g, xg, f, out = m.Func("g"), m.Func("X"), m.Func("f"), m.Func("out")
        g[x, y] = x * 4 + y
        xg[x, y] = g[x, y] + g[x + 1, y]
        f[x, y] = x - y
        out[x, y] = xg[x, y] * 10 + f[x, y + 1]
        for h in (g, xg, f):
            h.compute_root()
        g.compute_with(f, y, m.LoopAlignStrategy.AlignEnd)
        return {"out": out}

    check(build, [6, 5])
    nest = _nest(build(pw)["out"])
    assert nest.index("produce g") < nest.index("produce X")


def test_unrolled_fused_loops():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y * 3
        g[x, y] = x * 2 - y
        out[x, y] = f[x, y] + g[x + 1, y] * 100
        xo, xi = m.Var("xo"), m.Var("xi")
        for h in (f, g):
            h.compute_root().split(x, xo, xi, 4).unroll(xi)
        g.compute_with(f, xi, [(xo, m.LoopAlignStrategy.AlignStart)])
        return {"out": out}

    check(build, [10, 3])
    nest = _nest(build(pw)["out"])
    assert len(re.findall(r"unrolled \(f\.s0\.x\.xi,", nest)) == 1 and "for (g.s0.x.xi, f.s0.x.xi, 1)" in nest


def test_two_stages_of_one_func_fused_with_the_same_stage():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = x + y
        g[x, y] = x * y
        g[x, y] = g[x, y] * 3 + x
        out[x, y] = f[x, y] + g[x, y + 1] * 10
        f.compute_root()
        g.compute_root()
        g.compute_with(f, y)
        g.update(0).compute_with(f, y)
        return {"out": out}

    check(build, [6, 5])
    nest = _nest(build(pw)["out"])
    fused = nest[nest.index("for (f.s0.y,") :]
    assert fused.index("for (f.s0.x,") < fused.index("for (g.s0.y, f.s0.y, 1)") < fused.index("for (g.s1.y, f.s0.y, 1)")


def test_two_stages_of_one_func_fused_with_the_same_stage_along_split_loops_are_refused():
    """Split differently, iteration i of the fused loop would run rows 2i, 2i + 1 of g's
    pure stage and rows 3i to 3i + 2 of its update, which reads rows not computed yet."""
    f, g, x, y = _pair(pw)
    g[x, y] = g[x, y] + 1
    yo, yi = pw.Var("yo"), pw.Var("yi")
    f.split(y, yo, yi, 2)
    g.split(y, yo, yi, 2)
    g.update(0).split(y, yo, yi, 3)
    g.compute_with(f, yo)
    g.update(0).compute_with(f, yo)
    with pytest.raises(ScheduleError, match=r"g\.s0 and g\.s1 are both computed with f\.s0, and its fused loop y\.yo"):
        pw.Pipeline([f, g]).compile()


def test_specialized_and_memoized_stages_are_not_fused():
    """A specialized stage has several loop nests and a memoized Func may skip its loops on
    a cache hit: Pixelweave refuses to fuse either, with the reason."""

    def build():
        f, _, h = _pair_fused_at("y")
        return f, h

    f, h = build()
    f.specialize(pw.Param(pw.Bool(), "fast", True)).vectorize("x", 4)
    with pytest.raises(pw.ScheduleError, match="has specializations"):
        pw.Pipeline(h).realize([8, 8])
    f, h = build()
    f.memoize()
    with pytest.raises(pw.ScheduleError, match="is memoized"):
        pw.Pipeline(h).realize([8, 8])


def test_refusals_name_the_funcs_and_what_would_be_legal():
    """The fuzzer counts a refusal that does not name its Funcs (in backquotes) and what
    would be legal as a failure: these came out of it."""

    def refused(schedule) -> str:
        f, g, x, y = _pair(pw)
        schedule(f, g, x, y)
        with pytest.raises(ScheduleError) as caught:
            pw.Pipeline([f, g]).compile()
        return str(caught.value)

    def kinds(f, g, x, y):
        f.parallel(y)
        g.compute_with(f, x)

    def count(f, g, x, y):
        f.split(y, pw.Var("yo"), pw.Var("yi"), 2)
        g.compute_with(f, x)

    def missing(f, g, x, y):
        g.compute_with(f, pw.Var("z"))

    def specialized(f, g, x, y):
        f.specialize(pw.Param(pw.Bool(), "fast", True)).vectorize(x, 4)
        g.compute_with(f, y)

    for schedule, legal in (
        (kinds, "give the fused loops of both stages the same kind"),
        (count, "must be as many in both stages"),
        (missing, "compute_with of `g` with `f` must name a loop of both stages"),
        (specialized, "remove the specialize() or the compute_with()"),
    ):
        message = refused(schedule)
        assert "`g`" in message and "`f`" in message and legal in message, message


@pytest.mark.parametrize("align", ["AlignStart", "AlignEnd"])
@pytest.mark.parametrize("p", [1, 5])
def test_output_fused_with_a_producer_widened_in_one_specialization(align, p):
    """A consumer's specialization widens the parent's region (a RoundUp split in one branch
    only): the fused child's offset uses the same chosen bound on both sides, so the output
    is written exactly over its own region (the fuzzer found it refused at run time)."""
    x, y, xo, xi = pw.Var("x"), pw.Var("y"), pw.Var("xo"), pw.Var("xi")
    param = pw.Param(pw.Int(32), "p", 5)
    f, half, total = pw.Func("f"), pw.Func("half"), pw.Func("total")
    f[x, y] = x + 3 * y
    r = pw.RDom([(-1, 3)])
    total[x, y] = 0
    total[x, y] += f[x + r.x, y]
    half[x, y] = 2 * x - y
    f.compute_root()
    half.compute_with(f, x, getattr(pw.LoopAlignStrategy, align))
    total.update(0).specialize(param < 2).split(x, xo, xi, 5, pw.TailStrategy.RoundUp)
    pipeline = pw.Pipeline([total, half])
    ours = pipeline.realize([7, 3], {"p": p})
    reference = pipeline.realize_reference([7, 3], {"p": p})
    for a, b in zip(ours, reference, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _pair_fused_at(level: str):
    """f and g at the root, g fused with f at loop `level` ("x" or "y"), h reading both."""
    x, y = pw.Var("x"), pw.Var("y")
    f, g, h = pw.Func("f"), pw.Func("g"), pw.Func("h")
    f[x, y] = x + y
    g[x, y] = x * y
    h[x, y] = f[x, y] + g[x, y]
    f.compute_root()
    g.compute_root().compute_with(f, {"x": x, "y": y}[level])
    return f, g, h


def test_the_inspector_shows_loops_fused_down_to_x_once():
    """g fused with f at x: one loop over y and one over x hold both definitions."""
    _, _, out = _pair_fused_at("x")
    nest = pw.Pipeline(out).loop_nest()
    fused = "produce f:\n      produce g:\n        for y:\n          for x:\n            f(...) = ...\n            g(...) = ...\n"
    assert fused in nest
