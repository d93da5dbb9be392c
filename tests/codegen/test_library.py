"""Exported libraries: used from a fresh Python process through ctypes, and from C."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.library import export_library
from pixelweave.engine.stmt import AssertStmt, Block, Broadcast, For, ForType, Load, Ramp, Store

from tests.codegen.builders import buffer, i32, scalar, var

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler `cc`")


def brighten_pipeline() -> LoweredPipeline:
    """out(x, y) = min(inp(x, y) + offset, 255) as uint8, rows in parallel, 16 lanes."""
    x, y = var("x"), var("y")
    u8, u16 = UInt(8), UInt(16)
    lanes = 16

    def index(b: str) -> Ramp:
        return Ramp(E.Add(E.Mul(x, i32(lanes)), E.Mul(y, var(f"{b}.stride.1"))), i32(1), lanes)

    wide = E.Cast(u16.with_lanes(lanes), Load(u8.with_lanes(lanes), "inp", index("inp")))
    value = E.Cast(
        u8.with_lanes(lanes),
        E.Min(E.Add(wide, Broadcast(E.Cast(u16, var("offset", u8)), lanes)), Broadcast(E.Const(u16, 255), lanes)),
    )
    check = AssertStmt(
        E.EQ(E.Mod(var("out.extent.0"), i32(lanes)), i32(0)),
        "the width ({}) must be a multiple of 16",
        (var("out.extent.0"),),
    )
    row = For("x", i32(0), E.Div(var("out.extent.0"), i32(lanes)), ForType.SERIAL, Store("out", value, index("out")))
    body = Block([check, For("y", i32(0), var("out.extent.1"), ForType.PARALLEL, row)])
    args = [buffer("inp", u8, 2), scalar("offset", u8), buffer("out", u8, 2, True)]
    return LoweredPipeline("brighten", args, body)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("exported")
    return export_library(brighten_pipeline(), "pw_brighten", directory, target="x86-64-v3")


@needs_cc
def test_exports_only_the_entry_points(exported) -> None:
    assert exported.object_path.exists() and exported.header_path.exists()
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    listing = subprocess.run(
        [nm, "-D", "--defined-only", str(exported.shared_library_path)], capture_output=True, text=True, check=True
    )
    symbols = {line.split()[-1] for line in listing.stdout.splitlines() if line.split()[1] in "TtDdBb"}
    assert symbols == {"pw_brighten", "pw_brighten_argv", "pw_brighten_error_message", "pw_brighten_release_memory"}


@needs_cc
def test_library_from_a_fresh_python_process(exported) -> None:
    script = textwrap.dedent(
        f"""
        import ctypes
        import numpy as np

        class Dim(ctypes.Structure):
            _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32), ("flags", ctypes.c_int32)]

        class Buf(ctypes.Structure):
            _fields_ = [("host", ctypes.c_void_p), ("type_code", ctypes.c_int32), ("type_bits", ctypes.c_int32),
                        ("dimensions", ctypes.c_int32), ("flags", ctypes.c_int32), ("dim", ctypes.POINTER(Dim))]

        def describe(a):
            dims = (Dim * 2)(Dim(0, a.shape[1], 1, 0), Dim(0, a.shape[0], a.strides[0], 0))
            return Buf(a.ctypes.data, 1, 8, 2, 0, dims), dims

        lib = ctypes.CDLL({str(exported.shared_library_path)!r})
        lib.pw_brighten.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_void_p]
        lib.pw_brighten_error_message.restype = ctypes.c_char_p
        inp = (np.arange(64 * 48) % 256).astype(np.uint8).reshape(48, 64)
        out = np.zeros_like(inp)
        (bi, di), (bo, do) = describe(inp), describe(out)
        rc = lib.pw_brighten(ctypes.byref(bi), 100, ctypes.byref(bo))
        assert rc == 0, rc
        assert (out == np.minimum(inp.astype(np.int32) + 100, 255)).all()
        narrow = np.zeros((48, 8), np.uint8)
        bn, dn = describe(narrow)
        assert lib.pw_brighten(ctypes.byref(bi), 1, ctypes.byref(bn)) == 1
        print(lib.pw_brighten_error_message().decode())
        offset = ctypes.c_uint8(7)
        args = (ctypes.c_void_p * 3)(ctypes.addressof(bi), ctypes.addressof(offset), ctypes.addressof(bo))
        assert lib.pw_brighten_argv(args) == 0
        assert (out == np.minimum(inp.astype(np.int32) + 7, 255)).all()
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["the width (8) must be a multiple of 16", "ok"]


@needs_cc
def test_library_from_c(exported, tmp_path) -> None:
    program = tmp_path / "main.c"
    program.write_text(
        textwrap.dedent(
            """
            #include <stdio.h>
            #include <string.h>
            #include "pw_brighten.h"

            int main(void) {
                static uint8_t in[32 * 20], out[32 * 20];
                for (int i = 0; i < 32 * 20; i++) in[i] = (uint8_t)(i * 7);
                pw_dimension_t in_dim[2] = {{0, 32, 1, 0}, {0, 20, 32, 0}};
                pw_dimension_t out_dim[2] = {{0, 32, 1, 0}, {0, 20, 32, 0}};
                pw_buffer_t in_buf = {in, PW_TYPE_UINT, 8, 2, 0, in_dim};
                pw_buffer_t out_buf = {out, PW_TYPE_UINT, 8, 2, 0, out_dim};
                int rc = pw_brighten(&in_buf, 30, &out_buf);
                if (rc != PW_SUCCESS) { printf("failed %d: %s\\n", rc, pw_brighten_error_message()); return 1; }
                for (int i = 0; i < 32 * 20; i++) {
                    int want = in[i] + 30 > 255 ? 255 : in[i] + 30;
                    if (out[i] != want) { printf("mismatch at %d\\n", i); return 1; }
                }
                in_buf.type_code = PW_TYPE_FLOAT;
                rc = pw_brighten(&in_buf, 30, &out_buf);
                printf("%d %s\\n", rc == PW_BAD_ARGUMENT, pw_brighten_error_message());
                return 0;
            }
            """
        )
    )
    exe = tmp_path / "main"
    directory = exported.shared_library_path.parent
    compile_cmd = [
        "cc",
        "-O1",
        "-Wall",
        "-Werror",
        "-I",
        str(directory),
        str(program),
        "-o",
        str(exe),
        "-L",
        str(directory),
        "-lpw_brighten",
    ]
    built = subprocess.run(compile_cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    env = dict(os.environ, LD_LIBRARY_PATH=str(directory))
    ran = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip() == (
        "1 buffer `inp` holds unsupported elements (type_code 2, type_bits 8), but the pipeline expects uint8 "
        "(type_code 1, type_bits 8)"
    )


def test_header_documents_arguments(exported) -> None:
    header = Path(exported.header_path).read_text()
    assert "int32_t pw_brighten(const pw_buffer_t *inp, uint8_t offset, pw_buffer_t *out);" in header
    assert "0. inp: input buffer of uint8, 2 dimension(s)" in header
    assert "PW_BAD_ARGUMENT = 3" in header
    assert "NumPy's last axis first" in header
