"""Symbolic execution of one C function into stages (see model.py).

Scalars become trees; a pointer is (buffer, byte offset tree). A `for` loop gets a symbol
counting its iterations from 0; its trip count comes from the condition and the step.
Variables the body changes by a loop-invariant amount (pointer bumping, `x += 16`) are
induction variables, replaced by closed forms; variables it changes otherwise, in a loop
that stores nothing, are accumulators (a reduction: an RDom). if/else becomes selects on
the values and predicates on the stores. At the end of each loop its stores become a new
version of each buffer they write (stages.py solves the addresses into coordinates).
Anything else is refused with the file, the line and the construct.
"""

from __future__ import annotations

from dataclasses import dataclass

from pixelweave.nodes.lift import sse2
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.c_frontend import CFunction, CType, line_of, resolve_type
from pixelweave.nodes.lift.errors import LiftError
from pixelweave.nodes.lift.model import Accumulator, Buffer, Lifted, Scalar, Version
from pixelweave.nodes.lift.stages import form_stages
from pixelweave.nodes.lift.symbolic import Tree
from pycparser import c_ast

ELEM_BYTES = {
    "u8": 1,
    "i8": 1,
    "u16": 2,
    "i16": 2,
    "u32": 4,
    "i32": 4,
    "u64": 8,
    "i64": 8,
    "f32": 4,
    "f64": 8,
    "m128i": 16,
}
INDEX = "i32"
UNROLL_LIMIT = 32  # reductions over at most this many constant iterations become straight-line code


@dataclass(frozen=True)
class Pointer:
    buffer: str
    elem: str
    offset: Tree  # in bytes


@dataclass
class LoopInfo:
    sym: str
    trip: Tree
    start: Tree
    step: int
    limit: Tree
    line: int | None
    absorbed: bool = False


@dataclass
class Store:
    buffer: str
    before: str  # the version read before this loop's stage
    row: Tree
    col: Tree
    value: Tree
    loops: tuple[str, ...]
    predicate: Tree | None
    line: int | None


@dataclass
class Load:
    buffer: str
    version: str
    row: Tree
    col: Tree
    loops: tuple[str, ...]
    line: int | None


class _Refused(Exception):
    pass


class Executor:
    """Runs a CFunction symbolically; `run()` returns the Lifted model."""

    def __init__(self, fn: CFunction) -> None:
        self.fn = fn
        self.file = fn.file
        self.env: dict[str, object] = {}
        self.types: dict[str, CType] = {}
        self.buffers: dict[str, Buffer] = {}
        self.versions: dict[str, Version] = {}
        self.accumulators: dict[str, Accumulator] = {}
        self.scalars: dict[str, Scalar] = {}
        self.loops: list[LoopInfo] = []
        self.all_loops: dict[str, Tree] = {}
        self.stores: list[Store] = []
        self.loads: list[Load] = []
        self.reads: list[tuple] = []
        self.writes: list[tuple] = []
        self.predicate: Tree | None = None
        self.counter = 0
        self.result: Tree | None = None
        self.returned = False
        self.loop_bound_names = self._loop_bound_names()
        self.tiles: dict[str, LoopInfo] = {}
        self.forwarded: dict[tuple, Tree] = {}
        self.stage_lines: dict[str, int | None] = {}

    # ---- errors and names -----------------------------------------------------------------

    def refuse(self, node: c_ast.Node | None, construct: str, why: str) -> LiftError:
        return LiftError(self.file, line_of(node), construct, why)

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def _loop_bound_names(self) -> set[str]:
        names: set[str] = set()

        class V(c_ast.NodeVisitor):
            def visit_For(self, node):  # noqa: N802 - pycparser's visitor naming
                for part in (node.init, node.cond):
                    if part is not None:
                        names.update(_ids(part))
                self.generic_visit(node)

        V().visit(self.fn.node.body)
        return names

    # ---- entry ----------------------------------------------------------------------------

    def run(self) -> Lifted:
        decl = self.fn.node.decl
        ret = resolve_type(decl.type.type, self.fn.typedefs, self.file)
        params: list[tuple[str, str]] = []
        for p in decl.type.args.params if decl.type.args else []:
            if isinstance(p, c_ast.EllipsisParam):
                raise self.refuse(p, "a variadic function", "variadic parameters are outside the subset")
            if isinstance(p, c_ast.Typename) or p.name is None:
                continue  # (void)
            t = resolve_type(p.type, self.fn.typedefs, self.file)
            if t.pointer == 1 and not t.array:
                if t.base == "void":
                    raise self.refuse(p, f"parameter `{p.name}`", "a void pointer has no element type")
                self.buffers[p.name] = Buffer(p.name, t.base, "input", line_of(p))
                self._new_version(p.name, "initial")
                self.env[p.name] = Pointer(p.name, t.base, S.const(INDEX, 0))
                params.append((p.name, "pointer"))
            elif t.pointer == 0 and not t.array and t.base not in ("void", "m128i"):
                if S.is_int(t.base):
                    role = "extent" if p.name in self.loop_bound_names else "value"
                    self.scalars[p.name] = Scalar(p.name, t.base, role)
                    self.env[p.name] = S.sym(t.base, p.name)
                else:
                    self.scalars[p.name] = Scalar(p.name, t.base, "value")
                    self.env[p.name] = S.sym(t.base, p.name)
                params.append((p.name, "scalar"))
            else:
                raise self.refuse(
                    p, f"parameter `{p.name}` of type {t.describe()}", "parameters are scalars or pointers to scalars"
                )
            self.types[p.name] = t
        self._self_calls(self.fn.node.body)
        self.exec_stmt(self.fn.node.body)
        for b in self.buffers.values():
            if b.kind == "input" and b.written:
                b.kind = "output"
        lifted = Lifted(
            file=self.file,
            function=self.fn.name,
            params=params,
            scalars=self.scalars,
            buffers=self.buffers,
            versions=self.versions,
            accumulators=self.accumulators,
            loops=self.all_loops,
            result=self.result,
            result_type=ret.base if ret.base != "void" else None,
            reads=self.reads,
            writes=self.writes,
            stage_lines=self.stage_lines,
            ranges=dict(self.fn.ranges),
        )
        lifted.straight_line = not self.all_loops and not self.accumulators
        if not any(b.kind == "output" for b in self.buffers.values()) and self.result is None:
            raise self.refuse(
                self.fn.node.decl, f"function `{self.fn.name}`", "it writes no pointer parameter and returns nothing"
            )
        return lifted

    def _self_calls(self, body: c_ast.Node) -> None:
        name = self.fn.name
        file = self.file

        class V(c_ast.NodeVisitor):
            def visit_FuncCall(self, node):  # noqa: N802
                if isinstance(node.name, c_ast.ID) and node.name.name == name:
                    raise LiftError(file, line_of(node), f"the call to `{name}`", "recursion is outside the subset")
                self.generic_visit(node)

        V().visit(body)

    def _new_version(self, buffer: str, kind: str, line: int | None = None, dims: tuple[str, ...] = ()) -> Version:
        b = self.buffers[buffer]
        tag = f"{buffer}@{len(b.versions)}"
        v = Version(tag, buffer, kind, previous=b.versions[-1] if b.versions else None, dims=dims, line=line)
        b.versions.append(tag)
        self.versions[tag] = v
        return v

    # ---- statements -----------------------------------------------------------------------

    def exec_stmt(self, node: c_ast.Node | None) -> None:
        if node is None or self.returned:
            return
        if isinstance(node, c_ast.Compound):
            saved = set(self.env)
            for item in node.block_items or []:
                self.exec_stmt(item)
                if self.returned:
                    break
            for name in set(self.env) - saved:
                del self.env[name]
        elif isinstance(node, c_ast.Decl):
            self.exec_decl(node)
        elif isinstance(node, c_ast.DeclList):
            for d in node.decls:
                self.exec_decl(d)
        elif isinstance(node, c_ast.Assignment):
            self.exec_assign(node)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--"):
            self.exec_increment(node)
        elif isinstance(node, c_ast.For):
            self.exec_for(node)
        elif isinstance(node, c_ast.If):
            self.exec_if(node)
        elif isinstance(node, c_ast.Return):
            self.exec_return(node)
        elif isinstance(node, c_ast.FuncCall):
            self.exec_call_statement(node)
        elif isinstance(node, c_ast.EmptyStatement):
            pass
        elif isinstance(node, c_ast.Cast) and isinstance(node.to_type.type, c_ast.TypeDecl) and _is_void(node):
            pass  # (void)x;
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            raise self.refuse(
                node, "a while loop", "only counted `for` loops can be lifted (data-dependent control flow)"
            )
        elif isinstance(node, (c_ast.Break, c_ast.Continue, c_ast.Goto, c_ast.Label)):
            kind = type(node).__name__.lower()
            raise self.refuse(node, f"`{kind}`", "data-dependent control flow that cannot become a select")
        elif isinstance(node, c_ast.Switch):
            raise self.refuse(node, "a switch", "switch statements are outside the subset")
        elif isinstance(node, c_ast.Pragma):
            pass
        else:
            name = type(node).__name__
            if name == "Asm" or "asm" in name.lower():
                raise self.refuse(node, "inline assembly", "assembly cannot be lifted")
            raise self.refuse(node, f"a {name} statement", "outside the lifted subset")

    def exec_decl(self, node: c_ast.Decl) -> None:
        if isinstance(node.type, c_ast.FuncDecl):
            return
        t = resolve_type(node.type, self.fn.typedefs, self.file)
        self.types[node.name] = t
        if t.array:
            self.exec_array_decl(node, t)
            return
        if node.init is None:
            if t.pointer:
                self.env[node.name] = None
            elif t.base == "m128i":
                self.env[node.name] = sse2.zero()
            else:
                self.env[node.name] = S.const(t.base, 0)  # reading it before a write is undefined in C
            return
        value = self.eval(node.init)
        self.env[node.name] = self.convert_to(t, value, node)

    def exec_array_decl(self, node: c_ast.Decl, t: CType) -> None:
        if len(t.array) != 1 or t.pointer:
            raise self.refuse(node, f"array `{node.name}`", "only one-dimensional arrays of scalars are lifted")
        n = t.array[0]
        name = self.fresh(node.name)
        init = node.init
        if isinstance(init, c_ast.InitList):
            values = []
            for e in init.exprs:
                v = self.eval(e)
                if not isinstance(v, tuple) or v[0] != "const":
                    raise self.refuse(e, f"the initializer of `{node.name}`", "array initializers must be constants")
                values.append(S.wrap(t.base, v[2]))
            values += [0] * (n - len(values))
            if all(v == 0 for v in values):
                self.buffers[name] = Buffer(name, t.base, "temp", line_of(node), initial="zero")
            else:
                self.buffers[name] = Buffer(name, t.base, "table", line_of(node), initial="table", table=tuple(values))
        elif init is None:
            self.buffers[name] = Buffer(name, t.base, "temp", line_of(node), initial="undefined")
        else:
            raise self.refuse(init, f"the initializer of `{node.name}`", "use a brace list of constants")
        self._new_version(name, "initial", line_of(node))
        self.env[node.name] = Pointer(name, t.base, S.const(INDEX, 0))

    def convert_to(self, t: CType, value: object, node: c_ast.Node) -> object:
        if t.pointer:
            if isinstance(value, Pointer) and self.buffers[value.buffer].elem == "?" and t.base != "void":
                self.buffers[value.buffer].elem = t.base
                return Pointer(value.buffer, t.base, value.offset)
            if value is None or isinstance(value, Pointer):
                return value
            raise self.refuse(node, "a pointer assignment", "the value is not a pointer into a known buffer")
        if t.base == "m128i":
            if not isinstance(value, sse2.Vec):
                raise self.refuse(node, "an __m128i value", "it does not come from a lifted intrinsic")
            return value
        if not isinstance(value, tuple):
            raise self.refuse(node, "a scalar assignment", "the value is a pointer or vector, not a scalar")
        return S.cast(t.base, value)

    def exec_assign(self, node: c_ast.Assignment) -> None:
        op = node.op
        rhs = self.eval(node.rvalue)
        if op != "=":
            current = self.eval(node.lvalue)
            rhs = self.binary(op[:-1], current, rhs, node)
        self.assign(node.lvalue, rhs, node)

    def exec_increment(self, node: c_ast.UnaryOp) -> None:
        current = self.eval(node.expr)
        one = S.const("i32", 1)
        self.assign(node.expr, self.binary("+" if "++" in node.op else "-", current, one, node), node)

    def assign(self, target: c_ast.Node, value: object, node: c_ast.Node) -> None:
        if isinstance(target, c_ast.ID):
            name = target.name
            if name not in self.types:
                raise self.refuse(target, f"`{name}`", "assignment to an undeclared variable")
            if name in self.scalars or (isinstance(self.env.get(name), Pointer) and name in self.buffers):
                pass  # parameters are local copies in C
            value = self.convert_to(self.types[name], value, node)
            if self.predicate is not None and isinstance(value, tuple) and isinstance(self.env.get(name), tuple):
                value = S.select(self.predicate, value, self.env[name])
            elif self.predicate is not None and value != self.env.get(name):
                if isinstance(value, sse2.Vec) and isinstance(self.env.get(name), sse2.Vec):
                    value = sse2.select(self.predicate, value, self.env[name])
                else:
                    raise self.refuse(
                        node,
                        f"the assignment to pointer `{name}` inside an if",
                        "a pointer chosen by data is aliasing the lifter cannot follow",
                    )
            self.env[name] = value
            return
        pointer = self.address_of(target)
        self.store(pointer, value, node)

    def address_of(self, target: c_ast.Node) -> Pointer:
        if isinstance(target, c_ast.ArrayRef):
            base = self.eval(target.name)
            index = self.eval(target.subscript)
            if not isinstance(base, Pointer):
                raise self.refuse(target, "an array access", "the array is not a known buffer")
            return self.pointer_add(base, index, target)
        if isinstance(target, c_ast.UnaryOp) and target.op == "*":
            p = self.eval(target.expr)
            if not isinstance(p, Pointer):
                raise self.refuse(target, "a dereference", "not a pointer into a known buffer")
            return p
        raise self.refuse(target, f"an assignment to {type(target).__name__}", "outside the lifted subset")

    def pointer_add(self, p: Pointer, index: object, node: c_ast.Node, sign: int = 1) -> Pointer:
        if not isinstance(index, tuple) or not S.is_int(S.type_of(index)):
            raise self.refuse(node, "pointer arithmetic", "the offset is not an integer")
        step = S.const(INDEX, ELEM_BYTES[p.elem] * sign)
        return Pointer(p.buffer, p.elem, S.arith("+", p.offset, S.arith("*", S.cast(INDEX, index), step)))

    # ---- memory -----------------------------------------------------------------------------

    def split_address(self, p: Pointer, elem: str, node: c_ast.Node) -> tuple[Tree, Tree]:
        """(row, column) of an element address: terms with the buffer's row-stride parameter
        are the row; the rest, in elements, the column."""
        b = self.buffers[p.buffer]
        size = ELEM_BYTES[elem]
        ts = S.terms(p.offset)
        stride_terms = {}
        rest = {}
        for m, c in ts.items():
            names = [a[2] for a in m if a[0] == "sym" and a[2] in self.scalars]
            # a parameter used only in addresses is the stride before one that bounds loops
            names.sort(key=lambda n: (b.stride is None or b.stride[0] != n, n in self.loop_bound_names))
            stride_name = None
            for n in names:
                pure_stride = n not in self.loop_bound_names
                if (len(m) >= 2 or pure_stride) and (b.stride is None or b.stride[0] == n):
                    stride_name = n
                    break
            if stride_name is not None and (len(m) >= 2 or stride_name not in self.loop_bound_names):
                stride_sym = ("sym", self.scalars[stride_name].type, stride_name)
                stride_terms.setdefault(stride_name, {})[tuple(a for a in m if a != stride_sym)] = c
            else:
                rest[m] = c
        if len(stride_terms) > 1:
            raise self.refuse(node, f"the address into `{p.buffer}`", "it mixes two row strides")
        # a stride that is also the width (`src[y * width + x]`): a lone `width` term is a row
        # step when the rest of the column is a non-negative offset (`(y - 1) * width + x`),
        # and part of the column when it is not (`y * width + width - 1 - x`, a mirror)
        stride_name = next(iter(stride_terms), b.stride[0] if b.stride else None)
        if stride_name is not None and stride_name in self.scalars:
            lone = (S.sym(self.scalars[stride_name].type, stride_name),)
            if lone in rest:
                others = {m: c for m, c in rest.items() if m != lone}
                if others.get((), 0) >= 0 and all(c > 0 for m, c in others.items() if m):
                    stride_terms.setdefault(stride_name, {})[()] = rest.pop(lone)
        row = S.const(INDEX, 0)
        if stride_terms:
            ((name, row_terms),) = stride_terms.items()
            unit = None
            for c in row_terms.values():
                unit = abs(c) if unit is None else _gcd(unit, abs(c))
            if b.stride is None:
                b.stride = (name, unit)
                if name in self.scalars and name not in self.loop_bound_names:
                    self.scalars[name].role = "stride"
            unit = b.stride[1]
            if any(c % unit for c in row_terms.values()):
                raise self.refuse(
                    node, f"the address into `{p.buffer}`", f"its row stride `{name}` is used with different scales"
                )
            row = S.make_aff(INDEX, {m: c // unit for m, c in row_terms.items()})
        if any(c % size for c in rest.values()):
            raise self.refuse(
                node,
                f"the address into `{p.buffer}`",
                f"it is not a multiple of the element size ({size} bytes): a misaligned access",
            )
        col = S.make_aff(INDEX, {m: c // size for m, c in rest.items()})
        return row, col

    def load(self, p: Pointer, node: c_ast.Node, elem: str | None = None) -> Tree:
        elem = elem or p.elem
        b = self.buffers[p.buffer]
        if ELEM_BYTES[elem] != ELEM_BYTES[b.elem] or (elem != b.elem and S.is_int(elem) != S.is_int(b.elem)):
            raise self.refuse(
                node,
                f"a read of `{p.buffer}` as {elem}",
                f"the buffer holds {b.elem}: type punning is outside the subset",
            )
        row, col = self.split_address(p, b.elem, node)
        b.read = True
        key = (p.buffer, row, col, self.context())
        if key in self.forwarded:
            return S.cast(elem, self.forwarded[key])
        version = self.versions[b.current]
        loops = self.context()
        self.loads.append(Load(p.buffer, b.current, row, col, loops, line_of(node)))
        self.reads.append((p.buffer, row, col, loops))
        if version.dims:
            missing = [d for d in version.dims if d not in loops]
            if missing:
                raise self.refuse(
                    node, f"a read of `{p.buffer}`", "it reads a per-iteration temporary after the loop that fills it"
                )
            return S.cast(elem, ("func", b.elem, b.current, (col, row, *(S.sym(INDEX, d) for d in version.dims))))
        if b.initial == "table" and version.kind == "initial" and row == S.const(INDEX, 0) and col[0] == "const":
            i = col[2]
            if 0 <= i < len(b.table):
                return S.cast(elem, S.const(b.elem, b.table[i]))
        return S.cast(elem, ("load", b.elem, b.current, row, col))

    def store(self, p: Pointer, value: object, node: c_ast.Node) -> None:
        if p.elem == "m128i":
            raise self.refuse(node, "a store of __m128i through `*`", "use _mm_storeu_si128")
        b = self.buffers[p.buffer]
        if b.kind == "table":
            raise self.refuse(
                node,
                f"a store into `{p.buffer}`",
                "the array was initialized with constants; lifted tables are read-only",
            )
        if not isinstance(value, tuple):
            raise self.refuse(node, f"a store into `{p.buffer}`", "the value is not a scalar")
        if ELEM_BYTES[p.elem] != ELEM_BYTES[b.elem]:
            raise self.refuse(
                node,
                f"a store into `{p.buffer}` as {p.elem}",
                f"the buffer holds {b.elem}: type punning is outside the subset",
            )
        row, col = self.split_address(p, b.elem, node)
        value = S.cast(b.elem, value)
        loops = self.context()
        self.stores.append(Store(p.buffer, b.current, row, col, value, loops, self.predicate, line_of(node)))
        b.written = True
        if self.predicate is None:
            self.forwarded[(p.buffer, row, col, loops)] = value
        else:
            self.forwarded.pop((p.buffer, row, col, loops), None)

    def context(self) -> tuple[str, ...]:
        return tuple(lp.sym for lp in self.loops if not lp.absorbed)

    # ---- control flow -----------------------------------------------------------------------

    def exec_if(self, node: c_ast.If) -> None:
        cond = S.truth(self._scalar(self.eval(node.cond), node.cond))
        if cond[0] == "const":
            self.exec_stmt(node.iftrue if cond[2] else node.iffalse)
            return
        outer = self.predicate
        before = dict(self.env)
        self.predicate = cond if outer is None else S.logic("and", outer, cond)
        self.exec_stmt(node.iftrue)
        then_env = dict(self.env)
        if self.returned:
            raise self.refuse(node, "a return inside an if", "data-dependent control flow that cannot become a select")
        self.env = dict(before)
        self.predicate = S.lnot(cond) if outer is None else S.logic("and", outer, S.lnot(cond))
        self.exec_stmt(node.iffalse)
        if self.returned:
            raise self.refuse(
                node, "a return inside an else", "data-dependent control flow that cannot become a select"
            )
        self.predicate = outer
        # the branches assigned under their predicates already (assign() made the selects)
        then_predicate = cond if outer is None else S.logic("and", outer, cond)
        for name, value in then_env.items():
            if name not in self.env or self.env[name] == value:
                continue
            if before.get(name) == self.env[name]:
                self.env[name] = value
            elif isinstance(value, tuple) and isinstance(self.env[name], tuple):
                self.env[name] = S.select(then_predicate, value, self.env[name])
            elif isinstance(value, sse2.Vec) and isinstance(self.env[name], sse2.Vec):
                self.env[name] = sse2.select(then_predicate, value, self.env[name])
        self.forwarded = {}

    def exec_return(self, node: c_ast.Return) -> None:
        if self.loops or self.predicate is not None:
            raise self.refuse(node, "a return inside a loop or an if", "data-dependent control flow")
        if node.expr is not None:
            self.result = self._scalar(self.eval(node.expr), node.expr)
        self.returned = True

    def exec_call_statement(self, node: c_ast.FuncCall) -> None:
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        args = node.args.exprs if node.args else []
        if name == "free":
            return
        if name in ("_mm_storeu_si128", "_mm_store_si128"):
            p = self.eval(args[0])
            v = self.eval(args[1])
            if not isinstance(p, Pointer) or not isinstance(v, sse2.Vec):
                raise self.refuse(node, f"`{name}`", "its arguments are not a buffer pointer and an __m128i")
            b = self.buffers[p.buffer]
            lanes = v.lanes(ELEM_BYTES[b.elem] * 8)
            for i, lane in enumerate(lanes):
                self.store(
                    Pointer(p.buffer, b.elem, S.arith("+", p.offset, S.const(INDEX, i * ELEM_BYTES[b.elem]))),
                    lane,
                    node,
                )
            return
        if name == "memset":
            raise self.refuse(node, "`memset`", "write the fill as a loop")
        if name == "memcpy":
            raise self.refuse(node, "`memcpy`", "write the copy as a loop")
        self.eval(node)

    # ---- loops ------------------------------------------------------------------------------

    def exec_for(self, node: c_ast.For) -> None:
        line = line_of(node)
        declared_here = False
        var: str | None = None
        if isinstance(node.init, c_ast.DeclList):
            if len(node.init.decls) != 1:
                raise self.refuse(node, "a for loop declaring several variables", "declare one loop variable")
            d = node.init.decls[0]
            self.exec_decl(d)
            var, declared_here = d.name, True
        elif isinstance(node.init, c_ast.Assignment) and isinstance(node.init.lvalue, c_ast.ID) and node.init.op == "=":
            self.exec_assign(node.init)
            var = node.init.lvalue.name
        elif node.init is None:
            var = None
        else:
            raise self.refuse(node, "this for loop's initialization", "initialize one variable with `=`")
        if node.cond is None or node.next is None:
            raise self.refuse(node, "a for loop without a condition or an increment", "loops must be counted")
        var, step = self._step(node, var)
        if var not in self.env or not isinstance(self.env[var], tuple) or not S.is_int(S.type_of(self.env[var])):
            raise self.refuse(node, f"loop variable `{var}`", "loop variables are integers")
        start = self.env[var]
        symbol = self.fresh(var)
        counter = S.sym(INDEX, symbol)
        vtype = S.type_of(start)
        self.env[var] = S.cast(vtype, S.arith("+", start, S.arith("*", counter, S.const(INDEX, step))))
        limit = self._limit(node, var, counter, step)
        trip = _trip(start, limit, step)
        info = LoopInfo(symbol, trip, start, step, limit, line)
        self._absorb_tile(info, var)
        self.all_loops[symbol] = info.trip
        assigned = _assigned_names(node.stmt) - {var}
        carried = [n for n in assigned if n in self.env and n in self.types]
        # trial: which carried variables are induction variables, and does the body store?
        inductions, others, stores_in_body = self._trial(node, var, info, carried)
        if others and stores_in_body:
            n = others[0]
            raise self.refuse(
                node,
                f"variable `{n}` carried across iterations of this loop",
                "it is neither an induction variable nor a reduction in a loop that stores nothing",
            )
        if others:
            self._reduction(node, var, info, inductions, others, declared_here)
            return
        initial = {n: self.env[n] for n in inductions}
        for n, delta in inductions.items():
            self.env[n] = _advance(initial[n], delta, counter)
        self.loops.append(info)
        self.all_loops[symbol] = info.trip
        first_store = len(self.stores)
        first_load = len(self.loads)
        self.forwarded = {}
        self.exec_stmt(node.stmt)
        if self.returned:
            raise self.refuse(node, "a return inside a loop", "data-dependent control flow")
        self.loops.pop()
        self.forwarded = {}
        # after the loop
        for n, delta in inductions.items():
            self.env[n] = _advance(initial[n], delta, info.trip)
        if declared_here:
            del self.env[var]
        else:
            self.env[var] = S.cast(vtype, S.arith("+", start, S.arith("*", info.trip, S.const(INDEX, step))))
        new_stores = self.stores[first_store:]
        del self.stores[first_store:]
        if new_stores:
            form_stages(self, new_stores, self.loads[first_load:], info)

    def _step(self, node: c_ast.For, var: str | None) -> tuple[str, int]:
        nxt = node.next
        name = None
        step = None
        if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("p++", "++", "p--", "--") and isinstance(nxt.expr, c_ast.ID):
            name, step = nxt.expr.name, (1 if "++" in nxt.op else -1)
        elif isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID):
            name = nxt.lvalue.name
            if nxt.op in ("+=", "-="):
                amount = self.eval(nxt.rvalue)
                if isinstance(amount, tuple) and amount[0] == "const":
                    step = int(amount[2]) * (1 if nxt.op == "+=" else -1)
            elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in ("+", "-"):
                r = nxt.rvalue
                if isinstance(r.left, c_ast.ID) and r.left.name == name:
                    amount = self.eval(r.right)
                    if isinstance(amount, tuple) and amount[0] == "const":
                        step = int(amount[2]) * (1 if r.op == "+" else -1)
        if name is None or step is None or step == 0:
            raise self.refuse(node, "this for loop's increment", "the step must be a non-zero constant (i++, i += 4)")
        if var is not None and name != var:
            raise self.refuse(node, "this for loop", f"it initializes `{var}` but steps `{name}`")
        return name, step

    def _limit(self, node: c_ast.For, var: str, counter: Tree, step: int) -> Tree:
        """The exclusive limit the loop variable runs to (below it when step > 0, above it when < 0)."""
        cond = node.cond
        parts = [cond]
        limits = []
        while parts:
            c = parts.pop()
            if isinstance(c, c_ast.BinaryOp) and c.op == "&&":
                parts += [c.left, c.right]
                continue
            if not isinstance(c, c_ast.BinaryOp) or c.op not in ("<", "<=", ">", ">=", "!="):
                raise self.refuse(
                    node, "this for loop's condition", "compare the loop variable with <, <=, >, >= or !="
                )
            left, right = self._scalar(self.eval(c.left), c), self._scalar(self.eval(c.right), c)
            d = S.terms(S.arith("-", S.cast(INDEX, left), S.cast(INDEX, right)))
            k = d.pop((counter,), 0)
            if any(counter in m for m in d):
                raise self.refuse(node, "this for loop's condition", "the loop variable must appear linearly")
            k_sign = 1 if k * step > 0 else -1
            if k == 0 or abs(k) != abs(step):
                raise self.refuse(node, "this for loop's condition", "it must bound the loop variable itself")
            rest = S.make_aff(INDEX, d)  # cond: k*counter + rest OP 0, with k = +-step
            op = c.op
            if k < 0:
                op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}[op]
            # now: |k| * counter OP -rest * sign(k)
            bound = S.unary("neg", rest) if k > 0 else rest
            # counter * |step| OP bound ; express as an exclusive limit on counter*|step| (increasing)
            if k_sign < 0 or op in (">", ">="):
                raise self.refuse(node, "this for loop's condition", "the loop runs the wrong way for its step")
            if op == "<=":
                bound = S.arith("+", bound, S.const(INDEX, 1))
            limits.append(bound)
        limit = limits[0]
        for other in limits[1:]:
            limit = S.minmax("min", limit, other)
        # limit is on counter * |step|: express it on the variable
        return limit

    def _absorb_tile(self, info: LoopInfo, var: str) -> None:
        """`for (yy = y0; yy < min(y0 + T, h); yy++)` inside `for (y0 = s; y0 < h; y0 += T)`:
        together one loop over [s, h); the tile loop is absorbed (its symbol disappears)."""
        if info.step != 1:
            return
        var_limit = S.arith("+", info.limit, S.cast(INDEX, info.start))
        if var_limit[0] != "bin" or var_limit[2] != "min":
            return
        start = S.cast(INDEX, info.start)
        for outer in reversed(self.loops):
            if outer.step <= 1:
                continue
            ovalue = S.arith(
                "+", S.cast(INDEX, outer.start), S.arith("*", S.sym(INDEX, outer.sym), S.const(INDEX, outer.step))
            )
            if start != ovalue:
                continue
            outer_limit = S.arith("+", outer.limit, S.cast(INDEX, outer.start))
            tile_end = S.arith("+", ovalue, S.const(INDEX, outer.step))
            if {var_limit[3], var_limit[4]} != {tile_end, outer_limit}:
                continue
            info.trip = _trip(outer.start, S.arith("-", outer_limit, S.cast(INDEX, outer.start)), 1)
            info.start = outer.start
            self.env[var] = S.cast(
                S.type_of(self.env[var]), S.arith("+", S.cast(INDEX, outer.start), S.sym(INDEX, info.sym))
            )
            outer.absorbed = True
            return

    def _trial(self, node: c_ast.For, var: str, info: LoopInfo, carried: list[str]):
        saved = self._snapshot()
        probes = {}
        for n in carried:
            cur = self.env[n]
            if isinstance(cur, Pointer):
                probes[n] = Pointer(cur.buffer, cur.elem, S.sym(INDEX, self.fresh("probe")))
            elif isinstance(cur, tuple):
                probes[n] = S.sym(S.type_of(cur), self.fresh("probe"))
            elif isinstance(cur, sse2.Vec):
                probes[n] = cur  # vectors carried across iterations are refused below
            else:
                probes[n] = cur
        for n, p in probes.items():
            self.env[n] = p
        self.loops.append(info)
        store_count = len(self.stores)
        try:
            self.exec_stmt(node.stmt)
            after = {n: self.env.get(n) for n in carried}
            stored = len(self.stores) > store_count
        finally:
            self.loops.pop()
            self._restore(saved)
        counter = info.sym
        probe_syms = {
            p[2] if isinstance(p, tuple) else p.offset[2]
            for p in probes.values()
            if isinstance(p, tuple) or (isinstance(p, Pointer) and p.offset[0] == "sym")
        }
        inductions: dict[str, Tree] = {}
        others: list[str] = []
        for n in carried:
            p, a = probes[n], after[n]
            if a == p:
                continue
            if isinstance(p, Pointer):
                if not isinstance(a, Pointer) or a.buffer != p.buffer:
                    raise self.refuse(node, f"pointer `{n}`", "the loop makes it point into another buffer")
                delta = S.arith("-", a.offset, p.offset)
            elif isinstance(p, tuple) and isinstance(a, tuple) and S.is_int(S.type_of(p)):
                delta = S.arith("-", S.cast(INDEX, a), S.cast(INDEX, p))
            else:
                others.append(n)
                continue
            if S.symbols(delta) & (probe_syms | {counter}) or S.has_kind(delta, ("load", "func")):
                others.append(n)
            else:
                inductions[n] = delta
        for n in others:
            if isinstance(self.env[n], Pointer):
                raise self.refuse(node, f"pointer `{n}`", "it moves by a data-dependent amount")
        return inductions, others, stored

    def _snapshot(self):
        return (
            dict(self.env),
            len(self.stores),
            len(self.loads),
            (len(self.reads), len(self.writes)),
            dict(self.accumulators),
            {k: list(b.versions) for k, b in self.buffers.items()},
            dict(self.versions),
            self.predicate,
            dict(self.forwarded),
            {k: (b.written, b.stride) for k, b in self.buffers.items()},
        )

    def _restore(self, s) -> None:
        (env, ns, nl, nr, accs, versions, vmap, pred, fwd, flags) = s
        self.env = env
        del self.stores[ns:]
        del self.loads[nl:]
        del self.reads[nr[0] :]
        del self.writes[nr[1] :]
        self.accumulators = accs
        for k, b in self.buffers.items():
            if k in versions:
                b.versions = versions[k]
                b.written, _ = flags[k]
        self.versions = vmap
        self.predicate = pred
        self.forwarded = fwd

    def _reduction(
        self, node: c_ast.For, var: str, info: LoopInfo, inductions: dict, accs: list[str], declared_here: bool
    ) -> None:
        """A loop nest that only updates scalars: each becomes a Func reduced over an RDom."""
        levels = [(node, var, info)]
        body = node.stmt
        while True:
            inner = _single_statement(body)
            if not isinstance(inner, c_ast.For):
                break
            if not isinstance(inner.init, c_ast.DeclList):
                break
            d = inner.init.decls[0]
            self.exec_decl(d)
            ivar, istep = self._step(inner, d.name)
            counter = S.sym(INDEX, self.fresh(ivar))
            istart = self.env[ivar]
            self.env[ivar] = S.cast(
                S.type_of(istart), S.arith("+", istart, S.arith("*", counter, S.const(INDEX, istep)))
            )
            ilimit = self._limit(inner, ivar, counter, istep)
            itrip = _trip(istart, ilimit, istep)
            levels.append((inner, ivar, LoopInfo(counter[2], itrip, istart, istep, ilimit, line_of(inner))))
            body = inner.stmt
        rdom = []
        rsyms = {lv[2].sym for lv in levels}
        for n, _, lp in levels:
            if S.symbols(lp.trip) & rsyms or S.symbols(lp.trip) & set(self.context()):
                raise self.refuse(
                    n, "a reduction loop", "its bounds depend on another loop: reductions need rectangular bounds"
                )
            rdom.append((lp.sym, lp.trip))
            self.all_loops[lp.sym] = lp.trip
        if self._unroll_small(levels, body, inductions, node, declared_here):
            return
        initial = {n: self.env[n] for n in accs}
        for n, delta in inductions.items():
            self.env[n] = _advance(self.env[n], delta, S.sym(INDEX, info.sym))
        probes = {}
        for n in accs:
            if not isinstance(self.env[n], tuple):
                raise self.refuse(node, f"`{n}`", "only scalar reductions are lifted")
            probes[n] = S.sym(S.type_of(self.env[n]), self.fresh("acc"))
            self.env[n] = probes[n]
        first_load = len(self.loads)
        self.loops.extend(lv[2] for lv in levels)
        self.exec_stmt(body)
        for _ in levels:
            self.loops.pop()
        if len(self.stores):
            pass
        del self.loads[first_load:]
        pure = self.context()
        probe_names = {p[2]: n for n, p in probes.items()}
        made = {}
        for n in accs:
            update = self.env[n]
            others = [probe_names[s] for s in S.symbols(update) if s in probe_names and probe_names[s] != n]
            if others:
                raise self.refuse(
                    node, f"the reduction of `{n}`", f"it depends on `{others[0]}`, reduced in the same loop"
                )
            name = self.fresh(f"reduce_{n}")
            t = S.type_of(probes[n])
            selfref = ("func", t, name, tuple(S.sym(INDEX, p) for p in pure))
            update = S.substitute(update, {probes[n][2]: selfref})
            self.accumulators[name] = Accumulator(name, t, pure, initial[n], update, tuple(rdom), line_of(node))
            made[n] = selfref
        for n, value in made.items():
            self.env[n] = value
        for n, delta in inductions.items():
            self.env[n] = _advance(self.env[n], delta, info.trip)  # unused after the nest in practice
        for n, v, lp in levels:
            if n is node and not declared_here:
                self.env[v] = S.cast(
                    S.type_of(lp.start), S.arith("+", lp.start, S.arith("*", lp.trip, S.const(INDEX, lp.step)))
                )
            elif v in self.env and (n is not node or declared_here):
                del self.env[v]

    def _unroll_small(
        self, levels: list, body: c_ast.Node, inductions: dict, node: c_ast.For, declared_here: bool
    ) -> bool:
        """A reduction over a small constant window (a 3x3 min, 5 taps) runs as straight-line
        code: the accumulators become plain expressions, a stencil rather than an RDom."""
        trips = []
        for _, _, lp in levels:
            if lp.trip[0] != "const":
                return False
            trips.append(int(lp.trip[2]))
        total = 1
        for t in trips:
            total *= t
        if total > UNROLL_LIMIT or inductions:
            return False
        start_env = {v: lp.start for _, v, lp in levels}

        def run(depth: int) -> None:
            if depth == len(levels):
                self.exec_stmt(body)
                return
            _, var, lp = levels[depth]
            for i in range(trips[depth]):
                value = S.arith("+", S.cast(INDEX, start_env[var]), S.const(INDEX, i * lp.step))
                self.env[var] = S.cast(S.type_of(lp.start), value)
                run(depth + 1)

        run(0)
        for n, v, lp in levels:
            if n is node and not declared_here:
                end = S.arith("+", S.cast(INDEX, lp.start), S.const(INDEX, trips[0] * lp.step))
                self.env[v] = S.cast(S.type_of(lp.start), end)
            elif v in self.env:
                del self.env[v]
        return True

    # ---- expressions ------------------------------------------------------------------------

    def _scalar(self, value: object, node: c_ast.Node) -> Tree:
        if not isinstance(value, tuple):
            raise self.refuse(node, "this expression", "a scalar was expected here, not a pointer or vector")
        return value

    def eval(self, node: c_ast.Node) -> object:
        if isinstance(node, c_ast.Constant):
            return _constant(node, self)
        if isinstance(node, c_ast.ID):
            if node.name not in self.env:
                raise self.refuse(node, f"`{node.name}`", "an unknown name (globals are outside the subset)")
            return self.env[node.name]
        if isinstance(node, c_ast.ArrayRef):
            p = self.address_of(node)
            return self.load(p, node)
        if isinstance(node, c_ast.UnaryOp):
            return self.eval_unary(node)
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("&&", "||"):
                a = S.truth(self._scalar(self.eval(node.left), node.left))
                b = S.truth(self._scalar(self.eval(node.right), node.right))
                return S.cast("i32", S.logic("and" if node.op == "&&" else "or", a, b))
            return self.binary(node.op, self.eval(node.left), self.eval(node.right), node)
        if isinstance(node, c_ast.TernaryOp):
            c = S.truth(self._scalar(self.eval(node.cond), node.cond))
            a, b = self.eval(node.iftrue), self.eval(node.iffalse)
            if isinstance(a, Pointer) or isinstance(b, Pointer):
                if c[0] == "const":
                    return a if c[2] else b
                raise self.refuse(node, "a ternary choosing between pointers", "aliasing chosen by data")
            a, b = self._scalar(a, node.iftrue), self._scalar(b, node.iffalse)
            t = S.arith_type(S.type_of(a), S.type_of(b))
            a, b = S.cast(t, a), S.cast(t, b)
            if c[0] == "cmp" and c[2] in ("<", "<=", ">", ">=") and {c[3], c[4]} == {a, b}:
                smaller_first = c[2] in ("<", "<=")
                op = "min" if (c[3] == a) == smaller_first else "max"
                return S.minmax(op, a, b)
            return S.select(c, a, b)
        if isinstance(node, c_ast.Cast):
            t = resolve_type(node.to_type.type, self.fn.typedefs, self.file)
            value = self.eval(node.expr)
            if t.pointer:
                if not isinstance(value, Pointer):
                    raise self.refuse(node, "a cast to a pointer", "the value is not a pointer into a known buffer")
                if self.buffers[value.buffer].elem == "?" and t.base != "void":
                    self.buffers[value.buffer].elem = t.base
                return Pointer(value.buffer, t.base if t.base != "void" else value.elem, value.offset)
            if t.base == "void":
                return S.const("i32", 0)
            return self.convert_to(t, value, node)
        if isinstance(node, c_ast.FuncCall):
            return self.eval_call(node)
        if isinstance(node, c_ast.ExprList):
            value = None
            for e in node.exprs:
                value = self.eval(e)
            return value
        if isinstance(node, c_ast.Assignment):
            self.exec_assign(node)
            return self.eval(node.lvalue)
        raise self.refuse(node, f"a {type(node).__name__} expression", "outside the lifted subset")

    def eval_unary(self, node: c_ast.UnaryOp) -> object:
        op = node.op
        if op == "*":
            p = self.eval(node.expr)
            if not isinstance(p, Pointer):
                raise self.refuse(node, "a dereference", "not a pointer into a known buffer")
            return self.load(p, node)
        if op == "&":
            if isinstance(node.expr, c_ast.ArrayRef):
                return self.address_of(node.expr)
            raise self.refuse(node, "taking an address", "only &array[i] is lifted")
        if op in ("p++", "++", "p--", "--"):
            before = self.eval(node.expr)
            self.exec_increment(node)
            return before if op.startswith("p") else self.eval(node.expr)
        if op == "sizeof":
            if isinstance(node.expr, c_ast.Typename):
                t = resolve_type(node.expr.type, self.fn.typedefs, self.file)
                return S.const("u64", 8 if t.pointer else ELEM_BYTES[t.base])
            raise self.refuse(node, "sizeof of an expression", "use sizeof(type)")
        v = self._scalar(self.eval(node.expr), node.expr)
        if op == "-":
            return S.unary("neg", v)
        if op == "+":
            return S.cast(S.promote(S.type_of(v)), v)
        if op == "~":
            return S.unary("bnot", v)
        if op == "!":
            return S.cast("i32", S.lnot(v))
        raise self.refuse(node, f"unary `{op}`", "outside the lifted subset")

    def binary(self, op: str, a: object, b: object, node: c_ast.Node) -> object:
        if isinstance(a, Pointer) or isinstance(b, Pointer):
            if op == "+" and isinstance(a, Pointer):
                return self.pointer_add(a, b, node)
            if op == "+" and isinstance(b, Pointer):
                return self.pointer_add(b, a, node)
            if op == "-" and isinstance(a, Pointer) and isinstance(b, tuple):
                return self.pointer_add(a, b, node, sign=-1)
            raise self.refuse(node, f"pointer `{op}`", "only pointer + integer and pointer - integer are lifted")
        a, b = self._scalar(a, node), self._scalar(b, node)
        if op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
            t = S.arith_type(S.type_of(a), S.type_of(b))
            if op in ("%", "<<", ">>", "&", "|", "^") and not S.is_int(t):
                raise self.refuse(node, f"`{op}` on floating point", "not valid C")
            return S.arith(op, a, b)
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return S.cast("i32", S.compare(op, a, b))
        raise self.refuse(node, f"operator `{op}`", "outside the lifted subset")

    def eval_call(self, node: c_ast.FuncCall) -> object:
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        args = node.args.exprs if node.args else []
        if name is None:
            raise self.refuse(node, "a call through a pointer", "outside the lifted subset")
        if name in ("malloc", "calloc"):
            return self.allocate(node, name, args)
        if name.startswith("_mm_"):
            return sse2.call(self, name, args, node)
        if name in ("abs", "fabsf", "fabs"):
            return S.unary("abs", self._scalar(self.eval(args[0]), node))
        if name in ("sqrtf", "sqrt", "floorf"):
            v = self._scalar(self.eval(args[0]), node)
            t = "f32" if name.endswith("f") else "f64"
            return S.unary({"sqrtf": "sqrt", "sqrt": "sqrt", "floorf": "floor"}[name], S.cast(t, v))
        if name in ("fminf", "fmaxf"):
            a, b = (S.cast("f32", self._scalar(self.eval(x), node)) for x in args)
            return S.minmax("min" if name == "fminf" else "max", a, b)
        if name in self.fn.functions:
            return self.inline_call(node, name, args)
        raise self.refuse(node, f"a call to `{name}`", "unknown function (define it in the file to have it inlined)")

    def inline_call(self, node: c_ast.FuncCall, name: str, args: list) -> object:
        """A helper defined in the same file, inlined: straight-line code returning a value."""
        callee = self.fn.functions[name]
        values = [self.eval(a) for a in args]
        saved_env, saved_types, saved_returned, saved_result = (
            dict(self.env),
            dict(self.types),
            self.returned,
            self.result,
        )
        params = callee.decl.type.args.params if callee.decl.type.args else []
        if len([p for p in params if getattr(p, "name", None)]) != len(values):
            raise self.refuse(node, f"the call to `{name}`", "it passes the wrong number of arguments")
        for p, v in zip([p for p in params if getattr(p, "name", None)], values, strict=True):
            t = resolve_type(p.type, self.fn.typedefs, self.file)
            self.types[p.name] = t
            self.env[p.name] = self.convert_to(t, v, node)
        if self.loops and _contains_for(callee.body):
            pass
        self.returned = False
        self.result = None
        depth = getattr(self, "_depth", 0)
        if depth > 16:
            raise self.refuse(node, f"the call to `{name}`", "calls nested too deeply (recursion?)")
        self._depth = depth + 1
        outer_loops = self.loops
        try:
            self.exec_stmt(callee.body)
        finally:
            self._depth = depth
        self.loops = outer_loops
        result = self.result
        ret = resolve_type(callee.decl.type.type, self.fn.typedefs, self.file)
        self.env, self.types, self.returned, self.result = saved_env, saved_types, saved_returned, saved_result
        if ret.base == "void":
            return S.const("i32", 0)
        if result is None:
            raise self.refuse(node, f"the call to `{name}`", "the function returns no value")
        return S.cast(ret.base, result)

    def allocate(self, node: c_ast.FuncCall, name: str, args: list) -> Pointer:
        if self.loops:
            raise self.refuse(node, f"`{name}` inside a loop", "allocate temporaries before the loops")
        buf = self.fresh("tmp")
        zero = name == "calloc"
        self.buffers[buf] = Buffer(buf, "u8", "temp", line_of(node), initial="zero" if zero else "undefined")
        self.buffers[buf].elem = "?"
        self._new_version(buf, "initial", line_of(node))
        return Pointer(buf, "void", S.const(INDEX, 0))


# ---- helpers ----------------------------------------------------------------------------------


def _trip(start: Tree, limit: Tree, step: int) -> Tree:
    """Iterations of `for (v = start; v < limit; v += step)` (or > limit for negative steps),
    where limit bounds counter*|step| relative to... see _limit: the counter's own limit."""
    # _limit expressed the condition on counter*|step| after moving start into `rest`, so
    # limit already includes -start: iterations = ceil(limit / |step|), at least 0
    s = abs(step)
    if s == 1:
        n = limit
    else:
        n = ("bin", "i32", "fdiv", S.arith("+", limit, S.const(INDEX, s - 1)), S.const(INDEX, s))
    return S.minmax("max", n, S.const(INDEX, 0))


def _advance(initial: object, delta: Tree, count: Tree) -> object:
    if isinstance(initial, Pointer):
        return Pointer(initial.buffer, initial.elem, S.arith("+", initial.offset, S.arith("*", delta, count)))
    t = S.type_of(initial)
    return S.cast(t, S.arith("+", S.cast(INDEX, initial), S.arith("*", delta, count)))


def _assigned_names(node: c_ast.Node) -> set[str]:
    names: set[str] = set()

    class V(c_ast.NodeVisitor):
        def visit_Assignment(self, n):  # noqa: N802
            if isinstance(n.lvalue, c_ast.ID):
                names.add(n.lvalue.name)
            self.generic_visit(n)

        def visit_UnaryOp(self, n):  # noqa: N802
            if n.op in ("p++", "++", "p--", "--") and isinstance(n.expr, c_ast.ID):
                names.add(n.expr.name)
            self.generic_visit(n)

    V().visit(node)
    return names


def _ids(node: c_ast.Node) -> set[str]:
    out: set[str] = set()

    class V(c_ast.NodeVisitor):
        def visit_ID(self, n):  # noqa: N802
            out.add(n.name)

    V().visit(node)
    return out


def _single_statement(node: c_ast.Node) -> c_ast.Node | None:
    while isinstance(node, c_ast.Compound):
        items = [i for i in node.block_items or [] if not isinstance(i, c_ast.EmptyStatement)]
        if len(items) != 1:
            return None
        node = items[0]
    return node


def _contains_for(node: c_ast.Node) -> bool:
    found = []

    class V(c_ast.NodeVisitor):
        def visit_For(self, n):  # noqa: N802
            found.append(n)

    V().visit(node)
    return bool(found)


def _is_void(node: c_ast.Cast) -> bool:
    t = node.to_type.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names == ["void"]


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _constant(node: c_ast.Constant, ex: Executor) -> Tree:
    text = node.value
    if node.type == "char":
        body = text[1:-1]
        value = ord(body.encode().decode("unicode_escape")) if body.startswith("\\") else ord(body)
        return S.const("i32", value)
    if node.type in ("float", "double") or (("." in text or "e" in text.lower()) and not text.lower().startswith("0x")):
        t = "f32" if text.lower().endswith("f") else "f64"
        return S.const(t, float(text.rstrip("fFlL")))
    if node.type == "string":
        raise ex.refuse(node, "a string", "outside the lifted subset")
    suffix = ""
    while text and text[-1] in "uUlL":
        suffix += text[-1].lower()
        text = text[:-1]
    value = int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1].isdigit()) else int(text, 8)
    unsigned = "u" in suffix
    long = "l" in suffix
    if long:
        t = "u64" if unsigned else "i64"
    elif unsigned:
        t = "u32" if value < 2**32 else "u64"
    else:
        t = "i32" if value < 2**31 else ("u32" if text.lower().startswith("0x") and value < 2**32 else "i64")
    return S.const(t, value)
