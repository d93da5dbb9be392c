"""The measured tuner: it starts from the analytic schedule, reports progress, stops when
asked, proposes the same candidates for the same seed, and the schedule it keeps computes
what the reference evaluator computes."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.autoschedule import auto_schedule, host_machine
from pixelweave.engine.autoschedule.analytic import Overrides
from pixelweave.engine.autoschedule.tuner import Tuner

import pixelweave as pw
from benchmarks import apps

W, H = 64, 48


def _unsharp():
    out, handles = apps.build_unsharp(pw, schedule=False)
    out.set_estimates([(0, W), (0, H), (0, 3)])
    handles["input"].set_estimates([(0, W), (0, H), (0, 3)])
    return pw.Pipeline(out)


def test_tuned_schedule_reports_progress_and_computes_the_reference(rng):
    pipeline = _unsharp()
    seen: list[tuple[float, int]] = []
    image = rng.random((3, H, W), dtype=np.float32) * 0.9 + 0.1
    result = auto_schedule(pipeline, method="tune", budget_s=3, inputs={"input": image},
                           progress=lambda best, tried: seen.append((best, tried)))  # fmt: skip
    assert result.method == "tune" and result.text.strip()
    assert seen[0][1] == 1 and [t for _, t in seen] == sorted(t for _, t in seen)
    bests = [b for b, _ in seen]
    assert bests == sorted(bests, reverse=True)  # the best time never gets worse
    assert result.tuning.best_seconds <= result.tuning.start_seconds
    np.testing.assert_allclose(pipeline.realize([W, H, 3], {"input": image}),
                               pipeline.realize_reference([W, H, 3], {"input": image}), rtol=1e-5, atol=1e-5)  # fmt: skip


def test_tuner_stops_when_asked():
    pipeline = _unsharp()
    result = auto_schedule(pipeline, method="tune", budget_s=600, should_stop=lambda: True)
    assert result.tuning.tried == 1  # only the analytic starting point was measured


def test_same_seed_proposes_the_same_candidates():
    pipeline = _unsharp()

    def proposals(seed):
        tuner = Tuner(pipeline, host_machine(), seed=seed)
        overrides = Overrides()
        plan = tuner.plan(overrides)
        out = []
        for _ in range(12):
            overrides = tuner.mutate(overrides, plan)
            out.append(repr(overrides))
        return out

    assert proposals(7) == proposals(7)
    assert proposals(7) != proposals(8)


def test_bad_budget_and_options_are_refused():
    pipeline = _unsharp()
    with pytest.raises(pw.ScheduleError, match="positive number of seconds"):
        pipeline.auto_schedule(method="tune", budget_s=0)
    with pytest.raises(pw.ScheduleError, match="takes no options, got budget_s"):
        pipeline.auto_schedule(method="analytic", budget_s=5)
