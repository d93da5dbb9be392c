"""The host part of an OpenCL pipeline runs as LLVM code calling the OpenCL C API: views
of any layout go in and come out right, an OpenCL error names the Func whose kernel failed,
and the code it runs is the generated module's (no Python walk of the host statement)."""

from __future__ import annotations

import numpy as np
import pytest

import pixelweave as pw

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, xo, yo, xi, yi = pw.vars("x y xo yo xi yi")


def _shift_pipeline() -> pw.Pipeline:
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    f = pw.Func("f")
    f[x, y] = inp[x, y] * 3 + pw.u16(x)
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    return pw.Pipeline(f)


def test_host_code_is_llvm_calling_the_opencl_api():
    fn = _shift_pipeline().compile(target="opencl")
    ir = fn.native.host.llvm_ir
    assert "call i32 @clEnqueueNDRangeKernel(" in ir and "call i32 @clSetKernelArg(" in ir
    assert "@clEnqueueWriteBuffer(" in ir and "@clEnqueueReadBuffer(" in ir


def test_strided_views_in_and_out(rng):
    p = _shift_pipeline()
    fn = p.compile(target="opencl")
    base = (rng.random((40, 50)) * 1000).astype(np.uint16)
    view = base[3:33:2, 45:5:-2]  # every other row, columns reversed
    out_base = np.full((15, 60), 9, np.uint16)
    out = out_base[:, 10:30]
    fn([20, 15], {"input": view}, out=out)
    np.testing.assert_array_equal(out, p.realize_reference([20, 15], {"input": np.ascontiguousarray(view)}))
    assert (out_base[:, :10] == 9).all() and (out_base[:, 30:] == 9).all()


def test_an_opencl_error_names_the_func_whose_kernel_failed():
    fn = _shift_pipeline().compile(target="opencl")
    fn.native._kernel_handles[0] = None  # an invalid kernel: clSetKernelArg fails
    with pytest.raises(pw.RuntimeFailure, match=r"OpenCL kernel for Func `f` on .*: OpenCL error -48"):
        fn([16, 16], {"input": np.zeros((16, 16), np.uint16)})
