"""Level "full" skips the LLVM passes that find nothing in lowered IR (engine/codegen/target.py
PASSES_THAT_FIND_NOTHING, through LLVM's pass gate) and runs the -O2 pipeline. The skipped
passes are really skipped (a loop LLVM's loop-idiom pass would have turned into a memset
stays a loop), code compiled that way computes exact results at sizes with tails, and the
object cache's key tells pipelines apart."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
from pixelweave.engine.codegen import target
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime import jit
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import For, ForType, Store

from tests.codegen.builders import buffer, i32, var


def zero_fill(n: int) -> LoweredPipeline:
    """out[x] = 0 for x in [0, n): the loop LLVM's loop-idiom pass recognizes as a memset."""
    x = var("x")
    body = For("x", i32(0), i32(n), ForType.SERIAL, Store("out", E.Const(Int(32), 0), x))
    return LoweredPipeline("zero_fill", [buffer("out", Int(32), 1, True)], body)


def optimized_ir(lowered: LoweredPipeline) -> str:
    spec = target.resolve_target("host")
    ir = generate_module(lowered, triple=spec.triple, datalayout=target.data_layout(spec)).ir
    module = llvm.parse_assembly(ir, context=llvm.create_context())
    module.triple = spec.triple
    target.optimize_module(module, target.create_target_machine(spec, "full"), "full")
    return str(module)


def test_loop_idiom_recognition_is_skipped_at_full_level() -> None:
    assert "loop-idiom" in target.PASSES_THAT_FIND_NOTHING
    ir = optimized_ir(zero_fill(1000))
    # (the module's own memset of its context block has another length)
    memset = re.search(r"call void @llvm\.memset\S*\(ptr [^\n]*, i8 0, i64 4000,", ir)
    if tuple(llvm.llvm_version_info) < target.PASS_GATE_LLVM:  # an older LLVM: no gate, the pass runs
        assert memset and not any(o.startswith("-opt-disable") for o in target.BACKEND_OPTIONS)
        return
    assert not memset, "LLVM's loop-idiom pass ran: the pass gate did not skip it"
    assert "store <" in ir, "the loop vectorizer still makes the fill vector code"


def test_zero_fill_at_full_level_writes_every_element() -> None:
    n = 1003  # not a multiple of any vector width
    compiled = compile_pipeline(zero_fill(n), level="full", cache=False)
    out = np.full(n, -7, dtype=np.int32)
    compiled({}, {"out": out})
    np.testing.assert_array_equal(out, np.zeros(n, dtype=np.int32))


def test_object_cache_key_names_the_pipeline(monkeypatch) -> None:
    spec = target.resolve_target("host")
    key = jit.cache_key("; ir", spec, "full")
    monkeypatch.setattr(jit, "FULL_PIPELINE", "O3 loop-vectorize slp-vectorize no-interleave no-unroll")
    assert jit.cache_key("; ir", spec, "full") != key
