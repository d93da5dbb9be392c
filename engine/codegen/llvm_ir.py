"""A small textual LLVM IR builder: typed values, functions, blocks and module assembly.

Why text instead of `llvmlite.ir`: the backend needs opaque pointers, vector GEPs, atomics
with explicit orderings, string function attributes and `splat` constants, all of which
are one line of text each; llvmlite.ir's typed pointers get in the way (PLATFORM-NOTES).
The text is parsed and verified by `llvmlite.binding.parse_assembly` before use, and it
is deterministic (no object ids in names), so it can key the compile cache.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np
from pixelweave.engine.ir.types import Int, Type

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.]")


class Value:
    """An SSA value or constant: its LLVM type text and its operand text (`%x`, `42`).

    A plain slotted class rather than a frozen dataclass: the emitter makes one per
    instruction and constant, and a frozen dataclass's constructor costs three times as
    much. Treat it as immutable (constants are shared, see const)."""

    __slots__ = ("ref", "ty")

    def __init__(self, ty: str, ref: str) -> None:
        self.ty = ty
        self.ref = ref

    def __str__(self) -> str:
        return f"{self.ty} {self.ref}"

    def __repr__(self) -> str:
        return f"Value(ty={self.ty!r}, ref={self.ref!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Value:
            return NotImplemented
        return self.ty == other.ty and self.ref == other.ref  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.ty, self.ref))


# ------------------------------------------------------------------------------ types


def scalar_type(t: Type) -> str:
    """The LLVM register type of one lane of t (bool is i1)."""
    text = _scalar_types.get(t)
    if text is None:
        text = _scalar_types[t] = ("float" if t.bits == 32 else "double") if t.is_float() else f"i{t.bits}"
    return text


def llvm_type(t: Type) -> str:
    """The LLVM register type of t, a vector type when t has lanes."""
    text = _llvm_types.get(t)
    if text is None:
        s = scalar_type(t)
        text = _llvm_types[t] = s if t.lanes == 1 else f"<{t.lanes} x {s}>"
    return text


# Type texts by Type (a function of the type alone, and there are few types): the emitter
# asks for one per instruction.
_scalar_types: dict[Type, str] = {}
_llvm_types: dict[Type, str] = {}


def memory_scalar_type(t: Type) -> str:
    """The in-memory type of one element: bools are stored as bytes."""
    return "i8" if t.is_bool() else scalar_type(t)


def memory_type(t: Type) -> str:
    s = memory_scalar_type(t)
    return s if t.lanes == 1 else f"<{t.lanes} x {s}>"


def element_bytes(t: Type) -> int:
    """Bytes one element of t occupies in memory (bools take a byte)."""
    return max(t.bits // 8, 1)


def vector_of(scalar: str, lanes: int) -> str:
    return scalar if lanes == 1 else f"<{lanes} x {scalar}>"


# ------------------------------------------------------------------------------ constants


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def scalar_literal(t: Type, value: int | float) -> str:
    """Operand text of a scalar constant of type t (wrapping integers to t's width)."""
    if t.is_float():
        if t.bits == 32:
            with np.errstate(over="ignore"):
                value = float(np.float32(value))  # a float literal must be exact in float32
        (bits,) = struct.unpack("<Q", struct.pack("<d", float(value)))
        return f"0x{bits:016X}"
    if t.is_bool():
        return "true" if value else "false"
    return str(_signed(int(value), t.bits))


def const(t: Type, value: int | float) -> Value:
    """A constant of type t; a vector type gets the value in every lane."""
    if value.__class__ is int:  # (floats are not remembered: 0.0 and -0.0 are equal keys)
        key = (t, value)
        hit = _int_consts.get(key)
        if hit is None:
            if len(_int_consts) >= _INT_CONSTS_LIMIT:
                _int_consts.clear()
            hit = _int_consts[key] = _make_const(t, value)
        return hit
    return _make_const(t, value)


def _make_const(t: Type, value: int | float) -> Value:
    lit = scalar_literal(t.element_of(), value)
    if t.lanes == 1:
        return Value(llvm_type(t), lit)
    return Value(llvm_type(t), f"splat ({scalar_type(t)} {lit})")


# Integer constants by (type, value): the text is a function of the two alone, and the
# same few (0, 1, strides, lane counts) are asked for thousands of times per module.
_int_consts: dict[tuple[Type, int], Value] = {}
_INT_CONSTS_LIMIT = 4096


def int_const(bits: int, value: int, lanes: int = 1) -> Value:
    return const(Int(bits).with_lanes(lanes), value)


TRUE = Value("i1", "true")
LIKELY_METADATA = "!0"  # branch weights: the true side is (almost) always taken
FALSE = Value("i1", "false")


def string_bytes_literal(data: bytes) -> str:
    """A `c"..."` array literal for data (which should end with a NUL)."""
    out = []
    for b in data:
        ch = chr(b)
        if 32 <= b < 127 and ch not in '"\\':
            out.append(ch)
        else:
            out.append(f"\\{b:02X}")
    return 'c"' + "".join(out) + '"'


def sanitize(name: str) -> str:
    """A string usable inside an LLVM local or global identifier."""
    s = _NAME_CHARS.sub("_", name)
    return s if s and not s[0].isdigit() else "_" + s


# ------------------------------------------------------------------------------ functions


@dataclass
class _Block:
    label: str
    lines: list[str] = field(default_factory=list)
    terminated: bool = False


class FunctionBuilder:
    """Instructions of one function, block by block, with fresh SSA names.

    `alloca_in_entry` hoists stack slots to the entry block, so loops never grow the
    stack. Emitting into a block after its terminator is a bug and raises.
    """

    def __init__(
        self,
        name: str,
        return_type: str,
        params: list[tuple[str, str]],
        *,
        linkage: str = "",
        attributes: str = "nounwind",
    ) -> None:
        self.name = name
        self.return_type = return_type
        self.linkage = linkage
        self.attributes = attributes
        self._counter = 0
        self._used_names: dict[str, int] = {}
        self._sanitized: dict[str, str] = {}  # hint -> its identifier text (few hints, many names)
        # Values and block labels share the function's local names in LLVM: a value named
        # like a label (a Param called `fail`) made the IR invalid.
        self._taken = {"entry"}
        self.params = [Value(ty, self._fresh_name(hint)) for ty, hint in params]
        self._param_decls = [f"{ty} {v.ref}" for (ty, _), v in zip(params, self.params, strict=True)]
        self._entry_allocas: list[str] = []
        self._blocks: list[_Block] = [_Block("entry")]

    # -------------------------------------------------------------- naming
    def _unique(self, base: str) -> str:
        n = self._used_names.get(base, 0)
        name = base if n == 0 else f"{base}.{n}"
        while name in self._taken:
            n += 1
            name = f"{base}.{n}"
        self._used_names[base] = n + 1
        self._taken.add(name)
        return name

    def _fresh_name(self, hint: str) -> str:
        base = self._sanitized.get(hint)
        if base is None:
            base = self._sanitized[hint] = sanitize(hint or "t")
        return "%" + self._unique(base)

    def new_label(self, hint: str) -> str:
        return self._unique(sanitize(hint))

    # -------------------------------------------------------------- blocks
    @property
    def current_label(self) -> str:
        return self._blocks[-1].label

    @property
    def terminated(self) -> bool:
        return self._blocks[-1].terminated

    def start_block(self, label: str) -> None:
        """Continue emitting in a new block (the previous one must be terminated)."""
        if not self._blocks[-1].terminated:
            raise AssertionError(f"block {self._blocks[-1].label} of {self.name} has no terminator")
        self._blocks.append(_Block(label))

    def emit(self, text: str) -> None:
        block = self._blocks[-1]
        if block.terminated:
            raise AssertionError(f"emitting `{text}` after the terminator of {block.label} in {self.name}")
        block.lines.append(text)

    def fresh_value(self, ty: str, hint: str = "t") -> Value:
        """A new SSA name to be defined later (loop counters defined by a phi)."""
        return Value(ty, self._fresh_name(hint))

    def assign(self, ty: str, text: str, hint: str = "t") -> Value:
        base = self._sanitized.get(hint)
        if base is None:
            base = self._sanitized[hint] = sanitize(hint or "t")
        name = "%" + self._unique(base)
        block = self._blocks[-1]
        if block.terminated:
            self.emit(f"{name} = {text}")  # raises
        block.lines.append(f"{name} = {text}")
        return Value(ty, name)

    def terminate(self, text: str) -> None:
        self.emit(text)
        self._blocks[-1].terminated = True

    def br(self, label: str) -> None:
        self.terminate(f"br label %{label}")

    def cond_br(self, cond: Value, true_label: str, false_label: str, *, likely: bool = False) -> None:
        """Branch on cond; likely=True marks the false side cold (error paths), so the
        backend lays it out of the hot code."""
        weights = f", !prof {LIKELY_METADATA}" if likely else ""
        self.terminate(f"br i1 {cond.ref}, label %{true_label}, label %{false_label}{weights}")

    def ret(self, value: Value | None = None) -> None:
        self.terminate("ret void" if value is None else f"ret {value}")

    def alloca_in_entry(self, ty: str, align: int = 16, hint: str = "slot") -> Value:
        name = self._fresh_name(hint)
        self._entry_allocas.append(f"{name} = alloca {ty}, align {align}")
        return Value("ptr", name)

    # -------------------------------------------------------------- common instructions
    def binop(self, op: str, a: Value, b: Value, hint: str = "t") -> Value:
        return self.assign(a.ty, f"{op} {a.ty} {a.ref}, {b.ref}", hint)

    def icmp(self, pred: str, a: Value, b: Value, hint: str = "c") -> Value:
        return self.assign(_bool_like(a.ty), f"icmp {pred} {a.ty} {a.ref}, {b.ref}", hint)

    def fcmp(self, pred: str, a: Value, b: Value, hint: str = "c") -> Value:
        return self.assign(_bool_like(a.ty), f"fcmp {pred} {a.ty} {a.ref}, {b.ref}", hint)

    def select(self, cond: Value, a: Value, b: Value, hint: str = "s") -> Value:
        return self.assign(a.ty, f"select {cond.ty} {cond.ref}, {a.ty} {a.ref}, {b.ty} {b.ref}", hint)

    def convert(self, op: str, v: Value, ty: str, hint: str = "cv") -> Value:
        if v.ty == ty and op in ("sext", "zext", "trunc", "fpext", "fptrunc", "bitcast"):
            return v
        return self.assign(ty, f"{op} {v.ty} {v.ref} to {ty}", hint)

    def load(self, ty: str, ptr: Value, align: int, hint: str = "ld", extra: str = "") -> Value:
        return self.assign(ty, f"load {extra}{ty}, ptr {ptr.ref}, align {align}", hint)

    def store(self, value: Value, ptr: Value, align: int) -> None:
        self.emit(f"store {value}, ptr {ptr.ref}, align {align}")

    def gep(self, elem_ty: str, ptr: Value, index: Value, hint: str = "p") -> Value:
        result_ty = "ptr" if not index.ty.startswith("<") else index.ty.split(" x ")[0] + " x ptr>"
        return self.assign(result_ty, f"getelementptr {elem_ty}, ptr {ptr.ref}, {index}", hint)

    def call(self, ret: str, callee: str, args: list[Value], hint: str = "r", fnty: str | None = None) -> Value | None:
        arg_text = ", ".join(str(a) for a in args)
        head = fnty if fnty is not None else ret
        if ret == "void":
            self.emit(f"call {head} {callee}({arg_text})")
            return None
        return self.assign(ret, f"call {head} {callee}({arg_text})", hint)

    # -------------------------------------------------------------- output
    def render(self) -> str:
        params = ", ".join(self._param_decls)
        linkage = f"{self.linkage} " if self.linkage else ""
        lines = [f"define {linkage}{self.return_type} @{self.name}({params}) {self.attributes} {{"]
        for i, block in enumerate(self._blocks):
            if not block.terminated:
                raise AssertionError(f"block {block.label} of {self.name} has no terminator")
            lines.append(f"{block.label}:")
            if i == 0:
                lines.extend("  " + a for a in self._entry_allocas)
            lines.extend("  " + line for line in block.lines)
        lines.append("}")
        return "\n".join(lines)


def lanes_of(ty: str) -> int:
    """The number of lanes of an LLVM type text (1 for scalars)."""
    return int(ty[1:].split(" x ")[0]) if ty.startswith("<") else 1


def _bool_like(ty: str) -> str:
    if ty.startswith("<"):
        lanes = ty[1:].split(" x ")[0]
        return f"<{lanes} x i1>"
    return "i1"


# ------------------------------------------------------------------------------ modules


class ModuleBuilder:
    """Globals, declarations and function bodies of one module, rendered as IR text."""

    def __init__(self, name: str, triple: str, datalayout: str) -> None:
        self.name = name
        self.triple = triple
        self.datalayout = datalayout
        self._globals: list[str] = []
        self._declarations: dict[str, str] = {}
        self._functions: list[str] = []
        self._strings: dict[bytes, str] = {}
        self._symbols: set[str] = set()
        self.trailer: list[str] = []

    def unique_symbol(self, hint: str) -> str:
        base = sanitize(hint)
        name, n = base, 0
        while name in self._symbols:
            n += 1
            name = f"{base}.{n}"
        self._symbols.add(name)
        return name

    def declare(self, name: str, signature: str) -> str:
        """Declare external function `name` once; signature is `ret (args)`; returns `@name`."""
        if name not in self._declarations:
            ret, _, args = signature.partition(" (")
            self._declarations[name] = f"declare {ret} @{name}({args}"
        return f"@{name}"

    def intrinsic(self, name: str, ret: str, args: list[str]) -> str:
        """Declare an LLVM intrinsic or libm function by name and types; returns `@name`."""
        return self.declare(name, f"{ret} ({', '.join(args)})")

    def add_global(self, text: str) -> None:
        self._globals.append(text)

    def add_function(self, text: str) -> None:
        self._functions.append(text)

    def string_constant(self, text: str) -> Value:
        """A private NUL-terminated string constant; returns a ptr Value."""
        data = text.encode("utf-8") + b"\0"
        name = self._strings.get(data)
        if name is None:
            name = self.unique_symbol(f"{self.name}.str")
            self._strings[data] = name
            self._globals.append(
                f"@{name} = private unnamed_addr constant [{len(data)} x i8] {string_bytes_literal(data)}, align 1"
            )
        return Value("ptr", f"@{name}")

    def render(self) -> str:
        parts = [
            f"; ModuleID = '{self.name}'",
            f'target datalayout = "{self.datalayout}"',
            f'target triple = "{self.triple}"',
            "",
            *self._globals,
            "",
            *sorted(self._declarations.values()),
            "",
        ]
        for f in self._functions:
            parts.extend((f, ""))
        parts.extend(self.trailer)
        parts.append(f'{LIKELY_METADATA} = !{{!"branch_weights", i32 1048575, i32 1}}')
        return "\n".join(parts) + "\n"


def shuffle_operands(b: FunctionBuilder, parts: list[Value], elem: str, width: int, hint: str) -> tuple[Value, Value]:
    """Dense loads of `width` elements each, concatenated pairwise until at most two remain:
    the two operands of the one shufflevector that picks lanes from all of them (the second
    poison when a single vector remains; a poison vector pads an odd count). Element i of the
    parts laid end to end is lane i of the two operands laid end to end."""
    size = width
    while len(parts) > 2:
        if len(parts) % 2:
            parts = [*parts, Value(vector_of(elem, size), "poison")]
        both = ", ".join(f"i32 {i}" for i in range(2 * size))
        parts = [
            b.assign(
                vector_of(elem, 2 * size),
                f"shufflevector {parts[i]}, {parts[i + 1]}, <{2 * size} x i32> <{both}>",
                hint,
            )
            for i in range(0, len(parts), 2)
        ]
        size *= 2
    second = parts[1] if len(parts) == 2 else Value(vector_of(elem, size), "poison")
    return parts[0], second
