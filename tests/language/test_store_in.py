"""Func.store_in(MemoryType) against Halide 21: the storage goes where it is asked on CPU
targets, the image stays Halide's, and what cannot be placed is refused with the reason
(never a stack overflow)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure, ScheduleError

import pixelweave as pw
from tests.language.halide_compare import check


def _tiled(memory: str, root: bool = False):
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        f = m.Func("f")
        f[x, y] = x * 3 + y
        g = m.Func("g")
        g[x, y] = f[x - 1, y] + f[x + 1, y]
        xo, xi = m.Var("xo"), m.Var("xi")
        g.split(x, xo, xi, 8)
        (f.compute_root() if root else f.compute_at(g, xo)).store_in(getattr(m.MemoryType, memory))
        return {"out": g, "f": f}

    return build


@pytest.mark.parametrize(("memory", "where"), [("Heap", "on heap"), ("Stack", "on stack"), ("Register", "on stack")])
def test_storage_goes_where_it_is_asked_and_the_image_is_halides(memory, where):
    check(_tiled(memory), [24, 3])
    stmt = pw.Pipeline(_tiled(memory)(pw)["out"]).lowered_stmt()
    assert f"allocate f[int32 * 10] {where}" in stmt


def test_stack_storage_of_a_size_known_only_at_run_time_is_checked_before_it_is_made():
    pipeline = pw.Pipeline(_tiled("Stack", root=True)(pw)["out"])
    assert "allocate f[int32 * (f.extent.0 * f.extent.1)] on stack" in pipeline.lowered_stmt()
    fn = pipeline.compile()
    np.testing.assert_array_equal(fn([24, 3]), pipeline.realize_reference([24, 3]))
    with pytest.raises(
        RuntimeFailure, match=r"store_in\(MemoryType.Stack\) of Func `f`: its storage would be \d+ bytes"
    ):
        fn([2000, 400])


def test_what_cannot_be_placed_is_refused():
    with pytest.raises(ScheduleError, match="register storage needs a constant size"):
        pw.Pipeline(_tiled("Register", root=True)(pw)["out"]).compile()
    x = pw.Var("x")
    big = pw.Func("big")
    big[x] = x
    out = pw.Func("out")
    out[x] = big[x % (1 << 20)]  # a constant region: 2**20 int32 values
    big.compute_root().store_in(pw.MemoryType.Stack)
    with pytest.raises(ScheduleError, match="its storage is 4194304 bytes, more than the 1048576 bytes"):
        pw.Pipeline(out).compile()
    f = pw.Func("f")
    f[x] = x
    with pytest.raises(ScheduleError, match=r"store_in\(MemoryType.GPUTexture\) of `f`: Pixelweave has no GPUTexture"):
        f.store_in(pw.MemoryType.GPUTexture)
    with pytest.raises(ScheduleError, match="takes a MemoryType"):
        f.store_in("stack")
    g = pw.Func("g")
    g[x] = f[x]
    f.store_in(pw.MemoryType.Heap)
    with pytest.raises(ScheduleError, match="it is computed inline, so it has no storage"):
        pw.Pipeline(g).compile()
    f.store_in(pw.MemoryType.Auto)
    g.store_in(pw.MemoryType.Stack)
    with pytest.raises(ScheduleError, match="it is an output of the pipeline"):
        pw.Pipeline(g).compile()
    h = _tiled("GPUShared")(pw)
    with pytest.raises(ScheduleError, match=r"store_in\(MemoryType.GPUShared\) of Func `f`: GPUShared is the local"):
        pw.Pipeline(h["out"]).compile()
