"""The inspection of a document under edit: where each Func may be computed (only the loops
that enclose every use, by the names a directive uses), and a scratch node that is not
connected yet reported on its own without hiding the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from pixelweave.nodes.document import Document, read_document
from pixelweave.nodes.inspection import EMPTY_DOCUMENT, HAS_PROBLEMS, NO_OUTPUT, inspect_document

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def _chain(doc: Document | None = None) -> Document:
    doc = doc or Document("chain")
    doc.add_node("image_input", "photo", {"sample": "camera.png", "element": "f32", "layout": "gray"}, (0, 0))
    doc.add_node("box_blur", "blur", {}, (200, 0))
    doc.add_node("output", "result", {"element": "f32"}, (400, 0))
    doc.connect("photo", "blur", "image")
    doc.connect("blur", "result", "image")
    return doc


def test_levels_are_the_loops_enclosing_every_use_by_stable_names():
    doc = read_document(EXAMPLES / "unsharp_mask.json")
    result = inspect_document(doc, statement=False)
    assert result.ok
    levels = result.levels["sharpen"]
    # blur_x is used (through inlined Funcs) only inside result.out's tiles: those loops, outermost first
    assert levels["blur_x"] == [("result.out", ["yo", "xo", "c", "yi", "xi"])]
    # `bounded` is read by blur_x, which is computed at result.out's xo: there, or in blur_x's own loops
    assert levels["bounded"] == [("result.out", ["yo", "xo"]), ("blur_x", ["c", "y", "x"])]
    offered = [loop for pairs in levels.values() for _, loops in pairs for loop in loops]
    assert not any(".v" in loop or loop.startswith("v") or "repeat_edge" in loop for loop in offered)
    assert levels["out"] == [("result.out", ["yo", "xo", "c", "yi", "xi"])] and result.levels["result"]["out"] == []
    # the schedule's loops start from the stage's own, stable names
    assert result.loops["sharpen"]["blur_x"] == ["x", "y", "c"]


@pytest.mark.parametrize("ref, loop", [("result.out", "yo"), ("result.out", "xo"), ("blur_x", "y"), ("blur_x", "x")])
def test_every_level_offered_is_one_the_engine_accepts(ref, loop):
    doc = read_document(EXAMPLES / "unsharp_mask.json")
    assert loop in dict(inspect_document(doc, statement=False).levels["sharpen"]["bounded"])[ref]
    doc.set_schedule("sharpen", "bounded", [["compute_at", ref, loop]])
    result = inspect_document(doc, statement=False)
    assert result.ok, result.problems
    assert "produce sharpen.bounded" in result.loop_nest


def test_a_scratch_node_is_reported_and_hides_nothing_about_the_others():
    doc = _chain()
    doc.set_schedule("blur", "out", [["compute_root"], ["vectorize", "x", 8]])
    doc.add_node("gaussian_blur", "scratch", {}, (200, 300))  # dropped in, not connected yet
    result = inspect_document(doc, statement=False)
    assert [n for n, _ in result.problems] == ["scratch"]
    assert "not connected" in result.problems_of("scratch")[0]
    assert result.loops["blur"]["out"] == ["x", "y"]  # still schedulable
    assert result.levels["blur"]["out"] == [("result.out", ["y", "x"])]
    assert "vectorized x.v0 in [0, 7]:" in result.loop_nest and "scratch" not in result.loop_nest
    assert result.left_out == ["scratch"] and result.message == ""


def test_a_problem_in_what_the_outputs_read_still_shows_no_loop_nest():
    doc = _chain()
    doc.set_schedule("blur", "out", [["compute_at", "result.out", "nowhere"]])
    result = inspect_document(doc, statement=False)
    assert result.problems_of("blur") and result.loop_nest == "" and result.message == HAS_PROBLEMS
    assert result.loops["blur"]["out"] == ["x", "y"]


def test_an_empty_document_gets_a_hint_not_a_problem():
    result = inspect_document(Document())
    assert result.ok and result.loop_nest == "" and result.message == EMPTY_DOCUMENT
    doc = Document()
    doc.add_node("image_input", "photo", {"sample": "camera.png"}, (0, 0))
    result = inspect_document(doc)
    assert result.message == NO_OUTPUT and result.loops["photo"] == {"out": ["x", "y", "c"]}


def test_the_loop_nest_arrives_before_the_later_passes_finish():
    doc = _chain()
    seen: list[str] = []
    result = inspect_document(doc, statement=False, on_loop_nest=seen.append)
    assert result.ok and seen == [result.loop_nest] and "produce result.out" in seen[0]
    # unrolling a loop of unknown extent is refused by a pass after the loop nest is made:
    # the loop nest was shown, and the problem arrives with the result
    doc.set_schedule("blur", "out", [["compute_root"], ["unroll", "x"]])
    seen.clear()
    refused = inspect_document(doc, statement=False, on_loop_nest=seen.append)
    assert len(seen) == 1 and "produce blur.out" in seen[0]
    assert refused.problems_of("blur") and refused.loop_nest == ""


def test_a_statement_job_is_cancelled_between_passes_and_while_printing():
    class Stop(Exception):
        pass

    doc = read_document(EXAMPLES / "unsharp_mask.json")
    full = inspect_document(doc, statement=True)
    statements = full.statement.count("\n")
    for allowed in (3, 12, statements // 2):  # in a lowering pass, then in the printer
        calls = []

        def check(allowed: int = allowed) -> None:
            calls.append(1)
            if len(calls) > allowed:
                raise Stop

        with pytest.raises(Stop):
            inspect_document(doc, statement=True, check=check)
        assert len(calls) == allowed + 1  # stopped at the first check after the limit
