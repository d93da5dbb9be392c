"""Func.in_, ImageParam.in_ and Func.clone_in against Halide 21: the same programs and
schedules computed by both, which consumer calls which wrapper, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import CompileError, ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk

import pixelweave as pw
from tests.language.halide_compare import assert_same, check


def _callees(f) -> set[str]:
    """The names of the Funcs and images f's definitions call."""
    names = set()
    for d in [f.definition(), *f.updates()]:
        for e in (*d.all_values(), *d.args):
            for n in walk(e):
                if isinstance(n, E.Call) and n.call_kind in ("func", "image") and n.target is not f:
                    names.add(n.target.name())
    return names


def _stencil(m):
    x, y = m.Var("x"), m.Var("y")
    f = m.Func("f")
    f[x, y] = (x * 7 + y * 13) % 31
    g = m.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y] * 2 + f[x, y + 1]
    h = m.Func("h")
    h[x, y] = g[x, y] - f[x + 2, y]
    return {"f": f, "g": g, "h": h, "out": h, "x": x, "y": y}


def _wrapped_in_g(m):
    funcs = _stencil(m)
    f, g, h, x, y = (funcs[k] for k in ("f", "g", "h", "x", "y"))
    xo, yo, xi, yi = m.Var("xo"), m.Var("yo"), m.Var("xi"), m.Var("yi")
    g.compute_root().tile(x, y, xo, yo, xi, yi, 8, 4)
    f.in_(g).compute_at(g, xo).vectorize(x, 4)
    f.compute_root()
    return funcs


def test_wrapper_for_one_consumer_staged_in_its_tiles_computes_what_halide_does():
    check(_wrapped_in_g, [21, 10])
    funcs = _wrapped_in_g(pw)
    assert _callees(funcs["g"]) == {"f_in_g"} and _callees(funcs["h"]) == {"g", "f"}
    assert _callees(funcs["f"].in_(funcs["g"])) == {"f"}
    nest = pw.Pipeline(funcs["h"]).loop_nest()
    assert "produce f_in_g:" in nest and "vectorized x.v" in nest


def _global_and_custom(m):
    funcs = _stencil(m)
    f, g = funcs["f"], funcs["g"]
    f.in_(g).compute_root()
    f.in_().compute_root()
    g.compute_root()
    return funcs


def test_a_consumer_with_its_own_wrapper_keeps_it_and_the_others_call_the_global_one():
    check(_global_and_custom, [12, 9])
    funcs = _global_and_custom(pw)
    pipeline = pw.Pipeline(funcs["h"])
    names = [f.name() for f in pipeline.funcs]
    assert set(names) == {"f", "f_in_g", "f_global_wrapper", "g", "h"}
    assert _callees(funcs["h"]) == {"g", "f_global_wrapper"}
    assert _callees(funcs["g"]) == {"f_in_g"}
    # both wrappers read f itself, never each other
    by_name = {f.name(): f for f in pipeline.funcs}
    assert _callees(by_name["f_in_g"]) == {"f"} and _callees(by_name["f_global_wrapper"]) == {"f"}


def _image_staged(m):
    x, y = m.Var("x"), m.Var("y")
    im = m.ImageParam(m.UInt(8), 2, "im")
    blur = m.Func("blur")
    blur[x, y] = m.u16(im[x, y]) + m.u16(im[x + 1, y]) + m.u16(im[x, y + 1])
    xo, yo, xi, yi = m.Var("xo"), m.Var("yo"), m.Var("xi"), m.Var("yi")
    blur.tile(x, y, xo, yo, xi, yi, 8, 8)
    staged = im.in_()
    staged.compute_at(blur, xo)
    return {"out": blur, "im": im, "staged": staged}


def test_image_wrapper_stages_loads_per_tile_and_matches_halide():
    rng = np.random.default_rng(5)
    array = rng.integers(0, 256, (19, 30), dtype=np.uint8)
    import halide as hl

    theirs_funcs = _image_staged(hl)
    theirs_funcs["im"].set(hl.Buffer(array))
    theirs = np.asarray(hl.Pipeline(theirs_funcs["out"]).realize([29, 18])).copy()
    ours_funcs = _image_staged(pw)
    assert [a.name for a in ours_funcs["staged"].args()] == ["_0", "_1"]
    pipeline = pw.Pipeline(ours_funcs["out"])
    ours = pipeline.compile(checked=True)([29, 18], {"im": array})
    assert_same([ours], [theirs])
    assert_same([pipeline.realize_reference([29, 18], {"im": array})], [theirs])
    assert "produce im_global_wrapper:" in pipeline.loop_nest()


def _cloned(m):
    x = m.Var("x")
    f = m.Func("f")
    f[x] = x * 3
    r = m.RDom([(0, 5)])
    f[r.x] = f[r.x] + 100  # an update that reads f itself: the clone must read the clone
    g = m.Func("g")
    g[x] = f[x] * 2
    h = m.Func("h")
    h[x] = g[x] + f[x + 1]
    f.compute_root()
    g.compute_root()
    clone = f.clone_in(h)
    clone.compute_at(h, x)
    return {"f": f, "g": g, "h": h, "clone": clone, "out": h}


def test_clone_copies_definitions_and_schedule_and_is_rescheduled_on_its_own():
    check(_cloned, [9])
    funcs = _cloned(pw)
    clone = funcs["clone"]
    assert clone.name() == "f_clone_in_h" and clone.num_update_definitions() == 1
    assert _callees(clone) == set()  # its update reads the clone, not f
    assert _callees(funcs["h"]) == {"g", "f_clone_in_h"} and _callees(funcs["g"]) == {"f"}
    nest = pw.Pipeline(funcs["h"]).loop_nest()
    assert "produce f_clone_in_h:" in nest and "produce f:" in nest


def test_clone_starts_with_the_originals_schedule():
    funcs = _stencil(pw)
    f, h, x = funcs["f"], funcs["h"], funcs["x"]
    f.compute_root().vectorize(x, 4)
    clone = f.clone_in(h)
    assert repr(clone.schedule_of()) == repr(f.schedule_of())
    assert repr(clone.definition().schedule) == repr(f.definition().schedule)
    out = pw.Pipeline(h).compile(checked=True)([13, 6])
    np.testing.assert_array_equal(out, pw.Pipeline(h).realize_reference([13, 6]))


def test_tuple_funcs_get_tuple_wrappers():
    def build(m):
        x = m.Var("x")
        f = m.Func("f")
        f[x] = (x * 2, m.f32(x) / 4)
        g = m.Func("g")
        g[x] = f[x][0] + m.i32(f[x][1] * 8)
        f.in_(g).compute_root()
        return {"out": g}

    check(build, [11])


def test_asking_again_returns_the_same_wrapper_and_a_pipeline_built_before_sees_it():
    funcs = _stencil(pw)
    f, g, h = funcs["f"], funcs["g"], funcs["h"]
    pipeline = pw.Pipeline(h)
    before = pipeline.compile()([10, 7])
    assert "f_in_g" not in [q.name() for q in pipeline.funcs]
    w = f.in_(g)
    assert f.in_(g) is w and f.in_([g]) is w
    w.compute_root()
    assert "f_in_g" in [q.name() for q in pipeline.funcs]
    assert "produce f_in_g:" in pipeline.loop_nest()
    np.testing.assert_array_equal(pipeline.compile()([10, 7]), before)
    assert f.in_() is f.in_()


def test_one_wrapper_for_several_consumers():
    funcs = _stencil(pw)
    f, g, h = funcs["f"], funcs["g"], funcs["h"]
    w = f.in_([g, h])
    assert w.name() == "f_in_g_h"
    assert _callees(g) == {"f_in_g_h"} and _callees(h) == {"g", "f_in_g_h"}
    w.compute_root()
    out = pw.Pipeline(h).compile(checked=True)([9, 5])
    np.testing.assert_array_equal(out, pw.Pipeline(h).realize_reference([9, 5]))


def test_refusals_name_the_func_and_say_why():
    funcs = _stencil(pw)
    f, g, h = funcs["f"], funcs["g"], funcs["h"]
    with pytest.raises(ScheduleError, match="cannot wrap `f` in itself"):
        f.in_(f)
    lonely = pw.Func("lonely")
    lonely[funcs["x"]] = funcs["x"]
    with pytest.raises(ScheduleError, match="Func `lonely` does not call `f`"):
        f.in_(lonely)
    with pytest.raises(ScheduleError, match="Func `later` has no definition yet"):
        f.in_(pw.Func("later"))
    with pytest.raises(ScheduleError, match="takes consumer Funcs"):
        f.in_("g")
    with pytest.raises(ScheduleError, match="`undefined` to be defined first"):
        pw.Func("undefined").in_()
    w = f.in_(g)
    with pytest.raises(CompileError, match=r"made by f.in_\(g\) as a wrapper of `f`"):
        w[funcs["x"], funcs["y"]] = w[funcs["x"], funcs["y"]] + 1
    with pytest.raises(ScheduleError, match="another wrapper or clone of `f` already stands for it in `g`"):
        f.clone_in(g)
    with pytest.raises(ScheduleError, match="another wrapper or clone of `f` already stands for it in `g`"):
        f.in_([g, h])


def test_halides_interpolate_app_with_its_clone_in_schedule_matches_halide():
    import halide as hl

    from benchmarks.apps import build_interpolate

    rng = np.random.default_rng(3)
    image = rng.random((4, 96, 128), dtype=np.float32)
    image[3] = (image[3] > 0.5).astype(np.float32)  # half the pixels transparent
    theirs_out, theirs_inputs = build_interpolate(hl)
    theirs_inputs["input"].set(hl.Buffer(image))
    theirs = np.asarray(theirs_out.realize([128, 96, 3])).copy()
    ours_out, _ = build_interpolate(pw)
    pipeline = pw.Pipeline(ours_out)
    assert "downsampled_0_clone_in_downx_1" in [f.name() for f in pipeline.funcs]
    ours = pipeline.compile()([128, 96, 3], {"input": image})
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
