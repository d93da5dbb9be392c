"""Root lets above storage (engine/lower/lift_root_lets.py) and the input checks below them
(engine/lower/input_checks.py): along a pyramid of root stages, the first level's storage
and the input's checks name the loop bounds of the levels instead of repeating their values,
so the statement in front of the first stage stays short; the pipeline still computes the
reference's image, and a read outside the input is still reported before anything runs."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import pixelweave as pw


def pyramid(levels: int) -> pw.Func:
    """`levels` root downsamplings of a repeat_edge input, then upsamplings back, each level
    adding the one before: every level's bounds depend on every later one's."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f = pw.BoundaryConditions.repeat_edge(inp)
    downs = []
    for k in range(levels):
        g = pw.Func(f"down{k}")
        g[x, y] = (f[2 * x - 1, y] + 2 * f[2 * x, y] + f[2 * x + 1, y]) * 0.25
        g.compute_root()
        downs.append(g)
        f = g
    for k in range(levels - 1, 0, -1):
        u = pw.Func(f"up{k}")
        u[x, y] = f[x // 2, y] + downs[k - 1][x, y]
        u.compute_root()
        f = u
    out = pw.Func("out")
    out[x, y] = f[x, y]
    return out


def lets_of(stmt: str, name: str) -> str:
    return next(line for line in stmt.splitlines() if re.match(rf"\s*let {re.escape(name)} =", line))


def test_storage_and_input_checks_name_the_loop_bounds():
    stmt = pw.Pipeline(pyramid(4)).lowered_stmt()
    # down0 is stored over what down1 reads of it: named, not down1's bounds spelled out
    assert "down1.s0.x.max" in lets_of(stmt, "down0.extent.0")
    checks = [line for line in stmt.splitlines() if "input `input` is read at x" in line]
    assert checks and all("down0.s0.x." in line for line in checks)
    assert stmt.index("let down0.s0.x.min") < stmt.index("input `input` is read at x")


def test_the_head_of_the_statement_grows_by_a_constant_per_level():
    heads = []
    for levels in (3, 6, 9):
        stmt = pw.Pipeline(pyramid(levels)).lowered_stmt()
        heads.append(len(stmt[: stmt.index("produce")]))
    growth = [b - a for a, b in itertools.pairwise(heads)]
    assert max(growth) <= 1.2 * min(growth)  # linear in the levels (each repeated chain grew)
    assert growth[0] < 1000  # three levels' lets and checks


def test_a_pyramid_computes_the_reference_image(rng):
    pipeline = pw.Pipeline(pyramid(4))
    image = rng.random((37, 53)).astype(np.float32)
    ours = pipeline.compile(level="fast")([50, 30], {"input": image})
    np.testing.assert_allclose(ours, pipeline.realize_reference([50, 30], {"input": image}), rtol=1e-6)


def test_a_read_outside_the_input_is_reported_before_any_stage_runs(rng):
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = inp[2 * x, y] + 1.0
    g[x, y] = f[x, y] + f[x + 1, y]
    f.compute_root()
    fn = pw.Pipeline(g).compile(level="fast")
    with pytest.raises(pw.RuntimeFailure, match=r"input `input` is read at x = 20, beyond its maximum 19"):
        fn([10, 4], {"input": rng.random((4, 20)).astype(np.float32)})
