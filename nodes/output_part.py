"""The part of a document that makes its outputs: the output nodes and every node they read
from, directly or not. A document under edit often holds more (a scratch node dropped in to
try something, a branch not wired yet); exporting, benchmarking and the loop nest concern
only this part, and say which nodes were left out."""

from __future__ import annotations

from pixelweave.nodes.document import Document
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.node_type import node_types


def output_ids(doc: Document) -> list[str]:
    """Ids of the output nodes, in document order (nodes of unknown types are not outputs)."""
    types = node_types()
    return [n.id for n in doc.nodes if getattr(types.get(n.type), "is_output", False)]


def nodes_reaching_outputs(doc: Document) -> set[str]:
    """The output nodes and every node they read from."""
    kept: set[str] = set()
    for node_id in output_ids(doc):
        kept |= upstream_of(doc, node_id)
    return kept


def output_part(doc: Document) -> tuple[Document, list[str]]:
    """A copy of the document holding only what its outputs read, and the ids of the nodes
    left out, in document order. Without outputs nothing is kept."""
    kept = nodes_reaching_outputs(doc)
    left_out = [n.id for n in doc.nodes if n.id not in kept]
    part = Document.from_json(doc.to_json())
    part.path = doc.path  # sample images are found relative to the document's folder
    for node_id in left_out:
        part.remove_node(node_id)
    return part, left_out


def left_out_text(left_out: list[str]) -> str:
    """One sentence naming the nodes left out, or "" when none was."""
    if not left_out:
        return ""
    names = ", ".join(f"`{n}`" for n in left_out)
    return f"left out {len(left_out)} node{'s' if len(left_out) != 1 else ''} not connected to an output: {names}"
