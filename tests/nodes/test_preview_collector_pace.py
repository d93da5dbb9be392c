"""The stage-by-stage preview paces Python's cycle collector as lowering does: while a
picture is computed the youngest generation is collected every LOWERING_THRESHOLD
allocations (a full collection landing in a structural edit cost local Laplacian's
picture 50-80 ms), and the thresholds the process had are back afterwards, also when the
computation fails."""

import gc

import pytest
from pixelweave.engine.lower.collector_pace import LOWERING_THRESHOLD
from pixelweave.nodes.compositor import Compositor
from pixelweave.nodes.preview import PreviewComputer

from tests.nodes.document_samples import blur_gamma_session


def test_a_preview_runs_with_the_collector_paced_and_restores_it(monkeypatch, default_gc_thresholds):
    seen = []
    original = Compositor._compute

    def recording(self, *args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Compositor, "_compute", recording)
    session = blur_gamma_session()
    PreviewComputer().compute(session.document, "output")
    assert seen and all(t >= LOWERING_THRESHOLD for t in seen)
    assert gc.get_threshold() == (700, 10, 10)


def test_the_thresholds_come_back_after_a_failed_preview(monkeypatch, default_gc_thresholds):
    def failing(self, *args, **kwargs):
        raise RuntimeError("stage failed")

    monkeypatch.setattr(Compositor, "_compute", failing)
    with pytest.raises(RuntimeError, match="stage failed"):
        PreviewComputer().compute(blur_gamma_session().document, "output")
    assert gc.get_threshold() == (700, 10, 10)
