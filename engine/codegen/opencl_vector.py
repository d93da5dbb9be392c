"""Vector expressions of the OpenCL backend: vectorized loops as OpenCL vector types.

The vectorization pass (engine/lower/opencl_vectorize.py) leaves vectors of 2, 3, 4, 8 or
16 lanes only, each an OpenCL vector type (`float8`, `uchar16`, ...). The semantics are
Halide's, lane by lane, as the scalar code in opencl_expr.py:

* A boolean vector is a `charN` whose lanes are -1 (true) or 0 (false): what OpenCL's
  vector comparisons give, sign-extended or narrowed with `convert_charN`. `select` needs a
  mask whose elements have the width of the values, so the mask is converted first; `&`,
  `|`, `~` are the logical operations on such masks. In memory a bool is a byte 0 or 1.
* Casts are `convert_T` without `_sat` (integers wrap, as Halide's casts), float to
  integer truncates toward zero through a 32- or 64-bit integer, as the scalar code.
* Signed addition, subtraction and multiplication are done on the unsigned type of the
  same width (`as_uintN`), so they wrap.
* Integer division and modulo are Euclidean with x / 0 == x % 0 == 0, by vector helper
  functions; division by a positive constant uses the operators, shifts and masks.
* A dense load or store (a ramp of stride one) is `vloadN`/`vstoreN`, which need only the
  element's alignment; any other index is a gather or scatter, lane by lane, in lane order.
* Operations without a vector form here (shifts, some intrinsics) are computed lane by
  lane with the scalar code, and the lanes are put back together.
"""

from __future__ import annotations

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.types import Type
from pixelweave.engine.stmt import Broadcast, Load, Ramp

_SIGNED = {8: "char", 16: "short", 32: "int", 64: "long"}
_UNSIGNED = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}
_FLOAT = {32: "float", 64: "double"}
_COMPARE = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_VECTOR_MATH = {
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "trunc",
}


def vector_c_type(t: Type) -> str:
    """The OpenCL vector type holding a vector of type t (bools as -1/0 chars)."""
    if t.lanes not in (2, 3, 4, 8, 16):
        raise CompileError(f"OpenCL has no vector type of {t.lanes} lanes (type {t})")
    if t.is_bool():
        base = "char"
    elif t.is_float():
        base = _FLOAT.get(t.bits)
    elif t.is_int():
        base = _SIGNED.get(t.bits)
    else:
        base = _UNSIGNED.get(t.bits)
    if base is None:
        raise CompileError(f"the OpenCL backend does not support the type {t}")
    return f"{base}{t.lanes}"


def _mask_type(bits: int, lanes: int) -> str:
    """The signed integer vector OpenCL's comparisons give and `select` takes for elements of `bits`."""
    return f"{_SIGNED[bits]}{lanes}"


def _unsigned_of(t: Type) -> str:
    return f"{_UNSIGNED[t.bits]}{t.lanes}"


def lane(v: str, k: int) -> str:
    """Lane k of the vector v (OpenCL's `.sK` with K a hex digit)."""
    return f"{v}.s{k:x}"


def _ramp_offsets(t: Type) -> str:
    if t.is_float():
        suffix = "f" if t.bits == 32 else ""
        return ", ".join(f"{k}.0{suffix}" for k in range(t.lanes))
    return ", ".join(str(k) for k in range(t.lanes))


def _div_helper(t: Type) -> str:
    vt, ut, mt = vector_c_type(t), _unsigned_of(t), _mask_type(t.bits, t.lanes)
    if t.is_uint():
        body = (
            f"  {mt} zero = b == ({vt})0;\n"
            f"  {vt} q = a / select(b, ({vt})1, zero);\n"
            f"  return select(q, ({vt})0, zero);\n"
        )
    else:
        body = (
            f"  {mt} zero = b == ({vt})0;\n"
            f"  {mt} minus_one = b == ({vt})(-1);\n"
            f"  {vt} d = select(b, ({vt})1, zero | minus_one);\n"
            f"  {vt} q = a / d;\n"
            f"  {vt} r = a % d;\n"
            # a negative remainder moves the quotient one step away from the divisor's sign
            f"  {vt} step = select(select(({vt})1, ({vt})(-1), d > ({vt})0), ({vt})0, r >= ({vt})0);\n"
            f"  q = as_{vt}(as_{ut}(q) + as_{ut}(step));\n"
            f"  q = select(q, as_{vt}(({ut})0 - as_{ut}(a)), minus_one);\n"
            f"  return select(q, ({vt})0, zero);\n"
        )
    return f"static inline {vt} pw_div_{vt}({vt} a, {vt} b) {{\n{body}}}\n"


def _mod_helper(t: Type) -> str:
    vt, ut, mt = vector_c_type(t), _unsigned_of(t), _mask_type(t.bits, t.lanes)
    if t.is_uint():
        body = f"  return a % select(b, ({vt})1, b == ({vt})0);\n"
    else:
        body = (
            f"  {mt} bad = (b == ({vt})0) | (b == ({vt})(-1));\n"
            f"  {vt} d = select(b, ({vt})1, bad);\n"
            f"  {vt} r = a % d;\n"
            f"  {ut} magnitude = select(as_{ut}(d), ({ut})0 - as_{ut}(d), d < ({vt})0);\n"
            f"  return select(r, as_{vt}(as_{ut}(r) + magnitude), r < ({vt})0);\n"
        )
    return f"static inline {vt} pw_div_{vt}({vt} a, {vt} b) {{\n{body}}}\n".replace("pw_div_", "pw_mod_")


def _positive_constant(e: E.Expr) -> int | None:
    """c when e is the vector of the positive integer constant c in every lane."""
    if isinstance(e, Broadcast) and isinstance(e.value, E.Const) and not e.value.type().is_float():
        c = int(e.value.value)
        return c if c > 0 else None
    return None


class VectorExprs:
    """The vector half of the OpenCL expression emitter (mixed into ExprEmitter, which
    provides expr(), _temp(), the name scopes and the scalar operations)."""

    def vector_compute(self, e: E.Expr, t: Type) -> str:
        vt = vector_c_type(t)
        n = t.lanes
        if isinstance(e, Broadcast):
            v = self.expr(e.value)
            if t.is_bool():
                return f"({vt})(({v}) ? (char)-1 : (char)0)"
            return f"({vt})({v})"
        if isinstance(e, Ramp):
            base, stride = self.expr(e.base), self.expr(e.stride)
            if t.is_float():
                return f"({vt})({base}) + ({vt})({stride}) * ({vt})({_ramp_offsets(t)})"
            ut, ue = _unsigned_of(t), _UNSIGNED[t.bits]  # wrapping, as Halide's integer ramps
            return f"as_{vt}(({ut})(({ue}){base}) + ({ut})(({ue}){stride}) * ({ut})({_ramp_offsets(t)}))"
        if isinstance(e, E.Cast):
            return self.vector_cast(self.expr(e.value), e.value.type(), t)
        if isinstance(e, (E.Add, E.Sub, E.Mul)):
            a, b = self.expr(e.a), self.expr(e.b)
            op = {E.Add: "+", E.Sub: "-", E.Mul: "*"}[type(e)]
            if t.is_float() or (t.is_uint() and not t.is_bool()):
                return f"{a} {op} {b}"
            if t.is_bool():  # arithmetic modulo 2 on -1/0 masks
                return f"{a} & {b}" if isinstance(e, E.Mul) else f"{a} ^ {b}"
            ut = _unsigned_of(t)
            return f"as_{vt}(as_{ut}({a}) {op} as_{ut}({b}))"
        if isinstance(e, (E.Div, E.Mod)):
            return self._vector_div_mod(e, t)
        if isinstance(e, (E.Min, E.Max)):
            a, b = self.expr(e.a), self.expr(e.b)
            if t.is_bool():
                return f"{a} & {b}" if isinstance(e, E.Min) else f"{a} | {b}"
            op = "<" if isinstance(e, E.Min) else ">"
            return f"select({b}, {a}, {a} {op} {b})"  # NaN in a gives b, as Halide's min and max
        if type(e) in _COMPARE:
            a, b = self.expr(e.a), self.expr(e.b)
            operand = e.a.type()
            if operand.is_bool() and type(e) not in (E.EQ, E.NE):
                a, b = f"as_uchar{n}({a})", f"as_uchar{n}({b})"  # false < true: 0 < 255
            return f"convert_{vt}({a} {_COMPARE[type(e)]} {b})"
        if isinstance(e, E.And):
            return f"{self.expr(e.a)} & {self.expr(e.b)}"
        if isinstance(e, E.Or):
            return f"{self.expr(e.a)} | {self.expr(e.b)}"
        if isinstance(e, E.Not):
            return f"~{self.expr(e.a)}"
        if isinstance(e, E.Select):
            c = self.expr(e.cond)
            a, b = self.expr(e.true_value), self.expr(e.false_value)
            if e.cond.type().lanes == 1:
                return f"({c}) ? {a} : {b}"
            bits = 8 if t.is_bool() else t.bits
            mask = c if bits == 8 else f"convert_{_mask_type(bits, n)}({c})"
            return f"select({b}, {a}, {mask})"
        if isinstance(e, Load):
            return self.vector_load(e, t)
        if isinstance(e, E.Call):
            return self._vector_call(e, t)
        return self.lanewise(e, t)

    # ------------------------------------------------------------------ casts
    def vector_cast(self, v: str, src: Type, dst: Type) -> str:
        if src == dst:
            return v
        n = dst.lanes
        vt = vector_c_type(dst)
        if dst.is_bool():  # the lowest bit, as Halide (a float first becomes an int32)
            if src.is_float():
                return f"convert_{vt}((convert_int{n}({v}) & (int{n})1) != (int{n})0)"
            st = vector_c_type(src)
            return f"convert_{vt}(({v} & ({st})1) != ({st})0)"
        if src.is_bool():
            return f"convert_{vt}(-{v})"  # -1/0 -> 1/0
        if src.is_float() and not dst.is_float():
            wide = f"{'long' if dst.bits > 32 or (dst.is_uint() and dst.bits == 32) else 'int'}{n}"
            if wide == vt:
                return f"convert_{vt}({v})"  # float to integer rounds toward zero
            return f"convert_{vt}(convert_{wide}({v}))"
        return f"convert_{vt}({v})"

    # ------------------------------------------------------------------ division
    def _vector_div_mod(self, e: E.Expr, t: Type) -> str:
        if t.is_bool():
            return self.lanewise(e, t)
        by_reciprocal = self.division_by_reciprocal(e, t)
        if by_reciprocal is not None:
            return by_reciprocal
        a, b = self.expr(e.a), self.expr(e.b)
        is_div = isinstance(e, E.Div)
        vt = vector_c_type(t)
        if t.is_float():
            return f"{a} / {b}" if is_div else f"{a} - {b} * floor({a} / {b})"
        c = _positive_constant(e.b)
        if c is not None:
            if t.is_uint():
                return f"{a} {'/' if is_div else '%'} {b}"
            if c & (c - 1) == 0:  # an arithmetic shift rounds toward minus infinity: Euclidean here
                k = c.bit_length() - 1
                return f"{a} >> ({vt})({k})" if is_div else f"{a} & ({vt})({c - 1})"
        op = "div" if is_div else "mod"
        name = f"pw_{op}_{vt}"
        if name not in self.helpers:
            self.helpers[name] = (_div_helper if is_div else _mod_helper)(t)
        return f"{name}({a}, {b})"

    # ------------------------------------------------------------------ memory
    def vector_load(self, e: Load, t: Type) -> str:
        ref = self.buffers.get(e.buffer)
        if ref is None:
            raise CompileError(f"buffer `{e.buffer}` is not an argument or an allocation of the OpenCL kernel")
        p = ref[0]
        n = t.lanes
        memory = f"uchar{n}" if t.is_bool() else vector_c_type(t)
        index = self.index_of(e.buffer, e.index)
        if isinstance(index, Broadcast):
            raw = f"({memory})({p}[{self.index(index.value)}])"
        elif dense_base(index) is not None:
            base = dense_base(index)
            if not t.is_bool() and self.aligned_vector is not None and self.aligned_vector(p, base, n):
                raw = f"*((__local {memory} *)({p} + {self.index(base)}))"
            else:
                raw = f"vload{n}(0, {p} + {self.index(base)})"
        else:
            idx = self.index(index)
            raw = f"({memory})({', '.join(f'{p}[{lane(idx, k)}]' for k in range(n))})"
        if t.is_bool():
            return f"{raw} != (uchar{n})0"
        return raw

    # ------------------------------------------------------------------ intrinsics
    def _vector_call(self, e: E.Call, t: Type) -> str:
        if e.call_kind != "intrinsic":
            raise CompileError(
                f"call to {e.call_kind} `{e.name}` reached the OpenCL backend; lowering must turn it into a Load"
            )
        name = e.name
        vt = vector_c_type(t)
        args = e.args
        if name in _VECTOR_MATH and t.is_float():
            return f"{name}({self.expr(args[0])})"
        if name == "round" and t.is_float():
            return f"rint({self.expr(args[0])})"  # half to even, as Halide
        if name in ("pow", "atan2") and t.is_float():
            return f"{name}({self.expr(args[0])}, {self.expr(args[1])})"
        if name == "is_nan":
            return f"convert_{vt}(isnan({self.expr(args[0])}))"
        src = args[0].type() if args else t
        if name == "abs" and not src.is_bool():
            x = self.expr(args[0])
            if src.is_float():
                return f"fabs({x})"
            return f"convert_{vt}(abs({x}))"
        if name == "absd" and not src.is_bool():
            a, b = self.expr(args[0]), self.expr(args[1])
            if src.is_float():
                return f"fabs({a} - {b})"
            return f"convert_{vt}(abs_diff({a}, {b}))"
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor") and args[0].type() == args[1].type() == t:
            op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[name]
            return f"{self.expr(args[0])} {op} {self.expr(args[1])}"
        if name == "bitwise_not" and args[0].type() == t:
            return f"~{self.expr(args[0])}"
        return self.lanewise(e, t)

    # ------------------------------------------------------------------ lane by lane
    def lanewise(self, e: E.Expr, t: Type) -> str:
        """e computed one lane at a time by the scalar code, the lanes put back together."""
        kids = e.children()
        texts = [self.expr(k) for k in kids]
        lanes: list[str] = []
        for k in range(t.lanes):
            self.push_scope()
            placeholders = []
            for j, (kid, text) in enumerate(zip(kids, texts, strict=True)):
                kt = kid.type()
                if kt.lanes == 1:
                    value = text
                elif kt.is_bool():
                    value = f"({lane(text, k)} != 0)"
                else:
                    value = lane(text, k)
                name = f"__pw_lane_{j}"
                self.names[-1][name] = value
                placeholders.append(E.Variable(name, kt.element_of()))
            scalar = _scalar_copy(e, t.element_of(), tuple(placeholders))
            try:
                lanes.append(self.expr(scalar))
            finally:
                self.pop_scope()
        if t.is_bool():
            return f"({vector_c_type(t)})({', '.join(f'(char)(({v}) ? -1 : 0)' for v in lanes)})"
        return f"({vector_c_type(t)})({', '.join(lanes)})"


def dense_base(index: E.Expr) -> E.Expr | None:
    """The first element when index is a ramp of stride one (a vloadN/vstoreN access)."""
    if isinstance(index, Ramp) and isinstance(index.stride, E.Const) and int(index.stride.value) == 1:
        return index.base
    return None


def _scalar_copy(e: E.Expr, t: Type, children: tuple[E.Expr, ...]) -> E.Expr:
    if isinstance(e, E.Call):
        return E.Call(t, e.name, children, e.call_kind, e.target, e.value_index)
    if isinstance(e, E.Cast):
        return E.Cast(t, children[0])
    if isinstance(e, E.BinaryOp):
        return type(e)(children[0], children[1])
    if isinstance(e, E.Not):
        return E.Not(children[0])
    if isinstance(e, E.Select):
        return E.Select(*children)
    raise CompileError(f"the OpenCL backend cannot compute a {type(e).__name__} vector lane by lane")
