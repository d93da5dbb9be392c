"""From the stores a loop made to stage definitions: each store address (row, column in
terms of the loop counters) is solved for the counters, giving the value at a coordinate
and the conditions under which that coordinate was written (Dexter's summaries, computed
instead of searched). Lanes of an unrolled or interleaved store that compute the same thing
merge into one piece. A store whose address depends on data (a histogram), or a loop that
reads what an earlier iteration wrote, becomes a serial update over an RDom instead."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.model import Piece
from pixelweave.nodes.lift.symbolic import Exact, Tree

if TYPE_CHECKING:
    from pixelweave.nodes.lift.c_execute import Executor, Load, LoopInfo, Store

INDEX = "i32"
ROW = "__row"
COL = "__col"


def form_stages(ex: Executor, stores: list[Store], loads: list[Load], loop: LoopInfo) -> None:
    """Turn the stores made during one loop into a new version of each buffer they write."""
    by_buffer: dict[str, list[Store]] = {}
    for st in stores:
        by_buffer.setdefault(st.buffer, []).append(st)
    for name, group in by_buffer.items():
        b = ex.buffers[name]
        before = b.current
        if any(st.before != before for st in group):
            raise ex.refuse(
                None,
                f"the stores to `{name}` at lines {group[0].line} and {group[-1].line}",
                "they interleave with an inner loop's stores to the same buffer",
            )
        ex.writes.extend((name, st.row, st.col, st.loops) for st in group)
        solved = [_solve(ex, st) for st in group]
        carried = _carried(group, [ld for ld in loads if ld.version == before])
        if any(s is None for s in solved) or carried:
            _scatter(ex, name, group, loop)
            continue
        dims = {tuple(d) for _, _, d in solved}
        if len(dims) != 1:
            raise ex.refuse(
                None, f"the stores to `{name}` near line {group[0].line}", "they index the buffer with different loops"
            )
        version = ex._new_version(name, "pure", group[0].line, dims=dims.pop())
        for piece, lane, _ in solved:
            piece.lane = lane
        version.pieces = _merge([p for p, _, _ in solved])
        ex.stage_lines[version.tag] = group[0].line


def _carried(stores: list[Store], loads: list[Load]) -> bool:
    """Whether some load of the buffer's previous version may read a place that another
    iteration (or another store) of this loop writes: a loop-carried dependence."""
    return any(_may_alias(ld, st) for ld in loads for st in stores)


def _may_alias(ld: Load, st: Store) -> bool:
    if (ld.row, ld.col, ld.loops) == (st.row, st.col, st.loops):
        return False  # the same element in the same iteration: read before the store
    drow = S.arith("-", ld.row, st.row)
    dcol = S.arith("-", ld.col, st.col)
    if drow[0] != "const" or dcol[0] != "const":
        return True
    if drow[2] != 0:
        return True
    coefs = [c for m, c in S.terms(st.col).items() if m and any(a[0] == "sym" and a[2] in st.loops for a in m)]
    step = 0
    for c in coefs:
        step = math.gcd(step, abs(c))
    # columns a*x + k and a*x + k' never meet when k - k' is not a multiple of a
    return step <= 1 or dcol[2] % step == 0


def _scatter(ex: Executor, name: str, group: list[Store], loop: LoopInfo) -> None:
    if len(group) != 1:
        raise ex.refuse(
            None,
            f"the stores to `{name}` at lines {group[0].line}-{group[-1].line}",
            "a data-dependent or loop-carried update must be a single store per iteration",
        )
    st = group[0]
    loops = []
    for sym in st.loops:
        trip = ex.all_loops[sym]
        if S.symbols(trip) & set(st.loops):
            raise ex.refuse(
                None,
                f"the update of `{name}` at line {st.line}",
                "its loops are not rectangular (a bound depends on another loop)",
            )
        loops.append((sym, trip))
    version = ex._new_version(name, "scatter", st.line)
    version.scatters.append((st.row, st.col, st.value, tuple(loops), st.predicate, st.line))
    ex.stage_lines[version.tag] = st.line


def _solve(ex: Executor, st: Store):
    """(Piece, merge key, expanded loops) for a store with an affine address, else None."""
    row_t, col_t = S.terms(st.row), S.terms(st.col)
    for ts in (row_t, col_t):
        for m in ts:
            for atom in m:
                if S.has_kind(atom, ("load", "func")):
                    return None
    loops = list(st.loops)
    where: dict[str, str] = {}
    for sym in loops:
        s = S.sym(INDEX, sym)
        for coord, ts in (("row", row_t), ("col", col_t)):
            for m in ts:
                if s in m:
                    if len(m) != 1:
                        return None
                    if where.get(sym, coord) != coord:
                        return None
                    where[sym] = coord
    mapping: dict[str, Tree | Exact] = {}
    conditions: dict[str, Tree] = {}
    merge = None
    for coord, ts, name in (("row", row_t, ROW), ("col", col_t, COL)):
        inside = [(sym, ts[(S.sym(INDEX, sym),)]) for sym in loops if where.get(sym) == coord]
        rest = {m: c for m, c in ts.items() if not (len(m) == 1 and m[0][0] == "sym" and m[0][2] in where)}
        off = S.make_aff(INDEX, rest)
        c = S.sym(INDEX, name)
        if not inside:
            conditions[f"{coord}_at"] = S.compare("==", c, off)
            continue
        if len(inside) == 1:
            sym, a = inside[0]
            trip = ex.all_loops[sym]
            if a == 1:
                mapping[sym] = S.arith("-", c, off)
            elif a == -1:
                mapping[sym] = S.arith("-", off, c)
            elif a > 1:
                mapping[sym] = Exact(S.arith("-", c, off), a)
                conditions[f"{coord}_div"] = S.compare(
                    "==", ("bin", INDEX, "fmod", S.arith("-", c, off), S.const(INDEX, a)), S.const(INDEX, 0)
                )
                if coord == "col":
                    residue = int(rest.get((), 0))
                    base = dict(rest)
                    base[()] = residue - residue % a
                    merge = (sym, a, residue % a, S.make_aff(INDEX, base), trip)
            else:
                return None
            conditions[f"{coord}_range_{sym}"] = _range(mapping[sym], trip)
        elif len(inside) == 2:
            (s1, a1), (s2, a2) = sorted(inside, key=lambda sa: -abs(sa[1]))
            t2 = ex.all_loops[s2]
            if (
                a2 != 1
                or a1 <= 1
                or (t2[0] != "const" and not (t2[0] == "bin" and t2[2] == "max" and t2[3][0] == "const"))
            ):
                return None
            n2 = t2[2] if t2[0] == "const" else t2[3][2]
            if n2 > a1:
                return None
            rel = S.arith("-", c, off)
            mapping[s1] = ("bin", INDEX, "fdiv", rel, S.const(INDEX, a1))
            mapping[s2] = ("bin", INDEX, "fmod", rel, S.const(INDEX, a1))
            conditions[f"{coord}_range_{s1}"] = _range(mapping[s1], ex.all_loops[s1])
            if n2 < a1:
                conditions[f"{coord}_range_{s2}"] = S.compare("<", mapping[s2], S.const(INDEX, n2))
        else:
            return None
    # trip counts may depend on outer loops: substitute their solutions into the conditions
    conditions = {k: S.substitute(v, mapping) for k, v in conditions.items()}
    value = S.substitute(st.value, mapping)
    if st.predicate is not None:
        conditions["predicate"] = S.substitute(st.predicate, mapping)
    expanded = [sym for sym in loops if sym not in where]
    piece = Piece(value, conditions, st.line, (st.row, st.col, tuple(st.loops)))
    piece_key = merge
    return (piece, piece_key, expanded)


def _range(solution: Tree | Exact, trip: Tree) -> Tree:
    v = solution.tree() if isinstance(solution, Exact) else solution
    return S.logic("and", S.compare(">=", v, S.const(INDEX, 0)), S.compare("<", v, trip))


def _merge(pieces: list[Piece]) -> list[Piece]:
    """Lanes k = 0..a-1 of `dst[a*x + k] = f(...)` with the same f (in coordinates) become one
    piece over the whole column range."""
    out: list[Piece] = []
    i = 0
    while i < len(pieces):
        p = pieces[i]
        a = _lane_form(p)
        if a is None:
            out.append(p)
            i += 1
            continue
        sym, n = a
        lanes = pieces[i : i + n]
        if len(lanes) == n and all(_lane_form(q) == (sym, n) for q in lanes) and _same_but_lane(lanes, sym):
            offsets = _lane_offsets(lanes)
            if offsets is not None and sorted(offsets) == list(range(min(offsets), min(offsets) + n)):
                # lanes at base + lo .. base + lo + n - 1: one range from the first of them
                lo = min(offsets)
                merged = dict(p.conditions)
                merged.pop("col_div", None)
                base = S.arith("+", _base(p), S.const(INDEX, lo))
                trip = _trip_of(p, sym)
                c = S.sym(INDEX, COL)
                merged[f"col_range_{sym}"] = S.logic(
                    "and",
                    S.compare(">=", c, base),
                    S.compare("<", c, S.arith("+", base, S.arith("*", trip, S.const(INDEX, n)))),
                )
                residues = [o - lo for o in offsets]
                out.append(Piece(_lane_select(lanes, residues, base, n), merged, p.line, p.region))
                i += n
                continue
        out.append(p)
        i += 1
    return out


def _lane_offsets(lanes: list[Piece]) -> list[int] | None:
    """Each lane's first column relative to the first lane's base (its residue plus how far its
    base is from the first lane's), or None when the bases differ by more than a constant. SSE
    lanes stored from column 1 (`x = 1; x + 8 <= n; x += 8`) have residues 1..7 over one base
    and 0 over the next: eight consecutive columns all the same."""
    first = _base(lanes[0])
    offsets = []
    for q in lanes:
        shift = S.constant_value(S.arith("-", _base(q), first))
        if shift is None:
            return None
        offsets.append(int(shift) + _residue(q))
    return offsets


def _lane_select(lanes: list[Piece], residues: list[int], base: Tree, n: int) -> Tree:
    """The value of merged lanes: the common value, or (lanes that store different values,
    such as a channel swap) a select on the column's lane, so that the stage has one range
    test and one remainder per element instead of one of each per lane."""
    values = {q.value for q in lanes}
    if len(values) == 1:
        return lanes[0].value
    by_residue = sorted(zip(residues, (q.value for q in lanes), strict=True))
    lane = ("bin", INDEX, "fmod", S.arith("-", S.sym(INDEX, COL), base), S.const(INDEX, n))
    value = by_residue[-1][1]
    for residue, lane_value in reversed(by_residue[:-1]):
        value = S.select(S.compare("==", lane, S.const(INDEX, residue)), lane_value, value)
    return value


def _lane_form(p: Piece):
    return None if p.lane is None else (p.lane[0], p.lane[1])


def _residue(p: Piece) -> int:
    return p.lane[2]


def _base(p: Piece) -> Tree:
    return p.lane[3]


def _trip_of(p: Piece, sym: str) -> Tree:
    return p.lane[4]


def _same_but_lane(lanes: list[Piece], sym: str) -> bool:
    first = lanes[0]
    keep = {k: v for k, v in first.conditions.items() if not k.startswith("col_")}
    for q in lanes[1:]:
        if S.type_of(q.value) != S.type_of(first.value):
            return False
        if {k: v for k, v in q.conditions.items() if not k.startswith("col_")} != keep:
            return False
    return True
