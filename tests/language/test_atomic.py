"""Stage.atomic() against Halide 21: reductions whose reduction variables run in parallel
with atomic read-modify-writes compute what Halide and the reference compute, and what
cannot be made atomic is refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.schedule import Stage

import pixelweave as pw
from tests.language.halide_compare import check


def _histogram_like(op: str, element: str, override: bool = False):
    def build(m):
        t = {"i32": m.Int(32), "f32": m.Float(32), "u16": m.UInt(16)}[element]
        x, y = m.Var("x"), m.Var("y")
        src = m.Func("src")
        src[x, y] = m.cast(t, (x * 37 + y * 11) % 23)
        src.compute_root()
        r = m.RDom([(0, 64), (0, 48)])
        h = m.Func("h")
        h[x] = m.cast(t, 100 if op == "min" else 0)
        k = m.i32(src[r.x, r.y]) % 10
        v = src[r.x, r.y]
        if op == "add":
            h[k] += v
        elif op == "sub":
            h[k] -= v
        elif op == "min":
            h[k] = m.min(h[k], v + m.cast(t, r.y % 7))
        else:
            h[k] = m.max(v * m.cast(t, r.y % 5), h[k])
        h.compute_root().update(0).atomic(override).parallel(r.y)
        return {"out": h}

    return build


@pytest.mark.parametrize(
    ("op", "element"),
    [("add", "i32"), ("add", "f32"), ("add", "u16"), ("min", "i32"), ("min", "f32"), ("max", "i32"), ("max", "f32")],
)
def test_parallel_atomic_reductions_match_halide(op, element):
    check(_histogram_like(op, element), [10])


def test_a_subtraction_runs_atomically_only_when_told_to_skip_the_associativity_test():
    with pytest.raises(ScheduleError, match=r"its operation \(sub\) is not associative and commutative"):
        _histogram_like("sub", "i32")(pw)
    check(_histogram_like("sub", "i32", override=True), [10])


def test_the_stores_are_atomic_read_modify_writes(tmp_path):
    out = _histogram_like("add", "f32")(pw)["out"]
    path = tmp_path / "h.ll"
    out.compile_to_llvm_assembly(str(path), [])
    assert "atomicrmw fadd ptr %h.addr" in path.read_text()
    assert "parallel r" in pw.Pipeline(out).loop_nest()
    from pixelweave.engine.autoschedule.directives import current_schedule_text

    assert ".update(0).atomic().parallel(" in current_schedule_text(pw.Pipeline(out))


def test_many_threads_updating_few_points_lose_no_update():
    x = pw.Var("x")
    im = pw.ImageParam(pw.UInt(8), 2, "im")
    r = pw.RDom([(0, im.width()), (0, im.height())])
    hist = pw.Func("hist")
    hist[x] = 0
    hist[pw.i32(im[r.x, r.y]) % 4] += 1
    hist.compute_root().update(0).atomic().parallel(r.y, 4)
    image = np.random.default_rng(1).integers(0, 256, (512, 384), dtype=np.uint8)
    expected = np.bincount(image.ravel() % 4, minlength=4)
    fn = pw.Pipeline(hist).compile()
    for _ in range(5):
        np.testing.assert_array_equal(fn([4], {"im": image}), expected)


def test_what_cannot_be_atomic_is_refused_with_the_reason():
    x = pw.Var("x")
    r = pw.RDom([(0, 8)])
    f = pw.Func("f")
    f[x] = 0
    f[x] = f[x] * (r.x + 1)
    with pytest.raises(ScheduleError, match=r"needs an update of the form f\[\.\.\.\] = f\[\.\.\.\] op e"):
        f.update(0).atomic()
    with pytest.raises(ScheduleError, match="applies to update definitions"):
        Stage(f, 0).atomic()
    g = pw.Func("g")
    g[x] = 0
    g[r.x % 3] += r.x
    with pytest.raises(ScheduleError, match="after atomic\\(\\)"):
        g.update(0).parallel(r.x)
    g.update(0).atomic()
    with pytest.raises(ScheduleError, match="its stores are atomic"):
        g.update(0).vectorize(r.x, 4)
    assert not g.update(0).schedule.splits  # refused before splitting anything
    t = pw.Func("t")
    t[x] = (0, 0)
    t[r.x % 2] = (t[r.x % 2][0] + 1, t[r.x % 2][1] + r.x)
    with pytest.raises(ScheduleError, match="Tuple of values is not supported"):
        t.update(0).atomic()
    v = pw.Func("v")
    v[x] = 0
    v[r.x % 3] += r.x
    v.update(0).atomic().parallel(r.x)
    with pytest.raises(ScheduleError, match="atomic\\(\\), which Pixelweave compiles for CPU targets only"):
        pw.Pipeline(v).compile(target="opencl")
