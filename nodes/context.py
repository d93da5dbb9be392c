"""What a node's build() works with: its id, the shared Vars, and factories that keep the
node id in every Func and parameter name (so the loop nest and profile speak the user's
node names)."""

from __future__ import annotations

from typing import Any

from pixelweave.engine.ir import boundary
from pixelweave.engine.ir.expr import Expr, int_const
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.values import Value

import pixelweave as pw

BOUNDARY_MODES = ("clamp", "constant", "wrap", "mirror", "mirror_interior", "none")


class BuildContext:
    """Handed to NodeType.build(); collects the Funcs and inputs the node creates."""

    x = pw.Var("x")
    y = pw.Var("y")
    c = pw.Var("c")
    i = pw.Var("i")

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.funcs: dict[str, pw.Func] = {}
        self.image_params: list[pw.ImageParam] = []
        self.scalar_params: list[pw.Param] = []
        self.values: dict[str, Any] = {}  # the checked parameter values, plain even when run-time

    def func(self, local_name: str) -> pw.Func:
        """A new Func named `<node id>.<local_name>`; schedules refer to it by local name."""
        if local_name in self.funcs:
            raise NodeError(f"build() made two Funcs called {local_name!r}", self.node_id)
        f = pw.Func(f"{self.node_id}.{local_name}")
        self.funcs[local_name] = f
        return f

    def args(self, value: Value) -> tuple[pw.Var, ...]:
        """The pure Vars of a value's layout: (x, y), (x, y, c), (i,) or ()."""
        return {"gray": (self.x, self.y), "colour": (self.x, self.y, self.c), "array": (self.i,), "scalar": ()}[
            value.layout
        ]

    def pointwise(self, local_name: str, fn: Any, first: Value, *others: Value) -> Value:
        """A new Func over the geometry of `first`: out[v] = fn(first[v], other[v'], ...), where
        a gray or scalar `other` is broadcast across the channels (or the pixels) of `first`."""
        args = self.args(first)
        f = self.func(local_name)
        operands = [first[args]] + [_broadcast(o, args, self) for o in others]
        f[args] = fn(*operands)
        return first.with_func(f)

    def error(self, message: str) -> NodeError:
        return NodeError(message, self.node_id)

    def image_param(self, t: pw.Type, dimensions: int) -> pw.ImageParam:
        """The node's input image, named by the node id (the name given on the command line)."""
        p = pw.ImageParam(t, dimensions, self.node_id)
        self.image_params.append(p)
        return p

    def bounded(self, value: Value, mode: str, constant: float | Expr = 0.0, local_name: str = "bounded") -> Value:
        """The value extended beyond its extents in x and y by a boundary condition:
        clamp (repeat edge), constant, wrap (repeat image), mirror (abccba),
        mirror_interior (abcba), or none (reads outside fail the bounds check). A run-time
        constant (an Expr) is rounded to nearest by the generated code for integer images."""
        if mode == "none":
            return value
        if mode not in BOUNDARY_MODES:
            raise self.error(f"unknown boundary condition {mode!r}; choose one of {', '.join(BOUNDARY_MODES)}")
        bounds = [(0, value.width), (0, value.height)] if len(value.extents) >= 2 else [(0, value.extents[0])]
        name = f"{self.node_id}.{local_name}"
        if local_name in self.funcs:
            raise NodeError(f"build() made two Funcs called {local_name!r}", self.node_id)
        if mode == "constant":
            t = value.type
            if isinstance(constant, Expr):
                fill = pw.cast(t, constant if t.is_float() else pw.round(constant))
            else:
                fill = pw.cast(t, float(constant) if t.is_float() else round(constant))
            f = boundary.constant_exterior(value.func, fill, bounds, name=name)
        else:
            make = {
                "clamp": boundary.repeat_edge,
                "wrap": boundary.repeat_image,
                "mirror": boundary.mirror_image,
                "mirror_interior": boundary.mirror_interior,
            }[mode]
            f = make(value.func, bounds, name=name)
        self.funcs[local_name] = f
        return value.with_func(f)

    @staticmethod
    def extent(n: int) -> Expr:
        """A constant extent (a histogram's 256 bins, a colour image's 3 channels)."""
        return int_const(n)


def _broadcast(value: Value, args: tuple[pw.Var, ...], ctx: BuildContext) -> Any:
    """value read at args, broadcast when it has fewer dimensions (gray over colour, scalar)."""
    if value.layout == "scalar":
        return value[()]
    if len(args) == 3 and value.layout == "gray":
        return value[args[0], args[1]]
    if len(args) != len(ctx.args(value)):
        raise ctx.error(f"cannot combine a {value.layout} value with an image of {len(args)} dimensions")
    return value[args]
