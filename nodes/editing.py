"""Editing a document the way the editor does: every change is one undoable step.

`EditSession` wraps a Document with an undo/redo history of whole-document snapshots
(documents are small, and a snapshot cannot get out of step with the model the way
hand-written inverse operations can), a dirty marker relative to the last save, and change
listeners. Each edit either applies completely or leaves the document untouched and raises
a NodeError saying why (a forbidden connection, an unknown parameter value, a bad id).
Rapid edits of one value (a dragged slider) merge into one undo step through `merge`.

Nothing here knows about Qt: the editor's canvas, panels and menus call these methods,
and a script can drive exactly the same operations.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pixelweave.nodes.document import DocNode, Document
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.node_type import node_type, node_types, unknown_type_message
from pixelweave.nodes.schedule_spec import rename_referenced_node

CLIPBOARD_FORMAT = "pixelweave.fragment"
Listener = Callable[[str], None]


@dataclass
class _Step:
    label: str
    before: str
    after: str
    merge: str | None


def _snapshot(doc: Document) -> str:
    return json.dumps(doc.to_json(), sort_keys=True)


def _restore(text: str, path: Path | None) -> Document:
    doc = Document.from_json(json.loads(text))
    doc.path = path
    return doc


def upstream_of(doc: Document, node_id: str) -> set[str]:
    """node_id and every node it reads from, directly or not."""
    by_id = {n.id: n for n in doc.nodes}
    seen: set[str] = set()
    stack = [node_id]
    while stack:
        current = stack.pop()
        if current in seen or current not in by_id:
            continue
        seen.add(current)
        stack.extend(src for src, _ in (by_id[current].source(p) or ("", "") for p in by_id[current].inputs) if src)
    return seen


def connection_problem(doc: Document, source: str, source_port: str, target: str, port: str) -> str | None:
    """Why output `source_port` of `source` cannot feed input `port` of `target`, or None.

    Checks the ports exist, the declared layouts and element types overlap, that no cycle
    forms, and then builds the graph with the connection to ask the engine-side port check
    (an output's element type is only known once its inputs are)."""
    from pixelweave.nodes.pipeline_build import build_document

    if not doc.has_node(source) or not doc.has_node(target):
        return "both ends must be nodes of the document"
    if source == target:
        return "a node cannot read its own output"
    src_cls, dst_cls = node_type(doc.node(source).type), node_type(doc.node(target).type)
    out, inp = src_cls.output_port(source_port), dst_cls.input_port(port)
    if out is None:
        return f"a {src_cls.type_name} node has no output `{source_port}`"
    if inp is None:
        return f"a {dst_cls.type_name} node has no input `{port}`"
    if not set(out.layouts) & set(inp.layouts) or not set(out.elements) & set(inp.elements):
        return f"input `{port}` of `{target}` takes a {inp.describe()}, but `{source}` gives a {out.describe()}"
    if target in upstream_of(doc, source):
        return f"`{source}` already reads from `{target}`: this connection would make a cycle"
    trial = Document.from_json(doc.to_json())
    trial.connect(source, target, port, source_port)
    try:
        build_document(trial, check_lowering=False)
    except DocumentError as e:
        for line in e.problems:
            if line.startswith(f"node `{target}`:") and f"port `{port}`" in line:
                return line.split(": ", 1)[1]
    return None


class EditSession:
    """A document under edit: undoable operations, dirty state, change notifications."""

    def __init__(self, document: Document | None = None, *, limit: int = 500) -> None:
        self.document = document or Document()
        self.limit = limit
        self._undo: list[_Step] = []
        self._redo: list[_Step] = []
        self._saved = _snapshot(self.document)
        self._listeners: list[Listener] = []

    # ------------------------------------------------------------------ observing
    def subscribe(self, listener: Listener) -> None:
        """listener(reason) after every change: "edit", "undo", "redo", "load" or "save"."""
        self._listeners.append(listener)

    def _notify(self, reason: str) -> None:
        for listener in list(self._listeners):
            listener(reason)

    # ------------------------------------------------------------------ history
    @property
    def dirty(self) -> bool:
        return _snapshot(self.document) != self._saved

    def can_undo(self) -> bool:
        return bool(self._undo)

    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_label(self) -> str:
        return self._undo[-1].label if self._undo else ""

    def redo_label(self) -> str:
        return self._redo[-1].label if self._redo else ""

    def undo(self) -> None:
        if not self._undo:
            return
        step = self._undo.pop()
        self._redo.append(step)
        self.document = _restore(step.before, self.document.path)
        self._notify("undo")

    def redo(self) -> None:
        if not self._redo:
            return
        step = self._redo.pop()
        self._undo.append(step)
        self.document = _restore(step.after, self.document.path)
        self._notify("redo")

    def end_merge(self) -> None:
        """The next edit starts a new undo step even if it has the same merge key."""
        if self._undo:
            self._undo[-1].merge = None

    def apply(self, label: str, change: Callable[[Document], Any], merge: str | None = None) -> Any:
        """Runs change(document) as one undoable step and returns its result. If it raises,
        the document is left exactly as it was. No step is recorded when nothing changed."""
        before = _snapshot(self.document)
        try:
            result = change(self.document)
        except Exception:
            self.document = _restore(before, self.document.path)
            raise
        after = _snapshot(self.document)
        if after == before:
            return result
        top = self._undo[-1] if self._undo else None
        if merge is not None and top is not None and top.merge == merge and not self._redo:
            top.after = after
        else:
            self._undo.append(_Step(label, before, after, merge))
            del self._undo[: -self.limit]
        self._redo.clear()
        self._notify("edit")
        return result

    # ------------------------------------------------------------------ whole documents
    def load(self, document: Document, *, dirty: bool = False) -> None:
        """Replaces the document and forgets the history (opening a file, New)."""
        self.document = document
        self._undo.clear()
        self._redo.clear()
        self._saved = "" if dirty else _snapshot(document)
        self._notify("load")

    def save(self, path: str | Path | None = None) -> Path:
        written = self.document.save(path)
        self._saved = _snapshot(self.document)
        self._notify("save")
        return written

    def replace(self, document: Document, label: str) -> None:
        """Replaces the whole content as one undoable step (restoring a benchmarked schedule)."""
        text = _snapshot(document)

        def change(doc: Document) -> None:
            fresh = _restore(text, doc.path)
            doc.name, doc.description, doc.nodes, doc.groups = fresh.name, fresh.description, fresh.nodes, fresh.groups

        self.apply(label, change)

    # ------------------------------------------------------------------ nodes
    def add_node(
        self, type_name: str, position: tuple[float, float] = (0, 0), params: dict[str, Any] | None = None
    ) -> str:
        """Adds a node of a known type; returns its new id."""
        if type_name not in node_types():
            raise NodeError(unknown_type_message(type_name))
        title = node_type(type_name).title
        return self.apply(f"Add {title}", lambda doc: doc.add_node(type_name, params=params, position=position).id)

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        ids = [i for i in node_ids if self.document.has_node(i)]
        if not ids:
            return
        label = f"Delete {ids[0]}" if len(ids) == 1 else f"Delete {len(ids)} nodes"

        def change(doc: Document) -> None:
            for node_id in ids:
                doc.remove_node(node_id)

        self.apply(label, change)

    def rename_node(self, old: str, new: str) -> None:
        self.apply(f"Rename {old} to {new}", lambda doc: doc.rename_node(old, new))

    def move_nodes(self, positions: dict[str, tuple[float, float]]) -> None:
        """Sets editor positions (one undo step for a whole dragged selection)."""
        moved = {k: (round(float(x), 1), round(float(y), 1)) for k, (x, y) in positions.items()}

        def change(doc: Document) -> None:
            for node_id, pos in moved.items():
                doc.node(node_id).position = pos

        label = f"Move {next(iter(moved))}" if len(moved) == 1 else f"Move {len(moved)} nodes"
        self.apply(label, change)

    # ------------------------------------------------------------------ connections
    def connect(self, source: str, source_port: str, target: str, port: str) -> None:
        """Connects, replacing what the input was connected to; NodeError with the reason
        when the types forbid it or a cycle would form."""
        why = connection_problem(self.document, source, source_port, target, port)
        if why is not None:
            raise NodeError(f"cannot connect `{source}.{source_port}` to `{target}.{port}`: {why}", target)
        self.apply(f"Connect {source} to {target}", lambda doc: doc.connect(source, target, port, source_port))

    def disconnect(self, target: str, port: str) -> None:
        self.apply(f"Disconnect {target}.{port}", lambda doc: doc.disconnect(target, port))

    # ------------------------------------------------------------------ parameters and schedules
    def set_param(self, node_id: str, name: str, value: Any, *, merge: bool = False) -> None:
        """Sets a parameter; with merge, consecutive changes of the same parameter (a slider
        being dragged) become one undo step."""
        key = f"param:{node_id}:{name}" if merge else None
        self.apply(f"Change {node_id}.{name}", lambda doc: doc.set_param(node_id, name, value), merge=key)

    def set_schedule(self, node_id: str, schedule: dict[str, list[list[Any]]], target: str = "host") -> None:
        """Replaces a node's whole schedule for target ("host": its CPU schedule, or
        "opencl"); NodeError naming every static problem. One undo step."""

        def change(doc: Document) -> None:
            node = doc.node(node_id)
            for key in list(node.schedule_for(target)):
                doc.set_schedule(node_id, key, [], target)
            for key, directives in schedule.items():
                doc.set_schedule(node_id, key, directives, target)

        label = f"Schedule {node_id}" if target == "host" else f"OpenCL schedule {node_id}"
        self.apply(label, change)

    # ------------------------------------------------------------------ clipboard
    def copy(self, node_ids: Iterable[str]) -> str:
        """The selected nodes as clipboard text: their JSON with the connections among them."""
        ids = [i for i in node_ids if self.document.has_node(i)]
        nodes = []
        for node_id in ids:
            data = self.document.node(node_id).to_json()
            data["inputs"] = {p: ref for p, ref in data.get("inputs", {}).items() if ref.split(".")[0] in ids}
            nodes.append(data)
        return json.dumps({"format": CLIPBOARD_FORMAT, "nodes": nodes})

    def paste(self, text: str, offset: tuple[float, float] = (40, 40)) -> list[str]:
        """Adds the nodes of clipboard text with fresh ids, shifted by offset; returns the new
        ids. NodeError if the text is not a Pixelweave fragment."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            raise NodeError("the clipboard does not hold Pixelweave nodes") from None
        nodes = data.get("nodes") if isinstance(data, dict) else None
        if not isinstance(nodes, list) or data.get("format") != CLIPBOARD_FORMAT:
            raise NodeError("the clipboard does not hold Pixelweave nodes")
        fragment = Document.from_json({"format": "pixelweave.pipeline", "version": 1, "nodes": data["nodes"]})
        return self.apply(f"Paste {len(fragment.nodes)} node(s)", lambda doc: _insert(doc, fragment.nodes, offset))

    def duplicate(self, node_ids: Iterable[str]) -> list[str]:
        return self.paste(self.copy(node_ids))


def _insert(doc: Document, nodes: list[DocNode], offset: tuple[float, float]) -> list[str]:
    """Adds copies of nodes with new ids, remapping the connections among them."""
    renamed: dict[str, str] = {}
    for node in nodes:
        new_id = doc.unique_id(node.id)
        renamed[node.id] = new_id
        x, y = node.position
        doc.nodes.append(
            DocNode(
                new_id,
                node.type,
                dict(node.params),
                {},
                json.loads(json.dumps(node.schedule)),
                (x + offset[0], y + offset[1]),
                json.loads(json.dumps(node.schedules)),
            )
        )
    for node in nodes:
        for port, ref in node.inputs.items():
            src, _, out = ref.partition(".")
            if src in renamed:
                doc.node(renamed[node.id]).inputs[port] = f"{renamed[src]}.{out}"
        for schedule in doc.node(renamed[node.id]).all_schedules().values():
            for directives in schedule.values():
                for d in directives:
                    rename_referenced_node(d, renamed)
    return list(renamed.values())
