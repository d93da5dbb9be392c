"""The lifted model as engine algorithm code: every buffer version a Func over (column, row),
every accumulator a Func with an update over an RDom, C's semantics spelled out in Halide's
(truncating division, wrap-around, selects), and a runner that calls the pipeline the way
the C function is called: on flat buffers with row strides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.model import Lifted, Piece, Version
from pixelweave.nodes.lift.narrowing import Narrower, worth_narrowing
from pixelweave.nodes.lift.stages import COL, ROW
from pixelweave.nodes.lift.symbolic import Tree

import pixelweave as pw

PW_TYPES = {
    "u8": pw.UInt(8),
    "i8": pw.Int(8),
    "u16": pw.UInt(16),
    "i16": pw.Int(16),
    "u32": pw.UInt(32),
    "i32": pw.Int(32),
    "u64": pw.UInt(64),
    "i64": pw.Int(64),
    "f32": pw.Float(32),
    "f64": pw.Float(64),
    "bool": pw.Bool(),
}
NP_TYPES = {
    "u8": np.uint8,
    "i8": np.int8,
    "u16": np.uint16,
    "i16": np.int16,
    "u32": np.uint32,
    "i32": np.int32,
    "u64": np.uint64,
    "i64": np.int64,
    "f32": np.float32,
    "f64": np.float64,
}
ELEM_BYTES = {k: np.dtype(v).itemsize for k, v in NP_TYPES.items()}
# Outer-loop iterations per strip of a last-write-wins scatter (define_by_last_position): a
# strip's copy of the buffer is written serially, the strips in parallel.
LAST_WRITE_ROWS = 32


@dataclass
class LiftedPipeline:
    """The engine side of a lifted function: one Func per output buffer (over column, row),
    the Func of the returned value, the inputs, and how to call it like the C function."""

    lifted: Lifted
    outputs: dict[str, pw.Func]
    result: pw.Func | None
    images: dict[str, pw.ImageParam]
    params: dict[str, pw.Param]
    funcs: dict[str, pw.Func] = field(default_factory=dict)
    # outputs the schedule computes in one loop nest (schedule.fusable_outputs): realized
    # together, as one pipeline, at their common size
    fused_outputs: tuple[str, ...] = ()

    @property
    def pipeline(self) -> pw.Pipeline:
        funcs = list(self.outputs.values()) + ([self.result] if self.result is not None else [])
        return pw.Pipeline(funcs if len(funcs) > 1 else funcs[0])

    def run(self, buffers: dict[str, np.ndarray], scalars: dict[str, int | float], schedule: bool = False) -> Any:
        """Do what the C function does: read and write the flat byte buffers in place
        (each a 1-D uint8 array) and return the returned value (or None)."""
        from pixelweave.nodes.lift.regions import buffer_layout, written_extent

        lifted = self.lifted
        inputs: dict[str, Any] = {}
        for name in self.params:
            v = scalars[name]
            inputs[name] = int(v) if S.is_int(lifted.scalars[name].type) else float(v)
        for key in self.images:
            name = key[: -len("_in")] if key.endswith("_in") else key
            rows, stride = buffer_layout(lifted, name, scalars, buffers[name].size)
            elem = lifted.buffers[name].elem
            flat = buffers[name][: rows * stride * ELEM_BYTES[elem]].view(NP_TYPES[elem])
            if rows and stride:
                inputs[key] = np.ascontiguousarray(flat.reshape(rows, stride))
            else:  # nothing to read (the C's loops over it run no iteration): one element
                inputs[key] = np.zeros((1, 1), NP_TYPES[elem])  # keeps its boundary condition legal
        groups = [[n] for n in self.outputs if n not in self.fused_outputs]
        if self.fused_outputs:
            groups.insert(0, list(self.fused_outputs))
        for names in groups:
            cols, rows = written_extent(lifted, names[0], scalars)  # the same for every fused output
            if cols <= 0 or rows <= 0:
                continue
            funcs = [self.outputs[n] for n in names]
            pipeline = pw.Pipeline(funcs if len(funcs) > 1 else funcs[0])
            # each output's pipeline reads only some inputs (another output's buffer is not one)
            known = {im.name() for im in pipeline.images} | {p.name for p in pipeline.params}
            outs = pipeline.realize([cols, rows], {k: v for k, v in inputs.items() if k in known})
            for name, out in zip(names, outs if len(funcs) > 1 else [outs], strict=True):
                nrows, stride = buffer_layout(lifted, name, scalars, buffers[name].size)
                elem = lifted.buffers[name].elem
                view = buffers[name][: nrows * stride * ELEM_BYTES[elem]].view(NP_TYPES[elem]).reshape(nrows, stride)
                view[:rows, :cols] = out
        if self.result is not None:
            value = pw.Pipeline(self.result).realize([], inputs)
            return np.asarray(value).item()
        return None


class _Builder:
    def __init__(self, lifted: Lifted, last_write_positions: bool = False) -> None:
        self.l = lifted
        self.last_write_positions = last_write_positions
        self.funcs: dict[str, pw.Func] = {}
        self.images: dict[str, pw.ImageParam] = {}
        self.params: dict[str, pw.Param] = {}
        self.vars = {ROW: pw.Var("row"), COL: pw.Var("col")}
        self.loop_vars: dict[str, pw.Var] = {}
        self.rvars: dict[str, Any] = {}
        self.acc_funcs: dict[str, pw.Func] = {}
        self.self_ref: tuple[str, pw.Func] | None = None
        self.narrower = Narrower(self.expr, self.plain_expr, lifted.bounds())

    # ---- names -------------------------------------------------------------------------------

    def var(self, name: str) -> Any:
        if name in self.vars:
            return self.vars[name]
        if name in self.rvars:
            return self.rvars[name]
        if name in self.l.scalars:
            if name not in self.params:
                self.params[name] = pw.Param(PW_TYPES[self.l.scalars[name].type], name)
            return self.params[name]
        if name not in self.loop_vars:
            self.loop_vars[name] = pw.Var(name.replace("__", "_"))
        return self.loop_vars[name]

    def version(self, tag: str) -> pw.Func:
        if tag in self.funcs:
            return self.funcs[tag]
        v = self.l.versions[tag]
        b = self.l.buffers[v.buffer]
        t = PW_TYPES[b.elem]
        col, row = self.vars[COL], self.vars[ROW]
        if v.kind == "initial":
            if b.initial == "image":
                key = b.name if b.kind == "input" else f"{b.name}_in"
                image = pw.ImageParam(t, 2, key)
                self.images[key] = image
                f = pw.BoundaryConditions.repeat_edge(image, name=f"{_ident(b.name)}_edge")
            elif b.initial == "table":
                f = pw.Func(_ident(b.name))
                value: Any = pw.cast(t, 0)
                for i in reversed(range(len(b.table))):
                    value = pw.select(col == i, pw.cast(t, b.table[i]), value)
                f[col, row] = value
            else:
                f = pw.Func(_ident(b.name))
                f[col, row] = pw.cast(t, 0)
            self.funcs[tag] = f
            return f
        f = pw.Func(_ident(tag.replace("@", "_v")))
        self.funcs[tag] = f
        if v.kind == "pure":
            self.define_pure(f, v)
        else:
            self.define_scatter(f, v)
        return f

    def is_table_lookup(self, e: Tree) -> bool:
        """A load from an input image of 8-bit elements at a column read from pixels (a
        lookup table indexed by pixel values): a gather of 8-bit lanes, which vector units
        do one lane at a time."""
        v = self.l.versions.get(e[2])
        if v is None or v.kind != "initial" or e[1] not in ("u8", "i8"):
            return False
        b = self.l.buffers[v.buffer]
        return b.kind == "input" and b.initial == "image" and S.has_kind(e[4], ("load",))

    def wide_table(self, tag: str) -> pw.Func:
        """The table `tag` widened to 32 bits, so that lookups into it gather 32-bit lanes
        (one instruction for 16 lanes); the value looked up is narrowed back, exactly. The
        table is computed once per call over the entries the pixels can index."""
        key = f"{tag}#wide"
        if key not in self.funcs:
            col, row = self.vars[COL], self.vars[ROW]
            wide = pw.Func(f"{_ident(self.l.versions[tag].buffer)}_wide")
            elem = self.l.buffers[self.l.versions[tag].buffer].elem
            wide[col, row] = pw.cast(pw.Int(32) if S.is_signed(elem) else pw.UInt(32), self.version(tag)[col, row])
            self.funcs[key] = wide
        return self.funcs[key]

    def define_pure(self, f: pw.Func, v: Version) -> None:
        b = self.l.buffers[v.buffer]
        args = [self.vars[COL], self.vars[ROW]] + [self.var(d) for d in v.dims]
        prev_v = self.l.versions[v.previous]
        if dropped_conditions(self.l, v):
            f[tuple(args)] = self.stored(b.elem, v.pieces[0].value)
            return
        previous = self.version(v.previous)
        value = previous[tuple(args[:2] + ([] if not prev_v.dims else args[2:]))]
        if stores_what_previous_stores(self.l, v):
            f[tuple(args)] = value  # every store repeats the previous version's value
            return
        pieces = v.pieces
        joined = joined_with_previous(self.l, v)
        if joined is not None:
            # one store over both column ranges, on what the version before both holds
            pieces = [joined]
            older = self.l.versions[prev_v.previous]
            value = self.version(prev_v.previous)[tuple(args[:2] + ([] if not older.dims else args[2:]))]
        whole_rows = rows_of_every_store(self.l, v.buffer)
        for piece in pieces:
            piece_value = self.stored(b.elem, piece.value)
            # Tests of the column innermost, each group of tests its own select: loop
            # partitioning, innermost loop first, removes a select whose test it can solve
            # for the loop's variable, so the columns' steady state drops the column test
            # and the rows' the row test (one select of both stays in every iteration, and
            # reads the previous contents where C leaves them, such as a stencil's border).
            by_column, others = split_conditions(piece, whole_rows)
            inner = self.all_of(by_column)
            if inner is not None:
                piece_value = pw.select(inner, piece_value, value)
            outer = self.all_of(others)
            value = piece_value if outer is None else pw.select(outer, piece_value, value)
        f[tuple(args)] = value

    def all_of(self, conditions: list[Tree]) -> Any:
        """The conjunction of conditions as one engine Expr (None for none)."""
        cond = None
        for c in conditions:
            e = self.expr(c)
            cond = e if cond is None else pw.logical_and(cond, e)
        return cond

    def define_scatter(self, f: pw.Func, v: Version) -> None:
        b = self.l.buffers[v.buffer]
        col, row = self.vars[COL], self.vars[ROW]
        previous = self.version(v.previous)
        if self.last_write_positions and self.last_write_wins(v):
            self.define_by_last_position(f, v, previous)
            return
        f[col, row] = previous[col, row]
        for srow, scol, value, loops, predicate, _line in v.scatters:
            self.reduction_domain(loops)
            self.self_ref = (v.previous, f)
            c_expr, r_expr = self.expr(scol), self.expr(srow)
            new = self.stored(b.elem, value)
            if predicate is not None:
                new = pw.select(self.expr(predicate), new, f[c_expr, r_expr])
            f[c_expr, r_expr] = new
            self.self_ref = None

    def last_write_wins(self, v: Version) -> bool:
        """Whether a scatter is one unconditional store in two loops (the inner one's trip
        count not depending on the outer counter) whose value depends only on the loop counters
        and parameters, at an address that does not read the buffer it writes: then the last
        write to each element is the one at the latest loop position that hits it, whatever
        the other writes stored (define_by_last_position)."""
        if len(v.scatters) != 1:
            return False
        srow, scol, value, loops, predicate, _line = v.scatters[0]
        if predicate is not None or len(loops) != 2 or S.has_kind(value, ("load", "func")):
            return False
        (outer, _), (_, inner_trip) = loops
        if outer in S.symbols(inner_trip):
            return False
        for tree in (srow, scol):
            for node in S.walk(tree):
                if node[0] == "func" or (node[0] == "load" and self.l.versions[node[2]].buffer == v.buffer):
                    return False
        return True

    def define_by_last_position(self, f: pw.Func, v: Version, previous: pw.Func) -> None:
        """A last-write-wins scatter from the positions of its writes. The outer loop is cut
        into strips of LAST_WRITE_ROWS iterations; each strip's writes store their position
        (C's iteration order flattened into one 64-bit number) in C's order into the strip's
        own copy of the buffer, so each copy holds the strip's latest position per element
        and the strips can run in parallel (schedule.py); the latest over the strips (a
        maximum, -1 where none) is C's last write, and the stored value is computed from that
        position's loop counters, or the previous value where nothing was written."""
        b = self.l.buffers[v.buffer]
        col, row, strip = self.vars[COL], self.vars[ROW], pw.Var("strip")
        srow, scol, value, loops, _predicate, _line = v.scatters[0]
        (outer, outer_trip), (inner, inner_trip) = loops
        i64 = pw.Int(64)
        rows, cols = pw.max(self.expr(outer_trip), 0), pw.max(self.expr(inner_trip), 0)
        name = _ident(v.buffer)
        in_strip = pw.Func(f"{name}_last_in_strip")
        in_strip[col, row, strip] = pw.cast(i64, -1)
        count = (rows + LAST_WRITE_ROWS - 1) // LAST_WRITE_ROWS
        # The strip is a pure dimension, so its iterations can be parallel; an RDom cannot
        # depend on it, so the last strip's iterations past the end repeat its last outer
        # iteration: the same writes of the same positions in the same order, which leave
        # the strip's copy as they found it.
        r = pw.RDom([(0, cols), (0, LAST_WRITE_ROWS)], f"{name}_writes")
        outer_counter = pw.min(strip * LAST_WRITE_ROWS + r.y, rows - 1)
        self.rvars[inner], self.rvars[outer] = r.x, outer_counter
        c_expr, r_expr = self.expr(scol), self.expr(srow)
        in_strip[c_expr, r_expr, strip] = pw.cast(i64, outer_counter) * pw.cast(i64, cols) + pw.cast(i64, r.x)
        last = pw.Func(f"{name}_last_write")
        last[col, row] = pw.cast(i64, -1)
        strips = pw.RDom([(0, count)], f"{name}_strips")
        last[col, row] = pw.max(last[col, row], in_strip[col, row, strips.x])
        at = last[col, row]
        self.rvars[inner] = pw.cast(pw.Int(32), at % pw.cast(i64, cols))
        self.rvars[outer] = pw.cast(pw.Int(32), at / pw.cast(i64, cols))
        new = self.stored(b.elem, value)
        del self.rvars[inner], self.rvars[outer]
        f[col, row] = pw.select(at < 0, previous[col, row], new)
        self.funcs[f"{v.tag}#last_in_strip"] = in_strip
        self.funcs[f"{v.tag}#last"] = last

    def reduction_domain(self, loops: tuple) -> pw.RDom:
        """An RDom over C loops (outermost first); Halide iterates r.x innermost, so the
        innermost C loop is r.x and the iteration order is C's."""
        inner_first = list(reversed(loops))
        r = pw.RDom([(0, self.expr(trip)) for _, trip in inner_first])
        for i, (sym, _) in enumerate(inner_first):
            self.rvars[sym] = r[i]
        return r

    def accumulator(self, name: str) -> pw.Func:
        if name in self.acc_funcs:
            return self.acc_funcs[name]
        acc = self.l.accumulators[name]
        f = pw.Func(_ident(name))
        self.acc_funcs[name] = f
        # the innermost C loop is dimension 0 (Halide's innermost), as for buffers
        args = tuple(self.var(p) for p in reversed(acc.pure))
        t = PW_TYPES[acc.type]
        f[args] = pw.cast(t, self.expr(acc.init))
        self.reduction_domain(acc.rdom)
        f[args] = pw.cast(t, self.expr(acc.update))
        return f

    # ---- expressions ------------------------------------------------------------------------

    def expr(self, e: Tree) -> Any:
        """The engine expression of a tree. 32-bit pixel arithmetic whose result is
        converted to 8 or 16 bits, or compared within 16-bit values, is computed in 16 bits
        (narrowing.py says why that is exact)."""
        if e[0] == "cast" and S.is_int(e[1]) and S.BITS[e[1]] <= 16 and S.type_of(e[2]) in ("i32", "u32"):
            return self.stored(e[1], e[2])
        if e[0] == "cmp":
            narrow = self.narrower.compare(e)
            if narrow is not None:
                return narrow
        if e[1] in ("i64", "u64"):
            wide = self.narrower.wide_value(e)
            if wide is not None:
                return wide
        return self.plain_expr(e)

    def stored(self, elem: str, value: Tree) -> Any:
        """value converted to the element type elem (C's wrap-around), from 16-bit arithmetic
        when elem has at most 16 bits: only the low 16 bits of the value matter then."""
        if S.is_int(elem) and S.BITS[elem] <= 16 and worth_narrowing(value):
            return pw.cast(PW_TYPES[elem], self.narrower.modular(value, "i16" if S.is_signed(elem) else "u16"))
        return pw.cast(PW_TYPES[elem], self.expr(value))

    def plain_expr(self, e: Tree) -> Any:  # noqa: C901 - one case per tree form
        """The engine expression of a tree in C's types (its children may be narrowed)."""
        kind, t = e[0], e[1]
        ty = PW_TYPES[t]
        if kind == "const":
            if t == "bool":
                return pw.cast(pw.Int(32), int(e[2])) == pw.cast(pw.Int(32), 1)
            return pw.cast(ty, e[2])
        if kind == "sym":
            return pw.cast(ty, self.var(e[2]))
        if kind == "aff":
            total = None
            for mono, c in e[2]:
                term = None
                for atom in mono:
                    a = pw.cast(ty, self.expr(atom))
                    term = a if term is None else term * a
                coef = c % (1 << S.BITS[t]) if not S.is_signed(t) else c
                if term is None:
                    term = pw.cast(ty, coef)
                elif c != 1:
                    term = term * pw.cast(ty, coef)
                total = term if total is None else total + term
            return total
        if kind == "load":
            tag = e[2]
            args = [self.expr(e[4]), self.expr(e[3])]
            if self.self_ref is not None and self.self_ref[0] == tag:
                return self.self_ref[1][tuple(args)]
            if self.is_table_lookup(e):
                return pw.cast(ty, self.wide_table(tag)[tuple(args)])
            return self.version(tag)[tuple(args)]
        if kind == "func":
            name = e[2]
            args = [self.expr(a) for a in e[3]]
            if name in self.l.accumulators:
                f = self.accumulator(name)
                args.reverse()
            else:
                f = self.version(name)
            return f[tuple(args)] if args else f[()]
        if kind == "cast":
            inner = e[2]
            x = self.expr(inner)
            if S.type_of(inner) == "bool":
                return pw.select(x, pw.cast(ty, 1), pw.cast(ty, 0))
            return pw.cast(ty, x)
        if kind == "bin":
            op = e[2]
            a, b = self.expr(e[3]), self.expr(e[4])
            if op in ("<<", ">>"):
                return a << b if op == "<<" else a >> b
            a, b = pw.cast(ty, a), pw.cast(ty, b)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "&":
                return a & b
            if op == "|":
                return a | b
            if op == "^":
                return a ^ b
            if op == "min":
                return pw.min(a, b)
            if op == "max":
                return pw.max(a, b)
            if op == "fdiv":
                return a / b
            if op == "fmod":
                return a % b
            if op in ("/", "%"):
                return self.c_division(op, e[3], e[4], a, b, t)
            raise ValueError(op)
        if kind == "cmp":
            a, b = self.expr(e[3]), self.expr(e[4])
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[e[2]]
        if kind == "and":
            return pw.logical_and(self.expr(e[2]), self.expr(e[3]))
        if kind == "or":
            return pw.logical_or(self.expr(e[2]), self.expr(e[3]))
        if kind == "not":
            return pw.logical_not(self.expr(e[2]))
        if kind == "select":
            return pw.select(self.expr(e[2]), pw.cast(ty, self.expr(e[3])), pw.cast(ty, self.expr(e[4])))
        if kind == "un":
            op = e[2]
            a = pw.cast(ty, self.expr(e[3]))
            if op == "neg":
                return pw.cast(ty, 0) - a
            if op == "bnot":
                return ~a
            if op == "abs":
                if S.is_int(t):
                    return pw.select(a < pw.cast(ty, 0), pw.cast(ty, 0) - a, a)
                return pw.abs(a)
            if op == "sqrt":
                return pw.sqrt(a)
            if op == "floor":
                return pw.floor(a)
            raise ValueError(op)
        raise ValueError(kind)

    def c_division(self, op: str, ta: Tree, tb: Tree, a: Any, b: Any, t: str) -> Any:
        """C's truncating / and % from Halide's Euclidean ones."""
        ty = PW_TYPES[t]
        if not S.is_int(t):
            return a / b
        bounds = self.l.bounds()
        ra, rb = S.interval(ta, bounds), S.interval(tb, bounds)
        if not S.is_signed(t) or (ra is not None and ra[0] >= 0 and rb is not None and rb[0] > 0):
            return a / b if op == "/" else a % b
        q, r = a / b, a % b
        zero, one = pw.cast(ty, 0), pw.cast(ty, 1)
        if rb is not None and rb[0] > 0:
            trunc = pw.select(pw.logical_and(a < zero, r != zero), q + one, q)
        else:
            fix = pw.select(b > zero, q + one, q - one)
            trunc = pw.select(pw.logical_and(a < zero, r != zero), fix, q)
        return trunc if op == "/" else a - trunc * b


def dropped_conditions(lifted: Lifted, v: Version) -> bool:
    """Whether a stage is defined by its one store's value alone: a single piece over [0, n)
    needs no fallback (the output is realized over exactly that region), and a temporary
    outside what C wrote is undefined in C anyway."""
    b = lifted.buffers[v.buffer]
    prev_v = lifted.versions[v.previous]
    prev_initial = prev_v.kind == "initial" and b.initial in ("image", "undefined", "zero")
    single = len(v.pieces) == 1 and "predicate" not in v.pieces[0].conditions
    return single and prev_initial and (b.initial == "undefined" or _starts_at_zero(v.pieces[0].conditions))


def stores_what_previous_stores(lifted: Lifted, v: Version) -> bool:
    """Whether a stage stores, wherever it stores, what the previous version (one store over
    the whole buffer) already holds there: the scalar tail loop after an SSE2 loop computes
    the same value at its pixels as the vector loop's, which the vector loop's version
    already covers. The stage is then the previous version; otherwise the main region's
    select computed both values in every vector (loop partitioning keeps only the side of
    a select its test takes, here the tail). Proved by z3 for integer stores."""
    from pixelweave.nodes.lift.prove import same_stored_value

    prev_v = lifted.versions.get(v.previous) if v.previous else None
    if v.kind != "pure" or v.dims or prev_v is None or prev_v.kind != "pure" or prev_v.dims:
        return False
    if len(prev_v.pieces) != 1 or not dropped_conditions(lifted, prev_v):
        return False
    elem = lifted.buffers[v.buffer].elem
    return all(same_stored_value(lifted, elem, piece.value, prev_v.pieces[0].value) for piece in v.pieces)


def joined_with_previous(lifted: Lifted, v: Version) -> Piece | None:
    """The previous version's store extended over this version's columns, when this version
    (one store) stores, in the columns that follow the previous one's (its range starts where
    the previous range ends, in the same rows), the value the previous version stores there:
    the scalar tail loop after an SSE2 loop that starts past column 0 (a stencil leaving its
    border alone). One select over the joined range then holds both stores, and loop
    partitioning finds one steady state for it; the two nested selects had no common one
    (the tail's test, partitioned for its own small range, left every vector of the row in
    the partitioned loop's prologue, with clamped loads). Proved by z3 for integer stores.
    None otherwise."""
    from pixelweave.nodes.lift.prove import same_stored_value

    prev_v = lifted.versions.get(v.previous) if v.previous else None
    if v.kind != "pure" or v.dims or prev_v is None or prev_v.kind != "pure" or prev_v.dims:
        return None
    if len(v.pieces) != 1 or len(prev_v.pieces) != 1 or lifted.versions[prev_v.previous].dims:
        return None
    piece, before = v.pieces[0], prev_v.pieces[0]
    if "predicate" in piece.conditions or "predicate" in before.conditions:
        return None
    ranges = []
    for p in (before, piece):
        by_column = [(key, c) for key, c in p.conditions.items() if COL in S.symbols(c)]
        if len(by_column) != 1:
            return None
        found = column_range(by_column[0][1])
        if found is None:
            return None
        ranges.append(found)
    others = [{k: c for k, c in p.conditions.items() if COL not in S.symbols(c)} for p in (before, piece)]
    if list(others[0].values()) != list(others[1].values()):
        return None
    (lo, end), (start, hi) = ranges
    if S.constant_value(S.arith("-", end, start)) != 0:
        return None
    elem = lifted.buffers[v.buffer].elem
    if not same_stored_value(lifted, elem, piece.value, before.value):
        return None
    bounds = lifted.bounds()
    # [lo, end) then [end, hi): [min(lo, end), max(end, hi)) whichever range is empty
    if not _at_least_zero(S.arith("-", end, lo), bounds):
        lo = S.minmax("min", lo, end)
    if not _at_least_zero(S.arith("-", hi, end), bounds):
        hi = S.minmax("max", end, hi)
    col = S.sym("i32", COL)
    joined = S.logic("and", S.compare(">=", col, lo), S.compare("<", col, hi))
    conditions = dict(others[0])
    conditions["col_range_joined"] = joined
    return Piece(before.value, conditions, before.line, before.region, before.lane)


def column_range(cond: Tree) -> tuple[Tree, Tree] | None:
    """[lo, hi) of the column for a column range test `a >= b && a < c` whose `a` is the
    column plus terms without it, or that floor-divided by a positive constant k (a loop
    over vectors of k columns: then b is 0 and [0, k * c)), b and c without the column;
    None for any other test."""
    if cond[0] != "and" or cond[2][0] != "cmp" or cond[3][0] != "cmp":
        return None
    (_, _, op_lo, a, b), (_, _, op_hi, a2, c) = cond[2], cond[3]
    if op_lo != ">=" or op_hi != "<" or a != a2 or S.type_of(a) != "i32":
        return None
    if COL in S.symbols(b) or COL in S.symbols(c):
        return None
    if a[0] == "bin" and a[2] == "fdiv" and a[4][0] == "const" and a[4][2] > 0 and b == S.const("i32", 0):
        a, c = a[3], S.arith("*", c, a[4])  # floor(a / k) in [0, c) is a in [0, k * c)
        if S.type_of(a) != "i32":
            return None
    col = S.sym("i32", COL)
    offset = S.arith("-", a, col)
    if COL in S.symbols(offset):
        return None
    return S.arith("-", b, offset), S.arith("-", c, offset)


def _at_least_zero(e: Tree, bounds: tuple) -> bool:
    """Whether e >= 0 for every parameter value: from its interval, or from its form (a sum
    with non-negative coefficients of terms that are each at least zero, such as a loop's
    trip count `max(n, 0)`), which holds for parameters without a declared range."""
    found = S.interval(e, bounds)
    if found is not None and found[0] >= 0:
        return True
    if e[0] == "const":
        return e[2] >= 0
    if e[0] == "bin" and e[2] == "max":
        return _at_least_zero(e[3], bounds) or _at_least_zero(e[4], bounds)
    if e[0] == "aff":
        return all(c >= 0 and all(_at_least_zero(atom, bounds) for atom in mono) for mono, c in e[2])
    return False


def split_conditions(piece: Piece, whole_rows: Tree | None) -> tuple[list[Tree], list[Tree]]:
    """A piece's conditions as (those on the column, the others), leaving out `whole_rows`
    (rows_of_every_store): the engine definition's inner and outer selects."""
    by_column = [c for c in piece.conditions.values() if COL in S.symbols(c)]
    others = [c for c in piece.conditions.values() if COL not in S.symbols(c) and c != whole_rows]
    return by_column, others


def rows_of_every_store(lifted: Lifted, buffer: str) -> Tree | None:
    """The row range [0, n) that every store into a buffer is made over, if one is: then the
    buffer's written rows (what its Func is realized over) are exactly [0, n), the test
    always holds there and is left out. A per-row test stays in every vector of the row
    otherwise (partitioning the columns cannot remove it), with a load of the previous
    contents it would select."""
    found: Tree | None = None
    for tag in lifted.buffers[buffer].versions:
        version = lifted.versions[tag]
        if version.kind == "scatter" or version.dims:
            return None
        for piece in version.pieces:
            rows = [(key, c) for key, c in piece.conditions.items() if ROW in S.symbols(c) and COL not in S.symbols(c)]
            if len(rows) != 1 or not _starts_at_zero(dict(rows)) or found not in (None, rows[0][1]):
                return None
            found = rows[0][1]
    return found


def _starts_at_zero(conditions: dict[str, Tree]) -> bool:
    """Whether the conditions are ranges [0, n) on row and column (no other condition)."""
    for key, c in conditions.items():
        if "_range_" not in key:
            return False
        if c[0] != "and" or c[2][0] != "cmp" or c[2][2] != ">=":
            return False
        lower = c[2][3]
        if lower[0] == "bin" and lower[2] == "fdiv" and lower[4][0] == "const" and lower[4][2] > 0:
            lower = lower[3]  # x = col / 4 with every lane c = col % 4 written: [0, 4 * n)
        if c[2][4] != S.const("i32", 0) or lower[0] != "sym" or lower[2] not in (ROW, COL):
            return False
    return True


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def build(lifted: Lifted, last_write_positions: bool = True) -> LiftedPipeline:
    """Engine Funcs for a lifted C function. last_write_positions: last-write-wins scatters
    as the maximum of their loop positions (define_by_last_position), which computes in
    parallel; without it they are updates over an RDom in C's order, as written (what a
    document shows)."""
    b = _Builder(lifted, last_write_positions)
    outputs = {}
    for name, buf in lifted.buffers.items():
        if buf.kind == "output":
            f = b.version(buf.current)
            if lifted.versions[buf.current].dims:
                raise ValueError(f"output `{name}` is per-iteration")
            outputs[name] = f
    result = None
    if lifted.result is not None:
        result = pw.Func("result")
        result[()] = pw.cast(PW_TYPES[lifted.result_type], b.expr(S.cast(lifted.result_type, lifted.result)))
    funcs = dict(b.funcs)
    funcs.update(b.acc_funcs)
    return LiftedPipeline(lifted, outputs, result, b.images, b.params, funcs)


def written_extents(engine: LiftedPipeline, buffer: str) -> tuple[Any, Any]:
    """(columns, rows) the function writes in a buffer, from 0, as engine expressions of its
    Params: each store's address with every loop counter at its last iteration (outer loops
    first, so an inner trip count sees them there; a counter with a negative coefficient at
    0), the largest over the stores, plus one. What regions.written_extent computes for given
    values, kept symbolic for a document whose sizes follow its parameters (an address read
    from data counts at its type's largest value). ValueError when the buffer is not written."""
    lifted = engine.lifted
    index = "i32"
    one = S.const(index, 1)
    cols: Tree | None = None
    rows: Tree | None = None
    for name, row, col, loops in lifted.writes:
        if name != buffer:
            continue
        last: dict[str, Tree] = {}
        for sym in loops:
            last[sym] = S.arith("-", S.substitute(lifted.loops[sym], last), one)
        r = S.arith("+", _largest(row, loops, last), one)
        c = S.arith("+", _largest(col, loops, last), one)
        rows = r if rows is None else S.minmax("max", rows, r)
        cols = c if cols is None else S.minmax("max", cols, c)
    if cols is None or rows is None:
        raise ValueError(f"`{buffer}` is not written")
    b = _Builder(lifted)
    b.params = dict(engine.params)
    return pw.cast(pw.Int(32), b.expr(cols)), pw.cast(pw.Int(32), b.expr(rows))


def _largest(address: Tree, loops: tuple, last: dict[str, Tree]) -> Tree:
    """The largest value of an affine address over the loops (parameters taken as non-negative)."""
    total = S.const("i32", 0)
    first = {sym: S.const("i32", 0) for sym in loops}
    for mono, c in S.terms(address).items():
        term = S.make_aff("i32", {mono: c})
        if S.has_kind(term, ("load", "func")):
            # a data-dependent address (a histogram's bin): bounded by its type's range
            bound = S.interval(term, ())
            if bound is None:
                raise ValueError("a store's address depends on data without a bound")
            term = S.const("i32", bound[1])
        elif any(sym in S.symbols(term) for sym in loops):
            term = S.substitute(term, last if c > 0 else first)
        total = S.arith("+", total, term)
    return total


def accumulator_extents(engine: LiftedPipeline, name: str) -> tuple[Any, ...]:
    """The extents of an accumulator's Func (innermost enclosing loop first): the trip counts
    of the loops it is computed inside."""
    lifted = engine.lifted
    acc = lifted.accumulators[name]
    b = _Builder(lifted)
    b.params = dict(engine.params)
    return tuple(pw.cast(pw.Int(32), b.expr(lifted.loops[p])) for p in reversed(acc.pure))


def loop_trip(engine: LiftedPipeline, sym: str) -> Any:
    """A loop's trip count as an engine expression of the function's Params."""
    b = _Builder(engine.lifted)
    b.params = dict(engine.params)
    return pw.cast(pw.Int(32), b.expr(engine.lifted.loops[sym]))
