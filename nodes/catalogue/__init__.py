"""The node catalogue: one module per category; importing this registers every node type."""

from nodes.catalogue import inputs_outputs, stencils  # noqa: F401
