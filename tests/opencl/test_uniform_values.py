"""Work-item-invariant integer values (clamps of kernel arguments alone) are computed on
the host and passed to the kernel as arguments (opencl_uniform_values.py): the images stay
the reference's, at sizes whose clamps and tails are exercised, and only clamps, selects and
divisions by nonzero constants move."""

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
xo, yo, xi, yi, xv = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi"), pw.Var("xv")


def _channel_mix(channels: int) -> pw.Func:
    """local Laplacian's colour step: each channel read at c and at the constant channels
    0, 1, 2 of a repeat_edge input (whose channel clamps depend on the input's bounds only)."""
    inp = pw.ImageParam(pw.UInt(16), 3, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    floating = pw.Func("floating")
    floating[x, y, c] = pw.cast(pw.Float(32), clamped[x, y, c]) / pw.f32(65535.0)
    gray = pw.Func("gray")
    gray[x, y] = (
        pw.f32(0.299) * floating[x, y, 0]
        + pw.f32(0.587) * floating[x, y, 1]
        + pw.f32(0.114) * floating[x, y, channels - 1]
    )
    out = pw.Func("out")
    out[x, y, c] = pw.cast(pw.UInt(16), pw.clamp(floating[x, y, c] / (gray[x, y] + pw.f32(0.01)), 0.0, 1.0) * 65535.0)
    return out


@pytest.mark.parametrize("channels", [3, 2], ids=["rgb", "two_channels_clamped"])
def test_channel_clamps_move_to_the_host(channels) -> None:
    out = _channel_mix(channels)
    out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8)
    rng = np.random.default_rng(15)
    data = rng.integers(0, 65536, (channels, 19, 29), dtype=np.uint16)
    # the output is larger than the input in x, y and c: every clamp is exercised, and the
    # last tiles are partial (37 = 2 * 16 + 5, 21 = 2 * 8 + 5)
    fn = assert_matches_reference(pw.Pipeline(out), [37, 21, 4], {"input": data})
    source = fn.native.kernel_source
    # one channel offset per distinct channel read: c, 0, 1 (and 2)
    assert f"_uniform{channels}" in source, source


@pytest.mark.parametrize("p", [-7, 0, 4, 11])
def test_uniform_division_modulo_and_select(p) -> None:
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    param = pw.Param(pw.Int(32), "p", 0)
    out = pw.Func("out")
    offset = pw.select(param > 3, param / 3, param % 5) + pw.min(param, 2) * 7
    out[x, y] = inp[x, y] + offset
    out.gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    data = np.arange(13 * 6, dtype=np.int32).reshape(6, 13) - 40
    fn = assert_matches_reference(pw.Pipeline(out), [13, 6], {"input": data, "p": p})
    assert "_uniform0" in fn.native.kernel_source


def test_a_division_by_a_parameter_stays_in_the_kernel() -> None:
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    divisor = pw.Param(pw.Int(32), "d", 0)
    out = pw.Func("out")
    out[x, y] = inp[x, y] + (divisor + 7) / divisor  # divisor 0: Halide's x / 0 == 0
    out.gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    data = np.arange(9 * 5, dtype=np.int32).reshape(5, 9)
    for d in (0, -2, 5):
        fn = assert_matches_reference(pw.Pipeline(out), [9, 5], {"input": data, "d": d})
        assert "_uniform" not in fn.native.kernel_source


def test_uniform_clamps_inside_vectorized_work_items() -> None:
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    row = pw.Param(pw.Int(32), "row", 0)
    out = pw.Func("out")
    out[x, y] = inp[x, pw.clamp(row, 0, inp.height() - 1)] + inp[x, pw.clamp(y + 1, 0, inp.height() - 1)]
    out.tile(x, y, xo, yo, xi, yi, 16, 4).split(xi, xi, xv, 4).vectorize(xv)
    out.gpu_blocks(xo, yo).gpu_threads(xi, yi)
    data = np.random.default_rng(3).integers(0, 256, (10, 48), dtype=np.uint8)
    for r in (-5, 3, 99):
        assert_matches_reference(pw.Pipeline(out), [48, 10], {"input": data, "row": r})
