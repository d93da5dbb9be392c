"""unroll() of a Func computed inside a consumer's loop: the region's bounds are lets
(`min(...) - 1` to `min(...) + 2`) whose difference is constant, so its loops unroll, as
Halide's do (Harris's GPU schedule unrolls gray's wrapper this way)."""

from __future__ import annotations

from tests.language.halide_compare import check


def _harris_like(m):
    x, y, xo, xu = m.Var("x"), m.Var("y"), m.Var("xo"), m.Var("xu")
    gray, ix, out = m.Func("gray"), m.Func("Ix"), m.Func("out")
    gray[x, y] = x * 7 + y * 3
    ix[x, y] = gray[x - 1, y - 1] + gray[x + 1, y + 1] * 2
    out[x, y] = ix[x, y] - ix[x + 1, y]
    out.split(x, xo, x, 8)
    ix.compute_at(out, xo).split(x, x, xu, 2).unroll(xu)
    gray.in_(ix).compute_at(ix, x).vectorize(x, 2).unroll(x).unroll(y)
    return {"out": out}


def test_the_loops_of_a_region_of_constant_size_unroll():
    check(_harris_like, [21, 5])
