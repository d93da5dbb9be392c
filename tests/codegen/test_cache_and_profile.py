"""The compile cache (memory and disk, corruption recovery) and profiling builds."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime import jit
from pixelweave.engine.runtime.jit import cache_directory, clear_memory_cache, compile_pipeline
from pixelweave.engine.stmt import Allocate, Block, For, ForType, Load, ProducerConsumer, Store

from tests.codegen.builders import buffer, i32, var

F32 = Float(32)


def two_stage_pipeline(name: str, parallel: bool = False) -> LoweredPipeline:
    """tmp[r] = inp * 3 + r for 200 rows r (produce tmp), out = tmp[199] + 1 (produce out)."""
    x, r = var("x"), var("r")
    n = var("out.extent.0")
    work = E.Add(E.Mul(Load(F32, "inp", x), E.Const(F32, 3.0)), E.Cast(F32, r))
    # Each pass r writes its own row of tmp, so the result does not depend on thread timing.
    row = E.Add(x, E.Mul(r, n))
    produce_tmp = For("r", i32(0), i32(200), ForType.PARALLEL if parallel else ForType.SERIAL,
                      For("x", i32(0), n, ForType.SERIAL, Store("tmp", work, row)))  # fmt: skip
    last_row = E.Add(x, E.Mul(i32(199), n))
    produce_out = For(
        "x", i32(0), n, ForType.SERIAL, Store("out", E.Add(Load(F32, "tmp", last_row), E.Const(F32, 1.0)), x)
    )
    body = Allocate(
        "tmp",
        F32,
        E.Mul(n, i32(200)),
        False,
        Block([ProducerConsumer("tmp", True, produce_tmp), ProducerConsumer("out", True, produce_out)]),
    )
    return LoweredPipeline(name, [buffer("inp", F32), buffer("out", F32, 1, True)], body, ["out", "tmp"])


def _run(fn, n: int = 5000) -> np.ndarray:
    inp = np.linspace(0, 1, n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    fn({"inp": inp}, {"out": out})
    np.testing.assert_array_equal(out, inp * np.float32(3) + np.float32(199) + np.float32(1))
    return out


def test_memory_and_disk_cache_hits(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    lowered = two_stage_pipeline("cached_two_stage")
    first = compile_pipeline(lowered, level="full")
    assert first.cache_hit is None
    assert len(list(tmp_path.glob("*.o"))) >= 1
    second = compile_pipeline(lowered, level="full")
    assert second.cache_hit == "memory"
    assert second.compile_seconds < first.compile_seconds / 3
    clear_memory_cache()
    third = compile_pipeline(lowered, level="full")
    assert third.cache_hit == "disk"
    assert third.compile_seconds < first.compile_seconds
    for fn in (first, second, third):
        _run(fn)
    # Another level, target or profiling build is another entry.
    assert compile_pipeline(lowered, level="fast").cache_hit is None
    assert compile_pipeline(lowered, level="full", cache=False).cache_hit is None


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupted_cache_file_is_recompiled(tmp_path, monkeypatch, damage: str) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    lowered = two_stage_pipeline(f"corrupted_{damage}")
    compile_pipeline(lowered)
    clear_memory_cache()
    key = jit.cache_key(compile_pipeline(lowered).llvm_ir, compile_pipeline(lowered).target, "fast")
    path = tmp_path / f"{key}.o"
    blob = path.read_bytes()
    path.write_bytes({"garbage": b"\x7fELF" + b"\xab" * 500, "truncated": blob[: len(blob) // 2], "empty": b""}[damage])
    clear_memory_cache()
    again = compile_pipeline(lowered)
    assert again.cache_hit is None
    _run(again)
    assert path.read_bytes() == blob  # rewritten
    clear_memory_cache()
    assert compile_pipeline(lowered).cache_hit == "disk"


def test_cache_directory_default_and_override(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_directory() == tmp_path / "elsewhere"
    monkeypatch.delenv("PIXELWEAVE_CACHE_DIR")
    assert cache_directory().parts[-2:] == (".cache", "pixelweave")


@pytest.mark.parametrize("parallel", [False, True])
def test_profile_times_each_produced_func(parallel: bool) -> None:
    fn = compile_pipeline(two_stage_pipeline(f"profiled_{int(parallel)}", parallel), profile=True)
    assert fn.profile and "clock_gettime" in fn.llvm_ir
    _run(fn)
    assert set(fn.last_profile) == {"out", "tmp"}
    assert all(t > 0 for t in fn.last_profile.values()), fn.last_profile
    assert fn.last_profile["tmp"] > fn.last_profile["out"]  # 200 passes against one
    assert fn.last_profile["tmp"] < 10 * fn.last_run_seconds
    plain = compile_pipeline(two_stage_pipeline(f"profiled_{int(parallel)}", parallel))
    assert not plain.profile and plain.last_profile is None
    assert "clock_gettime" not in plain.llvm_ir and "profile_ns" not in plain.llvm_ir


def test_levels_and_targets() -> None:
    lowered = two_stage_pipeline("levels_and_targets")
    for level in ("fast", "full"):
        for target in ("host", "x86-64", "x86-64-v3"):
            fn = compile_pipeline(lowered, level=level, target=target)
            assert fn.compile_seconds > 0 and fn.level == level and fn.target.name == target
            _run(fn)
            assert fn.last_run_seconds > 0
    with pytest.raises(CompileError, match="unknown optimization level `turbo`"):
        compile_pipeline(lowered, level="turbo")
    with pytest.raises(CompileError, match="unknown target `riscv`; legal targets are host, x86-64"):
        compile_pipeline(lowered, target="riscv")


def test_portable_target_the_cpu_cannot_run_is_refused(monkeypatch) -> None:
    from pixelweave.engine.codegen import target

    monkeypatch.setattr(target.llvm, "get_host_cpu_features", lambda: {"avx2": True, "sse4.2": True})
    with pytest.raises(CompileError, match=r"target x86-64-v4 needs CPU features this machine lacks \(.*avx512f"):
        compile_pipeline(two_stage_pipeline("too_new"), target="x86-64-v4")


def test_disk_cache_keeps_the_newest_entries(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit, "DISK_CACHE_ENTRIES", 2)
    for k in range(4):
        compile_pipeline(two_stage_pipeline(f"pruned_{k}"))
    assert len(list(tmp_path.glob("*.o"))) == 2


def test_the_object_cache_key_names_the_backend_options(monkeypatch) -> None:
    from pixelweave.engine.codegen.target import resolve_target

    spec = resolve_target("host")
    ir = "define void @f() {\n  ret void\n}\n"
    with_options = jit.cache_key(ir, spec, "full")
    monkeypatch.setattr(jit, "BACKEND_OPTIONS", ())
    assert jit.cache_key(ir, spec, "full") != with_options  # objects compiled under other options are not reused


_STENCIL_PROGRAM = """
import importlib, sys
target = importlib.import_module("pixelweave.engine.codegen.target")
if sys.argv[1] == "default":
    target.BACKEND_OPTIONS = ()  # LLVM's own code generation pipeline, loop strength reduction included
import numpy as np
import pixelweave as pw
x, y, c, xi, yi = (pw.Var(n) for n in ("x", "y", "c", "xi", "yi"))
inp = pw.ImageParam(pw.UInt(16), 3, "inp")
src = pw.BoundaryConditions.repeat_edge(inp)
rows = pw.Func("rows")
rows[x, y, c] = pw.f32(src[x - 1, y, c]) + 2 * pw.f32(src[x, y, c]) + pw.f32(src[x + 2, y, c])
out = pw.Func("out")
out[x, y, c] = pw.u16(pw.clamp((rows[x, y - 1, c] + rows[x, y + 1, c]) * 0.125, 0, 65535))
out.tile(x, y, xi, yi, 16, 8).vectorize(xi, 8).parallel(y)
rows.compute_at(out, x).vectorize(x, 8)
image = np.random.default_rng(3).integers(0, 65536, (3, 67, 101)).astype(np.uint16)
result = pw.Pipeline(out).compile(level=sys.argv[2])([101, 67, 3], {"inp": image})
sys.stdout.write(result.tobytes().hex())
"""


@pytest.mark.parametrize("level", ["fast", "full"])
def test_code_generated_without_loop_strength_reduction_computes_the_same_bytes(tmp_path, monkeypatch, level) -> None:
    import subprocess
    import sys

    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    outputs = []
    for options in ("default", "pixelweave"):
        done = subprocess.run(
            [sys.executable, "-c", _STENCIL_PROGRAM, options, level],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        outputs.append(done.stdout)
    assert len(outputs[0]) == 2 * 2 * 101 * 67 * 3 and outputs[0] == outputs[1]
