"""Loop partitioning (engine/lower/partition_loops.py): loops split into prologue, steady
state and epilogue give the reference evaluator's values at sizes that leave each part
empty or not; the steady state has no boundary tests; the `partition` controls behave as
Halide's (Auto, Never, Always)."""

from __future__ import annotations

import numpy as np
import pytest
from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower import lower
from pixelweave.engine.stmt import STORE_FENCE, Evaluate, For, IfThenElse, LetStmt, Stmt
from pixelweave.engine.stmt_visit import stmt_exprs, walk_stmt

import pixelweave as pw


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    """Compile into a fresh cache: a cached object of the same structure from before a
    compiler change would hide the code under test."""
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))


def stencil(schedule: str = "vector", policy: pw.Partition | None = None) -> tuple[pw.Func, pw.Var, pw.Var]:
    """f(x, y) reads a repeat_edge input 3 left, 5 right and 1 below: the x loop has a
    prologue (x < 3) and an epilogue (x + 5 beyond the input), the y loop an epilogue."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    b = pw.BoundaryConditions.repeat_edge(inp)
    f = pw.Func("f")
    f[x, y] = b[x - 3, y] + 2 * b[x + 5, y] + 7 * b[x, y + 1]
    if schedule == "vector":
        f.vectorize(x, 8).parallel(y)
    elif schedule == "guard":
        f.split(x, x, pw.Var("xi"), 4, pw.TailStrategy.GuardWithIf).vectorize(pw.Var("xi"))
    if policy is not None:
        f.partition(x, policy)
    return f, x, y


def compare(pipeline: pw.Pipeline, sizes: list[int], inputs: dict) -> None:
    ours = pipeline.compile(level="fast")(sizes, inputs)
    np.testing.assert_array_equal(ours, pipeline.realize_reference(sizes, inputs))


# (input width, input height, output width, output height) and which x parts run
# (8-lane vectors, shifted inwards at the end):
SIZES = [
    (64, 9, 64, 9),  # prologue (x < 3), steady state and epilogue (x > 58) all run
    (64, 4, 8, 4),  # the one vector is in the prologue: steady state and epilogue empty
    (100, 3, 24, 2),  # prologue and steady state; epilogue empty (x + 5 stays inside)
    (6, 2, 40, 3),  # input narrower than a vector: no steady state, prologue and epilogue
    (12, 1, 12, 1),  # one row: the y steady state is empty
]


@pytest.mark.parametrize("schedule", ["vector", "guard", "serial"])
def test_partitioned_stencil_matches_reference(schedule, rng):
    f, _, _ = stencil(schedule)
    pipeline = pw.Pipeline(f)
    fn = pipeline.compile(level="fast")
    for in_w, in_h, out_w, out_h in SIZES:
        if schedule == "vector" and out_w < 8:
            continue
        image = rng.integers(-1000, 1000, (in_h, in_w)).astype(np.int32)
        ours = fn([out_w, out_h], {"input": image})
        expected = pipeline.realize_reference([out_w, out_h], {"input": image})
        np.testing.assert_array_equal(ours, expected, err_msg=f"{schedule} {in_w}x{in_h} -> {out_w}x{out_h}")


def loops_named(s: Stmt, name: str) -> list[For]:
    return [n for n in walk_stmt(s) if isinstance(n, For) and n.name == name]


def clamps_of(s: Stmt) -> list[E.Expr]:
    return [n for e in stmt_exprs(s) for n in walk(e) if isinstance(n, E.Max) and isinstance(n.a, E.Min)]


def test_steady_state_has_no_boundary_tests():
    f, _, _ = stencil("vector")
    body = lower(pw.Pipeline(f)).lowered.body
    # y is parallel: as in Halide, one loop whose iterations choose the steady body or the
    # edges' (not three parallel loops, each waiting for the one before)
    (y_loop,) = loops_named(body, "f.s0.y")
    # (then the fence of the output's streaming stores: streaming_stores.py)
    partitioned, fence = y_loop.body.stmts
    assert isinstance(partitioned, IfThenElse)
    assert isinstance(fence, Evaluate) and fence.value.name == STORE_FENCE
    steady_y, edge_y = partitioned.then_case, partitioned.else_case
    # x is partitioned in y's steady state only: as in Halide, the edges of an outer
    # partitioned loop keep their inner loops whole (Partition.Auto)
    assert len(loops_named(body, "f.s0.x.x")) == 4
    assert len(loops_named(edge_y, "f.s0.x.x")) == 1
    prologue, steady, epilogue = loops_named(steady_y, "f.s0.x.x")
    assert not any(isinstance(n, IfThenElse) for n in walk_stmt(steady.body))
    assert clamps_of(steady.body) == []
    for tested in (prologue, epilogue):
        # the edges keep the clamps, and no copy of the fast path the steady state runs
        assert clamps_of(tested.body) != []
        assert not any(isinstance(n, IfThenElse) for n in walk_stmt(tested.body))


def test_a_serial_loop_is_three_loops():
    f, _, _ = stencil("serial")
    body = lower(pw.Pipeline(f)).lowered.body
    assert len(loops_named(body, "f.s0.y")) == 3  # prologue, steady state, epilogue
    assert len(loops_named(body, "f.s0.x")) == 5  # three parts in y's steady state, one in each edge


def test_always_partitions_inside_the_edges_of_outer_loops_too(rng):
    f, _, _ = stencil("vector", pw.Partition.Always)
    pipeline = pw.Pipeline(f)
    body = lower(pipeline).lowered.body
    assert len(loops_named(body, "f.s0.x.x")) == 6  # three x parts in y's steady body and in its edges' body
    image = rng.integers(-50, 50, (7, 40)).astype(np.int32)
    compare(pipeline, [40, 7], {"input": image})


def test_never_keeps_the_loop_whole(rng):
    f, _, _ = stencil("vector", pw.Partition.Never)
    pipeline = pw.Pipeline(f)
    body = lower(pipeline).lowered.body
    assert len(loops_named(body, "f.s0.x.x")) == 2  # one per y body: x itself not partitioned
    lets = {n.name for n in walk_stmt(body) if isinstance(n, LetStmt)}
    assert "f.s0.x.x.prologue_end" not in lets and "f.s0.y.prologue_end" in lets
    image = rng.integers(-50, 50, (5, 30)).astype(np.int32)
    compare(pipeline, [30, 5], {"input": image})


def test_never_partition_all_and_list_spelling():
    f, x, y = stencil("vector")
    f.never_partition_all()
    body = lower(pw.Pipeline(f)).lowered.body
    assert len(loops_named(body, "f.s0.y")) == 1 and len(loops_named(body, "f.s0.x.x")) == 1
    g, x, y = stencil("vector")
    g.never_partition([x, y])  # Halide's Python spelling: a list
    assert len(loops_named(lower(pw.Pipeline(g)).lowered.body, "f.s0.y")) == 1


def test_split_loops_inherit_the_policy():
    f, x, y = stencil("none")
    f.never_partition(x).split(x, x, pw.Var("xi"), 4)
    body = lower(pw.Pipeline(f)).lowered.body
    assert len(loops_named(body, "f.s0.x.x")) == 3  # one per y part
    assert len(loops_named(body, "f.s0.x.xi")) == 3


def test_always_partitions_or_fails():
    f, _, _ = stencil("vector", pw.Partition.Always)
    assert len(loops_named(lower(pw.Pipeline(f)).lowered.body, "f.s0.x.x")) == 6
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    g = pw.Func("g")
    g[x, y] = inp[x, y] * 2.0
    g.always_partition(y)
    with pytest.raises(ScheduleError, match=r"Func `g`.*Partition.Always on loop g.s0.y"):
        lower(pw.Pipeline(g))


def test_partition_policy_must_be_a_partition():
    f, x, _ = stencil("none")
    with pytest.raises(ScheduleError, match=r"Func `f`.*Partition.Auto"):
        f.partition(x, "never")
    with pytest.raises(ScheduleError, match="no dimension named q"):
        f.partition(pw.Var("q"), pw.Partition.Never)


def test_halide_spellings_match_halide():
    import halide as hl

    assert pw.Partition.Auto is pw.Partition.AUTO
    assert pw.Partition.Never is pw.Partition.NEVER
    assert pw.Partition.Always is pw.Partition.ALWAYS
    assert {m.lower() for m in ("Auto", "Never", "Always")} == {n.lower() for n in hl.Partition.__members__}


@pytest.mark.parametrize("size", [(3, 2), (16, 5), (41, 7)])
def test_constant_exterior_select_is_partitioned(size, rng):
    """The range test of constant_exterior is a select; with 2 pixels of exterior on each
    side the loop has all three parts, and on small images no steady state."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Float(32), 2, "input")
    b = pw.BoundaryConditions.constant_exterior(inp, 0.5)
    f = pw.Func("f")
    f[x, y] = b[x - 2, y] + b[x + 2, y - 1]
    f.split(x, x, pw.Var("xi"), 4).parallel(y)
    pipeline = pw.Pipeline(f)
    w, h = size
    image = rng.random((h, w), dtype=np.float32)
    compare(pipeline, [w + 4 if w >= 4 else 4, h], {"input": image})


def test_a_clamp_of_a_value_read_from_memory_is_not_partitioned(rng):
    """Fuzzer seed 181006793: the clamped coordinate adds a value that the loop itself
    computes into a buffer (s2, computed at s3's x); solving for it outside the loop read
    stale memory and the steady state indexed s1 out of bounds."""
    x, y = pw.Var("x"), pw.Var("y")
    image = pw.ImageParam(pw.UInt(16), 2, "image")
    s1, s2, s3 = pw.Func("s1"), pw.Func("s2"), pw.Func("s3")
    s1[x, y] = pw.BoundaryConditions.repeat_image(image)[x, y]
    s2[x, y] = pw.u16(pw.abs(pw.i32(s1[x, y]) - 500))
    s3[x, y] = s1[pw.clamp(x + pw.i32(s2[x, y] % 5) - 2, 0, 39), y]
    s2.compute_at(s3, x).store_at(s3, y)
    s1.compute_at(s3, y)
    pipeline = pw.Pipeline(s3)
    lets = {n.name for n in walk_stmt(lower(pipeline).lowered.body) if isinstance(n, LetStmt)}
    assert "s3.s0.x.prologue_end" not in lets
    fn = pipeline.compile(level="fast", checked=True)
    for w, h in ((1, 1), (9, 2), (45, 3)):
        inputs = {"image": rng.integers(0, 1000, (h, w)).astype(np.uint16)}
        np.testing.assert_array_equal(fn([w, h], inputs), pipeline.realize_reference([w, h], inputs))


@pytest.mark.parametrize("p", [3, 4])
def test_a_loop_vectorized_in_one_specialization_and_serial_in_the_other(p, rng):
    """The branches of a specialized producer bind its x as a vector LetStmt in one branch
    and as a serial loop in the other, in the same loop body: that name has no single value
    to put into a boundary test (found by the schedule fuzzer: an internal error)."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(16), 2, "input")
    q = pw.Param(pw.Int(32), "p", 3)
    k = pw.Param(pw.UInt(16), "k", 1)
    edge = pw.BoundaryConditions.repeat_image(inp)
    g, h, out = pw.Func("g"), pw.Func("h"), pw.Func("out")
    g[x, y] = pw.max(edge[x + 2, y - 1], edge[x - 2, y + 1])
    h[x, y] = pw.select(g[x, y] > k * 100, g[x, y] - k, g[x, y])
    out[x, y] = h[x - 2, y - 2] + h[x + 2, y - 1] + h[x, y + 2]
    out.split(x, pw.Var("xo"), pw.Var("xi"), 2)
    h.compute_at(out, pw.Var("xi"))
    g.compute_at(out, y)
    h.specialize(q >= 4).vectorize(x, 4)
    data = rng.integers(0, 1000, (13, 7)).astype(np.uint16)
    compare(pw.Pipeline(out), [11, 6], {"input": data, "p": p})


def shifted_vectors() -> pw.Func:
    """g(x, y) = a 3-tap stencil of the input in 16-lane vectors; the last vector of each
    row is shifted inwards (ShiftInwards) to end at the row's end."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    g = pw.Func("g")
    g[x, y] = inp[x, y] + 3 * inp[x + 1, y] - inp[x + 2, y]
    g.vectorize(x, 16)
    return g


def test_a_shift_inwards_start_partitions_the_innermost_loop():
    """As Halide's likely_if_innermost: the vector loop runs its steady state with the
    start unclamped (affine in the loop variable) and the shifted vectors after it."""
    body = lower(pw.Pipeline(shifted_vectors())).lowered.body
    steady, epilogue = loops_named(body, "g.s0.x.x")
    assert not [n for e in stmt_exprs(steady.body) for n in walk(e) if isinstance(n, E.Min)]
    assert [n for e in stmt_exprs(epilogue.body) for n in walk(e) if isinstance(n, E.Min)]
    assert len(loops_named(body, "g.s0.y")) == 1  # not around inner loops


@pytest.mark.parametrize("width", [16, 17, 31, 32, 33, 47, 64])
@pytest.mark.parametrize("mins", [(0, 0), (-7, 2), (5, -3)])
def test_shift_inwards_partitions_match_the_reference(width, mins, rng):
    """Widths that leave the epilogue empty (multiples of 16) or not, and one vector only
    (16: the steady state is the whole row), over outputs at several origins."""
    pipeline = pw.Pipeline(shifted_vectors())
    fn = pipeline.compile(level="fast")
    image = pw.Buffer(rng.integers(-1000, 1000, (3, width + 2)).astype(np.int32))
    image.set_min([mins[0], mins[1]])
    ours = fn([width, 3], {"input": image}, mins=list(mins))
    np.testing.assert_array_equal(ours, pipeline.realize_reference([width, 3], {"input": image}, mins=list(mins)))


def test_a_shift_inwards_start_of_an_outer_loop_leaves_it_whole(rng):
    x, y, yi = pw.Var("x"), pw.Var("y"), pw.Var("yi")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    g = pw.Func("g")
    g[x, y] = inp[x, y] * 2
    g.split(y, y, yi, 4).vectorize(x, 8)
    pipeline = pw.Pipeline(g)
    body = lower(pipeline).lowered.body
    assert len(loops_named(body, "g.s0.y.y")) == 1
    assert len(loops_named(body, "g.s0.x.x")) == 2
    compare(pipeline, [19, 7], {"input": rng.integers(-50, 50, (7, 19)).astype(np.int32)})


@pytest.mark.parametrize(("height", "h"), [(9, 9), (2, 9), (9, 3), (1, 1)])
def test_a_row_test_inside_a_vectorized_loop_partitions_the_rows(height, h, rng):
    """`select(1 <= y <= h - 2, ...)` inside a loop vectorized in x is a broadcast of the
    row test: the y loop is partitioned on it (lifted C stencils whose rows start at 1), and
    every part, empty or not, gives the reference's values."""
    x, y = pw.Var("x"), pw.Var("y")
    inp = pw.ImageParam(pw.UInt(8), 2, "inp")
    rows = pw.Param(pw.Int(32), "h", h)
    f = pw.Func("f")
    f[x, y] = pw.select((y >= 1) & (y <= rows - 2), inp[x, pw.max(y - 1, 0)], pw.u8(7))
    f.vectorize(x, 16)
    pipeline = pw.Pipeline(f)
    row_loops = loops_named(lower(pipeline).lowered.body, "f.s0.y")
    assert len(row_loops) == 3
    steady = row_loops[1]
    assert not any(isinstance(n, E.Select) for e in stmt_exprs(steady.body) for n in walk(e))
    image = rng.integers(0, 255, (max(height, 1), 40)).astype(np.uint8)
    compare(pipeline, [40, height], {"inp": image, "h": h})


def fused_gradients(fuse: bool = True, equal_ranges: bool = True) -> pw.Func:
    """Harris's shape: gray stored per strip and computed per row, and two gradients of it
    computed together (compute_with) over equal ranges (or over ranges one apart)."""
    x, y, yi = pw.Var("x"), pw.Var("y"), pw.Var("yi")
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    gray, ix, iy, out = pw.Func("gray"), pw.Func("Ix"), pw.Func("Iy"), pw.Func("out")
    gray[x, y] = inp[x + 2, y + 2] * 3
    ix[x, y] = gray[x + 1, y] - gray[x - 1, y]
    iy[x, y] = gray[x, y + 1] - gray[x, y - 1]
    shift = 0 if equal_ranges else 1
    out[x, y] = ix[x, y] * iy[x, y] + ix[x, y - 1] - iy[x + shift, y - 1 + shift]
    out.split(y, y, yi, 8).parallel(y).vectorize(x, 8)
    for f in (gray, ix, iy):
        f.store_at(out, y).compute_at(out, yi).vectorize(x, 8)
    if fuse:
        ix.compute_with(iy, x)
    return out


def test_fused_members_over_the_whole_fused_range_need_no_guards():
    """The guard of each member of a compute_with group tests the member's own range; where
    that range is the whole fused loop's, the guard always holds and is dropped from every
    copy partitioning makes (the fused y loop is then not partitioned at all)."""
    body = lower(pw.Pipeline(fused_gradients())).lowered.body
    (fused_y,) = loops_named(body, "Iy.s0.y")
    assert not any(isinstance(n, IfThenElse) for n in walk_stmt(fused_y))
    # the x loop keeps its ShiftInwards epilogue: a steady state and one edge
    assert len(loops_named(fused_y, "Iy.s0.x.x")) == 2


@pytest.mark.parametrize("width, height", [(8, 8), (9, 8), (23, 9), (40, 17), (64, 16)])
def test_fused_members_without_guards_match_the_reference(width, height, rng):
    """Widths with and without a shifted last vector, heights with and without a shifted
    last strip; the same schedule without compute_with alongside."""
    for fuse, equal_ranges in ((True, True), (True, False), (False, True)):
        pipeline = pw.Pipeline(fused_gradients(fuse, equal_ranges))
        image = rng.integers(-1000, 1000, (height + 5, width + 5)).astype(np.int32)
        compare(pipeline, [width, height], {"input": image})


def test_a_test_of_a_rebound_name_is_kept():
    """`for v in [a, a + 10): let a = a + 5 in if (v >= a) ...`: the inner a is another
    value, so the test is not the loop's own range and stays (in the partitioned edges)."""
    from pixelweave.engine.ir.types import Int
    from pixelweave.engine.lower.partition_loops import partition_loops
    from pixelweave.engine.stmt import Evaluate, ForType

    i32 = Int(32)
    v, a = E.Variable("v", i32), E.Variable("a", i32)
    guarded = IfThenElse(E.GE(v, a), Evaluate(E.Call(i32, "g", (v,), "image")))
    loop = For("v", a, E.Const(i32, 10), ForType.SERIAL, LetStmt("a", E.Add(a, E.Const(i32, 5)), guarded))
    out = partition_loops(LetStmt("a", E.Variable("n", i32, "param"), loop), {})
    tests = [n for n in walk_stmt(out) if isinstance(n, IfThenElse)]
    assert tests and all(str(t.condition) == str(E.GE(v, a)) for t in tests)
