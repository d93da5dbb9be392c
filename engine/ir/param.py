"""Run-time inputs: scalar parameters (Param) and input images (ImageParam)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from pixelweave.engine.errors import CompileError, InputError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.coerce import cast, to_expr
from pixelweave.engine.ir.types import Int, Type, type_of_numpy

_param_counter = itertools.count()


class Param(E.Variable):
    """A scalar known only when the pipeline runs (Halide's Param), usable as an Expr."""

    __slots__ = ("_value", "default", "estimate", "range")

    def __init__(
        self,
        t: Type,
        name: str | None = None,
        default: int | float | None = None,
        min: int | float | None = None,  # noqa: A002 - Halide's keyword
        max: int | float | None = None,  # noqa: A002
    ) -> None:
        super().__init__(name if name is not None else f"p{next(_param_counter)}", t, "param", owner=None)
        object.__setattr__(self, "owner", self)
        object.__setattr__(self, "default", None if default is None else self._check(default))
        object.__setattr__(self, "_value", self.default)
        object.__setattr__(self, "range", (min, max))
        object.__setattr__(self, "estimate", None)

    def _check(self, value: Any) -> int | float:
        return check_scalar(self.name, self.type(), value)

    def set(self, value: int | float) -> None:
        object.__setattr__(self, "_value", self._check(value))

    def get(self) -> int | float | None:
        return self._value

    def set_range(self, lo: int | float | None, hi: int | float | None) -> None:
        object.__setattr__(self, "range", (lo, hi))

    def min_value(self) -> E.Expr | None:
        """The declared lower bound as an Expr of the Param's type (None without one)."""
        lo = self.range[0]
        return None if lo is None else scalar_expr(lo, self.type())

    def max_value(self) -> E.Expr | None:
        """The declared upper bound as an Expr of the Param's type (None without one)."""
        hi = self.range[1]
        return None if hi is None else scalar_expr(hi, self.type())

    def set_min_value(self, value: Any) -> None:
        self.set_range(_bound_value(self, value, "min"), self.range[1])

    def set_max_value(self, value: Any) -> None:
        self.set_range(self.range[0], _bound_value(self, value, "max"))

    def set_estimate(self, value: int | float) -> None:
        """The value the automatic scheduler assumes (without one it uses the current value)."""
        object.__setattr__(self, "estimate", self._check(value))


def _bound_value(param: Param, value: Any, which: str) -> int | float:
    """A Python number for a Param's min or max (a constant Expr is accepted, as in Halide)."""
    if isinstance(value, E.Const):
        value = value.value
    elif isinstance(value, E.Expr):
        raise CompileError(f"the {which} value of Param `{param.name}` must be a constant, got {value}")
    return check_scalar(param.name, param.type(), value)


def check_scalar(name: str, t: Type, value: Any) -> int | float:
    """A Python scalar for parameter `name` of type t, or InputError saying why not."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if not t.is_float() and not t.can_represent(value):
            raise InputError(f"value {value} for parameter `{name}` does not fit its type {t}")
        return float(value) if t.is_float() else value
    if isinstance(value, (float, np.floating)):
        if not t.is_float():
            raise InputError(f"parameter `{name}` has integer type {t} but was given the float {value}")
        return float(value)
    raise InputError(f"parameter `{name}` needs a number of type {t}, got {type(value).__name__}")


class Dimension:
    """One dimension of an ImageParam: its min, extent and stride as run-time parameters."""

    def __init__(self, image: ImageParam, index: int) -> None:
        self.image = image
        self.index = index
        name = image.name()
        self._min = E.Variable(f"{name}.min.{index}", Int(32), "param", owner=image)
        self._extent = E.Variable(f"{name}.extent.{index}", Int(32), "param", owner=image)
        self._stride = E.Variable(f"{name}.stride.{index}", Int(32), "param", owner=image)

    def min(self) -> E.Expr:
        return self._min

    def extent(self) -> E.Expr:
        return self._extent

    def max(self) -> E.Expr:
        return self._min + self._extent - 1

    def stride(self) -> E.Expr:
        return self._stride

    def set_estimate(self, min: int, extent: int) -> Dimension:  # noqa: A002 - Halide's keyword
        """Expected (min, extent) of this dimension, read by the automatic scheduler."""
        from pixelweave.engine.ir.func import check_estimate

        what = f"input image `{self.image.name()}`, dimension {self.index}"
        self.image._estimates[self.index] = check_estimate(what, min, extent)
        return self

    def dim(self, i: int) -> Dimension:
        """Dimension i of the same image, so that constraints and estimates chain as in Halide."""
        return self.image.dim(i)

    def set_min(self, value: int) -> Dimension:
        """Require every buffer bound to this image to start at value in this dimension
        (checked before each run; the reference evaluator checks it too)."""
        return self._constrain("min", value)

    def set_extent(self, value: int) -> Dimension:
        """Require every buffer bound to this image to have this extent in this dimension."""
        if isinstance(value, int) and value < 0:
            raise CompileError(f"the extent of input image `{self.image.name()}` must not be negative, got {value}")
        return self._constrain("extent", value)

    def set_bounds(self, min: int, extent: int) -> Dimension:  # noqa: A002 - Halide's keyword
        self.set_min(min)
        return self.set_extent(extent)

    def _constrain(self, field: str, value: Any) -> Dimension:
        if isinstance(value, E.Const):
            value = value.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise CompileError(
                f"the {field} of dimension {self.index} of input image `{self.image.name()}` must be a constant "
                f"integer in Pixelweave, got {value!r}"
            )
        self.image.constraints.setdefault(self.index, {})[field] = value
        return self


class ImageParam:
    """An input image of a given element type and dimensionality (Halide's ImageParam).

    Dimension 0 is the last NumPy axis: a (h, w) array is read as `inp[x, y]`.
    """

    def __init__(self, t: Type, dimensions: int, name: str | None = None) -> None:
        if not isinstance(t, Type):
            raise CompileError(f"ImageParam needs an element type such as UInt(8), got {t!r}")
        if not isinstance(dimensions, int) or dimensions < 1:
            raise CompileError(f"ImageParam needs a positive number of dimensions, got {dimensions!r}")
        self._type = t
        self._name = name if name is not None else f"input{next(_param_counter)}"
        self._dims = [Dimension(self, i) for i in range(dimensions)]
        self._array: np.ndarray | None = None
        self._estimates: dict[int, tuple[int, int]] = {}
        self.constraints: dict[int, dict[str, int]] = {}  # dimension -> "min"/"extent" -> required value
        self._trace_loads = False
        self.wrapping: Any = None  # engine.wrappers.Wrappers: the wrappers made of this image

    def name(self) -> str:
        return self._name

    def type(self) -> Type:
        return self._type

    def dimensions(self) -> int:
        return len(self._dims)

    def dim(self, i: int) -> Dimension:
        if not 0 <= i < len(self._dims):
            raise CompileError(f"ImageParam `{self._name}` has {len(self._dims)} dimensions, not a dimension {i}")
        return self._dims[i]

    def width(self) -> E.Expr:
        return self.dim(0).extent()

    def height(self) -> E.Expr:
        return self.dim(1).extent()

    def channels(self) -> E.Expr:
        return self.dim(2).extent()

    def left(self) -> E.Expr:
        return self.dim(0).min()

    def right(self) -> E.Expr:
        return self.dim(0).max()

    def top(self) -> E.Expr:
        return self.dim(1).min()

    def bottom(self) -> E.Expr:
        return self.dim(1).max()

    def set(self, array: Any) -> None:
        """Bind a NumPy array (its mins are 0) or a `Buffer` (read over its own mins)."""
        from pixelweave.engine.buffer_api import Buffer

        check_image(self, array.array() if isinstance(array, Buffer) else array)
        self._array = array

    def in_(self, consumers: Any = None) -> Any:
        """Halide's ImageParam.in: a Func `w[_0, _1, ...] = image[_0, _1, ...]` that the given
        consumers (every consumer when none is given) read instead of the image, to stage its loads."""
        from pixelweave.engine.wrappers import wrap_in

        return wrap_in(self, consumers)

    def trace_loads(self) -> ImageParam:
        """Report every load from this image as a trace event (Halide's trace_loads)."""
        self._trace_loads = True
        return self

    def traces_loads(self) -> bool:
        return self._trace_loads

    def reset(self) -> None:
        """Forget the bound array or Buffer (Halide's `ImageParam.reset`)."""
        self._array = None

    def set_estimates(self, ranges: list[tuple[int, int]]) -> ImageParam:
        """Expected (min, extent) of every dimension, read by the automatic scheduler."""
        if len(ranges) != len(self._dims):
            raise CompileError(
                f"set_estimates of input image `{self._name}` needs {len(self._dims)} (min, extent) pairs, "
                f"got {len(ranges)}"
            )
        for d, (lo, extent) in zip(self._dims, ranges, strict=True):
            d.set_estimate(lo, extent)
        return self

    def check_constraints(self, mins: list[int], extents: list[int]) -> None:
        """InputError if a buffer over [mins, mins + extents) breaks a dim(i).set_min /
        set_extent / set_bounds constraint (Halide refuses such a buffer when the pipeline runs)."""
        for i, wanted in sorted(self.constraints.items()):
            for field, have in (("min", mins[i]), ("extent", extents[i])):
                if field in wanted and have != wanted[field]:
                    raise InputError(
                        f"input image `{self._name}` is constrained to {field} {wanted[field]} in dimension {i} "
                        f"(dim({i}).set_{field}), but the buffer given has {field} {have}"
                    )

    def estimates(self) -> dict[int, tuple[int, int]]:
        """The (min, extent) estimate of each dimension given so far, by dimension index."""
        return dict(self._estimates)

    def get(self) -> Any:
        """What `set` bound: a NumPy array or a Buffer (None if nothing was)."""
        return self._array

    def __getitem__(self, args: Any) -> E.Call:
        from pixelweave.engine.ir.func import normalize_call_args
        from pixelweave.engine.ir.implicit import expand_call_args

        raw = args if isinstance(args, tuple) else (args,)
        coords = normalize_call_args(
            expand_call_args(raw, len(self._dims), f"input image `{self._name}`"), f"input image `{self._name}`"
        )
        if len(coords) != len(self._dims):
            raise CompileError(
                f"input image `{self._name}` is called with {len(coords)} argument"
                f"{'s' if len(coords) != 1 else ''}, but has {len(self._dims)} dimensions"
            )
        return E.Call(self._type, self._name, coords, "image", self)

    def __repr__(self) -> str:
        return f"ImageParam({self._type!r}, {len(self._dims)}, {self._name!r})"


def check_image(image: ImageParam, array: Any) -> np.ndarray:
    """The array for an input image, or InputError naming the mismatch."""
    if not isinstance(array, np.ndarray):
        raise InputError(f"input `{image.name()}` needs a NumPy array, got {type(array).__name__}")
    try:
        t = type_of_numpy(array.dtype)
    except ValueError:
        t = None
    if t != image.type():
        raise InputError(
            f"input `{image.name()}` has element type {image.type()} "
            f"(NumPy {image.type().numpy()}), but the array given has dtype {array.dtype}"
        )
    if array.ndim != image.dimensions():
        raise InputError(
            f"input `{image.name()}` has {image.dimensions()} dimensions, but the array given has "
            f"{array.ndim} (shape {array.shape})"
        )
    return array


def scalar_expr(value: Any, t: Type) -> E.Expr:
    return cast(t, to_expr(value))
