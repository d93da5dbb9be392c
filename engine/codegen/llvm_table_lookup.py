"""Vector lookups into small byte tables as byte permutes (AVX-512 VBMI `vpermi2b`).

A vectorized lookup `table[int32(v)]` (histogram equalization's map, a tone curve, a
palette) indexes its table with data, so it is a gather: one address, one scalar load and
one insert per lane, 16 to 64 of them per vector (half of histogram equalization's time).
When the table is an allocation of a constant number of bytes and the index provably lies
in a window of at most WINDOW_LIMIT of them, the window fits in registers: `vpermi2b`
picks 64 lanes out of 128 table bytes in one instruction, and one select per further 128
bytes chooses by the index's high bits. The window is read with loads that stay inside
the allocation (a masked load where the allocation ends within 64 bytes), so the table
reads no memory a gather would not be allowed to read.
"""

from __future__ import annotations

from dataclasses import dataclass

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, int_const, lanes_of
from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import Broadcast, Ramp

WINDOW_LIMIT = 1024  # bytes: 16 zmm registers of table, 8 permutes and 7 selects per 64 lanes
PERMUTE_LANES = 64
_PERMUTE = "llvm.x86.avx512.vpermi2var.qi.512"
_ZMM_BYTES = "<64 x i8>"


def supports_table_lookup(features: str) -> bool:
    """Whether an LLVM feature string has the byte permutes (AVX-512 VBMI and BW)."""
    enabled = set(features.split(","))
    return "+avx512vbmi" in enabled and "+avx512bw" in enabled


def constant_interval(e: E.Expr) -> tuple[int, int] | None:
    """Every lane's value of integer expression e lies in [lo, hi] (Python ints), or None
    when that is not known from e alone (a narrow integer of unknown value counts as its
    type's range)."""
    t = e.type()
    if t.is_float():
        return None
    if isinstance(e, E.Const):
        return int(e.value), int(e.value)
    if isinstance(e, Broadcast):
        return constant_interval(e.value)
    if isinstance(e, Ramp):
        base, stride = constant_interval(e.base), constant_interval(e.stride)
        if base is None or stride is None or stride[0] != stride[1]:
            return None
        ends = (base[0], base[1], base[0] + stride[0] * (e.lanes - 1), base[1] + stride[0] * (e.lanes - 1))
        return min(ends), max(ends)
    if isinstance(e, E.Cast):
        inner = constant_interval(e.value)
        if inner is not None and t.min() <= inner[0] and inner[1] <= t.max():
            return inner
        return _type_range(t)
    if isinstance(e, (E.Add, E.Sub, E.Min, E.Max, E.Mul)):
        a, b = constant_interval(e.a), constant_interval(e.b)
        if a is None or b is None:
            return _type_range(t)
        if isinstance(e, E.Add):
            lo, hi = a[0] + b[0], a[1] + b[1]
        elif isinstance(e, E.Sub):
            lo, hi = a[0] - b[1], a[1] - b[0]
        elif isinstance(e, E.Min):
            lo, hi = min(a[0], b[0]), min(a[1], b[1])
        elif isinstance(e, E.Max):
            lo, hi = max(a[0], b[0]), max(a[1], b[1])
        else:
            products = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
            lo, hi = min(products), max(products)
        if t.min() <= lo and hi <= t.max():  # no wrap-around: the interval holds
            return lo, hi
        return _type_range(t)
    if isinstance(e, E.Select):
        a, b = constant_interval(e.true_value), constant_interval(e.false_value)
        if a is not None and b is not None:
            return min(a[0], b[0]), max(a[1], b[1])
    return _type_range(t)


def _type_range(t) -> tuple[int, int] | None:
    """A narrow integer type's whole range (wider types say nothing useful)."""
    if t.is_integer() and t.bits <= 16:
        return int(t.min()), int(t.max())
    return None


@dataclass(frozen=True)
class TableWindow:
    """The table elements [lo, lo + span) that every lane's index falls in."""

    lo: int
    span: int


def table_window(index: E.Expr, lanes: int, table_elements: int | None) -> TableWindow | None:
    """The window a vector lookup of `lanes` lanes at `index` reads from a table of
    table_elements bytes, or None when the permute path does not apply."""
    if table_elements is None or not (lanes <= PERMUTE_LANES or lanes in (2 * PERMUTE_LANES, 4 * PERMUTE_LANES)):
        return None
    interval = constant_interval(index)
    if interval is None:
        return None
    lo, hi = interval
    if lo < 0 or hi >= table_elements or hi - lo + 1 > WINDOW_LIMIT:
        return None
    return TableWindow(lo, hi - lo + 1)


def _table_registers(
    b: FunctionBuilder, module: ModuleBuilder, base: Value, window: TableWindow, table_elements: int, name: str
) -> list[Value]:
    """The window as 64-byte vectors, two per 128 bytes; bytes past the allocation's end are
    never read (masked off, or a zero vector when a whole register lies past it)."""
    registers = []
    pairs = -(-window.span // 128)
    for k in range(2 * pairs):
        start = window.lo + 64 * k
        valid = min(64, table_elements - start)
        if valid <= 0:
            registers.append(Value(_ZMM_BYTES, "zeroinitializer"))
            continue
        pointer = b.gep("i8", base, int_const(64, start), f"{name}.window")
        if valid == 64:
            registers.append(b.load(_ZMM_BYTES, pointer, 1, f"{name}.table"))
            continue
        mask = ", ".join("i1 true" if lane < valid else "i1 false" for lane in range(64))
        fn = module.intrinsic("llvm.masked.load.v64i8.p0", _ZMM_BYTES, ["ptr", "i32", "<64 x i1>", _ZMM_BYTES])
        registers.append(
            b.assign(
                _ZMM_BYTES,
                f"call {_ZMM_BYTES} {fn}(ptr {pointer.ref}, i32 1, <64 x i1> <{mask}>, {_ZMM_BYTES} zeroinitializer)",
                f"{name}.table",
            )
        )
    return registers


def _lane_mask(start: int, count: int) -> str:
    return f"<{count} x i32> <" + ", ".join(f"i32 {start + k}" for k in range(count)) + ">"


def _widen_to_permute_lanes(b: FunctionBuilder, value: Value, lanes: int, scalar: str, hint: str) -> Value:
    """A vector of `lanes` (< 64) lanes as 64 lanes, the extra ones poison."""
    if lanes == PERMUTE_LANES:
        return value
    ty = f"<{lanes} x {scalar}>"
    wide = f"<{PERMUTE_LANES} x {scalar}>"
    items = ", ".join(f"i32 {k}" if k < lanes else "i32 poison" for k in range(PERMUTE_LANES))
    return b.assign(wide, f"shufflevector {ty} {value.ref}, {ty} poison, <{PERMUTE_LANES} x i32> <{items}>", hint)


def _permute_64(
    b: FunctionBuilder, module: ModuleBuilder, registers: list[Value], relative: Value, lanes: int
) -> Value:
    """table[relative] for `lanes` <= 64 lanes of i32 indices into the window."""
    permute = module.intrinsic(_PERMUTE, _ZMM_BYTES, [_ZMM_BYTES, _ZMM_BYTES, _ZMM_BYTES])
    narrow = b.convert("trunc", relative, f"<{lanes} x i8>")
    index = _widen_to_permute_lanes(b, narrow, lanes, "i8", "lookup.index")
    picked = [
        b.assign(_ZMM_BYTES, f"call {_ZMM_BYTES} {permute}({low}, {index}, {high})", "lookup")
        for low, high in zip(registers[0::2], registers[1::2], strict=True)
    ]
    result = picked[0]
    if len(picked) > 1:
        i32s = f"<{lanes} x i32>"
        block = b.assign(i32s, f"lshr {i32s} {relative.ref}, {int_const(32, 7, lanes).ref}", "lookup.block")
        block = _widen_to_permute_lanes(b, b.convert("trunc", block, f"<{lanes} x i8>"), lanes, "i8", "lookup.block")
        for k, candidate in enumerate(picked[1:], start=1):
            test = f"icmp eq {_ZMM_BYTES} {block.ref}, {int_const(8, k, PERMUTE_LANES).ref}"
            here = b.assign(f"<{PERMUTE_LANES} x i1>", test, "lookup.in")
            result = b.assign(_ZMM_BYTES, f"select <64 x i1> {here.ref}, {candidate}, {result}", "lookup")
    if lanes == PERMUTE_LANES:
        return result
    return b.assign(f"<{lanes} x i8>", f"shufflevector {result}, {_ZMM_BYTES} poison, {_lane_mask(0, lanes)}", "lookup")


def table_lookup(
    b: FunctionBuilder,
    module: ModuleBuilder,
    base: Value,
    table_elements: int,
    window: TableWindow,
    index: Value,
    name: str,
) -> Value:
    """base[index[k]] in lane k (a `<N x i8>`), index an `<N x i32>` whose lanes lie in window."""
    lanes = lanes_of(index.ty)
    registers = _table_registers(b, module, base, window, table_elements, name)
    i32s = f"<{lanes} x i32>"
    relative = index
    if window.lo != 0:
        relative = b.assign(i32s, f"sub {i32s} {index.ref}, {int_const(32, window.lo, lanes).ref}", "lookup.relative")
    if lanes <= PERMUTE_LANES:
        return _permute_64(b, module, registers, relative, lanes)
    parts = []
    for start in range(0, lanes, PERMUTE_LANES):
        part = b.assign(
            f"<{PERMUTE_LANES} x i32>",
            f"shufflevector {relative}, {i32s} poison, {_lane_mask(start, PERMUTE_LANES)}",
            "lookup.part",
        )
        parts.append(_permute_64(b, module, registers, part, PERMUTE_LANES))
    while len(parts) > 1:  # concatenate pairwise: 64+64 -> 128 -> ...
        joined = []
        for left, right in zip(parts[0::2], parts[1::2], strict=True):
            width = 2 * lanes_of(left.ty)
            joined.append(
                b.assign(f"<{width} x i8>", f"shufflevector {left}, {right}, {_lane_mask(0, width)}", "lookup")
            )
        parts = joined
    return parts[0]
