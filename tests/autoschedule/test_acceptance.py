"""The tuner's final decision: a search result replaces the hand schedule only if it is
faster beyond the noise of interleaved runs, on median, least and CPU time."""

from __future__ import annotations

from pixelweave.engine.autoschedule.acceptance import (
    MIN_ROUNDS,
    Timings,
    clearly_faster,
    interleaved_timings,
)

# A hand schedule on a loaded machine: 100 ms give or take 30%, in no order.
HAND = (100.0, 130.0, 85.0, 110.0, 95.0, 125.0, 90.0, 105.0, 140.0, 98.0, 115.0, 88.0, 102.0, 120.0, 93.0)


def _ms(walls, cpus=None) -> Timings:
    walls = tuple(w / 1000 for w in walls)
    return Timings(walls, tuple(c / 1000 for c in cpus) if cpus is not None else tuple(2 * w for w in walls))


def test_a_candidate_faster_only_by_noise_is_not_kept():
    # The same distribution rotated: its median is 2% lower and its least time lower
    # (a lucky run), but the spread covers the gap.
    noisy = [h * 0.98 for h in HAND[5:] + HAND[:5]]
    verdict = clearly_faster(_ms(noisy), _ms(HAND))
    assert not verdict.accepted and "median wall time" in verdict.reason
    slightly = [h * 0.9 for h in HAND[3:] + HAND[:3]]  # 10% better median, but within the spread
    verdict = clearly_faster(_ms(slightly), _ms(HAND))
    assert not verdict.accepted and "within the spread" in verdict.reason


def test_a_clearly_faster_candidate_is_kept():
    fast = [h * 0.6 for h in HAND]  # every run 40% faster, in the same rounds
    verdict = clearly_faster(_ms(fast), _ms(HAND))
    assert verdict.accepted, verdict.reason
    assert "won 15/15 rounds" in verdict.reason


def test_one_lucky_least_time_does_not_decide():
    # Faster median and spread-free, but the hand schedule's least run is as fast as the
    # candidate's: the benchmark's least-time ratio would not show a win.
    hand = [100.0] * 14 + [60.0]
    cand = [62.0] * 15
    verdict = clearly_faster(_ms(cand), _ms(hand))
    assert not verdict.accepted and "least wall time" in verdict.reason


def test_a_candidate_losing_many_rounds_pairwise_is_not_kept():
    # Medians, quartiles and least times far apart, but in 4 of 15 rounds the candidate
    # was the slower one of the pair (it is not reliably faster).
    hand = [150.0] * 15
    cand = [40.0] * 11 + [200.0] * 4
    verdict = clearly_faster(_ms(cand), _ms(hand))
    assert not verdict.accepted and "won only 11 of 15 rounds" in verdict.reason
    assert clearly_faster(_ms([40.0] * 12 + [200.0] * 3), _ms(hand)).accepted


def test_a_candidate_that_wins_by_using_more_cpu_is_not_kept():
    fast = [h * 0.6 for h in HAND]
    verdict = clearly_faster(_ms(fast, [h * 2.5 for h in HAND]), _ms(HAND, [h * 2 for h in HAND]))
    assert not verdict.accepted and "CPU time" in verdict.reason
    assert clearly_faster(_ms(fast, [h * 1.5 for h in HAND]), _ms(HAND, [h * 2 for h in HAND])).accepted


def test_too_few_rounds_never_decide():
    n = MIN_ROUNDS - 1
    verdict = clearly_faster(_ms([10.0] * n), _ms([100.0] * n))
    assert not verdict.accepted and f"only {n} rounds" in verdict.reason


def test_interleaved_timings_alternate_and_read_both_clocks():
    """Each round runs every callable once in turn after one warm-up each; the fake clock
    advances by a different step per callable so each one's times are recognisable."""
    order: list[str] = []
    now = {"wall": 0.0, "cpu": 0.0}
    steps = {"a": (1.0, 3.0), "b": (2.0, 5.0)}

    def runner(name):
        def run():
            order.append(name)
            now["wall"] += steps[name][0]
            now["cpu"] += steps[name][1]

        return run

    a, b = interleaved_timings([runner("a"), runner("b")], 3, clock=lambda: (now["wall"], now["cpu"]))
    assert order == ["a", "b"] * 4  # a warm-up round, then three timed ones
    assert a.wall == (1.0,) * 3 and a.cpu == (3.0,) * 3
    assert b.wall == (2.0,) * 3 and b.cpu == (5.0,) * 3
