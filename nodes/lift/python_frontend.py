"""Lifting Python prototypes: a function with explicit loops over NumPy arrays
(`for y in range(h): for x in range(w): out[y, x] = ...`) becomes engine Funcs, read from its
`ast` with the element types of example arguments. Loops over the output's coordinates become
the Funcs' dimensions; loops with constant bounds (windows, channels, iterations) are unrolled;
if/else on scalars becomes select; small constant tuples (colours, taps) are indexed by
constants. NumPy 2's promotion rules give the types (a uint8 pixel plus a Python int stays
uint8; times a Python float it is float64). Approximation mode computes float64 as float32.

Array axes follow the engine's convention: a NumPy (h, w) array is f[x, y], (h, w, c) is
f[c, x, y]."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pixelweave.nodes.lift.errors import LiftError

import pixelweave as pw

PW_OF_DTYPE = {
    "uint8": pw.UInt(8), "uint16": pw.UInt(16), "int16": pw.Int(16), "int32": pw.Int(32), "uint32": pw.UInt(32),
    "float32": pw.Float(32), "float64": pw.Float(64), "int64": pw.Int(64), "bool": pw.Bool(),
}  # fmt: skip
MATH = {
    "sqrt": pw.sqrt, "exp": pw.exp, "log": pw.log, "sin": pw.sin, "cos": pw.cos, "tan": pw.tan,
    "floor": pw.floor, "ceil": pw.ceil, "atan2": pw.atan2, "tanh": pw.tanh,
}  # fmt: skip
UNROLL_LIMIT = 256


@dataclass
class Val:
    """A value during lifting: an engine expression (or a Python number) and its NumPy type;
    `py` marks a Python int/float (weakly typed under NumPy 2's rules)."""

    expr: Any
    dtype: str
    py: bool = False


@dataclass
class Array:
    name: str
    dtype: str
    shape: tuple  # Val per axis
    source: Any  # ImageParam (input) or None (created here)
    func: pw.Func | None = None
    pieces: list = field(default_factory=list)  # (condition, value) of stores, in order


@dataclass
class PythonLift:
    """The lifted prototype: the returned array's Func, the inputs, and the shape it has."""

    function: str
    output: pw.Func
    output_shape: tuple[int, ...]
    output_dtype: str
    inputs: dict[str, Any]
    param_values: dict[str, Any]
    approximate: bool
    stages: dict[str, pw.Func] = field(default_factory=dict)  # arrays the prototype fills, by name
    extents: dict[str, tuple] = field(default_factory=dict)  # their extents (engine order), as Exprs
    file: str = ""

    @property
    def pipeline(self) -> pw.Pipeline:
        return pw.Pipeline(self.output)

    def run(self, *args: Any) -> np.ndarray:
        """Call the lifted pipeline like the prototype (same arguments, same result shape)."""
        sizes = list(reversed(self.output_shape))
        pipeline = self.pipeline
        out = pipeline.realize(sizes, _used(pipeline, engine_inputs(self.inputs, args, self.approximate)))
        return np.asarray(out)


def engine_inputs(kinds: dict[str, str], args: tuple, approximate: bool) -> dict[str, Any]:
    """The prototype's arguments as the engine's inputs (float64 arrays as float32 when approximating)."""
    inputs = {}
    for (name, kind), value in zip(kinds.items(), args, strict=True):
        if kind == "array":
            a = np.asarray(value)
            inputs[name] = a.astype(np.float32) if approximate and a.dtype == np.float64 else a
        else:
            inputs[name] = value
    return inputs


class _Lifter:
    def __init__(self, fn_node: ast.FunctionDef, file: str, args: tuple, approximate: bool, line0: int) -> None:
        self.node = fn_node
        self.file = file
        self.args = args
        self.approx = approximate
        self.line0 = line0
        self.env: dict[str, Any] = {}
        self.inputs: dict[str, Any] = {}
        self.arrays: dict[str, Array] = {}
        self.loop_vars: list[tuple[str, pw.Var, Val, Val]] = []
        self.result: Array | None = None
        self.counter = 0
        self.in_if = 0

    def refuse(self, node: ast.AST | None, construct: str, why: str) -> LiftError:
        line = getattr(node, "lineno", None)
        return LiftError(self.file, None if line is None else line + self.line0 - 1, construct, why)

    def ftype(self, dtype: str) -> str:
        return "float32" if self.approx and dtype == "float64" else dtype

    # ---- entry ---------------------------------------------------------------------------------

    def run(self) -> PythonLift:
        params = [a.arg for a in self.node.args.args]
        if len(params) != len(self.args):
            raise self.refuse(self.node, f"function `{self.node.name}`", f"it takes {len(params)} arguments, "
                              f"{len(self.args)} examples were given")  # fmt: skip
        for name, value in zip(params, self.args, strict=True):
            if isinstance(value, np.ndarray):
                dtype = self.ftype(str(value.dtype))
                if dtype not in PW_OF_DTYPE:
                    raise self.refuse(self.node, f"argument `{name}`", f"arrays of {value.dtype} are not supported")
                image = pw.ImageParam(PW_OF_DTYPE[dtype], value.ndim, name)
                shape = tuple(Val(image.dim(value.ndim - 1 - i).extent(), "int64", py=True) for i in range(value.ndim))
                arr = Array(name, dtype, shape, image)
                arr.func = pw.BoundaryConditions.repeat_edge(image, name=f"{name}_edge")
                self.arrays[name] = arr
                self.env[name] = arr
                self.inputs[name] = "array"
            elif isinstance(value, (bool, int, float, np.integer, np.floating)):
                is_float = isinstance(value, (float, np.floating))
                dtype = self.ftype("float64") if is_float else "int32"
                p = pw.Param(PW_OF_DTYPE[dtype], name)
                self.env[name] = Val(p, dtype if not is_float else "float64", py=True)
                self.inputs[name] = "scalar"
            else:
                raise self.refuse(self.node, f"argument `{name}`", "arguments are NumPy arrays or numbers")
        for stmt in self.node.body:
            self.stmt(stmt)
        if self.result is None:
            raise self.refuse(self.node, f"function `{self.node.name}`", "it must return an array it fills")
        out = self.finish(self.result)
        shape = tuple(int(np.asarray(self._concrete(v))) for v in self.result.shape)
        values = dict(zip(params, self.args, strict=True))
        made = [a for a in self.arrays.values() if a.source is None and a.func is not None]
        stages = {a.name: a.func for a in made}
        extents = {a.name: tuple(pw.cast(pw.Int(32), v.expr) for v in reversed(a.shape)) for a in made}
        return PythonLift(
            self.node.name, out, shape, self.result.dtype, self.inputs, values, self.approx, stages, extents, self.file
        )

    def _concrete(self, v: Val) -> int:
        """A shape value for the example arguments (shapes of inputs, sizes from parameters)."""
        e = v.expr
        if isinstance(e, (int, np.integer)):
            return int(e)
        probe = pw.Func(f"shape_probe_{self.counter}")
        self.counter += 1
        probe[()] = pw.cast(pw.Int(32), e)
        inputs = engine_inputs(self.inputs, self.args, self.approx)
        pipeline = pw.Pipeline(probe)
        return int(np.asarray(pipeline.realize([], _used(pipeline, inputs))))

    def finish(self, arr: Array) -> pw.Func:
        if arr.func is not None and arr.source is not None:
            return arr.func
        return self._define(arr)

    def _define(self, arr: Array) -> pw.Func:
        f = pw.Func(arr.name)
        nd = len(arr.shape)
        args = [pw.Var(f"{arr.name}_{a}") for a in ("c", "x", "y")[3 - nd :]] if nd <= 3 else None
        if args is None:
            raise self.refuse(self.node, f"array `{arr.name}`", "arrays have 2 or 3 dimensions")
        # numpy axes (y, x[, c]) -> engine args reversed
        axes = list(reversed(args))
        t = PW_OF_DTYPE[arr.dtype]
        value: Any = pw.cast(t, 0)
        for cond_fn, value_fn in arr.pieces:
            cond = cond_fn(axes)
            v = pw.cast(t, value_fn(axes))
            value = v if cond is None else pw.select(cond, v, value)
        f[tuple(args)] = value
        arr.func = f
        return f

    # ---- statements -----------------------------------------------------------------------------

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return  # docstring
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.refuse(s, "a chained assignment", "assign one target")
            self.assign(s.targets[0], s.value, s)
        elif isinstance(s, ast.AugAssign):
            target = s.target
            current = self.expr(target)
            self.assign_value(target, self.binop(s.op, current, self.expr(s.value), s), s)
        elif isinstance(s, ast.For):
            self.for_loop(s)
        elif isinstance(s, ast.If):
            self.if_stmt(s)
        elif isinstance(s, ast.Return):
            value = s.value
            if not isinstance(value, ast.Name) or not isinstance(self.env.get(value.id), Array):
                raise self.refuse(s, "this return", "return the array the loops fill")
            self.result = self.env[value.id]
            if self.result.source is not None:
                raise self.refuse(s, "this return", "return an array the function creates")
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, (ast.While, ast.Break, ast.Continue)):
            raise self.refuse(s, f"`{type(s).__name__.lower()}`", "data-dependent control flow")
        else:
            raise self.refuse(s, f"a {type(s).__name__} statement", "outside the lifted subset")

    def assign(self, target: ast.expr, value_node: ast.expr, s: ast.stmt) -> None:
        if isinstance(target, ast.Tuple):
            if isinstance(value_node, ast.Tuple) and len(value_node.elts) == len(target.elts):
                values = [self.expr(v) for v in value_node.elts]
            else:
                value = self.expr(value_node)
                if not isinstance(value, tuple) or len(value) < len(target.elts):
                    raise self.refuse(s, "this tuple assignment", "the value has fewer items")
                values = list(value[: len(target.elts)])
            for t, v in zip(target.elts, values, strict=True):
                self.assign_value(t, v, s)
            return
        created = self.creation(value_node, target)
        if created is not None:
            self.env[target.id] = created
            self.arrays[target.id] = created
            return
        self.assign_value(target, self.expr(value_node), s)

    def assign_value(self, target: ast.expr, value: Any, s: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            arr = self.env.get(target.value.id)
            if not isinstance(arr, Array) or arr.source is not None:
                raise self.refuse(s, f"a store into `{target.value.id}`", "store only into arrays the function creates")
            self.store(arr, target, value, s)
            return
        raise self.refuse(s, "this assignment", "assign names or array elements")

    def creation(self, node: ast.expr, target: ast.expr) -> Array | None:
        """np.zeros((h, w), dtype), np.zeros_like(a), np.empty... as a new array."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(target, ast.Name)):
            return None
        fn = node.func.attr
        if fn not in ("zeros", "empty", "zeros_like", "empty_like"):
            return None
        dtype = "float64"
        for kw in node.keywords:
            if kw.arg == "dtype":
                dtype = _dtype_name(kw.value)
        if fn.endswith("_like"):
            base = self.env.get(node.args[0].id) if isinstance(node.args[0], ast.Name) else None
            if not isinstance(base, Array):
                raise self.refuse(node, f"np.{fn}", "its argument must be an array")
            if not any(kw.arg == "dtype" for kw in node.keywords):
                dtype = base.dtype
            shape = base.shape
        else:
            shape_node = node.args[0]
            items = shape_node.elts if isinstance(shape_node, ast.Tuple) else [shape_node]
            shape = tuple(self.expr(i) for i in items)
            if len(node.args) > 1:
                dtype = _dtype_name(node.args[1])
        dtype = self.ftype(dtype)
        if dtype not in PW_OF_DTYPE:
            raise self.refuse(node, f"dtype {dtype}", "not supported")
        return Array(target.id, dtype, shape, None)

    def for_loop(self, s: ast.For) -> None:
        if not (isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range"):
            raise self.refuse(s, "this for loop", "loop over range(...)")
        if not isinstance(s.target, ast.Name) or s.orelse:
            raise self.refuse(s, "this for loop", "one loop variable, no else")
        bounds = [self.expr(a) for a in s.iter.args]
        if len(bounds) == 1:
            bounds = [Val(0, "int64", py=True), bounds[0]]
        if len(bounds) != 2:
            raise self.refuse(s, "range with a step", "use range(stop) or range(start, stop)")
        lo, hi = bounds
        if _is_number(lo.expr) and _is_number(hi.expr):
            n = int(hi.expr) - int(lo.expr)
            if n > UNROLL_LIMIT:
                raise self.refuse(s, "this constant loop", f"more than {UNROLL_LIMIT} iterations")
            for i in range(int(lo.expr), int(hi.expr)):
                self.env[s.target.id] = Val(i, "int64", py=True)
                for st in s.body:
                    self.stmt(st)
            return
        var = pw.Var(f"{s.target.id}_{len(self.loop_vars)}")
        self.loop_vars.append((s.target.id, var, lo, hi))
        before = dict(self.env)
        self.env[s.target.id] = Val(var, "int64", py=True)
        for st in s.body:
            self.stmt(st)
        self.loop_vars.pop()
        for name, value in before.items():
            if name != s.target.id and self.env.get(name) is not value and not isinstance(value, Array):
                raise self.refuse(
                    s,
                    f"variable `{name}` carried across this loop",
                    "only loops with constant bounds may accumulate (they are unrolled)",
                )
        self.env = {k: v for k, v in self.env.items() if k in before or isinstance(v, Array)}

    def if_stmt(self, s: ast.If) -> None:
        cond = self.expr(s.test)
        c = self.truth(cond)
        if _is_number(c):
            for st in s.body if c else s.orelse:
                self.stmt(st)
            return
        before = dict(self.env)
        self.in_if += 1
        for st in s.body:
            self.stmt(st)
        then_env = dict(self.env)
        self.env = dict(before)
        for st in s.orelse:
            self.stmt(st)
        self.in_if -= 1
        else_env = self.env
        merged = dict(else_env)
        for name, tv in then_env.items():
            ev = else_env.get(name)
            if tv is ev:
                continue
            if isinstance(tv, Val) and isinstance(ev, Val):
                t = _promote(tv, ev)
                merged[name] = Val(pw.select(c, self.cast(tv, t), self.cast(ev, t)), t, tv.py and ev.py)
            elif isinstance(tv, Array) or isinstance(ev, Array):
                raise self.refuse(s, "an array chosen in an if", "outside the subset")
        self.env = merged

    def store(self, arr: Array, target: ast.Subscript, value: Any, s: ast.stmt) -> None:
        if self.in_if:
            raise self.refuse(
                s, f"a store into `{arr.name}` inside an if", "compute the value with the if, then store it"
            )
        index = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        if len(index) != len(arr.shape):
            raise self.refuse(s, f"a store into `{arr.name}`", f"index all {len(arr.shape)} axes")
        if not isinstance(value, Val):
            raise self.refuse(s, f"a store into `{arr.name}`", "the value is not a number")
        loops = list(self.loop_vars)
        conds_axes = []
        subst: dict[str, int] = {}
        for axis, idx in enumerate(index):
            if isinstance(idx, ast.Name) and any(lv[0] == idx.id for lv in loops):
                lv = next(lv for lv in loops if lv[0] == idx.id)
                subst[lv[1].name] = axis
                conds_axes.append(("loop", axis, lv))
            else:
                v = self.expr(idx)
                if not _is_number(v.expr):
                    raise self.refuse(s, f"a store into `{arr.name}`", "index with a loop variable or a constant")
                conds_axes.append(("const", axis, int(v.expr)))
        used = {lv[1].name for lv in loops}
        if used - set(subst):
            raise self.refuse(s, f"a store into `{arr.name}`", "every enclosing loop must index the store")
        expr = value.expr
        dtype = value.dtype
        loop_vars = [lv[1] for lv in loops]

        def value_fn(axes, expr=expr, dtype=dtype, subst=subst, loop_vars=loop_vars):
            return _substitute(expr, {v.name: axes[subst[v.name]] for v in loop_vars})

        def cond_fn(axes, conds_axes=conds_axes, loop_vars=loop_vars, subst=subst):
            cond = None
            for kind, axis, info in conds_axes:
                if kind == "loop":
                    lo, hi = info[2], info[3]
                    lo_e = _substitute(pw.cast(pw.Int(32), lo.expr), {v.name: axes[subst[v.name]] for v in loop_vars})
                    hi_e = _substitute(pw.cast(pw.Int(32), hi.expr), {v.name: axes[subst[v.name]] for v in loop_vars})
                    c = pw.logical_and(axes[axis] >= lo_e, axes[axis] < hi_e)
                else:
                    c = axes[axis] == info
                cond = c if cond is None else pw.logical_and(cond, c)
            return cond

        arr.pieces.append((cond_fn, value_fn))
        arr.func = None

    # ---- expressions ----------------------------------------------------------------------------

    def expr(self, n: ast.expr) -> Any:  # noqa: C901 - one case per node
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool):
                return Val(int(n.value), "int64", py=True)
            if isinstance(n.value, int):
                return Val(n.value, "int64", py=True)
            if isinstance(n.value, float):
                return Val(n.value, "float64", py=True)
            raise self.refuse(n, f"constant {n.value!r}", "only numbers")
        if isinstance(n, ast.Name):
            if n.id not in self.env:
                raise self.refuse(n, f"`{n.id}`", "an unknown name")
            return self.env[n.id]
        if isinstance(n, ast.Tuple | ast.List):
            return tuple(self.expr(e) for e in n.elts)
        if isinstance(n, ast.Attribute) and n.attr == "shape" and isinstance(n.value, ast.Name):
            arr = self.env.get(n.value.id)
            if isinstance(arr, Array):
                return arr.shape
        if isinstance(n, ast.Subscript):
            base = self.expr(n.value)
            if isinstance(base, tuple):
                if isinstance(n.slice, ast.Slice):
                    lo = n.slice.lower.value if n.slice.lower is not None else None
                    hi = n.slice.upper.value if n.slice.upper is not None else None
                    return base[lo:hi]
                i = self.expr(n.slice)
                if not _is_number(i.expr):
                    raise self.refuse(n, "indexing a tuple", "index small tuples with constants")
                return base[int(i.expr)]
            if isinstance(base, Array):
                return self.read(base, n)
        if isinstance(n, ast.BinOp):
            return self.binop(n.op, self.expr(n.left), self.expr(n.right), n)
        if isinstance(n, ast.UnaryOp):
            v = self.expr(n.operand)
            if isinstance(n.op, ast.USub):
                return Val(
                    -v.expr if _is_number(v.expr) else pw.cast(PW_OF_DTYPE[v.dtype], 0) - self.cast(v, v.dtype),
                    v.dtype,
                    v.py,
                )
            if isinstance(n.op, ast.Not):
                c = self.truth(v)
                return Val(int(not c) if _is_number(c) else pw.logical_not(c), "bool")
            if isinstance(n.op, ast.UAdd):
                return v
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = self.expr(n.left), self.expr(n.comparators[0])
            t = _promote(a, b)
            x, y = self.cast(a, t), self.cast(b, t)
            op = type(n.ops[0])
            table = {ast.Lt: lambda: x < y, ast.LtE: lambda: x <= y, ast.Gt: lambda: x > y, ast.GtE: lambda: x >= y,
                     ast.Eq: lambda: x == y, ast.NotEq: lambda: x != y}  # fmt: skip
            if op not in table:
                raise self.refuse(n, "this comparison", "outside the subset")
            return Val(table[op](), "bool")
        if isinstance(n, ast.BoolOp):
            values = [self.truth(self.expr(v)) for v in n.values]
            out = values[0]
            for v in values[1:]:
                out = pw.logical_and(out, v) if isinstance(n.op, ast.And) else pw.logical_or(out, v)
            return Val(out, "bool")
        if isinstance(n, ast.IfExp):
            c = self.truth(self.expr(n.test))
            a, b = self.expr(n.body), self.expr(n.orelse)
            t = _promote(a, b)
            return Val(pw.select(c, self.cast(a, t), self.cast(b, t)), t, a.py and b.py)
        if isinstance(n, ast.Call):
            return self.call(n)
        raise self.refuse(n, f"a {type(n).__name__} expression", "outside the lifted subset")

    def read(self, arr: Array, n: ast.Subscript) -> Val:
        index = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
        if len(index) != len(arr.shape):
            raise self.refuse(n, f"a read of `{arr.name}`", f"index all {len(arr.shape)} axes")
        coords = [pw.cast(pw.Int(32), self.cast(self.expr(i), "int32")) for i in index]
        func = arr.func if arr.func is not None else self._define(arr)
        return Val(func[tuple(reversed(coords))], arr.dtype)

    def call(self, n: ast.Call) -> Val:
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        args = [self.expr(a) for a in n.args]
        if name in MATH:
            t = "float32" if all(a.dtype == "float32" for a in args) else self.ftype("float64")
            return Val(MATH[name](*[self.cast(a, t) for a in args]), t)
        if name in ("min", "max", "minimum", "maximum", "fmin", "fmax"):
            t = args[0]
            for a in args[1:]:
                t = Val(None, _promote(t, a), t.py and a.py)
            out = self.cast(args[0], t.dtype)
            for a in args[1:]:
                out = (pw.min if "min" in name else pw.max)(out, self.cast(a, t.dtype))
            return Val(out, t.dtype, t.py)
        if name == "clip":
            t = _promote(_promote_val(args[0], args[1]), args[2])
            return Val(pw.clamp(self.cast(args[0], t), self.cast(args[1], t), self.cast(args[2], t)), t)
        if name in ("abs", "fabs"):
            a = args[0]
            e = self.cast(a, a.dtype)
            return Val(
                pw.select(e < pw.cast(PW_OF_DTYPE[a.dtype], 0), pw.cast(PW_OF_DTYPE[a.dtype], 0) - e, e), a.dtype, a.py
            )
        if name == "float":
            return Val(self.cast(args[0], self.ftype("float64")), "float64", py=True)
        if name == "int":
            return Val(self.cast(args[0], "int32"), "int64", py=True)
        if name in ("float32", "float64", "uint8", "uint16", "int32"):
            return Val(self.cast(args[0], self.ftype(name)), self.ftype(name))
        raise self.refuse(n, f"a call to `{name}`", "not among the lifted math functions")

    def truth(self, v: Val) -> Any:
        if _is_number(v.expr):
            return bool(v.expr)
        e = v.expr
        if v.dtype == "bool":
            return e
        return e != pw.cast(PW_OF_DTYPE[v.dtype], 0)

    def cast(self, v: Val, dtype: str) -> Any:
        dtype = self.ftype(dtype)
        t = PW_OF_DTYPE["int32" if dtype == "int64" and v.py else dtype]
        if v.dtype == "bool" and not _is_number(v.expr):
            return pw.select(v.expr, pw.cast(t, 1), pw.cast(t, 0))
        return pw.cast(t, v.expr)

    def binop(self, op: ast.operator, a: Val, b: Val, n: ast.AST) -> Val:
        if _is_number(a.expr) and _is_number(b.expr) and a.py and b.py:
            return Val(
                _python_op(op, a.expr, b.expr, n, self),
                "float64" if isinstance(op, ast.Div) else _promote(a, b),
                py=True,
            )
        t = _promote(a, b)
        if isinstance(op, ast.Div) and t not in ("float32", "float64"):
            t = self.ftype("float64")
        t = self.ftype(t)
        x, y = self.cast(a, t), self.cast(b, t)
        py = a.py and b.py
        if isinstance(op, ast.Add):
            return Val(x + y, t, py)
        if isinstance(op, ast.Sub):
            return Val(x - y, t, py)
        if isinstance(op, ast.Mult):
            return Val(x * y, t, py)
        if isinstance(op, ast.Div):
            return Val(x / y, t, py)
        if isinstance(op, ast.FloorDiv):
            return Val(pw.floor(x / y) if t.startswith("float") else x / y, t, py)
        if isinstance(op, ast.Mod):
            return Val(x - pw.floor(x / y) * y if t.startswith("float") else x % y, t, py)
        if isinstance(op, ast.Pow):
            if _is_number(b.expr) and float(b.expr) == 2:
                return Val(x * x, t, py)
            return Val(pw.pow(x, y), t, py)
        raise self.refuse(n, f"operator {type(op).__name__}", "outside the lifted subset")


def _used(pipeline: pw.Pipeline, inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs a pipeline reads (a prototype's argument may go unused by one output)."""
    names = {i.name() for i in pipeline.images} | {p.name for p in pipeline.params}
    return {k: v for k, v in inputs.items() if k in names}


def _python_op(op, a, b, n, lifter):
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div):
        return a / b
    if isinstance(op, ast.FloorDiv):
        return a // b
    if isinstance(op, ast.Mod):
        return a % b
    if isinstance(op, ast.Pow):
        return a**b
    raise lifter.refuse(n, f"operator {type(op).__name__}", "outside the lifted subset")


def _is_number(e: Any) -> bool:
    return isinstance(e, (int, float, bool, np.integer, np.floating))


def _promote_val(a: Val, b: Val) -> Val:
    return Val(None, _promote(a, b), a.py and b.py)


def _promote(a: Val, b: Val) -> str:
    """NumPy 2's result type: a Python int/float adopts the array scalar's kind where it can."""
    if a.dtype == "bool" and b.dtype == "bool":
        return "int64" if a.py and b.py else "bool"
    if a.py and b.py:
        return "float64" if "float" in a.dtype or "float" in b.dtype else "int64"
    if a.py or b.py:
        typed, weak = (b, a) if a.py else (a, b)
        if "float" in weak.dtype and "float" not in typed.dtype:
            return "float64"
        return typed.dtype if typed.dtype != "bool" else ("float64" if "float" in weak.dtype else "int64")
    return str(np.promote_types(a.dtype, b.dtype))


def _dtype_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return {"float": "float64", "int": "int64"}.get(node.id, node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return "float64"


def _substitute(e: Any, mapping: dict[str, Any]) -> Any:
    from pixelweave.engine.ir import expr as E
    from pixelweave.engine.ir.visit import substitute

    if not isinstance(e, E.Expr):
        return e
    return substitute(e, mapping)


@dataclass
class PythonCheck:
    """The lifted pipeline against CPython running the prototype on the example arguments."""

    held: bool
    max_error: float
    detail: str


def check_python(lift: PythonLift, fn: Any, args: tuple) -> PythonCheck:
    """Run both; integers must match exactly, floats to 1e-7 relative (1e-4 when approximating
    float64 by float32: the engine's math functions are not libm's, bit for bit)."""
    expected = np.asarray(fn(*args))
    got = lift.run(*args)
    if expected.shape != got.shape:
        return PythonCheck(False, math.inf, f"shape {got.shape}, CPython gave {expected.shape}")
    if expected.dtype.kind in "iub":
        bad = int(np.count_nonzero(expected != got))
        err = float(np.max(np.abs(expected.astype(np.int64) - got.astype(np.int64)))) if expected.size else 0.0
        if bad == 0:
            return PythonCheck(True, err, "exact")
        # in float32, a few results computed from floats (an escape count) may land one step off
        allowed = lift.approximate and bad <= 0.005 * expected.size
        return PythonCheck(allowed, err, f"{bad} of {expected.size} elements differ (max {err:g})")
    err = float(np.max(np.abs(expected - got.astype(np.float64)))) if expected.size else 0.0
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    tolerance = (1e-4 if lift.approximate else 1e-7) * scale
    held = err <= tolerance
    return PythonCheck(held, err, f"max |error| {err:.3g} (tolerance {tolerance:.3g})")


def lift_python(fn: Any, args: tuple, approximate: bool = False, file: str | None = None) -> PythonLift:
    """Lift a Python prototype (a function object, or (source text, name)) with example arguments."""
    if isinstance(fn, tuple):
        source, name = fn
        tree = ast.parse(source)
        node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if node is None:
            raise LiftError(file or "<source>", None, f"function `{name}`", "it is not defined in the file")
        line0 = 1
    else:
        source = textwrap.dedent(inspect.getsource(fn))
        node = ast.parse(source).body[0]
        file = file or inspect.getsourcefile(fn)
        line0 = inspect.getsourcelines(fn)[1]
    return _Lifter(node, file or "<source>", tuple(args), approximate, line0).run()
