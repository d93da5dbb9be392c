"""Values and block labels share LLVM's local names: parameters named like the labels the
backend makes (`fail`, `ok`, `entry`, ...) still compile and compute."""

from __future__ import annotations

import numpy as np

import pixelweave as pw


def test_params_named_like_internal_labels():
    x = pw.Var("x")
    inp = pw.ImageParam(pw.Int(32), 1, "input")
    names = ["fail", "ok", "entry", "unwind", "assert_failed", "message_done"]
    params = [pw.Param(pw.Int(32), n, 0) for n in names]
    f = pw.Func("f")
    f[x] = inp[x] + sum(p * (k + 1) for k, p in enumerate(params))
    fn = pw.Pipeline(f).compile(level="fast")
    values = {n: k + 2 for k, n in enumerate(names)}
    out = fn([5], {"input": np.arange(5, dtype=np.int32), **values})
    expected = np.arange(5) + sum((k + 1) * v for k, v in enumerate(values.values()))
    np.testing.assert_array_equal(out, expected)
