"""A directive that names a loop the stage no longer has (an earlier split, tile or fuse
replaced it) is refused naming that directive, the stage and the loops it does have; and
the GPU fuzzer's added gpu_blocks only names loops that exist. (Found by GPU fuzz seeds
5051, 5133, 5502 and 5690, whose gpu_blocks(x) came after a tile of x.)"""

from __future__ import annotations

import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.fuzz.execute import namespace, refusal_gaps
from pixelweave.engine.fuzz.gpu import draw_gpu_case

import pixelweave as pw

x, y = pw.Var("x"), pw.Var("y")
xo, yo, xi, yi, xy = pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi"), pw.Var("xy")


def _tiled() -> pw.Func:
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    out = pw.Func("out")
    out[x, y] = image[x, y] + 1
    out.tile(x, y, xo, yo, xi, yi, 8, 4)
    return out


DIRECTIVES = {
    "gpu_blocks(x)": lambda f: f.gpu_blocks(x),
    "gpu_threads(x)": lambda f: f.gpu_threads(x),
    "parallel(x)": lambda f: f.parallel(x),
    "vectorize(x)": lambda f: f.vectorize(x, 4),
    "unroll(x)": lambda f: f.unroll(x, 2),
    "split(x)": lambda f: f.split(x, pw.Var("a"), pw.Var("b"), 2),
    "fuse(x)": lambda f: f.fuse(x, yi, xy),
    "reorder(x)": lambda f: f.reorder(xi, x),
    "tile(x)": lambda f: f.tile(x, yo, pw.Var("a"), pw.Var("b"), pw.Var("c"), pw.Var("d"), 2, 2),
    "gpu_tile(x)": lambda f: f.gpu_tile(x, pw.Var("a"), pw.Var("b"), 8),
}


@pytest.mark.parametrize("directive", sorted(DIRECTIVES))
def test_a_missing_loop_is_refused_naming_the_directive(directive):
    out = _tiled()
    with pytest.raises(ScheduleError) as refused:
        DIRECTIVES[directive](out)
    message = str(refused.value)
    assert message.startswith(f"{directive}: Func `out` has no dimension named x"), message
    assert "its loops are (outermost first) y.yo, x.xo, y.yi, x.xi" in message, message
    assert refusal_gaps(message, {"out", "image"}) == [], message


@pytest.mark.parametrize("seed", [5051, 5133, 5502, 5690, *range(0, 120)])
def test_the_gpu_fuzzer_names_only_loops_that_exist(seed):
    case = draw_gpu_case(seed)
    ns = namespace(case)
    outputs, funcs, rdoms, handles = ns["algorithm"](pw)
    try:
        ns["schedule"](funcs, rdoms, handles)
    except ScheduleError as err:  # other refusals are the schedule's own, and clear
        assert "no dimension named" not in str(err), f"seed {seed}: {err}"
