"""Boundary conditions: an image made readable everywhere, for the nodes after it."""

from __future__ import annotations

from pixelweave.nodes.context import BOUNDARY_MODES, BuildContext
from pixelweave.nodes.convert import full_scale
from pixelweave.nodes.node_type import NodeType
from pixelweave.nodes.parameters import Parameter
from pixelweave.nodes.ports import Port
from pixelweave.nodes.values import Value

CATEGORY = "Boundary conditions"


class BoundaryCondition(NodeType):
    """Extends an image beyond its edges, so that the nodes after it may read anywhere.

    The size is unchanged: this matters before a node whose own boundary is "none", before
    a custom expression reading far away (`a[x-20, y+15]`), or before a crop or pad that
    reaches outside. Modes: clamp (repeat the edge pixel, aaa|abc|ccc), constant (a fixed
    level outside), wrap (tile the image, abc|abc|abc), mirror (reflect with the edge pixel
    repeated, cba|abc|cba), mirror_interior (reflect about the edge pixel, cb|abc|ba).
    """

    category = CATEGORY
    inputs = (Port("image", "image", "number"),)
    params = (
        Parameter(
            "mode",
            "choice",
            "clamp",
            choices=tuple(m for m in BOUNDARY_MODES if m != "none"),
            doc="how the image continues beyond its edges",
        ),
        Parameter(
            "constant",
            "float",
            0.0,
            minimum=0.0,
            maximum=1.0,
            doc="the level outside the image in mode constant, 1 being white (255 for u8, 65535 for u16)",
            runtime=True,
        ),
    )

    def build(self, ctx: BuildContext, image: Value, mode: str, constant: float) -> Value:
        level = constant * full_scale(image.type)  # ctx.bounded rounds it for integer images
        return ctx.bounded(image, mode, level, local_name="out")
