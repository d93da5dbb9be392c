"""Produce bodies outlined into functions of their own (engine/codegen/llvm.py
`_outlined_produce`): whatever the shape around them (compute_at inside parallel loops,
nested productions, specializations, heap storage kept between calls, checked and profiled
code), the image is the reference evaluator's, and a failure inside an outlined body
raises the same exception with the same message as inline code, releasing its storage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pixelweave.engine.codegen import llvm
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.errors import RuntimeFailure
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower import lower
from pixelweave.engine.lowered import LoweredPipeline
from pixelweave.engine.runtime.jit import compile_pipeline
from pixelweave.engine.stmt import Allocate, AssertStmt, Block, For, ForType, Load, ProducerConsumer, Store

import pixelweave as pw
from tests.codegen.builders import buffer, i32, scalar, var

WIDTH, HEIGHT = 67, 45  # not multiples of the vector widths or split factors: tails run
I32 = Int(32)


@pytest.fixture
def outline_every_produce(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every produce body of every function outlined, however small the pipeline."""
    monkeypatch.setattr(llvm, "OUTLINE_MIN_PIPELINE_NODES", 0)
    monkeypatch.setattr(llvm, "OUTLINE_DOMINANT_SHARE", 0.0)
    monkeypatch.setattr(llvm, "OUTLINE_MIN_SHARE", 0.0)
    monkeypatch.setattr(llvm, "OUTLINE_MIN_NODES", 1)


def module_ir(lowered: LoweredPipeline, **options: bool) -> str:
    spec = resolve_target("host")
    return generate_module(lowered, triple=spec.triple, datalayout=data_layout(spec), **options).ir


def outlined_functions(ir: str) -> list[str]:
    return [
        line.split("@", 1)[1].split("(", 1)[0]
        for line in ir.split("\n")
        if line.startswith("define ") and " noinline " in line
    ]


def stencil(f: pw.Func, name: str, weight: float) -> pw.Func:
    x, y = pw.Var("x"), pw.Var("y")
    g = pw.Func(name)
    g[x, y] = (f[x - 1, y] + f[x + 1, y + 1]) * weight + f[x, y - 1]
    return g


def strips_with_compute_at() -> pw.Pipeline:
    """Two stages computed per strip of a parallel loop, the first at the second."""
    x, y, yo, yi = pw.Var("x"), pw.Var("y"), pw.Var("yo"), pw.Var("yi")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    a = stencil(pw.BoundaryConditions.repeat_edge(inp), "a", 0.5)
    b = stencil(a, "b", 0.25)
    out = stencil(b, "out", 0.75)
    out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 8)
    b.compute_at(out, yo).vectorize(x, 8)
    a.compute_at(b, y).vectorize(x, 4)
    return pw.Pipeline(out)


def root_stages_with_update() -> pw.Pipeline:
    """Heap storage of root stages (kept between calls), an update, a serial output."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    a = stencil(pw.BoundaryConditions.mirror_interior(inp), "a", 0.5)
    a[x, y] = a[x, y] * 2.0 - 1.0
    b = stencil(a, "b", 0.125)
    out = stencil(b, "out", 1.5)
    a.compute_root().parallel(y).vectorize(x, 8)
    b.compute_root()
    out.vectorize(x, 4)
    return pw.Pipeline(out)


def specialized() -> pw.Pipeline:
    """A parallel output specialized on a Param, with a stage computed inside each branch."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    gain = pw.Param(pw.Float(32), "gain")
    a = stencil(pw.BoundaryConditions.repeat_edge(inp), "a", 0.5)
    out = pw.Func("out")
    out[x, y] = a[x, y] * gain + a[x + 1, y]
    out.parallel(y).specialize(gain > 1.0).vectorize(x, 8)
    a.compute_at(out, y)
    return pw.Pipeline(out)


SHAPES = {"strips": strips_with_compute_at, "root_update": root_stages_with_update, "specialized": specialized}


def run(fn, image: np.ndarray, **scalars: float) -> np.ndarray:
    out = np.zeros((HEIGHT, WIDTH), np.float32)
    fn({"input": image, **scalars}, {fn.arguments[-1].name: out})
    return out


@pytest.mark.parametrize("options", [{}, {"checked": True}, {"profile": True}], ids=["plain", "checked", "profile"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_outlined_produce_bodies_give_the_reference_image(
    outline_every_produce: None, rng: np.random.Generator, shape: str, options: dict[str, bool]
) -> None:
    pipeline = SHAPES[shape]()
    lowered = lower(pipeline).lowered
    outlined = outlined_functions(module_ir(lowered, **options))
    assert len(outlined) >= 2 and all(".produce." in name for name in outlined)
    fn = compile_pipeline(lowered, level="full", cache=False, **options)
    image = rng.random((HEIGHT, WIDTH), dtype=np.float32)
    for gain in (0.5, 2.0) if shape == "specialized" else (None,):
        scalars = {} if gain is None else {"gain": gain}
        want = pipeline.realize_reference([WIDTH, HEIGHT], {"input": image, **scalars})
        for _ in range(2):  # storage kept between calls is reused by the second
            np.testing.assert_allclose(run(fn, image, **scalars), want, rtol=1e-6, atol=1e-6)


def test_only_large_bodies_of_large_pipelines_are_outlined(monkeypatch: pytest.MonkeyPatch) -> None:
    lowered = lower(strips_with_compute_at()).lowered
    assert outlined_functions(module_ir(lowered)) == []  # under OUTLINE_MIN_PIPELINE_NODES
    monkeypatch.setattr(llvm, "OUTLINE_MIN_PIPELINE_NODES", 0)
    # b's production holds a's (computed per row of b) and most of the parallel loop's body
    assert sorted(outlined_functions(module_ir(lowered))) == ["pipeline.produce.a", "pipeline.produce.b"]
    monkeypatch.setattr(llvm, "OUTLINE_MIN_NODES", 10**6)
    assert outlined_functions(module_ir(lowered)) == []


# ------------------------------------------------------------------------------ failures

CHUNK = 1 << 20  # 4 MiB per allocation: a leak would show in the address space
ROWS = 4


def failing_pipeline(parallel: bool) -> LoweredPipeline:
    """out[y] = 41 + y + 1 for each row y, produced through storage `inner` inside storage
    `outer`; the production of row `which` fails an assertion that reports a stored value."""
    y = var("y")
    produce = ProducerConsumer(
        "inner",
        True,
        Allocate(
            "inner",
            I32,
            i32(CHUNK),
            False,
            Block(
                [
                    Store("inner", E.Add(Load(I32, "outer", i32(0)), E.Add(y, i32(1))), i32(0)),
                    Store("inner", i32(0), i32(CHUNK - 1)),
                    AssertStmt(E.NE(y, var("which")), "row {} failed holding {}", (y, Load(I32, "inner", i32(0)))),
                    Store("out", Load(I32, "inner", i32(0)), y),
                ]
            ),
        ),
    )
    loop = For("y", i32(0), i32(ROWS), ForType.PARALLEL if parallel else ForType.SERIAL, produce)
    body = Block([Store("outer", i32(41), i32(0)), Store("outer", i32(0), i32(CHUNK - 1)), loop])
    return LoweredPipeline(
        "failing",
        [scalar("which", I32), buffer("out", I32, 1, True)],
        Allocate("outer", I32, i32(CHUNK), False, body),
    )


def _virtual_memory_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[0]) * 4096


def _failure_message(fn, which: int) -> str:
    out = np.zeros(ROWS, np.int32)
    with pytest.raises(RuntimeFailure) as failure:
        fn({"which": which}, {"out": out})
    return str(failure.value)


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_failure_inside_an_outlined_body_raises_as_inline_and_frees_storage(
    monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    inline = compile_pipeline(failing_pipeline(parallel), cache=False)
    monkeypatch.setattr(llvm, "OUTLINE_MIN_PIPELINE_NODES", 0)
    monkeypatch.setattr(llvm, "OUTLINE_DOMINANT_SHARE", 0.0)
    monkeypatch.setattr(llvm, "OUTLINE_MIN_NODES", 1)
    assert outlined_functions(module_ir(failing_pipeline(parallel))) == ["failing.produce.inner"]
    outlined = compile_pipeline(failing_pipeline(parallel), cache=False)
    out = np.zeros(ROWS, np.int32)
    outlined({"which": -1}, {"out": out})
    np.testing.assert_array_equal(out, 42 + np.arange(ROWS))
    for which in (0, ROWS - 1):
        message = _failure_message(outlined, which)
        assert f"row {which} failed holding {42 + which}" in message
        assert message == _failure_message(inline, which)
    start = _virtual_memory_bytes()
    for _ in range(100):
        _failure_message(outlined, ROWS - 1)
    assert _virtual_memory_bytes() - start < 50 * CHUNK  # 200 leaked chunks would be 800 MiB
