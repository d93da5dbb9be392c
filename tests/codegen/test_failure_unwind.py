"""Failure exits share one chain of release blocks: with nested heap storage and several
failure points, each allocation is released once per chain (not once per failure point),
every failure still frees everything live, and the right message comes back."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Allocate, AssertStmt, Block, Load, Store

from tests.codegen.builders import buffer, i32, scalar, var

I32 = Int(32)
CHUNK = 1 << 20  # 4 MiB per allocation: a leak would show in the address space
CHECKS = 6


def nested_pipeline() -> LoweredPipeline:
    """outer and inner heap storage; CHECKS assertions while both are live, the k-th
    failing when `which` == k."""
    fail = var("which")
    checks = [
        AssertStmt(E.NE(fail, i32(k)), f"check {k} failed with {{}}", (Load(I32, "inner", i32(0)),))
        for k in range(CHECKS)
    ]
    inner_body = Block(
        [
            Store("inner", E.Add(Load(I32, "outer", i32(0)), i32(1)), i32(0)),
            Store("inner", i32(0), i32(CHUNK - 1)),
            *checks,
            Store("out", Load(I32, "inner", i32(0)), i32(0)),
        ]
    )
    body = Block(
        [
            Store("outer", i32(41), i32(0)),
            Store("outer", i32(0), i32(CHUNK - 1)),
            Allocate("inner", I32, i32(CHUNK), False, inner_body),
        ]
    )
    return LoweredPipeline(
        "nested", [scalar("which", I32), buffer("out", I32, 1, True)], Allocate("outer", I32, i32(CHUNK), False, body)
    )


def _virtual_memory_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[0]) * 4096


def test_failure_points_share_the_release_code():
    spec = resolve_target("host")
    ir = generate_module(nested_pipeline(), triple=spec.triple, datalayout=data_layout(spec)).ir
    run = ir.split("@nested.run(", 1)[1].split("\n}\n", 1)[0]
    # Each allocation is released on the normal path and once on the shared failure chain,
    # whatever the number of failure points.
    assert len(re.findall(r"call void @free\(ptr %inner\)", run)) == 2
    assert len(re.findall(r"call void @free\(ptr %outer\)", run)) == 2


@pytest.mark.parametrize("failing", [0, CHECKS - 1])
def test_every_failure_point_frees_all_live_storage(failing):
    fn = compile_pipeline(nested_pipeline(), cache=False)
    out = np.zeros(1, np.int32)
    fn({"which": -1}, {"out": out})
    assert out[0] == 42
    with pytest.raises(RuntimeFailure):
        fn({"which": failing}, {"out": out})
    start = _virtual_memory_bytes()
    for _ in range(100):
        with pytest.raises(RuntimeFailure, match=rf"check {failing} failed with 42"):
            fn({"which": failing}, {"out": out})
    growth = _virtual_memory_bytes() - start
    assert growth < 256 << 20, f"address space grew by {growth >> 20} MiB: storage leaks on failure"
    fn({"which": -1}, {"out": out})
    assert out[0] == 42
