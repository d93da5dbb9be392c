"""The properties panel: the selected node's title, id and parameters, one editor per
parameter (see parameter_widgets), and the node's current problem in red at the top.

The panel edits nothing itself. It reports what the user asks for (`param_edited`,
`rename_requested`) and the main window applies it to the document, which keeps undo and
the document the single source of truth; `update_values` then refreshes the editors without
echoing signals back.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from pixelweave.app.editor.parameter_widgets import INVALID_COLOUR, ParameterEditor, editor_for, parameter_tooltip
from pixelweave.nodes.document import NODE_ID, RESERVED_IDS
from pixelweave.nodes.node_type import NodeType
from PySide6 import QtCore, QtGui, QtWidgets

PLACEHOLDER = "Select a node to edit its parameters"
NO_PARAMETERS = "This node has no parameters."


def parameter_label(name: str) -> str:
    """A parameter name as a form label: `in_black` reads "In black"."""
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def node_id_problem(new_id: str, current_id: str, existing_ids: Collection[str]) -> str | None:
    """Why `new_id` cannot name the node (the document's own rules), or None if it can."""
    if not NODE_ID.fullmatch(new_id):
        return f"node id {new_id!r} must be letters, digits and underscores, not starting with a digit"
    if new_id in RESERVED_IDS:
        return f"node id {new_id!r} is reserved (a loop variable name)"
    if new_id != current_id and new_id in existing_ids:
        return f"node id {new_id!r} is already used"
    return None


class PropertiesPanel(QtWidgets.QWidget):
    """Parameters of the selected node. Signals:
    `param_edited(node_id, name, value, final)`: a parameter's new JSON value (already
    accepted by Parameter.check); final is False while a slider is dragged or an expression
    typed. `rename_requested(old_id, new_id)`: a valid new id was entered; the panel shows it
    at once, and `reject_rename(message)` puts the old one back if the document refuses."""

    param_edited = QtCore.Signal(str, str, object, bool)
    rename_requested = QtCore.Signal(str, str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._node_id: str | None = None
        self._existing_ids: Collection[str] = ()
        self.editors: dict[str, ParameterEditor] = {}

        self.error_label = QtWidgets.QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet(
            f"color: {INVALID_COLOUR}; background: #fdecea; border: 1px solid #f5c2c0; padding: 4px;"
        )
        self.error_label.hide()

        self.placeholder = QtWidgets.QLabel(PLACEHOLDER)
        self.placeholder.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setEnabled(False)  # drawn in the disabled (gray) text colour

        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.pages = QtWidgets.QStackedWidget()
        self.pages.addWidget(self.placeholder)
        self.pages.addWidget(self.scroll)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.error_label)
        layout.addWidget(self.pages, 1)

        self.title_label: QtWidgets.QLabel | None = None
        self.id_field: QtWidgets.QLineEdit | None = None
        self.id_problem_label: QtWidgets.QLabel | None = None
        self.summary_label: QtWidgets.QLabel | None = None
        self.clear()

    # ------------------------------------------------------------------ public

    def node_id(self) -> str | None:
        """The id of the node shown, or None when the panel is empty."""
        return self._node_id

    def show_node(
        self,
        node_id: str,
        type_cls: type[NodeType],
        params: dict[str, Any],
        existing_ids: Collection[str] = (),
        document_folder: Path | None = None,
    ) -> None:
        """Builds the form for a node. Missing parameters show their default.
        `existing_ids` lets a rename to a taken id be refused in place; `document_folder`
        lets an image file be stored relative to the document."""
        self._discard_form()
        self._node_id = node_id
        self._existing_ids = existing_ids
        content = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(content)
        column.setContentsMargins(0, 0, 4, 0)
        column.addLayout(self._header(node_id, type_cls))
        column.addWidget(_separator())
        if type_cls.params:
            form = QtWidgets.QFormLayout()
            form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            form.setLabelAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
            for param in type_cls.params:
                editor = editor_for(param, params.get(param.name, param.default), document_folder=document_folder)
                editor.edited.connect(lambda value, final, name=param.name: self._edited(name, value, final))
                label = QtWidgets.QLabel(parameter_label(param.name))
                label.setToolTip(parameter_tooltip(param))
                label.setBuddy(editor)
                form.addRow(label, editor)
                self.editors[param.name] = editor
            column.addLayout(form)
        else:
            none = QtWidgets.QLabel(NO_PARAMETERS)
            none.setEnabled(False)
            column.addWidget(none)
        column.addStretch(1)
        self.scroll.setWidget(content)
        self.pages.setCurrentWidget(self.scroll)

    def clear(self) -> None:
        """Shows the placeholder: no node is selected."""
        self._discard_form()
        self._node_id = None
        self.set_error(None)
        self.pages.setCurrentWidget(self.placeholder)

    def update_values(self, params: dict[str, Any]) -> None:
        """Shows new values (after undo, or an edit made elsewhere) without rebuilding the
        form and without emitting anything."""
        for name, value in params.items():
            editor = self.editors.get(name)
            if editor is not None:
                editor.set_value(value)

    def set_error(self, text: str | None) -> None:
        """Shows the node's current problem in red at the top; None hides it."""
        self.error_label.setText(text or "")
        self.error_label.setVisible(bool(text))

    def set_node_id(self, node_id: str) -> None:
        """Shows a new id for the node (renamed elsewhere, e.g. by undo), emitting nothing."""
        self._node_id = node_id
        if self.id_field is not None:
            self.id_field.setText(node_id)
        self._show_id_problem(None)

    def reject_rename(self, old_id: str, message: str) -> None:
        """The document refused a rename: the old id comes back, with the reason."""
        self.set_node_id(old_id)
        self._show_id_problem(message)

    def editor(self, name: str) -> ParameterEditor | None:
        """The editor of a parameter of the node shown, if it has one by that name."""
        return self.editors.get(name)

    # ------------------------------------------------------------------ building

    def _header(self, node_id: str, type_cls: type[NodeType]) -> QtWidgets.QVBoxLayout:
        header = QtWidgets.QVBoxLayout()
        self.title_label = QtWidgets.QLabel(type_cls.title)
        font = QtGui.QFont(self.title_label.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.title_label.setFont(font)
        self.title_label.setToolTip(type_cls.tooltip())
        kind = QtWidgets.QLabel(f"{type_cls.type_name} · {type_cls.category}")
        kind.setStyleSheet("color: #666;")
        kind.setToolTip(type_cls.tooltip())
        self.id_field = QtWidgets.QLineEdit(node_id)
        self.id_field.setToolTip("the node's id: how schedules, connections and the loop nest name it")
        self.id_field.editingFinished.connect(self._id_entered)
        id_row = QtWidgets.QHBoxLayout()
        id_label = QtWidgets.QLabel("Id")
        id_label.setBuddy(self.id_field)
        id_row.addWidget(id_label)
        id_row.addWidget(self.id_field, 1)
        self.id_problem_label = QtWidgets.QLabel()
        self.id_problem_label.setWordWrap(True)
        self.id_problem_label.setStyleSheet(f"color: {INVALID_COLOUR};")
        self.id_problem_label.hide()
        self.summary_label = QtWidgets.QLabel(type_cls.summary())
        self.summary_label.setWordWrap(True)
        self.summary_label.setToolTip(type_cls.tooltip())
        header.addWidget(self.title_label)
        header.addWidget(kind)
        header.addLayout(id_row)
        header.addWidget(self.id_problem_label)
        header.addWidget(self.summary_label)
        return header

    def _discard_form(self) -> None:
        """Drops the current form, first committing any edit still in progress in it (the
        user typed an expression and clicked another node) under the old node's id."""
        for editor in self.editors.values():
            editor.flush()
            editor.blockSignals(True)
        self.editors = {}
        if self.id_field is not None:
            self.id_field.blockSignals(True)
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.title_label = self.id_field = self.id_problem_label = self.summary_label = None

    # ------------------------------------------------------------------ reactions

    def _edited(self, name: str, value: Any, final: bool) -> None:
        # The id at emission time: a rename since the form was built is honoured, and a form
        # being discarded flushes before the next node's id is set.
        if self._node_id is not None:
            self.param_edited.emit(self._node_id, name, value, final)

    def _id_entered(self) -> None:
        if self.id_field is None or self._node_id is None:
            return
        old, new = self._node_id, self.id_field.text().strip()
        if new == old:
            self._show_id_problem(None)
            return
        problem = node_id_problem(new, old, self._existing_ids)
        if problem is not None:
            self._show_id_problem(problem)
            return
        self.set_node_id(new)
        self.rename_requested.emit(old, new)

    def _show_id_problem(self, text: str | None) -> None:
        if self.id_problem_label is not None:
            self.id_problem_label.setText(text or "")
            self.id_problem_label.setVisible(bool(text))
        if self.id_field is not None:
            self.id_field.setStyleSheet(f"color: {INVALID_COLOUR};" if text else "")


def _separator() -> QtWidgets.QFrame:
    line = QtWidgets.QFrame()
    line.setFrameShape(QtWidgets.QFrame.Shape.HLine)
    line.setFrameShadow(QtWidgets.QFrame.Shadow.Sunken)
    return line
