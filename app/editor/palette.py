"""The node palette: every node type grouped by category, a search field that filters as
you type, drag and drop onto the canvas, and double-click or Enter to add a node.

The ranking of search results lives in nodes/palette_search.py (Qt-free, shared with the
Tab search popup); this widget only shows it. A drag carries the node type's name under
NODE_TYPE_MIME, so the canvas accepts drops from this palette and from nowhere else.
"""

from __future__ import annotations

from pixelweave.nodes.node_type import CATEGORIES
from pixelweave.nodes.palette_search import PaletteEntry, best_match, palette_entries, search
from PySide6 import QtCore, QtGui, QtWidgets

NODE_TYPE_MIME = "application/x-pixelweave-node-type"
TYPE_NAME_ROLE = QtCore.Qt.ItemDataRole.UserRole


def node_type_mime_data(type_name: str) -> QtCore.QMimeData:
    """The payload of a palette drag: the node type's name, utf-8, under NODE_TYPE_MIME
    (plain text too, so dropping into a text field writes the name)."""
    mime = QtCore.QMimeData()
    mime.setData(NODE_TYPE_MIME, QtCore.QByteArray(type_name.encode("utf-8")))
    mime.setText(type_name)
    return mime


def type_name_from_mime(mime: QtCore.QMimeData) -> str | None:
    """The node type a drop carries, or None when the drop did not come from the palette;
    the canvas's drop handler calls this."""
    if not mime.hasFormat(NODE_TYPE_MIME):
        return None
    name = bytes(mime.data(NODE_TYPE_MIME).data()).decode("utf-8", errors="replace").strip()
    return name or None


class _NodeTree(QtWidgets.QTreeWidget):
    """The category tree; it drags node types (never categories) and reports Enter."""

    entered = QtCore.Signal(QtWidgets.QTreeWidgetItem)

    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt override
        return [NODE_TYPE_MIME]

    def mimeData(self, items: list[QtWidgets.QTreeWidgetItem]) -> QtCore.QMimeData | None:  # noqa: N802 - Qt override
        names = [item.data(0, TYPE_NAME_ROLE) for item in items if item.data(0, TYPE_NAME_ROLE)]
        return node_type_mime_data(names[0]) if names else None

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter) and self.currentItem() is not None:
            self.entered.emit(self.currentItem())
            return
        super().keyPressEvent(event)


class _SearchField(QtWidgets.QLineEdit):
    """The search field: Down moves into the list, Escape clears the search."""

    down_pressed = QtCore.Signal()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() == QtCore.Qt.Key.Key_Down:
            self.down_pressed.emit()
            return
        if event.key() == QtCore.Qt.Key.Key_Escape and self.text():
            self.clear()
            return
        super().keyPressEvent(event)


class NodePalette(QtWidgets.QWidget):
    """Node types by category with search. `node_requested(type_name)` asks the main window
    to add a node (double-click, Enter on an item, or Enter in the search field for the best
    match); dragging an item carries `node_type_mime_data(type_name)`."""

    node_requested = QtCore.Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None, entries: list[PaletteEntry] | None = None) -> None:
        super().__init__(parent)
        self.entries = palette_entries() if entries is None else list(entries)
        self.search_field = _SearchField()
        self.search_field.setPlaceholderText("Search nodes…")
        self.search_field.setClearButtonEnabled(True)
        self.search_field.setToolTip(
            "Type to filter by name, category or description; Enter adds the best match, Down moves to the list"
        )
        self.search_field.textChanged.connect(self._filter)
        self.search_field.returnPressed.connect(self._request_best)
        self.search_field.down_pressed.connect(self._enter_list)

        self.tree = _NodeTree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QtWidgets.QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setAnimated(False)
        self.tree.setIndentation(14)
        self.tree.itemDoubleClicked.connect(lambda item, _column: self._request(item))
        self.tree.entered.connect(self._request)

        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #666;")
        self.message.hide()

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.search_field)
        layout.addWidget(self.message)
        layout.addWidget(self.tree, 1)

        self.category_items: dict[str, QtWidgets.QTreeWidgetItem] = {}
        self.type_items: dict[str, QtWidgets.QTreeWidgetItem] = {}
        self._populate()

    # ------------------------------------------------------------------ public

    def set_filter(self, text: str) -> None:
        """Filters as if the user had typed `text` into the search field."""
        self.search_field.setText(text)

    def focus_search(self) -> None:
        """Puts the cursor in the search field, its text selected (a shortcut's target)."""
        self.search_field.setFocus(QtCore.Qt.FocusReason.ShortcutFocusReason)
        self.search_field.selectAll()

    def reload(self) -> None:
        """Lists the node types registered now (after generator nodes were loaded), keeping
        the search text."""
        self.entries = palette_entries()
        self.tree.clear()
        self.category_items.clear()
        self.type_items.clear()
        self._populate()
        self._filter(self.search_field.text())

    def visible_type_names(self) -> list[str]:
        """Node types the filtered tree shows, top to bottom."""
        return [name for name, item in self.type_items.items() if not item.isHidden() and not item.parent().isHidden()]

    def best_match(self) -> str | None:
        """The type Enter in the search field would add, or None."""
        entry = best_match(self.search_field.text(), self.entries)
        return entry.type_name if entry else None

    # ------------------------------------------------------------------ building

    def _populate(self) -> None:
        bold = QtGui.QFont(self.tree.font())
        bold.setBold(True)
        by_category: dict[str, list[PaletteEntry]] = {}
        for entry in self.entries:
            by_category.setdefault(entry.category, []).append(entry)
        order = [c for c in CATEGORIES if c in by_category] + [c for c in by_category if c not in CATEGORIES]
        for category in order:
            members = by_category[category]
            parent = QtWidgets.QTreeWidgetItem([category])
            parent.setFont(0, bold)
            parent.setFlags(QtCore.Qt.ItemFlag.ItemIsEnabled)  # a heading: not selectable, not draggable
            parent.setToolTip(0, f"{category}: {len(members)} node types")
            self.tree.addTopLevelItem(parent)
            self.category_items[category] = parent
            for entry in members:
                item = QtWidgets.QTreeWidgetItem([entry.title])
                item.setData(0, TYPE_NAME_ROLE, entry.type_name)
                item.setToolTip(0, entry.tooltip)
                item.setFlags(
                    QtCore.Qt.ItemFlag.ItemIsEnabled
                    | QtCore.Qt.ItemFlag.ItemIsSelectable
                    | QtCore.Qt.ItemFlag.ItemIsDragEnabled
                )
                parent.addChild(item)
                self.type_items[entry.type_name] = item
        self.tree.expandAll()

    # ------------------------------------------------------------------ reactions

    def _filter(self, text: str) -> None:
        ranked = search(text, self.entries)
        shown = {e.type_name for e in ranked}
        for name, item in self.type_items.items():
            item.setHidden(name not in shown)
        for parent in self.category_items.values():
            parent.setHidden(all(parent.child(i).isHidden() for i in range(parent.childCount())))
        if text.strip():
            self.tree.expandAll()
        best = self.best_match()
        self.tree.setCurrentItem(self.type_items[best] if best else None)
        if not ranked:
            self.message.setText(f"No node type matches “{text.strip()}”.")
        self.message.setVisible(not ranked)

    def _request_best(self) -> None:
        name = self.best_match()
        if name is not None:
            self.node_requested.emit(name)

    def _request(self, item: QtWidgets.QTreeWidgetItem | None) -> None:
        name = item.data(0, TYPE_NAME_ROLE) if item is not None else None
        if name:
            self.node_requested.emit(name)

    def _enter_list(self) -> None:
        visible = self.visible_type_names()
        if not visible:
            return
        current = self.tree.currentItem()
        if current is None or current.isHidden() or not current.data(0, TYPE_NAME_ROLE):
            self.tree.setCurrentItem(self.type_items[visible[0]])
        self.tree.setFocus(QtCore.Qt.FocusReason.OtherFocusReason)
