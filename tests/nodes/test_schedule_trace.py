"""Traced runs of documents (nodes.schedule_trace): the events say what the schedule does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.pipeline_build import build_document
from pixelweave.nodes.schedule_trace import BEGIN, STORE, crop_inputs, state_at, trace_document

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def _blur(blur_x_schedule: list, tile: int = 16) -> Document:
    data = json.loads((EXAMPLES / "blur.json").read_text())
    for node in data["nodes"]:
        if node["id"] == "blur":
            node["schedule"] = {"blur_x": blur_x_schedule}
        if node["id"] == "result":
            node["schedule"]["out"][0] = ["split", "x", "xo", "xi", tile]
    doc = Document.from_json(data)
    doc.path = EXAMPLES / "blur.json"
    return doc


def _trace(doc: Document, side: int = 32, loads: bool = False):
    built = build_document(doc)
    return trace_document(built, built.sample_inputs(), side=side, loads=loads)


def _func(trace, label: str) -> int:
    return next(i for i, f in enumerate(trace.funcs) if f.label == label)


def test_compute_at_tiles_interleave_and_compute_root_comes_first():
    tiled = _trace(_blur([["compute_at", "result.out", "xo"], ["vectorize", "x", 8]]))
    rooted = _trace(_blur([["compute_root"]]))
    for trace in (tiled, rooted):
        assert trace.input_size == (32, 32) and not trace.truncated
        out, bx = _func(trace, "result: out"), _func(trace, "blur: blur_x")
        stores = trace.kind == STORE
        # the output is stored once per point and channel
        assert np.count_nonzero(stores & (trace.func == out)) == 32 * 32 * 3
        assert trace.funcs[out].width == 32 and trace.funcs[out].height == 32
    out, bx = _func(tiled, "result: out"), _func(tiled, "blur: blur_x")
    blur_x_stores = np.nonzero((tiled.kind == STORE) & (tiled.func == bx))[0]
    out_stores = np.nonzero((tiled.kind == STORE) & (tiled.func == out))[0]
    assert np.count_nonzero((tiled.kind == BEGIN) & (tiled.func == bx)) == 2  # one per 16-wide tile
    assert out_stores[0] < blur_x_stores[-1]  # the second tile's blur_x comes after the first tile's output
    out, bx = _func(rooted, "result: out"), _func(rooted, "blur: blur_x")
    blur_x_stores = np.nonzero((rooted.kind == STORE) & (rooted.func == bx))[0]
    out_stores = np.nonzero((rooted.kind == STORE) & (rooted.func == out))[0]
    assert np.count_nonzero((rooted.kind == BEGIN) & (rooted.func == bx)) == 1
    assert blur_x_stores[-1] < out_stores[0]


def test_state_at_a_position_and_the_event_wording():
    trace = _trace(_blur([["compute_root"]]), side=16)
    out = _func(trace, "result: out")
    stored, loaded, boxes = state_at(trace, len(trace), out)
    assert (stored >= 0).all() and (loaded < 0).all()
    stored, _, _ = state_at(trace, 0, out)
    assert (stored < 0).all()
    bx = _func(trace, "blur: blur_x")
    begin = int(np.nonzero((trace.kind == BEGIN) & (trace.func == bx))[0][0])
    assert state_at(trace, begin + 1, bx)[2] == [tuple(int(v) for v in (trace.x[begin], trace.y[begin],
                                                                       trace.w[begin], trace.h[begin]))]  # fmt: skip
    assert trace.describe(begin).startswith("Begin realization blur: blur_x [")
    first_store = int(np.nonzero(trace.kind == STORE)[0][0])
    assert trace.describe(first_store).startswith("Store ")


def test_loads_show_what_is_read_again():
    trace = _trace(_blur([["compute_root"]]), side=16, loads=True)
    assert trace.counts["load"] > 0
    bx = _func(trace, "blur: blur_x")
    _, loaded, _ = state_at(trace, len(trace), bx)
    assert (loaded >= 0).any()


def test_a_corner_smaller_than_the_tiles_is_doubled():
    doc = Document.from_json(json.loads((EXAMPLES / "unsharp_mask.json").read_text()))
    doc.path = EXAMPLES / "unsharp_mask.json"
    trace = _trace(doc, side=16)
    assert trace.input_size[0] > 16 and len(trace) > 0


def test_crop_keeps_channels_and_refuses_tiny_corners():
    image = np.zeros((3, 40, 50), dtype=np.float32)
    assert crop_inputs({"a": image}, 16)["a"].shape == (3, 16, 16)
    with pytest.raises(NodeError, match="at least 4 pixels"):
        crop_inputs({"a": image}, 2)
