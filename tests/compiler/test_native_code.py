"""NativeCode: a compiled pipeline's object code carried to another pipeline object (as a Dask
worker receives it, pickled) and linked there without lowering or LLVM; refused with a clear
message for a CPU that lacks its features or for a pipeline it was not compiled for."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from pixelweave.engine.runtime.jit import compile_statistics, load_native_code

import pixelweave as pw
from tests.conftest import ROOT


def blur_pipeline(gain_name: str = "gain") -> pw.Pipeline:
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
    code = blur_pipeline().compile().native.native_code()
    shipped = pickle.loads(pickle.dumps(code))
    elsewhere = blur_pipeline()  # the same algorithm built again, as a worker rebuilds a document
    before = compile_statistics()
    adopted = elsewhere.load_native_code(shipped)
    assert elsewhere.compile() is adopted
    out = elsewhere.realize([51, 37], {"input": image, "gain": 5})
    after = compile_statistics()
    assert after["pipelines_compiled"] == before["pipelines_compiled"]
    assert after["objects_compiled"] == before["objects_compiled"]
    assert adopted.native.cache_hit == "shipped" and adopted.lowering is None
    np.testing.assert_array_equal(out, blur_pipeline().realize_reference([51, 37], {"input": image, "gain": 5}))


def test_native_code_for_a_cpu_this_machine_lacks_is_refused():
    code = blur_pipeline().compile().native.native_code()
    alien = dataclasses.replace(code, target=dataclasses.replace(code.target, cpu="imaginary", features="+warpdrive"))
    with pytest.raises(pw.CompileError, match=r"compiled for CPU imaginary, and this machine lacks .*warpdrive"):
        load_native_code(alien)


def test_native_code_of_another_pipeline_is_refused():
    code = blur_pipeline("gain").compile().native.native_code()
    with pytest.raises(pw.CompileError, match=r"compiled for another pipeline: its arguments differ in .*gain"):
        blur_pipeline("strength").load_native_code(code)


_LOAD_IN_A_FRESH_PROCESS = """
import pickle, sys
import numpy as np
from pixelweave.engine.runtime.jit import compile_statistics
from tests.compiler.test_native_code import blur_pipeline
code = pickle.loads(open(sys.argv[1], "rb").read())
image = np.arange(51 * 37, dtype=np.uint16).reshape(37, 51)
p = blur_pipeline()
p.load_native_code(code, target=code.target.name)
out = p.realize([51, 37], {"input": image}, target=code.target.name)
assert (out == blur_pipeline().realize_reference([51, 37], {"input": image})).all()
print(compile_statistics()["objects_compiled"], compile_statistics()["pipelines_compiled"])
"""


@pytest.mark.parametrize("runtime_fits", [True, False])
def test_a_fresh_process_links_the_shipped_runtime_only_if_this_cpu_can_run_it(tmp_path, runtime_fits):
    """Portable (x86-64-v2) code comes with a runtime built for the sending machine's CPU; a
    process whose CPU lacks that runtime's features compiles its own runtime instead."""
    code = blur_pipeline().compile(target="x86-64-v2").native.native_code()
    assert code.target.name == "x86-64-v2" and code.runtime_target.name == "host"
    if not runtime_fits:
        code = dataclasses.replace(code, runtime_target=dataclasses.replace(code.runtime_target, features="+warpdrive"))
    (tmp_path / "code.pickle").write_bytes(pickle.dumps(code))
    env = {**os.environ, "PIXELWEAVE_CACHE_DIR": str(tmp_path / "empty-cache")}
    done = subprocess.run([sys.executable, "-c", _LOAD_IN_A_FRESH_PROCESS, str(tmp_path / "code.pickle")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    objects_compiled, pipelines_compiled = map(int, done.stdout.split())
    assert pipelines_compiled == 0
    assert objects_compiled == (0 if runtime_fits else 1)  # 1: the runtime, built for this CPU
