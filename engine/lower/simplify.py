"""Algebraic simplification of expressions: constant folding, canonical linear forms for
integer index arithmetic, and min/max/select cancellations.

Loop bounds and allocation sizes are built by composing intervals, so without this they
grow with every stage; with it, they stay as small as a person would write them. Integer
arithmetic on int32 is assumed not to overflow (as in Halide); narrower types fold with
wrap-around.
"""

from __future__ import annotations

import numpy as np
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.debug_calls import DEBUG_CALL_PREFIXES
from pixelweave.engine.ir.memoize_calls import MEMOIZE_CALL_PREFIXES
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.ir.visit import rebuild
from pixelweave.engine.reference import cast_array, divide, intrinsic, modulo

I32 = Int(32)


def const(t: Type, v: int | float) -> E.Const:
    return E.Const(t, v)


def _fold_binary(e: E.BinaryOp, a: E.Const, b: E.Const) -> E.Const | None:
    t = a.type()
    x = np.asarray(a.value, dtype=t.numpy())
    y = np.asarray(b.value, dtype=t.numpy())
    with np.errstate(all="ignore"):
        if t.is_bool() and isinstance(e, (E.Add, E.Sub)):
            return const(t, bool(x != y))  # one-bit arithmetic wraps: + and - are xor
        if isinstance(e, E.Add):
            r = np.add(x, y, dtype=t.numpy())
        elif isinstance(e, E.Sub):
            r = np.subtract(x, y, dtype=t.numpy())
        elif isinstance(e, E.Mul):
            r = np.multiply(x, y, dtype=t.numpy())
        elif isinstance(e, E.Div):
            r = divide(x, y, t)
        elif isinstance(e, E.Mod):
            r = modulo(x, y, t)
        elif isinstance(e, E.Min):
            r = np.minimum(x, y)
        elif isinstance(e, E.Max):
            r = np.maximum(x, y)
        elif isinstance(e, E.EQ):
            return const(e.type(), bool(x == y))
        elif isinstance(e, E.NE):
            return const(e.type(), bool(x != y))
        elif isinstance(e, E.LT):
            return const(e.type(), bool(x < y))
        elif isinstance(e, E.LE):
            return const(e.type(), bool(x <= y))
        elif isinstance(e, E.GT):
            return const(e.type(), bool(x > y))
        elif isinstance(e, E.GE):
            return const(e.type(), bool(x >= y))
        elif isinstance(e, E.And):
            return const(e.type(), bool(x) and bool(y))
        elif isinstance(e, E.Or):
            return const(e.type(), bool(x) or bool(y))
        else:
            return None
    value = r.item()
    if t.is_float() and not np.isfinite(value):
        return None
    return const(t, value)


# ---------------------------------------------------------------------------- linear forms


def _linear(e: E.Expr) -> tuple[dict[tuple, list], int] | None:
    """e as sum(coeff * term) + constant, for int32 Add/Sub/Mul-by-constant trees.
    Remembered by structure (bounds compare the same operands pairwise many times); the
    result is shared, so callers never modify it."""
    t = e.type()
    if t is not I32 and t != I32:
        return None
    key = e.key()
    hit = _linear_cache.get(key)
    if hit is None:
        hit = _linear_cache[key] = _linear_form(e)
        if len(_linear_cache) > CACHE_LIMIT:
            _linear_cache.clear()
    return hit


_linear_cache: dict[tuple, tuple[dict[tuple, list], int]] = {}


def _linear_form(e: E.Expr) -> tuple[dict[tuple, list], int]:
    terms: dict[tuple, list] = {}
    total = 0

    def go(node: E.Expr, scale: int) -> None:
        nonlocal total
        if isinstance(node, E.Const):
            total += scale * node.value
        elif isinstance(node, E.Add):
            go(node.a, scale)
            go(node.b, scale)
        elif isinstance(node, E.Sub):
            go(node.a, scale)
            go(node.b, -scale)
        elif isinstance(node, E.Mul) and isinstance(node.b, E.Const):
            go(node.a, scale * node.b.value)
        elif isinstance(node, E.Mul) and isinstance(node.a, E.Const):
            go(node.b, scale * node.a.value)
        else:
            k = node.key()
            slot = terms.get(k)
            if slot is None:
                terms[k] = [node, scale]
            else:
                slot[1] += scale

    go(e, 1)
    go = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)
    return terms, total


def _from_linear(terms: dict[tuple, list], total: int) -> E.Expr:
    pos: list[E.Expr] = []
    neg: list[E.Expr] = []
    for node, coeff in terms.values():
        if coeff == 0:
            continue
        if coeff > 0:
            pos.append(node if coeff == 1 else E.Mul(node, const(I32, coeff)))
        else:
            neg.append(node if coeff == -1 else E.Mul(node, const(I32, -coeff)))
    result: E.Expr | None = None
    for p in pos:
        result = p if result is None else E.Add(result, p)
    for n in neg:
        result = E.Sub(result if result is not None else const(I32, 0), n)
    if result is None:
        return const(I32, total)
    if total > 0:
        return E.Add(result, const(I32, total))
    if total < 0:
        return E.Sub(result, const(I32, -total))
    return result


def constant_difference(a: E.Expr, b: E.Expr) -> int | None:
    """a - b when it is a known constant (both int32 linear forms)."""
    la, lb = _linear(a), _linear(b)
    if la is None or lb is None:
        return None
    ta, ca = la
    tb, cb = lb
    keys = set(ta) | set(tb)
    for k in keys:
        if (ta[k][1] if k in ta else 0) != (tb[k][1] if k in tb else 0):
            return None
    return ca - cb


def _canonical_linear(e: E.Expr) -> E.Expr:
    lin = _linear(e)
    if lin is None:
        return e
    terms, total = lin
    return _from_linear(terms, total)


# ---------------------------------------------------------------------------- simplifier


def simplify(e: E.Expr) -> E.Expr:
    """A simpler expression with the same value."""
    # Most calls ask about a leaf or about a structure already simplified: answered here,
    # before making the memo and closure of a walk (what go below does first).
    if not e.children():
        return e
    hit = _cache.get(e.key())
    if hit is not None:
        return hit
    memo: dict[int, E.Expr] = {}

    def go(node: E.Expr) -> E.Expr:
        hit = memo.get(id(node))
        if hit is None:
            children = node.children()
            if not children:
                return node
            key = node.key()
            hit = _cache.get(key)
            if hit is None:
                if _is_linear_node(node):
                    hit = _simplify_linear_chain(node, go)
                else:
                    if len(children) == 2:
                        hit = _simplify_node(rebuild(node, (go(children[0]), go(children[1]))))
                    else:
                        hit = _simplify_node(rebuild(node, tuple([go(c) for c in children])))
                if len(_cache) > CACHE_LIMIT:
                    _cache.clear()
                _cache[key] = hit
            memo[id(node)] = hit
        return hit

    try:
        return go(e)
    finally:
        # A closure that calls itself holds itself through its cell: a reference cycle that
        # only the cycle collector frees, with its memo and every node the memo holds.
        # Lowering local Laplacian left ~100,000 such objects, and the collector's time in
        # it was ~90 ms (~57 ms with the cells emptied, as here, in every recursive closure).
        go = None


# Lowering simplifies the same subexpressions many times (every interval built from a
# let's value repeats it); results are remembered by structure.
_cache: dict[tuple, E.Expr] = {}
CACHE_LIMIT = 200_000


def clear_simplify_cache() -> None:
    _cache.clear()
    _linear_cache.clear()


def _is_linear_node(node: E.Expr) -> bool:
    t = node.type()
    if t is not I32 and t != I32:  # Int(32) is one shared object: identity answers first
        return False
    if isinstance(node, (E.Add, E.Sub)):
        return True
    return isinstance(node, E.Mul) and (isinstance(node.a, E.Const) or isinstance(node.b, E.Const))


def _simplify_linear_chain(node: E.Expr, go) -> E.Expr:
    """A whole int32 sum of scaled terms at once: each non-linear leaf is simplified once
    and the sum rebuilt canonically (so chains cost linear time, not quadratic)."""
    terms: dict[tuple, list] = {}
    total = 0

    def add_term(leaf: E.Expr, scale: int) -> None:
        nonlocal total
        if isinstance(leaf, E.Const):
            total += scale * leaf.value
            return
        k = leaf.key()
        slot = terms.get(k)
        if slot is None:
            terms[k] = [leaf, scale]
        else:
            slot[1] += scale

    def visit(n: E.Expr, scale: int) -> None:
        if _is_linear_node(n):
            if isinstance(n, E.Add):
                visit(n.a, scale)
                visit(n.b, scale)
            elif isinstance(n, E.Sub):
                visit(n.a, scale)
                visit(n.b, -scale)
            elif isinstance(n.b, E.Const):
                visit(n.a, scale * n.b.value)
            else:
                visit(n.b, scale * n.a.value)
            return
        leaf = go(n)
        lin = _linear(leaf) if _is_linear_node(leaf) else None
        if lin is None:
            add_term(leaf, scale)
            return
        sub_terms, sub_total = lin
        total_add = sub_total * scale
        for t_node, coeff in sub_terms.values():
            add_term(t_node, coeff * scale)
        nonlocal_total_add(total_add)

    def nonlocal_total_add(v: int) -> None:
        nonlocal total
        total += v

    visit(node, 1)
    visit = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)
    total = ((total + (1 << 31)) % (1 << 32)) - (1 << 31)
    return _from_linear(terms, total)


def _is_const(e: E.Expr, v: int | float | None = None) -> bool:
    return isinstance(e, E.Const) and (v is None or e.value == v)


def _simplify_node(e: E.Expr) -> E.Expr:  # noqa: C901 - one rule family per node type
    t = e.type()
    if t.is_vector():
        return _simplify_vector(e)
    if isinstance(e, E.Cast):
        v = e.value
        if v.type() == t:
            return v
        if isinstance(v, E.Const) and not v.type().is_vector():
            return const(t, cast_array(np.asarray(v.value, dtype=v.type().numpy()), t).item())
        return e
    if isinstance(e, E.BinaryOp):
        a, b = e.a, e.b
        if isinstance(a, E.Const) and isinstance(b, E.Const):
            folded = _fold_binary(e, a, b)
            if folded is not None:
                return folded
        if isinstance(e, (E.Add, E.Sub, E.Mul)) and t == I32:
            if isinstance(e, E.Mul) and not (_is_const(a) or _is_const(b)):
                return e
            return _canonical_linear(e)
        if isinstance(e, E.Add):
            if _is_const(b, 0):
                return a
            if _is_const(a, 0):
                return b
        elif isinstance(e, E.Sub):
            if _is_const(b, 0):
                return a
            if a.same_as(b) and not t.is_float():
                return const(t, 0)
        elif isinstance(e, E.Mul):
            if _is_const(b, 1):
                return a
            if _is_const(a, 1):
                return b
            if (_is_const(b, 0) or _is_const(a, 0)) and not t.is_float():
                return const(t, 0)
        elif isinstance(e, E.Div):
            if _is_const(b, 1) or (_is_const(a, 0) and not t.is_float()):
                return a
            if t == I32 and isinstance(b, E.Const) and b.value > 0:
                lin = _linear(a)
                if lin is not None:
                    terms, total = lin
                    c = b.value
                    if all(coeff % c == 0 for _, coeff in terms.values()):
                        # (c*k*x + t) / c == k*x + t / c exactly (Euclidean, c > 0).
                        scaled = {k: [n, coeff // c] for k, (n, coeff) in terms.items()}
                        return _from_linear(scaled, total // c)
                    nested = _nested_division(terms, total, c)
                    if nested is not None:
                        return nested
        elif isinstance(e, E.Mod):
            if (_is_const(b, 1) or _is_const(a, 0)) and not t.is_float():
                return const(t, 0)
            if t == I32 and isinstance(b, E.Const) and b.value > 0:
                lin = _linear(a)
                if lin is not None:
                    terms, total = lin
                    c = b.value
                    if all(coeff % c == 0 for _, coeff in terms.values()):
                        return const(t, total % c)
        elif isinstance(e, (E.Min, E.Max)):
            return _simplify_min_max(e)
        elif isinstance(e, E.Compare):
            return _simplify_compare(e)
        elif isinstance(e, E.And):
            if _is_const(a):
                return b if a.value else a
            if _is_const(b):
                return a if b.value else b
            if a.same_as(b):
                return a
        elif isinstance(e, E.Or):
            if _is_const(a):
                return a if a.value else b
            if _is_const(b):
                return b if b.value else a
            if a.same_as(b):
                return a
        return e
    if isinstance(e, E.Not):
        if isinstance(e.a, E.Const):
            return const(t, not e.a.value)
        if isinstance(e.a, E.Not):
            return e.a.a
        return e
    if isinstance(e, E.Select):
        if isinstance(e.cond, E.Const):
            return e.true_value if e.cond.value else e.false_value
        if e.true_value.same_as(e.false_value):
            return e.true_value
        return e
    if isinstance(e, E.Let):
        if isinstance(e.value, (E.Const, E.Variable)):
            from pixelweave.engine.ir.visit import substitute

            return simplify(substitute(e.body, {e.name: e.value}))
        return e
    if isinstance(e, E.Call) and e.call_kind == "intrinsic" and all(isinstance(a, E.Const) for a in e.args):
        if t.is_vector() or e.name in ("lerp",) or e.name.startswith(DEBUG_CALL_PREFIXES + MEMOIZE_CALL_PREFIXES):
            return e
        with np.errstate(all="ignore"):
            values = [np.asarray(a.value, dtype=a.type().numpy()) for a in e.args]
            r = intrinsic(e.name, values, t)
        value = np.asarray(r).item()
        if isinstance(value, float) and not np.isfinite(value):
            return e
        return const(t, value)
    return e


def _nested_division(terms: dict[tuple, list], total: int, c: int) -> E.Expr | None:
    """(x / d + t) / c as (x + d*t) / (d*c) (floor division, d and c positive: exact).
    A pyramid's sizes are such chains (`((((w / 2) + 1) / 2) + 1) / 2`), one division per
    level; as one division each, bounds stay short along a deep pyramid."""
    if len(terms) != 1:
        return None
    ((node, coeff),) = terms.values()
    if coeff != 1 or not isinstance(node, E.Div) or not isinstance(node.b, E.Const) or node.b.value <= 0:
        return None
    d = node.b.value
    if d * c >= 1 << 30 or abs(d * total) >= 1 << 30:
        return None
    return simplify(E.Div(E.Add(node.a, const(I32, d * total)), const(I32, d * c)))


def _simplify_min_max(e: E.Expr) -> E.Expr:
    a, b = e.a, e.b
    is_min = isinstance(e, E.Min)
    if a.same_as(b):
        return a
    d = constant_difference(a, b) if e.type() == I32 else None
    if d is not None:
        if is_min:
            return a if d <= 0 else b
        return a if d >= 0 else b
    t = e.type()
    if not t.is_float() and isinstance(b, E.Const):
        if is_min and b.value >= t.max():
            return a
        if not is_min and b.value <= t.min():
            return a
    # min(min(x, c1), c2) -> min(x, min(c1, c2))
    if type(a) is type(e) and isinstance(a.b, E.Const) and isinstance(b, E.Const):
        inner = _fold_binary(e, a.b, b)
        if inner is not None:
            return type(e)(a.a, inner)
    # min(max(x, c), max(y, c)) -> max(min(x, y), c), and the same for every pairing of
    # min and max: the union of clamped neighbours (x - 1, x, x + 1 of a boundary
    # condition) then collapses to one clamp instead of growing threefold per stage.
    shared = _shared_operand_distribution(e, a, b)
    if shared is not None:
        return shared
    absorbed = _absorb_offset_operand(e, a, b) if e.type() == I32 else None
    if absorbed is not None:
        return absorbed
    if e.type() == I32:
        for big, small in ((a, b), (b, a)):
            if _rounded_up_at_least(big, small):
                return small if is_min else big
    # min(x, min(x, y)) -> min(x, y); min(x, max(x, y)) -> x
    for p, q in ((a, b), (b, a)):
        if isinstance(q, (E.Min, E.Max)) and (q.a.same_as(p) or q.b.same_as(p)):
            if type(q) is type(e):
                return q
            return p
    if not t.is_float():
        # min(min(min(x, y), z), x) -> min(min(x, y), z): unions of boxes repeat an operand
        # deep in a chain (interpolate's pyramid bounds, and their 64-bit storage checks).
        for p, q in ((a, b), (b, a)):
            if type(q) is type(e) and _covered_by_chain(p, q, type(e)):
                return q
        divided = _ordered_divisions(a, b) if t == I32 else None
        if divided is not None:
            return divided if is_min else (b if divided is a else a)
    return e


MIN_MAX_CHAIN_LIMIT = 64  # operands of one chain looked at (bounds the rule's cost)
MIN_MAX_COMPARED_LIMIT = 16  # operands compared for a constant difference


def _chain_operands(e: E.Expr, op: type) -> list[E.Expr] | None:
    """The operands of the chain of `op` nodes rooted at e; None if there are too many."""
    operands: list[E.Expr] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if type(node) is op:
            stack.extend((node.b, node.a))
        else:
            operands.append(node)
            if len(operands) > MIN_MAX_CHAIN_LIMIT:
                return None
    return operands


def _covered_by_chain(p: E.Expr, chain: E.Expr, op: type) -> bool:
    """Whether op(p, chain) == chain: every operand of p (of its own chain of op nodes) is
    an operand of the chain, or (int32) a constant above one in a min (below, in a max).
    The chain itself is kept, so subexpressions it shares with others stay shared."""
    wanted = _chain_operands(p, op)
    have = _chain_operands(chain, op)
    if wanted is None or have is None:
        return False
    compare = len(have) <= MIN_MAX_COMPARED_LIMIT
    for x in wanted:
        if any(x.same_as(y) for y in have):
            continue
        if not (compare and x.type() == I32):
            return False
        for y in have:
            d = constant_difference(x, y) if y.type() == I32 else None
            if d is not None and (d >= 0 if op is E.Min else d <= 0):
                break
        else:
            return False
    return True


def _ordered_divisions(a: E.Expr, b: E.Expr) -> E.Expr | None:
    """Of x / c and (x + k) / c (c > 0 a constant), the one never larger: k >= 0 gives
    x / c, since floor division by a positive constant never decreases (max(x / 2,
    (x + 1) / 2) in the bounds of an upsampling stage is (x + 1) / 2). None if unknown."""
    if not (isinstance(a, E.Div) and isinstance(b, E.Div)):
        return None
    if not (isinstance(a.b, E.Const) and isinstance(b.b, E.Const) and a.b.value == b.b.value and a.b.value > 0):
        return None
    d = constant_difference(a.a, b.a)
    if d is None:
        return None
    return a if d <= 0 else b


def _rounded_up_at_least(p: E.Expr, q: E.Expr) -> bool:
    """Whether p >= q always, where p - q = c * ((X + k) / c) - X + m for a constant c > 0
    (then p - q >= k - c + 1 + m). A ShiftInwards split's last vector start,
    min(lo + ((hi - lo + c) / c) * c - c, hi - c + 1), is hi - c + 1: without this rule the
    two copies of hi - lo in it vary apart over an outer loop (a tile's region), and a
    producer's region was widened by whole tiles."""
    lp, lq = _linear(p), _linear(q)
    if lp is None or lq is None:
        return False
    diff: dict[tuple, list] = {k: [node, coeff] for k, (node, coeff) in lp[0].items()}
    for k, (node, coeff) in lq[0].items():
        diff.setdefault(k, [node, 0])[1] -= coeff
    m = lp[1] - lq[1]
    divisions = [
        (k, node)
        for k, (node, coeff) in diff.items()
        if coeff != 0 and isinstance(node, E.Div) and isinstance(node.b, E.Const) and node.b.value > 0
        and coeff == node.b.value
    ]  # fmt: skip
    if len(divisions) != 1:
        return False
    key, division = divisions[0]
    c = division.b.value
    inner = _linear(division.a)
    if inner is None:
        return False
    terms, k = inner
    for name, (_, coeff) in diff.items():
        if name != key and coeff != -(terms[name][1] if name in terms else 0):
            return False
    if any(coeff != 0 and name not in diff for name, (_, coeff) in terms.items()):
        return False
    return k - c + 1 + m >= 0


def _shared_operand_distribution(e: E.Expr, a: E.Expr, b: E.Expr) -> E.Expr | None:
    """op(inner(x, c), inner(y, c)) -> inner(op(x, y), c) for op, inner in {min, max}:
    both distribute over each other, so the shared operand c is taken once."""
    if not (isinstance(a, (E.Min, E.Max)) and type(a) is type(b)):
        return None
    for x, c in ((a.a, a.b), (a.b, a.a)):
        for y, c2 in ((b.a, b.b), (b.b, b.a)):
            if c.same_as(c2):
                merged = _simplify_min_max(type(e)(x, y))
                return _simplify_min_max(type(a)(merged, c))
    return None


def _absorb_offset_operand(e: E.Expr, a: E.Expr, b: E.Expr) -> E.Expr | None:
    """max(max(x, y), y + c) -> max(x, y + max(c, 0)), and the same for min: a box's union
    over the taps of a stencil (y - 1, y, y + 1, ...) keeps one term per base, not one per tap."""
    is_min = isinstance(e, E.Min)
    for inner, other in ((a, b), (b, a)):
        if type(inner) is not type(e):
            continue
        for keep, candidate in ((inner.a, inner.b), (inner.b, inner.a)):
            d = constant_difference(candidate, other)
            if d is None:
                continue
            winner = candidate if (d <= 0 if is_min else d >= 0) else other
            return _simplify_min_max(type(e)(keep, winner))
    return None


def _simplify_compare(e: E.Compare) -> E.Expr:
    a, b = e.a, e.b
    if a.type() == I32:
        d = constant_difference(a, b)
        if d is not None:
            folded = _fold_binary(e, const(I32, d), const(I32, 0))
            if folded is not None:
                return folded
    elif a.same_as(b) and not a.type().is_float():
        if isinstance(e, (E.EQ, E.LE, E.GE)):
            return const(e.type(), True)
        return const(e.type(), False)
    return e


def is_const_int(e: E.Expr) -> bool:
    return isinstance(e, E.Const) and not e.type().is_float()


def as_const_int(e: E.Expr) -> int | None:
    e = simplify(e)
    return e.value if is_const_int(e) else None


# ---------------------------------------------------------------------------- vectors


def _simplify_vector(e: E.Expr) -> E.Expr:
    """Keep ramps and broadcasts outermost, so that the backend sees dense accesses."""
    from pixelweave.engine.stmt import Broadcast, Ramp

    if isinstance(e, Broadcast):
        return e
    if isinstance(e, Ramp):
        if _is_const(e.stride, 0):
            return Broadcast(e.base, e.lanes)
        return e
    if isinstance(e, E.BinaryOp):
        a, b = e.a, e.b
        lanes = e.type().lanes
        if isinstance(a, Broadcast) and isinstance(b, Broadcast):
            inner = _simplify_node(type(e)(a.value, b.value))
            return Broadcast(inner, lanes)
        if e.a.type() == I32.with_lanes(lanes):
            if isinstance(e, E.Add):
                if isinstance(a, Ramp) and isinstance(b, Broadcast):
                    return Ramp(_simplify_node(E.Add(a.base, b.value)), a.stride, lanes)
                if isinstance(a, Broadcast) and isinstance(b, Ramp):
                    return Ramp(_simplify_node(E.Add(a.value, b.base)), b.stride, lanes)
                if isinstance(a, Ramp) and isinstance(b, Ramp):
                    return _ramp(E.Add(a.base, b.base), E.Add(a.stride, b.stride), lanes)
            if isinstance(e, E.Sub):
                if isinstance(a, Ramp) and isinstance(b, Broadcast):
                    return Ramp(_simplify_node(E.Sub(a.base, b.value)), a.stride, lanes)
                if isinstance(a, Broadcast) and isinstance(b, Ramp):
                    return _ramp(E.Sub(a.value, b.base), E.Sub(E.Const(I32, 0), b.stride), lanes)
                if isinstance(a, Ramp) and isinstance(b, Ramp):
                    return _ramp(E.Sub(a.base, b.base), E.Sub(a.stride, b.stride), lanes)
            if isinstance(e, E.Mul):
                if isinstance(a, Ramp) and isinstance(b, Broadcast):
                    return _ramp(E.Mul(a.base, b.value), E.Mul(a.stride, b.value), lanes)
                if isinstance(a, Broadcast) and isinstance(b, Ramp):
                    return _ramp(E.Mul(b.base, a.value), E.Mul(b.stride, a.value), lanes)
    if isinstance(e, E.Cast) and isinstance(e.value, Broadcast):
        return Broadcast(_simplify_node(E.Cast(e.type().element_of(), e.value.value)), e.type().lanes)
    if isinstance(e, E.Select) and all(isinstance(c, Broadcast) for c in e.children()):
        return Broadcast(_simplify_node(E.Select(*(c.value for c in e.children()))), e.type().lanes)
    return e


def _ramp(base: E.Expr, stride: E.Expr, lanes: int) -> E.Expr:
    from pixelweave.engine.stmt import Broadcast, Ramp

    base, stride = simplify(base), simplify(stride)
    if _is_const(stride, 0):
        return Broadcast(base, lanes)
    return Ramp(base, stride, lanes)
