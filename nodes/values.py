"""What flows along an edge of the node graph: an engine Func with its layout and extents.

Carrying the extents (as engine expressions of the input sizes and parameters) lets a
stencil node put a boundary condition on its input and lets the document know the size of
each output without running anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pixelweave.engine.ir.expr import Expr
from pixelweave.engine.ir.func import Func, FuncRef
from pixelweave.engine.ir.types import Type

# Layouts, by the Func's dimensions: gray f[x, y]; colour f[x, y, c] (planar);
# array f[i] (a histogram, a lookup table, row sums); scalar f[()] (a whole-image sum).
LAYOUT_DIMENSIONS = {"gray": 2, "colour": 3, "array": 1, "scalar": 0}


@dataclass(frozen=True)
class Value:
    """An image (or array, or scalar) produced by a node's output port."""

    func: Func
    layout: str
    extents: tuple[Expr, ...]

    def __post_init__(self) -> None:
        want = LAYOUT_DIMENSIONS[self.layout]
        if len(self.extents) != want:
            raise ValueError(f"a {self.layout} value needs {want} extents, got {len(self.extents)}")

    @property
    def type(self) -> Type:
        return self.func.type()

    @property
    def width(self) -> Expr:
        return self.extents[0]

    @property
    def height(self) -> Expr:
        return self.extents[1]

    @property
    def channels(self) -> Expr:
        return self.extents[2]

    def __getitem__(self, args: Any) -> FuncRef:
        return self.func[args]

    def with_func(self, func: Func, layout: str | None = None, extents: tuple[Expr, ...] | None = None) -> Value:
        """The same geometry carried by another Func (the usual result of a point operation)."""
        return Value(func, layout or self.layout, self.extents if extents is None else extents)
