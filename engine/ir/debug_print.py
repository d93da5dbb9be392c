"""Halide's `print` and `print_when`: expressions that print their arguments when evaluated.

A print is an intrinsic Call whose name carries a site number; the site remembers the
text pieces (string literals) and where the values go. Generated code calls back into
Python (engine/runtime/debug_hooks.py) with the site and the values' bits, and the line is
written to stdout in Halide's format: values separated by spaces, float32 as `%f`,
float64 as `%e`, bools as true/false.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import to_expr
from pixelweave.engine.ir.debug_calls import PRINT_PREFIX
from pixelweave.engine.ir.types import Type


@dataclass(frozen=True)
class PrintSite:
    """pieces: each a str (printed as is) or None (the next value); `conditional`: the first
    value is a condition and is not printed (print_when)."""

    pieces: tuple[str | None, ...]
    types: tuple[Type, ...]
    conditional: bool


_sites: dict[int, PrintSite] = {}


def _site_number(site: PrintSite) -> int:
    text = repr((site.pieces, [str(t) for t in site.types], site.conditional))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "little")


def _make_print(args: tuple[Any, ...], conditional: bool, value_index: int) -> E.Expr:
    pieces: list[str | None] = []
    values: list[E.Expr] = []
    for i, a in enumerate(args):
        if isinstance(a, str) and not (conditional and i < 2):
            pieces.append(a)
            continue
        e = to_expr(a)
        if e.type().lanes != 1:
            raise CompileError(f"print takes scalar expressions, got {e.type()}")
        if not (conditional and i == 0):
            pieces.append(None)
        values.append(e)
    if len(values) <= value_index:
        raise CompileError("print needs at least one expression to return (strings alone have no value)")
    site = PrintSite(tuple(pieces), tuple(v.type() for v in values), conditional)
    number = _site_number(site)
    _sites[number] = site
    result = values[value_index]
    # The returned value first: codegen evaluates every argument and returns argument 0.
    ordered = [result, *values]
    return E.Call(result.type(), f"{PRINT_PREFIX}{number}", tuple(ordered), "intrinsic")


def print_expr(*args: Any) -> E.Expr:
    """Halide's `print(a, b, ...)`: the value of the first expression argument, printing every
    argument (string literals included) each time it is evaluated."""
    return _make_print(args, conditional=False, value_index=0)


def print_when(condition: Any, value: Any, *args: Any) -> E.Expr:
    """Halide's `print_when(cond, value, ...)`: `value`, printing it and the remaining
    arguments whenever cond holds."""
    cond = to_expr(condition)
    if not cond.type().is_bool():
        raise CompileError(f"print_when needs a bool condition, got {cond.type()}")
    return _make_print((cond, value, *args), conditional=True, value_index=1)


def site_size(number: int) -> int:
    """How many 64-bit values generated code passes for print site `number`."""
    site = _sites.get(number)
    return 1 if site is None else len(site.types) + 1


def is_print(call: E.Call) -> bool:
    return call.call_kind == "intrinsic" and call.name.startswith(PRINT_PREFIX)


def format_value(t: Type, bits: int) -> str:
    """One value as Halide prints it, from its 64 bits (ints extended, floats as double)."""
    if t.is_float():
        value = struct.unpack("<d", struct.pack("<Q", bits & (2**64 - 1)))[0]
        return f"{value:f}" if t.bits == 32 else f"{value:e}"
    if t.is_bool():
        return "true" if bits & 1 else "false"
    if t.is_uint():
        return str(bits & ((1 << t.bits) - 1))
    bits &= 2**64 - 1
    return str(bits - 2**64 if bits >= 2**63 else bits)


def emit_print(number: int, bits: list[int]) -> None:
    """Called from generated code: write the line of print site `number`."""
    site = _sites.get(number)
    if site is None:
        sys.stdout.write(f"<print site {number} is not known to this process>\n")
        return
    values = bits[1:]  # bits[0] is the returned value, printed where its piece says
    if site.conditional:
        if not values[0] & 1:
            return
        values = values[1:]
        types = site.types[1:]
    else:
        types = site.types
    words, k = [], 0
    for piece in site.pieces:
        if piece is None:
            words.append(format_value(types[k], values[k]))
            k += 1
        else:
            words.append(piece)
    sys.stdout.write(" ".join(words) + "\n")
