"""Run one pipeline description in Pixelweave's reference evaluator and in Halide, and compare.

A description is a function `build(m)` written once against the shared API (m is `engine`
or `halide`) that returns `(outputs, handles)`: the output Func(s) and a dict from input
name to its ImageParam or Param, so that Halide's inputs can be set by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import halide as hl
import numpy as np

import pixelweave as pw

Build = Callable[[Any], tuple[Any, dict[str, Any]]]


def run_halide(build: Build, sizes: list[int], inputs: dict[str, Any]) -> list[np.ndarray]:
    outputs, handles = build(hl)
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for name, value in inputs.items():
        handle = handles[name]
        if isinstance(value, np.ndarray):
            handle.set(hl.Buffer(np.ascontiguousarray(value)))
        else:
            handle.set(value)
    result = hl.Pipeline(list(outs)).realize(list(sizes))
    buffers = result if isinstance(result, tuple) else [result]
    return [np.asarray(b).copy() for b in buffers]


def run_reference(build: Build, sizes: list[int], inputs: dict[str, Any]) -> list[np.ndarray]:
    outputs, _ = build(pw)
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    result = pw.Pipeline(list(outs)).realize_reference(list(sizes), inputs)
    return result if isinstance(result, list) else [result]


def assert_same(ours: np.ndarray, theirs: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    if ours.dtype.kind == "f":
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(ours, theirs)


def compare_with_halide(
    build: Build, sizes: list[int], inputs: dict[str, Any] | None = None, rtol: float = 1e-5, atol: float = 1e-5
) -> list[np.ndarray]:
    """Evaluate with both and assert equality (bit for bit for integers); returns ours."""
    inputs = inputs or {}
    ours = run_reference(build, sizes, inputs)
    theirs = run_halide(build, sizes, inputs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert_same(a, b, rtol, atol)
    return ours
