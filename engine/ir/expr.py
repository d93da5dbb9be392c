"""Immutable expression nodes of the algorithm language, and Python operator overloading.

Every node carries its element type. Nodes compare structurally through `key()`; Python's
`==` builds an EQ expression instead, as in Halide, so nodes hash by identity.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections.abc import Hashable
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.callable_fields import CallableStr
from pixelweave.engine.ir.types import Bool, Float, Int, Type


class _Key:
    """A structural key: the one object for each structure among live keys.

    `parts` is (node class, type, fields, children's keys). Equal structures share one key
    object (see _interned), so keys compare and hash by identity, in C: a dictionary lookup
    or a comparison costs the same for a deep expression as for a leaf, where a nested
    tuple compares (and hashes) its whole tree, which is exponential in depth for the DAGs
    bounds make. The repr is the structure's, as the nested tuple's was."""

    __slots__ = ("__weakref__", "parts")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts

    def __repr__(self) -> str:
        return repr(self.parts)

    def __reduce__(self) -> tuple:
        return (_interned, (self.parts,))  # unpickled or copied: the live key of that structure


# Live keys by their parts. Weak, so the table holds only keys some expression (or cache)
# still holds, and needs no size limit: every live key stays in it, which is what makes
# identity equal to structural equality. The lock orders inserting and forgetting (the
# editor lowers on two threads); looking up a live key takes no lock.
_keys: dict[tuple, weakref.ref] = {}
_keys_lock = threading.RLock()


def _interned(parts: tuple) -> _Key:
    """The live key of this structure, made if there is none."""
    ref = _keys.get(parts)
    if ref is not None:
        key = ref()
        if key is not None:
            return key
    key = _Key(parts)
    # The callback knows the parts its key was filed under (the key is gone when it runs);
    # a partial of a plain weakref costs a third of a weakref subclass with a Python __init__.
    new_ref = weakref.ref(key, functools.partial(_forget, parts))
    with _keys_lock:
        ref = _keys.setdefault(parts, new_ref)
        if ref is not new_ref:
            live = ref()
            if live is not None:
                return live  # made meanwhile by another thread
            _keys[parts] = new_ref  # the entry of a dead key, not yet forgotten
    return key


def _forget(parts: tuple, ref: weakref.ref) -> None:
    """A key died: drop its entry (unless a newer key of the same structure replaced it)."""
    with _keys_lock:
        if _keys.get(parts) is ref:
            del _keys[parts]


def live_key_count() -> int:
    """How many structural keys are alive (the table's size; tests watch it shrink)."""
    return len(_keys)


class ExprMeta(type):
    """Lets `Expr(value)` build an expression as Halide's `Expr` constructor does (a Python
    number becomes a literal, a Var, Param, RDom or FuncRef its expression), while every
    node class keeps its own constructor and `isinstance(e, Expr)` holds for all of them."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Expr:
            if len(args) != 1 or kwargs:
                raise CompileError("Expr(value) takes exactly one value: a number, a Var, a Param or an Expr")
            from pixelweave.engine.ir.coerce import to_expr

            return to_expr(args[0])
        return super().__call__(*args, **kwargs)

    def __new__(mcls, name: str, bases: tuple, namespace: dict) -> type:
        # Node classes get NodeMeta, whose construction is type's own (no Python-level call
        # per node: building expressions is on the compiler's hot path).
        if bases and mcls is ExprMeta:
            mcls = NodeMeta
        return super().__new__(mcls, name, bases, namespace)


class NodeMeta(ExprMeta):
    """The metaclass of every Expr subclass: plain construction."""

    __call__ = type.__call__


class Expr(metaclass=ExprMeta):
    """Base class of all expression nodes."""

    __slots__ = ("_key", "_type")
    __hash__ = object.__hash__

    def defined(self) -> bool:
        """Always True: an Expr object always holds an expression (Halide's `Expr.defined`)."""
        return True

    def type(self) -> Type:
        return self._type

    def children(self) -> tuple[Expr, ...]:
        return ()

    def _fields(self) -> tuple:
        return ()

    def key(self) -> Hashable:
        """A hashable structural identity: equal keys mean equal expressions."""
        try:
            return self._key
        except AttributeError:
            k = _interned((type(self).__name__, self._type, *self._fields(), *[c.key() for c in self.children()]))
            object.__setattr__(self, "_key", k)
            return k

    def same_as(self, other: Expr) -> bool:
        return self is other or self.key() is other.key()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("expressions are immutable")

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __bool__(self) -> bool:
        raise CompileError(
            f"the expression {self} has no truth value while the pipeline is being defined: "
            "use select(c, a, b) instead of if/else, and & | ~ instead of and/or/not"
        )

    def __repr__(self) -> str:
        return f"<engine.Expr of type {self.type()}: {self}>"

    def __str__(self) -> str:
        from pixelweave.engine.ir.printer import expr_to_string

        return expr_to_string(self)

    # Arithmetic and comparison operators are attached below, from ops.py.


class Const(Expr):
    """A literal of a given type (int, uint, bool or float)."""

    __slots__ = ("value",)

    def __init__(self, t: Type, value: int | float) -> None:
        if t.is_float():
            value = float(value)
        elif t.is_bool():
            value = int(bool(value))
        else:
            value = int(value)
        self._init(_type=t, value=value)

    def _fields(self) -> tuple:
        if isinstance(self.value, float) and self.value == 0.0:
            # 0.0 == -0.0 in Python; the sign is part of the constant (1 / x tells them apart).
            return (self.value, math.copysign(1.0, self.value))
        return (self.value,)


class Variable(Expr):
    """A named scalar: a pure Var, a reduction variable, or a run-time parameter.

    kind is 'var', 'rvar' or 'param'. Parameters may carry an `owner` (a Param, or the
    ImageParam whose dimension they describe).
    """

    __slots__ = ("kind", "name", "owner")

    def __init__(self, name: str, t: Type | None = None, kind: str = "var", owner: Any = None) -> None:
        self._init(_type=t if t is not None else Int(32), name=CallableStr(name), kind=kind, owner=owner)

    def _fields(self) -> tuple:
        return (self.name, self.kind)


class Cast(Expr):
    __slots__ = ("value",)

    def __init__(self, t: Type, value: Expr) -> None:
        self._init(_type=t, value=value)

    def children(self) -> tuple[Expr, ...]:
        return (self.value,)


class BinaryOp(Expr):
    """Two operands of one type; the result has that type (comparisons: bool)."""

    __slots__ = ("a", "b")
    symbol = "?"
    _compares = False  # whether result_type is not the operands' type

    def __init__(self, a: Expr, b: Expr) -> None:
        t = a._type
        assert t == b._type, (self.symbol, t, b._type)
        # Slot setters called directly: building nodes is the simplifier's hot path.
        _set_type(self, self.result_type(t) if self._compares else t)
        _set_a(self, a)
        _set_b(self, b)

    @staticmethod
    def result_type(t: Type) -> Type:
        return t

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)

    def key(self) -> Hashable:
        """Expr.key without its generic field and child gathering: binary operators are
        most of the nodes whose keys lowering asks for (the parts are the same tuple)."""
        try:
            return self._key
        except AttributeError:
            k = _interned((type(self).__name__, self._type, self.a.key(), self.b.key()))
            _set_key(self, k)
            return k


_set_type = Expr._type.__set__  # type: ignore[attr-defined]
_set_key = Expr._key.__set__  # type: ignore[attr-defined]
_set_a = BinaryOp.a.__set__  # type: ignore[attr-defined]
_set_b = BinaryOp.b.__set__  # type: ignore[attr-defined]


class Add(BinaryOp):
    __slots__ = ()
    symbol = "+"


class Sub(BinaryOp):
    __slots__ = ()
    symbol = "-"


class Mul(BinaryOp):
    __slots__ = ()
    symbol = "*"


class Div(BinaryOp):
    """Division: Euclidean for integers (remainder never negative), x / 0 == 0."""

    __slots__ = ()
    symbol = "/"


class Mod(BinaryOp):
    """Remainder: Euclidean for integers, x % 0 == 0; a - b*floor(a/b) for floats."""

    __slots__ = ()
    symbol = "%"


class Min(BinaryOp):
    __slots__ = ()
    symbol = "min"


class Max(BinaryOp):
    __slots__ = ()
    symbol = "max"


class Compare(BinaryOp):
    __slots__ = ()
    _compares = True

    @staticmethod
    def result_type(t: Type) -> Type:
        return Bool().with_lanes(t.lanes)


class EQ(Compare):
    __slots__ = ()
    symbol = "=="


class NE(Compare):
    __slots__ = ()
    symbol = "!="


class LT(Compare):
    __slots__ = ()
    symbol = "<"


class LE(Compare):
    __slots__ = ()
    symbol = "<="


class GT(Compare):
    __slots__ = ()
    symbol = ">"


class GE(Compare):
    __slots__ = ()
    symbol = ">="


class And(BinaryOp):
    __slots__ = ()
    symbol = "&&"


class Or(BinaryOp):
    __slots__ = ()
    symbol = "||"


class Not(Expr):
    __slots__ = ("a",)

    def __init__(self, a: Expr) -> None:
        self._init(_type=Bool().with_lanes(a.type().lanes), a=a)

    def children(self) -> tuple[Expr, ...]:
        return (self.a,)


class Select(Expr):
    __slots__ = ("cond", "false_value", "true_value")

    def __init__(self, cond: Expr, true_value: Expr, false_value: Expr) -> None:
        assert true_value.type() == false_value.type()
        self._init(_type=true_value.type(), cond=cond, true_value=true_value, false_value=false_value)

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.true_value, self.false_value)


class Let(Expr):
    """`let name = value in body`: introduced by lowering to share subexpressions."""

    __slots__ = ("body", "name", "value")

    def __init__(self, name: str, value: Expr, body: Expr) -> None:
        self._init(_type=body.type(), name=name, value=value, body=body)

    def _fields(self) -> tuple:
        return (self.name,)

    def children(self) -> tuple[Expr, ...]:
        return (self.value, self.body)


class Call(Expr):
    """A call: of a Func ('func'), an input image ('image') or a built-in function ('intrinsic').

    For 'func' and 'image' calls `target` is the Func or ImageParam and args are coordinates;
    value_index picks one element of a Func with a Tuple of values (Halide's Call::value_index).
    """

    __slots__ = ("args", "call_kind", "name", "target", "value_index")

    def __init__(
        self, t: Type, name: str, args: tuple[Expr, ...], call_kind: str, target: Any = None, value_index: int = 0
    ) -> None:
        self._init(_type=t, name=name, args=tuple(args), call_kind=call_kind, target=target, value_index=value_index)

    def _fields(self) -> tuple:
        return (self.name, self.call_kind, self.value_index)

    def children(self) -> tuple[Expr, ...]:
        return self.args


def make_const(t: Type, value: int | float) -> Const:
    return Const(t, value)


def int_const(value: int) -> Const:
    return Const(Int(32), value)


def float_const(value: float) -> Const:
    return Const(Float(32), value)


def is_const(e: Expr, value: int | float | None = None) -> bool:
    return isinstance(e, Const) and (value is None or e.value == value)
