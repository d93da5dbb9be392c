"""Failures inside generated code become RuntimeFailure; bad inputs become InputError."""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.errors import InputError, RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Int, UInt
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.buffer import BufferStruct, DimensionStruct
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Allocate, AssertStmt, Block, For, ForType, Load, Store

from tests.codegen.builders import buffer, i32, scalar, var

ROOT = Path(__file__).resolve().parents[2]
F32, I32 = Float(32), Int(32)


def failing_rows_pipeline(chunk: int) -> LoweredPipeline:
    """A parallel loop whose rows >= limit fail an assertion while holding heap storage."""
    y = var("y")
    row = Block(
        [
            Store("tmp", E.Mul(y, i32(3)), i32(0)),
            Store("tmp", y, E.Sub(i32(chunk), i32(1))),
            AssertStmt(
                E.LT(y, var("limit")),
                "row {} failed: value {} is over the limit {} (100% sure)",
                (y, Load(I32, "tmp", i32(0)), var("limit")),
            ),
            Store("out", Load(I32, "tmp", i32(0)), y),
        ]
    )
    body = For("y", i32(0), var("out.extent.0"), ForType.PARALLEL, Allocate("tmp", I32, i32(chunk), False, row))
    return LoweredPipeline("failing_rows", [scalar("limit", I32), buffer("out", I32, 1, True)], body)


def _virtual_memory_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[0]) * 4096


def test_failed_assertion_in_parallel_heap_allocation_frees_and_reports() -> None:
    chunk = 1 << 20  # 4 MiB per row: leaked storage would show in the address space
    fn = compile_pipeline(failing_rows_pipeline(chunk))
    out = np.zeros(64, np.int32)
    fn({"limit": 64}, {"out": out})
    np.testing.assert_array_equal(out, np.arange(64) * 3)
    pattern = re.compile(r"row (\d+) failed: value (\d+) is over the limit 40 \(100% sure\)")
    with pytest.raises(RuntimeFailure):  # warm up: worker threads get their malloc arenas
        fn({"limit": 40}, {"out": out})
    start = _virtual_memory_bytes()
    for _ in range(300):
        with pytest.raises(RuntimeFailure) as info:
            fn({"limit": 40}, {"out": out})
        match = pattern.fullmatch(str(info.value))
        assert match is not None, str(info.value)
        row, value = int(match.group(1)), int(match.group(2))
        assert row >= 40 and value == 3 * row
    growth = _virtual_memory_bytes() - start
    # A leak grows it by >= 4 MiB per call (>= 1.2 GiB in all); malloc arenas take 64 MiB.
    assert growth < 256 << 20, f"address space grew by {growth >> 20} MiB: heap storage leaks on failure"
    fn({"limit": 64}, {"out": out})  # and the pipeline still works afterwards


def test_failed_assertion_message_of_serial_code() -> None:
    x = var("x")
    body = Block(
        [
            AssertStmt(
                E.GE(var("inp.extent.0"), i32(10)), "input `inp` is too small: {} < {}", (var("inp.extent.0"), i32(10))
            ),
            For("x", i32(0), i32(10), ForType.SERIAL, Store("out", Load(UInt(8), "inp", x), x)),
        ]
    )
    fn = compile_pipeline(LoweredPipeline("too_small", [buffer("inp", UInt(8)), buffer("out", UInt(8), 1, True)], body))
    with pytest.raises(RuntimeFailure, match=r"^input `inp` is too small: 4 < 10$"):
        fn({"inp": np.zeros(4, np.uint8)}, {"out": np.zeros(10, np.uint8)})
    out = np.zeros(10, np.uint8)
    fn({"inp": np.arange(10, dtype=np.uint8)}, {"out": out})
    np.testing.assert_array_equal(out, np.arange(10))


def test_malloc_failure_is_an_error_not_a_crash() -> None:
    """Runs in a child process whose address space is limited, so malloc really fails."""
    script = textwrap.dedent(
        """
        import resource, sys
        import numpy as np
        from pixelweave.engine.errors import RuntimeFailure
        from pixelweave.engine.ir import expr as E
        from pixelweave.engine.ir.types import Float, Int
        from pixelweave.engine.lowered import Argument, LoweredPipeline
        from pixelweave.engine.runtime.jit import compile_pipeline
        from pixelweave.engine.stmt import Allocate, Store

        n = E.Variable("n", Int(32))
        body = Allocate("huge", Float(64), n, False, Store("huge", E.Const(Float(64), 1.0), E.Const(Int(32), 0)))
        fn = compile_pipeline(LoweredPipeline("huge_alloc", [Argument("n", "scalar", Int(32))], body))
        fn({"n": 1000})
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))
        try:
            fn({"n": 2**31 - 1})
        except RuntimeFailure as exc:
            print("FAILED:", exc)
            sys.exit(0)
        print("no failure")
        sys.exit(1)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED: out of memory: could not allocate 17179869176 bytes for buffer `huge`" in result.stdout


def _copy_pipeline() -> LoweredPipeline:
    x, y = var("x"), var("y")
    index = E.Add(x, E.Mul(y, var("inp.stride.1")))
    out_index = E.Add(x, E.Mul(y, var("out.stride.1")))
    inner = For(
        "x",
        i32(0),
        var("out.extent.0"),
        ForType.SERIAL,
        Store("out", E.Mul(Load(F32, "inp", index), var("gain", F32)), out_index),
    )
    body = For("y", i32(0), var("out.extent.1"), ForType.SERIAL, inner)
    return LoweredPipeline("copy2d", [buffer("inp", F32, 2), scalar("gain", F32), buffer("out", F32, 2, True)], body)


def test_wrong_inputs_are_clear_python_errors() -> None:
    fn = compile_pipeline(_copy_pipeline())
    good_in, good_out = np.ones((3, 4), np.float32), np.zeros((3, 4), np.float32)
    cases = [
        (
            {"inp": np.ones((3, 4), np.float64), "gain": 1.0},
            {"out": good_out},
            r"input `inp` has element type float32 .* dtype float64",
        ),
        (
            {"inp": np.ones(12, np.float32), "gain": 1.0},
            {"out": good_out},
            r"input `inp` has 2 dimensions, but the array given has 1",
        ),
        ({"inp": good_in, "gain": 1.0}, {"out": np.zeros((3, 4), np.int32)}, r"output `out` has element type float32"),
        ({"inp": good_in}, {"out": good_out}, r"no value given for argument `gain`"),
        ({"inp": good_in, "gain": 1.0}, {}, r"no value given for output `out`"),
        (
            {"inp": good_in, "gain": 1.0, "bogus": 3},
            {"out": good_out},
            r"`bogus` is not an argument of pipeline `copy2d`",
        ),
        ({"inp": [[1.0]], "gain": 1.0}, {"out": good_out}, r"input `inp` needs a NumPy array, got list"),
        ({"inp": good_in, "gain": "2"}, {"out": good_out}, r"parameter `gain` needs a number"),
    ]
    for args, outputs, message in cases:
        with pytest.raises(InputError, match=message):
            fn(args, outputs)
    fn({"inp": good_in, "gain": 2.0}, {"out": good_out})
    np.testing.assert_array_equal(good_out, np.full((3, 4), 2.0, np.float32))


def test_generated_code_checks_descriptors_itself() -> None:
    """The C entry point refuses a descriptor of the wrong type or dimensions (code 3)."""
    fn = compile_pipeline(_copy_pipeline())
    entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p)(fn.entry_address)
    message = ctypes.CFUNCTYPE(ctypes.c_char_p)(fn._library["copy2d_error_message"])
    data = np.zeros((2, 2), np.float32)
    dims = (DimensionStruct * 2)(DimensionStruct(0, 2, 1, 0), DimensionStruct(0, 2, 2, 0))
    good = BufferStruct(data.ctypes.data, 2, 32, 2, 0, ctypes.cast(dims, ctypes.POINTER(DimensionStruct)))
    wrong_type = BufferStruct(data.ctypes.data, 0, 16, 2, 0, ctypes.cast(dims, ctypes.POINTER(DimensionStruct)))
    wrong_dims = BufferStruct(data.ctypes.data, 2, 32, 3, 0, ctypes.cast(dims, ctypes.POINTER(DimensionStruct)))
    assert entry(ctypes.addressof(good), 1.0, ctypes.addressof(good)) == 0
    assert message() == b""
    assert entry(ctypes.addressof(wrong_type), 1.0, ctypes.addressof(good)) == 3
    assert message() == (
        b"buffer `inp` holds int16 elements (type_code 0, type_bits 16), but the pipeline expects float32 "
        b"(type_code 2, type_bits 32)"
    )
    assert entry(ctypes.addressof(good), 1.0, ctypes.addressof(wrong_dims)) == 3
    assert message() == b"buffer `out` has 3 dimensions, but the pipeline expects 2"
    assert entry(None, 1.0, ctypes.addressof(good)) == 3
    assert message() == b"buffer argument `inp` is a NULL pointer"


def test_failures_are_reported_by_one_shared_function_per_process_or_library() -> None:
    """Every check calls the runtime's reporter instead of carrying its own claim and printf
    (most of a small module's IR, and of LLVM's work on it, was error reporting); an
    exported library embeds the reporter with internal linkage."""
    from pixelweave.engine.codegen.llvm import generate_module
    from pixelweave.engine.codegen.target import data_layout, resolve_target

    spec = resolve_target("host")
    jit_ir = generate_module(_copy_pipeline(), triple=spec.triple, datalayout=data_layout(spec)).ir
    assert "declare void @pw_report_error(ptr, ptr, ...)" in jit_ir and "snprintf" not in jit_ir
    assert jit_ir.count("call void (ptr, ptr, ...) @pw_report_error") >= 8  # NULL, type, dims, host, dim x 2 buffers
    assert "cmpxchg" not in jit_ir  # the reporter claims the context
    embedded = generate_module(_copy_pipeline(), triple=spec.triple, datalayout=data_layout(spec), embed_runtime=True)
    assert "define internal void @pw_report_error(" in embedded.ir
    assert "define internal ptr @pw_type_name(" in embedded.ir


def test_concurrent_failures_keep_their_own_messages() -> None:
    """Each call has its own error context: a message never comes from another call."""
    from concurrent.futures import ThreadPoolExecutor

    fn = compile_pipeline(failing_rows_pipeline(64))

    def work(k: int) -> int:
        wrong = 0
        for i in range(200):
            limit = 10 + (7 * k + i) % 50
            try:
                fn({"limit": limit}, {"out": np.zeros(64, np.int32)})
                wrong += 1  # every limit < 64 must fail
            except RuntimeFailure as exc:
                wrong += f"over the limit {limit} " not in str(exc)
        return wrong

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(work, range(4))) == 0
