"""A proof over bit-vectors (z3) for straight-line per-pixel kernels: the value the C code
stores at a pixel, read with C's semantics from what symbolic execution extracted
(truncating division, promotions, wrap-around), equals the engine's definition of that pixel,
read with Halide's semantics (Euclidean division, Halide's casts and shifts), for every value
of every input pixel and parameter. Reads of the same buffer element are the same unknown on
both sides (an uninterpreted function of row and column); the edge clamp the engine puts on
inputs is the identity inside the image, where the C code reads.

It checks the translation into the engine, not the symbolic execution itself; the
differential test checks the whole (see verify.py)."""

from __future__ import annotations

from dataclasses import dataclass

import z3
from pixelweave.engine.ir import expr as E
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.c_lift import CLift
from pixelweave.nodes.lift.model import Lifted
from pixelweave.nodes.lift.stages import COL, ROW
from pixelweave.nodes.lift.symbolic import Tree
from pixelweave.nodes.lift.to_engine import LiftedPipeline

BITS = 32


@dataclass
class Proof:
    """Whether the z3 proof applies, and if so whether it held (with a counterexample if not)."""

    applicable: bool
    held: bool
    detail: str


def applicable(lift: CLift) -> str | None:
    """Why the proof does not apply (None when it does)."""
    lifted = lift.lifted
    if lifted.accumulators:
        return "the function has reductions"
    for b in lifted.buffers.values():
        if b.kind in ("temp", "table"):
            return "the function has temporaries or tables"
        if not S.is_int(b.elem):
            return "the function works on floating point"
        versions = [lifted.versions[t] for t in b.versions]
        if any(v.kind == "scatter" for v in versions):
            return "the function has data-dependent stores"
        if any(v.dims for v in versions):
            return "a buffer is expanded per loop iteration"
    if lifted.result is not None:
        return "the function returns a value"
    if any(not S.is_int(s.type) for s in lifted.scalars.values()):
        return "a parameter is floating point"
    if not lift.engine.outputs:
        return "nothing is written"
    return None


def prove(lift: CLift, timeout_ms: int = 5000) -> Proof:
    """Prove every stage of a straight-line integer kernel, piece by piece (the condition
    under which a store applies and the value it stores), under the declared parameter ranges."""
    why = applicable(lift)
    if why is not None:
        return Proof(False, False, f"not a straight-line integer kernel: {why}")
    ctx = _Context(lift.lifted, lift.engine)
    lifted = lift.lifted
    assumptions = [z3.And(ctx.var(n) >= lo, ctx.var(n) <= hi) for n, lo, hi in lifted.bounds()]
    queries = 0
    for b in lifted.buffers.values():
        for tag in b.versions:
            version = lifted.versions[tag]
            if version.kind != "pure":
                continue
            func = lift.engine.funcs[tag]
            for what, spec, impl in ctx.obligations(version, func.definition().value):
                solver = z3.Solver()
                solver.set("timeout", timeout_ms)
                solver.add(*assumptions)
                solver.add(spec != impl)
                outcome = solver.check()
                queries += 1
                if outcome == z3.sat:
                    return Proof(True, False, f"{what} of `{tag}` differs for {solver.model()}")
                if outcome != z3.unsat:
                    return Proof(True, False, f"z3 gave up on {what} of `{tag}` ({solver.reason_unknown()})")
    inputs = "all inputs" if not ctx.assumed else f"all inputs with {', '.join(sorted(ctx.assumed))}"
    return Proof(True, True, f"z3 proved all {queries} obligations (store conditions and values) for {inputs}")


def same_stored_value(lifted: Lifted, elem: str, a: Tree, b: Tree, timeout_ms: int = 2000) -> bool:
    """Whether two integer stores into elements of type `elem` store the same value at every
    pixel, for every input and parameter in its declared range: z3 proved it (False where
    it did not, gave up, or the values are not straight-line integer code)."""
    if a == b:
        return True
    for tree in (a, b):
        for node in S.walk(tree):
            if node[0] == "func" or not (S.is_int(node[1]) or node[1] == "bool"):
                return False
    ctx = _Context(lifted)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*[z3.And(ctx.var(n) >= lo, ctx.var(n) <= hi) for n, lo, hi in lifted.bounds()])
    solver.add(ctx.c(S.cast(elem, a)) != ctx.c(S.cast(elem, b)))
    return solver.check() == z3.unsat


JOINED_SIZE_LIMIT = 1 << 24  # parameters of joined column ranges (image sizes) are proved up to this


class _Context:
    def __init__(self, lifted: Lifted, engine: LiftedPipeline | None = None) -> None:
        self.lifted = lifted
        self.reads: dict[str, z3.FuncDeclRef] = {}
        self.vars: dict[str, z3.BitVecRef] = {}
        self.assumed: set[str] = set()  # what a proof assumed beyond the declared ranges
        self.func_tags = {id(f): tag for tag, f in engine.funcs.items()} if engine is not None else {}
        self.image_tags = {}
        for key in engine.images if engine is not None else ():
            name = key[: -len("_in")] if key.endswith("_in") else key
            self.image_tags[key] = self.lifted.buffers[name].versions[0]

    def read(self, tag: str, row: z3.BitVecRef, col: z3.BitVecRef) -> z3.BitVecRef:
        if tag not in self.reads:
            elem = self.lifted.buffers[self.lifted.versions[tag].buffer].elem
            self.reads[tag] = z3.Function(
                f"read_{tag}", z3.BitVecSort(BITS), z3.BitVecSort(BITS), z3.BitVecSort(S.BITS[elem])
            )
        return self.reads[tag](row, col)

    def var(self, name: str, bits: int = BITS) -> z3.BitVecRef:
        key = f"{name}:{bits}"
        if key not in self.vars:
            self.vars[key] = z3.BitVec(name, bits)
        return self.vars[key]

    # ---- C side: the extracted trees ---------------------------------------------------

    def obligations(self, version, engine_value: E.Expr):
        """(what, C side, engine side) pairs whose equality proves the stage: the store
        conditions and values of each piece, and the fallback to the previous version."""
        from pixelweave.nodes.lift.to_engine import (
            dropped_conditions,
            joined_with_previous,
            rows_of_every_store,
            split_conditions,
            stores_what_previous_stores,
        )

        b = self.lifted.buffers[version.buffer]
        row, col = self.var("row"), self.var("col")
        previous = self.lifted.versions.get(version.previous)
        if previous is not None and stores_what_previous_stores(self.lifted, version):
            for i, piece in enumerate(version.pieces):  # the engine reads the previous version
                c_value = self.c(S.cast(b.elem, piece.value))
                yield (f"the value of store {i + 1}", c_value, self.c(S.cast(b.elem, previous.pieces[0].value)))
            return
        if joined_with_previous(self.lifted, version) is not None:
            yield self.joined_obligation(version, engine_value)
            return
        if dropped_conditions(self.lifted, version):
            yield ("the stored value", self.c(S.cast(b.elem, version.pieces[0].value)), self.engine(engine_value))
            return
        # A row range every store of the buffer shares is where the Func is realized: it
        # holds there, and the engine definition leaves it out.
        whole_rows = rows_of_every_store(self.lifted, version.buffer)
        e = engine_value
        for i, piece in reversed(list(enumerate(version.pieces))):
            by_column, others = split_conditions(piece, whole_rows)
            value = self.c(S.cast(b.elem, piece.value))
            if not by_column and not others:
                yield (f"the value of store {i + 1}", value, self.engine(e))
                return
            conditions, rest = [], None
            for group in (others, by_column):  # the outer select, then the inner one
                if not group:
                    continue
                if not isinstance(e, E.Select) or (rest is not None and not e.false_value.same_as(rest)):
                    raise ValueError("the engine definition does not follow the pieces")
                conditions.append(e.cond)
                e, rest = e.true_value, e.false_value
            cond = z3.And(*[self.c(c) for c in others + by_column])
            engine_cond = z3.And(*[self.engine(c) for c in conditions])
            yield (f"the condition of store {i + 1}", cond, engine_cond)
            yield (f"the value of store {i + 1}", value, self.engine(e))
            e = rest
        fallback = self.read(self.lifted.versions[version.previous].tag, row, col)
        yield ("the unwritten elements", fallback, self.engine(e))

    def joined_obligation(self, version, engine_value: E.Expr):
        """(what, C side, engine side) for a version whose store the engine joined with the
        previous version's (to_engine.joined_with_previous): what C leaves in the buffer after
        both stores, the later one winning, against the engine definition, in the rows every
        store covers (the engine leaves that test out: its Func is realized there)."""
        from pixelweave.nodes.lift.to_engine import rows_of_every_store

        b = self.lifted.buffers[version.buffer]
        row, col = self.var("row"), self.var("col")
        previous = self.lifted.versions[version.previous]
        c_side = self.read(previous.previous, row, col)
        for piece in (previous.pieces[0], version.pieces[0]):
            holds = z3.And(*[self.c(c) for c in piece.conditions.values()])
            c_side = z3.If(holds, self.c(S.cast(b.elem, piece.value)), c_side)
        engine_side = self.engine(engine_value)
        holds = []
        whole_rows = rows_of_every_store(self.lifted, version.buffer)
        if whole_rows is not None:
            holds.append(self.c(whole_rows))
        # The joined range is [lo, hi) in exact integers; the C's bounds wrap around for
        # sizes near 2^31, where it and the two ranges part.
        for name in sorted(self._range_parameters(previous, version)):
            holds.append(z3.And(self.var(name) >= -JOINED_SIZE_LIMIT, self.var(name) <= JOINED_SIZE_LIMIT))
            self.assumed.add(f"|{name}| <= 2^{JOINED_SIZE_LIMIT.bit_length() - 1}")
        if holds:
            c_side = z3.If(z3.And(*holds), c_side, engine_side)
        return ("the two stores joined", c_side, engine_side)

    def _range_parameters(self, *versions) -> set[str]:
        """The scalar parameters the store conditions of versions depend on."""
        found = set()
        for version in versions:
            for piece in version.pieces:
                for c in piece.conditions.values():
                    found |= {n for n in S.symbols(c) if n in self.lifted.scalars}
        return found

    def c(self, e: tuple) -> z3.ExprRef:
        kind, t = e[0], e[1]
        if kind == "const":
            return z3.BoolVal(bool(e[2])) if t == "bool" else z3.BitVecVal(int(e[2]) % (1 << S.BITS[t]), S.BITS[t])
        if kind == "sym":
            name = {ROW: "row", COL: "col"}.get(e[2], e[2])
            return self.var(name, S.BITS[t])
        if kind == "aff":
            bits = S.BITS[t]
            total = z3.BitVecVal(0, bits)
            for mono, coef in e[2]:
                term = z3.BitVecVal(coef % (1 << bits), bits)
                for atom in mono:
                    term = term * _convert(self.c(atom), S.type_of(atom), t)
                total = total + term
            return total
        if kind == "load":
            return self.read(
                e[2], _convert(self.c(e[3]), S.type_of(e[3]), "i32"), _convert(self.c(e[4]), S.type_of(e[4]), "i32")
            )
        if kind == "cast":
            return _convert(self.c(e[2]), S.type_of(e[2]), t)
        if kind == "bin":
            op = e[2]
            a, b = self.c(e[3]), self.c(e[4])
            signed = S.is_signed(t)
            if op in ("<<", ">>"):
                b = _convert(b, S.type_of(e[4]), t)
                if op == "<<":
                    return a << b
                return a >> b if signed else z3.LShR(a, b)
            table = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "&": lambda: a & b,
                "|": lambda: a | b,
                "^": lambda: a ^ b,
                "/": lambda: (a / b) if signed else z3.UDiv(a, b),
                "%": lambda: z3.SRem(a, b) if signed else z3.URem(a, b),
                "min": lambda: z3.If(a < b if signed else z3.ULT(a, b), a, b),
                "max": lambda: z3.If(a > b if signed else z3.UGT(a, b), a, b),
                "fdiv": lambda: _floor_div(a, b),
                "fmod": lambda: a - _floor_div(a, b) * b,
            }
            return table[op]()
        if kind == "cmp":
            ta = S.type_of(e[3])
            a, b = self.c(e[3]), self.c(e[4])
            return _compare(e[2], a, b, S.is_signed(ta) or ta == "bool")
        if kind == "and":
            return z3.And(self.c(e[2]), self.c(e[3]))
        if kind == "or":
            return z3.Or(self.c(e[2]), self.c(e[3]))
        if kind == "not":
            return z3.Not(self.c(e[2]))
        if kind == "select":
            return z3.If(self.c(e[2]), self.c(e[3]), self.c(e[4]))
        if kind == "un":
            a = self.c(e[3])
            if e[2] == "neg":
                return -a
            if e[2] == "bnot":
                return ~a
            if e[2] == "abs":
                return z3.If(a < 0, -a, a)
        raise ValueError(f"no bit-vector meaning for {kind}")

    # ---- engine side: Halide semantics -----------------------------------------------------

    def engine(self, e: E.Expr) -> z3.ExprRef:  # noqa: C901 - one case per node class
        t = e.type()
        if isinstance(e, E.Const):
            if t.is_bool():
                return z3.BoolVal(bool(e.value))
            return z3.BitVecVal(int(e.value) % (1 << t.bits), t.bits)
        if isinstance(e, E.Variable):
            return self.var(e.name, t.bits)
        if isinstance(e, E.Cast):
            return _convert(self.engine(e.value), _name(e.value.type()), _name(t))
        if isinstance(e, E.Select):
            return z3.If(self.engine(e.cond), self.engine(e.true_value), self.engine(e.false_value))
        if isinstance(e, E.Not):
            return z3.Not(self.engine(e.a))
        if isinstance(e, E.And):
            return z3.And(self.engine(e.a), self.engine(e.b))
        if isinstance(e, E.Or):
            return z3.Or(self.engine(e.a), self.engine(e.b))
        if isinstance(e, E.Compare):
            ta = e.a.type()
            op = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}[type(e)]
            return _compare(op, self.engine(e.a), self.engine(e.b), ta.is_int() or ta.is_bool())
        if isinstance(e, E.BinaryOp):
            a, b = self.engine(e.a), self.engine(e.b)
            signed = t.is_int()
            if isinstance(e, E.Add):
                return a + b
            if isinstance(e, E.Sub):
                return a - b
            if isinstance(e, E.Mul):
                return a * b
            if isinstance(e, E.Min):
                return z3.If(a < b if signed else z3.ULT(a, b), a, b)
            if isinstance(e, E.Max):
                return z3.If(a > b if signed else z3.UGT(a, b), a, b)
            zero = z3.BitVecVal(0, t.bits)
            if isinstance(e, E.Div):
                if not signed:
                    return z3.If(b == zero, zero, z3.UDiv(a, b))
                return z3.If(b == zero, zero, _euclid_div(a, b))
            if isinstance(e, E.Mod):
                if not signed:
                    return z3.If(b == zero, zero, z3.URem(a, b))
                return z3.If(b == zero, zero, a - _euclid_div(a, b) * b)
        if isinstance(e, E.Call):
            if e.call_kind in ("func", "image"):
                tag = self._tag(e)
                col = _convert(self.engine(e.args[0]), _name(e.args[0].type()), "i32")
                row = _convert(self.engine(e.args[1]), _name(e.args[1].type()), "i32")
                if tag.endswith("#wide"):  # a lookup table widened to 32 bits (to_engine.py)
                    table = tag[: -len("#wide")]
                    elem = self.lifted.buffers[self.lifted.versions[table].buffer].elem
                    return _convert(self.read(table, row, col), elem, _name(e.type()))
                return self.read(tag, row, col)
            args = [self.engine(a) for a in e.args]
            name = e.name
            if name == "bitwise_and":
                return args[0] & args[1]
            if name == "bitwise_or":
                return args[0] | args[1]
            if name == "bitwise_xor":
                return args[0] ^ args[1]
            if name == "bitwise_not":
                return ~args[0]
            if name == "shift_left":
                return args[0] << args[1]
            if name == "shift_right":
                return args[0] >> args[1] if t.is_int() else z3.LShR(args[0], args[1])
        if isinstance(e, E.Let):
            raise ValueError("let expressions are not expected in lifted definitions")
        raise ValueError(f"no bit-vector meaning for {type(e).__name__}")

    def _tag(self, call: E.Call) -> str:
        target = call.target
        if call.call_kind == "image":
            return self.image_tags[target.name()]
        tag = self.func_tags.get(id(target))
        if tag is None:
            raise ValueError(f"a read of `{target.name()}` the proof cannot name")
        return tag


def _name(t) -> str:
    if t.is_bool():
        return "bool"
    if t.is_float():
        return f"f{t.bits}"
    return f"{'i' if t.is_int() else 'u'}{t.bits}"


def _convert(v: z3.ExprRef, src: str, dst: str) -> z3.ExprRef:
    """A value of C/Halide type src as type dst (sign or zero extension, or truncation)."""
    if src == dst:
        return v
    if src == "bool":
        bits = S.BITS[dst]
        return z3.If(v, z3.BitVecVal(1, bits), z3.BitVecVal(0, bits))
    if dst == "bool":
        return v != 0
    sb, db = S.BITS[src], S.BITS[dst]
    if db == sb:
        return v
    if db < sb:
        return z3.Extract(db - 1, 0, v)
    return z3.SignExt(db - sb, v) if S.is_signed(src) else z3.ZeroExt(db - sb, v)


def _compare(op: str, a, b, signed: bool):
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if signed:
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    return {"<": z3.ULT(a, b), "<=": z3.ULE(a, b), ">": z3.UGT(a, b), ">=": z3.UGE(a, b)}[op]


def _floor_div(a, b):
    q = a / b  # truncating (bvsdiv)
    adjust = z3.And(z3.SRem(a, b) != 0, (a < 0) != (b < 0))
    return z3.If(adjust, q - 1, q)


def _euclid_div(a, b):
    q = a / b
    r = z3.SRem(a, b)
    return z3.If(r < 0, z3.If(b > 0, q - 1, q + 1), q)
