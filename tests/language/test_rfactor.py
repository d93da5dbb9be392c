"""rfactor against Halide 21: the same reductions split into an intermediate Func over
the preserved RVars (parallel or vectorized), and the same refusals."""

from __future__ import annotations

import halide as hl
import pytest

import pixelweave as pw
from tests.language.halide_compare import check


def _reduction(kind: str, preserve: str, schedule_intm):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        src = m.Func("src")
        src[x, y] = m.i16((x * 37 + y * 11) % 23 - 7)
        r = m.RDom([(0, 19), (1, 13)])
        f = m.Func("f")
        term = src[r.x + x, r.y]
        if kind == "sum":
            f[x] = m.i16(0)
            f[x] = f[x] + term
        elif kind == "product":
            f[x] = m.i16(1)
            f[x] = f[x] * (term % 3 + 1)
        elif kind == "min":
            f[x] = m.i16(100)
            f[x] = m.min(term * 2, f[x])
        else:
            f[x] = m.i16(-100)
            f[x] = m.max(f[x], term)
        u = m.Var("u")
        if preserve == "y":
            intm = f.update(0).rfactor([(r.y, u)])
        else:
            intm = f.update(0).rfactor(r.x, u)
        schedule_intm(m, intm, u, x)
        return {"out": f}

    return build


def _parallel(m, intm, u, x):
    intm.compute_root().update(0).parallel(u)


def _vectorized(m, intm, u, x):
    intm.compute_root().vectorize(u, 4).update(0).vectorize(u, 4)


@pytest.mark.parametrize("kind", ["sum", "product", "min", "max"])
def test_rfactor_of_associative_reductions(kind):
    check(_reduction(kind, "y", _parallel), [6])
    check(_reduction(kind, "x", _vectorized), [3])


def _histogram(m):
    x, y = m.Var("x"), m.Var("y")
    src = m.Func("src")
    src[x, y] = (x * 7 + y * 3) % 10
    r = m.RDom([(0, 32), (0, 24)])
    hist = m.Func("hist")
    hist[x] = 0
    hist[src[r.x, r.y]] += 1
    u = m.Var("u")
    intm = hist.update(0).rfactor([(r.y, u)])
    intm.compute_root().update(0).parallel(u)
    return {"out": hist}


def test_rfactor_of_a_histogram():
    check(_histogram, [10])


def _predicated(m):
    x = m.Var("x")
    r = m.RDom([(0, 20), (0, 10)])
    r.where(r.x < r.y * 2)
    f = m.Func("f")
    f[x] = 0
    f[x] = f[x] + r.x * (r.y + x)
    u = m.Var("u")
    intm = f.update(0).rfactor([(r.y, u)])
    intm.compute_root()
    return {"out": f}


def test_rfactor_keeps_the_domain_predicate():
    check(_predicated, [4])


def test_rfactor_refusals():
    for m, error in ((hl, hl.HalideError), (pw, pw.ScheduleError)):
        x, u = m.Var("x"), m.Var("u")
        r = m.RDom([(0, 5)])
        f = m.Func("f")
        f[x] = 0
        f[x] = f[x] * 2 - r.x  # not an associative reduction of f
        with pytest.raises(error):
            f.update(0).rfactor([(r.x, u)])
    x, u = pw.Var("x"), pw.Var("u")
    r, s = pw.RDom([(0, 5)]), pw.RDom([(0, 3)])
    f = pw.Func("f")
    f[x] = 0
    f[x] += r.x
    with pytest.raises(pw.ScheduleError, match="not a variable of its RDom"):
        f.update(0).rfactor([(s.x, u)])
    with pytest.raises(pw.ScheduleError, match="names a pure Var"):
        f.update(0).rfactor([(r.x, x)])


def _argmin_by_hand(preserve: str, form: str):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        src = m.Func("src")
        src[x, y] = (x * 7 + y * 3) % 5  # the minimum 0 is reached at many points: ties
        r = m.RDom([(0, 15), (0, 9)])
        f = m.Func("f")
        e = src[r.x, r.y]
        index = r.x + r.y * 15
        if form == "min":  # Halide's form: the last of equal values wins
            f[()] = (m.i32(99), 0)
            f[()] = (m.min(e, f[()][0]), m.select(f[()][0] < e, f[()][1], index))
        else:
            f[()] = (m.i32(-99), 0)
            f[()] = (m.max(e, f[()][0]), m.select(f[()][0] > e, f[()][1], index))
        u = m.Var("u")
        intm = f.update(0).rfactor([(r.y if preserve == "y" else r.x, u)])
        intm.compute_root().update(0).parallel(u)
        return {"out": f}

    return build


@pytest.mark.parametrize("form", ["min", "max"])
@pytest.mark.parametrize("preserve", ["x", "y"])
def test_rfactor_of_an_argmin_with_ties(preserve, form):
    check(_argmin_by_hand(preserve, form), [])


def test_rfactor_of_a_select_only_argmin_matches_the_unfactored_result():
    """Halide 21 cannot prove this form associative; Pixelweave can, and must compute what
    the reduction computes without rfactor (the first of equal values wins, in r.x order)."""

    def build(factor: bool):
        x = pw.Var("x")
        src = pw.Func("src")
        src[x] = (x * 7) % 5
        r = pw.RDom([(0, 15), (0, 4)])
        f = pw.Func("f")
        f[()] = (pw.i32(99), 0, 0)
        e = src[r.x + r.y]
        f[()] = pw.select(e < f[()][0], pw.Tuple((e, r.x, r.y)), f[()])
        if factor:
            f.update(0).rfactor([(r.y, pw.Var("u"))]).compute_root()
        return pw.Pipeline(f)

    expected = build(False).realize_reference([])
    for got in (build(True).realize([]), build(True).realize_reference([])):
        assert [int(a) for a in got] == [int(a) for a in expected] == [0, 0, 0]


def test_rfactor_refuses_a_tuple_update_that_is_not_associative():
    x = pw.Var("x")
    r = pw.RDom([(0, 5), (0, 3)])
    f = pw.Func("f")
    f[()] = (0, 0)
    f[()] = pw.select(r.x < f[()][0], pw.Tuple((r.x, r.y)), pw.Tuple((f[()][1], f[()][0])))
    with pytest.raises(pw.ScheduleError, match="associative"):
        f.update(0).rfactor([(r.y, x)])


@pytest.mark.parametrize("mode", ["every RVar", "in reverse order", "none"])
def test_rfactor_preserving_every_rvar_or_none(mode):
    def build(m):
        x = m.Var("x")
        r = m.RDom([(0, 6), (0, 4)])
        f = m.Func("f")
        f[x] = 0
        f[x] = f[x] + (r.x * 3 + r.y) * (x + 1)
        u, v = m.Var("u"), m.Var("v")
        if mode == "every RVar":
            f.update(0).rfactor([(r.x, u), (r.y, v)]).compute_root().vectorize(u, 4)
        elif mode == "in reverse order":
            f.update(0).rfactor([(r.y, v), (r.x, u)]).compute_root()
        else:
            f.update(0).rfactor([]).compute_root()
        return {"out": f}

    check(build, [3])


def _split_then_rfactor(preserve: str):
    """A row sum and a 2-D histogram whose r.x is split by 4 (19 and 22 are not multiples of
    it) before rfactor preserves the inner loop (lanes) or the outer one (blocks)."""

    def build(m):
        x, y = m.Var("x"), m.Var("y")
        src = m.Func("src")
        src[x, y] = m.u8((x * 37 + y * 11) % 23)
        r = m.RDom([(2, 19), (1, 5)])
        f = m.Func("f")
        f[y] = m.u32(0)
        f[y] = f[y] + m.u32(src[r.x, y + r.y])
        hist = m.Func("hist")
        s = m.RDom([(0, 22), (0, 6)])
        hist[x] = m.u32(0)
        hist[m.i32(src[s.x, s.y]) % 8] += m.u32(1)
        u = m.Var("u")
        rxo, rxi, sxo, sxi = m.RVar("rxo"), m.RVar("rxi"), m.RVar("sxo"), m.RVar("sxi")
        if preserve == "inner":
            intm = f.update(0).split(r.x, rxo, rxi, 4).rfactor(rxi, u)
            intm.compute_root().vectorize(u).update(0).vectorize(u)
            parts = hist.update(0).split(s.x, sxo, sxi, 4).rfactor([(sxi, u)])
        else:
            intm = f.update(0).split(r.x, rxo, rxi, 4).rfactor([(rxo, u)])
            intm.compute_root().update(0).parallel(u)
            parts = hist.update(0).split(s.x, sxo, sxi, 4).rfactor(sxo, u)
        parts.compute_root().update(0).parallel(u)
        out = m.Func("out")
        out[x, y] = f[y] * m.u32(1000) + hist[x]
        return {"out": out}

    return build


@pytest.mark.parametrize("preserve", ["inner", "outer"])
def test_rfactor_of_a_split_rvar(preserve):
    check(_split_then_rfactor(preserve), [8, 5])


def test_rfactor_of_a_split_rvar_refusals():
    x, u, v = pw.Var("x"), pw.Var("u"), pw.Var("v")
    r = pw.RDom([(0, 10), (0, 3)])
    f = pw.Func("f")
    f[x] = 0
    f[x] += r.x * r.y
    rxo, rxi = pw.RVar("rxo"), pw.RVar("rxi")
    stage = f.update(0).split(r.x, rxo, rxi, 4)
    with pytest.raises(pw.ScheduleError, match="not both"):
        stage.rfactor([(rxo, u), (rxi, v)])
    with pytest.raises(pw.ScheduleError, match="not both"):
        stage.rfactor([(rxi, u), (r.x, v)])
