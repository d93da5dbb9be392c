"""Expressions of the OpenCL backend: IR expressions as OpenCL C with Halide's semantics.

Every non-trivial node becomes a typed temporary (`T _tN = ...;`) emitted before the
statement that uses it, so shared subexpressions are computed once and the source never
grows exponentially. The operations are total, as in the LLVM backend: integer division
and modulo are Euclidean with x / 0 == x % 0 == 0, signed arithmetic wraps (it is done in
unsigned types, so C's undefined signed overflow never arises), shifts follow Halide's
rules for negative and oversized amounts, and narrow results are cast back to their type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from pixelweave.engine.codegen.opencl_exact_division import division_by_reciprocal
from pixelweave.engine.codegen.opencl_indices import INDEX_ARITHMETIC
from pixelweave.engine.codegen.opencl_vector import VectorExprs, vector_c_type
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Float, Type
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.stmt import Broadcast, Load, Ramp

_C_TYPES = {
    ("uint", 1): "bool",
    ("int", 8): "char",
    ("int", 16): "short",
    ("int", 32): "int",
    ("int", 64): "long",
    ("uint", 8): "uchar",
    ("uint", 16): "ushort",
    ("uint", 32): "uint",
    ("uint", 64): "ulong",
    ("float", 32): "float",
    ("float", 64): "double",
}

_UNARY_MATH = {
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "log",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "floor": "floor",
    "ceil": "ceil",
    "round": "rint",  # Halide rounds half to even, as rint does in the default rounding mode
    "trunc": "trunc",
}


_COMPARE = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


def c_type(t: Type) -> str:
    """The OpenCL C type of a value of type t held in a variable (vectors: opencl_vector.py)."""
    if t.lanes != 1:
        return vector_c_type(t)
    name = _C_TYPES.get((t.code, t.bits))
    if name is None:
        raise CompileError(f"the OpenCL backend does not support the type {t}")
    return name


def memory_type(t: Type) -> str:
    """The C type of an element of a buffer of type t (bools are bytes in memory)."""
    return "uchar" if t.is_bool() else c_type(t)


def _unsigned_work_type(t: Type) -> str:
    """The unsigned type in which wrapping arithmetic on t is done (C promotes narrow types to int)."""
    return "ulong" if t.bits > 32 else "uint"


def c_literal(t: Type, value: int | float) -> str:
    """A C expression of type t and exactly this value."""
    if t.is_float():
        v = float(value)
        suffix = "f" if t.bits == 32 else ""
        if math.isnan(v):
            text = "NAN" if t.bits == 32 else "(double)NAN"
        elif math.isinf(v):
            inf = "INFINITY" if t.bits == 32 else "(double)INFINITY"
            text = inf if v > 0 else f"(-{inf})"
        else:
            text = f"{v.hex()}{suffix}"
        return f"(({c_type(t)}){text})"
    if t.is_bool():
        return "true" if int(value) & 1 else "false"
    v = int(value)
    if t.is_uint():
        v &= (1 << t.bits) - 1
        return f"(({c_type(t)}){v}UL)"
    v = (v + (1 << (t.bits - 1))) % (1 << t.bits) - (1 << (t.bits - 1))
    if v == -(1 << 63):
        return "((long)(-9223372036854775807L - 1L))"
    return f"(({c_type(t)}){v}L)"


def sanitize(name: str) -> str:
    """A C identifier made from an IR name (dots become underscores)."""
    return re.sub(r"[^0-9A-Za-z_]", "_", name)


# The helper functions of the generated source, one per operation and type, emitted only if used.
def _div_helper(t: Type) -> str:
    ct = c_type(t)
    name = f"pw_div_{ct}"
    if t.is_uint():
        body = f"return b == 0 ? ({ct})0 : ({ct})(a / b);"
    else:
        u = _unsigned_work_type(t)
        body = (
            f"if (b == 0) return ({ct})0;\n"
            f"  if (b == -1) return ({ct})(({u})0 - ({u})a);\n"
            f"  {ct} q = ({ct})(a / b);\n"
            f"  {ct} r = ({ct})(a % b);\n"
            f"  if (r < 0) q = ({ct})(b < 0 ? q + 1 : q - 1);\n"
            "  return q;"
        )
    return f"static inline {ct} {name}({ct} a, {ct} b) {{\n  {body}\n}}\n"


def _mod_helper(t: Type) -> str:
    ct = c_type(t)
    name = f"pw_mod_{ct}"
    if t.is_uint():
        body = f"return b == 0 ? ({ct})0 : ({ct})(a % b);"
    else:
        u = _unsigned_work_type(t)
        body = (
            f"if (b == 0 || b == -1) return ({ct})0;\n"
            f"  {ct} r = ({ct})(a % b);\n"
            f"  if (r < 0) r = ({ct})(({u})r + (b < 0 ? ({u})0 - ({u})b : ({u})b));\n"
            "  return r;"
        )
    return f"static inline {ct} {name}({ct} a, {ct} b) {{\n  {body}\n}}\n"


def _shift_helper(t: Type) -> str:
    """Shift a by n (a long; negative shifts the other way) with Halide's saturation rules."""
    ct, u, bits = c_type(t), _unsigned_work_type(t), t.bits
    right = (
        f"({ct})(a >> (m >= {bits}UL ? {bits - 1}UL : m))"
        if t.is_int()
        else f"(m >= {bits}UL ? ({ct})0 : ({ct})(a >> m))"
    )
    return (
        f"static inline {ct} pw_shift_{ct}({ct} a, long n, int left_first) {{\n"
        "  int go_left = left_first ? (n >= 0) : (n < 0);\n"
        "  ulong m = n < 0 ? (ulong)0 - (ulong)n : (ulong)n;\n"
        f"  if (go_left) return m >= {bits}UL ? ({ct})0 : ({ct})(({u})a << m);\n"
        f"  return {right};\n"
        "}\n"
    )


def _by_positive_constant(e: E.Expr, t: Type, a: str) -> str | None:
    """Division or modulo by a positive constant without the helper's special cases:
    C's operators for unsigned types, shifts and masks for powers of two (arithmetic shifts
    round toward minus infinity, which is Euclidean for a positive divisor)."""
    d = e.b
    if not isinstance(d, E.Const) or t.is_bool():
        return None
    c = int(d.value)
    if c <= 0:
        return None
    ct = c_type(t)
    is_div = isinstance(e, E.Div)
    if t.is_uint():
        return f"({ct})({a} {'/' if is_div else '%'} {c_literal(t, c)})"
    if c & (c - 1) == 0:
        k = c.bit_length() - 1
        return f"({ct})({a} >> {k})" if is_div else f"({ct})({a} & {c_literal(t, c - 1)})"
    return None


class ExprEmitter(VectorExprs):
    """Emits expressions as temporaries into the current block of lines.

    `names` maps IR variable names to C names (LetStmt, Let, loop variables, arguments);
    `buffers` maps buffer names to (C name, element type). Memo layers follow C blocks: a
    temporary computed in an enclosing block is reused, and a rebinding of a name in scope
    hides every outer temporary (they may depend on the old binding).
    """

    def __init__(self, fresh: Callable[[str], str], helpers: dict[str, str]) -> None:
        self.fresh = fresh
        self.helpers = helpers
        self.lines: list[str] = []
        self.indent = 1
        self.names: list[dict[str, str]] = [{}]
        self.memo: list[dict[int, str] | None] = [{}]  # None marks a layer that hides the ones outside
        self.buffers: dict[str, tuple[str, Type]] = {}
        self.uses_double = False
        self.keep: list[E.Expr] = []
        self._reading: dict[str, set[int]] = {}  # buffer -> memo keys of temporaries that read it
        self._memo_marks: list[int] = []
        # An index rewrite per buffer (the kernel builder folds the indices of private
        # arrays to constants, so the OpenCL compiler keeps those arrays in registers).
        self.rewrite_index: Callable[[str, E.Expr], E.Expr] | None = None
        # Emitting an address: 32-bit signed +, -, * as C's signed operations (see index()).
        self.index_mode = False
        # In an address, the operand a min or max always takes where the kernel builder
        # can prove it (a tile's clamp that no work-item reaches), else None.
        self.decide_min_max: Callable[[E.Expr], E.Expr | None] | None = None
        # Whether a dense vector of n lanes at an index of a C array is an aligned whole
        # vector (the kernel builder knows the arrays it declared aligned).
        self.aligned_vector: Callable[[str, E.Expr, int], bool] | None = None

    def index(self, e: E.Expr) -> str:
        """An index expression of a load or store. Its 32-bit signed additions, subtractions
        and multiplications (down through min and max) are C's signed operations, as in
        Halide's OpenCL code: a wrapped index would be out of bounds, which bounds
        inference rules out, and with no-overflow arithmetic the OpenCL compiler sees that
        neighbouring work-items access neighbouring elements (vector loads and stores
        where wrapping arithmetic gives gathers)."""
        saved, self.index_mode = self.index_mode, True
        try:
            return self.expr(e)
        finally:
            self.index_mode = saved

    def index_of(self, buffer: str, index: E.Expr) -> E.Expr:
        """The index of an access to buffer as it is emitted (rewritten where the builder asks)."""
        return index if self.rewrite_index is None else self.rewrite_index(buffer, index)

    # ------------------------------------------------------------------ output and scopes
    def line(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def push_scope(self, hide: bool = False) -> None:
        """A new layer of names and temporaries; hide=True when a name in scope is rebound
        (temporaries outside may use the old binding)."""
        self.names.append({})
        self._memo_marks.append(len(self.memo))
        if hide:
            self.memo.append(None)
        self.memo.append({})

    def pop_scope(self) -> None:
        self.names.pop()
        del self.memo[self._memo_marks.pop() :]

    def open_block(self, header: str) -> None:
        self.line(header + " {")
        self.indent += 1
        self.push_scope()

    def close_block(self, trailer: str = "") -> None:
        self.pop_scope()
        self.indent -= 1
        self.line("}" + trailer)

    def lookup(self, name: str) -> str | None:
        for layer in reversed(self.names):
            if name in layer:
                return layer[name]
        return None

    def declare(self, name: str, t: Type, value: str) -> str:
        """Declare a fresh C variable for IR name in the current names layer (the caller
        pushed a scope, hiding temporaries when the name was bound already)."""
        c_name = self.fresh(name)
        self.line(f"{c_type(t)} {c_name} = {value};")
        self.names[-1][name] = c_name
        return c_name

    def _memo_get(self, e: E.Expr) -> str | None:
        key = 2 * id(e) + self.index_mode
        for layer in reversed(self.memo):
            if layer is None:
                return None
            hit = layer.get(key)
            if hit is not None:
                return hit
        return None

    def _temp(self, e: E.Expr, t: Type, text: str) -> str:
        name = self.fresh("t")
        self.line(f"{c_type(t)} {name} = {text};")
        layer = self.memo[-1]
        if layer is not None:
            key = 2 * id(e) + self.index_mode
            layer[key] = name
            self.keep.append(e)  # ids stay valid while the node lives
            for buffer in {n.buffer for n in walk(e) if isinstance(n, Load)}:
                self._reading.setdefault(buffer, set()).add(key)
        return name

    def forget_loads_of(self, buffer: str) -> None:
        """A store to buffer: the temporaries that read it are stale. (An unrolled update
        repeats the very same Load node in each copy of its body; reusing the value loaded
        before the previous copy's store would lose that store.)"""
        stale = self._reading.pop(buffer, set())
        for layer in self.memo:
            if layer is not None:
                for key in stale & layer.keys():
                    del layer[key]

    # ------------------------------------------------------------------ expressions
    def expr(self, e: E.Expr) -> str:
        t = e.type()
        if t.is_float() and t.bits == 64:
            self.uses_double = True
        if isinstance(e, E.Const):
            return c_literal(t, e.value)
        if isinstance(e, E.Variable):
            name = self.lookup(e.name)
            if name is None:
                raise CompileError(f"variable `{e.name}` is not bound in the OpenCL kernel")
            return name
        if self.index_mode and not isinstance(e, INDEX_ARITHMETIC):
            self.index_mode = False  # an index's operands other than its arithmetic are values
            try:
                return self.expr(e)
            finally:
                self.index_mode = True
        hit = self._memo_get(e)
        if hit is not None:
            return hit
        if isinstance(e, E.Let):
            value = self.expr(e.value)
            self.push_scope(hide=True)
            try:
                self.declare(e.name, e.value.type(), value)
                return self.expr(e.body)
            finally:
                self.pop_scope()
        return self._temp(e, t, self._compute(e, t))

    def _compute(self, e: E.Expr, t: Type) -> str:
        if t.lanes != 1 or isinstance(e, (Ramp, Broadcast)):
            return self.vector_compute(e, t)
        ct = c_type(t)
        if isinstance(e, E.Cast):
            return self.cast(self.expr(e.value), e.value.type(), t)
        if isinstance(e, (E.Add, E.Sub, E.Mul)):
            a, b = self.expr(e.a), self.expr(e.b)
            op = {E.Add: "+", E.Sub: "-", E.Mul: "*"}[type(e)]
            if t.is_float():
                return f"{a} {op} {b}"
            if t.is_bool():
                u = "uint"
                return f"(({u}){a} {op} ({u}){b}) & 1u"
            if self.index_mode and t.is_int() and t.bits == 32:
                return f"{a} {op} {b}"
            u = _unsigned_work_type(t)
            return f"({ct})(({u}){a} {op} ({u}){b})"
        if isinstance(e, (E.Div, E.Mod)):
            by_reciprocal = self.division_by_reciprocal(e, t)
            if by_reciprocal is not None:
                return by_reciprocal
            a, b = self.expr(e.a), self.expr(e.b)
            if t.is_float():
                return f"{a} / {b}" if isinstance(e, E.Div) else f"{a} - {b} * floor({a} / {b})"
            fast = _by_positive_constant(e, t, a)
            if fast is not None:
                return fast
            return f"{self._helper('div' if isinstance(e, E.Div) else 'mod', t)}({a}, {b})"
        if isinstance(e, (E.Min, E.Max)):
            chosen = self.decide_min_max(e) if self.index_mode and self.decide_min_max is not None else None
            if chosen is not None:
                return self.expr(chosen)
            a, b = self.expr(e.a), self.expr(e.b)
            op = "<" if isinstance(e, E.Min) else ">"
            return f"{a} {op} {b} ? {a} : {b}"  # NaN in a gives b, as Halide's min and max
        if type(e) in _COMPARE:
            return f"{self.expr(e.a)} {_COMPARE[type(e)]} {self.expr(e.b)}"
        if isinstance(e, E.And):
            return f"{self.expr(e.a)} && {self.expr(e.b)}"
        if isinstance(e, E.Or):
            return f"{self.expr(e.a)} || {self.expr(e.b)}"
        if isinstance(e, E.Not):
            return f"!{self.expr(e.a)}"
        if isinstance(e, E.Select):
            c = self.expr(e.cond)
            return f"{c} ? {self.expr(e.true_value)} : {self.expr(e.false_value)}"
        if isinstance(e, Load):
            return self.load(e)
        if isinstance(e, E.Call):
            return self._call(e, t)
        raise CompileError(f"the OpenCL backend cannot generate {type(e).__name__} expressions")

    def division_by_reciprocal(self, e: E.Expr, t: Type) -> str | None:
        """`f32(narrow integer) / constant` as a multiplication and an fma with the same
        result (opencl_exact_division.py), else None."""
        pair = division_by_reciprocal(e)
        if pair is None:
            return None
        x = self.expr(e.a)
        high, low = c_literal(Float(32), pair.high), c_literal(Float(32), pair.low)
        if t.lanes != 1:
            vt = vector_c_type(t)
            high, low = f"({vt}){high}", f"({vt}){low}"
        return f"fma({x}, {high}, {x} * {low})"

    def load(self, e: Load) -> str:
        ref = self.buffers.get(e.buffer)
        if ref is None:
            raise CompileError(f"buffer `{e.buffer}` is not an argument or an allocation of the OpenCL kernel")
        index = self.index(self.index_of(e.buffer, e.index))
        if e.type().is_bool():
            return f"{ref[0]}[{index}] != 0"
        return f"{ref[0]}[{index}]"

    def cast(self, v: str, src: Type, dst: Type) -> str:
        if src == dst:
            return v
        dt = c_type(dst)
        if dst.is_bool():  # the lowest bit, as Halide (a float first becomes an int32)
            if src.is_float():
                return f"(((int){v}) & 1) != 0"
            return f"({v} & 1) != 0"
        if src.is_float() and not dst.is_float():
            # truncation toward zero through a 32- or 64-bit conversion, then wrapped, as the CPU backend
            wide = "long" if dst.bits > 32 or (dst.is_uint() and dst.bits == 32) else "int"
            return f"({dt})({wide}){v}"
        return f"({dt}){v}"

    def _helper(self, op: str, t: Type) -> str:
        ct = c_type(t)
        name = f"pw_{op}_{ct}"
        if name not in self.helpers:
            make = {"div": _div_helper, "mod": _mod_helper, "shift": _shift_helper}[op]
            self.helpers[name] = make(t)
        return name

    def _call(self, e: E.Call, t: Type) -> str:
        if e.call_kind != "intrinsic":
            raise CompileError(
                f"call to {e.call_kind} `{e.name}` reached the OpenCL backend; lowering must turn it into a Load"
            )
        name = e.name
        ct = c_type(t)
        if name in _UNARY_MATH:
            if not t.is_float():
                raise CompileError(f"{name} needs a floating-point argument, got {t}")
            return f"{_UNARY_MATH[name]}({self.expr(e.args[0])})"
        if name in ("pow", "atan2"):
            return f"{name}({self.expr(e.args[0])}, {self.expr(e.args[1])})"
        if name == "is_nan":
            return f"isnan({self.expr(e.args[0])}) != 0"
        if name == "abs":
            src = e.args[0].type()
            x = self.expr(e.args[0])
            if src.is_float():
                return f"fabs({x})"
            if src.is_uint():
                return f"({ct}){x}"
            return f"({ct})abs({x})"  # OpenCL's abs returns the unsigned magnitude
        if name == "absd":
            src = e.args[0].type()
            a, b = self.expr(e.args[0]), self.expr(e.args[1])
            if src.is_float():
                return f"fabs({a} - {b})"
            if src.is_bool():
                return f"({ct})({a} != {b})"
            return f"({ct})abs_diff({a}, {b})"
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[name]
            return f"({ct})({self.expr(e.args[0])} {op} {self.expr(e.args[1])})"
        if name == "bitwise_not":
            if t.is_bool():
                return f"!{self.expr(e.args[0])}"
            return f"({ct})(~{self.expr(e.args[0])})"
        if name in ("shift_left", "shift_right"):
            a = self.expr(e.args[0])
            at = e.args[1].type()
            amount = self.expr(e.args[1])
            if at.is_uint():
                n = f"(long)min((ulong){amount}, 64UL)"
            else:
                n = f"(long){amount}"
            return f"{self._helper('shift', t)}({a}, {n}, {1 if name == 'shift_left' else 0})"
        raise CompileError(f"the OpenCL backend has no implementation of the intrinsic `{name}`")
