"""Vectorized loops inside GPU kernels are OpenCL vector code and give the reference's image.

A loop vectorized by 2, 3, 4, 8 or 16 inside a work-item becomes OpenCL vector types
(`float8`, `vload8`, `vstore8`, gathers lane by lane); other widths stay serial loops. Every
element type, gathers at buffer edges through boundary conditions, selects, casts,
division and modulo by negative numbers and zero, and vectorized updates.
"""

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y = pw.Var("x"), pw.Var("y")
xo, yo, xi, yi, xv = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi"), pw.Var("xv")

H, W = 19, 45  # not a multiple of any vector width: the last vector of a row shifts inwards


def _vectorized_tile(f: pw.Func, lanes: int, tile_x: int = 4) -> None:
    """Vectors of `lanes` inside GPU tiles of tile_x vectors by 4 rows (at most W / lanes
    vectors: a tile wider than the image would shift outside it)."""
    f.split(x, x, xv, lanes).vectorize(xv).gpu_tile(x, y, xo, yo, xi, yi, tile_x, 4)


def _sample(dtype, rng, shape=(H, W)) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-100, 100, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


TYPES = {
    "u8": (pw.UInt(8), "uchar"),
    "u16": (pw.UInt(16), "ushort"),
    "u32": (pw.UInt(32), "uint"),
    "i8": (pw.Int(8), "char"),
    "i16": (pw.Int(16), "short"),
    "i32": (pw.Int(32), "int"),
    "f32": (pw.Float(32), "float"),
    "f64": (pw.Float(64), "double"),
}


@pytest.mark.parametrize("name", list(TYPES))
def test_every_element_type(name: str, rng, opencl_device) -> None:
    """Dense loads and stores, gathers (a reversed row, every other column) at the edges."""
    t, c_name = TYPES[name]
    if t.bits == 64 and t.is_float() and not opencl_device.supports_double:
        pytest.fail("the OpenCL device has no cl_khr_fp64; the f64 case needs one")
    inp = pw.ImageParam(t, 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    f = pw.Func("f")
    two = pw.cast(t, 2)
    f[x, y] = clamped[x - 1, y] + clamped[x, y] * two + clamped[x + 1, y] - clamped[W - 1 - x, y] + clamped[2 * x, y]
    _vectorized_tile(f, 8)
    fn = assert_matches_reference(pw.Pipeline(f), [W, H], {"input": _sample(t.numpy(), rng)})
    assert f"{c_name}8 " in fn.kernel_source and "vload8(" in fn.kernel_source and "vstore8(" in fn.kernel_source


@pytest.mark.parametrize("lanes", [2, 3, 4, 8, 16, 5, 6])
def test_vector_widths(lanes: int, rng) -> None:
    """OpenCL's widths are vector code (3 included); 5 and 6 have no vector type and run serially."""
    inp = pw.ImageParam(pw.Int(16), 2, "input")
    clamped = pw.BoundaryConditions.mirror_image(inp)
    f = pw.Func("f")
    f[x, y] = clamped[x - 2, y] // 3 - clamped[x + 1, y - 1] % 5 + pw.cast(pw.Int(16), x)
    _vectorized_tile(f, lanes, 2)
    fn = assert_matches_reference(pw.Pipeline(f), [W, H], {"input": _sample(np.int16, rng)})
    vector_code = f"short{lanes} " in fn.kernel_source and f"vstore{lanes}(" in fn.kernel_source
    assert vector_code == (lanes in (2, 3, 4, 8, 16)), fn.kernel_source
    if lanes in (5, 6):
        assert "vload" not in fn.kernel_source and "vstore" not in fn.kernel_source


def test_division_and_modulo_by_negative_numbers_and_zero(rng) -> None:
    """Euclidean division lane by lane; a zero divisor gives 0 in its lane only."""
    a, b = pw.ImageParam(pw.Int(32), 2, "a"), pw.ImageParam(pw.Int(32), 2, "b")
    q, r = pw.Func("q"), pw.Func("r")
    q[x, y] = a[x, y] / b[x, y]
    r[x, y] = a[x, y] % b[x, y]
    for f in (q, r):
        _vectorized_tile(f, 4)
    av = rng.integers(-1000, 1000, (H, W), dtype=np.int32)
    bv = rng.integers(-7, 8, (H, W), dtype=np.int32)
    av[0, :4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).min, -7, 7]
    bv[0, :4] = [-1, 0, -2, -2]
    fn = assert_matches_reference(pw.Pipeline([q, r]), [W, H], {"a": av, "b": bv})
    assert "pw_div_int4(" in fn.kernel_source and "pw_mod_int4(" in fn.kernel_source


def test_selects_and_boolean_vectors(rng) -> None:
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.constant_exterior(inp, -1.5)
    f = pw.Func("f")
    v = clamped[x, y]
    inside = (v > -20.0) & ~(v > 40.0) | (clamped[x + 1, y] < clamped[x - 1, y])
    f[x, y] = pw.select(inside, v * 2.0, pw.select(v < 0.0, -v, v + 1.0))
    _vectorized_tile(f, 8)
    fn = assert_matches_reference(pw.Pipeline(f), [W, H], {"input": _sample(np.float32, rng)})
    assert "select(" in fn.kernel_source and "float8 " in fn.kernel_source


def test_casts_widening_narrowing_and_float_int(rng) -> None:
    """convert_T without saturation: narrowing wraps, float -> int truncates toward zero."""
    a = pw.ImageParam(pw.UInt(8), 2, "a")
    s = pw.ImageParam(pw.Float(32), 2, "s")
    wide, narrow, trunc, back, flag = (pw.Func(n) for n in ("wide", "narrow", "trunc", "back", "flag"))
    wide[x, y] = pw.cast(pw.UInt(16), a[x, y]) * 300
    narrow[x, y] = pw.cast(pw.Int(8), pw.cast(pw.Int(32), a[x, y]) * 3 - 400)
    trunc[x, y] = pw.cast(pw.Int(16), s[x, y] * 100.0)
    back[x, y] = pw.cast(pw.Float(32), narrow[x, y]) / 4.0
    flag[x, y] = pw.cast(pw.UInt(8), s[x, y] < 0.0) + pw.cast(pw.UInt(8), a[x, y] > 128)
    for f in (wide, narrow, trunc, back, flag):
        _vectorized_tile(f, 16, 2)
    av = _sample(np.uint8, rng)
    sv = rng.uniform(-300, 300, (H, W)).astype(np.float32)
    fn = assert_matches_reference(pw.Pipeline([wide, narrow, trunc, back, flag]), [W, H], {"a": av, "s": sv})
    assert "convert_char16(" in fn.kernel_source and "_sat" not in fn.kernel_source


def test_vectorized_update(rng) -> None:
    """An update's split rounds up (it must not recompute points), so the image is a
    multiple of its tiles here."""
    width, height = 48, 16
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    f = pw.Func("f")
    f[x, y] = inp[x, y] * 3
    f[x, y] = f[x, y] / 2 - inp[width - 1 - x, y] + pw.min(f[x, y], 7)
    _vectorized_tile(f, 4)
    f.update().split(x, x, xv, 8).vectorize(xv).gpu_tile(x, y, xo, yo, xi, yi, 2, 4)
    inputs = {"input": _sample(np.int32, rng, (height, width)) // 8}
    fn = assert_matches_reference(pw.Pipeline(f), [width, height], inputs)
    assert "int4 " in fn.kernel_source and "int8 " in fn.kernel_source


def test_vectorized_update_around_a_reduction_loop(rng) -> None:
    """The reduction loop runs inside the vector loop: its body is float8 code."""
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    r = pw.RDom([(0, 5)])
    f = pw.Func("f")
    f[x, y] = 0.0
    f[x, y] += clamped[x, y + r.x] * pw.cast(pw.Float(32), r.x + 1)
    for stage in (f, f.update()):
        stage.split(x, x, xv, 8).vectorize(xv).gpu_tile(x, y, xo, yo, xi, yi, 2, 4)
    fn = assert_matches_reference(pw.Pipeline(f), [32, 16], {"input": _sample(np.float32, rng, (16, 32))})
    assert "float8 " in fn.kernel_source and "vload8(" in fn.kernel_source


def test_vectorized_producer_in_local_memory(rng) -> None:
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    bx, by = pw.Func("blur_x"), pw.Func("blur_y")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
    by.split(x, x, xv, 4).vectorize(xv).gpu_tile(x, y, xo, yo, xi, yi, 4, 4)
    bx.compute_at(by, xo).vectorize(x, 4)
    fn = assert_matches_reference(pw.Pipeline(by), [W, H], {"input": _sample(np.uint16, rng)})
    assert "ushort4 " in fn.kernel_source


def test_gpu_lanes_is_refused() -> None:
    f = pw.Func("f")
    f[x] = x
    with pytest.raises(ScheduleError, match=r"gpu_lanes\(x\) .*OpenCL backend refuses gpu_lanes"):
        f.gpu_lanes(x)
