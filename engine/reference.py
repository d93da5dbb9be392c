"""The reference evaluator: computes a pipeline with NumPy straight from its definitions.

It ignores every schedule, so it is the oracle that compiled code is compared against.
Each Func is computed over the region its consumers need (found by interval analysis of
the call sites, outputs first) as whole-array NumPy operations.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pixelweave.engine.analysis.interval import Interval, bounds_of
from pixelweave.engine.buffer_api import array_and_mins
from pixelweave.engine.errors import BoundsError, CompileError, InputError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.debug_calls import DEBUG_CALL_PREFIXES
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.lerp import lower_lerp
from pixelweave.engine.ir.param import check_image, check_scalar
from pixelweave.engine.ir.visit import walk

if TYPE_CHECKING:
    from pixelweave.engine.pipeline import Pipeline

Box = list[Interval]

DIM_NAMES = ("x", "y", "c", "w")


def dim_label(i: int) -> str:
    return f"{DIM_NAMES[i]} (dimension {i})" if i < len(DIM_NAMES) else f"dimension {i}"


@dataclass
class Buffer:
    """Values of a Func or image over a box; array axes are the dimensions reversed."""

    array: np.ndarray
    mins: list[int]


def resolve_inputs(pipeline: Pipeline, inputs: dict[str, Any] | None) -> tuple[dict, dict]:
    """Arrays for the images and values for the Params, from `inputs` or their set() values."""
    inputs = dict(inputs or {})
    known = {im.name() for im in pipeline.images} | {p.name for p in pipeline.params}
    for name in inputs:
        if name not in known:
            choices = ", ".join(sorted(known)) or "none"
            raise InputError(f"`{name}` is not an input of this pipeline (its inputs: {choices})")
    images: dict[str, np.ndarray] = {}
    image_mins: dict[str, list[int]] = {}
    for im in pipeline.images:
        array, mins = array_and_mins(inputs.get(im.name(), im.get()))
        if array is None:
            raise InputError(f"no array given for input image `{im.name()}`")
        images[im.name()] = check_image(im, array)
        image_mins[im.name()] = mins or [0] * im.dimensions()
    params: dict[str, int | float] = {}
    for p in pipeline.params:
        value = inputs.get(p.name, p.get())
        if value is None:
            raise InputError(f"no value given for parameter `{p.name}`, and it has no default")
        params[p.name] = check_scalar(p.name, p.type(), value)
        lo, hi = p.range
        if lo is not None and params[p.name] < lo:
            raise InputError(f"Parameter {p.name} is {params[p.name]} but must be at least {lo}")
        if hi is not None and params[p.name] > hi:
            raise InputError(f"Parameter {p.name} is {params[p.name]} but must be at most {hi}")
    for im in pipeline.images:
        shape = images[im.name()].shape[::-1]
        im.check_constraints(image_mins[im.name()], [int(n) for n in shape])
        for i in range(im.dimensions()):
            params[f"{im.name()}.min.{i}"] = image_mins[im.name()][i]
            params[f"{im.name()}.extent.{i}"] = int(shape[i])
            params[f"{im.name()}.stride.{i}"] = math.prod(int(n) for n in shape[:i])  # np.prod is slow here
    return images, params


def realize_reference(
    pipeline: Pipeline,
    sizes: list[int] | tuple[int, ...],
    inputs: dict[str, Any] | None = None,
    mins: list[int] | None = None,
) -> np.ndarray | list[np.ndarray]:
    """The outputs over [mins, mins + sizes) per dimension (mins default to 0)."""
    images, params = resolve_inputs(pipeline, inputs)
    sizes = check_sizes(pipeline, sizes)
    evaluator = ReferenceEvaluator(pipeline, images, params)
    if mins is not None:
        if len(mins) != len(sizes):
            raise InputError(f"{len(sizes)} sizes but {len(mins)} mins were given")
        boxes = [[Interval(m, m + n - 1) for m, n in zip(mins, sizes, strict=True)]] * len(pipeline.outputs)
        regions = evaluator.infer_regions(sizes, boxes, output_mins=list(mins))
    else:
        regions = evaluator.infer_regions(sizes)
    evaluator.check_inputs_cover(regions)
    results = evaluator.compute(regions)
    return results[0] if len(results) == 1 else results


def required_regions(
    pipeline: Pipeline, output_boxes: list[list[tuple[int, int]]], inputs: dict[str, Any] | None = None
) -> dict[str, list[tuple[int, int]]]:
    """Per Func name, the (min, extent) per dimension over which the algorithm must compute
    it so that every output k is known over output_boxes[k] (as (min, extent) pairs):
    bounds inference on the algorithm alone, as the reference evaluator does it. Funcs that
    nothing needs are left out; BoundsError when a region cannot be bounded."""
    images, params = resolve_inputs(pipeline, inputs)
    evaluator = ReferenceEvaluator(pipeline, images, params)
    boxes = [[Interval(lo, lo + n - 1) for lo, n in box] for box in output_boxes]
    regions = evaluator.infer_regions([], boxes)
    result: dict[str, list[tuple[int, int]]] = {}
    for f in pipeline.funcs:
        box = regions.get(id(f))
        if box is None or any(b.is_empty() for b in box):
            continue
        for i, b in enumerate(box):
            if any(abs(v) == float("inf") for v in (b.lo, b.hi)):
                raise BoundsError(
                    f"the region of Func `{f.name()}` needed in {dim_label(i)} cannot be bounded: a coordinate "
                    "has no bounds (for example a value read from another image); clamp it"
                )
        result[f.name()] = [(int(b.lo), int(b.hi - b.lo + 1)) for b in box]
    return result


def check_sizes(pipeline: Pipeline, sizes: Any) -> list[int]:
    if isinstance(sizes, (int, np.integer)):
        sizes = [sizes]
    sizes = [int(s) for s in sizes]
    for out in pipeline.outputs:
        if out.dimensions() != len(sizes):
            raise InputError(
                f"output `{out.name()}` has {out.dimensions()} dimensions, but {len(sizes)} "
                f"size{' was' if len(sizes) == 1 else 's were'} given"
            )
    for i, s in enumerate(sizes):
        if s < 0:
            raise InputError(f"the size of {dim_label(i)} is negative ({s})")
    return sizes


class ReferenceEvaluator:
    def __init__(self, pipeline: Pipeline, images: dict[str, np.ndarray], params: dict[str, Any]) -> None:
        self.pipeline = pipeline
        self.images = images
        self.params = params
        self.param_scope = {k: Interval(v, v) for k, v in params.items()}
        self.buffers: dict[int, Buffer] = {}
        self.value_buffers: dict[int, list[Buffer]] = {}  # per Func, one Buffer per value of a Tuple
        self._value_bounds: dict[tuple[int, int], Interval | None] = {}

    # ------------------------------------------------------------------ bounds
    def _scalar(self, e: E.Expr) -> int:
        b = bounds_of(e, self.param_scope)
        assert b.lo == b.hi, f"{e} is not known before the run"
        return int(b.lo)

    def rdom_box(self, d: Definition) -> Box:
        if d.rdom is None:
            return []
        box = []
        for lo, extent in d.rdom.bounds:
            m, n = self._scalar(lo), self._scalar(extent)
            box.append(Interval(m, m + n - 1))
        return box

    def definition_scope(self, f: Func, d: Definition, box: Box) -> dict[str, Interval]:
        scope = dict(self.param_scope)
        pure = f.definition()
        for i, a in enumerate(d.args):
            if isinstance(a, E.Variable) and a.kind == "var":
                scope[a.name] = box[i]
        if d is pure:
            for i, a in enumerate(pure.args):
                scope[a.name] = box[i]
        if d.rdom is not None:
            for v, interval in zip(d.rdom.vars, self.rdom_box(d), strict=True):
                scope[v.name] = interval
        return scope

    def _call_bounds(self, call: E.Call) -> Interval | None:
        """Values a call can return: a Func without updates is bounded by its definition."""
        if call.call_kind != "func":
            return None
        f = call.target
        if f.has_update_definition():
            return None
        # The same for every call of f: remembered, or chains of Funcs cost exponential time.
        key = (id(f), call.value_index)
        if key not in self._value_bounds:
            value = f.definition().all_values()[call.value_index]
            self._value_bounds[key] = bounds_of(value, self.param_scope, self._call_bounds)
        return self._value_bounds[key]

    def infer_regions(
        self, sizes: list[int], output_boxes: list[Box] | None = None, output_mins: list[int] | None = None
    ) -> dict[int, Box]:
        """Per Func (by id) the box it is computed over; `output_boxes` (one per output)
        replaces [0, size) when outputs are asked for over different boxes; `output_mins`
        is where the returned outputs start (0 by default)."""
        regions: dict[int, Box] = {}
        self.output_sizes = list(sizes)
        self.output_mins = list(output_mins) if output_mins is not None else [0] * len(sizes)
        for k, out in enumerate(self.pipeline.outputs):
            box = output_boxes[k] if output_boxes is not None else [Interval(0, s - 1) for s in sizes]
            old = regions.get(id(out))
            regions[id(out)] = box if old is None else _union(old, box)
        self.required_images: dict[str, Box] = {}
        for f in reversed(self.pipeline.funcs):
            box = regions.get(id(f))
            if box is None or any(b.is_empty() for b in box):
                continue
            box = self._grow_for_updates(f, box)
            regions[id(f)] = box
            for d in [f.definition(), *f.updates()]:
                rbox = self.rdom_box(d)
                if any(b.is_empty() for b in rbox):
                    continue
                scope = self.definition_scope(f, d, box)
                exprs = [*d.all_values(), *d.args] + ([d.predicate] if d.predicate is not None else [])
                for e in exprs:
                    for node in walk(e):
                        if not isinstance(node, E.Call) or node.call_kind == "intrinsic":
                            continue
                        if node.call_kind == "func" and node.target is f:
                            continue
                        arg_box = [bounds_of(a, scope, self._call_bounds) for a in node.args]
                        if node.call_kind == "func":
                            key = id(node.target)
                            old = regions.get(key)
                            regions[key] = (
                                arg_box if old is None else [o.union(n) for o, n in zip(old, arg_box, strict=False)]
                            )
                        else:
                            old = self.required_images.get(node.name)
                            self.required_images[node.name] = arg_box if old is None else _union(old, arg_box)
        return regions

    def _grow_for_updates(self, f: Func, box: Box) -> Box:
        """An update may write or read f outside the required region: compute f there too."""
        for _ in range(8):
            grown = list(box)
            for d in f.updates():
                if any(b.is_empty() for b in self.rdom_box(d)):
                    continue
                scope = self.definition_scope(f, d, grown)
                lhs = [bounds_of(a, scope, self._call_bounds) for a in d.args]
                grown = [g.union(b) for g, b in zip(grown, lhs, strict=False)]
                for node in (n for v in d.all_values() for n in walk(v)):
                    if isinstance(node, E.Call) and node.call_kind == "func" and node.target is f:
                        reads = [bounds_of(a, scope, self._call_bounds) for a in node.args]
                        grown = [g.union(b) for g, b in zip(grown, reads, strict=False)]
            for i, g in enumerate(grown):
                if any(abs(v) == float("inf") for v in (g.lo, g.hi)) or g.hi - g.lo > 1 << 28:
                    raise BoundsError(
                        f"Func `{f.name()}` would have to be computed over an unbounded region in "
                        f"{dim_label(i)}: an update definition writes or reads it at coordinates "
                        "whose range cannot be bounded; clamp them"
                    )
            if grown == box:
                return box
            box = grown
        return box

    def _image_mins(self, name: str, dimensions: int) -> list[int]:
        return [int(self.params[f"{name}.min.{i}"]) for i in range(dimensions)]

    def check_inputs_cover(self, regions: dict[int, Box]) -> None:
        for name, box in self.required_images.items():
            shape = self.images[name].shape[::-1]
            mins = self._image_mins(name, len(shape))
            for i, b in enumerate(box):
                if b.is_empty():
                    continue
                if b.lo < mins[i]:
                    raise BoundsError(
                        f"input `{name}` is read at {DIM_NAMES[i] if i < 4 else f'dim{i}'} = {_num(b.lo)}, "
                        f"below its minimum {mins[i]} in {dim_label(i)}; add a boundary condition or request "
                        "a smaller output"
                    )
                if b.hi > mins[i] + shape[i] - 1:
                    raise BoundsError(
                        f"input `{name}` is read at {DIM_NAMES[i] if i < 4 else f'dim{i}'} = {_num(b.hi)}, "
                        f"beyond its maximum {mins[i] + shape[i] - 1} in {dim_label(i)}; add a boundary "
                        "condition or request a smaller output"
                    )

    # ------------------------------------------------------------------ evaluation
    def compute(self, regions: dict[int, Box]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            for f in self.pipeline.funcs:
                box = regions.get(id(f))
                if box is None:
                    continue
                self.buffers[id(f)] = self._realize_func(f, box)
        # An output that another stage also reads may have been computed over more than was
        # asked for: return the requested box only, as Halide does.
        results = []
        for out in self.pipeline.outputs:
            for buf in self.value_buffers[id(out)]:  # a Func returning a Tuple gives one array per value
                window = tuple(
                    slice(m - lo, m - lo + n)
                    for m, lo, n in zip(
                        reversed(self.output_mins), reversed(buf.mins), reversed(self.output_sizes), strict=True
                    )
                )
                results.append(np.array(buf.array[window], order="C"))  # keeps 0-d arrays 0-d
        return results

    def _coords(self, box: Box) -> list[np.ndarray]:
        n = len(box)
        coords = []
        for i, b in enumerate(box):
            shape = [1] * n
            shape[n - 1 - i] = max(int(b.hi - b.lo + 1), 0)
            coords.append(np.arange(int(b.lo), int(b.hi) + 1, dtype=np.int32).reshape(shape))
        return coords

    def _realize_func(self, f: Func, box: Box) -> Buffer:
        pure = f.definition()
        shape = tuple(max(int(b.hi - b.lo + 1), 0) for b in reversed(box))
        coords = self._coords(box)
        env = {a.name: c for a, c in zip(pure.args, coords, strict=False)}
        bufs = []
        for value_expr in pure.all_values():
            value = self.eval(value_expr, env)
            array = np.empty(shape, dtype=value_expr.type().numpy())
            array[...] = np.broadcast_to(value, shape)
            bufs.append(Buffer(array, [int(b.lo) for b in box]))
        self.buffers[id(f)] = bufs[0]
        self.value_buffers[id(f)] = bufs
        for d in f.updates():
            self._apply_update(f, d, box, bufs[0])
        return bufs[0]

    def _apply_update(self, f: Func, d: Definition, box: Box, buf: Buffer) -> None:
        rbox = self.rdom_box(d)
        if any(b.is_empty() for b in rbox):
            return
        n = len(box)
        pure_axes = {i: a.name for i, a in enumerate(d.args) if isinstance(a, E.Variable) and a.kind == "var"}
        fast = self._accumulation(f, d)
        if d.rdom is None or fast is not None:
            # All points at once: pure dims and RDom dims each on their own array axis.
            m = len(rbox)
            total = n + m
            env: dict[str, np.ndarray] = {}
            for i, name in pure_axes.items():
                shape = [1] * total
                shape[total - 1 - i] = int(box[i].hi - box[i].lo + 1)
                env[name] = np.arange(int(box[i].lo), int(box[i].hi) + 1, dtype=np.int32).reshape(shape)
            if d.rdom is not None:
                for j, (v, b) in enumerate(zip(d.rdom.vars, rbox, strict=False)):
                    shape = [1] * total
                    shape[m - 1 - j] = int(b.hi - b.lo + 1)
                    env[v.name] = np.arange(int(b.lo), int(b.hi) + 1, dtype=np.int32).reshape(shape)
            self._scatter(f, d, env, buf, fast)
            return
        # A general reduction: visit the domain in order (r.x innermost), all pure points at once.
        pure_env: dict[str, Any] = {}
        pure_coords = self._coords(box)
        for i, name in pure_axes.items():
            pure_env[name] = pure_coords[i]
        ranges = [range(int(b.lo), int(b.hi) + 1) for b in reversed(rbox)]
        rvars = list(reversed(d.rdom.vars))
        for point in itertools.product(*ranges):
            env = dict(pure_env)
            for v, value in zip(rvars, point, strict=False):
                env[v.name] = np.int32(value)
            self._scatter(f, d, env, buf, None)

    def _accumulation(self, f: Func, d: Definition) -> str | None:
        """'add', 'mul', 'min' or 'max' when d is f[L] = f[L] op e with e free of f."""
        if d.rdom is None or d.extra_values:
            return None
        v = d.value
        pairs = {E.Add: "add", E.Mul: "mul", E.Min: "min", E.Max: "max"}
        kind = pairs.get(type(v))
        if kind is None:
            return None
        for self_side, other in ((v.a, v.b), (v.b, v.a)):
            if (
                isinstance(self_side, E.Call)
                and self_side.call_kind == "func"
                and self_side.target is f
                and all(x.same_as(y) for x, y in zip(self_side.args, d.args, strict=False))
                and not _calls(other, f)
            ):
                return kind
        return None

    def _scatter(self, f: Func, d: Definition, env: dict, buf: Buffer, accumulate: str | None) -> None:
        if accumulate is not None:
            v = d.value
            self_side_is_a = isinstance(v.a, E.Call) and v.a.target is f and not _calls(v.b, f)
            term = v.b if self_side_is_a else v.a
            value = self.eval(term, env)
        else:
            # Every value of a Tuple is computed from the old values before any is stored.
            value = self.eval(d.value, env)
        extra = [self.eval(v, env) for v in d.extra_values]
        index = [self.eval(a, env) for a in d.args]
        mask = self.eval(d.predicate, env) if d.predicate is not None else None
        # The RDom's coordinates take part so that a point it does not use still counts once.
        rdom_coords = [env[v.name] for v in d.rdom.vars] if d.rdom is not None else []
        arrays = np.broadcast_arrays(value, *extra, *index, *rdom_coords, *([mask] if mask is not None else []))
        nv = 1 + len(extra)
        values, index = list(arrays[:nv]), arrays[nv : nv + len(index)]
        if mask is not None:
            keep = arrays[-1].astype(bool)
            values = [v[keep] for v in values]
            index = [ix[keep] for ix in index]
        else:
            values = [v.reshape(-1) for v in values]
            index = [ix.reshape(-1) for ix in index]
        size = values[0].size
        if index:
            positions = self._positions(f.name(), buf, index)
        else:  # a zero-dimensional Func: every value lands on its single element
            positions = (np.zeros(size, dtype=np.intp),)
        for value, value_buf in zip(values, self.value_buffers[id(f)], strict=True):
            value = value.astype(value_buf.array.dtype, copy=False)
            target = value_buf.array if index else value_buf.array.reshape(1)
            if accumulate is None:
                target[positions] = value
            else:
                ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[accumulate]
                ufunc.at(target, positions, value)

    def _positions(self, name: str, buf: Buffer, index: list[np.ndarray]) -> tuple:
        n = len(index)
        shape = buf.array.shape
        out = []
        for i, ix in enumerate(index):
            rel = np.asarray(ix, dtype=np.int64) - buf.mins[i]
            extent = shape[n - 1 - i]
            if rel.size and (rel.min() < 0 or rel.max() >= extent):
                bad = int(rel.min() if rel.min() < 0 else rel.max()) + buf.mins[i]
                raise BoundsError(
                    f"`{name}` is accessed at {dim_label(i)} = {bad}, outside the region "
                    f"[{buf.mins[i]}, {buf.mins[i] + extent - 1}] it was computed over"
                )
            out.append(rel)
        return tuple(reversed(out))

    # ------------------------------------------------------------------ expressions
    def eval(self, e: E.Expr, env: dict[str, Any]) -> np.ndarray:
        memo: dict[int, Any] = {}

        def go(node: E.Expr) -> Any:
            hit = memo.get(id(node))
            if hit is None:
                hit = self._eval_node(node, go, env)
                memo[id(node)] = hit
            return hit

        return go(e)

    def _eval_node(self, e: E.Expr, go, env: dict[str, Any]) -> Any:
        t = e.type()
        dt = t.numpy()
        if isinstance(e, E.Const):
            return np.asarray(e.value, dtype=dt)
        if isinstance(e, E.Variable):
            if e.name in env:
                return env[e.name]
            if e.name in self.params:
                return np.asarray(self.params[e.name], dtype=dt)
            raise CompileError(f"variable {e.name} has no value here")
        if isinstance(e, E.Cast):
            return cast_array(go(e.value), t)
        if isinstance(e, (E.Add, E.Sub)) and t.is_bool():
            return np.not_equal(go(e.a), go(e.b))  # one-bit arithmetic wraps: + and - are xor
        if isinstance(e, E.Add):
            return np.add(go(e.a), go(e.b), dtype=dt)
        if isinstance(e, E.Sub):
            return np.subtract(go(e.a), go(e.b), dtype=dt)
        if isinstance(e, E.Mul):
            return np.multiply(go(e.a), go(e.b), dtype=dt)
        if isinstance(e, E.Div):
            return divide(go(e.a), go(e.b), t)
        if isinstance(e, E.Mod):
            return modulo(go(e.a), go(e.b), t)
        if isinstance(e, E.Min):
            return np.minimum(go(e.a), go(e.b))
        if isinstance(e, E.Max):
            return np.maximum(go(e.a), go(e.b))
        if isinstance(e, E.Compare):
            fn = {E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal,
                  E.GT: np.greater, E.GE: np.greater_equal}[type(e)]  # fmt: skip
            return fn(go(e.a), go(e.b))
        if isinstance(e, E.And):
            return np.logical_and(go(e.a), go(e.b))
        if isinstance(e, E.Or):
            return np.logical_or(go(e.a), go(e.b))
        if isinstance(e, E.Not):
            return np.logical_not(go(e.a))
        if isinstance(e, E.Select):
            return np.where(go(e.cond), go(e.true_value), go(e.false_value)).astype(dt, copy=False)
        if isinstance(e, E.Let):
            inner = dict(env)
            inner[e.name] = go(e.value)
            return self.eval(e.body, inner)
        if isinstance(e, E.Call):
            if e.call_kind == "intrinsic":
                if e.name == "lerp":
                    return self.eval(lower_lerp(*e.args), env)
                return intrinsic(e.name, [go(a) for a in e.args], t)
            if e.call_kind == "image":
                buf = Buffer(self.images[e.name], self._image_mins(e.name, len(e.args)))
            else:
                bufs = self.value_buffers.get(id(e.target))
                if bufs is None:
                    raise CompileError(f"Func `{e.name}` is used before it is computed")
                buf = bufs[e.value_index]
            index = np.broadcast_arrays(*[go(a) for a in e.args])
            return buf.array[self._positions(e.name, buf, index)]
        raise CompileError(f"the reference evaluator cannot evaluate {type(e).__name__}")


def _union(a: Box, b: Box) -> Box:
    return [x.union(y) for x, y in zip(a, b, strict=True)]


def _calls(e: E.Expr, f: Func) -> bool:
    return any(isinstance(n, E.Call) and n.call_kind == "func" and n.target is f for n in walk(e))


def _num(v: float | int) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


# ---------------------------------------------------------------------- NumPy semantics


def cast_array(a: Any, t: Any) -> np.ndarray:
    """Halide's cast: integers wrap, floats truncate toward zero. Bool is one unsigned bit,
    so a cast to bool keeps the lowest bit (2 -> false), as in Halide."""
    a = np.asarray(a)
    if t.is_bool():
        if a.dtype.kind == "f":  # via int32; NaN and out of range give INT_MIN, as compiled code
            whole = np.trunc(a).astype(np.float64)
            bad = np.isnan(whole) | (whole < -(2**31)) | (whole >= 2**31)
            a = np.where(bad, -(2**31), np.nan_to_num(whole)).astype(np.int64)
        return (a & 1) != 0
    return a.astype(t.numpy())


def _wide(t: Any) -> np.dtype:
    return np.dtype(np.uint64) if t.is_uint() else np.dtype(np.int64)


def divide(a: Any, b: Any, t: Any) -> np.ndarray:
    """Euclidean integer division (remainder never negative) with x / 0 == 0; float division."""
    if t.is_float():
        return np.divide(a, b, dtype=t.numpy())
    wa, wb = np.asarray(a).astype(_wide(t)), np.asarray(b).astype(_wide(t))
    zero = wb == 0
    safe = np.where(zero, 1, wb)
    q = np.floor_divide(wa, safe)
    if t.is_int():
        r = wa - q * safe
        q = np.where(r < 0, q + 1, q)
    return np.where(zero, 0, q).astype(t.numpy())


def modulo(a: Any, b: Any, t: Any) -> np.ndarray:
    """Euclidean remainder with x % 0 == 0; a - b * floor(a / b) for floats."""
    if t.is_float():
        a, b = np.asarray(a, dtype=t.numpy()), np.asarray(b, dtype=t.numpy())
        return (a - b * np.floor(a / b)).astype(t.numpy())
    wa, wb = np.asarray(a).astype(_wide(t)), np.asarray(b).astype(_wide(t))
    zero = wb == 0
    safe = np.where(zero, 1, wb)
    r = np.mod(wa, safe)
    if t.is_int():
        r = np.where(r < 0, r + np.abs(safe), r)
    return np.where(zero, 0, r).astype(t.numpy())


_MATH = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc,
}  # fmt: skip


def intrinsic(name: str, args: list[Any], t: Any) -> np.ndarray:
    dt = t.numpy()
    if name.startswith(DEBUG_CALL_PREFIXES):  # print and tracing: the value, without the side effect
        return np.asarray(args[0])
    if name in _MATH:
        return _MATH[name](args[0]).astype(dt)
    if name == "atan2":
        return np.arctan2(args[0], args[1]).astype(dt)
    if name == "pow":
        return np.power(args[0], args[1]).astype(dt)
    if name == "is_nan":
        return np.isnan(args[0])
    if name == "abs":
        a = np.asarray(args[0])
        if a.dtype.kind == "f":
            return np.abs(a)
        return np.abs(a.astype(np.int64)).astype(dt)
    if name == "absd":
        a, b = np.asarray(args[0]), np.asarray(args[1])
        if a.dtype.kind == "f":
            return np.abs(a - b).astype(dt)
        wide = np.abs(a.astype(np.int64) - b.astype(np.int64)) if a.dtype.itemsize < 8 else np.abs(a - b)
        return wide.astype(dt)
    if name == "bitwise_and":
        return np.bitwise_and(args[0], args[1]).astype(dt)
    if name == "bitwise_or":
        return np.bitwise_or(args[0], args[1]).astype(dt)
    if name == "bitwise_xor":
        return np.bitwise_xor(args[0], args[1]).astype(dt)
    if name == "bitwise_not":
        return np.invert(args[0]).astype(dt)
    if name in ("shift_left", "shift_right"):
        return shift(name, np.asarray(args[0]), np.asarray(args[1]), t)
    raise CompileError(f"the reference evaluator has no implementation of {name}")


def shift(name: str, a: np.ndarray, b: np.ndarray, t: Any) -> np.ndarray:
    """Shifts; a negative signed amount shifts the other way; amounts past the width saturate."""
    bits = t.bits
    amount = b.astype(np.int64)
    left = amount >= 0 if name == "shift_left" else amount < 0
    mag = np.minimum(np.abs(amount), 63)
    wide = a.astype(np.int64) if t.is_int() else a.astype(np.uint64)
    shifted_left = np.left_shift(wide, mag.astype(wide.dtype))
    shifted_right = np.right_shift(wide, mag.astype(wide.dtype))
    if t.is_uint():
        shifted_left = np.where(mag >= bits, 0, shifted_left)
    out = np.where(left, shifted_left, shifted_right)
    return out.astype(t.numpy())
