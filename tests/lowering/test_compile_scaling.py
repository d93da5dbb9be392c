"""Lowering cost grows linearly with the pipeline: along a 1-D chain of boundary-conditioned
compute_root stages each stage's bounds are named lets that refer to its consumer's lets,
so the lowered statement grows by a constant amount per stage (it grew quadratically, and
the bounds threefold per stage before simplification, when lets were substituted).

Sizes are counted as expression trees (a node shared by two parents counts twice), which
is what a printer or a pass that does not memoize walks.
"""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.lower import lower
from pixelweave.engine.stmt import Stmt
from pixelweave.engine.stmt_visit import walk_stmt

import pixelweave as pw

BOUNDARIES = ["repeat_edge", "mirror_image", "constant_exterior"]


def chain(stages: int, boundary: str) -> pw.Pipeline:
    """input -> s0 -> s1 -> ... each a 3-tap blur of the boundary-conditioned previous stage."""
    x = pw.Var("x")
    inp = pw.ImageParam(pw.Float(32), 1, "input")
    bounds = [(inp.dim(0).min(), inp.dim(0).extent())]
    bc = pw.BoundaryConditions
    make = (
        (lambda src, b=None: bc.constant_exterior(src, 0.0, b))
        if boundary == "constant_exterior"
        else getattr(bc, boundary)
    )
    f = make(inp)
    for i in range(stages):
        g = pw.Func(f"s{i}")
        g[x] = (f[x - 1] + f[x] + f[x + 1]) * 0.25
        g.compute_root()
        f = make(g, bounds)
    out = pw.Func("out")
    out[x] = f[x]
    return pw.Pipeline(out)


def tree_size(stmt: Stmt) -> int:
    """Statement nodes plus the tree size of every expression in them."""
    sizes: dict[int, int] = {}

    def expr_size(e: E.Expr) -> int:
        hit = sizes.get(id(e))
        if hit is None:
            hit = 1 + sum(expr_size(c) for c in e.children())
            sizes[id(e)] = hit
        return hit

    total = 0
    for s in walk_stmt(stmt):
        total += 1
        total += sum(expr_size(c) for c in s.children() if isinstance(c, E.Expr))
    return total


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_loop_nest_grows_linearly_along_a_chain(boundary):
    sizes = {n: tree_size(lower(chain(n, boundary)).loop_nest) for n in (3, 6, 12)}
    # Linear: going from 6 to 12 stages adds about twice what going from 3 to 6 added
    # (four times as much when it grows quadratically).
    assert sizes[12] - sizes[6] <= 2.2 * (sizes[6] - sizes[3]), sizes


@pytest.mark.parametrize("boundary", ["repeat_edge", "mirror_image"])
def test_lowered_statement_grows_linearly_along_a_chain(boundary):
    sizes = {n: tree_size(lower(chain(n, boundary)).lowered.body) for n in (3, 6, 12)}
    assert sizes[12] - sizes[6] <= 2.2 * (sizes[6] - sizes[3]), sizes


def test_chain_bounds_name_the_consumers_lets():
    """Each stage's region is written in terms of its consumer's region lets."""
    text = pw.Pipeline.lowered_stmt(chain(4, "repeat_edge"))
    assert "let s2.s0.x.min = " in text
    line = next(ln for ln in text.splitlines() if "let s1.s0.x.min = " in ln)
    assert "s2.s0.x.min" in line


@pytest.mark.parametrize("boundary", ["repeat_edge", "mirror_image", "constant_exterior"])
def test_chain_computes_the_reference_image(boundary):
    p = chain(7, boundary)
    image = np.random.default_rng(3).random(53, dtype=np.float32)
    ours = p.compile(level="fast")([61], {"input": image})
    ref = p.realize_reference([61], {"input": image})
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
