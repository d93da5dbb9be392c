"""A module whose one parallel loop's body holds most of the code splits once its produce
bodies are outlined (engine/codegen/llvm.py): the parts balance, one compiles in the worker,
and the image is the reference's; with the worker off it compiles whole, the same image."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.codegen import llvm
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.codegen.module_split import split_module
from pixelweave.engine.codegen.target import data_layout, resolve_target
from pixelweave.engine.lower import lower
from pixelweave.engine.runtime import compile_worker
from pixelweave.engine.runtime.jit import compile_pipeline

import pixelweave as pw

WIDTH, HEIGHT = 67, 45  # not multiples of the vector width or the strip height: tails run


def strips_pipeline(stages: int = 3) -> pw.Pipeline:
    """3x3 stencils, all but the last computed per strip of the last's parallel loop."""
    x, y, yo, yi = pw.Var("x"), pw.Var("y"), pw.Var("yo"), pw.Var("yi")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    f = pw.BoundaryConditions.repeat_edge(inp)
    funcs = []
    for i in range(stages):
        g = pw.Func(f"stage{i}")
        g[x, y] = sum(
            f[x + dx, y + dy] * pw.f32(0.125 * (3 * dy + dx + 5) + i) for dx in (-1, 0, 1) for dy in (-1, 0, 1)
        )
        funcs.append(g)
        f = g
    out = funcs[-1]
    out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
    for g in funcs[:-1]:
        g.compute_at(out, yo).vectorize(x, 8)
    return pw.Pipeline(out)


def module_ir(pipeline: pw.Pipeline) -> str:
    spec = resolve_target("host")
    return generate_module(lower(pipeline).lowered, triple=spec.triple, datalayout=data_layout(spec)).ir


def run(fn, image: np.ndarray) -> np.ndarray:
    out = np.zeros((HEIGHT, WIDTH), np.float32)
    fn({"input": image}, {fn.arguments[-1].name: out})
    return out


def test_outlined_produce_bodies_make_the_module_split_in_balanced_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = strips_pipeline()
    parts = split_module(module_ir(pipeline))
    assert parts is not None and len(parts) == 2
    # each part holds an outlined production; the parallel loop's body is in one of them
    assert all(".produce.stage" in text for text in parts)
    assert sum(".par_for." in text.split("\ndefine ", 1)[1] for text in parts) >= 1
    lines = [text.count("\n") for text in parts]
    assert min(lines) > 0.2 * sum(lines)  # (balanced by estimated LLVM work: branches weigh more)
    monkeypatch.setattr(llvm, "OUTLINE_MIN_PIPELINE_NODES", 10**9)
    assert split_module(module_ir(pipeline)) is None  # whole, the loop's body dominates


@pytest.mark.parametrize("worker_on", [True, False], ids=["worker", "no_worker"])
def test_outlined_module_compiles_in_two_processes_or_whole(
    monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator, worker_on: bool
) -> None:
    pipeline = strips_pipeline()
    image = rng.random((HEIGHT, WIDTH), dtype=np.float32)
    want = pipeline.realize_reference([WIDTH, HEIGHT], {"input": image})
    monkeypatch.setenv(compile_worker.WORKER_ENV, "1" if worker_on else "0")
    monkeypatch.setattr(compile_worker, "MAX_WORKER_FAILURES", 10**6)
    if worker_on:
        assert compile_worker.start_compile_worker(wait_seconds=60)
    try:
        jobs = compile_worker.worker_statistics()["jobs"]
        fn = compile_pipeline(lower(pipeline).lowered, level="full", cache=False)
        objects = compile_worker.unbundle_objects(fn.native_code().object_code)
        assert len(objects) == (2 if worker_on else 1)
        assert compile_worker.worker_statistics()["jobs"] == jobs + (1 if worker_on else 0)
        for _ in range(2):
            np.testing.assert_allclose(run(fn, image), want, rtol=1e-6, atol=1e-6)
    finally:
        compile_worker.stop_compile_worker()
