"""A schedule for a lifted pipeline, chosen from what lifting knows about each stage.

Lifting knows which Funcs are the outputs, which are earlier versions of the same buffer (a C
loop that overwrites part of what an earlier loop wrote: read by the next version at the same
pixel), which are temporaries (heap or stack buffers another loop reads, often at neighbours),
which are per-pixel reductions (a window summed by an inner loop) and the element types. The
schedule follows from that:

- outputs: strips of rows in parallel (a few rows per task, so the task overhead stays small
  beside the work) when a call's estimated work pays for handing strips to the thread pool,
  serially otherwise (a specialization on the input images' sizes), columns vectorized as
  wide as the element type fills a 512-bit register (32 lanes for 8- and 16-bit pixels,
  which narrowing.py computes in 16 bits; 16 lanes for 32-bit ones);
- earlier versions of an output buffer: inlined into the next version (each is read at the
  pixel it computes; a buffer of the whole image and a second pass over it would cost more);
- lookup tables (an 8-bit input indexed by pixel values): widened to 32 bits once per
  call (to_engine.py), so that the lookups are gathers of 32-bit lanes;
- temporaries: computed per strip of the output's rows (the rows the strip needs, halo
  included), vectorized the same way, so they stay in cache;
- per-pixel reductions: computed per output row, vectorized across it;
- reductions along rows (a row's sum): rfactor of the columns split by 16, so each row is
  accumulated in 16 lanes with vectors along it, rows in parallel strips, then the lanes
  added up;
- whole-image reductions (a sum, a maximum): rfactor over the columns, so the rows are
  accumulated with vectors across them, then the columns reduced (16 lanes per row and rows
  in parallel measured slower for a maximum, and no faster for a sum, on 2 cores);
- scatters that add into an integer buffer (histograms): a partial histogram per strip of
  image rows, strips in parallel, summed with vectors across the bins (rfactor over the
  rows split in strips); a last write that wins, lifted as each strip's latest write
  positions (to_engine.py, define_by_last_position): the strips in parallel, their latest
  taken with vectors across the elements; other scatters keep the default (serial) schedule.

Only a single 2-D output is scheduled this way; other shapes keep outputs and temporaries at
root with rows in parallel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.to_engine import ELEM_BYTES

import pixelweave as pw

if TYPE_CHECKING:
    from pixelweave.nodes.lift.to_engine import LiftedPipeline

STRIP_ROWS = 8
HISTOGRAM_ROWS = 32  # image rows per partial histogram
ROW_LANES = 16  # lanes of the partial results of a reduction along rows
# Columns updated per step of a whole-image reduction (_columns_then_total): 64 (four 512-bit
# vectors of 32-bit partial sums per 64 bytes of an 8-bit row) took 0.80x the time of 16 for
# sum_image at 1920x1080 (alternating runs, 2 cores); no change for max_image16 (16-bit).
COLUMN_LANES = 64
_LANES = {8: 32, 16: 32, 32: 16, 64: 8}
# A call whose estimated work (bytes read and written, plus operations at OPS_PER_BYTE) is
# below this runs its strips serially (see worth_parallel). Measured on the corpus's 1920x1080
# passes (benchmarks/lift_corpus.py, quiet 2-core machine): at 2 MB, 86 of 88 functions beat
# cc -O3 by wall-clock against 81 at 12 MB (the single SSE2 passes of 4 MB run in parallel at
# 1.2-1.3x the C instead of 0.93-0.97x serially), for more CPU time (62 against 68 with less).
PARALLEL_WORK_BYTES = 2 << 20
OPS_PER_BYTE = 4
_DIVISIONS = ("/", "%", "fdiv", "fmod")


def vector_lanes(elem: str) -> int:
    """Lanes of a 512-bit vector for a stage whose buffer holds elem (8- and 16-bit buffers
    are computed in 16 bits)."""
    bits = int("".join(ch for ch in elem if ch.isdigit()) or 32)
    return _LANES.get(bits, 16)


def schedule_lifted(engine: LiftedPipeline) -> None:
    """Schedule every Func of a lifted pipeline (see the module's docstring)."""
    lifted = engine.lifted
    outputs = [f for f in engine.outputs.values() if f.dimensions() == 2]
    strip_of: dict[str, tuple[pw.Func, pw.Var, pw.Var]] = {}
    fused = fusable_outputs(engine)
    for name, out in engine.outputs.items():
        if out.dimensions() == 2 and out.has_update_definition():
            _partial_histograms(out)
        if out.dimensions() != 2 or out.has_update_definition():
            continue
        col, row = out.args()
        many_cols, many_rows = _grows_with_parameters(lifted, name)
        if not many_rows:
            continue
        loops = _ident(fused[0] if name in fused else name)  # fused outputs share their loops' names
        strip, within = pw.Var(f"{loops}_strip"), pw.Var(f"{loops}_y")
        out.split(row, strip, within, STRIP_ROWS, pw.TailStrategy.GUARD_WITH_IF)
        if many_cols:
            out.vectorize(col, vector_lanes(lifted.buffers[name].elem))
        if name in fused:
            out.parallel(strip)  # row by row with the others (below), strips in parallel
            strip_of[name] = (out, strip, within)
            continue
        worth = worth_parallel(engine, name) if _alone(engine, name) else None
        if worth is None:
            out.parallel(strip)
        else:
            out.specialize(worth).parallel(strip)  # otherwise serial: too little work to share
        strip_of[name] = (out, strip, within)
    if fused:
        first, _, first_row = strip_of[fused[0]]
        for name in fused[1:]:
            strip_of[name][0].compute_with(first, first_row)
        engine.fused_outputs = tuple(fused)
    single = next(iter(strip_of.values())) if len(strip_of) == 1 and len(outputs) == 1 else None
    for tag, func in engine.funcs.items():
        if any(func is f for f in engine.outputs.values()):
            continue
        if tag.endswith("#wide"):
            func.compute_root()  # a lookup table widened to 32 bits: once per call, then gathered
            continue
        if tag.endswith("#last_in_strip"):  # a last-write-wins scatter's positions per strip
            func.compute_root().vectorize(func.args()[0], ROW_LANES, pw.TailStrategy.GUARD_WITH_IF)
            func.update(0).parallel(func.args()[2])  # each strip writes its own copy
            continue
        if tag.endswith("#last"):  # the latest of those positions
            func.compute_root().vectorize(func.args()[0], ROW_LANES, pw.TailStrategy.GUARD_WITH_IF)
            func.update(0).vectorize(func.args()[0], ROW_LANES, pw.TailStrategy.GUARD_WITH_IF)
            continue
        if tag in lifted.accumulators:
            if func.dimensions() == 0:
                _columns_then_total(func)
            elif func.dimensions() == 1:
                _lanes_then_total(func)
            elif func.dimensions() == 2 and single is not None:
                out, _, within = single
                lanes = vector_lanes(lifted.accumulators[tag].type)
                func.compute_at(out, within).vectorize(func.args()[0], lanes)
                func.update(0).vectorize(func.args()[0], lanes)
            continue
        version = lifted.versions.get(tag)
        if version is None or version.kind != "pure" or version.dims or func.has_update_definition():
            continue
        if func.dimensions() != 2:
            continue
        buffer = lifted.buffers[version.buffer]
        if buffer.kind == "output":
            continue  # an earlier version of an output: inlined
        col, row = func.args()
        lanes = vector_lanes(buffer.elem)
        if single is not None:
            out, strip, _ = single
            func.compute_at(out, strip).vectorize(col, lanes)
        else:
            func.compute_root().parallel(row).vectorize(col, lanes)


def element_cost(lifted, buffer: str) -> int:
    """Operations per element of a buffer's last version, earlier versions inlined: for each
    version the largest of its pieces (one store's value: its loads, the terms of its sums,
    its other operations), summed over the versions."""
    total = 0
    for tag in lifted.buffers[buffer].versions:
        version = lifted.versions[tag]
        if version.kind == "pure" and version.pieces:
            total += max(_tree_cost(piece.value) for piece in version.pieces)
    return total


def _tree_cost(tree) -> int:
    cost = 0
    for node in S.walk(tree):
        kind = node[0]
        if kind == "aff":
            cost += max(len(node[2]) - 1, 0)  # the additions of a sum of terms
        elif kind == "bin" and node[2] in _DIVISIONS:
            cost += 4  # a multiply-high and its corrections
        elif kind not in ("const", "sym", "cast"):
            cost += 1
    return cost


def worth_parallel(engine: LiftedPipeline, buffer: str):
    """The run-time condition (an engine Expr of the input images' sizes) under which an
    output's strips are worth running in parallel: the estimated work of a call (bytes read
    and written, plus its operations at OPS_PER_BYTE) at least PARALLEL_WORK_BYTES. A pass
    of a megabyte with a few operations per pixel takes well under a hundred microseconds on
    one core, while handing its strips to the pool's worker costs a wake-up and moves the
    data the calling core just had in its cache to the other core: serial it is faster and
    uses less CPU. None when the pipeline reads
    no image (nothing to estimate from)."""
    images = list(engine.images.values())
    if not images:
        return None
    out_bytes = ELEM_BYTES[engine.lifted.buffers[buffer].elem]
    sizes = [
        pw.cast(pw.Int(64), im.dim(0).extent()) * pw.cast(pw.Int(64), im.dim(1).extent()) * (im.type().bits // 8)
        for im in images
    ]
    read, largest = sizes[0], sizes[0]
    for size in sizes[1:]:
        read, largest = read + size, pw.max(largest, size)
    ops = element_cost(engine.lifted, buffer)
    work = read + largest + largest * ops // (out_bytes * OPS_PER_BYTE)
    return work >= PARALLEL_WORK_BYTES


def fusable_outputs(engine: LiftedPipeline) -> list[str]:
    """Outputs computed in one loop nest (compute_with, row by row): several outputs
    written at the same places in the same loops (sse2_darken_lighten's minimum and
    maximum), each a pure 2-D Func computed alone. Two pipelines read the inputs twice; one
    loop nest reads each row once for all of them (measured: 291 us against 2 x 223 us at
    1920x1080). Their strips run in parallel at every size: compute_with refuses a
    specialized stage, so worth_parallel's serial version for small images is not available,
    and at the corpus's size the parallel nest takes 0.83x the serial one's time (for 1.4x its
    CPU time). Empty when there is nothing to fuse."""
    lifted = engine.lifted
    names = [n for n, f in engine.outputs.items() if f.dimensions() == 2 and not f.has_update_definition()]
    if len(names) < 2 or len(names) != len(engine.outputs) or not all(_alone(engine, n) for n in names):
        return []
    writes = [[(row, col, loops) for b, row, col, loops in lifted.writes if b == n] for n in names]
    if not writes[0] or any(w != writes[0] for w in writes[1:]):
        return []
    if not all(_grows_with_parameters(lifted, n)[1] for n in names):
        return []
    return names


def _alone(engine: LiftedPipeline, buffer: str) -> bool:
    """Whether an output is computed alone: no temporary or reduction scheduled inside its
    strips (a stage specialized into a serial and a parallel version is kept to those)."""
    lifted = engine.lifted
    if lifted.accumulators or any(b.kind in ("temp", "table") for b in lifted.buffers.values()):
        return False
    return not any(tag.endswith("#wide") for tag in engine.funcs)


def _partial_histograms(func: pw.Func) -> None:
    """A scatter that adds into an integer buffer (a histogram) as Halide's rfactor over the
    image's rows split in strips: one partial histogram per strip of HISTOGRAM_ROWS rows, the
    strips in parallel, then the partial histograms summed with vectors across the bins.
    Integer addition wraps around exactly as C's, in any order, so the bins are C's. Left
    serial where rfactor refuses (a last write, a predicated update) and for floating-point
    sums (the order changes them)."""
    if not func.type().is_int() and not func.type().is_uint():
        return
    col = func.args()[0]
    for index, update in enumerate(func.updates()):
        rdom = update.rdom
        if rdom is None or len(rdom.vars) != 2:
            continue
        strip = pw.Var(f"{func.name()}_part{index}")
        rows, within = pw.RVar(f"rows{index}"), pw.RVar(f"within{index}")
        try:
            partial = func.update(index).split(rdom.vars[1], rows, within, HISTOGRAM_ROWS).rfactor(rows, strip)
        except pw.ScheduleError:
            continue
        lanes = 16
        partial.compute_root().vectorize(partial.args()[0], lanes).parallel(strip)
        partial.update(0).parallel(strip)
        merge = func.update(index)
        merge.reorder(col, func.args()[1], merge.definition.rdom.vars[0]).vectorize(
            col, lanes, pw.TailStrategy.GUARD_WITH_IF
        )


def _lanes_then_total(func: pw.Func) -> None:
    """A reduction per row along it (a row's sum) as Halide's rfactor of the split columns:
    16 partial sums per row, one per lane, accumulated with vectors along the row (dense
    loads; the last, partial vector guarded), rows in parallel strips, then the lanes added
    up. Only for integers, whose wrap-around sums are the same in any order."""
    rdom = func.updates()[0].rdom if func.updates() else None
    if rdom is None or len(rdom.vars) != 1 or not (func.type().is_int() or func.type().is_uint()):
        return
    lane, step = pw.RVar("lane"), pw.RVar("step")
    u = pw.Var("lane_v")
    try:
        lanes = func.update(0).split(rdom.vars[0], step, lane, ROW_LANES).rfactor(lane, u)
    except pw.ScheduleError:
        return
    row = func.args()[0]
    lanes.compute_root().reorder_storage(u, row).reorder(u, row).vectorize(u).parallel(row, STRIP_ROWS)
    lanes.update(0).reorder(u, step, row).vectorize(u).parallel(row, STRIP_ROWS)
    func.compute_root()


def _columns_then_total(func: pw.Func) -> None:
    """A whole-image reduction (a sum or a maximum over rows and columns) as Halide's rfactor
    over the columns: an intermediate per column, updated row after row with vectors across
    the row (dense loads), then reduced to the total. Left serial where rfactor refuses it
    (an update that is not an associative reduction over a 2-D RDom)."""
    rdom = func.updates()[0].rdom if func.updates() else None
    if rdom is None or len(rdom.vars) != 2:
        return
    rx, ry = rdom.vars
    column, outer, lane = pw.Var("column"), pw.Var("column_o"), pw.Var("column_v")
    try:
        columns = func.update(0).rfactor([(rx, column)])
    except pw.ScheduleError:
        return
    columns.compute_root().vectorize(column, 16)
    columns.update(0).split(column, outer, lane, COLUMN_LANES).reorder(lane, outer, ry).vectorize(lane)


def _grows_with_parameters(lifted, buffer: str) -> tuple[bool, bool]:
    """Whether the columns and the rows a buffer is written in run over loops whose trip
    counts follow the function's parameters (an image's width and height), rather than a
    few constant columns or a single row: only those are vectorized or split into strips."""

    def grows(address) -> bool:
        return any(
            sym in lifted.loops and S.interval(lifted.loops[sym], lifted.bounds()) is None for sym in S.symbols(address)
        )

    writes = [w for w in lifted.writes if w[0] == buffer]
    return (
        bool(writes) and all(grows(col) for _, _, col, _ in writes),
        bool(writes) and all(grows(row) for _, row, _, _ in writes),
    )


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
