"""Stage.specialize / specialize_fail against Halide 21: each branch computes Halide's image
with its own schedule, the unspecialized schedule is the fallback, specialize_fail() fails
the run with Halide's message, and what Halide refuses is refused."""

from __future__ import annotations

import re

import halide as hl
import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure, ScheduleError
from pixelweave.engine.structural_key import structural_key

import pixelweave as pw
from tests.language.halide_compare import check

# ---------------------------------------------------------------- branches against Halide


def _three_way(b_value: bool, p_value: int):
    """A vectorized branch selected by a bool Param, a split-with-tail branch for p == 3 and
    a parallel fallback; the values use both Params, so each branch simplifies them."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        b, p = m.Param(m.Bool(), "b"), m.Param(m.Int(32), "p")
        b.set(b_value)
        p.set(p_value)
        f = m.Func("f")
        f[x, y] = x * p + y * 7 + m.select(b, 100, -3)
        f.specialize(b).vectorize(x, 8)
        f.specialize(p == 3).split(x, m.Var("xo"), m.Var("xi"), 5, m.TailStrategy.GuardWithIf)
        f.parallel(y)
        return {"out": f}

    return build


@pytest.mark.parametrize(("b", "p"), [(True, 3), (True, 5), (False, 3), (False, 4)])
def test_each_branch_and_the_fallback_compute_halides_image(b, p):
    check(_three_way(b, p), [13, 4])


def test_the_loop_nest_shows_each_branch_with_its_schedule():
    # parallel(y) came after the specializations were made: only the fallback has it.
    nest = pw.Pipeline(_three_way(True, 3)(pw)["out"]).loop_nest()
    assert nest == (
        "produce f:\n"
        "  if b:\n"
        "    for y:\n"
        "      for x.x:\n"
        "        vectorized x.v0 in [0, 7]:\n"
        "          f(...) = ...\n"
        "  else if (p == 3):\n"
        "    for y:\n"
        "      for x.xo:\n"
        "        for x.xi:\n"
        "          f(...) = ...\n"
        "  else:\n"
        "    parallel y:\n"
        "      for x:\n"
        "        f(...) = ...\n"
    )


def test_each_branch_simplifies_the_definition_under_its_condition():
    stmt = pw.Pipeline(_three_way(True, 3)(pw)["out"]).lowered_stmt()
    produce = stmt[stmt.index("produce f {") :]
    # Under b the select is 100; under p == 3 (b false) x * p is x * 3 and the select -3.
    branches = re.split(r"\} else \{", produce)
    assert "select" not in produce
    assert "+ 100)" in branches[0]
    assert "(f.s0.x * 3) + (f.s0.y * 7)) - 3)" in branches[1]
    assert "* p" in branches[-1]


def test_later_directives_on_the_stage_change_only_the_unspecialized_schedule():
    x = pw.Var("x")
    p = pw.Param(pw.Int(32), "p")
    f = pw.Func("f")
    f[x] = x + p
    f.specialize(p > 0)
    f.vectorize(x, 4)  # after the copy was taken: only the fallback
    f.specialize(p > 0).unroll(x, 2)  # the same condition is the same specialization
    nest = pw.Pipeline(f).loop_nest()
    assert nest == (
        "produce f:\n"
        "  if (p > 0):\n"
        "    for x.x:\n"
        "      unrolled x.v0 in [0, 1]:\n"
        "        f(...) = ...\n"
        "  else:\n"
        "    for x.x:\n"
        "      vectorized x.v0 in [0, 3]:\n"
        "        f(...) = ...\n"
    )
    for value in (2, -2):
        p.set(value)
        np.testing.assert_array_equal(np.asarray(f.realize([9])), np.arange(9) + value)


def test_a_param_used_only_in_the_condition_is_an_argument_of_the_pipeline():
    def build(m):
        x = m.Var("x")
        wide = m.Param(m.Bool(), "wide")
        wide.set(True)
        f = m.Func("f")
        f[x] = x * 2
        f.specialize(wide).vectorize(x, 4)
        return {"out": f}

    check(build, [10])
    pipeline = pw.Pipeline(build(pw)["out"])
    assert [p.name for p in pipeline.params] == ["wide"]


@pytest.mark.parametrize("width", [5, 16])
def test_a_condition_on_an_input_size_picks_the_branch(width):
    data = (np.arange(width, dtype=np.int32) * 5) % 11

    def build(m):
        x = m.Var("x")
        im = m.ImageParam(m.Int(32), 1, "im")
        im.set(m.Buffer(data))
        f = m.Func("f")
        f[x] = im[x] * 3 + 1
        f.specialize(im.width() >= 8).vectorize(x, 8)
        return {"out": f}

    check(build, [width])


# ---------------------------------------------------------------- bounds of every branch


def _rounded_up_producer(p_value: int):
    def build(m):
        x = m.Var("x")
        p = m.Param(m.Int(32), "p")
        p.set(p_value)
        g = m.Func("g")
        g[x] = x * 3 + p
        out = m.Func("out")
        out[x] = g[x] + g[x + 1]
        g.compute_root()
        # Only this branch rounds the producer's region up to a multiple of 8: its storage
        # must cover that too.
        g.specialize(p > 0).split(x, m.Var("xo"), m.Var("xi"), 8, m.TailStrategy.RoundUp)
        return {"out": out, "g": g}

    return build


@pytest.mark.parametrize("p", [1, -1])
def test_storage_covers_the_region_a_rounded_up_branch_computes(p):
    check(_rounded_up_producer(p), [13])


@pytest.mark.parametrize("p", [2, 0])
def test_an_output_split_with_a_rounded_up_tail_in_one_branch(p):
    def build(m):
        x = m.Var("x")
        q = m.Param(m.Int(32), "p")
        q.set(p)
        f = m.Func("f")
        f[x] = x * q
        f.specialize(q > 1).split(x, m.Var("xo"), m.Var("xi"), 4, m.TailStrategy.RoundUp)
        return {"out": f}

    check(build, [11])


# ---------------------------------------------------------------- producers inside branches


def _producer_at(p_value: int, loop: str):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        xo, xi = m.Var("xo"), m.Var("xi")
        p = m.Param(m.Int(32), "p")
        p.set(p_value)
        g = m.Func("g")
        g[x, y] = x * 10 + y * p
        out = m.Func("out")
        out[x, y] = g[x - 1, y] + g[x + 1, y] * 2
        # Both branches have an xo loop, made by different splits.
        out.specialize(p == 1).split(x, xo, xi, 4).vectorize(xi)
        out.split(x, xo, xi, 8, m.TailStrategy.GuardWithIf)
        g.compute_at(out, xo if loop == "xo" else y)
        return {"out": out, "g": g}

    return build


@pytest.mark.parametrize("loop", ["xo", "y"])
@pytest.mark.parametrize("p", [1, 2])
def test_a_producer_computed_at_a_loop_of_the_specialized_consumer(p, loop):
    check(_producer_at(p, loop), [19, 3])


def test_the_producer_is_computed_in_every_branch():
    nest = pw.Pipeline(_producer_at(1, "xo")(pw)["out"]).loop_nest()
    branches = nest.split("else:")
    assert len(branches) == 2
    for branch in branches:
        assert re.search(r"for x\.xo:\n\s+store g:\n\s+produce g:", branch), nest


def _producer_at_missing_loop(m):
    x = m.Var("x")
    p = m.Param(m.Int(32), "p")
    p.set(3)
    g = m.Func("g")
    g[x] = x * p
    out = m.Func("out")
    out[x] = g[x] + 1
    out.specialize(p == 3).split(x, m.Var("xo"), m.Var("xi"), 4)
    g.compute_at(out, x)
    return out


def test_a_loop_some_branch_lacks_is_refused_as_in_halide():
    with pytest.raises(hl.HalideError, match="is computed at the following invalid location"):
        _producer_at_missing_loop(hl).realize([8])
    with pytest.raises(
        ScheduleError,
        match=r"Func `g` is scheduled at loop x of `out` \(compute_at\(`out`, x\)\), but the specialization on "
        r"\(p == 3\) of `out` has no loop x \(its loops are x.xo, x.xi\); the loop must exist in every "
        r"specialization",
    ):
        pw.Pipeline(_producer_at_missing_loop(pw)).compile()


# ---------------------------------------------------------------- nesting and updates


@pytest.mark.parametrize(("b", "p"), [(True, 3), (True, 4), (False, 3), (False, 4)])
def test_nested_specializations_match_halide(b, p):
    def build(m):
        x = m.Var("x")
        bb, pp = m.Param(m.Bool(), "b"), m.Param(m.Int(32), "p")
        bb.set(b)
        pp.set(p)
        f = m.Func("f")
        f[x] = x + m.select(bb, 10, 20) - m.select(pp == 3, 1, 2)
        f.specialize(bb).vectorize(x, 4).specialize(pp == 3).unroll(x, 2)
        f.specialize(pp == 3)
        return {"out": f}

    check(build, [9])


@pytest.mark.parametrize("p", [0, 5])
def test_an_update_stage_specializes(p):
    def build(m):
        x = m.Var("x")
        q = m.Param(m.Int(32), "p")
        q.set(p)
        f = m.Func("f")
        f[x] = x
        r = m.RDom([(0, 3)])
        f[x] = f[x] + r.x * q
        f.update(0).specialize(q == 0).vectorize(x, 4)
        return {"out": f}

    check(build, [10])


# ---------------------------------------------------------------- specialize_fail


def _failing(m):
    x = m.Var("x")
    p = m.Param(m.Int(32), "p")
    f = m.Func("f")
    f[x] = x * p
    f.specialize(p == 2).vectorize(x, 4)
    f.specialize_fail("no schedule for this p")
    return f, p


def test_specialize_fail_raises_halides_message_when_no_condition_holds():
    message = "A schedule specialized with specialize_fail() was chosen: no schedule for this p"
    hf, hp = _failing(hl)
    hp.set(5)
    with pytest.raises(hl.HalideError, match=re.escape(message)):
        hf.realize([8])
    f, p = _failing(pw)
    p.set(5)
    with pytest.raises(RuntimeFailure, match=re.escape(message)) as caught:
        f.realize([8])
    assert isinstance(caught.value, pw.HalideError)
    p.set(2)
    np.testing.assert_array_equal(np.asarray(f.realize([8])), np.arange(8) * 2)
    assert "else:\n    specialize_fail('no schedule for this p')" in pw.Pipeline(f).loop_nest()


# ---------------------------------------------------------------- refusals


def _refusal(m, directive: str):
    x = m.Var("x")
    p = m.Param(m.Int(32), "p")
    f = m.Func("f")
    f[x] = x * p
    if directive == "not bool":
        f.specialize(p + 1)
    elif directive == "a Var":
        f.specialize(x > 2)
    elif directive == "after fail":
        f.specialize_fail("stop")
        f.specialize(p == 1)
    elif directive == "fail twice":
        f.specialize_fail("stop")
        f.specialize_fail("again")
    elif directive == "empty message":
        f.specialize_fail("")
    elif directive == "inline":
        out = m.Func("out")
        out[x] = f[x] + 1
        f.specialize(p == 1)
        p.set(1)
        out.realize([4])


@pytest.mark.parametrize(
    ("directive", "message"),
    [
        ("not bool", "Argument passed to specialize must be of type bool"),
        ("a Var", "depends on Var or RVar x"),
        ("after fail", r"Cannot add new specializations after specialize_fail\(\)"),
        ("fail twice", r"Only one specialize_fail\(\) may be defined per Stage"),
        ("empty message", r"Argument passed to specialize_fail\(\) must not be empty"),
        ("inline", "is scheduled inline, so it must not have any specializations"),
    ],
)
def test_what_halide_refuses_is_refused(directive, message):
    with pytest.raises(hl.HalideError, match=message):
        _refusal(hl, directive)
    with pytest.raises(ScheduleError, match=message):
        _refusal(pw, directive)


def test_a_condition_reading_an_image_is_refused():
    x = pw.Var("x")
    im = pw.ImageParam(pw.Int(32), 1, "im")
    f = pw.Func("f")
    f[x] = im[x]
    with pytest.raises(ScheduleError, match="specializes on Params and image sizes"):
        f.specialize(im[0] > 0)


# ---------------------------------------------------------------- keys and tracing


def test_the_compile_key_tells_specialized_schedules_apart():
    def pipeline(vectorized: bool) -> pw.Pipeline:
        x = pw.Var("x")
        p = pw.Param(pw.Int(32), "p")
        f = pw.Func("f")
        f[x] = x + p
        branch = f.specialize(p > 0)
        if vectorized:
            branch.vectorize(x, 4)
        return pw.Pipeline(f)

    assert structural_key(pipeline(True)) != structural_key(pipeline(False))
    assert structural_key(pipeline(True)) == structural_key(pipeline(True))


def _traced(m):
    x = m.Var("x")
    p = m.Param(m.Int(32), "p")
    p.set(3)
    g = m.Func("g")
    g[x] = x * p
    out = m.Func("out")
    out[x] = g[x] + 1
    g.compute_root().trace_stores()
    g.specialize(p == 3).split(x, m.Var("xo"), m.Var("xi"), 2)
    return out


def test_tracing_reports_the_stores_of_the_branch_that_ran(capfd):
    capfd.readouterr()
    _traced(pw).realize([4])
    ours = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Store")]
    _traced(hl).realize([4])
    theirs = [re.sub(r"\$\d+", "", line) for line in capfd.readouterr().out.splitlines() if line.startswith("Store")]
    assert ours == theirs and ours


@pytest.mark.parametrize("p", [1, 2])
def test_a_sliding_window_over_a_specialized_consumer(p):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        q = m.Param(m.Int(32), "p")
        q.set(p)
        g = m.Func("g")
        g[x, y] = x * 3 + y * q
        out = m.Func("out")
        out[x, y] = g[x, y - 1] + g[x, y + 1]
        out.specialize(q == 1).vectorize(x, 4)
        g.store_root().compute_at(out, y)
        return {"out": out, "g": g}

    check(build, [9, 6])


@pytest.mark.parametrize("p", [2, 3])
def test_a_tuple_func_specializes(p):
    def build(m):
        x = m.Var("x")
        q = m.Param(m.Int(32), "p")
        q.set(p)
        f = m.Func("f")
        f[x] = (x * q, x + q)
        f.compute_root()
        f.specialize(q == 2).vectorize(x, 4)
        out = m.Func("out")
        out[x] = f[x][0] + f[x][1]
        return {"out": out, "f": f}

    check(build, [9])


def test_storage_shared_across_a_loop_parallel_in_one_branch_is_refused():
    x, y = pw.Var("x"), pw.Var("y")
    p = pw.Param(pw.Int(32), "p")
    g = pw.Func("g")
    g[x, y] = x * 3 + y * p
    out = pw.Func("out")
    out[x, y] = g[x, y] * 2
    out.specialize(p > 1).parallel(y)
    g.store_root().compute_at(out, y)
    with pytest.raises(ScheduleError, match="stored outside the parallel loop y of `out`"):
        pw.Pipeline(out).compile()


def test_different_partition_policies_for_one_loop_in_two_branches_are_refused():
    x = pw.Var("x")
    p = pw.Param(pw.Int(32), "p")
    f = pw.Func("f")
    f[x] = x * p
    f.specialize(p > 1).never_partition(x)
    with pytest.raises(ScheduleError, match="loop x of Func `f` has different partition policies"):
        pw.Pipeline(f).compile()


def test_rfactor_of_a_specialized_stage_is_refused():
    # Halide factors only the unspecialized definition; Pixelweave asks for rfactor first.
    x, u = pw.Var("x"), pw.Var("u")
    p = pw.Param(pw.Int(32), "p")
    r = pw.RDom([(0, 8)])
    f = pw.Func("f")
    f[x] = 0
    f[x] += r.x
    f.update(0).specialize(p > 0)
    with pytest.raises(ScheduleError, match=r"a specialized stage .* cannot be factored; call rfactor"):
        f.update(0).rfactor(r.x, u)
    g = pw.Func("g")
    g[x] = 0
    g[x] += r.x
    g.update(0).rfactor(r.x, u).compute_root()
    g.update(0).specialize(p > 0).vectorize(x, 4)
    p.set(1)
    np.testing.assert_array_equal(np.asarray(g.realize([5])), np.full(5, 28))


@pytest.mark.parametrize(
    ("build", "sizes", "values"),
    [
        (_rounded_up_producer, [13], [1, -1]),
        (lambda p: _producer_at(p, "xo"), [19, 3], [1, 2]),
        (lambda p: _three_way(p == 3, p), [13, 4], [3, 4]),
    ],
)
def test_every_branch_stays_in_bounds_and_its_time_is_profiled(build, sizes, values):
    for value in values:
        out = build(value)(pw)["out"]
        pipeline = pw.Pipeline(out)
        expected = np.asarray(pipeline.realize_reference(sizes))
        np.testing.assert_array_equal(np.asarray(pipeline.compile(checked=True)(sizes)), expected)
        profiled = pipeline.compile(profile=True)
        np.testing.assert_array_equal(np.asarray(profiled(sizes)), expected)
        assert set(profiled.last_profile) == {f.name() for f in pipeline.funcs}
