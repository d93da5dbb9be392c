"""Halide-style schedule text: what it reads into document directives, the faults it locates,
and a property test that formatting then parsing gives back any well-formed schedule."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pixelweave.nodes.document import Document
from pixelweave.nodes.pipeline_build import build_document, open_document
from pixelweave.nodes.schedule_spec import ALIGNS, DIRECTIVES, MEMORY_TYPES, TAILS, check_schedule
from pixelweave.nodes.schedule_text import (
    ScheduleTextError,
    format_schedule,
    loops_after,
    parse_schedule_text,
    text_usage,
)

SETTINGS = settings(
    derandomize=os.environ.get("PIXELWEAVE_HYPOTHESIS_RANDOM") is None,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
FUNCS = {"sharpen": ["blur_x", "blur_y", "out"], "result": ["out"]}


def test_reads_the_calls_of_the_brief():
    text = """
        out.compute_root().tile(x, y, xo, yo, xi, yi, 64, 32).vectorize(xi, 8).parallel(yo)
        blur_x.compute_at(out, y)
        blur_y.compute_at(result.out, y); out.update(0).vectorize(x)
        out.split(y, yo, yi, 16, TailStrategy.GuardWithIf)
    """
    assert parse_schedule_text(text, "sharpen", FUNCS) == {
        "out": [
            ["compute_root"],
            ["tile", "x", "y", "xo", "yo", "xi", "yi", 64, 32],
            ["vectorize", "xi", 8],
            ["parallel", "yo"],
            ["split", "y", "yo", "yi", 16, "guard_with_if"],
        ],
        "blur_x": [["compute_at", "out", "y"]],
        "blur_y": [["compute_at", "result.out", "y"]],
        "out.update(0)": [["vectorize", "x"]],
    }


def test_reads_storage_placement_and_fusion_with_halide_enumerations():
    text = """
        blur_x.compute_at(out, y).store_root().fold_storage(y, 4, False).store_in(hl.MemoryType.Stack)
        blur_y.compute_at(out, yi).hoist_storage(out, y).align_bounds(x, 8, 1).memoize()
        out.update(0).compute_with(result.out.update(1), y, LoopAlignStrategy.AlignEnd).never_partition(x, y)
        out.update(1).atomic(True).gpu_single_thread()
    """
    assert parse_schedule_text(text, "sharpen", FUNCS) == {
        "blur_x": [["compute_at", "out", "y"], ["store_root"], ["fold_storage", "y", 4, False],
                   ["store_in", "stack"]],
        "blur_y": [["compute_at", "out", "yi"], ["hoist_storage", "out", "y"], ["align_bounds", "x", 8, 1],
                   ["memoize"]],
        "out.update(0)": [["compute_with", "result.out.update(1)", "y", "align_end"], ["never_partition", "x", "y"]],
        "out.update(1)": [["atomic", True], ["gpu_single_thread"]],
    }  # fmt: skip
    formatted = format_schedule(parse_schedule_text(text, "sharpen", FUNCS), "sharpen")
    assert "store_in(MemoryType.Stack)" in formatted and "LoopAlignStrategy.AlignEnd" in formatted
    assert parse_schedule_text(formatted, "sharpen", FUNCS) == parse_schedule_text(text, "sharpen", FUNCS)


def test_continuation_lines_comments_and_spellings():
    text = """# the output in strips
    sharpen.out.split(y, yo, yi, 32, tail=hl.TailStrategy.RoundUp)   # own node named in full
        .parallel(yo)
        .vectorize("x", 8)
    blur_x.store_at(LoopLevel.root()).compute_at(out, yi).bound(x, -4, 100)
    """
    assert parse_schedule_text(text, "sharpen") == {
        "out": [["split", "y", "yo", "yi", 32, "round_up"], ["parallel", "yo"], ["vectorize", "x", 8]],
        "blur_x": [["store_at", "root"], ["compute_at", "out", "yi"], ["bound", "x", -4, 100]],
    }
    assert parse_schedule_text("   \n# nothing\n", "sharpen") == {}


@pytest.mark.parametrize(
    ("text", "line", "column", "length", "message"),
    [
        ("out.vectorise(x, 8)", 1, 5, 9, "unknown directive `vectorise`; did you mean `vectorize`?"),
        ("blur_z.compute_root()", 1, 1, 6, "node `sharpen` has no Func `blur_z` (its Funcs: blur_x, blur_y, out)"),
        ("out.split(x, xo)", 1, 5, 12, "`split` takes split(var, outer, inner, factor[, tail]); got 2 arguments"),
        ("\nout.split(x, xo, xi, 0)", 2, 22, 1, "argument 4 (factor) of `split` must be a positive integer, got 0"),
        ("blur_x.compute_at(result.outt, y)", 1, 19, 11, "node `result` has no Func `outt`"),
        ("out.update(0).compute_root()", 1, 15, 14, "`compute_root` applies to a whole Func: call it on `out`"),
        ("out.split(x, a, b, 4, TailStrategy.Fast)", 1, 23, 17, "unknown tail strategy `TailStrategy.Fast`"),
        ("out.store_in(MemoryType.VTCM)", 1, 14, 15, "unknown memory type `MemoryType.VTCM`; use one of MemoryType.Auto"),
        ("out.compute_with(result.outt.update(0), y)", 1, 18, 21, "node `result` has no Func `outt`"),
        ("vectorize(x)", 1, 1, 9, "needs the Func it schedules in front"),
        ("out.vectorize(x) out.parallel(y)", 1, 18, 3, "expected `.`, `;` or the end of the line, found `out`"),
        ("out.vectorize(x, $)", 1, 18, 1, "unexpected character '$'"),
        ("result.out.parallel(y)", 1, 1, 10, "`result.out` is not a Func of node `sharpen`"),
        ("out.parallel(y", 1, 15, 1, "expected `,` or `)`, found the end of the line"),
        ("out.vectorize(x, width=8)", 1, 18, 5, "`vectorize` takes no keyword argument `width`"),
        ("out", 1, 1, 3, "`out` schedules nothing"),
    ],
)
def test_faults_are_located_and_explained(text, line, column, length, message):
    with pytest.raises(ScheduleTextError) as caught:
        parse_schedule_text(text, "sharpen", FUNCS)
    e = caught.value
    assert message in e.detail
    assert (e.line, e.column, e.length) == (line, column, length), e.detail
    assert e.node_id == "sharpen"
    lines = text.split("\n")
    assert e.offset == sum(len(s) + 1 for s in lines[: line - 1]) + column - 1


def test_usage_reads_like_a_call():
    assert text_usage("compute_at") == "compute_at(func, var) or compute_at(root)"
    assert text_usage("vectorize") == "vectorize(var[, width])"
    assert text_usage("reorder") == "reorder(vars...)"
    assert text_usage("compute_root") == "compute_root()"


def test_formatting_an_example_schedule_and_building_it_again():
    """The text of a real schedule builds a document with the same loop nest."""
    built = open_document("resources/examples/unsharp_mask.json")
    doc = built.document
    for node in doc.nodes:
        text = format_schedule(node.schedule, node.id)
        assert parse_schedule_text(text, node.id, built.funcs()) == node.schedule
    copy = Document.from_json(doc.to_json())
    text = format_schedule(copy.node("result").schedule, "result")
    assert text.splitlines()[:3] == [
        "out.split(x, xo, xi, 64)",
        "    .split(y, yo, yi, 32, TailStrategy.GuardWithIf)",
        "    .reorder(xi, yi, c, xo, yo)",
    ]
    for key, directives in parse_schedule_text(text, "result").items():
        copy.set_schedule("result", key, directives)

    def fresh(text: str) -> str:  # loops a vectorize makes up are numbered per build
        return re.sub(r"\bv\d+\b", "v", text)

    assert fresh(build_document(copy).loop_nest()) == fresh(built.loop_nest())


# ------------------------------------------------------------------------------ property

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True).filter(lambda s: s not in ("root",))
LOOP = st.builds(lambda parts: ".".join(parts), st.lists(NAME, min_size=1, max_size=3))
FUNC_REF = st.one_of(NAME, st.builds(lambda a, b: f"{a}.{b}", NAME, NAME))
STAGE_REF = st.one_of(FUNC_REF, st.builds(lambda f, k: f"{f}.update({k})", FUNC_REF, st.integers(0, 3)))


def _argument(kind: str) -> st.SearchStrategy:
    base = kind.rstrip("?*")
    return {
        "loop": LOOP,
        "new": NAME,
        "factor": st.integers(1, 4096),
        "int": st.integers(-100, 100),
        "tail": st.sampled_from(TAILS),
        "func": FUNC_REF,
        "stage": STAGE_REF,
        "bool": st.booleans(),
        "memory": st.sampled_from(MEMORY_TYPES),
        "align": st.sampled_from(ALIGNS),
    }[base]


@st.composite
def directive(draw, stage_only: bool) -> list:
    names = [n for n, spec in DIRECTIVES.items() if not stage_only or spec.scope == "stage"]
    name = draw(st.sampled_from(names))
    sig = draw(st.sampled_from(DIRECTIVES[name].signatures))
    args: list = []
    for arg, kind in sig:
        if kind == "func" and arg == "root":
            args.append("root")
        elif kind.endswith("?"):
            if draw(st.booleans()):
                args.append(draw(_argument(kind)))
        elif kind.endswith("*"):
            args.extend(draw(st.lists(_argument(kind), min_size=1, max_size=4)))
        else:
            args.append(draw(_argument(kind)))
    return [name, *args]


@st.composite
def schedule(draw) -> dict:
    result: dict = {}
    for local in draw(st.lists(NAME, min_size=1, max_size=3, unique=True)):
        result[local] = draw(st.lists(directive(False), min_size=1, max_size=5))
        for k in draw(st.lists(st.integers(0, 2), max_size=2, unique=True)):
            result[f"{local}.update({k})"] = draw(st.lists(directive(True), min_size=1, max_size=3))
    return result


@SETTINGS
@given(schedule())
def test_format_then_parse_gives_the_schedule_back(sched):
    assert check_schedule(sched) == []
    text = format_schedule(sched, "node")
    assert parse_schedule_text(text, "node") == sched, text


def test_loops_after_directives():
    split = [["split", "x", "xo", "xi", 64], ["split", "y", "yo", "yi", 32, "guard_with_if"]]
    assert loops_after(["x", "y", "c"], split) == ["xi", "xo", "yi", "yo", "c"]
    assert loops_after(["x", "y", "c"], [*split, ["reorder", "xi", "yi", "c", "xo", "yo"]]) == [
        "xi", "yi", "c", "xo", "yo"
    ]  # fmt: skip
    assert loops_after(["x", "y"], [["tile", "x", "y", "xo", "yo", "xi", "yi", 8, 8]]) == ["xi", "yi", "xo", "yo"]
    assert loops_after(["x", "y"], [["tile", "x", "y", "xi", "yi", 8, 8], ["fuse", "x", "y", "t"]]) == ["xi", "yi", "t"]
    # vectorize with a width splits off an inner loop, named as the engine names it
    assert loops_after(["x", "y"], [["vectorize", "x", 8], ["parallel", "y"]]) == ["v0", "x", "y"]


@pytest.mark.parametrize(
    "directives",
    [
        [["vectorize", "x", 8]],
        [["vectorize", "x", 8], ["unroll", "y", 2], ["parallel", "y", 4]],
        [["split", "x", "xo", "v0", 4], ["vectorize", "xo", 4]],
        [["tile", "x", "y", "xo", "yo", "xi", "yi", 16, 8], ["vectorize", "xi", 4], ["parallel", "yo", 2]],
        [["unroll", "c", 3], ["vectorize", "x", 8], ["reorder", "v1", "x", "y", "c", "v0"]],
    ],
)
def test_loops_after_names_generated_loops_as_the_engine_does(directives):
    """The schedule editor offers loops by these names before the engine has built anything:
    they must be the ones the engine makes (short names, innermost first)."""
    from pixelweave.engine.schedule import last_part

    import pixelweave as pw

    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    f = pw.Func("f")
    f[x, y, c] = x + y + c
    for d in directives:
        getattr(f, d[0])(*d[1:])
    engine = [last_part(d.name) for d in f.definition().schedule.dims]
    assert loops_after(["x", "y", "c"], directives) == engine
    assert loops_after(["x", "y", "c"], [["vectorize", "x", 8]]) == ["v0", "x", "y", "c"]
