"""An assertion's message values that are subtrees of its condition (a storage-size check
reports the size and extents it compared) are computed once, by the test: the failure
block reuses them instead of computing them again, and the message still reports them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import AssertStmt, Block, For, ForType, Store

from tests.codegen.builders import buffer, i32, scalar, var

I64 = Int(64)


def size_check_pipeline() -> LoweredPipeline:
    """Asserts (a*b + c) * 4 in 64 bits is at most a limit, reporting it and a*b + c."""
    a, b, c = (E.Cast(I64, var(n)) for n in ("a", "b", "c"))
    extent = E.Add(E.Mul(a, b), c)
    size = E.Mul(extent, E.Const(I64, 4))
    check = AssertStmt(E.LE(size, E.Const(I64, 1000)), "storage of {} bytes ({} elements) is too large", (size, extent))
    x = var("x")
    body = Block([check, For("x", i32(0), var("out.extent.0"), ForType.SERIAL, Store("out", x, x))])
    args = [scalar("a", Int(32)), scalar("b", Int(32)), scalar("c", Int(32)), buffer("out", Int(32), 1, True)]
    return LoweredPipeline("size_check", args, body)


def failure_block(ir: str) -> list[str]:
    lines = ir.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"assert_failed(\.\d+)?:", line))
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"[\w.]+:$", lines[i]) or lines[i] == "}")
    return lines[start + 1 : end]


def test_failure_block_reuses_the_values_the_condition_computed() -> None:
    spec = resolve_target("host")
    ir = generate_module(size_check_pipeline(), triple=spec.triple, datalayout=data_layout(spec)).ir
    block = failure_block(ir)
    arithmetic = [line for line in block if re.search(r"= (mul|add|sext) ", line)]
    assert arithmetic == [], f"the failure block computes the message's values again: {arithmetic}"
    assert any("pw_report_error" in line for line in block)


def test_the_message_reports_the_values_the_condition_tested() -> None:
    fn = compile_pipeline(size_check_pipeline(), cache=False)
    out = np.zeros(5, np.int32)
    with pytest.raises(RuntimeFailure, match=r"^storage of 1212 bytes \(303 elements\) is too large$"):
        fn({"a": 10, "b": 30, "c": 3}, {"out": out})
    fn({"a": 10, "b": 20, "c": 3}, {"out": out})  # 892 bytes: within the limit
    np.testing.assert_array_equal(out, np.arange(5))
