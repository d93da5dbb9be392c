"""A pipeline exported for target 'opencl' (libNAME.so, NAME.o, NAME.h, NAME.cl) computes
the reference evaluator's image when called from C and from Python, picks its device at
the first call as the JIT does, and reports failures through NAME_error_message."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.runtime.buffer import BufferStruct, DimensionStruct, describe_array
from pixelweave.engine.runtime.opencl_library import opencl_link_flag

import pixelweave as pw

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, xo, yo, xi, yi = pw.vars("x y xo yo xi yi")

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "blur_cl.h"

/* blur_cl W H IN OUT: reads W*H uint16 from IN, runs the pipeline twice (the second call
 * reuses the device buffers), writes the result to OUT. */
int main(int argc, char **argv) {
    int w = atoi(argv[1]), h = atoi(argv[2]);
    uint16_t *in = malloc((size_t)w * h * 2), *out = calloc((size_t)w * h, 2);
    FILE *f = fopen(argv[3], "rb");
    if (fread(in, 2, (size_t)w * h, f) != (size_t)w * h) return 3;
    fclose(f);
    pw_dimension_t din[2] = {{0, w, 1, 0}, {0, h, w, 0}}, dout[2] = {{0, w, 1, 0}, {0, h, w, 0}};
    pw_buffer_t bin = {(uint8_t *)in, PW_TYPE_UINT, 16, 2, 0, din};
    pw_buffer_t bout = {(uint8_t *)out, PW_TYPE_UINT, 16, 2, 0, dout};
    for (int i = 0; i < 2; i++) {
        int rc = blur_cl(&bin, 1.5f, &bout);
        if (rc != PW_SUCCESS) {
            printf("error %d: %s\n", rc, blur_cl_error_message());
            return 1;
        }
    }
    f = fopen(argv[4], "wb");
    fwrite(out, 2, (size_t)w * h, f);
    fclose(f);
    blur_cl_release_memory();
    return 0;
}
"""


def _gpu_blur() -> pw.Pipeline:
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    gain = pw.Param(pw.Float(32), "gain")
    bx, by = pw.Func("bx"), pw.Func("by")
    edge = pw.BoundaryConditions.repeat_edge(inp)
    bx[x, y] = (edge[x - 1, y] + edge[x, y] + edge[x + 1, y]) / 3
    by[x, y] = pw.u16(pw.f32(bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3 * gain)
    bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    by.gpu_tile(x, y, xo, yo, xi, yi, 16, 8)
    return pw.Pipeline(by)


def _image(rng, h: int = 30, w: int = 41) -> np.ndarray:
    return (rng.random((h, w)) * 40000).astype(np.uint16)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[pw.Pipeline, Path]:
    out = tmp_path_factory.mktemp("opencl_export")
    pipeline = _gpu_blur()
    pipeline.compile_to_library("blur_cl", str(out), target="opencl")
    return pipeline, out


def _load(directory: Path) -> ctypes.CDLL:
    library = ctypes.CDLL(str(directory / "libblur_cl.so"))
    library.blur_cl.argtypes = [ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p]
    library.blur_cl.restype = ctypes.c_int32
    library.blur_cl_error_message.restype = ctypes.c_char_p
    return library


def test_export_writes_the_library_files_and_only_the_public_symbols(exported):
    _, out = exported
    for name in ("libblur_cl.so", "blur_cl.o", "blur_cl.h", "blur_cl.cl"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "blur_cl.cl").read_text().count("__kernel void") == 2
    assert "PW_DEVICE_ERROR = 4" in (out / "blur_cl.h").read_text()
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(out / "libblur_cl.so")], capture_output=True, text=True, check=True
    ).stdout.split()
    exported_names = {s for s in symbols if s.startswith("blur_cl")}
    assert exported_names == {"blur_cl", "blur_cl_argv", "blur_cl_error_message", "blur_cl_release_memory"}


def test_exported_library_called_from_c_matches_reference(exported, tmp_path, rng):
    pipeline, out = exported
    (tmp_path / "main.c").write_text(C_PROGRAM)
    program = tmp_path / "main"
    build = [
        "cc",
        str(tmp_path / "main.c"),
        f"-I{out}",
        f"-L{out}",
        "-lblur_cl",
        f"-Wl,-rpath,{out}",
        "-o",
        str(program),
    ]
    subprocess.run(build, check=True, capture_output=True, timeout=120)
    static = ["cc", str(tmp_path / "main.c"), f"-I{out}", str(out / "blur_cl.o"), "-lm", "-lpthread"]
    subprocess.run([*static, opencl_link_flag(), "-o", str(tmp_path / "static")], check=True, timeout=120)
    data = _image(rng)
    data.tofile(tmp_path / "in.raw")
    expected = pipeline.realize_reference([41, 30], {"input": data, "gain": 1.5})
    for binary in (program, tmp_path / "static"):
        done = subprocess.run(
            [str(binary), "41", "30", str(tmp_path / "in.raw"), str(tmp_path / "out.raw")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        got = np.fromfile(tmp_path / "out.raw", np.uint16).reshape(30, 41)
        np.testing.assert_array_equal(got, expected)


def test_exported_library_called_from_python_matches_reference(exported, rng):
    pipeline, out = exported
    library = _load(out)
    for h, w in ((30, 41), (17, 64), (30, 41)):  # other sizes: the kept device buffers grow
        data = _image(rng, h, w)
        result = np.zeros_like(data)
        source = describe_array(data, name="input", type=pw.UInt(16), dimensions=2)
        target = describe_array(result, name="by", type=pw.UInt(16), dimensions=2, output=True)
        assert library.blur_cl(source.address, 0.5, target.address) == 0, library.blur_cl_error_message()
        expected = pipeline.realize_reference([w, h], {"input": data, "gain": 0.5})
        np.testing.assert_array_equal(result, expected)


def test_an_output_with_gaps_between_rows_keeps_them(exported, rng):
    pipeline, out = exported
    library = _load(out)
    data = _image(rng, 12, 20)
    padded = np.full((12, 32), 7, np.uint16)
    result = padded[:, 4:24]  # rows 32 elements apart: the gaps must come back untouched
    source = describe_array(data, name="input", type=pw.UInt(16), dimensions=2)
    target = describe_array(result, name="by", type=pw.UInt(16), dimensions=2, output=True)
    assert library.blur_cl(source.address, 1.0, target.address) == 0, library.blur_cl_error_message()
    np.testing.assert_array_equal(result, pipeline.realize_reference([20, 12], {"input": data, "gain": 1.0}))
    assert (padded[:, :4] == 7).all() and (padded[:, 24:] == 7).all()


def test_exported_library_reports_a_bad_input_and_a_missing_device(tmp_path, monkeypatch, rng):
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    f = pw.Func("shifted")
    f[x, y] = inp[x + 1, y]
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    pw.Pipeline(f).compile_to_library("shifted", str(tmp_path / "a"), target="opencl")
    library = ctypes.CDLL(str(tmp_path / "a" / "libshifted.so"))
    library.shifted_error_message.restype = ctypes.c_char_p
    data = _image(rng, 4, 16)
    result = np.zeros((4, 16), np.uint16)
    source = describe_array(data, name="input", type=pw.UInt(16), dimensions=2)
    target = describe_array(result, name="shifted", type=pw.UInt(16), dimensions=2, output=True)
    assert library.shifted(ctypes.c_void_p(source.address), ctypes.c_void_p(target.address)) == 1
    message = library.shifted_error_message().decode()
    assert "input `input` is read at x = 16, beyond its maximum 15" in message, message
    # a second copy of the library, loaded with a device that does not exist chosen
    pw.Pipeline(f).compile_to_library("shifted2", str(tmp_path / "b"), target="opencl")
    monkeypatch.setenv("PIXELWEAVE_OPENCL_DEVICE", "7:3")
    other = ctypes.CDLL(str(tmp_path / "b" / "libshifted2.so"))
    other.shifted2_error_message.restype = ctypes.c_char_p
    assert other.shifted2(ctypes.c_void_p(source.address), ctypes.c_void_p(target.address)) == 4
    assert other.shifted2_error_message().decode() == "there is no OpenCL device 7:3 (PIXELWEAVE_OPENCL_DEVICE)"


STATIC_PROGRAM = r"""
#include <stdio.h>
#include "scaled.h"

int main(void) {
    uint8_t in[6 * 4], out[6 * 4];
    for (int i = 0; i < 24; i++) in[i] = (uint8_t)(i * 7);
    pw_dimension_t dims[2] = {{0, 6, 1, 0}, {0, 4, 6, 0}};
    pw_buffer_t bin = {in, PW_TYPE_UINT, 8, 2, 0, dims}, bout = {out, PW_TYPE_UINT, 8, 2, 0, dims};
    int rc = scaled(3, &bin, &bout);
    if (rc) { printf("error %d: %s\n", rc, scaled_error_message()); return 1; }
    for (int i = 0; i < 24; i++) printf("%d ", out[i]);
    return 0;
}
"""


def test_halide_static_library_for_an_opencl_target(tmp_path):
    im = pw.ImageParam(pw.UInt(8), 2, "im")
    k = pw.Param(pw.UInt(8), "k")
    f = pw.Func("scaled_f")
    f[x, y] = im[x, y] * k + pw.u8(y)
    f.gpu_tile(x, y, xo, yo, xi, yi, 4, 4)
    f.compile_to_static_library(str(tmp_path / "scaled"), [k, im], "scaled", pw.Target("host-opencl"))
    assert "PW_DEVICE_ERROR" in (tmp_path / "scaled.h").read_text()
    (tmp_path / "main.c").write_text(STATIC_PROGRAM)
    program = tmp_path / "main"
    link = ["cc", str(tmp_path / "main.c"), f"-I{tmp_path}", str(tmp_path / "scaled.a"), "-lm", "-lpthread"]
    subprocess.run([*link, opencl_link_flag(), "-o", str(program)], check=True, timeout=120)
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout
    data = (np.arange(24) * 7).astype(np.uint8).reshape(4, 6)
    expected = pw.Pipeline(f).realize_reference([6, 4], {"im": data, "k": 3})
    np.testing.assert_array_equal(np.array(done.stdout.split(), np.uint8).reshape(4, 6), expected)


def test_a_negative_stride_is_refused_not_copied_out_of_bounds(exported, rng):
    _, out = exported
    library = _load(out)
    data = _image(rng, 8, 16)
    flipped = (DimensionStruct * 2)((0, 16, 1, 0), (0, 8, -16, 0))  # rows bottom up from the last one
    source = BufferStruct(data[7:].ctypes.data, 1, 16, 2, 0, flipped)
    result = np.zeros((8, 16), np.uint16)
    target = describe_array(result, name="by", type=pw.UInt(16), dimensions=2, output=True)
    assert library.blur_cl(ctypes.addressof(source), 1.0, target.address) == 3  # PW_BAD_ARGUMENT
    assert "buffer `input` has a negative stride" in library.blur_cl_error_message().decode()


def test_an_export_uses_the_devices_limits(tmp_path, rng, opencl_device):
    """Tiles of 32x16 work-items (Halide's Harris schedule) exceed the common limit of 256
    per group: an export for generic limits halves the work-group (each work-item then
    loops over two rows); by default the export takes the device's limits (pocl's 4096),
    keeps the schedule's work-group and computes the reference's image."""
    from pixelweave.engine.codegen.opencl import DeviceLimits
    from pixelweave.engine.lower import lower
    from pixelweave.engine.runtime.opencl_library import export_limits, export_opencl_library

    assert opencl_device.max_work_group_size >= 512
    assert export_limits().max_work_group_size == opencl_device.max_work_group_size
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f = pw.Func("f")
    f[x, y] = inp[x, y] * 2.0 + inp[x + 1, y]
    f.gpu_tile(x, y, xo, yo, xi, yi, 32, 16)
    pipeline = pw.Pipeline(f)
    generic = export_opencl_library(
        lower(pipeline, "opencl", name="wide_tiles").lowered, "wide_tiles", tmp_path / "generic", limits=DeviceLimits()
    )
    assert "reqd_work_group_size(16, 16, 1)" in generic.kernel_source_path.read_text()
    pipeline.compile_to_library("wide_tiles", str(tmp_path), target="opencl")
    assert "reqd_work_group_size(32, 16, 1)" in (tmp_path / "wide_tiles.cl").read_text()
    library = ctypes.CDLL(str(tmp_path / "libwide_tiles.so"))
    library.wide_tiles.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    library.wide_tiles.restype = ctypes.c_int32
    library.wide_tiles_error_message.restype = ctypes.c_char_p
    data = rng.random((37, 71), dtype=np.float32)
    result = np.zeros((37, 70), np.float32)
    source = describe_array(data, name="input", type=pw.Float(32), dimensions=2)
    target = describe_array(result, name="f", type=pw.Float(32), dimensions=2, output=True)
    assert library.wide_tiles(source.address, target.address) == 0, library.wide_tiles_error_message()
    np.testing.assert_array_equal(result, pipeline.realize_reference([70, 37], {"input": data}))
