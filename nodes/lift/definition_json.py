"""One lifted stage's engine definition as plain JSON data, and back.

A `lifted_stage` node (nodes/catalogue/lifted.py) keeps the Func a lifted stage became in its
`definition` parameter, in this declarative form: the element type, the layout (gray f[x, y],
colour f[x, y, c], array f[i], scalar f[()]), the extents, the pure definition and the update
definitions (over an RDom, for reductions and scatters). Each definition is a list of
operations, `exprs`, every entry a short list naming an engine operation whose operands are
the indices of earlier entries (a DAG: lifted expressions share subexpressions, and a tree
written out would grow exponentially):

    ["const", TYPE, NUMBER]          a literal ("nan", "inf", "-inf" for those floats)
    ["var", K]                       pure dimension K of the stage (int32)
    ["rvar", K]                      dimension K of the update's RDom (int32)
    ["param", PORT, TYPE]            the scalar connected to input PORT, read as TYPE
    ["extent", PORT, K]              extent K of the value connected to input PORT (int32)
    ["call", PORT, TYPE, ARG...]     the value connected to input PORT at ARG..., read as TYPE
    ["self", ARG...]                 the stage's own value so far (in an update)
    ["cast", TYPE, A]                Halide's cast
    [OP, A, B]                       add sub mul div mod min max eq ne lt le gt ge and or
    ["not", A], ["select", C, A, B]
    ["intrinsic", NAME, TYPE, ARG...]  shifts, bitwise operations, abs, absd, lerp, math

An input read as another element type than it carries is converted by value (Halide's cast:
integers wrap, so u8 read as i8 is the same bits). Decoding checks every entry (operation,
operand indices, types) and raises ParameterError saying which entry is wrong; it never runs
code. Encoding takes the engine Func and how each Func, Param and image it reads reaches the
node (an input port, and for planar Python arrays a permutation of the dimensions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.param import ImageParam
from pixelweave.engine.ir.types import Type
from pixelweave.nodes.errors import ParameterError

import pixelweave as pw

TYPES: dict[str, Type] = {
    "u8": pw.UInt(8),
    "u16": pw.UInt(16),
    "u32": pw.UInt(32),
    "u64": pw.UInt(64),
    "i8": pw.Int(8),
    "i16": pw.Int(16),
    "i32": pw.Int(32),
    "i64": pw.Int(64),
    "f32": pw.Float(32),
    "f64": pw.Float(64),
    "bool": pw.Bool(),
}
LAYOUT_DIMS = {"gray": 2, "colour": 3, "array": 1, "scalar": 0}
BINARY = {
    "add": E.Add,
    "sub": E.Sub,
    "mul": E.Mul,
    "div": E.Div,
    "mod": E.Mod,
    "min": E.Min,
    "max": E.Max,
    "eq": E.EQ,
    "ne": E.NE,
    "lt": E.LT,
    "le": E.LE,
    "gt": E.GT,
    "ge": E.GE,
    "and": E.And,
    "or": E.Or,
}
BINARY_NAMES = {cls: name for name, cls in BINARY.items()}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def type_name(t: Type) -> str:
    """u8, i32, f32, bool...: the short name of a scalar type."""
    if t.lanes != 1:
        raise ValueError(f"vector type {t} has no short name")
    if t.is_bool():
        return "bool"
    return f"{'f' if t.is_float() else ('u' if t.is_uint() else 'i')}{t.bits}"


# ---------------------------------------------------------------------------- intrinsics


def _same(args: list[Type]) -> bool:
    return all(a == args[0] for a in args)


def _integer(t: Type) -> bool:
    return (t.is_int() or t.is_uint()) and not t.is_bool()


def _abs_type(t: Type) -> Type:
    return pw.UInt(t.bits) if t.is_int() else t


# name -> (number of arguments, whether the argument types and the result type fit)
MATH = ("sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil",
        "round", "trunc")  # fmt: skip
INTRINSICS: dict[str, tuple[int, Callable[[list[Type], Type], bool]]] = {
    **{name: (1, lambda a, t: a[0].is_float() and t == a[0]) for name in MATH},
    "atan2": (2, lambda a, t: a[0].is_float() and _same(a) and t == a[0]),
    "pow": (2, lambda a, t: a[0].is_float() and _same(a) and t == a[0]),
    "is_nan": (1, lambda a, t: a[0].is_float() and t.is_bool()),
    "abs": (1, lambda a, t: not a[0].is_bool() and t == _abs_type(a[0])),
    "absd": (2, lambda a, t: _same(a) and not a[0].is_bool() and t == _abs_type(a[0])),
    "lerp": (3, lambda a, t: a[0] == a[1] == t and (a[2].is_float() or a[2].is_uint())),
    "bitwise_and": (2, lambda a, t: _integer(a[0]) and _same(a) and t == a[0]),
    "bitwise_or": (2, lambda a, t: _integer(a[0]) and _same(a) and t == a[0]),
    "bitwise_xor": (2, lambda a, t: _integer(a[0]) and _same(a) and t == a[0]),
    "bitwise_not": (1, lambda a, t: _integer(a[0]) and t == a[0]),
    "shift_left": (2, lambda a, t: _integer(a[0]) and _integer(a[1]) and a[0].bits == a[1].bits and t == a[0]),
    "shift_right": (2, lambda a, t: _integer(a[0]) and _integer(a[1]) and a[0].bits == a[1].bits and t == a[0]),
}


# ---------------------------------------------------------------------------- encoding


@dataclass(frozen=True)
class Source:
    """How a stage reaches something it reads: through input `port`; `perm[j]` is the
    lifted dimension that is the node's dimension j (None: the same order)."""

    port: str
    perm: tuple[int, ...] | None = None

    def order(self, args: list[Any]) -> list[Any]:
        return list(args) if self.perm is None else [args[p] for p in self.perm]

    def node_dim(self, lifted_dim: int) -> int:
        return lifted_dim if self.perm is None else self.perm.index(lifted_dim)


class _Encoder:
    """One definition's expressions as a list of entries."""

    def __init__(self, stage: Any, funcs: dict[int, Source], params: dict[str, Source], images: dict[str, Source]):
        self.stage = stage
        self.funcs = funcs
        self.params = params
        self.images = images
        self.exprs: list[list[Any]] = []
        self.memo: dict[Any, int] = {}
        self.pure_vars: dict[str, int] = {}
        self.rdom: Any = None

    def add(self, entry: list[Any]) -> int:
        self.exprs.append(entry)
        return len(self.exprs) - 1

    def encode(self, e: E.Expr) -> int:
        key = e.key()  # structural: the lifter builds equal subexpressions apart
        if key not in self.memo:
            self.memo[key] = self.add(self._entry(e))
        return self.memo[key]

    def _entry(self, e: E.Expr) -> list[Any]:
        t = e.type()
        if isinstance(e, E.Const):
            return ["const", type_name(t), _number(e.value)]
        if isinstance(e, E.Variable):
            return self._variable(e)
        if isinstance(e, E.Cast):
            return ["cast", type_name(t), self.encode(e.value)]
        if type(e) in BINARY_NAMES:
            return [BINARY_NAMES[type(e)], self.encode(e.a), self.encode(e.b)]
        if isinstance(e, E.Not):
            return ["not", self.encode(e.a)]
        if isinstance(e, E.Select):
            return ["select", self.encode(e.cond), self.encode(e.true_value), self.encode(e.false_value)]
        if isinstance(e, E.Call):
            args = [self.encode(a) for a in e.args]
            if e.call_kind == "intrinsic":
                if e.name not in INTRINSICS:
                    raise ValueError(f"the operation `{e.name}` has no JSON form yet")
                return ["intrinsic", str(e.name), type_name(t), *args]
            if e.call_kind == "func" and e.target is self.stage:
                return ["self", *self._own_order(args)]
            if e.call_kind == "func" and id(e.target) in self.funcs:
                source = self.funcs[id(e.target)]
                return ["call", source.port, type_name(t), *source.order(args)]
            raise ValueError(f"the stage reads `{e.name}` directly; it must come through an input port")
        raise ValueError(f"the expression `{e}` ({type(e).__name__}) has no JSON form")

    def _own_order(self, args: list[Any]) -> list[Any]:
        own = self.funcs.get(id(self.stage))
        return own.order(args) if own is not None else args

    def _variable(self, v: E.Variable) -> list[Any]:
        if v.kind == "var":
            if v.name not in self.pure_vars:
                raise ValueError(f"variable `{v.name}` is not a dimension of the stage")
            return ["var", self.pure_vars[v.name]]
        if v.kind == "rvar":
            if self.rdom is None or getattr(v, "rdom", None) is not self.rdom:
                raise ValueError(f"reduction variable `{v.name}` is not of the update's RDom")
            return ["rvar", v.index]
        owner = v.owner
        if isinstance(owner, ImageParam):
            name, what, index = str(v.name).rsplit(".", 2)
            source = self.images.get(name)
            if source is None:
                raise ValueError(f"the stage reads the size of image `{name}`, which reaches it through no port")
            if what == "min":
                return ["const", "i32", 0]  # a document's inputs start at 0
            if what != "extent":
                raise ValueError(f"the stage reads `{v.name}`, which has no JSON form")
            return ["extent", source.port, source.node_dim(int(index))]
        if v.name not in self.params:
            raise ValueError(f"the stage reads parameter `{v.name}`, which reaches it through no port")
        return ["param", self.params[v.name].port, type_name(v.type())]


def _number(value: float | int) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def encode_stage(
    func: pw.Func,
    layout: str,
    extents: list[E.Expr],
    funcs: dict[int, Source],
    params: dict[str, Source],
    images: dict[str, Source],
    reads: dict[str, str],
) -> dict[str, Any]:
    """The JSON definition of `func`. funcs maps id(Func) to the port (and dimension order)
    of every Func it reads, and of itself when its dimensions are reordered; params and
    images map Param and image names to ports. ValueError when something has no JSON form."""
    own = funcs.get(id(func))
    pure = func.definition()
    if pure.extra_values:
        raise ValueError(f"Func `{func.name()}` has a Tuple of values")
    names = [str(a.name) for a in pure.args]
    if len(names) != LAYOUT_DIMS[layout]:
        raise ValueError(
            f"Func `{func.name()}` has {len(names)} dimensions, a {layout} value has {LAYOUT_DIMS[layout]}"
        )
    order = list(range(len(names))) if own is None or own.perm is None else list(own.perm)

    def encoder() -> _Encoder:
        enc = _Encoder(func, funcs, params, images)
        enc.pure_vars = {names[lifted]: node for node, lifted in enumerate(order)}
        return enc

    ext = _Encoder(func, funcs, params, images)
    extent_roots = [ext.encode(e) for e in extents]
    body = encoder()
    value = body.encode(pure.value)
    updates = []
    for u in func.updates():
        enc = encoder()
        enc.rdom = u.rdom
        rdom = [[enc.encode(lo), enc.encode(n)] for lo, n in (u.rdom.bounds if u.rdom is not None else [])]
        where = enc.encode(u.predicate) if u.predicate is not None else None
        args = [enc.encode(a) for a in u.args]
        args = [args[p] for p in order]
        update_value = enc.encode(u.value)
        updates.append({"exprs": enc.exprs, "rdom": rdom, "where": where, "args": args, "value": update_value})
    return {
        "type": type_name(func.type()),
        "layout": layout,
        "reads": dict(reads),
        "extents": {"exprs": ext.exprs, "roots": extent_roots},
        "pure": {"exprs": body.exprs, "value": value},
        "updates": updates,
    }


# ---------------------------------------------------------------------------- checking


class _Checker:
    """The types of one definition's entries, every fault raised as a ParameterError."""

    def __init__(self, where: str, dims: int, kind: str, own: Type | None, rdom_dims: int = 0) -> None:
        self.where = where
        self.dims = dims
        self.kind = kind  # pure | update | extents
        self.own = own
        self.rdom_dims = rdom_dims
        self.types: list[Type] = []

    def fail(self, index: int, why: str) -> ParameterError:
        return ParameterError(f"parameter `definition`: {self.where} entry {index}: {why}")

    def check(self, exprs: Any, ports: tuple[str, ...]) -> list[Type]:
        if not isinstance(exprs, list):
            raise ParameterError(f"parameter `definition`: {self.where} needs a list `exprs` of operations")
        for i, entry in enumerate(exprs):
            self.types.append(self._entry(i, entry, ports))
        return self.types

    def operand(self, i: int, ref: Any) -> Type:
        if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < i:
            raise self.fail(i, f"operand {ref!r} is not the index of an earlier entry")
        return self.types[ref]

    def _type(self, i: int, name: Any) -> Type:
        if not isinstance(name, str) or name not in TYPES:
            raise self.fail(i, f"unknown type {name!r} (types: {', '.join(TYPES)})")
        return TYPES[name]

    def _port(self, i: int, name: Any, ports: tuple[str, ...]) -> str:
        if name not in ports:
            raise self.fail(i, f"unknown input port {name!r} (ports: {', '.join(ports)})")
        return name

    def _index(self, i: int, k: Any, limit: int, what: str) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < limit:
            raise self.fail(i, f"{what} {k!r} is out of range (there are {limit})")
        return k

    def _entry(self, i: int, entry: Any, ports: tuple[str, ...]) -> Type:  # noqa: C901 - one case per operation
        if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
            raise self.fail(i, f"needs a list [OPERATION, ...], got {entry!r}")
        op, rest = entry[0], entry[1:]
        arity = {"const": 2, "var": 1, "rvar": 1, "param": 2, "extent": 2, "cast": 2, "not": 1, "select": 3}
        if op in BINARY:
            arity[op] = 2
        if op in arity and len(rest) != arity[op]:
            raise self.fail(i, f"`{op}` takes {arity[op]} operand(s), got {len(rest)}")
        if op == "const":
            t = self._type(i, rest[0])
            _const_value(t, rest[1], lambda why: self.fail(i, why))
            return t
        if op == "var":
            if self.kind == "extents":
                raise self.fail(i, "an extent cannot depend on the coordinates")
            self._index(i, rest[0], self.dims, "dimension")
            return pw.Int(32)
        if op == "rvar":
            if self.kind != "update":
                raise self.fail(i, "a reduction variable belongs in an update")
            self._index(i, rest[0], self.rdom_dims, "RDom dimension")
            return pw.Int(32)
        if op == "param":
            self._port(i, rest[0], ports)
            return self._type(i, rest[1])
        if op == "extent":
            self._port(i, rest[0], ports)
            self._index(i, rest[1], 3, "extent")
            return pw.Int(32)
        if op == "call":
            if self.kind == "extents":
                raise self.fail(i, "an extent cannot read an input's values")
            if len(rest) < 2:
                raise self.fail(i, "`call` needs a port and a type")
            self._port(i, rest[0], ports)
            t = self._type(i, rest[1])
            for a in rest[2:]:
                if self.operand(i, a) != pw.Int(32):
                    raise self.fail(i, "coordinates must be int32")
            return t
        if op == "self":
            if self.kind != "update" or self.own is None:
                raise self.fail(i, "only an update reads the stage's own value")
            if len(rest) != self.dims:
                raise self.fail(i, f"`self` takes {self.dims} coordinates, got {len(rest)}")
            for a in rest:
                if self.operand(i, a) != pw.Int(32):
                    raise self.fail(i, "coordinates must be int32")
            return self.own
        if op == "cast":
            t = self._type(i, rest[0])
            self.operand(i, rest[1])
            return t
        if op in BINARY:
            a, b = self.operand(i, rest[0]), self.operand(i, rest[1])
            if a != b:
                raise self.fail(i, f"`{op}` needs operands of one type, got {type_name(a)} and {type_name(b)}")
            if op in ("and", "or") and not a.is_bool():
                raise self.fail(i, f"`{op}` needs bool operands")
            return pw.Bool() if op in COMPARISONS else a
        if op == "not":
            if not self.operand(i, rest[0]).is_bool():
                raise self.fail(i, "`not` needs a bool operand")
            return pw.Bool()
        if op == "select":
            c, a, b = (self.operand(i, r) for r in rest)
            if not c.is_bool() or a != b:
                raise self.fail(i, "`select` needs a bool condition and two values of one type")
            return a
        if op == "intrinsic":
            if len(rest) < 2 or rest[0] not in INTRINSICS:
                known = ", ".join(sorted(INTRINSICS))
                raise self.fail(i, f"unknown intrinsic {rest[0] if rest else None!r} (known: {known})")
            name, t = rest[0], self._type(i, rest[1])
            count, fits = INTRINSICS[name]
            args = [self.operand(i, a) for a in rest[2:]]
            if len(args) != count or not fits(args, t):
                shown = ", ".join(type_name(a) for a in args)
                raise self.fail(i, f"`{name}` cannot take ({shown}) and give {type_name(t)}")
            return t
        raise self.fail(i, f"unknown operation {op!r}")


def _const_value(t: Type, value: Any, fail: Callable[[str], ParameterError]) -> float | int:
    if t.is_float():
        if value in ("nan", "inf", "-inf"):
            return float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(f"a {type_name(t)} constant needs a number, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"a {type_name(t)} constant needs an integer, got {value!r}")
    if t.is_bool():
        if value not in (0, 1):
            raise fail(f"a bool constant is 0 or 1, got {value}")
    elif not t.can_represent(value):
        raise fail(f"{value} does not fit {type_name(t)}")
    return value


def _root(where: str, ref: Any, types: list[Type]) -> Type:
    if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < len(types):
        raise ParameterError(f"parameter `definition`: {where} names entry {ref!r}, which does not exist")
    return types[ref]


def _keys(where: str, data: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    if not isinstance(data, dict):
        raise ParameterError(f"parameter `definition`: {where} needs an object, got {type(data).__name__}")
    missing = [k for k in required if k not in data]
    unknown = [k for k in data if k not in required + optional]
    if missing:
        raise ParameterError(f"parameter `definition`: {where} lacks {', '.join(map(repr, missing))}")
    if unknown:
        raise ParameterError(f"parameter `definition`: {where} has unknown key {unknown[0]!r}")


def check_definition(data: Any, ports: tuple[str, ...]) -> None:
    """ParameterError naming the first fault of a definition (structure, operations, types)."""
    _keys("the definition", data, ("type", "layout", "extents", "pure"), ("updates", "reads"))
    if data["type"] not in TYPES:
        raise ParameterError(f"parameter `definition`: unknown element type {data['type']!r}")
    own = TYPES[data["type"]]
    if data["layout"] not in LAYOUT_DIMS:
        raise ParameterError(
            f"parameter `definition`: unknown layout {data['layout']!r} (layouts: {', '.join(LAYOUT_DIMS)})"
        )
    dims = LAYOUT_DIMS[data["layout"]]
    reads = data.get("reads", {})
    if not isinstance(reads, dict) or any(k not in ports or not isinstance(v, str) for k, v in reads.items()):
        raise ParameterError("parameter `definition`: `reads` maps input ports to the names they carry")
    _keys("`extents`", data["extents"], ("exprs", "roots"))
    types = _Checker("extents", dims, "extents", None).check(data["extents"]["exprs"], ports)
    roots = data["extents"]["roots"]
    if not isinstance(roots, list) or len(roots) != dims:
        raise ParameterError(f"parameter `definition`: a {data['layout']} stage needs {dims} extents")
    for r in roots:
        if _root("an extent", r, types) != pw.Int(32):
            raise ParameterError("parameter `definition`: extents must be int32")
    _keys("`pure`", data["pure"], ("exprs", "value"))
    types = _Checker("the pure definition", dims, "pure", None).check(data["pure"]["exprs"], ports)
    if _root("the pure definition", data["pure"]["value"], types) != own:
        raise ParameterError(f"parameter `definition`: the pure definition's value is not {data['type']}")
    updates = data.get("updates", [])
    if not isinstance(updates, list):
        raise ParameterError("parameter `definition`: `updates` needs a list")
    for n, u in enumerate(updates):
        where = f"update {n}"
        _keys(where, u, ("exprs", "rdom", "args", "value"), ("where",))
        rdom = u["rdom"]
        if not isinstance(rdom, list) or any(not isinstance(r, list) or len(r) != 2 for r in rdom):
            raise ParameterError(f"parameter `definition`: {where} needs `rdom` as a list of [min, extent]")
        types = _Checker(where, dims, "update", own, len(rdom)).check(u["exprs"], ports)
        for r in (b for pair in rdom for b in pair):
            if _root(f"the RDom of {where}", r, types) != pw.Int(32):
                raise ParameterError(f"parameter `definition`: the RDom bounds of {where} must be int32")
        if u.get("where") is not None and not rdom:
            raise ParameterError(f"parameter `definition`: {where} has a `where` but no RDom to restrict")
        if u.get("where") is not None and not _root(f"{where}'s `where`", u["where"], types).is_bool():
            raise ParameterError(f"parameter `definition`: the `where` of {where} must be a bool")
        if not isinstance(u["args"], list) or len(u["args"]) != dims:
            raise ParameterError(f"parameter `definition`: {where} needs {dims} coordinates in `args`")
        for a in u["args"]:
            if _root(f"{where}'s args", a, types) != pw.Int(32):
                raise ParameterError(f"parameter `definition`: the coordinates of {where} must be int32")
        if _root(f"{where}'s value", u["value"], types) != own:
            raise ParameterError(f"parameter `definition`: the value of {where} is not {data['type']}")


# ---------------------------------------------------------------------------- building


class StageInputs:
    """What a definition's entries read, for decoding: the Values connected to the ports
    (duck-typed nodes.values.Value: func, layout, extents, type) and the stage's Vars."""

    def __init__(self, values: dict[str, Any], pure_vars: tuple[Any, ...], error: Callable[[str], Exception]) -> None:
        self.values = values
        self.pure_vars = pure_vars
        self.error = error

    def value(self, port: str) -> Any:
        v = self.values.get(port)
        if v is None:
            raise self.error(f"input `{port}` is not connected, but the definition reads it")
        return v

    def scalar(self, port: str, t: Type) -> E.Expr:
        """The scalar on a port: the Param or constant that defines it, inlined (as the lifted
        pipeline reads its Params), else a call of its Func."""
        v = self.value(port)
        if v.layout != "scalar":
            raise self.error(f"input `{port}` carries a {v.layout} value; the definition reads it as a scalar")
        f = v.func
        d = f.definition()
        inline = not f.updates() and not d.extra_values and not _has_call(d.value)
        e = d.value if inline else E.Expr(f[()])
        return e if e.type() == t else pw.cast(t, e)


def _has_call(e: E.Expr) -> bool:
    return isinstance(e, E.Call) or any(_has_call(c) for c in e.children())


def _closure(exprs: list[list[Any]], roots: list[int]) -> set[int]:
    """The entries the roots are computed from (themselves included)."""
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        entry = exprs[i]
        todo.extend(_operands(entry))
    return seen


def _operands(entry: list[Any]) -> list[int]:
    op, rest = entry[0], entry[1:]
    if op in ("const", "var", "rvar", "param", "extent"):
        return []
    if op in ("call", "intrinsic"):
        return list(rest[2:])
    if op == "cast":
        return [rest[1]]
    return list(rest)


def _decode(
    exprs: list[list[Any]],
    inputs: StageInputs,
    out: dict[int, E.Expr],
    only: set[int] | None = None,
    rvars: Any = None,
    own: pw.Func | None = None,
) -> dict[int, E.Expr]:
    """Engine expressions of checked entries (those in `only`, when given), added to out."""
    for i, entry in enumerate(exprs):
        if i in out or (only is not None and i not in only):
            continue
        out[i] = _decode_entry(entry, inputs, out, rvars, own)
    return out


def _decode_entry(
    entry: list[Any], inputs: StageInputs, out: dict[int, E.Expr], rvars: Any, own: pw.Func | None
) -> E.Expr:
    op, rest = entry[0], entry[1:]
    if op == "const":
        t = TYPES[rest[0]]
        return E.Const(t, float(rest[1]) if t.is_float() else int(rest[1]))
    if op == "var":
        return inputs.pure_vars[rest[0]]
    if op == "rvar":
        if rvars is None:
            raise inputs.error("an RDom's bounds use the RDom's own variables")
        return E.Expr(rvars[rest[0]])
    if op == "param":
        return inputs.scalar(rest[0], TYPES[rest[1]])
    if op == "extent":
        v = inputs.value(rest[0])
        if rest[1] >= len(v.extents):
            raise inputs.error(f"input `{rest[0]}` has {len(v.extents)} extents; the definition reads extent {rest[1]}")
        e = E.Expr(v.extents[rest[1]])
        return e if e.type() == pw.Int(32) else pw.cast(pw.Int(32), e)
    if op == "call":
        v = inputs.value(rest[0])
        args = tuple(out[a] for a in rest[2:])
        if len(args) != len(v.extents):
            raise inputs.error(
                f"input `{rest[0]}` carries a {v.layout} value ({len(v.extents)} coordinates); "
                f"the definition reads it at {len(args)}"
            )
        e = E.Expr(v.func[args] if args else v.func[()])
        t = TYPES[rest[1]]
        return e if e.type() == t else pw.cast(t, e)
    if op == "self":
        args = tuple(out[a] for a in rest)
        return E.Expr(own[args] if args else own[()])
    if op == "cast":
        return pw.cast(TYPES[rest[0]], out[rest[1]])
    if op in BINARY:
        return BINARY[op](out[rest[0]], out[rest[1]])
    if op == "not":
        return E.Not(out[rest[0]])
    if op == "select":
        return E.Select(out[rest[0]], out[rest[1]], out[rest[2]])
    return E.Call(TYPES[rest[1]], rest[0], tuple(out[a] for a in rest[2:]), "intrinsic")


def build_stage(data: dict[str, Any], func: pw.Func, inputs: StageInputs) -> tuple[str, list[E.Expr]]:
    """Defines func from a checked definition; (layout, extents)."""
    ext = _decode(data["extents"]["exprs"], inputs, {})
    extents = [ext[r] for r in data["extents"]["roots"]]
    pure = _decode(data["pure"]["exprs"], inputs, {})
    args = tuple(inputs.pure_vars)
    func[args if args else ()] = pure[data["pure"]["value"]]
    for u in data.get("updates", []):
        exprs = u["exprs"]
        out: dict[int, E.Expr] = {}
        r = None
        if u["rdom"]:
            # the RDom's bounds first (they cannot use its variables), then the rest
            bounds = _closure(exprs, [b for pair in u["rdom"] for b in pair])
            _decode(exprs, inputs, out, bounds, None, func)
            r = pw.RDom([(out[lo], out[n]) for lo, n in u["rdom"]])
        _decode(exprs, inputs, out, None, r, func)
        if r is not None and u.get("where") is not None:
            r.where(out[u["where"]])
        lhs = tuple(out[a] for a in u["args"])
        func[lhs if lhs else ()] = out[u["value"]]
    return data["layout"], extents
