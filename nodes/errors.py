"""Errors of the node layer: each names the node (by its document id) and what is wrong."""

from __future__ import annotations

from pixelweave.engine.errors import PixelweaveError


class NodeError(PixelweaveError):
    """A node cannot be built: a bad parameter value, an input of the wrong kind, ..."""

    def __init__(self, message: str, node_id: str | None = None) -> None:
        self.node_id = node_id
        self.detail = message
        super().__init__(f"node `{node_id}`: {message}" if node_id else message)

    def at_node(self, node_id: str) -> NodeError:
        """This error, now naming the node it happened in (its subclass and fields kept)."""
        self.node_id = node_id
        self.args = (f"node `{node_id}`: {self.detail}",)
        return self


class ParameterError(NodeError):
    """A parameter value is missing, unknown, of the wrong type or out of range."""


class DocumentError(PixelweaveError):
    """A pipeline document is malformed; `problems` lists every fault found, one line each."""

    def __init__(self, problems: list[str], source: str | None = None) -> None:
        self.problems = list(problems)
        head = f"{source}: " if source else ""
        if len(self.problems) == 1:
            super().__init__(f"{head}{self.problems[0]}")
        else:
            lines = "\n".join(f"  - {p}" for p in self.problems)
            super().__init__(f"{head}{len(self.problems)} problems:\n{lines}")
