"""Func: a pure definition over Vars plus optional update definitions (Halide's Func)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir import ops
from pixelweave.engine.ir.coerce import cast, is_python_number, literal_of_type, to_expr
from pixelweave.engine.ir.implicit import expand_call_args, expand_definition_args
from pixelweave.engine.ir.ops import attach_operators
from pixelweave.engine.ir.tuple import tuple_values
from pixelweave.engine.ir.types import Int, Type
from pixelweave.engine.ir.var import RDom, Var
from pixelweave.engine.ir.visit import find_calls, find_variables, walk
from pixelweave.engine.schedule import FuncScheduling

_func_counter = itertools.count()
_name_prefixes = threading.local()


@contextlib.contextmanager
def func_name_prefix(prefix: str) -> Iterator[None]:
    """Funcs made in this thread inside the block are named `prefix + name`: a generator
    built as a node of a document gets its node's id in every Func name, so that two nodes
    of one generator do not make two Funcs of one name."""
    stack = _name_prefixes.__dict__.setdefault("stack", [])
    stack.append(prefix)
    try:
        yield
    finally:
        stack.pop()


def _prefixed(name: str) -> str:
    stack = _name_prefixes.__dict__.get("stack")
    return stack[-1] + name if stack else name


def normalize_call_args(args: Any, who: str) -> tuple[E.Expr, ...]:
    """Coordinates of a call as int32 Exprs; a float coordinate is an error."""
    if not isinstance(args, tuple):
        args = (args,)
    coords = []
    for i, a in enumerate(args):
        if isinstance(a, RDom) and a.dimensions() > 1:
            coords.extend(a.vars)
            continue
        e = to_expr(a)
        if e.type().is_float():
            raise CompileError(
                f"{who} is called with a {e.type()} coordinate in argument {i} ({e}); coordinates "
                "must be integers: use an explicit cast such as i32(...)"
            )
        coords.append(cast(Int(32), e))
    return tuple(coords)


@dataclass
class Definition:
    """One definition of a Func: `func[args] = value`, over an RDom for reductions."""

    args: tuple[E.Expr, ...]
    value: E.Expr
    rdom: RDom | None = None
    predicate: E.Expr | None = None
    schedule: Any = None
    pure_vars: tuple[str, ...] = field(default=())
    extra_values: tuple[E.Expr, ...] = field(default=())  # values 1.. of a Func with a Tuple of values

    def all_values(self) -> tuple[E.Expr, ...]:
        """Every value this definition stores, in Tuple order (one for a plain Func)."""
        return (self.value, *self.extra_values)


class Func(FuncScheduling):
    """A function over an integer domain, defined by `f[x, y] = expr` (Halide's Func)."""

    def __init__(self, name: str | None = None) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise CompileError(f"a Func name must be a non-empty string, got {name!r}")
        self._name = _prefixed(name if name is not None else f"f{next(_func_counter)}")
        self._pure: Definition | None = None
        self._updates: list[Definition] = []
        self._frozen_by: str | None = None
        self._schedule_state: Any = None
        self._estimates: dict[str, tuple[int, int]] = {}
        self._output_buffer: Any = None
        self._traced: set[str] = set()
        self.wrapping: Any = None  # engine.wrappers.Wrappers: the wrappers and clones made of this Func
        self.wrapper_of: Any = None  # engine.wrappers.Origin, for a wrapper or clone

    # ------------------------------------------------------------------ introspection
    def name(self) -> str:
        return self._name

    def defined(self) -> bool:
        return self._pure is not None

    def _require_defined(self) -> Definition:
        if self._pure is None:
            raise CompileError(f"Func `{self._name}` has no definition")
        return self._pure

    def dimensions(self) -> int:
        return len(self._require_defined().args)

    def args(self) -> list[Var]:
        return list(self._require_defined().args)

    def type(self) -> Type:
        d = self._require_defined()
        if d.extra_values:
            raise CompileError(f"Can't call Func::type on Func `{self._name}` because it returns a Tuple; use types()")
        return d.value.type()

    output_type = type

    def types(self) -> list[Type]:
        """The type of each value (one for a Func that does not return a Tuple)."""
        return [v.type() for v in self._require_defined().all_values()]

    output_types = types

    def outputs(self) -> int:
        """How many values the Func has at each point (more than one: a Tuple)."""
        return len(self._require_defined().all_values())

    def value(self) -> E.Expr:
        return self._require_defined().value

    def definition(self) -> Definition:
        return self._require_defined()

    def updates(self) -> list[Definition]:
        return list(self._updates)

    def num_update_definitions(self) -> int:
        return len(self._updates)

    def has_update_definition(self) -> bool:
        return bool(self._updates)

    def update_args(self, i: int = 0) -> list[E.Expr]:
        return list(self._updates[i].args)

    def update_value(self, i: int = 0) -> E.Expr:
        return self._updates[i].value

    def __repr__(self) -> str:
        return f"<engine.Func {self._name}>"

    # ------------------------------------------------------------------ realizing (Halide's JIT API)
    def realize(self, sizes: Any = None, target: Any = "host") -> Any:
        """Compute this Func over [0, sizes) and return a `Buffer`, or fill the `Buffer`(s)
        given (over their mins), as Halide's `Func.realize`. Inputs come from
        `ImageParam.set` and `Param.set`."""
        from pixelweave.engine.pipeline import Pipeline

        return Pipeline(self).realize_buffers(sizes if sizes is not None else [], target or "host")

    def infer_input_bounds(self, sizes: Any = None, target: Any = "host") -> None:
        """Give every ImageParam without a buffer one that covers what realizing over sizes
        reads (zero-filled, with the mins it needs), as Halide's `infer_input_bounds`."""
        from pixelweave.engine.pipeline import Pipeline

        Pipeline(self).infer_input_bounds(sizes if sizes is not None else [])

    def compile_to_lowered_stmt(
        self, filename: str, arguments: Any = None, fmt: Any = "text", target: Any = "host"
    ) -> None:
        """Write the lowered statement of the pipeline computing this Func (text or HTML)."""
        from pixelweave.engine.pipeline import Pipeline

        Pipeline(self).compile_to_lowered_stmt(filename, arguments, fmt, target)

    # Halide's ahead-of-time outputs, for the pipeline computing this Func (see Pipeline).
    def compile_to_object(self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host") -> None:
        self._pipeline().compile_to_object(filename, arguments, fn_name, target)

    def compile_to_header(self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host") -> None:
        self._pipeline().compile_to_header(filename, arguments, fn_name, target)

    def compile_to_static_library(
        self, filename_prefix: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        self._pipeline().compile_to_static_library(filename_prefix, arguments, fn_name, target)

    def compile_to_assembly(
        self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        self._pipeline().compile_to_assembly(filename, arguments, fn_name, target)

    def compile_to_llvm_assembly(
        self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        self._pipeline().compile_to_llvm_assembly(filename, arguments, fn_name, target)

    def compile_to_callable(self, arguments: Any = None, target: Any = "host") -> Any:
        return self._pipeline().compile_to_callable(arguments, target)

    def _pipeline(self) -> Any:
        from pixelweave.engine.pipeline import Pipeline

        return Pipeline(self)

    def output_buffer(self) -> Any:
        """Constraints on the buffer this Func is realized into (Halide's OutputImageParam)."""
        from pixelweave.engine.ir.output_buffer import OutputBuffer

        if self._output_buffer is None:
            self._require_defined()
            self._output_buffer = OutputBuffer(self)
        return self._output_buffer

    # ------------------------------------------------------------------ tracing (engine/tracing.py)
    def trace_loads(self) -> Func:
        """Report every load of this Func's values as a trace event (Halide's trace_loads)."""
        self._traced.add("loads")
        return self

    def trace_stores(self) -> Func:
        """Report every value this Func stores as a trace event (Halide's trace_stores)."""
        self._traced.add("stores")
        return self

    def trace_realizations(self) -> Func:
        """Report the beginning and end of each realization of this Func, with its bounds."""
        self._traced.add("realizations")
        return self

    def stop_tracing(self) -> Func:
        """Trace nothing of this Func any more (undoes trace_loads/stores/realizations)."""
        self._traced.clear()
        return self

    def traced(self) -> frozenset[str]:
        """What is traced: a subset of {"loads", "stores", "realizations"}."""
        return frozenset(self._traced)

    def output_constraints(self) -> Any:
        """The OutputBuffer of `output_buffer()`, or None if it was never asked for."""
        return self._output_buffer

    # ------------------------------------------------------------------ size estimates
    def set_estimate(self, var: Any, min: int, extent: int) -> Func:  # noqa: A002 - Halide's keyword
        """Expected range of dimension `var` (for an output: the size it is usually
        realized at), read by the automatic scheduler; it does not change what is computed."""
        name = var.name if isinstance(var, E.Variable) else var
        pure = [a.name for a in self.args()]
        if name not in pure:
            raise CompileError(
                f"Func `{self._name}` has no dimension {name} to estimate; its dimensions are {', '.join(pure)}"
            )
        self._estimates[name] = check_estimate(f"Func `{self._name}`, dimension {name}", min, extent)
        return self

    def set_estimates(self, ranges: list[tuple[int, int]]) -> Func:
        """set_estimate for every dimension at once: one (min, extent) per dimension."""
        pure = self.args()
        if len(ranges) != len(pure):
            raise CompileError(
                f"set_estimates of Func `{self._name}` needs {len(pure)} (min, extent) pairs, got {len(ranges)}"
            )
        for v, (lo, extent) in zip(pure, ranges, strict=True):
            self.set_estimate(v, lo, extent)
        return self

    def estimates(self) -> dict[str, tuple[int, int]]:
        """The (min, extent) estimate of each dimension given so far, by Var name."""
        return dict(self._estimates)

    # ------------------------------------------------------------------ definitions
    def __getitem__(self, args: Any) -> FuncRef:
        return FuncRef(self, args)

    def __setitem__(self, args: Any, value: Any) -> None:
        if not isinstance(args, tuple):
            args = (args,)
        if self._pure is None:
            self._define_pure(args, value)
        else:
            self._define_update(args, value)

    def _define_pure(self, args: tuple, value: Any) -> None:
        values = tuple_values(value)
        exprs = [to_expr(v) for v in (values if values is not None else [value])]
        if not exprs:
            raise CompileError(f"the pure definition of Func `{self._name}` is an empty Tuple")
        args = expand_definition_args(args, exprs, f"the definition of Func `{self._name}`")
        names = []
        for i, a in enumerate(args):
            if not isinstance(a, Var):
                raise CompileError(
                    f"the pure definition of Func `{self._name}` must have Vars as arguments, but "
                    f"argument {i} is {a}; an update definition needs a pure definition first"
                )
            if a.name in names:
                raise CompileError(f"Var {a.name} appears twice in the pure definition of Func `{self._name}`")
            names.append(a.name)
        where = f"the pure definition of Func `{self._name}`"
        for e in exprs:
            for v in find_variables(e):
                if v.kind == "var" and v.name not in names:
                    raise CompileError(f"undefined variable {v.name} in {where}: it is not one of its arguments")
                if v.kind == "rvar":
                    raise CompileError(
                        f"{where} uses reduction variable {v.name}; reductions over an RDom belong in an update "
                        "definition"
                    )
            _freeze_callees(e, self)
        self._pure = Definition(tuple(args), exprs[0], pure_vars=tuple(names), extra_values=tuple(exprs[1:]))

    def _define_update(self, args: tuple, value: Any) -> None:
        index = len(self._updates)
        where = f"update definition {index} of Func `{self._name}`"
        if self._frozen_by is not None:
            raise CompileError(
                f"Func `{self._name}` cannot be given a new update definition, because it has already "
                f"been {self._frozen_by}"
            )
        pure = self._pure
        assert pure is not None
        values = tuple_values(value)
        pure_values = pure.all_values()
        if values is None:
            values = [value]
        if len(values) != len(pure_values):
            raise CompileError(
                f"{where} has {len(values)} value{'s' if len(values) != 1 else ''}, but the pure definition has "
                f"{len(pure_values)}: every definition of a Func gives the same number of values"
            )
        exprs = []
        for i, (v, p) in enumerate(zip(values, pure_values, strict=True)):
            e = literal_of_type(v, p.type(), f" in {where}") if is_python_number(v) else to_expr(v)
            if e.type() != p.type():
                element = f" (Tuple element {i})" if len(pure_values) > 1 else ""
                raise CompileError(
                    f"in {where}: the value{element} has type {e.type()}, but the pure definition has type "
                    f"{p.type()}; use an explicit cast"
                )
            exprs.append(e)
        args = expand_definition_args(args, exprs, where)
        coords = normalize_call_args(args, f"the left-hand side of {where}")
        if len(coords) != len(pure.args):
            raise CompileError(
                f"{where} has {len(coords)} argument{'s' if len(coords) != 1 else ''}, but the pure "
                f"definition has {len(pure.args)}"
            )
        pure_vars = []
        for c in coords:
            if isinstance(c, Var):
                if c.name in pure_vars:
                    raise CompileError(f"Var {c.name} appears twice on the left-hand side of {where}")
                pure_vars.append(c.name)
        rdoms: dict[int, RDom] = {}
        for part in (*coords, *exprs):
            for v in find_variables(part):
                if v.kind == "var" and v.name not in pure_vars:
                    raise CompileError(
                        f"undefined variable {v.name} in {where}: a Var used there must appear by "
                        "itself as an argument on the left-hand side"
                    )
                if v.kind == "rvar":
                    rdoms[id(v.rdom)] = v.rdom
        if len(rdoms) > 1:
            names = ", ".join(r.name for r in rdoms.values())
            raise CompileError(f"{where} uses more than one RDom ({names}); combine them into one RDom")
        for call in (c for e in exprs for c in find_calls(e)):
            if call.call_kind == "func" and call.target is self:
                for i, (lhs, arg) in enumerate(zip(coords, call.args, strict=True)):
                    if isinstance(lhs, Var) and not (isinstance(arg, E.Variable) and arg.name == lhs.name):
                        raise CompileError(
                            f"in {where}: all of a Func's references to itself must use the same pure "
                            f"variables in the same places as the left-hand side, but argument {i} is "
                            f"{arg} where the left-hand side has {lhs.name}"
                        )
        rdom = next(iter(rdoms.values()), None)
        for part in (*exprs, *coords):
            _freeze_callees(part, self)
        self._updates.append(
            Definition(
                coords,
                exprs[0],
                rdom,
                rdom.predicate() if rdom is not None else None,
                pure_vars=tuple(pure_vars),
                extra_values=tuple(exprs[1:]),
            )
        )

    def in_(self, consumers: Any = None) -> Func:
        """Halide's Func.in: a wrapper Func `w[args] = self[args]` that the given consumers
        (every consumer when none is given) call instead of this Func, to be scheduled on its own."""
        from pixelweave.engine.wrappers import wrap_in

        return wrap_in(self, consumers)

    def clone_in(self, consumers: Any) -> Func:
        """Halide's Func.clone_in: a copy of this Func, definitions and schedule, that the given
        consumers call instead of it, so they can compute it another way."""
        from pixelweave.engine.wrappers import clone_in

        return clone_in(self, consumers)

    def freeze_definitions(self, reason: str) -> None:
        """Refuse further update definitions, saying why (wrappers are fixed copies)."""
        self._frozen_by = reason

    def adopt_definitions(self, pure: Definition, updates: list[Definition]) -> None:
        """Take ready-made definitions (a clone takes copies of its original's)."""
        if self._pure is not None:
            raise CompileError(f"Func `{self._name}` is already defined")
        for d in (pure, *updates):
            for part in (*d.all_values(), *d.args):
                _freeze_callees(part, self)
        self._pure = pure
        self._updates = list(updates)

    def replace_update(self, i: int, definition: Definition) -> None:
        """Put `definition` in place of update i: rfactor rewrites a reduction this way."""
        for part in (*definition.all_values(), *definition.args):
            _freeze_callees(part, self)
        self._updates[i] = definition

    def _implicit_pure(self, nargs: int, t: Type, identity: int) -> None:
        """`f[args] += e` on an undefined Func first defines f as the identity over new Vars."""
        implicit = tuple(Var(f"{self._name}_{i}") for i in range(nargs))
        self._pure = Definition(implicit, E.Const(t, identity), pure_vars=tuple(v.name for v in implicit))


def check_estimate(what: str, lo: Any, extent: Any) -> tuple[int, int]:
    """(min, extent) as ints, or CompileError: estimates are plain integers, extent positive."""
    for label, v in (("min", lo), ("extent", extent)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise CompileError(f"the estimated {label} of {what} must be an int, got {v!r}")
    if extent < 1:
        raise CompileError(f"the estimated extent of {what} must be positive, got {extent}")
    return lo, extent


def _freeze_callees(e: E.Expr, consumer: Func) -> None:
    for node in walk(e):
        callee = node.target if isinstance(node, E.Call) and node.call_kind == "func" else None
        if callee is not None and callee is not consumer and callee._frozen_by is None:
            node.target._frozen_by = f"used in the definition of Func `{consumer.name()}`"


class FuncRef:
    """`f[args]`: a call of f when read, a definition target when assigned or updated."""

    def __init__(self, func: Func, args: Any) -> None:
        self.func = func
        self.raw_args = args if isinstance(args, tuple) else (args,)
        self._expr: E.Expr | None = None

    def _as_expr(self) -> E.Expr:
        if self._expr is not None:
            return self._expr
        if self.is_tuple():
            raise CompileError(
                f"Can't convert a reference to Func `{self.func.name()}` to an Expr, because it returns a Tuple "
                f"of {self.func.outputs()} values; pick one with [i]"
            )
        self._expr = self._element(0)
        return self._expr

    def is_tuple(self) -> bool:
        """Whether the Func referred to has a Tuple of values."""
        return self.func._pure is not None and bool(self.func._pure.extra_values)

    def elements(self) -> list[E.Expr]:
        """A call of each value of the Func at these coordinates."""
        return [self._element(i) for i in range(self.func.outputs())]

    def __getitem__(self, i: Any) -> E.Expr:
        """`f[x, y][i]`: value i of a Func that returns a Tuple."""
        f = self.func
        if not self.is_tuple():
            raise CompileError(f"Can't index into a reference to Func `{f.name()}`, because it does not return a Tuple")
        n = f.outputs()
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            raise CompileError(f"Tuple index {i!r} of Func `{f.name()}` is out of range: it has {n} values")
        return self._element(i)

    def _element(self, index: int) -> E.Expr:
        f = self.func
        if f._pure is None:
            raise CompileError(
                f"can't call Func `{f.name()}` because it has not yet been defined: define it before "
                "using it (and a Func cannot refer to itself in its pure definition: recursion needs "
                "an update definition over an RDom)"
            )
        n = len(f._pure.args)
        raw = expand_call_args(self.raw_args, n, f"Func `{f.name()}`")
        coords = normalize_call_args(raw, f"Func `{f.name()}`")
        if len(coords) != n:
            names = ", ".join(v.name for v in f._pure.args)
            raise CompileError(
                f"Func `{f.name()}` is called with {len(coords)} argument{'s' if len(coords) != 1 else ''}, "
                f"but was defined with {n} ({names})"
            )
        return E.Call(f._pure.all_values()[index].type(), f.name(), coords, "func", f, index)

    def type(self) -> Type:
        return self._as_expr().type()

    def _update(self, combine, identity: int, rhs: Any) -> E.Expr:
        """`f[args] += e` is Python's `f[args] = f[args].__iadd__(e)`: return the combined
        value, and the assignment makes it an update. As in Halide, `ref = f[x]; ref += e`
        makes `ref` the expression `f(x) + e` and leaves f alone. An undefined f is first
        defined as the identity of the operation."""
        f = self.func
        if self.is_tuple() or tuple_values(rhs) is not None:
            raise CompileError(
                f"an update such as += of Func `{f.name()}` needs a single value; for a Func that returns a Tuple "
                "write each element: f[x] = (f[x][0] + a, f[x][1] + b)"
            )
        if f._pure is None:
            t = to_expr(rhs).type()
            f._implicit_pure(len(normalize_call_args(self.raw_args, f"Func `{f.name()}`")), t, identity)
        if is_python_number(rhs):
            rhs = literal_of_type(rhs, f.type(), f" in an update of Func `{f.name()}`")
        else:
            rhs = cast(f.type(), to_expr(rhs))
        return combine(self._as_expr(), rhs)

    def __iadd__(self, rhs: Any) -> E.Expr:
        return self._update(ops.add, 0, rhs)

    def __isub__(self, rhs: Any) -> E.Expr:
        return self._update(ops.sub, 0, rhs)

    def __imul__(self, rhs: Any) -> E.Expr:
        return self._update(ops.mul, 1, rhs)

    def __itruediv__(self, rhs: Any) -> E.Expr:
        return self._update(ops.div, 1, rhs)

    def __repr__(self) -> str:
        return f"<engine.FuncRef {self.func.name()}[...]>"


attach_operators(FuncRef)
