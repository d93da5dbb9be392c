"""The loop-nest inspector: the loop nest the schedules produce (or the full lowered
statement), highlighted, with the selected node's lines marked and click-to-select.
Which line belongs to which node is nodes.loop_nest_map's business; this is the view."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pixelweave.nodes.loop_nest_map import (
    LOOP_KINDS,
    NestLine,
    lines_of_node,
    map_loop_nest,
    map_statement,
    node_at_line,
)
from PySide6 import QtCore, QtGui, QtWidgets

LOOP_COLOURS = {
    "for": "#5c6370",
    "parallel": "#c2410c",
    "vectorized": "#15803d",
    "unrolled": "#7c3aed",
    "gpu_block": "#0e7490",
    "gpu_thread": "#0369a1",
}
KEYWORDS = ("produce", "consume", "store", "allocate", "free", "let", "if", "else", "assert", "in")
SELECTED_BACKGROUND = "#fff3c4"


class LoopNestHighlighter(QtGui.QSyntaxHighlighter):
    """Loop kinds in distinct colours, keywords bold, numbers, and Func names of known nodes."""

    def __init__(self, document: QtGui.QTextDocument) -> None:
        super().__init__(document)
        self._func_pattern: re.Pattern[str] | None = None
        self._rules: list[tuple[re.Pattern[str], QtGui.QTextCharFormat]] = []
        for kind, colour in LOOP_COLOURS.items():
            self._rules.append((re.compile(rf"\b{kind}\b"), _format(colour, bold=True)))
        self._rules.append((re.compile(rf"\b(?:{'|'.join(KEYWORDS)})\b"), _format("#1d4ed8", bold=True)))
        self._rules.append((re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?\b"), _format("#b45309")))
        self._func_format = _format("#9d174d")

    def set_node_ids(self, node_ids: Iterable[str]) -> None:
        ids = sorted(set(node_ids), key=len, reverse=True)
        self._func_pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, ids))})\.[A-Za-z_]\w*") if ids else None
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        for pattern, fmt in self._rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), fmt)
        if self._func_pattern is not None:
            for m in self._func_pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), self._func_format)


def _format(colour: str, bold: bool = False) -> QtGui.QTextCharFormat:
    fmt = QtGui.QTextCharFormat()
    fmt.setForeground(QtGui.QColor(colour))
    if bold:
        fmt.setFontWeight(QtGui.QFont.Weight.Bold)
    return fmt


def infer_node_ids(loop_nest: str) -> set[str]:
    """Node ids named by the produce/store/consume lines of a loop nest."""
    return set(re.findall(r"^\s*(?:produce|consume|store) ([A-Za-z_]\w*)\.", loop_nest, re.MULTILINE))


class LoopNestView(QtWidgets.QWidget):
    """Shows loop_nest() or, toggled, lowered_stmt(); `highlight_node` marks a node's lines,
    clicking a node's line emits node_clicked(node id)."""

    node_clicked = QtCore.Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._loop_nest = ""
        self._full_stmt: str | None = None
        self._node_ids: set[str] = set()
        self._mapping: list[NestLine] = []
        self._selected: str | None = None

        self.mode_button = QtWidgets.QToolButton(text="Full statement", checkable=True)
        self.mode_button.setToolTip("Show the whole lowered statement instead of the loop nest")
        self.mode_button.toggled.connect(self._show_current)
        self.legend = QtWidgets.QLabel(
            " ".join(f'<span style="color:{c}"><b>{k}</b></span>' for k, c in LOOP_COLOURS.items() if k != "for")
        )
        self.legend.setToolTip("The colours of the loop kinds in the text below")
        self.legend.setMinimumWidth(1)  # clipped rather than widening the dock and the window
        self.legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.legend.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        self.message = QtWidgets.QLabel(wordWrap=True)
        self.message.setStyleSheet("color: #b91c1c; padding: 4px;")
        self.message.hide()
        self.editor = QtWidgets.QPlainTextEdit(readOnly=True)
        self.editor.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QtGui.QFont.StyleHint.TypeWriter)
        self.editor.setFont(font)
        self.editor.viewport().installEventFilter(self)
        self.editor.viewport().setCursor(QtCore.Qt.CursorShape.PointingHandCursor)
        self.highlighter = LoopNestHighlighter(self.editor.document())

        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.mode_button)
        top.addWidget(self.legend, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(self.editor, 1)
        self._update_mode_button()

    # ------------------------------------------------------------------ public
    def set_text(self, loop_nest: str, full_stmt: str | None = None, node_ids: Iterable[str] | None = None) -> None:
        """New texts after a schedule or graph edit; the scroll position is kept. node_ids
        (default: the nodes the loop nest names) decide which Func names are a node's."""
        self._loop_nest, self._full_stmt = loop_nest, full_stmt
        self._node_ids = set(node_ids) if node_ids is not None else infer_node_ids(loop_nest)
        self.highlighter.set_node_ids(self._node_ids)
        self.message.hide()
        self.editor.setEnabled(True)
        self._update_mode_button()
        self._show_current()

    def set_message(self, text: str, *, error: bool = True) -> None:
        """A state instead of a loop nest. An error ("the pipeline has problems") is shown in red
        above the dimmed last text; a hint (an empty document) replaces the text."""
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {'#b91c1c' if error else 'palette(mid)'}; padding: 4px;")
        self.message.show()
        self.editor.setEnabled(False)
        if not error:
            self._loop_nest, self._full_stmt, self._mapping = "", None, []
            self.editor.setPlainText("")
            self._update_mode_button()

    def highlight_node(self, node_id: str | None) -> None:
        """Background on the node's lines, the first one scrolled into view (None: clear)."""
        self._selected = node_id
        self._apply_selection(scroll=True)

    def showing_full_statement(self) -> bool:
        return self.mode_button.isChecked() and self._full_stmt is not None

    def text(self) -> str:
        return self.editor.toPlainText()

    def highlighted_lines(self) -> list[int]:
        return lines_of_node(self._mapping, self._selected) if self._selected else []

    # ------------------------------------------------------------------ internals
    def _update_mode_button(self) -> None:
        self.mode_button.setEnabled(self._full_stmt is not None)
        if self._full_stmt is None:
            self.mode_button.setToolTip("The full statement is not available for this pipeline")
        else:
            self.mode_button.setToolTip("Show the whole lowered statement instead of the loop nest")

    def _show_current(self) -> None:
        full = self.showing_full_statement()
        text = self._full_stmt if full and self._full_stmt is not None else self._loop_nest
        self._mapping = map_statement(text, self._node_ids) if full else map_loop_nest(text, self._node_ids)
        if text != self.editor.toPlainText():
            bar = self.editor.verticalScrollBar()
            hbar = self.editor.horizontalScrollBar()
            position, hposition = bar.value(), hbar.value()
            self.editor.setPlainText(text)
            bar.setValue(min(position, bar.maximum()))
            hbar.setValue(min(hposition, hbar.maximum()))
        self._apply_selection(scroll=False)

    def _apply_selection(self, scroll: bool) -> None:
        selections = []
        lines = self.highlighted_lines()
        doc = self.editor.document()
        for number in lines:
            block = doc.findBlockByNumber(number)
            sel = QtWidgets.QTextEdit.ExtraSelection()
            sel.format.setBackground(QtGui.QColor(SELECTED_BACKGROUND))
            sel.format.setProperty(QtGui.QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QtGui.QTextCursor(block)
            selections.append(sel)
        self.editor.setExtraSelections(selections)
        if scroll and lines:
            first = doc.findBlockByNumber(lines[0])
            if not self._block_visible(first):
                self.editor.setTextCursor(QtGui.QTextCursor(first))
                self.editor.centerCursor()
            self._show_line_start(first)

    def _show_line_start(self, block: QtGui.QTextBlock) -> None:
        """Scrolls sideways so that the line's text (after its indentation) is in view, as far
        left as possible: deep loop nests must not open scrolled to the far right."""
        text = block.text()
        cursor = QtGui.QTextCursor(block)
        cursor.setPosition(block.position() + len(text) - len(text.lstrip()))
        bar = self.editor.horizontalScrollBar()
        start = self.editor.cursorRect(cursor).left() + bar.value()  # in the text's own coordinates
        room = self.editor.viewport().width()
        bar.setValue(max(0, start - room // 4))

    def _block_visible(self, block: QtGui.QTextBlock) -> bool:
        rect = self.editor.blockBoundingGeometry(block).translated(self.editor.contentOffset())
        return rect.top() >= 0 and rect.bottom() <= self.editor.viewport().height()

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt's name
        if (
            watched is self.editor.viewport()
            and event.type() == QtCore.QEvent.Type.MouseButtonRelease
            and event.button() == QtCore.Qt.MouseButton.LeftButton
        ):
            number = self.editor.cursorForPosition(event.position().toPoint()).blockNumber()
            node = node_at_line(self._mapping, number)
            if node is not None:
                self.node_clicked.emit(node)
        return super().eventFilter(watched, event)


__all__ = ["LOOP_KINDS", "LoopNestHighlighter", "LoopNestView", "infer_node_ids"]
