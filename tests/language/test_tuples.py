"""Funcs that return Tuples, against Halide 21: definitions, element calls, updates
(argmin by hand), select and mux on Tuples, under schedules."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw
from tests.language.halide_compare import check


def _pair(m):
    x, y = m.Var("x"), m.Var("y")
    f = m.Func("f")
    f[x, y] = (x + 2 * y, m.f32(x) * 0.5 - m.f32(y))
    g = m.Func("g")
    g[x, y] = m.f32(f[x, y][0]) + f[x + 1, y][1] * m.f32(f[x, y + 1][0])
    return {"out": g, "f": f, "x": x, "y": y}


def test_tuple_func_read_by_a_consumer_under_schedules():
    def root(d):
        d["f"].compute_root()

    def at_row(d):
        d["f"].compute_at(d["out"], d["y"])

    def tiled(d):
        xo, xi = pw.Var("xo"), pw.Var("xi")
        d["out"].split(d["x"], xo, xi, 8).vectorize(xi).parallel(d["y"])
        d["f"].compute_at(d["out"], xo).vectorize(d["x"], 4)

    def sliding(d):
        d["f"].store_root().compute_at(d["out"], d["y"])

    check(_pair, [21, 9], (root, at_row, tiled, sliding))


def _tuple_output(m):
    x, y = m.Var("x"), m.Var("y")
    f = m.Func("f")
    f[x, y] = m.Tuple([m.u8(x * 3 + y), m.f64(x) / 3.0, x - y])
    return {"out": f, "x": x, "y": y}


def test_tuple_output_gives_one_array_per_value():
    def vec(d):
        d["out"].vectorize(d["x"], 8).parallel(d["y"])

    result = check(_tuple_output, [13, 5], (vec,))
    assert [a.dtype for a in result] == [np.uint8, np.float64, np.int32]


def _argmin_by_hand(m):
    x = m.Var("x")
    h = m.Func("h")
    h[x] = m.f32((x * 37) % 11) - 4.0  # the minimum, -4, first at x = 0, again at 11, 22
    r = m.RDom([(3, 30)])
    am = m.Func("am")
    am[()] = (0, m.f32(1000.0))
    am[()] = m.select(h[r.x] < am[()][1], m.Tuple((r.x, h[r.x])), am[()])
    return {"out": am, "h": h}


def test_argmin_written_as_a_tuple_update():
    result = check(_argmin_by_hand, [], (lambda d: d["h"].compute_root(),))
    assert int(result[0]) == 11 and float(result[1]) == -4.0


def _swap_update(m):
    """Every value of an update is computed from the old values before any is stored."""
    x = m.Var("x")
    f = m.Func("f")
    f[x] = (x, 10 * x)
    f[x] = (f[x][1], f[x][0])
    r = m.RDom([(0, 4)])
    f[r.x] = (f[r.x][0] + f[r.x][1], f[r.x][0] - f[r.x][1])
    return {"out": f, "x": x}


def test_tuple_update_reads_old_values_of_every_element():
    check(_swap_update, [6], (lambda d: d["out"].vectorize(d["x"], 4),))


def _running_stats(m):
    """A 2-D Tuple reduction per row: count, sum and maximum along x, with the row pure."""
    x, y = m.Var("x"), m.Var("y")
    src = m.Func("src")
    src[x, y] = m.u16((x * 13 + y * 7) % 29)
    r = m.RDom([(0, 17)])
    s = m.Func("s")
    s[y] = (m.i32(0), m.u32(0), m.u16(0))
    s[y] = (s[y][0] + 1, s[y][1] + m.u32(src[r.x, y]), m.max(s[y][2], src[r.x, y]))
    out = m.Func("out")
    out[x, y] = m.f32(s[y][1]) / m.f32(s[y][0]) + m.f32(s[y][2]) + m.f32(x)
    return {"out": out, "s": s, "src": src, "x": x, "y": y}


def test_tuple_reduction_computed_at_a_consumer_loop():
    def at_y(d):
        d["s"].compute_at(d["out"], d["y"])
        d["src"].compute_root()

    def parallel(d):
        d["s"].compute_root().parallel(d["y"])
        d["s"].update(0).parallel(d["y"])

    check(_running_stats, [5, 7], (at_y, parallel))


def _mux_and_select(m):
    x, y = m.Var("x"), m.Var("y")
    a = m.Func("a")
    a[x, y] = m.mux(x - 2, [m.i16(10 + y), m.i16(20), m.i16(30 - y)])
    b = m.Func("b")
    b[x, y] = m.select(x > y, m.Tuple([m.i16(x), m.f32(y)]), m.Tuple([a[x, y], m.f32(x) * 2.0]))
    return {"out": b, "a": a, "x": x, "y": y}


def test_mux_and_tuple_select():
    check(_mux_and_select, [8, 3], (lambda d: d["a"].compute_root(),))


def _inlined_tuple(m):
    x = m.Var("x")
    f = m.Func("f")
    f[x] = (x * x, m.u8(x))
    g = m.Func("g")
    g[x] = f[x][0] - m.i32(f[x + 2][1])
    return {"out": g, "f": f, "x": x}


def test_tuple_func_inlined_and_scheduled():
    check(_inlined_tuple, [10], (lambda d: d["f"].compute_root().vectorize(d["x"], 4),))


def test_tuple_refusals_match_halide():
    for m in (hl, pw):
        x = m.Var("x")
        f = m.Func("f")
        f[x] = (x, m.f32(x))
        with pytest.raises(Exception, match="returns a Tuple"):
            f.type()
        with pytest.raises(Exception, match="Tuple"):
            g = m.Func("g")
            g[x] = f[x] + 1
        scalar = m.Func("s")
        scalar[x] = x
        with pytest.raises(Exception, match="does not return a Tuple"):
            scalar[x][0]
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = (x, pw.f32(x))
    assert f.types() == [pw.Int(32), pw.Float(32)] and f.outputs() == 2
    with pytest.raises(pw.CompileError, match="has 1 value, but the pure definition has 2"):
        f[x] = x + 1
    with pytest.raises(pw.CompileError, match=r"Tuple element 1\) has type int32"):
        f[x] = (x + 1, x)
    with pytest.raises(pw.CompileError, match="out of range"):
        f[x][2]


def test_tuple_funcs_under_the_automatic_scheduler():
    funcs = _running_stats(pw)
    out = funcs["out"]
    out.set_estimates([(0, 64), (0, 32)])
    pipeline = pw.Pipeline(out)
    pipeline.auto_schedule()
    np.testing.assert_allclose(pipeline.realize([64, 32]), pipeline.realize_reference([64, 32]), rtol=1e-6)


def test_loop_nest_shows_one_store_per_value():
    funcs = _pair(pw)
    funcs["f"].compute_root()
    text = pw.Pipeline(funcs["out"]).lowered_stmt()
    assert "allocate f.0[int32" in text and "allocate f.1[float32" in text
    assert "f.0[" in text and "f.1[" in text


def test_pipeline_of_a_tuple_output_and_a_plain_output():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f = m.Func("f")
        f[x, y] = (m.i16(x - y), m.u8(x + y))
        g = m.Func("g")
        g[x, y] = m.i32(f[x, y][0]) * m.i32(f[x, y][1])
        return [g, f]

    theirs = [np.asarray(b).copy() for b in hl.Pipeline(build(hl)).realize([6, 4])]
    ours = pw.Pipeline(build(pw)).realize([6, 4])
    reference = pw.Pipeline(build(pw)).realize_reference([6, 4])
    assert len(theirs) == len(ours) == len(reference) == 3
    for a, b, c in zip(ours, reference, theirs, strict=True):
        assert a.dtype == b.dtype == c.dtype
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


def test_mux_of_tuples_and_of_a_tuple():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f = m.Func("f")
        f[x, y] = m.mux(x, [m.Tuple([y, m.f32(x)]), m.Tuple([-y, m.f32(0.5)]), m.Tuple([x * y, m.f32(y)])])
        g = m.Func("g")
        g[x, y] = m.mux(y, m.Tuple([f[x, y][0], x + 100])) + m.i32(f[x, y][1])
        return {"out": g}

    check(build, [5, 3])
