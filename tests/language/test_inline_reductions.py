"""Inline reductions and implicit variables against Halide 21: result types, tie rules
of argmin/argmax, empty domains, and `_` in calls and definitions, under schedules."""

from __future__ import annotations

import halide as hl
import numpy as np
import pytest

import pixelweave as pw
from tests.language.halide_compare import check


def _source(m, t):
    x, y = m.Var("x"), m.Var("y")
    src = m.Func("src")
    src[x, y] = m.cast(t, (x * 37 + y * 11) % 23) - m.cast(t, 5)
    return src, x, y


@pytest.mark.parametrize("t", ["u8", "i16", "f32"])
def test_sum_product_minimum_maximum_keep_the_type(t):
    def build(m):
        typ = {"u8": m.UInt(8), "i16": m.Int(16), "f32": m.Float(32)}[t]
        src, x, y = _source(m, typ)
        r = m.RDom([(0, 6), (1, 3)])
        out = m.Func("out")
        out[x, y] = m.Tuple(
            [
                m.sum(src[x + r.x, y + r.y]),
                m.product(m.clamp(src[x + r.x, y], m.cast(typ, 1), m.cast(typ, 2))),
                m.minimum(src[x + r.x, y + r.y]),
                m.maximum(r, src[x + r.x, y * 2 + r.y]),
            ]
        )
        return {"out": out, "src": src, "x": x, "y": y}

    def vectorized(d):
        d["out"].vectorize(d["x"], 4)
        d["src"].compute_root()

    result = check(build, [9, 4], (vectorized,))
    assert {a.dtype for a in result} == {np.dtype({"u8": "uint8", "i16": "int16", "f32": "float32"}[t])}


def test_argmin_argmax_take_the_first_of_equal_values():
    def build(m):
        x = m.Var("x")
        src = m.Func("src")
        src[x] = (x * 7) % 5  # 0 at x = 0, 5, 10; 4 at x = 2, 7, 12
        r = m.RDom([(1, 12)])
        out = m.Func("out")
        lo = m.argmin(src[r.x])
        hi = m.argmax(r, src[r.x] + x)
        out[x] = m.Tuple([lo[0], lo[1], hi[0], hi[1]])
        return {"out": out, "src": src, "x": x}

    result = check(build, [3], (lambda d: d["src"].compute_root(),))
    assert list(result[0]) == [5, 5, 5] and list(result[2]) == [2, 2, 2]


def test_argmin_over_two_dimensions_and_floats():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        src = m.Func("src")
        src[x, y] = m.f32((x - 3) * (x - 3) + (y - 2) * (y - 2)) * 0.5
        r = m.RDom([(0, 7), (0, 5)])
        out = m.Func("out")
        out[x] = m.argmin(src[r.x, r.y] + m.f32(x))
        return {"out": out, "src": src, "x": x}

    result = check(build, [2])
    assert list(result[0]) == [3, 3] and list(result[1]) == [2, 2]


def test_empty_domain_gives_the_identity():
    def build(m):
        x = m.Var("x")
        r = m.RDom([(0, 0)])
        out = m.Func("out")
        out[x] = m.Tuple([m.sum(m.u8(x + r.x)), m.maximum(m.f32(x + r.x)), m.argmin(m.i16(x + r.x))[1]])
        return {"out": out}

    result = check(build, [3])
    assert list(result[1]) == [-np.inf] * 3 and list(result[2]) == [32767] * 3


def test_sum_over_an_explicit_domain_the_expression_does_not_use_runs_once():
    def build(m):
        x = m.Var("x")
        r = m.RDom([(0, 5)])
        out = m.Func("out")
        out[x] = m.sum(r, x + 1)
        return {"out": out}

    assert list(check(build, [3])[0]) == [1, 2, 3]


def test_implicit_variables_in_calls_and_definitions():
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f = m.Func("f")
        f[x, y] = x + 10 * y
        g = m.Func("g")
        g[m._] = f[m._] * 2  # g(_0, _1)
        h = m.Func("h")
        h[x, m._] = g[m._] + x  # h(x, _0, _1)
        r = m.RDom([(0, 3)])
        s = m.Func("s")
        s[m._] = m.sum(h[r.x, m._])  # s(_0, _1)
        out = m.Func("out")
        out[x, y, m._] = s[y, x] + g[x, m._]  # out(x, y, _0)
        return {"out": out, "g": g, "s": s, "x": x, "y": y}

    def roots(d):
        d["g"].compute_root()
        d["s"].compute_at(d["out"], d["y"])

    check(build, [4, 3, 2], (roots,))


def test_implicit_variables_have_halides_names_and_refusals():
    for m in (hl, pw):
        x, y = m.Var("x"), m.Var("y")
        f = m.Func("f")
        f[x, y] = x + y
        h = m.Func("h")
        h[x, m._] = f[m._] + x
        assert [str(a) for a in h.args()] == ["x", "_0", "_1"]
        k = m.Func("k")
        k[x, m._] = x  # no implicit variable on the right: `_` stands for none
        assert k.dimensions() == 1
        q = m.Func("q")
        with pytest.raises(Exception, match="placeholder symbol '_'"):
            q[x] = f[m._]


def test_inline_reduction_refusals():
    x = pw.Var("x")
    with pytest.raises(pw.CompileError, match="must reference a reduction domain"):
        pw.sum(x + 1)
    r, s = pw.RDom([(0, 3)]), pw.RDom([(0, 4)])
    with pytest.raises(pw.CompileError, match="not the reduction domain"):
        pw.sum(r, x + s.x)
