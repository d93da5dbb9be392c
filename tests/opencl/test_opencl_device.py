"""Choosing the OpenCL device, and the errors when there is none or a kernel does not build."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest
from pixelweave.engine.codegen.opencl import Kernel, OpenCLProgram
from pixelweave.engine.errors import CompileError
from pixelweave.engine.runtime import opencl_device
from pixelweave.engine.runtime.opencl_device import DEVICE_ENV, list_devices, select_device
from pixelweave.engine.runtime.opencl_host import _build
from pixelweave.engine.stmt import no_op

import pixelweave as pw


@pytest.fixture
def fresh_choice():
    opencl_device.forget_devices()
    yield
    opencl_device.forget_devices()


def test_the_first_usable_device_is_chosen(fresh_choice, monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    device = select_device()
    assert device.label.startswith(f"{device.platform_index}:{device.device_index} ")
    assert (
        f"{device.platform_index}:{device.device_index}",
        device.platform_name,
        device.device_name,
    ) in list_devices()


def test_the_environment_variable_names_a_device(fresh_choice, monkeypatch):
    key = list_devices()[0][0]
    monkeypatch.setenv(DEVICE_ENV, key)
    assert f"{select_device().platform_index}:{select_device().device_index}" == key


@pytest.mark.parametrize(
    ("choice", "message"),
    [
        ("gpu", r"OpenCL device 'gpu' is not of the form \"platform:device\""),
        ("9:9", r"there is no OpenCL device '9:9'; the devices are: 0:0"),
    ],
)
def test_a_bad_choice_is_a_clear_error(fresh_choice, choice, message):
    with pytest.raises(CompileError, match=message):
        select_device(choice)


def test_compile_takes_the_device_option(fresh_choice):
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    f.gpu_blocks(x)
    with pytest.raises(CompileError, match="there is no OpenCL device '7:0'"):
        pw.Pipeline(f).compile(target="opencl", device="7:0")
    fn = pw.Pipeline(f).compile(target="opencl", device=list_devices()[0][0])
    np.testing.assert_array_equal(fn([5]), np.arange(5, dtype=np.int32) * 2)


def test_no_platform_says_how_to_get_one(fresh_choice, monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    monkeypatch.setattr(cl, "get_platforms", lambda: [])
    with pytest.raises(CompileError, match=r"needs an OpenCL device and none is usable here.*pocl-opencl-icd"):
        select_device()


class _BrokenDevice:
    name = "broken device"


class _BrokenPlatform:
    name = "Broken Platform"

    def get_devices(self):
        return [_BrokenDevice()]


def test_a_device_that_cannot_build_is_skipped(fresh_choice, monkeypatch):
    """A platform listed first whose device builds nothing (the PyPI pocl binary on a CPU
    newer than its LLVM) is passed over for the next one."""
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    real = cl.get_platforms()
    monkeypatch.setattr(cl, "get_platforms", lambda: [_BrokenPlatform(), *real])
    device = select_device()
    assert device.platform_index == 1
    opencl_device.forget_devices()
    monkeypatch.setattr(cl, "get_platforms", lambda: [_BrokenPlatform()])
    with pytest.raises(CompileError, match=r"0:0 \(broken device\).*pocl-opencl-icd"):
        select_device()


def test_a_build_error_names_the_func_and_the_line(opencl_device):
    source = (
        "__kernel void ok(__global int *a) { a[0] = 1; }\n__kernel void bad(__global int *a) {\n  a[0] = nope;\n}\n"
    )
    kernels = [
        Kernel("ok", "first_func", [], [], [], (1,), first_line=1, last_line=1),
        Kernel("bad", "second_func", [], [], [], (1,), first_line=2, last_line=4),
    ]
    program = OpenCLProgram("p", source, kernels, no_op(), [])
    with pytest.raises(
        CompileError, match=r"Func `second_func` did not build .* at line 3 of the kernel source: a\[0\] = nope;"
    ):
        _build(opencl_device, program)
