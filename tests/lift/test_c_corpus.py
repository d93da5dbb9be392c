"""Every function of the C corpus lifts and matches the original compiled with cc, bit for
bit, on random sizes, strides and values (see nodes/lift/verify.py)."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest
from pixelweave.nodes.lift.c_lift import lift_c
from pixelweave.nodes.lift.errors import LiftError
from pixelweave.nodes.lift.verify import differential

CORPUS = Path(__file__).parent / "corpus"
# outside the subset on purpose: a running sum stored every iteration (a scan)
REFUSED = {"prefix_sum_rows"}


def corpus_functions() -> list[tuple[str, str]]:
    found = []
    for path in sorted(CORPUS.glob("*.c")):
        for name in re.findall(r"^(?:void|int|uint32_t)\s+(\w+)\(", path.read_text(), re.M):
            found.append((path.name, name))
    return found


FUNCTIONS = corpus_functions()


def test_corpus_is_large_enough_and_mostly_liftable():
    assert len(FUNCTIONS) >= 60
    assert len(REFUSED) / len(FUNCTIONS) <= 0.1


@pytest.mark.parametrize(("file", "name"), [f for f in FUNCTIONS if f[1] not in REFUSED], ids=lambda v: v)
def test_corpus_function_lifts_and_matches_cc(file: str, name: str):
    lift = lift_c(CORPUS / file, name)
    result = differential(lift, trials=2, seed=zlib.crc32(name.encode()) % 1000)
    assert result.held, result.failure


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_corpus_function_outside_the_subset_is_refused_with_its_line(name: str):
    with pytest.raises(LiftError) as e:
        lift_c(CORPUS / "pipelines.c", name)
    assert "pipelines.c:" in str(e.value) and "carried across iterations" in str(e.value)
