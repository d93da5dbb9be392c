"""The log dock: every error, warning and notice the editor reports, newest last, so that
problems are readable in one place instead of popping up as dialogs."""

from __future__ import annotations

import time

from PySide6 import QtGui, QtWidgets

LEVEL_COLOURS = {"error": "#ff6b6b", "warning": "#f0c36b", "info": "#c8c8c8"}


class LogPanel(QtWidgets.QWidget):
    """A read-only list of timestamped messages; a repeat of the last one is counted, not added."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QtWidgets.QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(2000)
        self.text.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        clear = QtWidgets.QPushButton("Clear", self)
        clear.clicked.connect(self.clear)
        bar = QtWidgets.QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(clear)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text)
        layout.addLayout(bar)
        self._last: tuple[str, str] | None = None
        self._repeats = 0
        self.entries: list[tuple[str, str]] = []

    def add(self, level: str, message: str) -> None:
        """Appends a message; level is "error", "warning" or "info"."""
        if self._last == (level, message):
            self._repeats += 1
            cursor = self.text.textCursor()
            cursor.movePosition(QtGui.QTextCursor.MoveOperation.End)
            cursor.select(QtGui.QTextCursor.SelectionType.BlockUnderCursor)
            cursor.removeSelectedText()
            self._append(level, f"{message}  (×{self._repeats + 1})")
            return
        self._last, self._repeats = (level, message), 0
        self.entries.append((level, message))
        self._append(level, message)

    def _append(self, level: str, message: str) -> None:
        colour = LEVEL_COLOURS.get(level, LEVEL_COLOURS["info"])
        stamp = time.strftime("%H:%M:%S")
        safe = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
        self.text.appendHtml(f'<span style="color:#888">{stamp}</span> <span style="color:{colour}">{safe}</span>')

    def clear(self) -> None:
        self.text.clear()
        self.entries.clear()
        self._last = None

    def messages(self, level: str | None = None) -> list[str]:
        return [m for lv, m in self.entries if level is None or lv == level]
