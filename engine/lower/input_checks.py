"""Pass 5: assertions, at the top of the pipeline, that every input image covers the
region the pipeline reads and every output buffer the region it writes.

The regions come from interval analysis of the whole loop nest, so they are expressions
of the output size and the parameters, checked once before any work starts.
"""

from __future__ import annotations

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.lower.bounds_inference import assert_within, buffer_extent, buffer_min
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.flatten import output_first_strides
from pixelweave.engine.lower.region import Scopes, box_touched
from pixelweave.engine.reference import dim_label
from pixelweave.engine.schedule import TailStrategy
from pixelweave.engine.stmt import AssertStmt, LetStmt, Stmt, make_block
from pixelweave.engine.stmt_visit import reads_memory


def _dense(name: str, what: str, want: int = 1) -> AssertStmt:
    stride = E.Variable(f"{name}.stride.0", Int(32), "param")
    message = (
        f"{what} `{name}` must be dense in dimension 0 (stride 1, the last NumPy axis), but its stride is {{}}"
        if want == 1
        else f"{what} `{name}` must have stride {want} in dimension 0 (its output_buffer() constraint), but has {{}}"
    )
    return AssertStmt(E.EQ(stride, E.Const(Int(32), want)), message, (stride,))


def add_input_checks(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    checks: list[Stmt] = [_dense(im.name(), "input") for im in ctx.images]
    first_strides = output_first_strides(ctx)
    checks += [
        _dense(info.name, "output", first_strides.get(info.name, 1))
        for info in ctx.funcs
        if info.is_output and info.pure_vars
    ]
    # The inputs are checked below the lets at the top (the Funcs' loop bounds, named), so
    # that their regions name those lets rather than repeat their values; a let that reads
    # memory stays below the checks, which cover what it reads.
    lets: list[LetStmt] = []
    body = stmt
    while isinstance(body, LetStmt) and not reads_memory(body.value):
        lets.append(body)
        body = body.body
    scopes = Scopes()  # every input is asked about below the same statement
    input_checks: list[Stmt] = []
    for image in ctx.images:
        name = image.name()
        box = box_touched(body, name, scopes=scopes)
        if box is None:
            continue
        for i, iv in enumerate(box):
            if not iv.is_bounded():
                raise ScheduleError(
                    f"cannot bound the region of input `{name}` that the pipeline reads in {dim_label(i)}: a "
                    "coordinate has no bounds (for example a value read from another image); clamp it or use "
                    "a boundary condition"
                )
        dims = image.dimensions()
        mins = [buffer_min(name, i) for i in range(dims)]
        input_checks += assert_within(name, "input", box, mins, [buffer_extent(name, i) for i in range(dims)], "read")
    # An output's region is in the pipeline's parameters (ctx.output_regions is evaluated
    # from them): it is asked about the whole statement (its check may go anywhere).
    scopes = Scopes()
    for info in ctx.funcs:
        if not info.is_output:
            continue
        box = box_touched(stmt, info.name, calls=True, provides=True, scopes=scopes)
        if box is None:
            continue
        dims = len(info.pure_vars)
        if all(iv.is_bounded() for iv in box):
            ctx.output_regions[info.name] = [(iv.lo, iv.hi) for iv in box]
        input_checks += assert_within(  # (after the inputs': a read outside an input is the first cause)
            info.name,
            "output",
            box,
            [buffer_min(info.name, i) for i in range(dims)],
            [buffer_extent(info.name, i) for i in range(dims)],
            hint=unguarded_split_hint(info),
        )
    checked: Stmt = make_block([*input_checks, body])
    for let in reversed(lets):
        checked = LetStmt(let.name, let.value, checked)
    return make_block([*checks, checked])


def unguarded_split_hint(info: FuncInfo) -> str:
    """Why an output may be written outside the requested size: its splits without guards
    (RoundUp, ShiftInwards, and AUTO, which is one of them; vectorize and unroll with a
    width split too) compute whole multiples of their factor."""
    splits = []
    for k, stage in enumerate(info.stages):
        where = "" if k == 0 else f" in update {k - 1}"
        for sp in (sp for sched in stage.schedule.all_schedules() for sp in sched.splits):
            if sp.kind == "split" and sp.factor > 1 and sp.tail != TailStrategy.GUARD_WITH_IF:
                splits.append(f"{sp.old} by {sp.factor}{where} (tail {sp.tail.name})")
    if not splits:
        return ""
    return (
        f"; the schedule of `{info.name}` splits {', '.join(splits)}, which computes whole multiples of the "
        "factor: give the output at least the factor in that dimension (a multiple of it for ROUND_UP), or split "
        "with tail=TailStrategy.GUARD_WITH_IF"
    )
