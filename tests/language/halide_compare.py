"""Run one program written against both `halide` and `pixelweave` (m is the module) in
Halide, in Pixelweave's reference evaluator and compiled under schedules, and compare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import halide as hl
import numpy as np

import pixelweave as pw


def _arrays(result: Any) -> list[np.ndarray]:
    if isinstance(result, (list, tuple)):
        return [np.asarray(b).copy() for b in result]
    return [np.asarray(result).copy()]


def halide_outputs(build: Callable[[Any], dict], sizes: list[int]) -> list[np.ndarray]:
    out = build(hl)["out"]
    return _arrays(hl.Pipeline(out).realize(list(sizes)))


def assert_same(ours: list[np.ndarray], theirs: list[np.ndarray]) -> None:
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


def check(
    build: Callable[[Any], dict],
    sizes: list[int],
    schedules: tuple[Callable[[dict], None], ...] = (),
) -> list[np.ndarray]:
    """Halide's result, the reference evaluator's and the compiled one (with no schedule and
    with each of `schedules`) must agree; returns Halide's. `build(m)` returns its Funcs by
    name, the output as "out"; a schedule gets that dict."""
    theirs = halide_outputs(build, sizes)
    out = build(pw)["out"]
    assert_same(_arrays(pw.Pipeline(out).realize_reference(list(sizes))), theirs)
    assert_same(_arrays(pw.Pipeline(out).realize(list(sizes))), theirs)
    for schedule in schedules:
        funcs = build(pw)
        schedule(funcs)
        assert_same(_arrays(pw.Pipeline(funcs["out"]).realize(list(sizes))), theirs)
    return theirs
