"""Golden-text tests of the schedule inspector's views: the loop nest and the lowered
statement for the paper's five blur schedules and a reduction.

Run with PIXELWEAVE_REGEN_GOLDEN=1 to rewrite the files after an intended change, then
review the diff: the text is what users see in the editor.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.lowering.schedules import PAPER_SCHEDULES, blur, histogram_equalize

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
REGENERATE = os.environ.get("PIXELWEAVE_REGEN_GOLDEN", "") not in ("", "0")


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGENERATE:
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with PIXELWEAVE_REGEN_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from its golden file (regenerate if intended)"


@pytest.mark.parametrize("schedule", PAPER_SCHEDULES)
def test_blur_loop_nest(schedule):
    pipeline, _ = blur(schedule)
    check_golden(f"blur_{schedule}.loop_nest.txt", pipeline.loop_nest())


@pytest.mark.parametrize("schedule", PAPER_SCHEDULES)
def test_blur_lowered_stmt(schedule):
    pipeline, _ = blur(schedule)
    check_golden(f"blur_{schedule}.stmt.txt", pipeline.lowered_stmt())


def test_reduction_texts():
    pipeline, _ = histogram_equalize()
    check_golden("histogram_equalize.loop_nest.txt", pipeline.loop_nest())
    check_golden("histogram_equalize.stmt.txt", pipeline.lowered_stmt())


def test_loop_nest_names_each_loop_kind():
    pipeline, _ = blur("parallel_vectorized")
    text = pipeline.loop_nest()
    assert "parallel y.y:" in text
    assert "vectorized x.xi.v" in text and "in [0, 7]:" in text
    assert text.index("produce blur_x:") < text.index("consume blur_x:")


def test_generated_loop_names_are_the_same_in_every_build():
    """vectorize/unroll/parallel with a factor name their inner loop v0, v1, ... per stage, so the
    inspector shows the same names after every rebuild and a person can refer to them."""
    first, _ = blur("parallel_vectorized")
    second, _ = blur("parallel_vectorized")
    assert first.loop_nest() == second.loop_nest()
    text = first.loop_nest()
    assert "vectorized x.xi.v0 in [0, 7]:" in text  # blur_y: tile, then vectorize(xi, 8)
    assert "vectorized x.v0 in [0, 7]:" in text  # blur_x: vectorize(x, 8)


def test_generated_loop_names_stay_unambiguous_within_a_stage():
    import pixelweave as pw

    for _build in range(2):  # the second build gets the same names as the first
        x, y = pw.Var("x"), pw.Var("y")
        f = pw.Func("f")
        f[x, y] = x + y
        f.vectorize(x, 8).unroll(y, 2).parallel(y, 4)
        names = [d.name for d in f.definition().schedule.dims]
        assert names == ["x.v0", "x.x", "y.v1", "y.y.v2", "y.y.y"]
        p = pw.Pipeline(f)
        assert p.realize([16, 8]).tolist() == p.realize_reference([16, 8]).tolist()
