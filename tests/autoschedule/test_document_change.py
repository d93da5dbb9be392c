"""nodes.autoschedule.auto_schedule_change, what the editor's Auto-schedule applies: the new
schedules of the nodes it changes, checked by lowering, with the change as diffs."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.nodes.autoschedule import auto_schedule_change, detached
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.pipeline_build import build_document

from tests.nodes.document_samples import blur_document, numpy_box_blur, write_document, write_samples


def _blur(tmp_path) -> tuple[Document, np.ndarray]:
    gray = write_samples(tmp_path)["gray"]
    return Document.load(write_document(tmp_path / "blur.json", blur_document("gray.png", "gray", 2))), gray


def test_the_change_of_the_whole_document_computes_the_same_image(tmp_path):
    doc, gray = _blur(tmp_path)
    change = auto_schedule_change(doc)
    assert set(change.schedules) == {"blur", "result"}  # the input node has nothing to schedule
    assert doc.node("result").schedule == {}  # the document itself is untouched
    change.apply_to(doc)
    assert doc.node("result").schedule == change.schedules["result"]
    np.testing.assert_array_equal(build_document(doc).run({"input": gray})["result"], numpy_box_blur(gray, 2))
    assert change.directives_diff.startswith("--- schedule before\n+++ schedule after")
    assert "+# blur" in change.directives_diff and "-  for y:" in change.loop_nest_diff


def test_a_node_alone_is_detached_from_its_consumers_loops(tmp_path):
    doc, gray = _blur(tmp_path)
    change = auto_schedule_change(doc, "blur")
    assert list(change.schedules) == ["blur"]
    change.apply_to(doc)
    np.testing.assert_array_equal(build_document(doc).run({"input": gray})["result"], numpy_box_blur(gray, 2))


def test_detached_keeps_the_nodes_own_levels_and_roots_the_others():
    schedule = {
        "rows": [["compute_at", "result.out", "yi"], ["store_at", "result.out", "y"], ["vectorize", "x", 16]],
        "cols": [["compute_at", "rows", "y"], ["store_at", "blur.rows", "y"]],
    }
    assert detached(schedule, "blur") == {
        "rows": [["compute_root"], ["vectorize", "x", 16]],
        "cols": [["compute_at", "rows", "y"], ["store_at", "blur.rows", "y"]],
    }


def test_a_node_no_output_reads_is_a_clear_error(tmp_path):
    doc, _ = _blur(tmp_path)
    doc.add_node("box_blur", "scratch", {"radius": 1}, (0, 0))
    with pytest.raises(NodeError, match="no output reads this node"):
        auto_schedule_change(doc, "scratch")
