"""The job runner: results arrive on the GUI thread, newer jobs cancel older ones of a lane,
failures are reported, progress is delivered."""

import gc
import threading

from pixelweave.app.editor.jobs import JobRunner


def test_newest_job_of_a_lane_wins_and_callbacks_run_on_the_gui_thread(qtbot):
    runner = JobRunner()
    gate = threading.Event()
    results, threads = [], []

    def slow(token, progress):
        gate.wait(5)
        token.check()
        return "old"

    runner.submit("preview", slow, done=results.append)
    runner.submit(
        "preview",
        lambda token, progress: "new",
        done=lambda r: (results.append(r), threads.append(threading.current_thread())),
    )
    gate.set()
    assert runner.wait_idle(10_000)
    assert results == ["new"]
    assert threads == [threading.main_thread()]
    runner.shutdown()


def test_failures_and_progress_are_reported(qtbot):
    runner = JobRunner()
    seen, errors = [], []

    def work(token, progress):
        progress(1, 2, "half")
        raise ValueError("broken input")

    runner.submit(
        "x", work, progress=lambda d, t, s: seen.append((d, t, s)), failed=lambda e, tb: errors.append((e, tb))
    )
    assert runner.wait_idle(10_000)
    assert seen == [(1, 2, "half")]
    assert isinstance(errors[0][0], ValueError) and "broken input" in errors[0][1]
    runner.shutdown()


def test_cancel_drops_the_result_and_busy_state_follows(qtbot):
    runner = JobRunner()
    states, results = [], []
    runner.busy_changed.connect(states.append)
    gate = threading.Event()
    runner.submit("bench", lambda token, progress: gate.wait(5) or "done", done=results.append)
    assert runner.is_busy("bench")
    runner.cancel("bench")
    gate.set()
    assert runner.wait_idle(10_000)
    assert results == [] and states == [True, False] and not runner.is_busy()
    runner.shutdown()


def test_cycles_are_collected_on_the_gui_thread_while_workers_allocate(qtbot):
    """A worker that allocates must not run the cycle collector: a widget in a cycle would be
    destroyed off the GUI thread (the segmentation fault seen in CI)."""
    runner = JobRunner()
    go, seen = threading.Event(), threading.Event()
    freed_on = []

    class Node:
        def __del__(self):
            freed_on.append(threading.current_thread())

    def allocate(token, progress):
        go.wait(5)
        junk = [[] for _ in range(100_000)]  # far past every collection threshold
        seen.wait(5)
        return len(junk)

    runner.submit("x", allocate)
    assert not gc.isenabled()
    node = Node()
    node.me = node
    del node
    go.set()
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5_000)
    seen.set()
    assert runner.wait_idle(10_000)
    assert freed_on == [threading.main_thread()]
    runner.shutdown()
    assert gc.isenabled()
