"""Schedule directives in documents: static checks, application through the engine (results
compared with a NumPy box blur), engine refusals reported, and the directives read back."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import DocumentError
from pixelweave.nodes.pipeline_build import build_document
from pixelweave.nodes.schedule_spec import DIRECTIVES, check_directive, check_schedule, directives_of

from tests.nodes.document_samples import blur_document, numpy_box_blur, write_samples
from tests.nodes.harness import assert_same


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[str, np.ndarray]]:
    folder = tmp_path_factory.mktemp("samples")
    return folder, write_samples(folder)


def _built(samples, layout="gray", blur=None, out=None, radius=2):
    folder, _ = samples
    doc = Document.from_json(blur_document(f"{layout}.png", layout, radius, blur, out))
    doc.path = folder / "doc.json"
    return build_document(doc)


def _problems(samples, layout="gray", blur=None, out=None) -> list[str]:
    with pytest.raises(DocumentError) as info:
        _built(samples, layout, blur, out)
    return info.value.problems


# ---------------------------------------------------------------------------- static checks


@pytest.mark.parametrize(
    ("directive", "expected"),
    [
        (["vectorise", "x", 8], "unknown directive `vectorise`; did you mean vectorize?"),
        (["split", "x", "xo", "xi"], "`split` takes [split, var, outer, inner, factor, (tail)]; got 3 arguments"),
        (["split", "x", "xo", "xi", "8"], "argument 4 (factor) of `split` must be an integer, got '8'"),
        (["split", "x", "xo", "xi", 0], "argument 4 (factor) of `split` must be a positive integer, got 0"),
        (["split", "x", "xo", "xi", 8, "sideways"], "argument 5 (tail) of `split` must be one of auto,"),
        (["vectorize", 3], "argument 1 (var) of `vectorize` must be a name (a string), got 3"),
        (["tile", "x", "y", "xi", "yi", 8], "`tile` takes [tile, x, y, xo, yo, xi, yi, xfactor, yfactor, (tail)] or"),
        (["compute_at", "out"], "a Func needs one of its loops"),
        (["compute_at", "root", "y"], 'at "root" takes no loop'),
        (["compute_root", "now"], "`compute_root` takes [compute_root]; got 1 argument"),
        (["reorder"], "`reorder` takes [reorder, vars...]; got 0 arguments"),
        (["bound", "x", 0, 0], "argument 3 (extent) of `bound` must be a positive integer, got 0"),
        (["split", "x", "x o", "xi", 8], "argument 2 (outer) of `split` must be a loop name"),
        ("vectorize", "a directive must be a list [name, arguments...]"),
        ([], "a directive must be a list"),
        (["store_in", "vtcm"], "argument 1 (memory) of `store_in` must be one of auto, heap, stack, register, gpu_shared"),
        (["fold_storage", "y", 4, "no"], "argument 3 (fold_forward) of `fold_storage` must be true or false, got 'no'"),
        (["compute_with", "out.update(x)", "y"], "argument 1 (stage) of `compute_with` must be a Func or an update"),
        (["compute_with", "out", "y", "sideways"], "argument 3 (align) of `compute_with` must be one of align_start,"),
        (["hoist_storage", "root", "y"], 'at "root" takes no loop'),
    ],
)
def test_check_directive_names_the_fault(directive, expected):
    assert expected in check_directive(directive)


def test_good_directives_pass_static_checks():
    good = [
        ["compute_root"], ["compute_inline"], ["store_root"], ["compute_at", "out", "y"], ["compute_at", "root"],
        ["store_at", "other.out", "y"], ["split", "x", "xo", "xi", 8], ["split", "x", "xo", "xi", 8, "guard_with_if"],
        ["fuse", "x", "y", "xy"], ["reorder", "y", "x"], ["tile", "x", "y", "xi", "yi", 8, 8],
        ["tile", "x", "y", "xo", "yo", "xi", "yi", 8, 8, "round_up"], ["vectorize", "x"], ["vectorize", "x.xi", 8],
        ["unroll", "y", 2], ["parallel", "y"], ["parallel", "y", 4], ["serial", "y"], ["bound", "c", 0, 3],
        ["reorder_storage", "c", "x", "y"], ["gpu_blocks", "x", "y"], ["gpu_threads", "xi"],
        ["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 16, 16], ["bound_extent", "x", 8],
        ["align_bounds", "x", 8], ["align_bounds", "x", 8, 3], ["align_extent", "x", 4], ["align_storage", "x", 16],
        ["fold_storage", "y", 4], ["fold_storage", "y", 4, False], ["hoist_storage", "out", "y"],
        ["hoist_storage", "root"], ["hoist_storage_root"], ["store_in", "gpu_shared"], ["memoize"],
        ["gpu_single_thread"], ["never_partition", "x", "y"], ["always_partition", "x"], ["never_partition_all"],
        ["always_partition_all"], ["compute_with", "other.out.update(0)", "y"], ["compute_with", "out", "x", "align_end"],
        ["atomic"], ["atomic", True],
    ]  # fmt: skip
    assert {d[0] for d in good} == set(DIRECTIVES)
    for d in good:
        assert check_directive(d) is None, d


def test_func_directives_are_refused_under_an_update_key():
    problems = check_schedule({"hist.update(0)": [["compute_root"]], "out.update(x)": [], "out": "parallel"})
    assert "schedule of `hist.update(0)`, directive 1: `compute_root` applies to a whole Func" in problems[0]
    assert "schedule key 'out.update(x)' is not a Func name" in problems[1]
    assert "the schedule of `out` must be a list of directives" in problems[2]


# ---------------------------------------------------------------------------- applied, compared with NumPy

SCHEDULES = {
    "breadth first": ({"rows": [["compute_root"]]}, None),
    "tiles in parallel": (
        {"rows": [["compute_at", "result.out", "xo"], ["vectorize", "x", 8]]},
        {"out": [["tile", "x", "y", "xo", "yo", "xi", "yi", 32, 16], ["vectorize", "xi", 8], ["parallel", "yo"]]},
    ),
    "sliding window": (
        {"rows": [["store_root"], ["compute_at", "result.out", "y"]]},
        {"out": [["split", "x", "xo", "xi", 16, "guard_with_if"], ["unroll", "xi", 2], ["reorder", "xo", "y"]]},
    ),
    "fused and storage reordered": (
        {"rows": [["compute_root"], ["reorder_storage", "c", "x", "y"], ["fuse", "x", "y", "xy"], ["parallel", "xy"]]},
        {"out": [["split", "y", "y", "yi", 8], ["parallel", "y"], ["bound", "c", 0, 3]]},
    ),
    "folded storage, aligned, loops kept whole": (
        {"rows": [["compute_at", "result.out", "y"], ["store_root"], ["fold_storage", "y", 8],
                  ["align_storage", "x", 16], ["never_partition", "x"]]},
        {"out": [["never_partition_all"], ["vectorize", "x", 8]]},
    ),
    "hoisted to the strip, on the heap": (
        {"rows": [["compute_at", "result.out", "yi"], ["hoist_storage", "result.out", "y"],
                  ["align_bounds", "x", 8, 0], ["store_in", "heap"]]},
        {"out": [["split", "y", "y", "yi", 4], ["parallel", "y"]]},
    ),
    "memoized, extent aligned": (
        {"rows": [["compute_root"], ["memoize"], ["align_extent", "y", 4], ["hoist_storage_root"]]},
        None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", SCHEDULES)
def test_scheduled_documents_match_numpy(samples, name):
    blur, out = SCHEDULES[name]
    built = _built(samples, "colour", blur, out)
    image = samples[1]["colour"]
    expected = numpy_box_blur(image, 2)
    compiled = built.run({"input": image})["result"]
    reference = built.run({"input": image}, target="reference")["result"]
    assert_same(compiled, reference)
    np.testing.assert_array_equal(compiled, expected)


def test_schedule_shows_in_the_loop_nest(samples):
    blur, out = SCHEDULES["tiles in parallel"]
    nest = _built(samples, "colour", blur, out).loop_nest()
    assert "parallel y.yo" in nest and "vectorized" in nest
    assert nest.index("produce blur.rows") > nest.index("for x.xo")  # rows computed inside the tiles


# ---------------------------------------------------------------------------- engine refusals


def test_unknown_func_names_the_node_and_its_funcs(samples):
    (problem,) = _problems(samples, blur={"row": [["compute_root"]]})
    assert problem == (
        "node `blur`: schedule names Func `row` (did you mean `rows`?), which this node does not have; "
        "its Funcs: bounded, out, rows"
    )


def test_engine_refusal_includes_its_message(samples):
    (problem,) = _problems(samples, out={"out": [["vectorize", "z", 8]]})
    assert problem.startswith('node `result`: schedule of `out`, directive 1 ["vectorize", "z", 8]: the engine refuses')
    assert "has no dimension named z" in problem


def test_split_of_a_vectorized_loop_of_unknown_extent_is_refused(samples):
    """As in Halide, both loops of a vectorized loop's split are vectorized: the outer one,
    of unknown extent, cannot be."""
    (problem,) = _problems(samples, out={"out": [["vectorize", "x"], ["split", "x", "xo", "xi", 4]]})
    assert problem.startswith("node `result`: the engine refuses the schedule: cannot vectorize loop x.xo")
    assert "not a constant" in problem


def test_update_of_a_pure_func_is_refused(samples):
    (problem,) = _problems(samples, out={"out.update(0)": [["parallel", "y"]]})
    assert "has 0 update definitions" in problem


def test_compute_at_a_loop_that_does_not_enclose_the_uses(samples):
    (problem,) = _problems(samples, blur={"rows": [["compute_at", "input.out", "y"]]})
    assert problem.startswith("node `blur`: the engine refuses the schedule:")
    assert "`input.out` is computed inline" in problem


def test_compute_at_an_unknown_node(samples):
    (problem,) = _problems(samples, blur={"rows": [["compute_at", "reslt.out", "y"]]})
    assert "Func reference 'reslt.out'" in problem and "there is no node `reslt`" in problem


def test_gpu_schedule_needs_the_opencl_target(samples):
    (problem,) = _problems(samples, out={"out": [["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 16, 16]]})
    assert "needs target='opencl'" in problem


def test_several_schedule_problems_are_all_reported(samples):
    problems = _problems(
        samples, blur={"rows": [["vectorise", "x"]], "nothing": [["compute_root"]]}, out={"out": [["unroll", "q"]]}
    )
    assert len(problems) == 2
    assert "unknown directive `vectorise`" in problems[0]
    assert "has no dimension named q" in problems[1]


# ---------------------------------------------------------------------------- the inverse


def _normalized_nest(built) -> str:
    return re.sub(r"\bv\d+\b", "v#", built.loop_nest())


@pytest.mark.parametrize("name", SCHEDULES)
def test_directives_read_back_give_the_same_loops(samples, name):
    blur, out = SCHEDULES[name]
    first = _built(samples, "colour", blur, out)
    read_back = {node_id: first.schedule_of(node_id) for node_id in ("blur", "result")}
    again = _built(samples, "colour", read_back["blur"] or None, read_back["result"] or None)
    assert _normalized_nest(again) == _normalized_nest(first)


def test_directives_read_back_are_readable(samples):
    built = _built(
        samples,
        "gray",
        {"rows": [["compute_at", "result.out", "y"], ["vectorize", "x", 8]]},
        {"out": [["split", "y", "y", "yi", 16], ["parallel", "y"], ["vectorize", "x", 8]]},
    )
    assert built.schedule_of("blur") == {"rows": [["compute_at", "result.out", "y"], ["vectorize", "x", 8]]}
    assert built.schedule_of("result") == {
        "out": [["split", "y", "y", "yi", 16], ["vectorize", "x", 8], ["parallel", "y"]]
    }
    assert directives_of(built.graph.func("input", "out"), "input") == {}
