"""The analytic scheduler's cost model: the vector width follows the widest type a stage
computes in (not the type it stores), the strips stay tall on small images (the work is
counted in vector instructions against the per-task cost) while giving the cores enough
tasks, and a Func selected by a condition that reads data is not taken for a boundary
condition (inlined into every reader)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.autoschedule import analytic_schedule
from pixelweave.engine.autoschedule.analysis import compute_bits
from pixelweave.engine.autoschedule.machine import Machine

import pixelweave as pw

AVX512 = Machine(cores=2, l1_bytes=48 * 1024, l2_bytes=2 * 1024 * 1024, l3_bytes=32 * 1024 * 1024, vector_bits=512)


def _vectorized(plan, name: str) -> int:
    (lanes,) = [d.args[1] for d in plan.directives if d.func == name and d.name == "vectorize"]
    return lanes


def _u8_stages(width: int = 512, height: int = 512):
    """Four u8 outputs of one u8 image: a 3-tap mean summed in float32, one summed in
    uint16, a 3-tap maximum (all u8 arithmetic) and a tone curve (pow, in float32)."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    mean_f32, mean_u16, maximum, curve = pw.Func("mean_f32"), pw.Func("mean_u16"), pw.Func("maximum"), pw.Func("curve")
    taps = [clamped[x - 1, y], clamped[x, y], clamped[x + 1, y]]
    mean_f32[x, y] = pw.u8(sum(pw.f32(t) for t in taps) / 3.0)
    mean_u16[x, y] = pw.u8(sum(pw.u16(t) for t in taps) / 3)
    maximum[x, y] = pw.max(pw.max(taps[0], taps[1]), taps[2])
    curve[x, y] = pw.u8(pw.pow(pw.f32(clamped[x, y]) / 255.0, pw.f32(0.45)) * 255.0)
    outputs = [mean_f32, mean_u16, maximum, curve]
    for f in outputs:
        f.set_estimates([(0, width), (0, height)])
    inp.set_estimates([(0, width), (0, height)])
    return pw.Pipeline(outputs), outputs, inp


def test_vector_width_follows_the_widest_type_computed_not_the_type_stored():
    """On 512-bit vectors: a u8 stage summing in float32 runs 16 lanes (one register of
    float32), one summing in uint16 32 lanes, a u8 maximum 64 lanes. Main chose 64 for all
    three (from the stored u8)."""
    pipeline, _, _ = _u8_stages()
    plan = analytic_schedule(pipeline, AVX512).plan
    assert _vectorized(plan, "mean_f32") == 16
    assert _vectorized(plan, "mean_u16") == 32
    assert _vectorized(plan, "maximum") == 64


def test_polynomial_vector_math_keeps_the_stored_types_width():
    """pow is computed as a float64 polynomial: several vectors in flight hide its latency,
    so a u8 stage calling it keeps the u8 width."""
    pipeline, _, _ = _u8_stages()
    assert _vectorized(analytic_schedule(pipeline, AVX512).plan, "curve") == 64


def test_compute_bits_counts_data_not_address_arithmetic():
    """Coordinates computed from the Vars (x + 1, a clamp) are address arithmetic and do not
    widen a u8 stage; a lookup table's index read from data is computed per lane and does;
    the arithmetic of a Func inlined into the stage counts as the stage's own."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    lut = pw.Func("lut")
    lut[x] = pw.u8(x // 2)
    shifted, looked_up, widened, reader = (
        pw.Func("shifted"),
        pw.Func("looked_up"),
        pw.Func("widened"),
        pw.Func("reader"),
    )
    shifted[x, y] = inp[pw.clamp(x + 1, 0, 99), y]
    looked_up[x, y] = lut[pw.i32(inp[x, y])]
    widened[x, y] = pw.u8(pw.f32(inp[x, y]) * 0.5)  # stores u8, computes in float32
    reader[x, y] = widened[x, y] + 1
    assert compute_bits(shifted, set()) == 8
    assert compute_bits(looked_up, set()) == 32
    assert compute_bits(reader, set()) == 8  # widened computed apart: reader loads and adds u8 ...
    assert compute_bits(reader, {id(widened)}) == 32  # ... inlined, its float32 product runs in reader's loop


@pytest.mark.parametrize("size", [256, 512, 2048])
def test_strips_are_tall_and_enough_for_the_cores(size):
    """A float32 gradient magnitude read by two outputs (so computed at root): main cut it
    into strips of 4 rows at every size (its work counted in scalar operations, the cost of
    a task looked negligible). Now every strip has at least 16 rows, and each core still
    gets at least four strips."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    gx, gy, magnitude = pw.Func("gx"), pw.Func("gy"), pw.Func("magnitude")
    gx[x, y] = sum(w * clamped[x + 1, y + j] - w * clamped[x - 1, y + j] for j, w in ((-1, 1.0), (0, 2.0), (1, 1.0)))
    gy[x, y] = sum(w * clamped[x + i, y + 1] - w * clamped[x + i, y - 1] for i, w in ((-1, 1.0), (0, 2.0), (1, 1.0)))
    magnitude[x, y] = pw.sqrt(gx[x, y] * gx[x, y] + gy[x, y] * gy[x, y])
    peak, edge = pw.Func("peak"), pw.Func("edge")
    peak[x, y] = pw.max(
        pw.max(magnitude[x - 1, y], magnitude[x + 1, y]), pw.max(magnitude[x, y - 1], magnitude[x, y + 1])
    )
    edge[x, y] = (magnitude[x, y] - magnitude[x - 1, y - 1]) * (magnitude[x, y] - magnitude[x + 1, y + 1])
    for f in (peak, edge):
        f.set_estimates([(0, size), (0, size)])
    inp.set_estimates([(0, size), (0, size)])
    plan = analytic_schedule(pw.Pipeline([peak, edge]), AVX512).plan
    assert {g.root.name() for g in plan.groups} == {"magnitude", "peak", "edge"}
    for group in plan.groups:
        assert group.strip >= 16, (group.root.name(), group.strip)
        assert size / group.strip >= 4 * AVX512.cores, (group.root.name(), group.strip)


def _suppression():
    """A non-maximum suppression: keep a pixel's magnitude where it is a local maximum, else
    0; read by three thresholds. Its value selects one read against a constant, as a
    boundary condition's does, but its condition reads the data."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    magnitude = pw.Func("magnitude")
    magnitude[x, y] = pw.sqrt(clamped[x + 1, y] * clamped[x + 1, y] + clamped[x, y + 1] * clamped[x, y + 1])
    thin = pw.Func("thin")
    local_max = (magnitude[x, y] >= magnitude[x - 1, y]) & (magnitude[x, y] >= magnitude[x + 1, y])
    thin[x, y] = pw.select(local_max & (magnitude[x, y] >= magnitude[x, y - 1]), magnitude[x, y], 0.0)
    outputs = []
    for k, level in enumerate((0.25, 0.5, 0.75)):
        out = pw.Func(f"above_{k}")
        out[x, y] = pw.u8(thin[x, y] > level)
        out.set_estimates([(0, 61), (0, 37)])
        outputs.append(out)
    inp.set_estimates([(0, 61), (0, 37)])
    return pw.Pipeline(outputs), outputs, inp


def test_a_select_whose_condition_reads_data_is_not_taken_for_a_boundary_condition(rng):
    """Main inlined thin into its three readers as a re-indexing (computing the suppression
    three times); now it is computed once and the schedule computes the reference's image
    (61x37: tails in both dimensions)."""
    pipeline, outputs, _ = _suppression()
    plan = analytic_schedule(pipeline, AVX512).plan
    assert "thin" not in plan.inlined
    assert "input_repeat_edge" in plan.inlined or any("repeat_edge" in n for n in plan.inlined)
    pipeline.auto_schedule()
    image = rng.random((37, 61), dtype=np.float32)
    got = pipeline.realize([61, 37], {"input": image})
    want = pipeline.realize_reference([61, 37], {"input": image})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
