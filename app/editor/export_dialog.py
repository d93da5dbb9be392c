"""The export dialog: choose what to write (native library, Python module; OpenCL source is
listed with the reason it is unavailable), the target CPU, the name and the folder, then
export on the job runner's "export" lane and show each file written with its size and how
to call it. The work itself is nodes.export's."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pixelweave.app.editor.jobs import CancelToken, JobRunner
from pixelweave.app.library_readme import write_library_readme
from pixelweave.nodes.document import Document
from pixelweave.nodes.export import (
    ExportResult,
    build_for_export,
    default_export_name,
    export_kinds,
    export_library,
    export_name_problem,
    export_python_module,
    export_targets,
    note_left_out,
)
from pixelweave.nodes.output_part import left_out_text
from PySide6 import QtCore, QtGui, QtWidgets

LANE = "export"
_ERROR_STYLE = "color: #b00020;"
_NOTE_STYLE = "color: #8a5a00;"


def _export_job(data: dict[str, Any], path: Path | None, kind: str, folder: str, name: str, target: str,
                token: CancelToken) -> ExportResult:  # fmt: skip
    """Worker-thread work: build what the document's outputs read and write the chosen files
    with the README that `pixelweave export` writes."""
    doc = Document.from_json(data)
    doc.path = path
    built, left_out = build_for_export(doc, target)
    token.check()
    export = export_python_module if kind == "python" else export_library
    result = note_left_out(export(built, folder, name, target), left_out)
    write_library_readme(built, result)
    return result


def _size_text(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


class ExportDialog(QtWidgets.QDialog):
    """Export the document; `exported(ExportResult)` is emitted once the files are written."""

    exported = QtCore.Signal(object)

    def __init__(self, document: Document, jobs: JobRunner, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Export — {document.name}")
        self.document = document
        self.jobs = jobs
        self._running = False
        self.last_result: ExportResult | None = None

        self.kind_buttons: dict[str, QtWidgets.QRadioButton] = {}
        kinds_box = QtWidgets.QGroupBox("What to write")
        kinds_layout = QtWidgets.QVBoxLayout(kinds_box)
        for kind in export_kinds():
            button = QtWidgets.QRadioButton(kind.title)
            button.setEnabled(kind.available)
            if not kind.available:
                button.setToolTip(kind.reason)
            self.kind_buttons[kind.key] = button
            kinds_layout.addWidget(button)
            if not kind.available:
                reason = QtWidgets.QLabel(kind.reason)
                reason.setIndent(24)
                reason.setEnabled(False)
                kinds_layout.addWidget(reason)
        self.kind_buttons["library"].setChecked(True)

        self.target = QtWidgets.QComboBox()
        for name, note in export_targets():
            self.target.addItem(f"{name} — {note}", name)
        self.name = QtWidgets.QLineEdit(default_export_name(document.name))
        self.name.setToolTip("The C function and the files are named after it (libNAME.so, NAME.h, NAME.py)")
        self.name_problem = QtWidgets.QLabel()
        self.name_problem.setStyleSheet(_ERROR_STYLE)
        self.name_problem.setWordWrap(True)
        self.folder = QtWidgets.QLineEdit(str(document.folder) if document.folder else str(Path.cwd()))
        self.browse = QtWidgets.QPushButton("Choose…")
        folder_row = QtWidgets.QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(self.browse)
        form = QtWidgets.QFormLayout()
        form.addRow("Target", self.target)
        form.addRow("Name", self.name)
        form.addRow("", self.name_problem)
        form.addRow("Folder", folder_row)

        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("ready")
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet(_ERROR_STYLE)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()

        self.files = QtWidgets.QTableWidget(0, 2)
        self.files.setHorizontalHeaderLabels(["File written", "Size"])
        self.files.verticalHeader().setVisible(False)
        self.files.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.horizontalHeader().setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.files.horizontalHeader().setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.usage = QtWidgets.QPlainTextEdit()
        self.usage.setReadOnly(True)
        self.usage.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.usage.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.usage.setPlaceholderText("After exporting, how to call the files appears here.")
        summary = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        summary.addWidget(self.files)
        summary.addWidget(self.usage)
        summary.setStretchFactor(1, 3)
        summary.setSizes([110, 330])

        self.export_button = QtWidgets.QPushButton("Export")
        self.export_button.setDefault(True)
        self.close_button = QtWidgets.QPushButton("Close")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.close_button)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(kinds_box)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(summary, 1)
        layout.addLayout(buttons)
        self.resize(760, 620)

        self.name.textChanged.connect(self._validate)
        for button in self.kind_buttons.values():
            button.toggled.connect(self._validate)
        self.browse.clicked.connect(self._choose_folder)
        self.export_button.clicked.connect(self.start_export)
        self.close_button.clicked.connect(self.reject)
        self._validate()

    # ------------------------------------------------------------------ state
    def kind(self) -> str:
        return next(key for key, button in self.kind_buttons.items() if button.isChecked())

    def set_kind(self, key: str) -> None:
        self.kind_buttons[key].setChecked(True)

    def set_folder(self, folder: str | Path) -> None:
        self.folder.setText(str(folder))

    def is_running(self) -> bool:
        return self._running

    def _problem(self) -> str | None:
        return export_name_problem(self.name.text().strip(), self.kind())

    def _validate(self) -> None:
        problem = self._problem()
        self.name_problem.setText(problem or "")
        self.name_problem.setVisible(bool(problem))
        self.export_button.setEnabled(problem is None and not self._running)

    def _choose_folder(self) -> None:
        chosen = QtWidgets.QFileDialog.getExistingDirectory(self, "Export into folder", self.folder.text())
        if chosen:
            self.set_folder(chosen)

    # ------------------------------------------------------------------ export
    def start_export(self) -> None:
        """Checks the choices and starts writing the files on the job runner."""
        problem = self._problem()
        folder = self.folder.text().strip()
        if problem is None and not folder:
            problem = "choose a folder to write the files into"
        elif problem is None and Path(folder).exists() and not Path(folder).is_dir():
            problem = f"{folder} is a file, not a folder"
        if problem is not None:
            self._show_error(problem)
            return
        data = copy.deepcopy(self.document.to_json())
        path, kind, name = self.document.path, self.kind(), self.name.text().strip()
        target = self.target.currentData()
        self._running = True
        self.message.hide()
        self.files.setRowCount(0)
        self.usage.clear()
        self.progress.setRange(0, 0)  # busy: compiling has no steps to count
        self.progress.setFormat("compiling…")
        self._validate()
        self.jobs.submit(
            LANE,
            lambda token, progress: _export_job(data, path, kind, folder, name, target, token),
            done=self._on_done,
            failed=self._on_failed,
        )

    def _finish(self, text: str) -> None:
        self._running = False
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if text == "done" else 0)
        self.progress.setFormat(text)
        self._validate()

    def _on_done(self, result: ExportResult) -> None:
        self._finish("done")
        self.last_result = result
        sizes = result.file_sizes()
        self.files.setRowCount(len(sizes))
        for row, (path, size) in enumerate(sizes):
            self.files.setItem(row, 0, QtWidgets.QTableWidgetItem(str(path)))
            size_item = QtWidgets.QTableWidgetItem(_size_text(size))
            size_item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
            self.files.setItem(row, 1, size_item)
        self.usage.setPlainText(result.usage)
        if result.left_out:  # said where it is seen, not only at the top of the usage text
            self.message.setText(f"Exported what the outputs read; {left_out_text(result.left_out)}.")
            self.message.setStyleSheet(_NOTE_STYLE)
            self.message.show()
        self.exported.emit(result)

    def _on_failed(self, error: BaseException, traceback_text: str) -> None:
        self._finish("failed")
        problems = getattr(error, "problems", None)
        if problems:
            self._show_error("The document cannot be exported:\n" + "\n".join(f"• {p}" for p in problems))
        elif isinstance(error, OSError) and error.strerror:
            self._show_error(f"Cannot write the files: {error.strerror}: {error.filename or ''}".rstrip(": "))
        else:
            self._show_error(f"The export failed: {error}")

    def _show_error(self, text: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(_ERROR_STYLE)
        self.message.show()

    def reject(self) -> None:
        """Closing drops a running export's result (the files may still be written)."""
        if self._running:
            self.jobs.cancel(LANE)
            self._finish("cancelled")
        super().reject()

    def summary_rows(self) -> list[tuple[str, str]]:
        """(file, size text) as listed in the summary table."""
        return [(self.files.item(r, 0).text(), self.files.item(r, 1).text()) for r in range(self.files.rowCount())]
