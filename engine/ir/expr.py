"""Immutable expression nodes of the algorithm language, and Python operator overloading.

Every node carries its element type. Nodes compare structurally through `key()`; Python's
`==` builds an EQ expression instead, as in Halide, so nodes hash by identity.
"""

from __future__ import annotations

import math
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir.callable_fields import CallableStr
from pixelweave.engine.ir.types import Bool, Float, Int, Type


class _Key(tuple):
    """A structural key that remembers its hash: keys nest, and a plain tuple rehashes the
    whole tree on every dictionary lookup (quadratic time on deep expressions)."""

    def __hash__(self) -> int:
        try:
            return self.__dict__["hash"]
        except KeyError:
            h = self.__dict__["hash"] = tuple.__hash__(self)
            return h


# Equal keys are one object: comparing two keys then stops at their children's identity.
# Without it, comparing equal expressions built apart walks them as trees, which is
# exponential in depth for DAGs (bounds share their lets' values many times over).
_interned_keys: dict[_Key, _Key] = {}
INTERNED_KEYS_LIMIT = 400_000


def _intern(key: _Key) -> _Key:
    """The one key object equal to key (forgets all when the table is full; keys made
    before stay correct, only slower to compare)."""
    if len(_interned_keys) > INTERNED_KEYS_LIMIT:
        _interned_keys.clear()
    return _interned_keys.setdefault(key, key)


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

    def key(self) -> tuple:
        """A hashable structural identity: equal keys mean equal expressions."""
        try:
            return self._key
        except AttributeError:
            k = _Key((type(self).__name__, self._type, *self._fields(), *[c.key() for c in self.children()]))
            k = _intern(k)
            object.__setattr__(self, "_key", k)
            return k

    def same_as(self, other: Expr) -> bool:
        return self is other or self.key() == other.key()

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


_set_type = Expr._type.__set__  # type: ignore[attr-defined]
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
