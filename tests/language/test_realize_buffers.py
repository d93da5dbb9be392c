"""Item 4 of issue 13: Halide's realize API, Buffers with mins and layouts, checked against `halide`."""

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def both(build):
    """The same algorithm built with pw and with hl: build(lang) returns (func, extra)."""
    return build(pw), build(hl)


def gradient(lang):
    x, y = lang.Var("x"), lang.Var("y")
    f = lang.Func("f")
    f[x, y] = x * 3 + y * 10 - 7
    return f


def test_func_realize_returns_a_buffer_like_halide():
    ours, theirs = gradient(pw).realize([5, 3]), gradient(hl).realize([5, 3])
    assert isinstance(ours, pw.Buffer)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert ours[4, 2] == theirs[4, 2]
    for i in range(2):
        assert ours.dim(i).min() == theirs.dim(i).min()
        assert ours.dim(i).extent() == theirs.dim(i).extent()
        assert ours.dim(i).stride() == theirs.dim(i).stride()
    assert ours.width() == theirs.width() and ours.height() == theirs.height()


def test_realize_into_a_buffer_with_shifted_mins():
    ours, theirs = pw.Buffer(pw.Int(32), [4, 3]), hl.Buffer(hl.Int(32), [4, 3])
    ours.set_min([-2, 5])
    theirs.set_min([-2, 5])
    gradient(pw).realize(ours)
    gradient(hl).realize(theirs)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert ours[-2, 5] == theirs[-2, 5] and ours[1, 7] == theirs[1, 7]
    assert ours.left() == -2 and ours.bottom() == 7
    # the reference evaluator agrees over the same shifted domain
    reference = pw.Pipeline(gradient(pw)).realize_reference([4, 3], mins=[-2, 5])
    np.testing.assert_array_equal(reference, np.asarray(theirs))


def test_pipeline_realize_into_buffer_and_out_of_range_index():
    buffer = pw.Buffer(pw.Int(32), [3, 2])
    buffer.set_min([10, 20])
    assert pw.Pipeline(gradient(pw)).realize(buffer) is buffer
    assert buffer[12, 21] == 12 * 3 + 21 * 10 - 7
    with pytest.raises(pw.InputError, match="outside Buffer"):
        buffer[0, 0]


def test_buffer_wraps_numpy_in_halide_order():
    array = np.arange(12, dtype=np.uint8).reshape(3, 4)
    ours, theirs = pw.Buffer(array), hl.Buffer(array)
    assert ours.dimensions() == theirs.dimensions() == 2
    for i in range(2):
        assert ours.dim(i).extent() == theirs.dim(i).extent() and ours.dim(i).stride() == theirs.dim(i).stride()
    assert ours[3, 2] == theirs[3, 2] == array[2, 3]
    assert np.asarray(ours) is array or np.shares_memory(np.asarray(ours), array)
    assert str(ours.type()) == str(theirs.type())


def test_interleaved_buffer_layout_matches_halide():
    ours = pw.Buffer.make_interleaved(pw.UInt(8), 5, 4, 3)
    theirs = hl.Buffer.make_interleaved(hl.UInt(8), 5, 4, 3)
    for i in range(3):
        assert ours.dim(i).extent() == theirs.dim(i).extent()
        assert ours.dim(i).stride() == theirs.dim(i).stride()


def channels(lang, constrain):
    x, y, c = lang.Var("x"), lang.Var("y"), lang.Var("c")
    f = lang.Func("k")
    f[x, y, c] = x + 10 * y + 100 * c
    if constrain:
        f.output_buffer().dim(0).set_stride(3)
        f.output_buffer().dim(2).set_stride(1)
    return f


def test_interleaved_output_through_output_buffer_strides():
    # realize(sizes) allocates the interleaved layout the strides ask for (Halide 21 allocates
    # strides [3, 4, 1] here, whose rows overlap; see docs/porting-from-halide.md)
    ours = channels(pw, True).realize([4, 2, 3])
    assert [ours.dim(i).stride() for i in range(3)] == [3, 12, 1]
    np.testing.assert_array_equal(np.asarray(ours), pw.Pipeline(channels(pw, False)).realize_reference([4, 2, 3]))
    into, into_hl = pw.Buffer.make_interleaved(pw.Int(32), 4, 2, 3), hl.Buffer.make_interleaved(hl.Int(32), 4, 2, 3)
    channels(pw, True).realize(into)
    channels(hl, True).realize(into_hl)
    np.testing.assert_array_equal(np.asarray(into), np.asarray(into_hl))
    # an unconstrained output refuses an interleaved buffer (dimension 0 must be dense), as Halide does
    with pytest.raises(pw.RuntimeFailure, match="dense in dimension 0"):
        channels(pw, False).realize(pw.Buffer.make_interleaved(pw.Int(32), 4, 2, 3))
    with pytest.raises(hl.HalideError):
        channels(hl, False).realize(hl.Buffer.make_interleaved(hl.Int(32), 4, 2, 3))


def test_output_buffer_bounds_refuse_another_domain():
    f = gradient(pw)
    f.output_buffer().dim(0).set_bounds(0, 4)
    with pytest.raises(pw.InputError, match=r"constrained to extent 4 in dimension 0"):
        f.realize(pw.Buffer(pw.Int(32), [3, 2]))
    h = gradient(hl)
    h.output_buffer().dim(0).set_bounds(0, 4)
    with pytest.raises(hl.HalideError):
        h.realize(hl.Buffer(hl.Int(32), [3, 2]))
    assert np.asarray(f.realize([4, 2])).shape == (2, 4)
    with pytest.raises(pw.CompileError, match="dimensions"):
        f.output_buffer().dim(2)


def shifted_reader(lang):
    x, y = lang.Var("x"), lang.Var("y")
    im = lang.ImageParam(lang.Int(32), 2, "im")
    g = lang.Func("g")
    g[x, y] = im[x + 1, y - 1] * 2 + im[x - 2, y]
    return g, im


def test_infer_input_bounds_allocates_what_halide_allocates():
    (g, im), (hg, him) = both(shifted_reader)
    g.infer_input_bounds([6, 4])
    hg.infer_input_bounds([6, 4])
    ours, theirs = im.get(), him.get()
    for i in range(2):
        assert ours.dim(i).min() == theirs.dim(i).min()
        assert ours.dim(i).extent() == theirs.dim(i).extent()


def test_image_param_set_buffer_with_mins_is_read_over_them():
    (g, im), (hg, him) = both(shifted_reader)
    data = np.random.default_rng(5).integers(-50, 50, size=(5, 9), dtype=np.int32)
    ours, theirs = pw.Buffer(data), hl.Buffer(data)
    ours.set_min([-2, -1])
    theirs.set_min([-2, -1])
    im.set(ours)
    him.set(theirs)
    np.testing.assert_array_equal(np.asarray(g.realize([6, 4])), np.asarray(hg.realize([6, 4])))
    np.testing.assert_array_equal(pw.Pipeline(g).realize_reference([6, 4]), np.asarray(hg.realize([6, 4])))


def test_reading_outside_a_shifted_input_is_refused_like_halide():
    (g, im), (hg, him) = both(shifted_reader)
    data = np.zeros((5, 9), dtype=np.int32)
    ours, theirs = pw.Buffer(data), hl.Buffer(data)
    im.set(ours)  # mins 0: x - 2 reads below 0
    him.set(theirs)
    with pytest.raises(hl.HalideError):
        hg.realize([6, 4])
    with pytest.raises(pw.RuntimeFailure, match="im"):
        g.realize([6, 4])
    with pytest.raises(pw.BoundsError, match="below its minimum 0"):
        pw.Pipeline(g).realize_reference([6, 4])
