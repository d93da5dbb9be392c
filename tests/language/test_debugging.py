"""Item 5 of issue 13: print, print_when, tracing, lowered statements and warnings, against `halide`."""

import re
import warnings

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def printed_lines(capfd, run) -> list[str]:
    capfd.readouterr()
    run()
    return capfd.readouterr().out.splitlines()


def print_pipeline(lang):
    x = lang.Var("x")
    f = lang.Func("f")
    e = lang.print(x, "hi", lang.f32(x) / 3, lang.u8(x), lang.f64(x) * 0.5, x > 1, lang.cast(lang.Int(64), x) - 5)
    f[x] = e * 2
    return f


def test_print_prints_what_halide_prints(capfd):
    f, hf = print_pipeline(pw), print_pipeline(hl)
    ours = printed_lines(capfd, lambda: f.realize([4]))
    theirs = printed_lines(capfd, lambda: hf.realize([4]))
    assert ours == theirs and len(ours) == 4
    np.testing.assert_array_equal(np.asarray(f.realize([4])), np.asarray(hf.realize([4])))


def print_when_pipeline(lang):
    x = lang.Var("x")
    g = lang.Func("g")
    g[x] = lang.print_when(x > 1, x + 1, "big", x, lang.f32(x) * 0.25)
    return g


def test_print_when_prints_only_when_the_condition_holds(capfd):
    g, hg = print_when_pipeline(pw), print_when_pipeline(hl)
    ours = printed_lines(capfd, lambda: g.realize([5]))
    theirs = printed_lines(capfd, lambda: hg.realize([5]))
    assert ours == theirs == ["3 big 2 0.500000", "4 big 3 0.750000", "5 big 4 1.000000"]
    np.testing.assert_array_equal(np.asarray(g.realize([5])), np.asarray(hg.realize([5])))


def test_print_in_a_vectorized_loop_prints_every_lane(capfd):
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = pw.print(x * 2)
    f.vectorize(x, 4)
    lines = printed_lines(capfd, lambda: pw.Pipeline(f).realize([8]))
    assert sorted(int(v) for v in lines) == [0, 2, 4, 6, 8, 10, 12, 14]


def test_print_value_is_its_first_expression_and_the_reference_agrees():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = pw.print("x is", x) + 1
    assert f.type() == pw.Int(32)
    np.testing.assert_array_equal(pw.Pipeline(f).realize_reference([3]), [1, 2, 3])
    with pytest.raises(pw.CompileError, match="at least one expression"):
        pw.print("only text")
    with pytest.raises(pw.CompileError, match="bool condition"):
        pw.print_when(x, x)


def traced(lang):
    x, y = lang.Var("x"), lang.Var("y")
    g = lang.Func("g")
    g[x, y] = x + y
    f = lang.Func("f")
    f[x, y] = lang.f32(g[x, y]) * 2.5
    g.compute_root()
    g.trace_stores()
    g.trace_realizations()
    f.trace_stores()
    g.trace_loads()
    return f


HALIDE_ONLY = ("Begin pipeline", "End pipeline", "Tag ", "Produce", "End produce", "Consume", "End consume")


def test_trace_lines_match_halide(capfd):
    f, hf = traced(pw), traced(hl)
    ours = printed_lines(capfd, lambda: f.realize([3, 2]))
    lines = printed_lines(capfd, lambda: hf.realize([3, 2]))
    # Halide makes reused Func names unique within a process (g$1); the events are the same
    theirs = [re.sub(r"\$\d+", "", line) for line in lines if not line.startswith(HALIDE_ONLY)]
    assert ours == theirs
    assert "Begin realization g.0(0, 3, 0, 2)" in ours and "Store f.0(2, 1) = 7.500000" in ours


def test_trace_events_reach_a_python_callback_and_a_file(tmp_path):
    events = []
    pw.set_trace_handler(events.append)
    try:
        traced(pw).realize([2, 2])
    finally:
        pw.set_trace_handler(None)
    kinds = [e.event for e in events]
    assert kinds[0] == "begin_realization" and kinds[-1] == "end_realization"
    stores = [(e.func, e.coordinates, e.value) for e in events if e.event == "store"]
    assert ("g", (1, 1), 2) in stores and ("f", (1, 0), 2.5) in stores
    assert sum(1 for e in events if e.event == "load") == 4
    path = tmp_path / "trace.txt"
    pw.set_trace_file(str(path))
    try:
        traced(pw).realize([2, 2])
    finally:
        pw.set_trace_file(None)
    assert path.read_text().splitlines() == [e.to_text() for e in events]


def test_trace_loads_of_an_input_image(capfd):
    x = pw.Var("x")
    im = pw.ImageParam(pw.UInt(8), 1, "im")
    f = pw.Func("f")
    f[x] = im[x] + 1
    im.trace_loads()
    im.set(np.array([5, 6, 7], dtype=np.uint8))
    lines = printed_lines(capfd, lambda: f.realize([3]))
    assert lines == ["Load im.0(0) = 5", "Load im.0(1) = 6", "Load im.0(2) = 7"]


def test_tracing_changes_the_compiled_code_not_the_values():
    f = traced(pw)
    quiet = pw.Func("q")
    x, y = pw.Var("x"), pw.Var("y")
    quiet[x, y] = pw.f32(x + y) * 2.5
    pw.set_trace_handler(lambda e: None)
    try:
        np.testing.assert_array_equal(np.asarray(f.realize([4, 3])), pw.Pipeline(quiet).realize([4, 3]))
    finally:
        pw.set_trace_handler(None)


def traced_tuple(lang):
    x = lang.Var("x")
    f = lang.Func("f")
    f[x] = (x * 2, x * 3)
    f.compute_root().trace_stores().trace_loads()
    g = lang.Func("g")
    g[x] = f[x][0] + f[x][1] * 10
    return g


def test_tracing_a_tuple_func_keeps_each_value_and_names_it_as_halide_does(capfd):
    g, hg = traced_tuple(pw), traced_tuple(hl)
    values = []
    ours = printed_lines(capfd, lambda: values.append(np.asarray(g.realize([3])).copy()))
    theirs = printed_lines(capfd, lambda: hg.realize([3]))
    np.testing.assert_array_equal(values[0], [0, 32, 64])  # each value read from its own storage
    # Halide makes reused Func names unique within a process (f$1); the events are the same
    assert [line for line in ours if line.startswith("Store")] == [
        re.sub(r"\$\d+", "", line) for line in theirs if line.startswith("Store")
    ]
    assert "Store f.1(2) = 6" in ours and "Load f.1(2) = 6" in ours


def test_compile_to_lowered_stmt_text_and_html(tmp_path):
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    f.vectorize(x, 8)
    text_path, html_path = tmp_path / "f.stmt", tmp_path / "f.html"
    f.compile_to_lowered_stmt(str(text_path), [], pw.StmtOutputFormat.Text)
    f.compile_to_lowered_stmt(str(html_path), [], pw.StmtOutputFormat.HTML)
    text = text_path.read_text()
    assert text == pw.Pipeline(f).lowered_stmt()
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and '<span class="kw">for</span>' in page
    with pytest.raises(pw.CompileError, match="text or html"):
        f.compile_to_lowered_stmt(str(text_path), [], "pdf")


@pytest.mark.parametrize("value", [0.1, 3.14159265358979, 1e40, 16777217.0])
def test_float_literals_that_lose_precision_warn_like_halide(value):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        pw.Var("x") + value
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        hl.Var("x") + value
    assert len(ours) == len(theirs) == 1
    assert f"{value:.17f}" in str(ours[0].message) and f"{value:.17f}" in str(theirs[0].message)
    assert ours[0].filename == __file__


@pytest.mark.parametrize("value", [0.5, 1.5, 0.25, -3.0])
def test_exact_float_literals_do_not_warn(value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pw.Var("x") + value
        hl.Var("x") + value


def test_exporting_a_pipeline_that_prints_is_refused(tmp_path):
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = pw.print(x)
    with pytest.raises(pw.CompileError, match="print, print_when or tracing"):
        pw.Pipeline(f).compile_to_library("printing", str(tmp_path))
