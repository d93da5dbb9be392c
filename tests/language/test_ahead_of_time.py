"""Item 6 of issue 13: Halide's ahead-of-time outputs and compile_to_callable, against `halide`."""

import subprocess

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def brighten(lang):
    x, y = lang.Var("x"), lang.Var("y")
    im = lang.ImageParam(lang.UInt(8), 2, "im")
    gain = lang.Param(lang.Int(32), "gain")
    f = lang.Func("brighten")
    f[x, y] = lang.u8(lang.min(lang.i32(im[x, y]) * gain // 4 + x, 255))
    return f, im, gain


INPUT = np.random.default_rng(3).integers(0, 256, size=(5, 7), dtype=np.uint8)

C_MAIN = r"""
#include <stdio.h>
#include "brighten.h"
int main(void) {
    static uint8_t in[5][7], out[5][7];
    for (int y = 0; y < 5; y++) for (int x = 0; x < 7; x++) in[y][x] = (uint8_t)((x * 37 + y * 91) % 256);
    pw_dimension_t din[2] = {{0, 7, 1, 0}, {0, 5, 7, 0}}, dout[2] = {{0, 7, 1, 0}, {0, 5, 7, 0}};
    pw_buffer_t bin = {&in[0][0], PW_TYPE_UINT, 8, 2, 0, din}, bout = {&out[0][0], PW_TYPE_UINT, 8, 2, 0, dout};
    int code = brighten(&bin, 5, &bout);
    if (code != 0) { printf("error %d: %s\n", code, brighten_error_message()); return 1; }
    for (int y = 0; y < 5; y++) for (int x = 0; x < 7; x++) printf("%d\n", out[y][x]);
    return 0;
}
"""


def test_static_library_links_into_a_c_program_and_matches_halide(tmp_path):
    f, im, gain = brighten(pw)
    f.compile_to_static_library(str(tmp_path / "brighten"), [im, gain], "brighten")
    assert (tmp_path / "brighten.a").exists() and (tmp_path / "brighten.h").exists()
    (tmp_path / "main.c").write_text(C_MAIN)
    exe = tmp_path / "main"
    subprocess.run(
        ["cc", "-o", str(exe), str(tmp_path / "main.c"), str(tmp_path / "brighten.a"), "-lm", "-lpthread"],
        check=True,
        cwd=tmp_path,
    )
    ours = np.array(
        [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    )
    ys, xs = np.mgrid[0:5, 0:7]
    data = ((xs * 37 + ys * 91) % 256).astype(np.uint8)
    hf, him, hgain = brighten(hl)
    him.set(hl.Buffer(data))
    hgain.set(5)
    np.testing.assert_array_equal(ours.reshape(5, 7), np.asarray(hf.realize([7, 5])))


def test_object_header_assembly_and_llvm_assembly(tmp_path):
    f, im, gain = brighten(pw)
    f.compile_to_object(str(tmp_path / "b.o"), [gain, im], "b_entry")
    f.compile_to_header(str(tmp_path / "b.h"), [gain, im], "b_entry")
    f.compile_to_assembly(str(tmp_path / "b.s"), [gain, im], "b_entry")
    f.compile_to_llvm_assembly(str(tmp_path / "b.ll"), [gain, im], "b_entry")
    assert (tmp_path / "b.o").read_bytes()[:4] == b"\x7fELF"
    assert (
        "int32_t b_entry(int32_t gain, const pw_buffer_t *im, pw_buffer_t *brighten);" in (tmp_path / "b.h").read_text()
    )
    assert "b_entry:" in (tmp_path / "b.s").read_text()
    assert "define" in (tmp_path / "b.ll").read_text() and "@b_entry(" in (tmp_path / "b.ll").read_text()


def test_an_incomplete_argument_list_is_refused_like_halide(tmp_path):
    f, im, _ = brighten(pw)
    hf, him, _ = brighten(hl)
    with pytest.raises(hl.HalideError, match="not found in the argument list"):
        hf.compile_to_static_library(str(tmp_path / "h"), [him], "h")
    with pytest.raises(pw.HalideError, match="not found in the argument list"):
        f.compile_to_static_library(str(tmp_path / "p"), [im], "p")
    with pytest.raises(pw.CompileError, match="C identifier"):
        f.compile_to_object(str(tmp_path / "x.o"), None, "not a name")


def test_compile_to_callable_matches_halide():
    f, im, gain = brighten(pw)
    hf, him, hgain = brighten(hl)
    ours_fn, theirs_fn = f.compile_to_callable([im, gain]), hf.compile_to_callable([him, hgain])
    ours, theirs = pw.Buffer(pw.UInt(8), [7, 5]), hl.Buffer(hl.UInt(8), [7, 5])
    assert ours_fn(pw.Buffer(INPUT), 3, ours) is None
    theirs_fn(hl.Buffer(INPUT), 3, theirs)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    shifted = pw.Buffer(pw.UInt(8), [4, 2])
    shifted.set_min([2, 1])
    ours_fn(im=pw.Buffer(INPUT), gain=7, brighten=shifted)
    hshifted = hl.Buffer(hl.UInt(8), [4, 2])
    hshifted.set_min([2, 1])
    theirs_fn(hl.Buffer(INPUT), 7, hshifted)
    np.testing.assert_array_equal(np.asarray(shifted), np.asarray(hshifted))
    with pytest.raises(pw.InputError, match="no value given for `brighten`"):
        ours_fn(pw.Buffer(INPUT), 3)


def test_callable_takes_numpy_outputs_and_a_bare_int_size():
    f, im, gain = brighten(pw)
    out = np.zeros((5, 7), dtype=np.uint8)
    f.compile_to_callable([im, gain])(INPUT, 2, out)
    hf, him, hgain = brighten(hl)
    theirs = hl.Buffer(hl.UInt(8), [7, 5])
    hf.compile_to_callable([him, hgain])(hl.Buffer(INPUT), 2, theirs)
    np.testing.assert_array_equal(out, np.asarray(theirs))
    x = pw.Var("x")
    line = pw.Func("line")
    line[x] = x
    assert list(np.asarray(line.realize(3))) == [0, 1, 2]  # a bare int is one size (Halide: TypeError)
