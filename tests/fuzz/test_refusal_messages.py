"""Every refusal is a clear message: it names the Func, the directive at fault and what
would be legal. Fuzz cases of campaign seed 4242, one per kind of refusal the fuzzer meets
(the bounded fuzz run in test_fuzz_schedules.py counts any unclear refusal as a failure)."""

from __future__ import annotations

import re

import pytest
from pixelweave.engine.fuzz.cases import draw_case
from pixelweave.engine.fuzz.execute import refusal_gaps, run_case

# seed: (Func at fault, directive named, text of the legal alternative)
REFUSALS = {
    4242000024: ("image_repeat_edge", "compute_at(`s1`, x)", "legal compute levels for `image_repeat_edge` are: "
                 "compute_root()"),
    4242000496: ("s1", "compute_at(`s4`, xyif)", "legal compute levels for `s1` are: compute_root(), "
                 "compute_at(`s3`, yoo)"),
    4242000001: ("s1", "store_root()", "legal store levels for `s1` computed there are: store_at(`s2`, yi)"),
    4242000051: ("s4", "split of x in update 0", "legal tail strategies here are RoundUp, GuardWithIf and Auto"),
    4242000131: ("s2", "split of y.yi in update 0", "legal tail strategies here are GuardWithIf and Auto"),
    4242000112: ("s1", "bound(x, ...)", "legal: a bound(x, min, extent) that covers what is read"),
    4242000039: ("s2", "splits x by 2 (tail AUTO), y by 2 (tail AUTO), y.yi by 4", "split with "
                 "tail=TailStrategy.GUARD_WITH_IF"),
}  # fmt: skip


@pytest.mark.parametrize("seed", sorted(REFUSALS))
def test_a_refusal_names_the_func_the_directive_and_what_is_legal(seed):
    func, directive, legal = REFUSALS[seed]
    case = draw_case(seed)
    result = run_case(case)
    assert result["outcome"] == "refused", result
    message = result["message"]
    assert f"`{func}`" in message and directive in message and legal in message, message
    assert refusal_gaps(message, {s.name for s in case.stages} | {"image"}) == []
    assert not re.search(r"_computed|\$\d|\.s\d+\.", message), message  # no internal names


def test_an_unclear_refusal_is_told_apart():
    names = {"f", "g"}
    assert refusal_gaps("something went wrong", names) == [
        "no Func of the case",
        "no directive",
        "nothing about what is legal",
    ]
    assert refusal_gaps("Func `f` cannot be computed at loop x of `g`", names) == [
        "no directive",
        "nothing about what is legal",
    ]
    assert refusal_gaps("compute_at(`g`, x) of `f`: legal levels are compute_root()", names) == []
