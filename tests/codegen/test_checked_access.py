"""checked=True: every load and store tests its index against its buffer's storage and a
violation raises RuntimeFailure naming the buffer, the index range, the storage and the Func
being computed. Out-of-range accesses are forced here through hand-made statements."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Allocate, Block, For, ForType, Load, ProducerConsumer, Ramp, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, var

I32 = Int(32)


def scratch_pipeline(store_at: E.Expr, extent: int = 4, parallel: bool = False) -> LoweredPipeline:
    """produce f: a 4-element scratch buffer filled over x in [0, extent), stored at store_at(x);
    out[0] = tmp[0]."""
    x = var("x")
    loop = For("x", i32(0), i32(extent), ForType.PARALLEL if parallel else ForType.SERIAL, Store("tmp", x, store_at))
    body = Allocate(
        "tmp",
        I32,
        i32(4),
        True,
        Block([ProducerConsumer("f", True, loop), Store("out", Load(I32, "tmp", i32(0)), i32(0))]),
    )
    return LoweredPipeline("checked_scratch", [buffer("out", I32, 1, True)], body)


def run(lowered: LoweredPipeline, checked: bool, **arrays) -> dict:
    fn = compile_pipeline(lowered, level="fast", checked=checked)
    fn({}, arrays)
    return arrays


def test_store_past_a_scratch_allocation_is_reported():
    lowered = scratch_pipeline(E.Add(var("x"), i32(1)))  # writes tmp[4] on the last iteration
    with pytest.raises(RuntimeFailure) as err:
        run(lowered, True, out=np.zeros(1, np.int32))
    assert str(err.value) == (
        "checked access: store to `tmp` at flat index 4..4 outside its storage [0, 4) while computing `f`"
    )


def test_in_range_accesses_pass_and_give_the_unchecked_result():
    lowered = scratch_pipeline(var("x"))
    checked = run(lowered, True, out=np.zeros(1, np.int32))["out"]
    unchecked = run(lowered, False, out=np.zeros(1, np.int32))["out"]
    assert checked.tolist() == unchecked.tolist() == [0]


def test_a_violation_inside_a_parallel_loop_is_reported():
    lowered = scratch_pipeline(E.Sub(var("x"), i32(2)), parallel=True)  # x = 0 and 1 store below 0
    with pytest.raises(RuntimeFailure, match=r"checked access: store to `tmp` at flat index -\d\.\.-\d outside"):
        run(lowered, True, out=np.zeros(1, np.int32))


def test_a_vector_load_reaching_past_an_input_reports_its_lanes():
    """A 4-lane load at 6..9 from an 8-element input: its last lanes are outside [0, 8)."""
    body = Store("out", Load(I32.with_lanes(4), "inp", Ramp(i32(6), i32(1), 4)), Ramp(i32(0), i32(1), 4))
    lowered = LoweredPipeline("checked_vector", [buffer("inp", I32), buffer("out", I32, 1, True)], body)
    inp = np.arange(8, dtype=np.int32)
    with pytest.raises(RuntimeFailure) as err:
        run(lowered, True, inp=inp, out=np.zeros(4, np.int32))
    assert "load from `inp` at flat index 6..9 outside its storage [0, 8) while computing the pipeline" in str(
        err.value
    )


def test_a_gather_inside_an_input_with_row_strides_passes():
    """Input storage spans (rows - 1) * stride + columns elements: a load of the last one is legal."""
    body = Store("out", Load(I32, "inp", E.Add(E.Mul(i32(2), var("inp.stride.1")), i32(2))), i32(0))
    lowered = LoweredPipeline("checked_strided", [buffer("inp", I32, 2), buffer("out", I32, 1, True)], body)
    inp = np.arange(9, dtype=np.int32).reshape(3, 3)
    assert run(lowered, True, inp=inp, out=np.zeros(1, np.int32))["out"].tolist() == [8]


def test_checked_realize_of_a_scheduled_pipeline_matches_the_reference():
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    bx, by = pw.Func("bx"), pw.Func("by")
    bx[x, y] = clamped[x - 1, y] + clamped[x + 1, y]
    by[x, y] = bx[x, y - 1] + bx[x, y + 1]
    by.tile(x, y, xi, yi, 8, 4).vectorize(xi, 4).parallel(y)
    bx.compute_at(by, x).vectorize(x, 4)
    p = pw.Pipeline(by)
    data = np.random.default_rng(1).integers(0, 1000, (21, 30)).astype(np.uint16)
    ours = p.realize([29, 19], {"input": data}, checked=True)
    np.testing.assert_array_equal(ours, p.realize_reference([29, 19], {"input": data}))
