"""The schedule fuzzer in CI: a bounded, fixed-seed run of random pipelines with random
schedules, compiled with checked loads and stores and compared with the reference (and the
reference with Halide on every fifth case), each case in a worker process that may die;
and the fuzzer's own machinery (shrinking, reproducers, crash and hang detection).

The long run is `tools/fuzz_schedules.py`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pixelweave.engine.fuzz.cases import Case, draw_case, render_script
from pixelweave.engine.fuzz.driver import CaseRunner, Request
from pixelweave.engine.fuzz.execute import FAILURES, run_case
from pixelweave.engine.fuzz.known_bugs import known_bug
from pixelweave.engine.fuzz.shrink import shrink

ROOT = Path(__file__).resolve().parents[2]
BOUNDED_CASES = 200  # about a minute of CI time


@pytest.fixture(scope="module")
def runner():
    with CaseRunner(timeout=120.0, with_halide=True) as r:
        yield r


@settings(
    max_examples=BOUNDED_CASES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(seed=st.integers(0, 2**40))
def test_random_pipelines_and_schedules_match_the_reference(runner, seed):
    case = draw_case(seed, checked=True)
    assume(known_bug(case) is None)
    request = Request(case, halide=seed % 5 == 0)
    result = runner.run(request)
    if result["outcome"] in FAILURES:
        small, _ = shrink(case, result["outcome"], lambda c: runner.run(Request(c, request.halide))["outcome"])
        title = f"{result['outcome']}: {result.get('message')}"
        pytest.fail(f"{title}\nshrunk reproducer:\n{render_script(small, title, request.halide)}")


def test_shrinking_keeps_only_what_the_failure_needs():
    case = draw_case(0)
    assert len(case.directives) >= 4 and len(case.stages) >= 4 and case.sizes[0] > 10

    def fails(c: Case) -> str:
        """A stand-in failure: any case with a parallel loop and an output at least 3 wide."""
        return "wrong" if any(d.kind == "parallel" for d in c.directives) and c.sizes[0] >= 3 else "ok"

    small, attempts = shrink(case, "wrong", fails)
    assert [d.kind for d in small.directives] == ["parallel"]
    assert small.sizes == [3, 1] and small.input_shape == [1, 1]
    assert len(small.stages) < len(case.stages)
    assert 0 < attempts <= 120


def _passing_case() -> Case:
    """The first drawn case of three stages or more that is no known bug and runs correctly."""
    for seed in range(100):
        case = draw_case(seed)
        if len(case.stages) >= 3 and known_bug(case) is None and run_case(case)["outcome"] == "ok":
            return case
    raise AssertionError("no passing case among the first 100 seeds")


def test_a_reproducer_runs_on_its_own(tmp_path):
    case = _passing_case()
    path = tmp_path / "case.py"
    path.write_text(render_script(case, "A passing case.", with_halide=True))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["compiled output equals the reference", "reference equals halide"]


def _fake_worker(after_request: str) -> tuple[str, ...]:
    """A worker that starts like the real one, then does after_request on its first case."""
    code = textwrap.dedent(
        f"""
        import os, signal, sys, time
        print("ready", flush=True)
        sys.stdin.readline()
        {after_request}
        """
    )
    return (sys.executable, "-c", code)


def test_a_worker_that_dies_is_a_crash_and_the_run_goes_on():
    case = draw_case(1)
    with CaseRunner(command=_fake_worker("os.kill(os.getpid(), signal.SIGSEGV)")) as r:
        first, second = r.run(Request(case)), r.run(Request(case))
    assert first["outcome"] == second["outcome"] == "crash"
    assert "SIGSEGV" in first["message"]
    # where it died: faulthandler's report of the worker's Python stack
    assert "Fatal Python error: Segmentation fault" in first["message"]
    assert 'File "<string>", line 5 in <module>' in first["message"]


def test_halide_dying_on_the_schedule_is_not_a_pixelweave_crash():
    """The oracle's own JIT may die on a schedule Pixelweave refuses (a race it does not
    check): the case runs again without the comparison, and its verdict is Pixelweave's."""
    code = textwrap.dedent(
        """
        import json, os, signal, sys
        print("ready", flush=True)

        def _compare_with_halide():
            os.kill(os.getpid(), signal.SIGSEGV)

        for line in sys.stdin:
            if json.loads(line)["halide"]:
                _compare_with_halide()
            print(json.dumps({"outcome": "refused", "message": "ScheduleError: a race"}), flush=True)
        """
    )
    with CaseRunner(command=(sys.executable, "-c", code)) as r:
        result = r.run(Request(draw_case(1), halide=True))
        assert result["outcome"] == "refused"
        assert "SIGSEGV" in result["halide_crashed"] and "_compare_with_halide" in result["halide_crashed"]
        dead = CaseRunner(command=_fake_worker("os.kill(os.getpid(), signal.SIGSEGV)"))
        with dead:  # a death outside Halide stays a crash, comparison or not
            assert dead.run(Request(draw_case(1), halide=True))["outcome"] == "crash"


def test_a_silent_worker_is_a_hang():
    with CaseRunner(timeout=1.0, command=_fake_worker("time.sleep(60)")) as r:
        result = r.run(Request(draw_case(1)))
    assert result == {"outcome": "hang", "message": "no answer within 1 s", "seconds": 1.0}


def test_the_long_run_script_counts_cases_and_writes_a_summary(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz_schedules.py"),
            *("--seed", "5", "--cases", "6", "--quiet", "--out", str(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cases_run"] == sum(summary["outcomes"].values()) == 6
    assert summary["failures"] == 0 and summary["failure_list"] == []
    assert summary["cases_drawn"] == 6 + sum(summary["excluded_known_bugs"].values())
