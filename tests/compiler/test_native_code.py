"""NativeCode: a compiled pipeline's object code carried to another pipeline object (as a Dask
worker receives it, pickled) and linked there without lowering or LLVM; refused with a clear
message for a CPU that lacks its features or for a pipeline it was not compiled for."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from pixelweave.engine.runtime.jit import compile_statistics, load_native_code

import pixelweave as pw


def _blur(gain_name: str = "gain") -> pw.Pipeline:
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    gain = pw.Param(pw.UInt(16), gain_name, 3)
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    blur_x, out = pw.Func("blur_x"), pw.Func("out")
    blur_x[x, y] = clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]
    out[x, y] = blur_x[x, y - 1] + blur_x[x, y] * gain + blur_x[x, y + 1]
    out.tile(x, y, xi, yi, 16, 8).vectorize(xi, 8).parallel(y)
    blur_x.compute_at(out, x)
    return pw.Pipeline(out)


def test_native_code_runs_in_a_fresh_pipeline_without_compiling():
    image = np.random.default_rng(3).integers(0, 1000, (37, 51), dtype=np.uint16)
    code = _blur().compile().native.native_code()
    shipped = pickle.loads(pickle.dumps(code))
    elsewhere = _blur()  # the same algorithm built again, as a worker rebuilds a document
    before = compile_statistics()
    adopted = elsewhere.load_native_code(shipped)
    assert elsewhere.compile() is adopted
    out = elsewhere.realize([51, 37], {"input": image, "gain": 5})
    after = compile_statistics()
    assert after["pipelines_compiled"] == before["pipelines_compiled"]
    assert after["objects_compiled"] == before["objects_compiled"]
    assert adopted.native.cache_hit == "shipped" and adopted.lowering is None
    np.testing.assert_array_equal(out, _blur().realize_reference([51, 37], {"input": image, "gain": 5}))


def test_native_code_for_a_cpu_this_machine_lacks_is_refused():
    code = _blur().compile().native.native_code()
    alien = dataclasses.replace(code, target=dataclasses.replace(code.target, cpu="imaginary", features="+warpdrive"))
    with pytest.raises(pw.CompileError, match=r"compiled for CPU imaginary, and this machine lacks .*warpdrive"):
        load_native_code(alien)


def test_native_code_of_another_pipeline_is_refused():
    code = _blur("gain").compile().native.native_code()
    with pytest.raises(pw.CompileError, match=r"compiled for another pipeline: its arguments differ in .*gain"):
        _blur("strength").load_native_code(code)
