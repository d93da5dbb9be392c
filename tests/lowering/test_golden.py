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
