"""The node-graph canvas: NodeGraphQt showing the document, and the user's gestures on it
turned into EditSession operations.

The document is the source of truth. NodeGraphQt never changes its own model in answer to
a gesture here: the graph's slots for connecting, slicing, moving, renaming, dropping and
Tab-searching are overridden to call the EditSession, and `sync()` then brings the view in
line with the document (adding, removing and reconnecting only what differs, so selection
and positions survive). A refused connection is therefore simply not drawn after the
sync, and the reason is reported through `message`.
"""

from __future__ import annotations

from typing import Any

from NodeGraphQt import BackdropNode, BaseNode, NodeGraph
from NodeGraphQt.constants import PortTypeEnum
from pixelweave.app.editor import compat
from pixelweave.app.editor.palette import type_name_from_mime
from pixelweave.nodes.document import Document
from pixelweave.nodes.editing import EditSession
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.node_type import node_type, node_types
from PySide6 import QtCore, QtGui

IDENTIFIER = "pixelweave"
LAYOUT_COLOURS = {
    "gray": (160, 160, 160),
    "colour": (220, 120, 70),
    "image": (200, 150, 90),
    "array": (90, 170, 220),
    "scalar": (150, 210, 110),
    "any": (200, 200, 200),
}
CATEGORY_COLOURS = {
    "Inputs and outputs": (38, 70, 52),
    "Point and colour": (44, 58, 82),
    "Stencils": (70, 50, 78),
    "Reductions": (78, 60, 40),
    "Resampling": (40, 70, 74),
    "Blends": (74, 44, 56),
    "Boundary conditions": (58, 58, 58),
    "Custom": (64, 64, 40),
}
ERROR_COLOUR = (150, 36, 36)
READABLE_SCALE = 0.75  # below this a node's title is too small to read
SETTLE_MS = 3000  # after opening a document, resizes of the canvas re-frame it (panels filling in)
_GESTURES = (QtCore.QEvent.Type.Wheel, QtCore.QEvent.Type.MouseButtonPress)


class PipelineNode(BaseNode):
    """Base of the NodeGraphQt classes made for each node type (see `node_class`)."""

    __identifier__ = IDENTIFIER
    NODE_NAME = "node"
    TYPE_NAME = ""

    def __init__(self) -> None:
        super().__init__()
        cls = node_type(self.TYPE_NAME)
        for port in cls.inputs:
            self.add_input(port.name, color=LAYOUT_COLOURS.get(port.layout))
        for port in cls.outputs:
            self.add_output(port.name, multi_output=True, color=LAYOUT_COLOURS.get(port.layout))
        self.set_color(*CATEGORY_COLOURS.get(cls.category, (50, 50, 50)))
        self.pw_id = ""


def node_class(type_name: str) -> type[PipelineNode]:
    """A NodeGraphQt node class for one node type (its Tab-search entry is the title)."""
    cls = node_type(type_name)
    return type(f"Pw_{type_name}", (PipelineNode,), {"NODE_NAME": cls.title, "TYPE_NAME": type_name})


def _identifier(type_name: str) -> str:
    return f"{IDENTIFIER}.Pw_{type_name}"


class DocumentGraph(NodeGraph):
    """NodeGraph whose gesture slots report to the canvas instead of editing its own model."""

    def __init__(self, canvas: GraphCanvas) -> None:
        super().__init__()
        self._canvas = canvas

    def _on_search_triggered(self, node_type: str, pos: Any) -> None:  # Tab search
        self._canvas.add_from_identifier(node_type, (pos[0], pos[1]))

    def _on_node_data_dropped(self, mimedata: QtCore.QMimeData, pos: QtCore.QPointF) -> None:
        type_name = type_name_from_mime(mimedata)
        if type_name:
            self._canvas.add_node(type_name, (pos.x(), pos.y()))

    def _on_connection_changed(self, disconnected: list, connected: list) -> None:
        self._canvas.change_connections(disconnected, connected)

    def _on_connection_sliced(self, ports: list) -> None:
        self._canvas.change_connections(ports, [])

    def _on_insert_node(self, pipe: Any, node_id: str, prev_node_pos: dict) -> None:
        self._canvas.sync()  # dropping a node on a pipe does not rewire: the document decides

    def _on_nodes_moved(self, node_data: dict) -> None:
        self._canvas.nodes_moved([view.id for view in node_data])

    def _on_node_name_changed(self, node_id: str, name: str) -> None:
        self._canvas.rename(node_id, name)

    def _on_property_bin_changed(self, node_id: str, prop_name: str, prop_value: Any) -> None:
        """Parameters are edited in the editor's own properties panel, never in NodeGraphQt."""


class GraphCanvas(QtCore.QObject):
    """Keeps a NodeGraphQt graph equal to an EditSession's document."""

    selection_changed = QtCore.Signal(list)  # document ids of the selected nodes
    message = QtCore.Signal(str, str)  # level ("error", "info"), text

    def __init__(self, session: EditSession, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        compat.apply()
        self.session = session
        self.graph = DocumentGraph(self)
        # NodeGraphQt's own cycle check refuses a pipe before the document is asked, silently;
        # the document refuses it too, and says why (see change_connections)
        self.graph.set_acyclic(False)
        self._registered: set[str] = set()
        self.register_node_types()
        self.widget = self.graph.widget
        self._views: dict[str, PipelineNode] = {}
        self._groups: dict[str, BackdropNode] = {}
        self._syncing = False
        self._settling = QtCore.QElapsedTimer()
        self._quiet_viewer_actions()
        self.graph.viewer().installEventFilter(self)
        self.graph.viewer().viewport().installEventFilter(self)  # wheel and mouse arrive there
        search = QtGui.QShortcut(QtGui.QKeySequence(QtCore.Qt.Key.Key_Tab), self.graph.viewer())
        search.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        search.activated.connect(self.open_search)
        self.graph.node_selection_changed.connect(lambda *_: self._emit_selection())
        self.graph.node_selected.connect(lambda *_: self._emit_selection())
        self.sync()

    def _quiet_viewer_actions(self) -> None:
        """NodeGraphQt gives its viewer Undo and Redo actions (Ctrl+Z, Ctrl+Shift+Z) on its own
        undo stack, which this canvas never uses: with the window's Edit menu holding the same
        keys, Qt found them ambiguous and did nothing while the canvas had focus. The document's
        history is the only one, so these actions go."""
        viewer = self.graph.viewer()
        for name in ("_undo_action", "_redo_action"):
            action = getattr(viewer, name, None)
            if action is not None:
                action.setShortcuts([])
                action.setEnabled(False)
                action.setVisible(False)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt's name
        """The viewer's hint under the cursor ("CTRL: Deselect Nodes") and its modifier state go
        when the key's release may never reach it: focus lost to a dialog or a menu, the window
        left. While a document just opened settles, a resized canvas is framed again, until the
        person wheels or clicks in it."""
        kinds = (QtCore.QEvent.Type.FocusOut, QtCore.QEvent.Type.WindowDeactivate, QtCore.QEvent.Type.Leave)
        viewer = self.graph.viewer()
        if watched is viewer.viewport() and event.type() in _GESTURES:
            self._settling.invalidate()  # the person moves the view now: leave it to them
        elif watched is viewer:
            if event.type() in kinds:
                self.hide_key_hint()
            elif event.type() == QtCore.QEvent.Type.Resize and self._settling.isValid() and self._settled_soon():
                QtCore.QTimer.singleShot(0, lambda: self.frame_all(readable=True, settle=False))
        return super().eventFilter(watched, event)

    def _settled_soon(self) -> bool:
        return self._settling.elapsed() < SETTLE_MS

    def hide_key_hint(self) -> None:
        viewer = self.graph.viewer()
        viewer.CTRL_state = viewer.SHIFT_state = viewer.ALT_state = False
        viewer._cursor_text.setPlainText("")
        viewer._cursor_text.setVisible(False)

    def key_hint(self) -> str:
        """The hint the viewer shows under the cursor now ("" when none)."""
        text = self.graph.viewer()._cursor_text
        return text.toPlainText().strip() if text.isVisible() else ""

    # ------------------------------------------------------------------ queries
    def view_of(self, node_id: str) -> PipelineNode | None:
        return self._views.get(node_id)

    def selected_ids(self) -> list[str]:
        return [n.pw_id for n in self.graph.selected_nodes() if isinstance(n, PipelineNode) and n.pw_id]

    def _doc_id(self, view_id: str) -> str | None:
        node = self.graph.get_node_by_id(view_id)
        return getattr(node, "pw_id", None) or None

    def select(self, node_ids: list[str]) -> None:
        self.graph.clear_selection()
        for node_id in node_ids:
            view = self._views.get(node_id)
            if view is not None:
                view.set_selected(True)
        self._emit_selection()

    def _emit_selection(self) -> None:
        if not self._syncing:
            self.selection_changed.emit(self.selected_ids())

    # ------------------------------------------------------------------ gestures -> session
    def register_node_types(self) -> None:
        """Makes every node type registered now placeable (generator node types are added
        while the editor runs; a reloaded one keeps its class, which reads its ports anew)."""
        new = [name for name in node_types() if name not in self._registered]
        self.graph.register_nodes([node_class(name) for name in new])
        self._registered.update(new)

    def add_node(self, type_name: str, position: tuple[float, float]) -> str | None:
        try:
            node_id = self.session.add_node(type_name, position)
        except NodeError as e:
            self.message.emit("error", str(e))
            return None
        self.select([node_id])
        return node_id

    def add_from_identifier(self, identifier: str, position: tuple[float, float]) -> None:
        prefix = f"{IDENTIFIER}.Pw_"
        if identifier.startswith(prefix):
            self.add_node(identifier[len(prefix) :], position)

    def _ends(self, pair: list) -> tuple[str, str, str, str] | None:
        """(source, source port, target, target port) of a pair of port items, any order."""
        a, b = pair
        if a.port_type == PortTypeEnum.OUT.value:
            a, b = b, a
        target, source = self._doc_id(a.node.id), self._doc_id(b.node.id)
        if target is None or source is None:
            return None
        return source, b.name, target, a.name

    def change_connections(self, disconnected: list, connected: list) -> None:
        """A pipe drawn, moved or cut: applied to the document as one step, or refused."""
        removed = [e for e in map(self._ends, disconnected) if e]
        added = [e for e in map(self._ends, connected) if e]
        if added:
            source, source_port, target, port = added[0]
            try:
                self.session.connect(source, source_port, target, port)
                extra_removed = [r for r in removed if (r[2], r[3]) != (target, port)]
                for _, _, t, p in extra_removed:
                    self.session.disconnect(t, p)
            except NodeError as e:
                self.message.emit("error", str(e))
        else:
            for _, _, target, port in removed:
                self.session.disconnect(target, port)
        self.sync()

    def nodes_moved(self, view_ids: list[str]) -> None:
        positions = {}
        for view_id in view_ids:
            node = self.graph.get_node_by_id(view_id)
            doc_id = getattr(node, "pw_id", None)
            if doc_id:
                positions[doc_id] = tuple(node.pos())
        if positions:
            self.session.move_nodes(positions)

    def rename(self, view_id: str, name: str) -> None:
        old = self._doc_id(view_id)
        if old is None or old == name:
            return
        try:
            self.session.rename_node(old, name)
        except NodeError as e:
            self.message.emit("error", f"cannot rename `{old}`: {e.detail}")
        self.sync()

    def current_positions(self) -> dict[str, tuple[float, float]]:
        return {node_id: tuple(view.pos()) for node_id, view in self._views.items()}

    # ------------------------------------------------------------------ document -> view
    def sync(self) -> None:
        """Makes the view show the session's document; only differences are touched."""
        self._syncing = True
        try:
            doc = self.session.document
            self._sync_nodes(doc)
            self._sync_connections(doc)
            self._sync_groups(doc)
        finally:
            self._syncing = False

    def _sync_nodes(self, doc: Document) -> None:
        wanted = {n.id: n for n in doc.nodes}
        for node_id in [i for i in self._views if i not in wanted or wanted[i].type != self._views[i].TYPE_NAME]:
            self.graph.delete_node(self._views.pop(node_id), push_undo=False)
        for node in doc.nodes:
            view = self._views.get(node.id)
            if view is None:
                view = self.graph.create_node(
                    _identifier(node.type), name=node.id, selected=False, pos=list(node.position), push_undo=False
                )
                view.pw_id = node.id
                self._views[node.id] = view
            if tuple(view.pos()) != tuple(node.position):
                view.set_pos(*node.position)
            if view.name() != node.id:
                view.view.name = node.id
                view.model.name = node.id

    def _sync_connections(self, doc: Document) -> None:
        wanted = set()
        for node in doc.nodes:
            for port in node.inputs:
                src = node.source(port)
                if src and src[0] in self._views:
                    wanted.add((src[0], src[1], node.id, port))
        present = set()
        for node_id, view in self._views.items():
            for port_name, port in view.inputs().items():
                for out in port.connected_ports():
                    present.add((getattr(out.node(), "pw_id", ""), out.name(), node_id, port_name))
        for source, source_port, target, port in present - wanted:
            inp = self._views[target].inputs().get(port)
            out = self._views[source].outputs().get(source_port) if source in self._views else None
            if inp is not None and out is not None:
                inp.disconnect_from(out, push_undo=False)
        for source, source_port, target, port in sorted(wanted - present):
            inp = self._views[target].inputs().get(port)
            out = self._views[source].outputs().get(source_port)
            if inp is not None and out is not None:
                out.connect_to(inp, push_undo=False)

    def _sync_groups(self, doc: Document) -> None:
        groups = {g.name: g for g in getattr(doc, "groups", [])}
        for name in [n for n in self._groups if n not in groups]:
            self.graph.delete_node(self._groups.pop(name), push_undo=False)
        for name, group in groups.items():
            backdrop = self._groups.get(name)
            if backdrop is None:
                backdrop = self.graph.create_node(BackdropNode.type_, name=name, selected=False, push_undo=False)
                self._groups[name] = backdrop
            backdrop.set_color(*group.colour)
            members = [self._views[i] for i in group.nodes if i in self._views]
            if members:
                backdrop.wrap_nodes(members)

    # ------------------------------------------------------------------ problems on nodes
    def show_problems(self, problems: dict[str, list[str]]) -> None:
        """Tints nodes that have problems and puts the messages in their tooltips."""
        for node_id, view in self._views.items():
            messages = problems.get(node_id, [])
            cls = node_type(view.TYPE_NAME)
            colour = ERROR_COLOUR if messages else CATEGORY_COLOURS.get(cls.category, (50, 50, 50))
            if tuple(view.color()[:3]) != colour:
                view.set_color(*colour)
            tip = f"{cls.title} ({cls.type_name})\n{cls.summary()}"
            if messages:
                tip += "\n\n" + "\n".join(f"⚠ {m}" for m in messages)
            view.view.setToolTip(tip)

    def open_search(self) -> None:
        """NodeGraphQt's Tab search popup at the cursor: type a node's title, Enter adds it."""
        viewer = self.graph.viewer()
        viewer.tab_search_set_nodes(self.graph.node_factory.names)
        viewer.tab_search_toggle()

    def frame_all(self, *, readable: bool = False, settle: bool = True) -> None:
        """Fits every node in the view. With `readable`, never zooms out so far that node
        titles cannot be read: a pipeline too long for that shows its output end (outputs are
        on the right), the rest a pan or F away; while the window's panels settle around a
        document just opened (the canvas is resized), the framing is done again."""
        nodes = self.graph.all_nodes()
        if not nodes:
            return
        if readable and settle:
            self._settling.start()
        elif not readable:
            self._settling.invalidate()  # Frame All asked for: nothing re-frames it afterwards
        viewer = self.graph.viewer()
        viewer.zoom_to_nodes([n.view for n in nodes])
        if not readable or self.zoom_scale() >= READABLE_SCALE:
            return
        box = QtCore.QRectF()
        for node in nodes:
            box = box.united(node.view.sceneBoundingRect())
        size = viewer.viewport().size()
        scale = READABLE_SCALE * 1.1  # fitting the rect into the view takes a little off
        width, height = size.width() / scale, size.height() / scale
        margin = 40 / scale
        top = box.center().y() - height / 2 if box.height() + 2 * margin <= height else box.top() - margin
        viewer.set_scene_rect([box.right() + margin - width, top, width, height])

    def zoom_scale(self) -> float:
        """Screen pixels per scene unit (1.0: node titles at their natural size)."""
        return self.graph.viewer().transform().m11()
