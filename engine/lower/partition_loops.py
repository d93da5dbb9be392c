"""Pass: loop partitioning (Halide's PartitionLoops).

A loop whose body tests its own variable against bounds that do not change inside it,
e.g. the clamps of repeat_edge (`max(min(e, hi), lo)`), the range test of a constant
exterior (`select(lo <= e && e <= hi, inside, outside)`), the per-vector test of the
boundary fast path or a tail guard (`if (...) {...}`), is split into three loops over
consecutive ranges of its variable:

    for v in [min, steady_min):        original body     (prologue)
    for v in [steady_min, steady_end): body, tests gone  (steady state)
    for v in [steady_end, end):        original body     (epilogue)

The steady range is one where every such test is known to hold: the pass solves each
test for the variable (sufficient bounds, from the monotone structure of the expression:
sums, products and floor quotients by positive constants, min, max, ramps), and
intersects the ranges. In it, clamps become their argument, range tests become true and
guarded statements run unguarded. Any range may be empty; the steady range is clamped
into the loop's, so the three loops always cover the original iterations exactly once, in
order. In the prologue and epilogue, a boundary fast path whose test the steady state
takes over keeps only its general case (the original code it was made from).

A parallel loop stays one loop whose iterations choose their body, as in Halide:

    parallel for v in [min, end): if (prologue_end <= v < steady_end) steady else edges

(two copies of the body instead of three, and one parallel dispatch instead of three,
each of which would wait for the one before).

Loops are partitioned innermost first. The policy of each loop comes from the schedule
(`Func.partition(v, Partition.Auto|Never|Always)`); ALWAYS on a loop with nothing to
partition is an error, as in Halide.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Int
from pixelweave.engine.ir.visit import find_variables, mutate, substitute, walk
from pixelweave.engine.lower.simplify import as_const_int, simplify
from pixelweave.engine.lower.variable_names import VariableNames
from pixelweave.engine.schedule import Partition
from pixelweave.engine.stmt import Broadcast, For, ForType, IfThenElse, LetStmt, Ramp, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator, reads_memory, stmt_exprs, walk_stmt

I32 = Int(32)
PARTITIONABLE = (ForType.SERIAL, ForType.PARALLEL)
MAX_BODY_STATEMENTS = 2000  # a larger body is not tripled (code size), as a guard against blow-up


def partition_loops(stmt: Stmt, policies: dict[str, tuple[Partition, str]]) -> Stmt:
    """Partition every serial or parallel loop whose policy allows it. `policies` maps a
    loop name to its policy and a description of where it was set (for error messages);
    loops not named there are AUTO."""
    partitioner = _Partitioner(policies)
    _pass_state.variable_names = VariableNames()
    _pass_state.expr_tests = {}
    try:
        out = partitioner.mutate(stmt)
    finally:
        _pass_state.variable_names = None
        _pass_state.expr_tests = None
    for name, (policy, where) in policies.items():
        if policy == Partition.ALWAYS and name not in partitioner.partitioned:
            raise ScheduleError(
                f"{where} sets Partition.Always on loop {name}, but that loop has no boundary condition or tail "
                "guard that depends on it, so there is nothing to partition (or the loop is vectorized, unrolled "
                "or mapped to the GPU, so it is not a loop any more); use Partition.Auto or Partition.Never"
            )
    return out


@dataclass
class _Bounds:
    """A sufficient condition on the loop variable v: lows[i] <= v <= highs[j] for all i, j,
    and every loop-invariant condition in `requires` true."""

    lows: list[E.Expr] = field(default_factory=list)
    highs: list[E.Expr] = field(default_factory=list)
    requires: list[E.Expr] = field(default_factory=list)

    def also(self, other: _Bounds) -> _Bounds:
        return _Bounds(self.lows + other.lows, self.highs + other.highs, self.requires + other.requires)


class _Partitioner(StmtMutator):
    """`in_tail`: mutating the prologue or epilogue of an outer partitioned loop, where, as
    in Halide, only loops with Partition.Always are partitioned (the edges are few
    iterations, and partitioning inside them too multiplied the code: a bilateral grid's
    histogram, four nested partitioned loops, was 81 copies of its body instead of 9)."""

    def __init__(
        self, policies: dict[str, tuple[Partition, str]], partitioned: set[str] | None = None, in_tail: bool = False
    ) -> None:
        self.policies = policies
        self.partitioned: set[str] = set() if partitioned is None else partitioned
        self.in_tail = in_tail

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        body = _without_implied_tests(self.mutate(s.body), s)
        loop = s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)
        policy = self.policies.get(s.name, (Partition.AUTO, ""))[0]
        if policy == Partition.NEVER or s.for_type not in PARTITIONABLE:
            return loop
        if self.in_tail and policy != Partition.ALWAYS:
            return loop
        if s.min.type() != I32 or s.extent.type() != I32:
            return loop
        tail = _Partitioner(self.policies, self.partitioned, in_tail=True)
        result = _partition(loop, lambda: _without_implied_tests(tail.mutate(s.body), s))
        if result is None:
            return loop
        self.partitioned.add(s.name)
        return result


def _partition(loop: For, tail_body: Callable[[], Stmt]) -> Stmt | None:
    """The loop as prologue, steady state and epilogue, or None if nothing in its body tests
    its variable; `tail_body()` gives the body the prologue and epilogue run."""
    v = loop.name
    body = loop.body
    if sum(1 for _ in walk_stmt(body)) > MAX_BODY_STATEMENTS:
        return None
    lets, inner = _inner_bindings(body, v)
    bounds = _Bounds()
    solved: dict[object, object] = {}  # expression key or if statement id -> its steady-state form
    tried: set[object] = set()  # a test met again (the same tap of a stencil) is solved once
    # as Halide's likely_if_innermost: a ShiftInwards start partitions the innermost loop only
    innermost = not any(isinstance(n, For) for n in walk_stmt(body))
    for kind, node, cond in _candidates(body):
        if kind == "shift" and not innermost:
            continue
        key = id(node) if kind == "if" else node.key()
        if key in tried:
            continue
        tried.add(key)
        resolved = _resolve(cond, lets)
        if resolved is None or _uses(resolved, inner) or not _uses(resolved, {v}) or reads_memory(resolved):
            continue
        found = _solve_condition(resolved, v)
        if found is None:
            continue
        if kind == "select" and not (found.lows and found.highs):
            continue  # a select on one side of v only is not a boundary condition
        if kind == "shift" and (found.lows or found.requires or not found.highs):
            continue  # not a start growing with v against a fixed last start
        bounds = bounds.also(found)
        solved[key] = _steady_value(kind, node)
    if not solved:
        return None
    start = loop.min
    end = simplify(loop.min + loop.extent)
    # Bounds the loop's own range already meets need no prologue or epilogue (a member of
    # a compute_with group whose range is the whole fused loop's).
    bounds.lows = [lo for lo in bounds.lows if not _at_most(simplify(lo - start), 0)]
    bounds.highs = [hi for hi in bounds.highs if not _at_most(simplify(end - hi), 1)]
    if not (bounds.lows or bounds.highs or bounds.requires):
        return For(v, loop.min, loop.extent, loop.for_type, _steady(body, solved))
    prologue_end = E.Variable(f"{v}.prologue_end", I32)
    steady_end = E.Variable(f"{v}.steady_end", I32)
    low = start
    for lo in bounds.lows:
        low = E.Max(low, lo)
    low = simplify(E.Min(low, end))
    high = end
    for hi in bounds.highs:
        high = E.Min(high, E.Add(hi, E.int_const(1)))
    high = E.Max(high, prologue_end)
    if bounds.requires:
        ok = bounds.requires[0]
        for r in bounds.requires[1:]:
            ok = E.And(ok, r)
        high = E.Select(ok, high, prologue_end)
    high = simplify(high)
    steady_body = _steady(body, solved)
    edge_body = _without_fast_paths(tail_body(), solved)
    if loop.for_type == ForType.PARALLEL:
        # As in Halide: one parallel loop whose iterations choose their body, not three
        # loops each waiting for the one before (and two copies of the body, not three).
        var = E.Variable(v, I32)
        inside = E.And(E.LE(prologue_end, var), E.LT(var, steady_end))
        chosen = IfThenElse(inside, steady_body, edge_body)
        one_loop = For(v, start, loop.extent, loop.for_type, chosen)
        return LetStmt(prologue_end.name, low, LetStmt(steady_end.name, high, one_loop))
    loops = []
    if bounds.lows:
        loops.append(For(v, start, simplify(E.Sub(prologue_end, start)), loop.for_type, edge_body))
    loops.append(For(v, prologue_end, simplify(E.Sub(steady_end, prologue_end)), loop.for_type, steady_body))
    if bounds.highs or bounds.requires:
        loops.append(For(v, steady_end, simplify(E.Sub(end, steady_end)), loop.for_type, edge_body))
    return LetStmt(prologue_end.name, low, LetStmt(steady_end.name, high, make_block(loops)))


def _without_implied_tests(body: Stmt, loop: For) -> Stmt:
    """body without the parts of its if conditions that the loop's own range makes true
    (`v >= min`, `v <= min + extent - 1`): the guards of a compute_with group's member
    whose range is the whole fused loop's. Dropped in every copy the partitioning makes,
    where the partitioning itself drops only the tests of its steady state. A bound that
    uses a name bound again between the loop and the test is a different value: kept."""
    v, first = loop.name, loop.min
    last = simplify(loop.min + loop.extent - 1)
    rebound: list[str] = []  # the names bound between the loop and the statement visited

    def is_v(e: E.Expr) -> bool:
        return isinstance(e, E.Variable) and e.name == v

    def same_meaning(e: E.Expr) -> bool:
        return not rebound or not any(x.name in rebound for x in find_variables(e))

    def implied(c: E.Expr) -> bool:
        if isinstance(c, (E.GE, E.LE)):
            low, high = (c.b, c.a) if isinstance(c, E.GE) else (c.a, c.b)
            if is_v(high):  # low <= v
                return _at_most(simplify(low - first), 0) and same_meaning(low)
            if is_v(low):  # v <= high
                return _at_most(simplify(last - high), 0) and same_meaning(high)
        return False

    def kept(cond: E.Expr) -> E.Expr | None:
        if isinstance(cond, E.And):
            a, b = kept(cond.a), kept(cond.b)
            if a is None or b is None:
                return b if a is None else a
            return cond if a is cond.a and b is cond.b else E.And(a, b)
        return None if implied(cond) else cond

    class _Implied(StmtMutator):
        def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
            cond = kept(s.condition)
            if cond is None:
                return self.mutate(s.then_case)
            return self.default(
                s if cond is s.condition else IfThenElse(cond, s.then_case, s.else_case, s.fast_path)
            )

        def visit_For(self, s: For) -> Stmt:  # noqa: N802
            return s if s.name == v else self._binding(s)

        def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
            return s if s.name == v else self._binding(s)

        def _binding(self, s: For | LetStmt) -> Stmt:
            rebound.append(s.name)
            try:
                return self.default(s)
            finally:
                rebound.pop()

    return _Implied().mutate(body)


def _at_most(e: E.Expr, bound: int) -> bool:
    value = as_const_int(e)
    return value is not None and value <= bound


def _without_fast_paths(body: Stmt, solved: dict[object, object]) -> Stmt:
    """The body for the prologue and epilogue: a boundary fast path whose test this loop's
    steady state takes over runs its general case alone there. Near the edges the test
    mostly fails, and a copy of the fast case in each edge loop multiplied the code LLVM
    compiles (a 19-tap blur's kernel: 15 copies of its body instead of 9)."""

    class _General(StmtMutator):
        def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
            if s.fast_path and id(s) in solved:
                return self.mutate(s.else_case)
            return self.default(s)

    return _General().mutate(body)


def _inner_bindings(body: Stmt, v: str) -> tuple[dict[str, E.Expr | None], set[str]]:
    """The LetStmts inside the body (name -> value, None when the name is bound to two
    different values), and every name bound inside (loops, lets of either kind) that a
    test may not depend on after the lets are substituted."""
    lets: dict[str, E.Expr | None] = {}
    inner: set[str] = set()
    for node in walk_stmt(body):
        if isinstance(node, LetStmt):
            old = lets.get(node.name, node.value)
            lets[node.name] = node.value if old is not None and old.key() == node.value.key() else None
        elif isinstance(node, For):
            inner.add(node.name)
    for e in stmt_exprs(body):
        inner.update(_tests_in(e)[1])
    # A name that is also a loop or an Expr Let inside (the branches of a specialized stage
    # bind one loop name as a vectorized LetStmt in one branch and a For in another) has no
    # single value either.
    for name in inner & lets.keys():
        lets[name] = None
    inner.update(name for name, value in lets.items() if value is None)
    return lets, inner


def _resolve(e: E.Expr, lets: dict[str, E.Expr | None]) -> E.Expr | None:
    """e with the body's lets substituted (innermost uses first), or None if it uses a name
    bound to several values."""
    for _ in range(64):
        names = {x.name for x in find_variables(e) if x.name in lets}
        if not names:
            return e
        if any(lets[n] is None for n in names):
            return None
        e = substitute(e, {n: lets[n] for n in names})
    return None


def _candidates(body: Stmt):
    """(kind, node, condition) for every test in the body: if statements, clamps and
    range-test selects; the condition is what must hold for the node to be dropped."""
    for node in walk_stmt(body):
        if isinstance(node, IfThenElse):
            yield "if", node, node.condition
    for e in stmt_exprs(body):
        yield from _tests_in(e)[0]
    for node in walk_stmt(body):
        if isinstance(node, LetStmt):
            for n in _shift_inwards_mins(node.value):
                yield "shift", n, E.LE(n.a, n.b)


def _tests_in(e: E.Expr) -> tuple[list[tuple[str, E.Expr, E.Expr]], list[str]]:
    """The clamp and select tests of expression e, in walk order, as _candidates yields
    them, and the names of the Lets in e. One walk per expression per pass: every loop of a
    nest walked the whole body below it again (a third of the pass on local Laplacian)."""
    cache = getattr(_pass_state, "expr_tests", None)
    hit = cache.get(id(e)) if cache is not None else None
    if hit is not None and hit[0] is e:
        return hit[1]
    tests: list[tuple[str, E.Expr, E.Expr]] = []
    let_names: list[str] = []
    for n in walk(e):
        parts = _clamp_parts(n)
        if parts is not None:
            arg, lo, hi = parts
            tests.append(("clamp", n, E.And(E.GE(arg, lo), E.LE(arg, hi))))
        elif isinstance(n, E.Select) and n.cond.type().is_bool():
            tests.append(("select", n, n.cond))
        if isinstance(n, E.Let):
            let_names.append(n.name)
    if cache is not None:
        cache[id(e)] = (e, (tests, let_names))  # e kept alive: its id is not reused meanwhile
    return tests, let_names


def _shift_inwards_mins(value: E.Expr):
    """The `min(start, last_start)` of a ShiftInwards split in a loop variable's binding
    (`let x = min(min + x.x * f, max - f + 1) + x.xi`, vectorized: a broadcast of it plus a
    ramp): the last vector or block is shifted back to end at the loop's end. As Halide's
    likely tag on it, it partitions the loop into a steady state where the min is its start
    (an affine index, so addresses step by a constant) and an epilogue."""
    while isinstance(value, E.Add):
        if isinstance(value.b, (E.Min, Broadcast)):
            value = value.b
        else:
            value = value.a
    while isinstance(value, Broadcast):
        value = value.value
    if isinstance(value, E.Min) and value.type() == I32:
        yield value


def _clamp_parts(n: E.Expr) -> tuple[E.Expr, E.Expr, E.Expr] | None:
    """(e, lo, hi) for max(min(e, hi), lo) on integers."""
    if isinstance(n, E.Max) and isinstance(n.a, E.Min) and not n.type().is_float():
        return n.a.a, n.b, n.a.b
    return None


def _steady_value(kind: str, node):
    if kind == "if":
        return node.then_case
    if kind == "clamp":
        return node.a.a
    if kind == "shift":
        return node.a
    return node.true_value


def _steady(body: Stmt, solved: dict[tuple, object]) -> Stmt:
    """The body with every solved test replaced by what it is in the steady range."""

    def fn(n: E.Expr) -> E.Expr | None:
        hit = solved.get(n.key()) if isinstance(n, (E.Max, E.Min, E.Select)) else None
        return mutate(hit, fn) if hit is not None else None

    class _Steady(StmtMutator):
        def mutate_expr(self, e: E.Expr) -> E.Expr:
            return simplify(mutate(e, fn))

        def visit_IfThenElse(self, s: IfThenElse) -> Stmt:  # noqa: N802
            hit = solved.get(id(s))
            if hit is not None:
                return self.mutate(hit)
            return self.default(s)

    return _Steady().mutate(body)


# ------------------------------------------------------------------ solving for v


def _uses(e: E.Expr, names: set[str]) -> bool:
    known = getattr(_pass_state, "variable_names", None)
    if known is None:
        return any(x.name in names for x in find_variables(e))
    return not known(e).isdisjoint(names)


# This thread's pass's table of variable names (the editor lowers on two threads at once):
# the solver asks again and again which variables the same tests and bounds use.
_pass_state = threading.local()


def _scalar(e: E.Expr) -> E.Expr | None:
    """The scalar an invariant operand stands for (a broadcast's value), or None."""
    while isinstance(e, Broadcast):
        e = e.value
    return e if e.type().lanes == 1 else None


def _solve_condition(cond: E.Expr, v: str) -> _Bounds | None:
    """Sufficient bounds on v for cond to be true, or None if the pass cannot tell."""
    while isinstance(cond, Broadcast):  # a scalar test made a vector by vectorizing an inner loop
        cond = cond.value
    if isinstance(cond, E.And):
        a, b = _solve_condition(cond.a, v), _solve_condition(cond.b, v)
        return a.also(b) if a is not None and b is not None else None
    if not isinstance(cond, (E.GE, E.GT, E.LE, E.LT)):
        return None
    a, b = cond.a, cond.b
    if a.type().element_of() != I32:
        return None
    if _uses(b, {v}):
        if _uses(a, {v}):
            return None
        a, b = b, a
        cond = {E.GE: E.LE, E.GT: E.LT, E.LE: E.GE, E.LT: E.GT}[type(cond)](a, b)
    c = _scalar(b)
    if c is None:
        return None
    one = E.int_const(1)
    if isinstance(cond, E.GE):
        return _ge(a, c, v)
    if isinstance(cond, E.GT):
        return _ge(a, E.Add(c, one), v)
    if isinstance(cond, E.LE):
        return _le(a, c, v)
    return _le(a, E.Sub(c, one), v)


def _lane_extreme(e: E.Expr, least: bool) -> E.Expr | None:
    """The least (or greatest) lane of an invariant operand: a scalar, a broadcast, or a
    ramp with a constant stride (x16(base) + ramp(0, 1, 16), a vectorized variable), else None."""
    s = _scalar(e)
    if s is not None:
        return s
    if isinstance(e, Ramp):
        stride, base = as_const_int(e.stride), _scalar(e.base)
        if stride is None or base is None:
            return None
        last = simplify(base + e.stride * (e.lanes - 1))
        return base if (stride >= 0) == least else last
    return None


def _dep(e: E.Expr, v: str) -> bool:
    return _uses(e, {v})


def _positive_const(e: E.Expr) -> int | None:
    k = as_const_int(_scalar(e)) if _scalar(e) is not None else None
    return k if k is not None and k > 0 else None


def _ge(e: E.Expr, c: E.Expr, v: str) -> _Bounds | None:
    """Sufficient bounds on v for e >= c (c invariant)."""
    if not _dep(e, v):
        s = _scalar(e)
        return _Bounds(requires=[E.GE(s, c)]) if s is not None else None
    if isinstance(e, E.Variable):
        return _Bounds(lows=[c])
    if isinstance(e, Broadcast):
        return _ge(e.value, c, v)
    if isinstance(e, Ramp):
        stride = as_const_int(e.stride)
        if stride is None:
            return None
        return _ge(e.base if stride >= 0 else simplify(e.base + e.stride * (e.lanes - 1)), c, v)
    if isinstance(e, (E.Add, E.Sub)):
        a, b = e.a, e.b
        if _dep(a, v) and not _dep(b, v):
            # a + b >= c when a >= c - (b's least lane); a - b >= c when a >= c + (its greatest)
            s = _lane_extreme(b, least=isinstance(e, E.Add))
            if s is None:
                return None
            return _ge(a, E.Sub(c, s) if isinstance(e, E.Add) else E.Add(c, s), v)
        if _dep(b, v) and not _dep(a, v):
            s = _lane_extreme(a, least=True)
            if s is None:
                return None
            return _ge(b, E.Sub(c, s), v) if isinstance(e, E.Add) else _le(b, E.Sub(s, c), v)
        return None
    if isinstance(e, E.Mul):
        a, k = _term_and_factor(e, v)
        if a is None:
            return None
        return _ge(a, E.Div(E.Add(c, E.int_const(k - 1)), E.int_const(k)), v)  # ceil(c / k)
    if isinstance(e, E.Div):
        k = _positive_const(e.b)
        if k is None or _dep(e.b, v):
            return None
        return _ge(e.a, E.Mul(c, E.int_const(k)), v)
    if isinstance(e, E.Min):
        a, b = _ge(e.a, c, v), _ge(e.b, c, v)
        return a.also(b) if a is not None and b is not None else None
    if isinstance(e, E.Max):
        return _ge(e.a if _dep(e.a, v) else e.b, c, v)
    return None


def _le(e: E.Expr, c: E.Expr, v: str) -> _Bounds | None:
    """Sufficient bounds on v for e <= c (c invariant)."""
    if not _dep(e, v):
        s = _scalar(e)
        return _Bounds(requires=[E.LE(s, c)]) if s is not None else None
    if isinstance(e, E.Variable):
        return _Bounds(highs=[c])
    if isinstance(e, Broadcast):
        return _le(e.value, c, v)
    if isinstance(e, Ramp):
        stride = as_const_int(e.stride)
        if stride is None:
            return None
        return _le(simplify(e.base + e.stride * (e.lanes - 1)) if stride >= 0 else e.base, c, v)
    if isinstance(e, (E.Add, E.Sub)):
        a, b = e.a, e.b
        if _dep(a, v) and not _dep(b, v):
            # a + b <= c when a <= c - (b's greatest lane); a - b <= c when a <= c + (its least)
            s = _lane_extreme(b, least=isinstance(e, E.Sub))
            if s is None:
                return None
            return _le(a, E.Sub(c, s) if isinstance(e, E.Add) else E.Add(c, s), v)
        if _dep(b, v) and not _dep(a, v):
            s = _lane_extreme(a, least=False)
            if s is None:
                return None
            return _le(b, E.Sub(c, s), v) if isinstance(e, E.Add) else _ge(b, E.Sub(s, c), v)
        return None
    if isinstance(e, E.Mul):
        a, k = _term_and_factor(e, v)
        if a is None:
            return None
        return _le(a, E.Div(c, E.int_const(k)), v)  # floor(c / k)
    if isinstance(e, E.Div):
        k = _positive_const(e.b)
        if k is None or _dep(e.b, v):
            return None
        return _le(e.a, E.Add(E.Mul(c, E.int_const(k)), E.int_const(k - 1)), v)
    if isinstance(e, E.Max):
        a, b = _le(e.a, c, v), _le(e.b, c, v)
        return a.also(b) if a is not None and b is not None else None
    if isinstance(e, E.Min):
        return _le(e.a if _dep(e.a, v) else e.b, c, v)
    return None


def _term_and_factor(e: E.Mul, v: str) -> tuple[E.Expr | None, int]:
    """(a, k) for a * k or k * a with k a positive constant and a depending on v."""
    for a, b in ((e.a, e.b), (e.b, e.a)):
        k = _positive_const(b)
        if k is not None and _dep(a, v):
            return a, k
    return None, 0
