"""Schedules per target in the pipeline document: the CPU schedule under "schedule", the
OpenCL one under the optional "schedules": {"opencl": ...}; their round trip, every loading
problem, editing, renaming and pasting, and which schedule a build for each target applies.
Documents without OpenCL schedules must not change by a byte."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from pixelweave.nodes.document import Document, load_document, read_document, schedule_target
from pixelweave.nodes.editing import EditSession
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.pipeline_build import build_document, build_what_can_be_built
from pixelweave.nodes.runtime_params import structure_key

from tests.nodes.document_samples import blur_document, numpy_box_blur, write_document, write_samples

TILE = ["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 16, 16]
CPU = {"out": [["split", "y", "y", "yi", 8], ["parallel", "y"]]}


def _gpu_data(result: Any = None, blur: Any = None) -> dict[str, Any]:
    data = blur_document(out_schedule=CPU)
    data["nodes"][2]["schedules"] = {"opencl": {"out": [TILE]}} if result is None else result
    if blur is not None:
        data["nodes"][1]["schedules"] = blur
    return data


def _problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(DocumentError) as info:
        Document.from_json(data)
    return info.value.problems


def test_schedule_targets():
    assert schedule_target("opencl") == "opencl"
    assert [schedule_target(t) for t in ("host", "x86-64-v3", "reference")] == ["host"] * 3


def test_round_trip_and_canonical_text():
    doc = Document.from_json(_gpu_data())
    node = doc.node("result")
    assert node.schedule == CPU and node.schedules == {"opencl": {"out": [TILE]}}
    assert node.schedule_for("opencl") == {"out": [TILE]} and node.schedule_for("x86-64") == CPU
    assert doc.node("blur").schedule_for("opencl") == {}
    text = doc.dumps()
    assert list(json.loads(text)["nodes"][2]) == ["id", "type", "params", "inputs", "schedule", "schedules", "position"]
    assert '      "schedules": {\n        "opencl": {\n          "out": [\n' in text
    assert Document.loads(text) == doc and Document.loads(text).dumps() == text


def test_a_document_without_opencl_schedules_is_unchanged():
    data = blur_document(out_schedule=CPU)
    doc = Document.from_json(data)
    assert "schedules" not in doc.dumps() and doc.to_json()["version"] == 1
    doc.set_schedule("result", "out", [TILE], "opencl")
    doc.set_schedule("result", "out", [], "opencl")  # emptied: the key goes away
    assert doc.node("result").schedules == {} and "schedules" not in doc.dumps()


def test_every_structural_problem_is_reported_at_once():
    data = _gpu_data(
        result={"opencl": {"out": [["gpu_tyle", "x", "y"]], "bad key": []}, "cuda": {}, "host": {}},
        blur={"opencl": ["rows"]},
    )
    data["nodes"][0]["schedules"] = "opencl"
    problems = _problems(data)
    assert problems == [
        "node `input`: \"schedules\" must be an object mapping targets (opencl) to schedules, got 'opencl'",
        "node `blur`: the OpenCL schedule must be an object mapping Func names to directives, got ['rows']",
        "node `result`: \"schedules\" has target 'cuda' (no such target); the targets are opencl",
        "node `result`: \"schedules\" has target 'host' (its CPU schedule is `schedule`); the targets are opencl",
    ]
    data = _gpu_data(result={"opencl": {"out": [["gpu_tyle", "x", "y"]], "bad key": []}})
    problems = Document.from_json(data).validate()
    assert sorted(problems) == [
        'node `result`: OpenCL schedule: schedule key \'bad key\' is not a Func name such as "out" or "out.update(0)"',
        "node `result`: OpenCL schedule: schedule of `out`, directive 1: unknown directive `gpu_tyle`; did you mean gpu_tile?",
    ]


def test_gpu_directives_in_the_cpu_schedule_point_to_the_opencl_schedule():
    data = blur_document(out_schedule={"out": [TILE]})
    problems = Document.from_json(data).validate()
    assert len(problems) == 1
    assert "`gpu_tile` in the CPU schedule: GPU mapping needs target='opencl'" in problems[0]
    assert '"schedules": {"opencl": ...}' in problems[0]


def test_loading_checks_the_opencl_schedules_with_the_engine_too(tmp_path):
    write_samples(tmp_path)
    bad = _gpu_data(result={"opencl": {"out": [["gpu_tile", "x", "q", "xo", "yo", "xi", "yi", 8, 8]]}})
    bad["nodes"][1]["params"]["radius"] = 0
    with pytest.raises(DocumentError) as info:
        load_document(write_document(tmp_path / "bad.json", bad))
    problems = info.value.problems
    assert any("radius" in p for p in problems)
    bad["nodes"][1]["params"]["radius"] = 2
    with pytest.raises(DocumentError) as info:
        load_document(write_document(tmp_path / "bad.json", bad))
    (problem,) = info.value.problems
    assert problem.startswith("node `result`: OpenCL schedule: schedule of `out`, directive 1")
    assert "the engine refuses it" in problem
    # a schedule the engine refuses only when lowering for OpenCL
    lowered = _gpu_data(blur={"opencl": {"rows": [["compute_at", "result.out", "nowhere"]]}})
    with pytest.raises(DocumentError) as info:
        load_document(write_document(tmp_path / "lowered.json", lowered))
    (problem,) = info.value.problems
    assert problem.startswith("node `blur`: the engine refuses the OpenCL schedule:") and "nowhere" in problem
    good = load_document(write_document(tmp_path / "good.json", _gpu_data()))
    assert good.node("result").schedules == {"opencl": {"out": [TILE]}}


def test_each_target_builds_with_its_own_schedule(tmp_path):
    write_samples(tmp_path)
    doc = read_document(write_document(tmp_path / "gpu.json", _gpu_data()))
    cpu, gpu = build_document(doc), build_document(doc, target="opencl")
    assert cpu.target == "host" and gpu.target == "opencl"
    assert "parallel y" in cpu.loop_nest() and "gpu_" not in cpu.loop_nest()
    assert "gpu_block y.yo" in gpu.loop_nest() and "parallel" not in gpu.loop_nest()
    assert gpu.schedule_of("result")["out"][0][0] == "split"  # the engine's view of the GPU tiles
    gray = gpu.sample_inputs()["input"]
    np.testing.assert_array_equal(gpu.run(gpu.sample_inputs())["result"], numpy_box_blur(gray, 2))


def test_a_node_without_an_opencl_schedule_gets_the_default_on_opencl():
    doc = Document.from_json(_gpu_data(result={}))
    doc.node("blur").schedule = {"rows": [["compute_root"], ["parallel", "y"]]}
    gpu, problems = build_what_can_be_built(doc, target="opencl")
    assert problems == []
    nest = gpu.loop_nest()
    assert "produce blur.rows" not in nest and "parallel" not in nest and "gpu_" not in nest


def test_problems_of_one_target_do_not_block_the_other():
    doc = Document.from_json(_gpu_data(result={"opencl": {"out": [["gpu_tile", "x", "q", "a", "b", "c", "d", 8, 8]]}}))
    cpu, problems = build_what_can_be_built(doc)
    assert problems == [] and "parallel y" in cpu.loop_nest()
    gpu, problems = build_what_can_be_built(doc, target="opencl")
    assert [(p.node, p.kind, p.target) for p in problems] == [("result", "schedule", "opencl")]


def test_editing_renaming_pasting_and_undo_keep_the_targets_apart():
    session = EditSession(
        Document.from_json(_gpu_data(blur={"opencl": {"rows": [["compute_at", "result.out", "xo"]]}}))
    )
    session.set_schedule("blur", {"rows": [["compute_at", "result.out", "xo"], ["gpu_threads", "x", "y"]]}, "opencl")
    doc = session.document
    assert doc.node("blur").schedule == {} and doc.node("blur").schedules["opencl"]["rows"][1][0] == "gpu_threads"
    assert session.undo_label() == "OpenCL schedule blur"
    with pytest.raises(NodeError, match="unknown directive"):
        session.set_schedule("blur", {"rows": [["gpu_thread", "x"]]}, "opencl")
    session.rename_node("result", "final")
    doc = session.document
    assert doc.node("blur").schedules["opencl"]["rows"][0] == ["compute_at", "final.out", "xo"]
    pasted = session.paste(session.copy(["blur", "final"]))
    copy = session.document.node(pasted[0])
    assert copy.schedules["opencl"]["rows"][0] == ["compute_at", f"{pasted[1]}.out", "xo"]
    with pytest.raises(NodeError, match="no schedules for target 'cuda'"):
        session.document.set_schedule("blur", "rows", [], "cuda")
    session.undo()  # the paste
    session.undo()  # the rename
    session.undo()  # the OpenCL schedule
    assert session.document.node("blur").schedules == {"opencl": {"rows": [["compute_at", "result.out", "xo"]]}}


def test_an_opencl_schedule_is_structure():
    a = Document.from_json(_gpu_data())
    b = Document.from_json(
        _gpu_data(result={"opencl": {"out": [["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 8, 8]]}})
    )
    assert structure_key(a) != structure_key(b)
    assert json.loads(a.dumps())["nodes"][2]["schedules"]["opencl"]["out"] == [TILE]


@pytest.mark.parametrize(("memory", "local"), [("gpu_shared", True), ("heap", False)])
def test_a_gpu_schedule_places_a_producer_in_the_memory_it_names(tmp_path, memory, local):
    """store_in in a document: the blur's rows per work-group in local memory (as Halide's
    GPU schedules write it) or in global memory, both giving the NumPy blur; the read-back
    keeps the directive."""
    blur = {"opencl": {"rows": [["compute_at", "result.out", "xo"], ["gpu_threads", "x", "y"],
                                ["store_in", memory]]}}  # fmt: skip
    write_samples(tmp_path)
    doc = read_document(write_document(tmp_path / "local.json", _gpu_data(blur=blur)))
    gpu = build_document(doc, target="opencl")
    assert ["store_in", memory] in gpu.schedule_of("blur")["rows"]
    assert ("__local" in gpu.pipeline().compile(target="opencl").kernel_source) == local
    gray = gpu.sample_inputs()["input"]
    np.testing.assert_array_equal(gpu.run(gpu.sample_inputs())["result"], numpy_box_blur(gray, 2))


def test_renaming_and_pasting_follow_hoist_storage_and_compute_with_references():
    session = EditSession(Document.from_json(blur_document()))
    session.set_schedule(
        "blur",
        {"rows": [["compute_at", "result.out", "y"], ["hoist_storage", "result.out", "y"]],
         "out": [["compute_with", "result.out.update(0)", "y"]]},
    )  # fmt: skip
    session.rename_node("result", "final")
    rows = session.document.node("blur").schedule
    assert rows["rows"][1] == ["hoist_storage", "final.out", "y"]
    assert rows["out"][0] == ["compute_with", "final.out.update(0)", "y"]
    pasted = session.paste(session.copy(["blur", "final"]))
    copy = session.document.node(pasted[0]).schedule
    assert copy["rows"][1] == ["hoist_storage", f"{pasted[1]}.out", "y"]
    assert copy["out"][0] == ["compute_with", f"{pasted[1]}.out.update(0)", "y"]
