"""The fuzzer's streams for specialize / specialize_fail, compute_with and memoize: a bounded,
fixed-seed run of cases that draw each of them (each case in a worker process, the reference
compared with Halide on every other case), and the pieces that make such a case: its rendered
schedule, its Params, the RuntimeFailure a reached specialize_fail() must give, and the
realizations of a memoized Func."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from pixelweave.engine.fuzz.cases import (
    Case,
    Directive,
    Stage,
    draw_case,
    expected_failures,
    realizations,
    render_script,
    schedule_source,
)
from pixelweave.engine.fuzz.driver import CaseRunner, Request
from pixelweave.engine.fuzz.execute import FAILURES, namespace, run_case
from pixelweave.engine.fuzz.halide_schedule import run_in_halide
from pixelweave.engine.fuzz.shrink import shrink

import pixelweave as pw

NEWER = ("specialize", "specialize_fail", "compute_with", "memoize")
CASES_PER_DIRECTIVE = 8
CAMPAIGN = 777 * 1_000_000


def _rest_compiles(case: Case) -> bool:
    """Whether the case's schedule without the newer directives compiles (about a third of
    all cases are refused for the rest of their schedule, which tests nothing new here)."""
    rest = copy.deepcopy(case)
    rest.directives = [d for d in rest.directives if d.kind not in NEWER and d.condition is None]
    ns = namespace(rest)
    outputs, funcs, rdoms, params = ns["algorithm"](pw)
    try:
        ns["schedule"](funcs, rdoms, params)
        pw.Pipeline(outputs).compile(level="fast")
    except pw.PixelweaveError:
        return False
    return True


def _cases_drawing_each() -> dict[str, list[Case]]:
    """The first CASES_PER_DIRECTIVE cases of a fixed campaign that draw each newer
    directive and whose schedule compiles without the newer directives."""
    found: dict[str, list[Case]] = {kind: [] for kind in NEWER}
    number = 0
    while any(len(cases) < CASES_PER_DIRECTIVE for cases in found.values()):
        case = draw_case(CAMPAIGN + number)
        number += 1
        kinds = [k for k in NEWER if k in {d.kind for d in case.directives} and len(found[k]) < CASES_PER_DIRECTIVE]
        if kinds and _rest_compiles(case):
            for kind in kinds:
                found[kind].append(case)
    return found


def test_cases_drawing_the_newer_directives_compute_the_reference():
    outcomes: dict[str, Counter] = {kind: Counter() for kind in NEWER}
    with CaseRunner(timeout=120.0, with_halide=True) as runner:
        for kind, cases in _cases_drawing_each().items():
            for i, case in enumerate(cases):
                request = Request(case, halide=i % 2 == 0)
                result = runner.run(request)
                if result["outcome"] in FAILURES:
                    small, _ = shrink(case, result["outcome"], lambda c: runner.run(Request(c))["outcome"], 40)
                    title = f"{result['outcome']}: {result.get('message')}"
                    pytest.fail(f"{title}\nshrunk reproducer:\n{render_script(small, title)}")
                outcomes[kind][result["outcome"]] += 1
    for kind in NEWER:  # most of them reach their directive: few are refused for it
        exercised = outcomes[kind]["ok"] + outcomes[kind]["expected_failure"]
        assert exercised >= CASES_PER_DIRECTIVE // 2, (kind, outcomes[kind])


def _fused_specialized_memoized() -> Case:
    """Three stages: s1 memoized at the root, s2 (the output) specialized twice and ended by
    specialize_fail, and s2w, a second output fused with s2 at y."""
    case = draw_case(CAMPAIGN)
    case.stages = [
        Stage("s0", "boundary", [], []),
        Stage("s1", "stencil", ["s0"], ["{self}[x, y] = {0}[x - 1, y] + {0}[x, y]"]),
        Stage("s2", "point", ["s1"], ["{self}[x, y] = {0}[x, y + 1] * 3"]),
        Stage("s2w", "point", ["s1"], ["{self}[x, y] = {0}[x + 2, y] / 2"]),
    ]
    case.value_type, case.boundary, case.sizes, case.input_shape = "u16", "repeat_edge", [11, 6], [9, 13]
    case.outputs = ["s2", "s2w"]
    case.params = {"b": False, "p": 4}
    case.directives = [
        Directive("s1", 0, "compute_root", []),
        Directive("s1", 0, "memoize", []),
        Directive("s2w", 0, "compute_with", ["s2", 0, "y", "AlignEnd"]),
        Directive("s2", 0, "specialize", [], ["b", "", None]),
        Directive("s2", 0, "vectorize", ["x", 4], ["b", "", None]),
        Directive("s2", 0, "split", ["y", "yo", "yi", 2, "GUARD_WITH_IF"], ["p", ">=", 3]),
        Directive("s2", 0, "parallel", ["yo"], ["p", ">=", 3]),
        Directive("s2", 0, "specialize_fail", ["no specialization of s2 holds"]),
    ]
    return case


def test_the_newer_directives_render_as_pixelweave_calls():
    source = schedule_source(_fused_specialized_memoized())
    assert source.splitlines()[2:] == [
        "    F['s1'].compute_root()",
        "    F['s1'].memoize()",
        "    F['s2w'].compute_with(F['s2'], 'y', pw.LoopAlignStrategy.AlignEnd)",
        "    F['s2'].specialize(P['b'])",
        "    F['s2'].specialize(P['b']).vectorize('x', 4)",
        "    F['s2'].specialize(P['p'] >= 3).split('y', 'yo', 'yi', 2, tail=pw.TailStrategy.GUARD_WITH_IF)",
        "    F['s2'].specialize(P['p'] >= 3).parallel('yo')",
        "    F['s2'].specialize_fail('no specialization of s2 holds')",
    ]


def test_a_specialized_stage_is_refused_for_compute_with_and_each_branch_computes_the_reference():
    case = _fused_specialized_memoized()
    result = run_case(case)
    assert result["outcome"] == "refused" and "has specializations" in result["message"], result
    case.directives = [d for d in case.directives if d.kind != "compute_with"]
    assert realizations(case) == [{}, {}]  # memoized: realized twice, the second from the cache
    for params, outcome in (({"b": False, "p": 4}, "ok"), ({"b": True, "p": 0}, "ok"), ({"b": False, "p": 1}, None)):
        case.params = params
        failures = expected_failures(case)
        assert (not failures) == (outcome == "ok")
        result = run_case(case, with_halide=True)
        if outcome is None:
            assert result["outcome"] == "expected_failure" and result["message"] in failures
        else:
            assert result["outcome"] == "ok" and result["halide"] == "same", result


def test_halide_runs_the_same_specialized_memoized_schedule():
    """(memoize() of a Func that reads an image is tried without memoize(), which Halide
    refuses there unless memoize_tag() says what stands for the image.)"""
    case = _fused_specialized_memoized()
    case.directives = [d for d in case.directives if d.kind != "compute_with"]
    case.params = {"b": True, "p": 0}  # the first specialization
    ns = namespace(case)
    inputs = ns["make_inputs"]()
    theirs, error = run_in_halide(ns, case, inputs)
    assert error == "" and theirs is not None
    outputs, funcs, rdoms, params = ns["algorithm"](pw)
    ns["schedule"](funcs, rdoms, params)  # the Params b and p are inputs of the specialized pipeline
    reference = pw.Pipeline(outputs).realize_reference(case.sizes, inputs)
    for a, b in zip(theirs, reference, strict=True):
        np.testing.assert_array_equal(a, b)
    assert run_case(case)["outcome"] == "ok"
    case.params = {"b": False, "p": 0}  # specialize_fail() is reached in Halide too
    ns = namespace(case)
    theirs, error = run_in_halide(ns, case, ns["make_inputs"]())
    assert theirs is None and "no specialization of s2 holds" in error


@pytest.mark.parametrize(("params", "printed"), [
    ({"b": True, "p": 0}, "compiled output equals the reference"),
    ({"b": False, "p": 1}, "failed as specialize_fail() says"),
])  # fmt: skip
def test_a_reproducer_realizes_a_memoized_func_again_and_expects_specialize_fail(tmp_path, params, printed):
    case = _fused_specialized_memoized()
    case.directives = [d for d in case.directives if d.kind != "compute_with"]
    case.params = params
    path = tmp_path / "case.py"
    path.write_text(render_script(case, "A specialized, memoized case."))
    assert "REALIZATIONS = [{}, {}]" in path.read_text()
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [printed]


def test_two_reached_specialize_fails_either_message_is_expected():
    """Seed 20261202001365: s1 (computed inside s3's update loops) and s3's update each reach
    their specialize_fail(); s3's update chooses before its loops run, so its message comes
    first, and the fuzzer counted that as wrong while it expected s1's."""
    case = draw_case(20261202001365)
    failures = expected_failures(case)
    assert len(failures) == 2
    result = run_case(case)
    assert result["outcome"] == "expected_failure" and result["message"] in failures, result
    assert "no specialization of s3 holds" in result["message"]
