"""What makes lifted code fast stays exact: 32-bit C arithmetic computed in 16 bits where its
values fit (narrowing.py), lanes of interleaved rows merged into one piece, and the schedule
lifting chooses (schedule.py: row strips in parallel, vectorized columns, temporaries per
strip) all give the original's bytes, compared with the C compiled by cc."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.c_lift import lift_c
from pixelweave.nodes.lift.schedule import COLUMN_LANES, schedule_lifted, vector_lanes
from pixelweave.nodes.lift.verify import allocate, call_original, compile_original, differential

CORPUS = Path(__file__).parent / "corpus"
HEAD = "#include <stdint.h>\n#include <stdlib.h>\n"


def _scalars(lift, width: int, height: int) -> dict:
    """Extents as the image size (not multiples of the vector width or the strip height),
    declared ranges at their top, strides from the footprints, other values mid-range."""
    lifted = lift.lifted
    scalars: dict = {}
    for name, s in lifted.scalars.items():
        if name in lifted.ranges:
            hi = lifted.ranges[name][1]
            scalars[name] = int(hi) if S.is_int(s.type) else float(hi)
        elif s.role == "stride":
            scalars[name] = 0
        elif not S.is_int(s.type):
            scalars[name] = 0.5
        elif s.role == "extent":
            low = name.lower()
            scalars[name] = height if ("height" in low or low in ("h", "rows")) else width
        else:
            scalars[name] = 100
    return scalars


SCHEDULED = [
    ("blend8.c", "blend_multiply_rgba8_mask"),  # interleaved, mask read at col / 4
    ("blend8.c", "blend_screen_rgba8_opacity"),  # in place
    ("blend16.c", "blend_overlay_plane16_mask"),  # 16-bit planar with an 8-bit mask
    ("filters.c", "sharpen3x3"),  # a stencil with negative intermediates (16-bit signed)
    ("filters.c", "max_radius"),  # a per-pixel reduction, computed at the strip's rows
    ("pipelines.c", "unsharp_pipeline"),  # two temporaries, computed per strip
    ("pipelines.c", "row_buffer_blur"),  # a line buffer
    ("point.c", "swap_rb"),  # lanes that store different values
    ("sse2.c", "sse2_darken_lighten"),  # two outputs, a main loop and a tail
    ("pipelines.c", "histogram"),  # a scatter that adds: partial histograms per strip of rows
    ("pipelines.c", "histogram_rgba_luma"),  # the same, with a computed bin
    ("pipelines.c", "last_position"),  # a scatter whose last write wins: positions per strip
    ("pipelines.c", "row_sums"),  # sums along rows: 16 lanes per row, rows in parallel
    ("pipelines.c", "sum_image"),  # a returned value
    ("pipelines.c", "max_image16"),  # a returned maximum
    ("pipelines.c", "equalize_lut"),  # a lookup table widened to 32 bits, gathered
    ("blend16.c", "blend_difference_plane16_mask"),  # 64-bit arithmetic computed in 32 bits
    ("filters.c", "box_horizontal3"),  # a border C leaves alone: the column test innermost
    ("filters.c", "box3x3"),  # a border on every side
    ("sse2.c", "sse2_box3_horizontal16"),  # a main loop and a tail, both past a border
]


@pytest.mark.parametrize("size", [(45, 19), (83, 70), (0, 7), (7, 0)], ids=["45x19", "83x70", "0x7", "7x0"])
@pytest.mark.parametrize(("file", "name"), SCHEDULED, ids=lambda v: v)
def test_lifter_schedule_computes_the_originals_bytes(file: str, name: str, size: tuple[int, int]):
    """Sizes that are not multiples of the vectors, the strips or the rows per partial result
    (83 x 70: several strips of 32 rows and a partial one), and empty images (the C's loops
    run no iteration and write only what their other loops write)."""
    path = CORPUS / file
    lift = lift_c(path, name)
    schedule_lifted(lift.engine)
    scalars = _scalars(lift, *size)
    buffers = allocate(lift, np.random.default_rng(5), scalars, lift.lifted.ranges)
    theirs = {k: v.copy() for k, v in buffers.items()}
    ours = {k: v.copy() for k, v in buffers.items()}
    expected = call_original(compile_original(path), lift, scalars, theirs)
    got = lift.engine.run(ours, scalars)
    for key in buffers:
        assert np.array_equal(theirs[key], ours[key]), key
    if lift.lifted.result_type is not None:
        assert int(got) == int(expected)


def test_lifter_schedule_splits_rows_into_parallel_strips_and_vectorizes_by_type():
    lift = lift_c(CORPUS / "pipelines.c", "unsharp_pipeline")
    schedule_lifted(lift.engine)
    nest = lift.engine.pipeline.loop_nest()
    assert "parallel row.dst_strip" in nest
    assert f"vectorized col.v0 in [0, {vector_lanes('u8') - 1}]" in nest
    # the temporaries are computed inside the output's strips, not over the whole image
    assert nest.index("parallel row.dst_strip") < nest.index("produce tmp_1")
    assert vector_lanes("u8") == vector_lanes("u16") == 32 and vector_lanes("f32") == 16


def test_expanded_products_of_pixels_have_exact_bounds():
    s = S.cast("i32", ("load", "u8", "src@0", S.sym("i32", "__row"), S.sym("i32", "__col")))
    d = S.cast("i32", ("load", "u8", "dst@0", S.sym("i32", "__row"), S.sym("i32", "__col")))
    k = S.const("i32", 255)
    screen = S.arith("*", S.arith("-", k, s), S.arith("-", k, d))
    assert screen[0] == "aff"  # expanded: s*d - 255*s - 255*d + 65025
    assert S.interval(screen) == (0, 65025)
    square = S.arith("*", s, s)  # an atom twice in a product: bounded term by term
    assert S.interval(square) == (0, 65025)


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "k.c"
    path.write_text(HEAD + body)
    return path


def test_pixel_arithmetic_that_fits_16_bits_is_computed_in_16_bits(tmp_path):
    path = _write(
        tmp_path,
        """
void k(const uint8_t *a, const uint8_t *b, uint8_t *out, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int s = a[y * rowBytes + x], d = b[y * rowBytes + x];
            out[y * rowBytes + x] = (uint8_t)(255 - ((255 - s) * (255 - d) + 127) / 255);
        }
}
""",
    )
    lift = lift_c(path, "k")
    text = str(lift.engine.outputs["out"].value())
    assert "uint16(" in text and "int32(a" not in text and "int32(b" not in text
    assert differential(lift, trials=6).held


def test_signed_stencils_narrow_to_int16_and_wide_products_stay_32_bits(tmp_path):
    path = _write(
        tmp_path,
        """
void k(const uint8_t *a, const uint16_t *p, const uint16_t *q, uint8_t *out, uint16_t *wide, int width,
       int height, int rowBytes, int stride) {
    for (int y = 1; y < height - 1; y++)
        for (int x = 1; x < width - 1; x++) {
            int c = a[y * rowBytes + x];
            int v = 5 * c - a[y * rowBytes + x - 1] - a[y * rowBytes + x + 1] - a[(y - 1) * rowBytes + x];
            out[y * rowBytes + x] = (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
            uint32_t m = (uint32_t)p[y * stride + x] * q[y * stride + x];
            wide[y * stride + x] = (uint16_t)((m + 32767u) / 65535u);
        }
}
""",
    )
    lift = lift_c(path, "k")
    assert re.search(r"(?<!u)int16\(", str(lift.engine.outputs["out"].value()))
    wide = str(lift.engine.outputs["wide"].value())
    assert "uint32(" in wide and "(uint16)65535" not in wide
    assert differential(lift, trials=6).held


def test_lanes_that_store_different_values_or_start_past_the_row_merge_into_one_piece():
    # a channel swap: four lanes, four values, one piece selecting on the lane
    swap = lift_c(CORPUS / "point.c", "swap_rb")
    (piece,) = swap.lifted.versions["dst@1"].pieces
    assert piece.value[0] == "select"
    # SSE lanes stored from column 1: residues 1..7 over one base and 0 over the next
    box = lift_c(CORPUS / "sse2.c", "sse2_box3_horizontal16")
    assert len(box.lifted.versions["dst@1"].pieces) == 1
    for lift in (swap, box):
        assert differential(lift, trials=6).held


def test_reductions_scatters_and_tables_get_parallel_vector_schedules():
    def nest(name: str) -> str:
        lift = lift_c(CORPUS / "pipelines.c", name)
        schedule_lifted(lift.engine)
        return lift.engine.pipeline.loop_nest()

    histogram = nest("histogram")
    # partial histograms per strip of rows, in parallel, then merged with vectors across the bins
    assert "parallel hist_v2_part0" in histogram and ".rows0:" in histogram
    assert histogram.index("produce hist_v2_intm") < histogram.index("vectorized col.v0")
    # a last write wins: each strip of rows keeps its writes' latest positions, in parallel
    last = nest("last_position")
    assert "parallel strip:\n      for where_writes$y:\n        for where_writes$x:" in last
    assert (
        last.index("produce where_last_in_strip")
        < last.index("produce where_last_write")
        < last.index("produce where_v2")
    )
    text = nest("row_sums")
    assert "vectorized lane_v" in text and "parallel" in text and ".step:" in text
    # vectors across the columns, four 512-bit vectors of partial sums per step
    assert f"vectorized column.column_v in [0, {COLUMN_LANES - 1}]" in nest("sum_image") and COLUMN_LANES == 64
    assert "store lut_wide" in nest("equalize_lut")
    lut = lift_c(CORPUS / "pipelines.c", "equalize_lut")
    assert "lut_wide(int32(src_edge(col, row)), 0)" in str(lut.engine.outputs["dst"].value())


def test_64_bit_blends_of_16_bit_pixels_compute_in_32_bits():
    for name in ("blend_multiply_plane16_mask", "blend_screen_rgb16_opacity", "blend_difference_plane16_mask"):
        lift = lift_c(CORPUS / "blend16.c", name)
        text = str(next(iter(lift.engine.outputs.values())).value())
        assert "/ (uint32)65535" in text and "/ (uint64)" not in text, name
        assert differential(lift, trials=4).held, name


def test_a_widened_lookup_table_is_still_proved_by_z3():
    from pixelweave.nodes.lift.prove import prove

    result = prove(lift_c(CORPUS / "pipelines.c", "equalize_lut"))
    assert result.applicable and result.held


@pytest.mark.parametrize("threshold", [None, 1], ids=["serial", "parallel"])
def test_a_pass_too_small_to_share_runs_serially_and_a_large_one_in_strips_in_parallel(monkeypatch, threshold):
    """The SSE2 kernels (a few megabytes, a few operations per pixel) lost to the C with their
    strips handed to the thread pool; the schedule now runs a call whose estimated work is
    small serially and a large one in parallel, chosen at run time from the input sizes.
    Both versions give the original's bytes (threshold 1: every call counts as large)."""
    from pixelweave.nodes.lift import schedule

    if threshold is not None:
        monkeypatch.setattr(schedule, "PARALLEL_WORK_BYTES", threshold)
    path = CORPUS / "sse2.c"
    lift = lift_c(path, "sse2_multiply")
    schedule_lifted(lift.engine)
    nest = lift.engine.pipeline.loop_nest()
    large, small = nest.split("else:")
    assert "parallel row.out_strip" in large  # the specialization: large work
    assert "for row.out_strip" in small and "parallel" not in small  # otherwise serial
    scalars = _scalars(lift, 83, 70)
    buffers = allocate(lift, np.random.default_rng(7), scalars, lift.lifted.ranges)
    theirs = {k: v.copy() for k, v in buffers.items()}
    ours = {k: v.copy() for k, v in buffers.items()}
    call_original(compile_original(path), lift, scalars, theirs)
    lift.engine.run(ours, scalars)
    for key in buffers:
        assert np.array_equal(theirs[key], ours[key]), key
    estimate = schedule.worth_parallel(lift.engine, "out")
    assert "a.extent.0" in str(estimate) and "b.extent.1" in str(estimate)


def test_the_work_estimate_counts_operations_per_element():
    from pixelweave.nodes.lift.schedule import element_cost

    copy = lift_c(CORPUS / "blend16.c", "blend_normal_plane16")
    overlay = lift_c(CORPUS / "blend16.c", "blend_overlay_plane16_mask")
    assert element_cost(copy.lifted, "out") <= 1 < 10 < element_cost(overlay.lifted, "out")


def test_a_border_test_on_columns_is_innermost_and_a_test_every_store_shares_is_gone():
    """C that leaves the first and last columns alone (box_horizontal3) made one select of
    the row and column tests, which loop partitioning cannot solve for the columns alone:
    every vector of the steady state tested both and loaded the output's previous contents.
    The column test is now its own, innermost select (partitioned away in the steady state)
    and the row range every store shares, the rows the output is realized over, is dropped."""
    lift = lift_c(CORPUS / "filters.c", "box_horizontal3")
    text = str(lift.engine.outputs["dst"].value())
    assert text.startswith("select((((col + -1) >= 0)") and "row >= 0" not in text
    box = str(lift_c(CORPUS / "filters.c", "box3x3").engine.outputs["dst"].value())
    row_test, col_test = box.index("(row + -1) >= 0"), box.index("(col + -1) >= 0")
    assert row_test < col_test  # the row test outside (its rows start at 1: it stays)
    assert differential(lift, trials=4).held


@pytest.mark.parametrize(
    ("file", "name"),
    [("filters.c", "box_horizontal3"), ("filters.c", "box3x3"), ("sse2.c", "sse2_box3_horizontal16"),
     ("sse2.c", "sse2_average"), ("point.c", "swap_rb")],
)  # fmt: skip
def test_z3_follows_the_nested_selects_of_the_pieces(file: str, name: str):
    """The proof walks the engine definition select by select: the column test inside, the
    other tests outside, a row range every store shares left out on both sides."""
    from pixelweave.nodes.lift.prove import prove

    result = prove(lift_c(CORPUS / file, name))
    assert result.applicable and result.held, result.detail


def test_a_tail_loop_that_repeats_the_main_loops_value_is_the_main_loops_stage(tmp_path):
    """An SSE2 loop then a scalar tail: z3 proves the tail stores what the vector loop's
    stage (over the whole row) holds, so the tail's stage is that stage; the select between
    them computed both values in every vector of the main region. A tail that stores
    something else keeps its select."""
    from pixelweave.nodes.lift.prove import prove

    lift = lift_c(CORPUS / "sse2.c", "sse2_add_saturate")
    assert str(lift.engine.funcs["out@2"].value()) == "out_v1(col, row)"
    assert prove(lift).held and differential(lift, trials=4).held
    path = _write(
        tmp_path,
        """
void k(const uint8_t *a, uint8_t *out, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        int x = 0;
        for (; x + 16 <= width; x += 16)
            for (int i = 0; i < 16; i++) out[y * rowBytes + x + i] = (uint8_t)(a[y * rowBytes + x + i] + 1);
        for (; x < width; x++) out[y * rowBytes + x] = (uint8_t)(a[y * rowBytes + x] + 2);
    }
}
""",
    )
    other = lift_c(path, "k")
    stages = [str(f.value()) for tag, f in other.engine.funcs.items() if tag.startswith("out@") and tag != "out@0"]
    assert any(text.startswith("select(") for text in stages)  # the tail's +2 stays its own
    assert differential(other, trials=6).held


def test_a_tail_loop_after_a_main_loop_past_column_0_joins_the_main_loops_store():
    """An SSE2 loop from column 1 then a scalar tail to width - 1 (a stencil's border left
    alone) storing the same value: one select over the joined columns [1, width - 1), whose
    steady state loop partitioning finds; the two nested selects had none (every vector of
    a row ran in the partitioned loop's prologue, with clamped loads: 0.6x the C's speed).
    Exact at widths where either loop is empty, and proved by z3 (sizes up to 2^24)."""
    from pixelweave.nodes.lift.prove import prove

    path = CORPUS / "sse2.c"
    lift = lift_c(path, "sse2_box3_horizontal16")
    text = str(lift.engine.outputs["dst"].value())
    assert text.count("select(") == 1 and "dst_v1" not in text, text
    result = prove(lift)
    assert result.held and "|width| <= 2^24" in result.detail, result.detail
    schedule_lifted(lift.engine)
    lib = compile_original(path)
    for width, height in [(1, 2), (2, 3), (3, 2), (9, 2), (10, 3), (11, 2), (41, 9), (70, 17)]:
        scalars = _scalars(lift, width, height)
        buffers = allocate(lift, np.random.default_rng(width), scalars, lift.lifted.ranges)
        theirs = {k: v.copy() for k, v in buffers.items()}
        ours = {k: v.copy() for k, v in buffers.items()}
        call_original(lib, lift, scalars, theirs)
        lift.engine.run(ours, scalars)
        for key in buffers:
            assert np.array_equal(theirs[key], ours[key]), (key, width, height)


def test_a_tail_after_a_gap_or_storing_another_value_is_not_joined(tmp_path):
    from pixelweave.nodes.lift.to_engine import joined_with_previous

    body = """
void k(const uint16_t *a, uint16_t *out, int width, int height, int stride) {
    for (int y = 0; y < height; y++) {
        int x = 1;
        for (; x + 8 <= width - 1; x += 8)
            for (int i = 0; i < 8; i++) out[y * stride + x + i] = (uint16_t)(a[y * stride + x + i] >> 1);
        for (x = x + GAP; x < width - 1; x++) out[y * stride + x] = (uint16_t)(a[y * stride + x] >> SHIFT);
    }
}
"""
    for gap, shift, joined in [(0, 1, True), (1, 1, False), (0, 2, False)]:
        path = _write(tmp_path, body.replace("GAP", str(gap)).replace("SHIFT", str(shift)))
        lift = lift_c(path, "k")
        last = lift.lifted.buffers["out"].current
        assert (joined_with_previous(lift.lifted, lift.lifted.versions[last]) is not None) is joined, (gap, shift)
        assert differential(lift, trials=6).held


def test_outputs_written_at_the_same_places_are_computed_in_one_loop_nest():
    lift = lift_c(CORPUS / "sse2.c", "sse2_darken_lighten")
    schedule_lifted(lift.engine)
    assert lift.engine.fused_outputs == ("lo", "hi")
    nest = lift.engine.pipeline.loop_nest()
    # one loop nest, both produced around the strips of rows (the same loop names), the
    # strips in parallel, each row computing lo's columns then hi's
    assert "hi_strip" not in nest and nest.count("parallel row.lo_strip:") == 1
    assert nest.index("produce hi_v") < nest.index("parallel row.lo_strip") < nest.index("lo_v2(...)")
    assert nest.count("for row.lo_y:") == 1 and nest.index("lo_v2(...)") < nest.index("hi_v2(...)")


def test_outputs_written_at_different_places_are_computed_apart(tmp_path):
    path = _write(
        tmp_path,
        """
void k(const uint8_t *a, uint8_t *inner, uint8_t *full, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) full[y * rowBytes + x] = a[y * rowBytes + x] / 2;
        for (int x = 1; x < width - 1; x++) inner[y * rowBytes + x] = a[y * rowBytes + x - 1] / 2;
    }
}
""",
    )
    lift = lift_c(path, "k")
    schedule_lifted(lift.engine)
    assert lift.engine.fused_outputs == ()
    scalars = _scalars(lift, 45, 19)
    buffers = allocate(lift, np.random.default_rng(3), scalars, lift.lifted.ranges)
    theirs = {k: v.copy() for k, v in buffers.items()}
    ours = {k: v.copy() for k, v in buffers.items()}
    call_original(compile_original(path), lift, scalars, theirs)
    lift.engine.run(ours, scalars)
    for key in buffers:
        assert np.array_equal(theirs[key], ours[key]), key


@pytest.mark.parametrize("size", [(1, 1), (7, 3), (33, 17)], ids=["1x1", "7x3", "33x17"])
def test_fused_outputs_narrower_than_a_vector_or_a_strip_keep_the_originals_bytes(size: tuple[int, int]):
    path = CORPUS / "sse2.c"
    lift = lift_c(path, "sse2_darken_lighten")
    schedule_lifted(lift.engine)
    scalars = _scalars(lift, *size)
    buffers = allocate(lift, np.random.default_rng(7), scalars, lift.lifted.ranges)
    theirs = {k: v.copy() for k, v in buffers.items()}
    ours = {k: v.copy() for k, v in buffers.items()}
    call_original(compile_original(path), lift, scalars, theirs)
    lift.engine.run(ours, scalars)
    for key in buffers:
        assert np.array_equal(theirs[key], ours[key]), key


LAST_WRITES = """
void last_of_pair(const uint8_t *src, int32_t *where, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            where[src[y * rowBytes + x] >> 4] = y * 1000 + x;
        }
    }
}
void last_pixel(const uint8_t *src, uint8_t *where, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            where[src[y * rowBytes + x] >> 4] = src[y * rowBytes + x];
        }
    }
}
void last_bright(const uint8_t *src, int32_t *where, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            if (src[y * rowBytes + x] > 100) where[src[y * rowBytes + x] & 7] = x;
        }
    }
}
"""


def _same_as_c(path, name: str, size: tuple[int, int], seed: int) -> None:
    lift = lift_c(path, name)
    schedule_lifted(lift.engine)
    scalars = _scalars(lift, *size)
    buffers = allocate(lift, np.random.default_rng(seed), scalars, lift.lifted.ranges)
    theirs = {k: v.copy() for k, v in buffers.items()}
    ours = {k: v.copy() for k, v in buffers.items()}
    call_original(compile_original(path), lift, scalars, theirs)
    lift.engine.run(ours, scalars)
    for key in buffers:
        assert np.array_equal(theirs[key], ours[key]), (name, size, key)


@pytest.mark.parametrize(
    "size", [(0, 5), (5, 0), (1, 1), (5, 1), (1, 40), (45, 19), (50, 64), (83, 70)], ids=lambda s: f"{s[0]}x{s[1]}"
)
def test_a_last_write_that_wins_is_computed_from_positions_per_strip(tmp_path, size: tuple[int, int]):
    """Heights below, at and past multiples of the 32-row strips (the last strip repeats its
    last row), one column, and bins no pixel hits (16 bins from a few pixels keep -1)."""
    path = _write(tmp_path, LAST_WRITES)
    lift = lift_c(path, "last_of_pair")
    assert {"where@1#last_in_strip", "where@1#last"} <= set(lift.engine.funcs)
    _same_as_c(path, "last_of_pair", size, seed=size[0] * 100 + size[1])
    _same_as_c(CORPUS / "pipelines.c", "last_position", size, seed=size[1])


def test_last_writes_of_data_or_under_a_condition_stay_in_cs_order(tmp_path):
    """The rewrite needs the stored value to follow from the loop position: a stored pixel, or a
    store under a condition, keeps the scatter in C's order (serial)."""
    path = _write(tmp_path, LAST_WRITES)
    for name in ("last_pixel", "last_bright"):
        lift = lift_c(path, name)
        assert not any(tag.endswith("#last") for tag in lift.engine.funcs), name
        schedule_lifted(lift.engine)
        assert "parallel" not in lift.engine.pipeline.loop_nest(), name
        _same_as_c(path, name, (45, 19), seed=3)
