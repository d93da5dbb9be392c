"""A pipeline exported as a library runs from a fresh Python process (ctypes) and from C."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from pixelweave.engine.errors import CompileError

import pixelweave as pw


def brighten() -> pw.Pipeline:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    gain = pw.Param(pw.Float(32), "gain", 2.0)
    out = pw.Func("out")
    out[x, y] = pw.saturating_cast(pw.UInt(8), pw.f32(inp[x, y]) * gain + 1.0)
    out.vectorize(x, 16).parallel(y)
    return pw.Pipeline(out)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lib")
    return brighten().compile_to_library("brighten", str(directory))


def test_files_written(library):
    assert library.object_path.exists() and library.shared_library_path.exists()
    header = library.header_path.read_text()
    assert "int32_t brighten(" in header and "brighten_error_message" in header


def test_fresh_python_process(library):
    script = textwrap.dedent(
        f"""
        import ctypes, json, numpy as np
        class Dim(ctypes.Structure):
            _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32),
                        ("stride", ctypes.c_int32), ("flags", ctypes.c_int32)]
        class Buf(ctypes.Structure):
            _fields_ = [("host", ctypes.c_void_p), ("type_code", ctypes.c_int32), ("type_bits", ctypes.c_int32),
                        ("dimensions", ctypes.c_int32), ("flags", ctypes.c_int32), ("dim", ctypes.POINTER(Dim))]
        lib = ctypes.CDLL({str(library.shared_library_path)!r})
        def buf(a):
            dims = (Dim * 2)(Dim(0, a.shape[1], 1, 0), Dim(0, a.shape[0], a.shape[1], 0))
            return Buf(a.ctypes.data, 1, 8, 2, 0, dims), dims
        src = (np.arange(12 * 20) % 200).astype(np.uint8).reshape(12, 20)
        dst = np.zeros((10, 16), np.uint8)
        b_in, d_in = buf(src); b_out, d_out = buf(dst)
        lib.brighten.argtypes = [ctypes.POINTER(Buf), ctypes.c_float, ctypes.POINTER(Buf)]
        code = lib.brighten(ctypes.byref(b_in), 1.5, ctypes.byref(b_out))
        small = np.zeros((2, 2), np.uint8); b_small, d_small = buf(small)
        bad = lib.brighten(ctypes.byref(b_small), 1.5, ctypes.byref(b_out))
        lib.brighten_error_message.restype = ctypes.c_char_p
        print(json.dumps({{"code": code, "out": dst.tolist(), "bad": bad,
                          "message": lib.brighten_error_message().decode()}}))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    data = json.loads(result.stdout)
    assert data["code"] == 0
    src = (np.arange(12 * 20) % 200).astype(np.uint8).reshape(12, 20)
    expected = brighten().realize_reference([16, 10], {"input": src, "gain": 1.5})
    np.testing.assert_array_equal(np.array(data["out"], np.uint8), expected)
    assert data["bad"] != 0 and "input `input` is read at x = 15, beyond its maximum 1" in data["message"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_program(library, tmp_path):
    program = tmp_path / "main.c"
    program.write_text(
        textwrap.dedent(
            """
            #include <stdio.h>
            #include "brighten.h"
            int main(void) {
                uint8_t in[4 * 16], out[4 * 16];
                for (int i = 0; i < 64; i++) in[i] = (uint8_t)(i * 5);
                pw_dimension_t din[2] = {{0, 16, 1, 0}, {0, 4, 16, 0}};
                pw_dimension_t dout[2] = {{0, 16, 1, 0}, {0, 4, 16, 0}};
                pw_buffer_t bin = {in, 1, 8, 2, 0, din};
                pw_buffer_t bout = {out, 1, 8, 2, 0, dout};
                int code = brighten(&bin, 2.0f, &bout);
                if (code != 0) { printf("error %s\\n", brighten_error_message()); return 1; }
                for (int i = 0; i < 64; i++) printf("%d ", out[i]);
                printf("\\n");
                return 0;
            }
            """
        )
    )
    exe = tmp_path / "main"
    lib_dir = library.shared_library_path.parent
    subprocess.run(
        ["cc", str(program), f"-I{lib_dir}", f"-L{lib_dir}", "-lbrighten", f"-Wl,-rpath,{lib_dir}", "-o", str(exe)],
        check=True,
        timeout=120,
    )
    output = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout.split()
    src = (np.arange(64) * 5).astype(np.uint8).reshape(4, 16)
    expected = brighten().realize_reference([16, 4], {"input": src, "gain": 2.0})
    assert [int(v) for v in output] == expected.reshape(-1).tolist()


def test_library_name_must_be_a_c_identifier(tmp_path):
    with pytest.raises(CompileError, match=r"must be a C identifier"):
        brighten().compile_to_library("my-lib", str(tmp_path))
