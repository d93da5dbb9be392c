"""The code paths that made the camera pipe fast compute the reference's image: reads of
half-resolution planes (f[x / 2]) in a loop vectorized over x, small per-vector scratch
storage whose size is constant only through an unrolled bound() dimension (stack, not
heap), and an output with bound() computed straight into the output buffer when that
buffer holds exactly the region computed (else into scratch storage and copied)."""

from __future__ import annotations

import numpy as np
import pytest

import pixelweave as pw


def _assert_same(ours: np.ndarray, ref: np.ndarray) -> None:
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_array_equal(ours, ref)


def interleaved(vec: int = 16) -> pw.Pipeline:
    """out(x, y) = a(x/2, y) on even x, b(x/2, y) - a(x/2 + 1, y) on odd x: a demosaic's
    re-interleaving of half-resolution planes, vectorized over x."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Int(16), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    a, b, out = pw.Func("a"), pw.Func("b"), pw.Func("out")
    a[x, y] = clamped[2 * x, y] + pw.i16(1)
    b[x, y] = clamped[2 * x + 1, y] * pw.i16(3)
    out[x, y] = pw.select(x % 2 == 0, a[x / 2, y], b[x / 2, y] - a[x / 2 + 1, y])
    a.compute_root().vectorize(x, 8)
    b.compute_root()
    out.vectorize(x, vec)
    return pw.Pipeline(out)


@pytest.fixture(scope="module")
def small_i16() -> np.ndarray:
    return np.random.default_rng(3).integers(-3000, 3000, (9, 75)).astype(np.int16)


@pytest.mark.parametrize("width", [16, 17, 32, 47, 70])
def test_half_resolution_reads_match_the_reference(width, small_i16):
    pipeline = interleaved()
    inputs = {"input": small_i16}
    _assert_same(pipeline.compile(level="full")([width, 9], inputs), pipeline.realize_reference([width, 9], inputs))


@pytest.mark.parametrize("vec", [2, 4, 8])
def test_half_resolution_reads_of_narrow_vectors(vec, small_i16):
    """Two lanes have halves of one element: such a read is a gather, not two one-element
    "vectors" and a shuffle (which was invalid LLVM IR; the fuzzer found it)."""
    pipeline = interleaved(vec)
    inputs = {"input": small_i16}
    _assert_same(pipeline.compile(level="full")([23, 9], inputs), pipeline.realize_reference([23, 9], inputs))


@pytest.mark.parametrize("x_min", [-17, -16, -1, 3, 8])
def test_half_resolution_reads_at_odd_and_negative_vector_bases(x_min, small_i16):
    """The vectors start at x_min + 16k (and x_min + 21 for the last): odd and negative
    bases, whose halves round down."""
    buf = pw.Buffer(pw.Int(16), [37, 5])
    buf.set_min([x_min, 2])
    interleaved().realize(buf, {"input": small_i16})
    np.testing.assert_array_equal(np.asarray(buf), _interleaved_numpy(small_i16, range(x_min, x_min + 37), range(2, 7)))


def _interleaved_numpy(inp: np.ndarray, xs: range, ys: range) -> np.ndarray:
    """What interleaved() computes, in NumPy (int16 arithmetic wraps)."""
    height, width = inp.shape
    wide = inp.astype(np.int32)

    def at(x: int, y: int) -> int:
        return int(wide[min(max(y, 0), height - 1), min(max(x, 0), width - 1)])

    def wrap(v: int) -> int:
        return int(np.int32(v).astype(np.int16))

    def a(h: int, y: int) -> int:
        return wrap(at(2 * h, y) + 1)

    out = np.zeros((len(ys), len(xs)), np.int16)
    for j, y in enumerate(ys):
        for i, x in enumerate(xs):
            h = x // 2
            out[j, i] = a(h, y) if x % 2 == 0 else wrap(wrap(at(2 * h + 1, y) * 3) - a(h + 1, y))
    return out


def test_half_resolution_reads_are_not_gathers(tmp_path):
    path = tmp_path / "interleaved.ll"
    interleaved().compile_to_llvm_assembly(str(path))
    ir = path.read_text()
    assert "masked.gather.v16i16" not in ir  # out's 16-lane reads of a and b (a's own clamped reads may gather)
    assert "shufflevector <8 x i16>" in ir


def test_half_resolution_reads_under_checked_access(small_i16):
    pipeline = interleaved()
    inputs = {"input": small_i16}
    ours = pipeline.realize([47, 9], inputs, checked=True)
    _assert_same(ours, pipeline.realize_reference([47, 9], inputs))


def colour_stages() -> tuple[pw.Pipeline, pw.Func]:
    """A colour matrix per vector of x, computed in the loop over x of its consumer,
    over all 3 channels (an unrolled dimension of a bound() output), as camera_pipe's
    `corrected`; the output has bound(c, 0, 3)."""
    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    inp = pw.ImageParam(pw.UInt(8), 3, "input")
    corrected, curved, out = pw.Func("corrected"), pw.Func("curved"), pw.Func("out")
    r, g, b = (pw.i32(inp[x, y, k]) for k in range(3))
    corrected[x, y, c] = pw.i16(pw.select(c == 0, r * 3 - g, pw.select(c == 1, g * 2 + b, b - r)) / 2)
    curved[x, y, c] = pw.u8(pw.clamp(corrected[x, y, c], 0, 255))
    out[x, y, c] = curved[x, y, c] / 2 + curved[x, y, c] / 3
    out.bound(c, 0, 3).reorder(c, x, y).vectorize(x, 16)
    curved.compute_at(out, y).reorder(c, x, y).vectorize(x, 16).unroll(c)
    corrected.compute_at(curved, x).reorder(c, x, y).unroll(c)
    return pw.Pipeline(out), out


@pytest.fixture(scope="module")
def rgb() -> np.ndarray:
    return np.random.default_rng(5).integers(0, 256, (3, 11, 40)).astype(np.uint8)


def test_scratch_of_constant_size_through_an_unrolled_bound_dimension_is_on_the_stack(rgb):
    pipeline, _ = colour_stages()
    stmt = pipeline.lowered_stmt("host")
    assert "allocate corrected[int16 * 48] on stack" in stmt
    inputs = {"input": rgb}
    _assert_same(pipeline.compile(level="full")([37, 11, 3], inputs), pipeline.realize_reference([37, 11, 3], inputs))


def test_bound_output_is_computed_in_place_when_the_buffer_is_the_region(rgb):
    pipeline, _ = colour_stages()
    stmt = pipeline.lowered_stmt("host")
    assert "or the output buffer out if out_computed.is_output" in stmt
    assert "if (!out_computed.is_output)" in stmt
    inputs = {"input": rgb}
    for checked in (False, True):
        ours = pipeline.realize([40, 11, 3], inputs, checked=checked)
        _assert_same(ours, pipeline.realize_reference([40, 11, 3], inputs))


@pytest.mark.parametrize("c_min, c_extent", [(0, 2), (1, 2), (2, 1)])
def test_bound_output_asked_for_part_of_its_bound_is_copied(c_min, c_extent, rgb):
    pipeline, _ = colour_stages()
    full = pipeline.realize_reference([40, 11, 3], {"input": rgb})
    for checked in (False, True):
        buf = pw.Buffer(pw.UInt(8), [40, 11, c_extent])
        buf.set_min([0, 0, c_min])
        pipeline.realize(buf, {"input": rgb}, checked=checked)
        np.testing.assert_array_equal(np.asarray(buf), full[c_min : c_min + c_extent])


def test_bound_output_into_a_strided_buffer_is_copied(rgb):
    """An output array with padded rows: the same region, other strides."""
    pipeline, _ = colour_stages()
    fn = pipeline.compile(level="full")
    wide = np.full((3, 11, 48), 7, np.uint8)
    out = wide[:, :, :40]
    fn([40, 11, 3], {"input": rgb}, out=out)
    np.testing.assert_array_equal(out, pipeline.realize_reference([40, 11, 3], {"input": rgb}))
    assert (wide[:, :, 40:] == 7).all()  # nothing written beyond the region


def bayer_rows(strip: int) -> pw.Pipeline:
    """out reads rows y / 2 * 2 - 2 .. y / 2 * 2 + 3 of f (a Bayer plane's rows, as
    camera_pipe's deinterleave reads its denoised input): a region that marches forwards by
    0 or 2 rows per row, computed in strips with f stored per strip."""
    x, y, yo, yi = pw.Var("x"), pw.Var("y"), pw.Var("yo"), pw.Var("yi")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    f, out = pw.Func("f"), pw.Func("out")
    f[x, y] = clamped[x, y] * 3 + clamped[x + 1, y]
    row = y / 2 * 2
    out[x, y] = f[x, row - 2] + 2 * f[x, row + 1] - f[x, row + 3] + y
    out.split(y, yo, yi, strip).vectorize(x, 8)
    f.store_at(out, yo).compute_at(out, yi).vectorize(x, 8)
    return pw.Pipeline(out)


@pytest.mark.parametrize("strip, height", [(8, 32), (5, 23), (32, 32), (4, 9)])
def test_a_region_marching_by_varying_steps_slides(strip, height):
    pipeline = bayer_rows(strip)
    assert "let f.s0.y.min = select(" in pipeline.lowered_stmt("host")  # computed once per row, not 6 times
    inputs = {"input": np.random.default_rng(9).integers(-1000, 1000, (height + 3, 30)).astype(np.int32)}
    _assert_same(pipeline.compile(level="full")([27, height], inputs), pipeline.realize_reference([27, height], inputs))


@pytest.mark.parametrize("y_min", [-3, 1, 2])
def test_a_region_marching_by_varying_steps_slides_from_any_first_row(y_min):
    pipeline = bayer_rows(5)
    inp = np.random.default_rng(2).integers(-1000, 1000, (30, 30)).astype(np.int32)
    buf = pw.Buffer(pw.Int(32), [16, 17])
    buf.set_min([0, y_min])
    pipeline.realize(buf, {"input": inp})
    full = pipeline.realize_reference([16, 17 + max(y_min, 0)], {"input": inp})
    if y_min >= 0:
        np.testing.assert_array_equal(np.asarray(buf), full[y_min:])
    else:  # the reference starts at row 0: compare the rows from 0 on (rows above it ran too)
        np.testing.assert_array_equal(np.asarray(buf)[-y_min:], full[: 17 + y_min])


def premultiplied_rgba() -> pw.Pipeline:
    """interpolate's first level: RGBA premultiplied by alpha, read through repeat_edge,
    vectorized over x with the channels unrolled: the clamps of x are tests of the vector
    x16(base) + ramp(0, 1, 16), which loop partitioning drops in the steady state."""
    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    inp = pw.ImageParam(pw.Float(32), 3, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    f, out = pw.Func("f"), pw.Func("out")
    f[x, y, c] = pw.select(c < 3, clamped[x, y, c] * clamped[x, y, 3], clamped[x, y, 3])
    out[x, y, c] = f[x - 1, y, c] + f[x + 2, y, c]
    f.compute_root().reorder(c, x, y).bound(c, 0, 4).vectorize(x, 16).unroll(c)
    return pw.Pipeline(out)


@pytest.mark.parametrize("width", [16, 17, 40, 53])
def test_clamps_of_a_vectorized_variable_are_partitioned(width):
    pipeline = premultiplied_rgba()
    stmt = pipeline.lowered_stmt("host")
    assert "f.s0.x.x.steady_end" in stmt
    inputs = {"input": np.random.default_rng(4).random((4, 6, width + 3), dtype=np.float32)}
    ours = pipeline.compile(level="full")([width, 6, 4], inputs)
    np.testing.assert_allclose(ours, pipeline.realize_reference([width, 6, 4], inputs), rtol=1e-6)


@pytest.mark.parametrize("tile", [64, 96, 128])
def test_vectorized_producers_per_tile_read_no_wider_than_their_tiles(tile):
    """Two producers computed per tile of their consumer, each vectorized 32 wide (its last
    vector shifted inwards), the second at half resolution, over an input with no boundary
    condition: the input need only cover what the tiles read. The region of the first was
    widened by whole tiles (the two uses of a tile's width in the last vector's start varied
    apart over the tiles), so this was refused at run time ("read at x = -150")."""
    x, y, xo, yo, xi, yi = (pw.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = pw.ImageParam(pw.Int(16), 2, "input")
    denoised, half, out = pw.Func("denoised"), pw.Func("half"), pw.Func("out")
    denoised[x, y] = pw.max(inp[x, y], inp[x + 2, y])
    half[x, y] = denoised[2 * x, y] + denoised[2 * x + 1, y]
    out[x, y] = half[x / 2, y] - half[x / 2 + 1, y]
    out.tile(x, y, xo, yo, xi, yi, tile, 8).vectorize(xi, 32)
    denoised.compute_at(out, xo).vectorize(x, 32)
    half.compute_at(out, xo).vectorize(x, 32)
    width, height = 192, 16
    image = np.random.default_rng(5).integers(-3000, 3000, (height, width + 4)).astype(np.int16)
    pipeline = pw.Pipeline(out)
    _assert_same(
        pipeline.compile()([width, height], {"input": image}),
        pipeline.realize_reference([width, height], {"input": image}),
    )
