"""Exported libraries with checked=True: every load and store index is tested against its
buffer, and a violation returns PW_ASSERTION_FAILED with a message naming the buffer, the
index, the storage and the Func being computed (the JIT's checked mode, in a library)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.runtime.library import export_library

import pixelweave as pw
from tests.codegen.test_checked_access import scratch_pipeline

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler `cc`")

CALL_1D = """
import ctypes
import numpy as np

class Dim(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32),
                ("flags", ctypes.c_int32)]

class Buf(ctypes.Structure):
    _fields_ = [("host", ctypes.c_void_p), ("type_code", ctypes.c_int32), ("type_bits", ctypes.c_int32),
                ("dimensions", ctypes.c_int32), ("flags", ctypes.c_int32), ("dim", ctypes.POINTER(Dim))]

lib = ctypes.CDLL({path!r})
lib.{name}_error_message.restype = ctypes.c_char_p
out = np.full({width}, -1, np.int32)
dims = (Dim * 1)(Dim(0, out.shape[0], 1, 0))
buf = Buf(out.ctypes.data, 0, 32, 1, 0, dims)
rc = lib.{name}(ctypes.byref(buf))
print(rc, lib.{name}_error_message().decode() if rc else out.tolist())
"""


def _call(library, name: str, width: int) -> str:
    script = textwrap.dedent(CALL_1D.format(path=str(library.shared_library_path), name=name, width=width))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


@needs_cc
def test_a_checked_library_reports_a_store_outside_its_storage(tmp_path):
    lowered = scratch_pipeline(E.Add(E.Variable("x", pw.Int(32), "var"), E.Const(pw.Int(32), 1)))
    checked = export_library(lowered, "pw_checked", tmp_path, checked=True, level="fast")
    assert _call(checked, "pw_checked", 1) == (
        "1 checked access: store to `tmp` at flat index 4..4 outside its storage [0, 4) while computing `f`"
    )


@needs_cc
def test_a_checked_library_of_a_pipeline_computes_what_the_reference_does(tmp_path):
    x = pw.Var("x")
    f, out = pw.Func("f"), pw.Func("out")
    f[x] = x * 3
    out[x] = f[x] + f[x + 2]
    f.compute_at(out, x)
    out.vectorize(x, 4)
    pipeline = pw.Pipeline(out)
    library = pipeline.compile_to_library("pw_checked_sum", tmp_path, checked=True)
    expected = pipeline.realize_reference([12]).tolist()
    assert _call(library, "pw_checked_sum", 12) == f"0 {expected}"
    assert expected == [int(v) for v in np.arange(12) * 6 + 6]


def test_checked_libraries_are_for_cpu_targets():
    x = pw.Var("x")
    out = pw.Func("out")
    out[x] = x
    with pytest.raises(CompileError, match="checked=True is available for CPU targets only"):
        pw.Pipeline(out).compile_to_library("pw_gpu", ".", target="opencl", checked=True)
