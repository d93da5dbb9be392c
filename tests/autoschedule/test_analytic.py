"""The analytic automatic scheduler: every schedule it chooses lowers, is deterministic and
computes what the reference evaluator computes; its structure is what reuse analysis calls
for (stencil producers fused into their consumer's strips, innermost dimension vectorized,
strips parallel); missing estimates are reported by name."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.autoschedule import analytic_schedule, auto_schedule
from pixelweave.engine.autoschedule.directives import Directive, FuncRef, apply_directives, clear_schedules
from pixelweave.engine.autoschedule.machine import Machine, cache_sizes, host_machine
from pixelweave.engine.stmt import ForType

import pixelweave as pw
from benchmarks import apps

W, H = 96, 64


def _fresh(build, sizes, input_shape):
    out, handles = build(pw, schedule=False)
    out.set_estimates([(0, s) for s in sizes])
    handles["input"].set_estimates([(0, s) for s in input_shape[::-1]])
    return pw.Pipeline(out), out, handles


def blur():
    return _fresh(apps.build_blur, [W, H], (H + 2, W + 2))


def unsharp():
    return _fresh(apps.build_unsharp, [W, H, 3], (3, H, W))


def harris():
    return _fresh(apps.build_harris, [W, H], (3, H + 6, W + 6))


def bilateral_grid():
    return _fresh(apps.build_bilateral_grid, [W, H], (H, W))


def camera_pipe():
    return _fresh(apps.build_camera_pipe, [W, H, 3], (H + 48, W + 32))


def column_sums():
    """A reduction: the sum of each column, then a pointwise output that reads it."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    r = pw.RDom([(0, inp.height())], "r")
    sums = pw.Func("sums")
    sums[x] = 0.0
    sums[x] += inp[x, r]
    out = pw.Func("normalized")
    out[x, y] = inp[x, y] / (sums[x] + 1.0)
    out.set_estimates([(0, W), (0, H)])
    inp.set_estimates([(0, W), (0, H)])
    return pw.Pipeline(out), out, {"input": inp}


def two_outputs():
    """Two outputs reading one blurred image."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    bx, by = pw.Func("bx"), pw.Func("by")
    bx[x, y] = clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]
    by[x, y] = bx[x, y - 1] + bx[x, y] + bx[x, y + 1]
    dx, dy = pw.Func("dx"), pw.Func("dy")
    dx[x, y] = by[x + 1, y] - by[x - 1, y]
    dy[x, y] = by[x, y + 1] - by[x, y - 1]
    for f in (dx, dy):
        f.set_estimates([(0, W), (0, H)])
    inp.set_estimates([(0, W), (0, H)])
    return pw.Pipeline([dx, dy]), dx, {"input": inp}


def pyramid():
    """Downsample, upsample and the detail between them (one Laplacian pyramid level)."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    down_x, down = pw.Func("down_x"), pw.Func("down")
    down_x[x, y] = clamped[2 * x - 1, y] + 3 * clamped[2 * x, y] + 3 * clamped[2 * x + 1, y] + clamped[2 * x + 2, y]
    down[x, y] = (down_x[x, 2 * y - 1] + 3 * down_x[x, 2 * y] + 3 * down_x[x, 2 * y + 1] + down_x[x, 2 * y + 2]) / 64
    up_x, up = pw.Func("up_x"), pw.Func("up")
    up_x[x, y] = 0.25 * down[(x / 2) - 1 + 2 * (x % 2), y] + 0.75 * down[x / 2, y]
    up[x, y] = 0.25 * up_x[x, (y / 2) - 1 + 2 * (y % 2)] + 0.75 * up_x[x, y / 2]
    detail = pw.Func("detail")
    detail[x, y] = clamped[x, y] - up[x, y]
    detail.set_estimates([(0, W), (0, H)])
    inp.set_estimates([(0, W), (0, H)])
    return pw.Pipeline(detail), detail, {"input": inp}


def normalized_by_total():
    """A scalar reduction (a Func of no dimensions) read by every output pixel."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    r = pw.RDom([(0, inp.width()), (0, inp.height())], "r")
    total = pw.Func("total")
    total[()] = 0.0
    total[()] += inp[r.x, r.y]
    out = pw.Func("share")
    out[x, y] = inp[x, y] / total[()]
    out.set_estimates([(0, W), (0, H)])
    inp.set_estimates([(0, W), (0, H)])
    return pw.Pipeline(out), out, {"input": inp}


CASES = {
    "blur": (blur, [W, H], lambda rng: {"input": rng.integers(0, 4000, (H + 2, W + 2)).astype(np.uint16)}),
    "unsharp": (unsharp, [W, H, 3], lambda rng: {"input": rng.random((3, H, W), dtype=np.float32) * 0.9 + 0.1}),
    "harris": (harris, [W, H], lambda rng: {"input": rng.random((3, H + 6, W + 6), dtype=np.float32)}),
    "bilateral_grid": (bilateral_grid, [W, H], lambda rng: {"input": rng.random((H, W), dtype=np.float32)}),
    "camera_pipe": (camera_pipe, [W, H, 3], lambda rng: {"input": rng.integers(0, 1024, (H + 48, W + 32))
                                                        .astype(np.uint16)}),
    "column_sums": (column_sums, [W, H], lambda rng: {"input": rng.random((H, W), dtype=np.float32)}),
    "two_outputs": (two_outputs, [W, H], lambda rng: {"input": rng.random((H, W), dtype=np.float32)}),
    "pyramid": (pyramid, [W, H], lambda rng: {"input": rng.random((H, W), dtype=np.float32)}),
    "scalar": (normalized_by_total, [W, H], lambda rng: {"input": rng.random((H, W), dtype=np.float32) + 0.5}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_computes_what_the_reference_does(name, rng):
    make, sizes, inputs = CASES[name]
    pipeline, _, _ = make()
    text = pipeline.auto_schedule()
    assert text.strip(), "a schedule was chosen"
    data = inputs(rng)
    got = pipeline.realize(sizes, data)
    want = pipeline.realize_reference(sizes, data)
    for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_is_deterministic(name):
    make = CASES[name][0]
    first = analytic_schedule(make()[0]).text
    second = analytic_schedule(make()[0]).text
    assert first == second


def _loop_kinds(func, stage=0):
    definition = func.definition() if stage == 0 else func.updates()[stage - 1]
    return {d.name: d.for_type for d in definition.schedule.dims}


def test_stencil_producer_is_fused_into_its_consumers_strips():
    pipeline, out, _ = blur()
    auto_schedule(pipeline)
    blur_x = next(f for f in pipeline.funcs if f.name() == "blur_x")
    level = blur_x.schedule_of().compute_level
    assert level.kind == "at" and level.func is out
    kinds = _loop_kinds(out)
    assert level.var in {n.rsplit(".", 1)[-1] for n in kinds}  # one of the output's own loops
    assert kinds[out.definition().schedule.dims[0].name] is ForType.VECTORIZED  # innermost is a vector
    outer = out.definition().schedule.dims[-1]
    assert outer.for_type is ForType.PARALLEL  # the strips run in parallel
    # The output is split into strips and blur_x slides down each strip.
    assert blur_x.schedule_of().store_level is not None
    assert "produce blur_x" in pipeline.loop_nest()


def test_unsharp_keeps_channels_inside_the_strips_and_inlines_pointwise_stages():
    pipeline, out, _ = unsharp()
    plan = analytic_schedule(pipeline).plan
    assert {"sharpen", "ratio", "input_repeat_edge"} <= set(plan.inlined)
    (group,) = [g for g in plan.groups if g.root is out]
    assert {m.name() for m in group.members} >= {"gray", "blur_y"}
    auto_schedule(pipeline)
    dims = [d.name for d in out.definition().schedule.dims]
    assert dims.index("c") < dims.index("y.yi")


def test_channel_selects_are_unrolled_and_lookup_tables_are_not_inlined():
    """The camera pipe selects on the channel (`select(c == 0, ...)`) in deinterleaved,
    demosaiced and corrected: their channel loops are unrolled so that each copy computes
    one branch (the output's too: corrected is inlined into it). The output reads the
    tone curve at a pixel value (a gather): the curve is a table, not inlined."""
    pipeline, out, _ = camera_pipe()
    plan = analytic_schedule(pipeline).plan
    assert "curve" not in plan.inlined and "corrected" in plan.inlined
    assert {"deinterleaved", "demosaiced", "camera_pipe"} <= set(plan.unrolled)
    auto_schedule(pipeline)
    demosaiced = next(f for f in pipeline.funcs if f.name() == "demosaiced")
    kinds = _loop_kinds(demosaiced)  # split loops are named c.v1 (inner), c.c (outer)
    assert {kind for name, kind in kinds.items() if name.startswith("c.")} == {ForType.UNROLLED, ForType.SERIAL}
    assert ForType.VECTORIZED in {kind for name, kind in kinds.items() if name.startswith("x.")}
    # unsharp's output reads its channel only as a coordinate: nothing to unroll
    assert analytic_schedule(unsharp()[0]).plan.unrolled == []


def test_reduction_is_computed_at_root_with_its_pure_loop_parallel():
    pipeline, out, _ = column_sums()
    auto_schedule(pipeline)
    sums = next(f for f in pipeline.funcs if f.name() == "sums")
    assert sums.schedule_of().compute_level.is_root()
    assert ForType.PARALLEL in _loop_kinds(sums, 1).values()  # W = 96 columns: enough for any core count here


def test_auto_schedule_replaces_an_existing_schedule():
    pipeline, out, _ = blur()
    out.parallel(pw.Var("y"))
    first = pipeline.auto_schedule()
    second = pipeline.auto_schedule()
    assert first == second


def test_machine_reads_cache_sizes_from_the_operating_system(tmp_path):
    for index, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K")]):
        d = tmp_path / f"index{index}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    assert cache_sizes(tmp_path) == {1: 48 * 1024, 2: 2048 * 1024}
    m = host_machine()
    assert m.cores >= 1 and m.l1_bytes > 0 and m.l2_bytes >= m.l1_bytes
    assert Machine(2, 1, 1, 1, 512).lanes(32) == 16 and Machine(2, 1, 1, 1, 256).lanes(16) == 16


def test_smaller_cache_gives_shorter_strips():
    """The strip height follows the cache: with a tiny L2 the working set forces short strips."""
    big = Machine(2, 48 * 1024, 64 * 1024 * 1024, 64 * 1024 * 1024, 512)
    tiny = Machine(2, 4 * 1024, 16 * 1024, 16 * 1024, 512)

    def strip(machine):
        pipeline, out, _ = _fresh(apps.build_unsharp, [2048, 2048, 3], (3, 2048, 2048))
        (group,) = [g for g in analytic_schedule(pipeline, machine).plan.groups if g.root is out]
        return group.strip

    assert strip(tiny) < strip(big)


# ---------------------------------------------------------------------------- errors


def test_missing_output_estimate_names_the_func():
    out, handles = apps.build_blur(pw, schedule=False)
    handles["input"].set_estimates([(0, 100), (0, 100)])
    with pytest.raises(pw.ScheduleError, match=r"output Func `blur_y`.*blur_y\.set_estimate\(x, min, extent\)"):
        pw.Pipeline(out).auto_schedule()


def test_missing_input_estimate_names_the_input():
    out, handles = apps.build_unsharp(pw, schedule=False)
    out.set_estimates([(0, 100), (0, 100), (0, 3)])
    with pytest.raises(pw.ScheduleError, match=r"input image `input`.*input\.set_estimates"):
        pw.Pipeline(out).auto_schedule()


def test_bad_estimates_are_refused():
    out, _ = apps.build_blur(pw, schedule=False)
    with pytest.raises(pw.CompileError, match="no dimension z"):
        out.set_estimate(pw.Var("z"), 0, 10)
    with pytest.raises(pw.CompileError, match="must be positive"):
        out.set_estimate(pw.Var("x"), 0, 0)
    with pytest.raises(pw.CompileError, match="needs 2"):
        out.set_estimates([(0, 10)])


def test_unknown_method_is_refused():
    pipeline, _, _ = blur()
    with pytest.raises(pw.ScheduleError, match="legal methods are analytic"):
        pipeline.auto_schedule(method="genetic")


def test_readme_example_runs(capsys):
    """README's automatic-schedule example runs as written and prints a fused schedule."""
    import re

    from tests.conftest import ROOT

    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Automatic schedules") :]
    block = re.search(r"```py\n(.*?)```", section, re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "blur_x.store_at(blur_y, y).compute_at(blur_y, yi)" in out and ".parallel(y)" in out


def test_harris_inlines_element_wise_and_once_read_stages_as_mullapudi2016_does():
    """Ixx = Ix * Ix read by a 3x3 sum is element-wise: inlined, the sum reads Ix instead;
    Sxx is read by det and trace at the same point, which the code generator shares, so it
    counts as read once and is inlined into the output; the stencils gray, Ix, Iy stay."""
    plan = analytic_schedule(harris()[0]).plan
    assert set(plan.inlined) == {"Ixx", "Iyy", "Ixy", "Sxx", "Syy", "Sxy", "det", "trace"}
    assert sorted(m.name() for g in plan.groups for m in g.members) == ["Ix", "Iy", "gray"]


def test_a_stencil_of_an_input_is_not_element_wise():
    pipeline, _, _ = blur()
    plan = analytic_schedule(pipeline).plan
    assert plan.inlined == [] and [m.name() for m in plan.groups[0].members] == ["blur_x"]


def test_bilateral_grid_computes_the_histogram_in_the_blurs_strips_with_the_bins_inside():
    """The histogram is needed whole along z (its update scatters into data-dependent bins),
    so it fuses into blurx's strips only with z inside them, as the hand schedule has it."""
    pipeline, _, _ = bilateral_grid()
    plan = analytic_schedule(pipeline).plan
    [group] = [g for g in plan.groups if g.root.name() == "blurx"]
    assert sorted(m.name() for m in group.members) == ["blurz", "histogram"]
    reorder = next(d for d in plan.directives if d.func == "blurx" and d.name == "reorder")
    assert reorder.args.index("z") < reorder.args.index("y")
    histogram = next(d for d in plan.directives if d.func == "histogram" and d.name.startswith("compute"))
    assert histogram.name == "compute_at" and histogram.args[1] == "y"  # the whole strip, not per row


def test_rows_too_wide_for_the_cache_give_2d_tiles_that_compute_the_reference(rng):
    """With a 2 KiB L2 even two full rows of blur_x do not fit: the strips are cut into
    tiles of fewer columns, blur_x slides down each tile's column, and the result is right."""
    tiny = Machine(2, 1024, 2 * 1024, 2 * 1024, 512)
    pipeline, out, handles = _fresh(apps.build_blur, [512, 64], (66, 514))
    plan = analytic_schedule(pipeline, tiny).plan
    (group,) = plan.groups
    assert 0 < group.width < 512
    assert Directive("blur_y", 0, "split", ("x", "x", "xi", group.width)) in plan.directives
    assert Directive("blur_x", 0, "store_at", (FuncRef("blur_y"), "x")) in plan.directives  # per tile column
    big = analytic_schedule(_fresh(apps.build_blur, [512, 64], (66, 514))[0]).plan
    assert big.groups[0].width == 0  # the machine's own L2 holds full-width strips
    clear_schedules(pipeline)
    apply_directives(pipeline, plan.directives)
    image = rng.integers(0, 4000, (66, 514)).astype(np.uint16)
    np.testing.assert_array_equal(pipeline.realize([512, 64], {"input": image}),
                                  pipeline.realize_reference([512, 64], {"input": image}))  # fmt: skip
