"""Symbolic values of the lifted code: small immutable expression trees (nested tuples, so
they hash and compare structurally) with C's integer semantics, integer sums of products kept
in a canonical affine form (so addresses, loop bounds and pixel arithmetic normalize and two
lanes that compute the same thing compare equal), intervals, and substitution.

Tree forms (the second item is always the element type: u8 ... i64, f32, f64, bool):
  ("const", t, v)          ("sym", t, name)             ("aff", t, ((monomial, coef), ...))
  ("load", t, buffer, row, col)                         ("func", t, name, (arg, ...))
  ("cast", t, a)           ("bin", t, op, a, b)         ("cmp", "bool", op, a, b)
  ("un", t, op, a)         ("select", t, c, a, b)       ("and"|"or", "bool", a, b), ("not", "bool", a)
A monomial is a sorted tuple of atoms (trees that are not sums); () is the constant term.
"""

from __future__ import annotations

import math
from functools import lru_cache

Tree = tuple
INT_TYPES = ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")
BITS = {
    "bool": 1,
    "i8": 8,
    "u8": 8,
    "i16": 16,
    "u16": 16,
    "i32": 32,
    "u32": 32,
    "i64": 64,
    "u64": 64,
    "f32": 32,
    "f64": 64,
}


def is_int(t: str) -> bool:
    return t in INT_TYPES


def is_signed(t: str) -> bool:
    return t.startswith("i")


def type_range(t: str) -> tuple[int, int] | None:
    if t == "bool":
        return (0, 1)
    if not is_int(t):
        return None
    bits = BITS[t]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed(t) else (0, (1 << bits) - 1)


def wrap(t: str, v: int | float) -> int | float:
    """v as C stores it in type t (two's complement wrap for integers)."""
    if t == "bool":
        return int(bool(v))
    if not is_int(t):
        return float(v)
    bits = BITS[t]
    v = int(v) & ((1 << bits) - 1)
    if is_signed(t) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def const(t: str, v: int | float) -> Tree:
    return ("const", t, wrap(t, v))


def sym(t: str, name: str) -> Tree:
    return ("sym", t, name)


def type_of(e: Tree) -> str:
    return e[1]


def promote(t: str) -> str:
    """C's integer promotion."""
    return "i32" if t in ("bool", "i8", "u8", "i16", "u16") else t


def arith_type(a: str, b: str) -> str:
    """C's usual arithmetic conversions."""
    a, b = promote(a), promote(b)
    for f in ("f64", "f32"):
        if f in (a, b):
            return f
    if a == b:
        return a
    if BITS[a] == BITS[b]:
        return a if not is_signed(a) else b
    return a if BITS[a] > BITS[b] else b


# ---- affine (sum of products) form -------------------------------------------------------


def _key(x: object) -> str:
    return repr(x)


def terms(e: Tree) -> dict[tuple, int]:
    """The sum-of-products form of an integer tree (an opaque tree is one atom)."""
    if e[0] == "aff":
        return dict(e[2])
    if e[0] == "const":
        return {(): int(e[2])} if e[2] else {}
    return {(e,): 1}


def make_aff(t: str, ts: dict[tuple, int]) -> Tree:
    """The canonical tree of a sum of products in type t (wrapping coefficients)."""
    bits = BITS[t]
    ts = _recombine(ts)
    clean = {}
    for m, c in ts.items():
        c = wrap("i64" if bits == 64 else "i32", c)
        if c:
            clean[m] = c
    if not clean:
        return const(t, 0)
    if list(clean) == [()]:
        return const(t, clean[()])
    if len(clean) == 1:
        ((m, c),) = clean.items()
        if c == 1 and len(m) == 1 and type_of(m[0]) == t:
            return m[0]
    return ("aff", t, tuple(sorted(clean.items(), key=lambda mc: _key(mc[0]))))


def _recombine(ts: dict[tuple, int]) -> dict[tuple, int]:
    """a * fdiv(n, a) + fmod(n, a) == n: put split coordinates back together."""
    mods = [m for m in ts if len(m) == 1 and m[0][0] == "bin" and m[0][2] == "fmod" and m[0][4][0] == "const"]
    if not mods:
        return ts
    ts = dict(ts)
    for m in mods:
        _, t, _, n, a = m[0]
        d = (("bin", t, "fdiv", n, a),)
        c = ts.get(m, 0)
        if c and ts.get(d, 0) == c * a[2]:
            del ts[m], ts[d]
            for mm, cc in terms(n).items():
                ts[mm] = ts.get(mm, 0) + c * cc
    return ts


def _mul_terms(a: dict, b: dict) -> dict:
    out: dict[tuple, int] = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb, key=_key))
            out[m] = out.get(m, 0) + ca * cb
    return out


def _add_terms(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
    return out


def constant_value(e: Tree) -> int | float | None:
    return e[2] if e[0] == "const" else None


# ---- constructors with C semantics ------------------------------------------------------------


def cast(t: str, e: Tree) -> Tree:
    """(t) e with C's conversion rules, simplified where the value is known or preserved."""
    s = type_of(e)
    if s == t:
        return e
    if e[0] == "const":
        v = e[2]
        if is_int(t) and isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                return ("cast", t, e)
            v = math.trunc(v)
        return const(t, v)
    if t == "bool":
        return compare("!=", e, const(s, 0))
    if s == "bool":
        return select(e, const(t, 1), const(t, 0))
    if is_int(s) and is_int(t):
        # same width: reinterpreting a sum keeps it a sum (arithmetic is modulo 2**bits)
        if BITS[s] == BITS[t] and BITS[t] >= 32 and e[0] == "aff":
            return make_aff(t, terms(e))
        if e[0] == "cast" and is_int(type_of(e[2])):
            inner = type_of(e[2])
            widening = BITS[inner] < BITS[s] and (is_signed(inner) == is_signed(s) or not is_signed(inner))
            if widening and BITS[s] <= BITS[t]:
                return cast(t, e[2])
            if BITS[t] <= BITS[inner] and BITS[t] <= BITS[s]:
                return cast(t, e[2])  # narrowing twice keeps the low bits
    return ("cast", t, e)


def arith(op: str, a: Tree, b: Tree) -> Tree:
    """a op b for + - * / % << >> & | ^ with C's conversions and semantics."""
    if op in ("<<", ">>"):
        t = promote(type_of(a))
        a, b = cast(t, a), cast(promote(type_of(b)), b)
    else:
        t = arith_type(type_of(a), type_of(b))
        a, b = cast(t, a), cast(t, b)
    if is_int(t) and BITS[t] >= 32 and op in ("+", "-", "*"):
        ta, tb = terms(a), terms(b)
        ts = _mul_terms(ta, tb) if op == "*" else _add_terms(ta, tb, 1 if op == "+" else -1)
        return make_aff(t, ts)
    ca, cb = constant_value(a), constant_value(b)
    if ca is not None and cb is not None:
        folded = _fold(op, t, ca, cb)
        if folded is not None:
            return const(t, folded)
    if op in ("|", "^", "+") and ca == 0:
        return b
    if op in ("|", "^", "<<", ">>", "+", "-") and cb == 0:
        return a
    if op == "&" and (ca == 0 or cb == 0):
        return const(t, 0)
    if op in ("*", "/") and cb == 1:
        return a
    if op == "*" and ca == 1:
        return b
    if op == "&" and cb is not None and is_int(t):
        rng = interval(a)
        if rng is not None and rng[0] >= 0 and cb >= 0 and (cb + 1) & cb == 0 and rng[1] <= cb:
            return a
    if op == ">>" and cb is not None and is_int(t):
        rng = interval(a)
        if rng is not None and rng[0] >= 0 and rng[1] >> int(cb) == 0:
            return const(t, 0)
    return ("bin", t, op, a, b)


def _fold(op: str, t: str, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if is_int(t):
        if op == "/":
            return None if b == 0 else int(a / b) if abs(a) < 2**52 else None
        if op == "%":
            return None if b == 0 else a - int(a / b) * b if abs(a) < 2**52 else None
        if op == "<<":
            return a << b if 0 <= b < 64 else None
        if op == ">>":
            return a >> b if 0 <= b < 64 else None
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
    elif op == "/":
        return a / b if b else None
    return None


def minmax(op: str, a: Tree, b: Tree) -> Tree:
    t = arith_type(type_of(a), type_of(b))
    a, b = cast(t, a), cast(t, b)
    if a == b:
        return a
    ca, cb = constant_value(a), constant_value(b)
    if ca is not None and cb is not None:
        return const(t, min(ca, cb) if op == "min" else max(ca, cb))
    return ("bin", t, op, a, b)


def compare(op: str, a: Tree, b: Tree) -> Tree:
    t = arith_type(type_of(a), type_of(b))
    a, b = cast(t, a), cast(t, b)
    ca, cb = constant_value(a), constant_value(b)
    if ca is not None and cb is not None:
        return const(
            "bool", {"<": ca < cb, "<=": ca <= cb, ">": ca > cb, ">=": ca >= cb, "==": ca == cb, "!=": ca != cb}[op]
        )
    return ("cmp", "bool", op, a, b)


def truth(e: Tree) -> Tree:
    """e as a condition (C: non-zero is true)."""
    if e[0] == "select" and e[3][0] == "const" and e[4][0] == "const" and e[3][2] != 0 and e[4][2] == 0:
        return e[2]
    if e[0] == "cast" and type_of(e[2]) == "bool":
        return e[2]
    return e if type_of(e) == "bool" else compare("!=", e, const(type_of(e), 0))


def logic(op: str, a: Tree, b: Tree) -> Tree:
    a, b = truth(a), truth(b)
    ca, cb = constant_value(a), constant_value(b)
    if op == "and":
        if ca is not None:
            return b if ca else a
        if cb is not None:
            return a if cb else b
    else:
        if ca is not None:
            return a if ca else b
        if cb is not None:
            return b if cb else a
    return (op, "bool", a, b)


def lnot(a: Tree) -> Tree:
    a = truth(a)
    if a[0] == "const":
        return const("bool", not a[2])
    return ("not", "bool", a)


def select(c: Tree, a: Tree, b: Tree) -> Tree:
    c = truth(c)
    t = arith_type(type_of(a), type_of(b)) if type_of(a) != type_of(b) else type_of(a)
    a, b = cast(t, a), cast(t, b)
    if c[0] == "const":
        return a if c[2] else b
    if a == b:
        return a
    return ("select", t, c, a, b)


def unary(op: str, a: Tree) -> Tree:
    """-a, ~a, abs(a), and the float math functions."""
    if op == "neg":
        t = promote(type_of(a))
        a = cast(t, a)
        if is_int(t) and BITS[t] >= 32:
            return make_aff(t, {m: -c for m, c in terms(a).items()})
        if a[0] == "const":
            return const(t, -a[2])
        return ("un", t, "neg", a)
    if op == "bnot":
        t = promote(type_of(a))
        a = cast(t, a)
        if a[0] == "const":
            return const(t, ~a[2])
        return ("un", t, "bnot", a)
    t = type_of(a) if op not in ("abs",) else promote(type_of(a))
    a = cast(t, a)
    if a[0] == "const" and op == "abs":
        return const(t, abs(a[2]))
    return ("un", t, op, a)


# ---- intervals --------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def interval(e: Tree, bounds: tuple = ()) -> tuple[int, int] | None:  # noqa: C901 - one case per form
    """Integer bounds of a tree (None where unknown); `bounds` gives (name, lo, hi) for symbols."""
    kind, t = e[0], e[1]
    if kind == "const":
        return (int(e[2]), int(e[2])) if is_int(t) or t == "bool" else None
    if not (is_int(t) or t == "bool"):
        return None
    if kind == "sym":
        for name, lo, hi in bounds:
            if name == e[2]:
                return (lo, hi)
        return type_range(t) if BITS[t] < 32 else None
    if kind in ("load", "func"):
        return type_range(t) if BITS.get(t, 64) < 32 else None
    if kind in ("cmp", "and", "or", "not"):
        return (0, 1)
    if kind == "cast":
        inner = interval(e[2], bounds)
        tr = type_range(t)
        if inner is not None and tr[0] <= inner[0] and inner[1] <= tr[1]:
            return inner
        return tr if BITS[t] < 32 else None
    if kind == "aff":
        vertices = _multilinear_interval(e, bounds)
        if vertices is not None:
            shift = _wrap_shift(t, *vertices)
            return None if shift is None else (vertices[0] + shift, vertices[1] + shift)
        lo = hi = 0
        for m, c in e[2]:
            r = (1, 1)
            for atom in m:
                ra = interval(atom, bounds)
                if ra is None:
                    return None
                products = [r[0] * ra[0], r[0] * ra[1], r[1] * ra[0], r[1] * ra[1]]
                r = (min(products), max(products))
            lo += min(c * r[0], c * r[1])
            hi += max(c * r[0], c * r[1])
        return _fits(t, lo, hi)
    if kind == "select":
        difference = _absolute_difference(e, bounds)
        if difference is not None:
            return difference
        a, b = interval(e[3], bounds), interval(e[4], bounds)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if kind == "bin":
        op = e[2]
        a, b = interval(e[3], bounds), interval(e[4], bounds)
        if op in ("min", "max") and a is not None and b is not None:
            f = min if op == "min" else max
            return (f(a[0], b[0]), f(a[1], b[1]))
        if op == "fdiv" and a is not None and b is not None and b[0] == b[1] and b[0] > 0:
            return (a[0] // b[0], a[1] // b[0])
        if op == "fmod" and b is not None and b[0] == b[1] and b[0] > 0:
            return (0, b[0] - 1)
        if op == "/" and a is not None and b is not None and b[0] > 0:
            qs = [int(x / y) for x in a for y in b]
            return (min(qs), max(qs))
        if op == ">>" and a is not None and b is not None and b[0] == b[1] and 0 <= b[0] < 64:
            return (a[0] >> b[0], a[1] >> b[0])
        if op == "&" and b is not None and b[0] == b[1] and b[0] >= 0:
            return (0, b[0]) if a is None or a[0] < 0 else (0, min(a[1], b[0]))
        if op == "&" and a is not None and a[0] == a[1] and a[0] >= 0:
            return (0, a[0])
        if op == "%" and b is not None and b[0] > 0 and a is not None and a[0] >= 0:
            return (0, min(a[1], b[1] - 1))
        if op == "<<" and a is not None and b is not None and b[0] == b[1] and 0 <= b[0] < 32:
            return _fits(t, a[0] << b[0], a[1] << b[0])
        if op == "|" and a is not None and b is not None and min(a[0], b[0]) >= 0:
            top = (1 << max(a[1], b[1]).bit_length()) - 1
            return (0, top)
        return type_range(t) if BITS[t] < 32 else None
    if kind == "un" and e[2] == "abs":
        a = interval(e[3], bounds)
        return None if a is None else (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])), max(abs(a[0]), abs(a[1])))
    return type_range(t) if BITS[t] < 32 else None


_VERTEX_ATOMS = 8


def _multilinear_interval(e: Tree, bounds: tuple, depth: int = 0) -> tuple[int, int] | None:
    """Exact bounds of a sum of products in which no atom appears twice in a product (each
    atom taken as free in its own interval): such a polynomial is linear in every atom, so
    its extremes lie at corners of the box. Tighter than bounding term by term, which loses
    that (255 - s) * (255 - d), expanded, is never negative. An atom that is a sum of products
    converted without a change of value (a 32-bit `65535 - m` extended to 64 bits) is expanded
    into the polynomial first, so that `b * m + d * (65535 - m)` is seen to stay within
    65535 * 65535. None when not multilinear, with more than a few atoms, or an atom without
    bounds. The bounds are of the polynomial's integer value, before any wrap-around."""
    poly = _polynomial(e, bounds, depth)
    if poly is None:
        return None
    atoms: dict[Tree, int] = {}
    for m in poly:
        if len(set(m)) != len(m):
            return None
        for atom in m:
            atoms.setdefault(atom, len(atoms))
    if not atoms or len(atoms) > _VERTEX_ATOMS:
        return None
    ranges = []
    for atom in atoms:
        r = interval(atom, bounds)
        if r is None:
            return None
        ranges.append(r)
    lo = hi = None
    for corner in range(1 << len(ranges)):
        values = [r[(corner >> i) & 1] for i, r in enumerate(ranges)]
        total = 0
        for m, c in poly.items():
            term = c
            for atom in m:
                term *= values[atoms[atom]]
            total += term
        lo = total if lo is None else min(lo, total)
        hi = total if hi is None else max(hi, total)
    return lo, hi


_EXPAND_DEPTH = 3


def _polynomial(e: Tree, bounds: tuple, depth: int) -> dict[tuple, int] | None:
    """The integer value of an aff tree as a polynomial (sorted atom tuple -> coefficient),
    expanding atoms that are value-preserving casts of aff trees which do not wrap around."""
    poly: dict[tuple, int] = {}
    for m, c in e[2]:
        term: dict[tuple, int] = {(): c}
        for atom in m:
            factor = _atom_polynomial(atom, bounds, depth)
            if factor is None:
                return None
            product: dict[tuple, int] = {}
            for tm, tc in term.items():
                for fm, fc in factor.items():
                    key = tuple(sorted(tm + fm, key=repr))
                    product[key] = product.get(key, 0) + tc * fc
            term = product
        for tm, tc in term.items():
            poly[tm] = poly.get(tm, 0) + tc
    return {m: c for m, c in poly.items() if c != 0}


def _atom_polynomial(atom: Tree, bounds: tuple, depth: int) -> dict[tuple, int] | None:
    inner = atom
    while inner[0] == "cast" and is_int(inner[1]) and is_int(type_of(inner[2])):
        r = interval(inner[2], bounds)
        tr = type_range(inner[1])
        if r is None or tr is None or not (tr[0] <= r[0] and r[1] <= tr[1]):
            break  # the conversion changes some values: the cast stays an atom
        inner = inner[2]
    if inner[0] == "aff" and depth < _EXPAND_DEPTH:
        raw = _multilinear_interval(inner, bounds, depth + 1)
        shift = None if raw is None else _wrap_shift(inner[1], *raw)
        poly = None if shift is None else _polynomial(inner, bounds, depth + 1)
        if poly is not None:
            poly[()] = poly.get((), 0) + shift
            return poly
    if inner[0] == "const":
        return {(): int(inner[2])}
    return {(inner,): 1}


def _absolute_difference(e: Tree, bounds: tuple) -> tuple[int, int] | None:
    """Bounds of C's absolute difference `a > b ? a - b : b - a` (or with <, >=, <=): each
    branch is taken only where it is not negative, so the value lies in [0, the widest
    difference], though each branch alone (in unsigned arithmetic) may wrap around."""
    cond, yes, no = e[2], e[3], e[4]
    if cond[0] != "cmp" or cond[2] not in (">", ">=", "<", "<=") or yes[0] != "aff" or no[0] != "aff":
        return None
    a, b = (cond[3], cond[4]) if cond[2] in (">", ">=") else (cond[4], cond[3])
    ra, rb = interval(a, bounds), interval(b, bounds)
    if ra is None or rb is None or type_of(a) != e[1] or type_of(b) != e[1]:
        return None
    size = 1 << BITS[e[1]]
    a_minus_b = _polynomial(("aff", e[1], (((a,), 1), ((b,), -1))), bounds, _EXPAND_DEPTH)
    for branch, sign in ((yes, 1), (no, -1)):
        poly = _polynomial(branch, bounds, _EXPAND_DEPTH)
        if poly is None or a_minus_b is None:
            return None
        keys = set(poly) | set(a_minus_b)
        if any((poly.get(k, 0) - sign * a_minus_b.get(k, 0)) % size for k in keys):
            return None
    return _fits(e[1], 0, max(ra[1] - rb[0], rb[1] - ra[0], 0))


def _wrap_shift(t: str, lo: int, hi: int) -> int | None:
    """What to add to integer values in [lo, hi] to get them as type t holds them: 0 when
    they fit; for an unsigned type, a multiple of 2^bits when they all lie in one window of
    2^bits values (a u32 sum whose constant C's wrap-around made negative); else None."""
    tr = type_range(t)
    if tr[0] <= lo and hi <= tr[1]:
        return 0
    if is_signed(t):
        return None
    size = 1 << BITS[t]
    window = lo // size
    return -window * size if hi // size == window else None


def _fits(t: str, lo: int, hi: int) -> tuple[int, int] | None:
    tr = type_range(t)
    return (lo, hi) if tr[0] <= lo and hi <= tr[1] else None


# ---- traversal ---------------------------------------------------------------------------


def children(e: Tree) -> list[Tree]:
    kind = e[0]
    if kind in ("const", "sym"):
        return []
    if kind == "aff":
        return [atom for m, _ in e[2] for atom in m]
    if kind == "load":
        return [e[3], e[4]]
    if kind == "func":
        return list(e[3])
    if kind == "cast":
        return [e[2]]
    if kind in ("bin", "cmp"):
        return [e[3], e[4]]
    if kind == "un":
        return [e[3]]
    if kind == "select":
        return [e[2], e[3], e[4]]
    if kind in ("and", "or"):
        return [e[2], e[3]]
    if kind == "not":
        return [e[2]]
    raise ValueError(f"unknown tree {kind}")


def walk(e: Tree):
    """Every subtree of e, e first."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(children(x))


def symbols(e: Tree) -> set[str]:
    return {x[2] for x in walk(e) if x[0] == "sym"}


def has_kind(e: Tree, kinds: tuple[str, ...]) -> bool:
    return any(x[0] in kinds for x in walk(e))


class Exact:
    """A replacement for a symbol that is (numerator) / divisor exactly (the caller knows the
    division has no remainder), so that divisor * symbol substitutes back to the numerator."""

    def __init__(self, numerator: Tree, divisor: int) -> None:
        self.numerator = numerator
        self.divisor = divisor

    def tree(self) -> Tree:
        n = self.numerator
        return ("bin", type_of(n), "fdiv", n, const(type_of(n), self.divisor))


def substitute(e: Tree, mapping: dict[str, Tree | Exact]) -> Tree:
    """e with symbols replaced (a rebuilt tree: sums re-normalize)."""
    if not mapping:
        return e
    return _subst(
        e,
        tuple(
            sorted(mapping.items(), key=lambda kv: kv[0]),
        ),
        {},
    )


def _replacement(value: Tree | Exact, t: str) -> Tree:
    return cast(t, value.tree() if isinstance(value, Exact) else value)


def _subst(e: Tree, mapping: tuple, memo: dict) -> Tree:
    hit = memo.get(e)
    if hit is not None:
        return hit
    m = dict(mapping)
    kind = e[0]
    if kind == "const":
        out = e
    elif kind == "sym":
        out = _replacement(m[e[2]], e[1]) if e[2] in m else e
    elif kind == "aff":
        t = e[1]
        total: dict[tuple, int] = {}
        for mono, c in e[2]:
            part = {(): c}
            rest = list(mono)
            # an exact replacement absorbs its divisor from the coefficient
            for atom in list(rest):
                if atom[0] == "sym" and isinstance(m.get(atom[2]), Exact) and part[()] % m[atom[2]].divisor == 0:
                    ex = m[atom[2]]
                    rest.remove(atom)
                    part = _mul_terms({(): part[()] // ex.divisor}, terms(cast(t, ex.numerator)))
                    break
            for atom in rest:
                part = _mul_terms(part, terms(cast(t, _subst(atom, mapping, memo))))
            total = _add_terms(total, part)
        out = make_aff(t, total)
    elif kind == "load":
        out = ("load", e[1], e[2], _subst(e[3], mapping, memo), _subst(e[4], mapping, memo))
    elif kind == "func":
        out = ("func", e[1], e[2], tuple(_subst(a, mapping, memo) for a in e[3]))
    elif kind == "cast":
        out = cast(e[1], _subst(e[2], mapping, memo))
    elif kind == "bin":
        a, b = _subst(e[3], mapping, memo), _subst(e[4], mapping, memo)
        if e[2] in ("min", "max"):
            out = minmax(e[2], a, b)
        elif e[2] in ("fdiv", "fmod"):
            ca, cb = constant_value(a), constant_value(b)
            if ca is not None and cb:
                out = const(e[1], ca // cb if e[2] == "fdiv" else ca % cb)
            else:
                out = ("bin", e[1], e[2], a, b)
        elif e[2] in ("sat_add", "sat_sub", "avg"):
            out = ("bin", e[1], e[2], a, b)
        else:
            out = arith(e[2], a, b)
            if type_of(out) != e[1]:
                out = cast(e[1], out)
    elif kind == "cmp":
        out = compare(e[2], _subst(e[3], mapping, memo), _subst(e[4], mapping, memo))
    elif kind == "un":
        out = ("un", e[1], e[2], _subst(e[3], mapping, memo))
    elif kind == "select":
        out = select(_subst(e[2], mapping, memo), _subst(e[3], mapping, memo), _subst(e[4], mapping, memo))
        if type_of(out) != e[1]:
            out = cast(e[1], out)
    elif kind in ("and", "or"):
        out = logic(kind, _subst(e[2], mapping, memo), _subst(e[3], mapping, memo))
    elif kind == "not":
        out = lnot(_subst(e[2], mapping, memo))
    else:
        raise ValueError(kind)
    memo[e] = out
    return out


def evaluate(e: Tree, values: dict[str, int]) -> int:
    """The integer value of a tree over symbols with known values (loop bounds, regions)."""
    kind = e[0]
    if kind == "const":
        return int(e[2])
    if kind == "sym":
        return int(values[e[2]])
    if kind == "aff":
        total = 0
        for mono, c in e[2]:
            p = c
            for atom in mono:
                p *= evaluate(atom, values)
            total += p
        return wrap(e[1], total)
    if kind == "cast":
        return wrap(e[1], evaluate(e[2], values))
    if kind == "bin":
        a, b = evaluate(e[3], values), evaluate(e[4], values)
        op = e[2]
        if op == "min":
            return min(a, b)
        if op == "max":
            return max(a, b)
        if op == "fdiv":
            return a // b
        if op == "fmod":
            return a % b
        v = _fold(op, e[1], a, b)
        if v is None:
            raise ValueError(f"cannot evaluate {op} on {a}, {b}")
        return wrap(e[1], v)
    if kind == "cmp":
        a, b = evaluate(e[3], values), evaluate(e[4], values)
        return int({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[e[2]])
    if kind == "select":
        return evaluate(e[3], values) if evaluate(e[2], values) else evaluate(e[4], values)
    if kind == "and":
        return int(bool(evaluate(e[2], values)) and bool(evaluate(e[3], values)))
    if kind == "or":
        return int(bool(evaluate(e[2], values)) or bool(evaluate(e[3], values)))
    if kind == "not":
        return int(not evaluate(e[2], values))
    if kind == "un" and e[2] == "neg":
        return wrap(e[1], -evaluate(e[3], values))
    raise ValueError(f"cannot evaluate a {kind} here")
