"""Passes skip what cannot change: bounds inference rewrites only the statements that
produce the Func it is placing, storage folding shares one interval table among every
folded Func, flattening keeps expressions that read no Func or image. The images must be
the reference's at sizes with tails, with a Func computed at several sites and several
Funcs folded along one loop."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.lower import lower
from pixelweave.engine.stmt import ProducerConsumer, Realize
from pixelweave.engine.stmt_visit import walk_stmt

import pixelweave as pw


def _pipeline(two_sites: bool):
    """two_sites: g is read by both stages of out, so it is computed at a site in each;
    else a and b slide along out's y loop and their storage is folded."""
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    clamped = pw.BoundaryConditions.repeat_edge(image)
    a, b, g, out = pw.Func("a"), pw.Func("b"), pw.Func("g"), pw.Func("out")
    a[x, y] = clamped[x, y - 1] + clamped[x, y + 1]
    b[x, y] = a[x, y - 1] + a[x, y + 1] * 2
    g[x, y] = b[x - 1, y] + b[x + 1, y]
    out[x, y] = g[x, y] + x
    if two_sites:
        out[x, y] += g[x, y - 1] * 3
        g.compute_at(out, y)
    else:
        a.store_root().compute_at(out, y)
        b.store_root().compute_at(out, y)
    out.split(x, pw.Var("xo"), pw.Var("xi"), 4, pw.TailStrategy.GUARD_WITH_IF)
    return out


def test_the_pipelines_have_two_sites_and_two_folds():
    """What the reference test below exercises."""
    loop_nest = lower(pw.Pipeline(_pipeline(two_sites=True))).loop_nest
    produced = [s.name for s in walk_stmt(loop_nest) if isinstance(s, ProducerConsumer) and s.is_producer]
    assert produced.count("g") == 2
    loop_nest = lower(pw.Pipeline(_pipeline(two_sites=False))).loop_nest
    folds = {s.name: s.folds for s in walk_stmt(loop_nest) if isinstance(s, Realize)}
    assert folds["a"] and folds["b"]


@pytest.mark.parametrize("two_sites", [True, False])
@pytest.mark.parametrize(("width", "height"), [(1, 1), (7, 5), (13, 11)])
def test_shortcut_passes_compute_the_reference(two_sites, width, height):
    pipeline = pw.Pipeline(_pipeline(two_sites))
    inputs = {"image": (np.arange(15 * 17) * 37 % 1009).astype(np.uint16).reshape(15, 17)}
    got = pipeline.compile(level="fast", checked=True)([width, height], inputs)
    np.testing.assert_array_equal(got, pipeline.realize_reference([width, height], inputs))
