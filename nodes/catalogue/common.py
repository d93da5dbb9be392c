"""Parameters and helpers that several categories share."""

from __future__ import annotations

from pixelweave.nodes.context import BOUNDARY_MODES
from pixelweave.nodes.parameters import Parameter

BOUNDARY = Parameter(
    "boundary",
    "choice",
    "clamp",
    choices=BOUNDARY_MODES,
    doc="What the stencil reads beyond the image edge: clamp (repeat the edge pixel), constant (zero), "
    "wrap (tile the image), mirror (abc|cba), mirror_interior (abc|ba), none (the input must be "
    "large enough)",
)

ELEMENT_TYPES = ("u8", "u16", "f32")
