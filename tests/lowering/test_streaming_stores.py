"""Streaming stores (engine/lower/streaming_stores.py, engine/codegen/llvm_streaming_store.py):
which stores are marked, the fences that order them, and that a marked pipeline computes
the reference's image whether its output is large or small, aligned or not."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.codegen import target as T
from pixelweave.engine.codegen.llvm import generate_module
from pixelweave.engine.lower import lower
from pixelweave.engine.lower.streaming_stores import STREAMING_MIN_BYTES

import pixelweave as pw


def gradient(vector: int = 16, parallel: bool = True, kind: pw.Type | None = None) -> pw.Func:
    """A two-stage pipeline: `mid` an intermediate, `out` the output, both vectorized."""
    x, y, yi = pw.Var("x"), pw.Var("y"), pw.Var("yi")
    inp = pw.ImageParam(kind or pw.Float(32), 2, "input")
    mid, out = pw.Func("mid"), pw.Func("out")
    mid[x, y] = inp[x, y] + inp[x + 1, y]
    out[x, y] = mid[x, y] - mid[x, y + 1]
    out.split(y, y, yi, 8).vectorize(x, vector)
    if parallel:
        out.parallel(y)
    mid.compute_at(out, yi).vectorize(x, vector)
    return out


def stmt_of(f: pw.Func) -> str:
    return pw.Pipeline(f).lowered_stmt()


def stores_to(stmt: str, buffer: str) -> list[str]:
    return [line.strip() for line in stmt.splitlines() if line.strip().startswith(f"{buffer}[")]


def test_the_output_vector_stores_stream_and_intermediates_do_not():
    stmt = stmt_of(gradient())
    assert stmt.splitlines()[0].startswith("let out.streaming = ")
    assert str(STREAMING_MIN_BYTES) in stmt.splitlines()[0]
    outs, mids = stores_to(stmt, "out"), stores_to(stmt, "mid")
    assert outs and all(line.endswith("(streaming if out.streaming)") for line in outs)
    assert mids and not any("streaming" in line for line in mids)


def test_a_fence_ends_each_parallel_iteration_and_the_statement():
    lines = stmt_of(gradient()).splitlines()
    fences = [k for k, line in enumerate(lines) if "streaming_store_fence()" in line]
    assert len(fences) == 2
    assert lines[-1].strip() == "streaming_store_fence()"
    assert lines[fences[0] + 1].strip() == "}"  # the last statement of the parallel body
    serial = stmt_of(gradient(parallel=False)).splitlines()
    assert sum("streaming_store_fence()" in line for line in serial) == 1


@pytest.mark.parametrize(
    "why, build",
    [
        ("scalar stores", lambda: gradient(vector=1)),
        ("vectors narrower than 16 bytes", lambda: gradient(vector=8, kind=pw.UInt(8))),
    ],
)
def test_stores_that_cannot_stream_are_left_alone(why, build):
    stmt = stmt_of(build())
    assert "streaming" not in stmt, why


def test_an_output_the_pipeline_reads_back_is_left_alone():
    x, y = pw.Var("x"), pw.Var("y")
    r = pw.RDom([(0, 3)])
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    out = pw.Func("out")
    out[x, y] = inp[x, y]
    out[x, y] = out[x, y] + inp[x + r.x, y]  # the update loads out
    out.vectorize(x, 16)
    out.update(0).vectorize(x, 16)
    assert "streaming" not in stmt_of(out)


def test_the_opencl_statement_has_no_streaming_stores():
    x, y, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xi"), pw.Var("yi")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    out = pw.Func("out")
    out[x, y] = inp[x, y] * 2
    out.gpu_tile(x, y, xi, yi, 16, 16)
    assert "streaming" not in pw.Pipeline(out).lowered_stmt("opencl")


def test_the_backend_tests_alignment_and_fences_on_x86():
    lowered = lower(pw.Pipeline(gradient()))
    spec = T.resolve_target("x86-64-v3")
    ir = generate_module(lowered.lowered, triple=spec.triple, datalayout=T.data_layout(spec), features=spec.features).ir
    assert "!nontemporal" in ir and "align 64, !nontemporal" in ir  # 16 floats: one cache line
    assert "stream.aligned" in ir
    assert ir.count("call void @llvm.x86.sse.sfence()") == 2
    aarch64 = generate_module(lowered.lowered, triple="aarch64-unknown-linux-gnu", datalayout="").ir
    assert "nontemporal" not in aarch64 and "sfence" not in aarch64


def rows_for(bytes_wanted: int, width: int) -> int:
    return bytes_wanted // (4 * width) + 1


@pytest.mark.parametrize("large", [False, True], ids=["small output", "large output"])
@pytest.mark.parametrize("offset", [0, 1, 5], ids=["aligned", "1 element off", "5 elements off"])
def test_streamed_output_equals_the_reference(large, offset):
    width = 1000  # rows of 4000 bytes: most rows start off a 64-byte line
    height = rows_for(STREAMING_MIN_BYTES, width) if large else 24
    rng = np.random.default_rng(offset)
    image = rng.random((height + 1, width + 1), dtype=np.float32)
    pipeline = pw.Pipeline(gradient())
    backing = np.full((height, width + 8), np.nan, np.float32)
    out = backing[:, offset : offset + width]
    result = pipeline.compile()([width, height], {"input": image}, out=out)
    expected = pipeline.realize_reference([width, height], {"input": image})
    np.testing.assert_array_equal(result, expected)
    assert np.isnan(backing[:, :offset]).all() and np.isnan(backing[:, offset + width :]).all()


def shifted_split() -> list[pw.Func]:
    """A split whose last vector of a row is shifted inwards (over elements streamed before)."""
    x, y, xi = pw.Var("x"), pw.Var("y"), pw.Var("xi")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    out = pw.Func("out")
    out[x, y] = inp[x, y] + inp[x + 1, y + 1]
    out.split(x, x, xi, 16, pw.TailStrategy.SHIFT_INWARDS).vectorize(xi).parallel(y)
    return [out]


def two_outputs() -> list[pw.Func]:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    first, second = pw.Func("first"), pw.Func("second")
    first[x, y] = inp[x, y] * 2
    second[x, y] = inp[x + 1, y] - inp[x, y]
    for f in (first, second):
        f.vectorize(x, 8).parallel(y)
    return [first, second]


@pytest.mark.parametrize("build", [shifted_split, two_outputs], ids=["shifted split", "two outputs"])
def test_large_outputs_of_other_shapes_equal_the_reference(build):
    width = 1003  # not a multiple of the vector: the last vector of a row is shifted
    height = rows_for(STREAMING_MIN_BYTES, width)
    image = np.random.default_rng(7).random((height + 1, width + 1), dtype=np.float32)
    outputs = build()
    pipeline = pw.Pipeline(outputs)
    stmt = pipeline.lowered_stmt()
    for f in outputs:
        assert f"(streaming if {f.name()}.streaming)" in stmt
    result = pipeline.compile()([width, height], {"input": image})
    expected = pipeline.realize_reference([width, height], {"input": image})
    if len(outputs) == 1:
        result, expected = [result], [expected]
    for ours, theirs in zip(result, expected, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def tuple_output() -> list[pw.Func]:
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    out = pw.Func("out")
    out[x, y] = (inp[x, y] * 2, inp[x + 1, y] - inp[x, y])
    out.vectorize(x, 8).parallel(y)
    return [out]


def test_an_output_copied_from_scratch_is_copied_in_vectors_that_stream():
    """A Tuple output is computed into scratch and copied into one buffer per value (see
    engine/lower/context.py): the copies run rows in parallel and guarded vectors, whose
    stores stream like any output's."""
    pipeline = pw.Pipeline(tuple_output())
    nest = pipeline.loop_nest()
    for name in ("out.0", "out.1"):
        copy = nest[nest.index(f"produce {name}:") :]
        assert "parallel y:" in copy and "vectorized x.v0 in [0, 15]:" in copy
        assert f"(streaming if {name}.streaming)" in pipeline.lowered_stmt()
    width, height = 1003, rows_for(STREAMING_MIN_BYTES, 1003)
    image = np.random.default_rng(5).random((height + 1, width + 1), dtype=np.float32)
    ours = pipeline.compile()([width, height], {"input": image})
    expected = pipeline.realize_reference([width, height], {"input": image})
    for a, b in zip(ours, expected, strict=True):
        np.testing.assert_array_equal(a, b)
