"""Float division of a narrow integer by a constant as a multiplication and an fma (where
that is proved exact for the operand's type): the reference's correctly rounded quotient
for every value of the type, scalar and in vectors; divisions it is not proved for stay
divisions."""

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y = pw.Var("x"), pw.Var("y")
xo, yo, xi, yi, xv = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi"), pw.Var("xv")

TYPES = {"u8": (pw.UInt(8), np.uint8), "u16": (pw.UInt(16), np.uint16), "i16": (pw.Int(16), np.int16)}


def _every_value(dtype) -> np.ndarray:
    """Every value of the type (as a 256-wide image), plus a tail row and column."""
    info = np.iinfo(dtype)
    values = np.arange(int(info.min), int(info.max) + 1, dtype=np.int64).astype(dtype)
    width = min(256, values.size // 4)
    image = values.reshape(-1, width)
    return np.pad(image, ((0, 1), (0, 3)), mode="wrap")


@pytest.mark.parametrize("vector", [1, 4], ids=["scalar", "vector4"])
@pytest.mark.parametrize("divisor", [65535.0, 255.0, 3.0, -7.0, 1000.0, 0.1])
@pytest.mark.parametrize("type_name", sorted(TYPES))
def test_every_value_divided_as_the_reference(type_name, divisor, vector) -> None:
    pw_type, dtype = TYPES[type_name]
    inp = pw.ImageParam(pw_type, 2, "input")
    out = pw.Func("out")
    out[x, y] = pw.cast(pw.Float(32), inp[x, y]) / pw.f32(divisor)
    if vector == 1:
        out.gpu_tile(x, y, xo, yo, xi, yi, 16, 4)
    else:
        out.tile(x, y, xo, yo, xi, yi, 16, 4).split(xi, xi, xv, vector).vectorize(xv)
        out.gpu_blocks(xo, yo).gpu_threads(xi, yi)
    data = _every_value(dtype)
    fn = assert_matches_reference(pw.Pipeline(out), [data.shape[1], data.shape[0]], {"input": data})
    source = fn.native.kernel_source
    if divisor in (65535.0, 255.0, 3.0, 1000.0):  # proved for these (every type here)
        assert "fma(" in source and "/ ((float)" not in source, source


def test_a_division_not_proved_exact_stays_a_division() -> None:
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    out = pw.Func("out")
    out[x, y] = pw.cast(pw.Float(32), inp[x, y] * pw.u16(3)) / pw.f32(0.0)  # no reciprocal
    out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)
    data = np.arange(16 * 9, dtype=np.uint16).reshape(9, 16)
    fn = assert_matches_reference(pw.Pipeline(out), [16, 9], {"input": data})
    assert "fma(" not in fn.native.kernel_source
