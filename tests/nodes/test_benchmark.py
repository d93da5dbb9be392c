"""run_benchmark on a small blur document: the statistics agree with the recorded times
(recomputed here with NumPy), progress and stopping work between runs, and the text helpers
the benchmark panel shows (schedule summary, loop-nest differences) say the right thing."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.nodes.benchmark import (
    BenchmarkStopped,
    compare_per_node,
    differing_lines,
    output_megapixels,
    run_benchmark,
    schedule_summary,
)
from pixelweave.nodes.document import Document
from pixelweave.nodes.pipeline_build import build_document

from tests.nodes.document_samples import HEIGHT, WIDTH, blur_document, write_samples

SCHEDULE = {"out": [["compute_root"]]}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    write_samples(folder)
    doc = Document.from_json(blur_document(blur_schedule=SCHEDULE))
    doc.path = folder / "doc.json"
    return build_document(doc)


def test_statistics_match_the_recorded_times(built):
    seen: list[tuple[int, int, str]] = []
    result = run_benchmark(built, built.sample_inputs(), runs=4, progress=lambda *a: seen.append(a))
    times = np.array(result.times)
    assert len(times) == 4 and result.runs == 4
    assert result.median == pytest.approx(np.median(times))
    assert result.minimum == times.min() and result.maximum == times.max()
    assert result.megapixels == pytest.approx(HEIGHT * WIDTH / 1e6)
    assert result.megapixels_per_second == pytest.approx(HEIGHT * WIDTH / 1e6 / np.median(times))
    assert result.compile_seconds > 0 and result.output_count == 1
    assert [done for done, total, _ in seen if done > 0] == [1, 2, 3, 4]
    assert all(total == 4 for _, total, _ in seen)
    assert seen[0][2] == "compiling"
    assert "produce result.out:" in result.loop_nest and "produce blur.out:" in result.loop_nest


def test_per_node_times_come_from_the_profile(built):
    result = run_benchmark(built, built.sample_inputs(), runs=2, profile=True)
    assert set(result.per_node_ms) == {"blur", "result"}
    assert all(ms > 0 for ms in result.per_node_ms.values())
    shares = result.per_node_share()
    assert sum(shares.values()) == pytest.approx(1.0)
    assert list(shares) == sorted(result.per_node_ms, key=lambda n: -result.per_node_ms[n])
    lines = result.report_lines()
    assert lines[0] == f"Box blur: 1 output(s), {HEIGHT * WIDTH / 1e6:.3f} megapixels per run"
    assert any(line.startswith("  blur ") for line in lines)


def test_without_profile_there_is_no_per_node_time(built):
    result = run_benchmark(built, built.sample_inputs(), runs=1, profile=False)
    assert result.per_node_ms == {}
    assert not any("time per node" in line for line in result.report_lines())


def test_should_stop_is_checked_between_runs(built):
    class Stop(Exception):
        pass

    runs_done: list[int] = []

    def stop_after_two() -> None:
        if len(runs_done) >= 2:
            raise Stop

    def progress(done: int, total: int, text: str) -> None:
        if done > 0:
            runs_done.append(done)

    with pytest.raises(Stop):
        run_benchmark(built, built.sample_inputs(), runs=10, progress=progress, should_stop=stop_after_two)
    assert runs_done == [1, 2]
    with pytest.raises(BenchmarkStopped):
        run_benchmark(built, built.sample_inputs(), runs=3, should_stop=lambda: True)


def test_runs_must_be_positive(built):
    with pytest.raises(ValueError, match="runs must be at least 1"):
        run_benchmark(built, built.sample_inputs(), runs=0)


def test_output_megapixels_counts_width_times_height():
    assert output_megapixels({"a": [100, 50, 3], "b": [10, 10]}) == pytest.approx((5000 + 100) / 1e6)


def test_schedule_summary_names_funcs_and_directives():
    data = blur_document(
        blur_schedule=SCHEDULE,
        out_schedule={"out": [["split", "y", "y", "yi", 8], ["split", "x", "x", "xi", 8], ["parallel", "y"]]},
    )
    assert schedule_summary(data) == "blur.out: compute_root; result.out: split x2, parallel"
    assert schedule_summary(blur_document()) == "default schedule (everything inline)"


def test_differing_lines_marks_only_changed_lines():
    a = "produce f:\n  for y:\n    for x:\n      f(...) = ...\n"
    b = "produce f:\n  parallel y:\n    for x:\n      f(...) = ...\n  extra\n"
    only_a, only_b = differing_lines(a, b)
    assert only_a == {1} and only_b == {1, 4}
    assert differing_lines(a, a) == (set(), set())


def test_compare_per_node_lists_both_sides(built):
    one = run_benchmark(built, built.sample_inputs(), runs=1)
    other = run_benchmark(built, built.sample_inputs(), runs=1)
    other.per_node_ms = {"blur": 1.0, "extra": 5.0}
    rows = compare_per_node(one, other)
    assert rows[0] == ("extra", None, 5.0)
    assert {r[0] for r in rows} == {"blur", "result", "extra"}
    assert dict((n, b) for n, _, b in rows)["result"] is None
