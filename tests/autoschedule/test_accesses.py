"""The points of a Func each computed stage reads, through inlined Funcs (reads of one point
from several inlined consumers count once), and which Funcs are element-wise."""

from __future__ import annotations

from pixelweave.engine.autoschedule.accesses import affine, stage_accesses, translation_calls
from pixelweave.engine.autoschedule.analysis import PipelineAnalysis
from pixelweave.engine.autoschedule.estimates import output_boxes, parameter_scope
from pixelweave.engine.ir.coerce import to_expr

import pixelweave as pw


def _pipeline():
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    a, s, d, t, out = (pw.Func(n) for n in ("a", "s", "d", "t", "out"))
    a[x, y] = inp[x, y] * inp[x, y]
    s[x, y] = a[x - 1, y] + a[x, y] + a[x + 1, y]
    d[x, y] = s[x, y] * 2.0
    t[x, y] = s[x, y] + 1.0
    out[x, y] = d[x, y] + t[x, y] * t[x, y]
    out.set_estimates([(0, 64), (0, 32)])
    inp.set_estimates([(0, 64), (0, 32)])
    p = pw.Pipeline(out)
    return p, {f.name(): f for f in p.funcs}


def test_affine_forms():
    x, y = pw.Var("x"), pw.Var("y")
    assert affine(to_expr(2 * x + 3 - y)) == {"x": 2, "": 3, "y": -1}
    assert affine(to_expr(x * y)) is None and affine(to_expr(x / 2)) is None


def test_reads_of_one_point_through_two_inlined_consumers_count_once():
    p, f = _pipeline()
    analysis = PipelineAnalysis(p, parameter_scope(p), output_boxes(p))
    inlined = {id(f["d"]), id(f["t"])}
    known = {}
    for name in ("t", "d"):
        known[id(f[name])] = stage_accesses(f[name], analysis.sites[id(f[name])], lambda c: id(c) in inlined, known)
    s_reads = stage_accesses(f["s"], analysis.sites[id(f["s"])], lambda c: id(c) in inlined, known)
    [(stage, _, points)] = s_reads.values()
    assert stage is f["out"] and len(points) == 1  # d and t both read s at (x, y)
    inlined.add(id(f["s"]))
    known[id(f["s"])] = s_reads
    a_reads = stage_accesses(f["a"], analysis.sites[id(f["a"])], lambda c: id(c) in inlined, known)
    [(stage, _, points)] = a_reads.values()
    assert stage is f["out"] and len(points) == 3  # x - 1, x, x + 1


def test_element_wise_funcs():
    _, f = _pipeline()
    assert translation_calls(f["a"]) == 1  # reads input at its own point (twice, the same point)
    assert translation_calls(f["out"]) == 2
    assert translation_calls(f["s"]) is None  # a stencil of a


def test_a_read_through_a_data_dependent_read_stays_distinct_and_per_dimension():
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "input")
    lut, mapped, shifted, out = pw.Func("lut"), pw.Func("mapped"), pw.Func("shifted"), pw.Func("out")
    lut[x, y] = x + y
    mapped[x, y] = lut[pw.cast(pw.Int(32), inp[x, y]), y]  # a data-dependent coordinate
    shifted[x, y] = mapped[x + 1, y] + mapped[x, y]
    out[x, y] = shifted[x, y]
    out.set_estimates([(0, 16), (0, 8)])
    inp.set_estimates([(0, 17), (0, 8)])
    p = pw.Pipeline(out)
    analysis = PipelineAnalysis(p, parameter_scope(p), output_boxes(p))
    f = {g.name(): g for g in p.funcs}
    inlined = {id(f["shifted"]), id(f["mapped"])}
    known = {}
    for name in ("shifted", "mapped", "lut"):
        known[id(f[name])] = stage_accesses(f[name], analysis.sites[id(f[name])], lambda c: id(c) in inlined, known)
    [(stage, _, points)] = known[id(f["lut"])].values()
    assert stage is f["out"] and len(points) == 2  # two reads at data-dependent x, not merged
    assert all(len(p) == 2 for p in points)  # one coordinate per dimension of lut
