"""Ports: the typed inputs and outputs of a node type."""

from __future__ import annotations

from dataclasses import dataclass

from pixelweave.engine.ir.types import Type

# What a port accepts, by layout: "image" is gray or colour.
LAYOUT_GROUPS = {
    "image": ("gray", "colour"),
    "gray": ("gray",),
    "colour": ("colour",),
    "array": ("array",),
    "scalar": ("scalar",),
    "any": ("gray", "colour", "array", "scalar"),
}

# What a port accepts, by element type: a group name or one type's short name.
ELEMENT_GROUPS = {
    "any": ("u8", "u16", "u32", "i8", "i16", "i32", "f32", "f64", "bool"),
    "float": ("f32", "f64"),
    "integer": ("u8", "u16", "u32", "i8", "i16", "i32"),
    "number": ("u8", "u16", "u32", "i8", "i16", "i32", "f32", "f64"),
}


def short_type_name(t: Type) -> str:
    """UInt(8) -> 'u8', Float(32) -> 'f32', Bool() -> 'bool'."""
    if t.is_bool():
        return "bool"
    prefix = "f" if t.is_float() else ("u" if t.is_uint() else "i")
    return f"{prefix}{t.bits}"


@dataclass(frozen=True)
class Port:
    """A named input or output; `layout` and `element` say what it carries."""

    name: str
    layout: str = "image"
    element: str = "any"
    doc: str = ""
    optional: bool = False

    def __post_init__(self) -> None:
        if self.layout not in LAYOUT_GROUPS:
            raise ValueError(f"port `{self.name}`: unknown layout {self.layout!r}")
        if self.element not in ELEMENT_GROUPS and self.element not in ELEMENT_GROUPS["any"]:
            raise ValueError(f"port `{self.name}`: unknown element type {self.element!r}")

    @property
    def layouts(self) -> tuple[str, ...]:
        return LAYOUT_GROUPS[self.layout]

    @property
    def elements(self) -> tuple[str, ...]:
        return ELEMENT_GROUPS.get(self.element, (self.element,))

    def describe(self) -> str:
        """'gray or colour image of f32', as used in messages and tooltips."""
        layout = {"image": "gray or colour image", "any": "value"}.get(self.layout, f"{self.layout} value")
        element = "" if self.element == "any" else f" of {self.element}"
        return f"{layout}{element}"

    def mismatch(self, layout: str, t: Type) -> str | None:
        """Why a value of this layout and type cannot enter this port, or None if it can."""
        if layout not in self.layouts:
            return f"port `{self.name}` takes a {self.describe()}, but is given a {layout} value"
        name = short_type_name(t)
        if name not in self.elements:
            return f"port `{self.name}` takes a {self.describe()}, but is given {name}"
        return None
