"""Pipeline.loop_nest() lowers only through the loop nest passes and remembers the text per
schedule; check_schedules() runs every pass (so it refuses what unroll and vectorize
refuse) and leaves the loop nest remembered for the editor's next question."""

from __future__ import annotations

import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.lower import lower
from pixelweave.engine.stmt_printer import loop_nest_to_string

import pixelweave as pw


def two_stage():
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = inp[x, y] * 2.0
    g[x, y] = f[x, y] + f[x + 1, y]
    return f, g, x, y


def test_a_changed_schedule_gives_a_new_loop_nest():
    f, g, x, y = two_stage()
    first = pw.Pipeline(g).loop_nest()
    assert "vectorized" not in first
    f.compute_root().vectorize(x, 8)
    second = pw.Pipeline(g).loop_nest()
    assert "vectorized x.v" in second and "produce f:" in second
    assert second == loop_nest_to_string(lower(pw.Pipeline(g)).loop_nest)


def test_the_same_schedule_is_not_lowered_again(monkeypatch):
    f, g, x, y = two_stage()
    f.compute_root()
    pw.Pipeline(g).check_schedules()
    expected = loop_nest_to_string(lower(pw.Pipeline(g)).loop_nest)

    def refuse(*args, **kwargs):
        raise AssertionError("lowered again")

    monkeypatch.setattr("pixelweave.engine.lower.lower_loop_nest", refuse)
    assert pw.Pipeline(g).loop_nest() == expected


def test_check_schedules_runs_every_pass():
    f, g, x, y = two_stage()
    g.unroll(y)  # a non-constant extent: refused by the unrolling pass, after the loop nest
    assert "unrolled y:" in pw.Pipeline(g).loop_nest()
    with pytest.raises(ScheduleError, match=r"cannot unroll loop y of Func `g`"):
        pw.Pipeline(g).check_schedules()
