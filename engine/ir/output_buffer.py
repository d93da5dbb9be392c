"""`Func.output_buffer()`: constraints on the buffer an output Func is realized into (Halide's
OutputImageParam). Mins, extents and strides given here are checked before every run;
strides also choose the layout `realize(sizes)` allocates (e.g. interleaved channels)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pixelweave.engine.errors import CompileError, InputError

if TYPE_CHECKING:
    from pixelweave.engine.ir.func import Func


def _constant(value: Any, what: str) -> int:
    from pixelweave.engine.ir.expr import Const

    if isinstance(value, Const):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, int):
        raise CompileError(f"{what} must be a constant integer, got {value!r}")
    return value


class OutputDimension:
    """One dimension of an output buffer: set_min / set_extent / set_bounds / set_stride."""

    def __init__(self, owner: OutputBuffer, index: int) -> None:
        self._owner = owner
        self._index = index

    def _set(self, field: str, value: Any) -> OutputDimension:
        what = f"the {field} of dimension {self._index} of output `{self._owner.name()}`"
        self._owner.constraints.setdefault(self._index, {})[field] = _constant(value, what)
        return self

    def dim(self, i: int) -> OutputDimension:
        """Dimension i of the same output buffer, so that constraints and estimates chain as in Halide."""
        return self._owner.dim(i)

    def set_min(self, value: Any) -> OutputDimension:
        return self._set("min", value)

    def set_extent(self, value: Any) -> OutputDimension:
        if _constant(value, "an extent") < 0:
            raise CompileError(f"the extent of output `{self._owner.name()}` must not be negative, got {value}")
        return self._set("extent", value)

    def set_bounds(self, min: Any, extent: Any) -> OutputDimension:  # noqa: A002 - Halide's keyword
        self.set_min(min)
        return self.set_extent(extent)

    def set_stride(self, value: Any) -> OutputDimension:
        if _constant(value, "a stride") < 1:
            raise CompileError(f"the stride of output `{self._owner.name()}` must be positive, got {value}")
        return self._set("stride", value)

    def set_estimate(self, min: int, extent: int) -> OutputDimension:  # noqa: A002
        func = self._owner.func
        func.set_estimate(func.args()[self._index], min, extent)
        return self

    def min(self) -> int | None:
        return self._owner.constraints.get(self._index, {}).get("min")

    def extent(self) -> int | None:
        return self._owner.constraints.get(self._index, {}).get("extent")

    def stride(self) -> int | None:
        return self._owner.constraints.get(self._index, {}).get("stride")


class OutputBuffer:
    """The constraints on an output Func's buffer (Halide's `Func.output_buffer()`)."""

    def __init__(self, func: Func) -> None:
        self.func = func
        self.constraints: dict[int, dict[str, int]] = {}

    def name(self) -> str:
        return self.func.name()

    def dimensions(self) -> int:
        return self.func.dimensions()

    def type(self) -> Any:
        return self.func.type()

    def dim(self, i: int) -> OutputDimension:
        if not 0 <= i < self.func.dimensions():
            raise CompileError(f"output `{self.name()}` has {self.func.dimensions()} dimensions, not a dimension {i}")
        return OutputDimension(self, i)

    def set_estimates(self, ranges: list[tuple[int, int]]) -> OutputBuffer:
        self.func.set_estimates(ranges)
        return self

    def check(self, mins: list[int], extents: list[int], strides: list[int] | None) -> None:
        """InputError if realizing over [mins, mins + extents) with these strides breaks a constraint."""
        for i, c in sorted(self.constraints.items()):
            for field, have in (
                ("min", mins[i]),
                ("extent", extents[i]),
                ("stride", None if strides is None else strides[i]),
            ):
                want = c.get(field)
                if (
                    want is not None
                    and have is not None
                    and have != want
                    and not (field == "stride" and extents[i] <= 1)
                ):
                    raise InputError(
                        f"output `{self.name()}` is constrained to {field} {want} in dimension {i} "
                        f"(output_buffer().dim({i})), but is realized with {field} {have}"
                    )

    def storage_order(self) -> list[int]:
        """Dimensions from innermost (smallest stride) to outermost, as the stride
        constraints ask; unconstrained dimensions keep their order after the constrained
        ones that are smaller."""
        n = self.func.dimensions()
        strides = {i: c["stride"] for i, c in self.constraints.items() if "stride" in c}
        if not strides:
            return list(range(n))
        return sorted(range(n), key=lambda i: (strides.get(i, float("inf")), i))


def check_output_layout(func: Func, mins: list[int], extents: list[int], strides: list[int] | None) -> None:
    """Apply func's output_buffer() constraints, if it has any."""
    constraints = func.output_constraints()
    if constraints is not None:
        constraints.check(mins, extents, strides)
