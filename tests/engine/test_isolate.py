"""One Func computed on its own (engine/isolate.py): the stage a compositor-style preview
compiles, reading what its callees computed, gives the values the whole pipeline gives."""

import numpy as np
import pytest
from pixelweave.engine.isolate import OUTPUT_NAME, isolate

import pixelweave as pw


def _pipeline():
    x, y, i = pw.Var("x"), pw.Var("y"), pw.Var("i")
    picture = pw.ImageParam(pw.UInt(8), 2, "picture")
    divisor = pw.Param(pw.UInt(8), "divisor", 2)
    coarse = pw.Func("coarse")
    coarse[x, y] = picture[x, y] // divisor
    hist = pw.Func("hist")
    r = pw.RDom([(0, picture.width()), (0, picture.height())])
    r.where(coarse[r.x, r.y] > 3)
    hist[i] = 0
    hist[pw.clamp(pw.i32(coarse[r.x, r.y]), 0, 127)] += 1
    return picture, divisor, coarse, hist


def test_an_isolated_reduction_reads_its_callee_and_sizes_as_inputs():
    picture, divisor, coarse, hist = _pipeline()
    image = (np.arange(23 * 17, dtype=np.uint32).reshape(17, 23) * 37 % 256).astype(np.uint8)
    expected = pw.Pipeline(hist).realize_reference([128], {"picture": image, "divisor": 3})
    isolated = isolate(hist)
    assert {s.kind for s in isolated.sources.values()} == {"func", "image_dim"}
    coarse_values = pw.Pipeline(coarse).realize_reference([23, 17], {"picture": image, "divisor": 3})
    args = {}
    for arg, source in isolated.sources.items():
        if source.kind == "func":
            assert source.name == "coarse"
            args[arg] = coarse_values
        else:
            args[arg] = {"picture.min.0": 0, "picture.min.1": 0, "picture.extent.0": 23, "picture.extent.1": 17}[
                source.name
            ]
    fn = isolated.pipeline.compile(level="fast")
    out = np.empty(128, np.int32)
    known = {a.name for a in fn.native.arguments}
    fn.native({k: v for k, v in args.items() if k in known}, {OUTPUT_NAME: out})
    np.testing.assert_array_equal(out, expected)


def test_params_stay_run_time_arguments_of_the_isolated_stage():
    picture, divisor, coarse, _ = _pipeline()
    isolated = isolate(coarse)
    kinds = {s.kind: (arg, s) for arg, s in isolated.sources.items()}
    assert kinds["param"][1].name == "divisor" and kinds["param"][1].param is divisor
    assert kinds["image"][1].name == "picture"
    image = np.full((4, 5), 90, np.uint8)
    fn = isolated.pipeline.compile(level="fast")
    for value in (3, 9):
        out = fn([5, 4], {kinds["image"][0]: image, kinds["param"][0]: value})
        assert (out == 90 // value).all()
    assert isolate(coarse).pipeline.structural_key() == isolated.pipeline.structural_key()


def test_the_copy_keeps_loop_schedules_but_computes_only_the_box_asked_for():
    picture, _, coarse, hist = _pipeline()
    coarse.compute_at(hist, "r$x")  # placement is not copied: the copy is the output
    coarse.vectorize(pw.Var("x"), 8).unroll(pw.Var("y"))
    isolated = isolate(coarse)
    schedule = isolated.func.definition().schedule
    assert [d.for_type.value for d in schedule.dims] == ["vectorized", "for", "for"]  # unrolling dropped
    assert all(split.tail == pw.TailStrategy.GUARD_WITH_IF for split in schedule.splits)
    args = {arg: source for arg, source in isolated.sources.items()}
    image_arg = next(a for a, s in args.items() if s.kind == "image")
    param_arg = next(a for a, s in args.items() if s.kind == "param")
    image = (np.arange(6 * 7, dtype=np.uint8).reshape(6, 7) * 5).astype(np.uint8)
    fn = isolated.pipeline.compile(level="fast")
    # 5 wide, less than one vector: a tail that is not guarded would read outside the crop
    window = np.ascontiguousarray(image[1:5, 1:6])
    out = np.empty((4, 5), np.uint8)
    fn.native({image_arg: window, param_arg: 4}, {OUTPUT_NAME: out}, mins={image_arg: [1, 1], OUTPUT_NAME: [1, 1]})
    np.testing.assert_array_equal(out, image[1:5, 1:6] // 4)


def _stencil():
    x = pw.Var("x")
    picture = pw.ImageParam(pw.Int(32), 1, "picture")
    scaled = pw.Func("scaled")  # inline: substituted where the preview asks for it
    scaled[x] = picture[x] * 3
    blurred = pw.Func("blurred")
    blurred[x] = scaled[x - 1] + scaled[x] + scaled[x + 1]
    blurred.vectorize(x, 8)
    return picture, scaled, blurred


def _run_over(isolated, box, image):
    """The isolated stage over box (min, extent), reading image over [0, len)."""
    args = {}
    for arg, source in isolated.sources.items():
        args[arg] = (
            image if source.kind == "image" else {"picture.min.0": 0, "picture.extent.0": len(image)}[source.name]
        )
    fn = isolated.pipeline.compile(level="fast")
    known = {a.name for a in fn.native.arguments}
    out = np.empty(box[1], np.int32)
    fn.native({k: v for k, v in args.items() if k in known}, {OUTPUT_NAME: out}, mins={OUTPUT_NAME: [box[0]]})
    return out


def test_unguarded_tails_shift_inwards_and_refuse_a_box_narrower_than_the_vector():
    picture, scaled, blurred = _stencil()
    image = (np.arange(40, dtype=np.int32) * 7) % 23
    expected = 3 * (image[:-2] + image[1:-1] + image[2:])  # blurred over [1, 39)
    fast = isolate(blurred, guard_tails=False, inline=lambda g: g is scaled)
    assert [s.tail for s in fast.func.definition().schedule.splits] == [pw.TailStrategy.SHIFT_INWARDS]
    assert not fast.guarded and isolate(blurred).guarded
    assert [(s.kind, s.name) for s in fast.sources.values()] == [("image", "picture")]  # scaled was inlined
    np.testing.assert_array_equal(_run_over(fast, (1, 38), image), expected)  # 38 = 4 vectors + a shifted tail
    with pytest.raises(pw.RuntimeFailure, match="is read at x = -3, below its minimum 0"):
        # narrower than one vector: the shifted vector would reach outside; checks refuse it first
        _run_over(fast, (1, 5), image)
    np.testing.assert_array_equal(
        _run_over(isolate(blurred, inline=lambda g: g is scaled), (1, 5), image), expected[:5]
    )


def test_without_inline_the_callee_is_an_input():
    _, _, blurred = _stencil()
    assert [(s.kind, s.name) for s in isolate(blurred).sources.values()] == [("func", "scaled")]
