"""The schedule editor of the selected node: controls for each directive, the list of the
chosen Func's directives (remove, move), presets and a raw Halide-style text field; below
them the automatic scheduler (autoschedule_panel).

It edits one of the node's schedules, the one of the editor's target (`set_target`: the CPU
schedule for the host, the OpenCL schedule for an OpenCL device, where the GPU mapping
controls are live), as plain data, and emits the whole new schedule; parsing,
formatting and static checks live in nodes (schedule_text, schedule_spec), the engine's
verdict comes back through `set_problem`."""

from __future__ import annotations

import copy
from typing import Any

from pixelweave.app.editor.autoschedule_panel import AutoSchedulePanel
from pixelweave.engine.ir.names import unused_name
from pixelweave.nodes.schedule_presets import PRESETS
from pixelweave.nodes.schedule_spec import TAILS, check_schedule, parse_key
from pixelweave.nodes.schedule_text import (
    ScheduleTextError,
    directive_text,
    format_schedule,
    loops_after,
    parse_schedule_text,
)
from PySide6 import QtCore, QtGui, QtWidgets

Schedule = dict[str, list[list[Any]]]
COMPUTE = ("compute_root", "compute_inline", "compute_at")
STORE = ("store_root", "store_at")
NO_LOOP = "(none)"


def _combo(items: list[str] | tuple[str, ...] = ()) -> QtWidgets.QComboBox:
    box = QtWidgets.QComboBox()
    box.addItems(list(items))
    box.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
    return box


def _spin(value: int, maximum: int = 4096) -> QtWidgets.QSpinBox:
    box = QtWidgets.QSpinBox()
    box.setRange(1, maximum)
    box.setValue(value)
    return box




class SchedulePanel(QtWidgets.QWidget):
    """Schedule editor for one node at a time (show_node), emitting schedule_edited(node id,
    whole schedule) after each accepted edit and preset_requested(node id, preset)."""

    schedule_edited = QtCore.Signal(str, dict)
    preset_requested = QtCore.Signal(str, str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.node_id: str | None = None
        self.funcs: dict[str, list[str]] = {}
        self.schedule: Schedule = {}
        self.levels: dict[str, list[tuple[str, list[str]]]] = {}
        self.target = "host"

        self.title = QtWidgets.QLabel("No node selected")
        self.title.setStyleSheet("font-weight: bold;")
        self.func_combo = _combo()
        self.func_combo.setToolTip("The Func (or update definition) of the node whose schedule is edited")
        self.func_combo.currentTextChanged.connect(self._refresh_func)
        self.problem = QtWidgets.QLabel(wordWrap=True)
        self.problem.setStyleSheet("color: #b91c1c;")
        self.problem.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.hide()

        tabs = QtWidgets.QTabWidget()
        # scrolled, so that the many controls never set the dock's (and the window's) minimum size
        controls = QtWidgets.QScrollArea()
        controls.setWidgetResizable(True)
        controls.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        controls.setWidget(self._controls_page())
        tabs.addTab(controls, "Controls")
        tabs.addTab(self._text_page(), "Text")
        # the automatic scheduler: usable for the whole pipeline even when no node is selected
        self.auto = AutoSchedulePanel()
        auto_page = QtWidgets.QScrollArea()
        auto_page.setWidgetResizable(True)
        auto_page.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        auto_page.setWidget(self.auto)
        tabs.addTab(auto_page, "Auto-schedule")
        self.tabs = tabs
        self.node_pages = [controls, tabs.widget(1)]  # what needs a selected node

        head = QtWidgets.QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(QtWidgets.QLabel("Func:"))
        head.addWidget(self.func_combo)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.problem)
        layout.addWidget(tabs, 1)
        self.clear()
        self.set_target("host")

    # ------------------------------------------------------------------ building the UI
    def _controls_page(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        form = QtWidgets.QGridLayout()
        row = 0

        def add(label: str, widgets: list[QtWidgets.QWidget], button: QtWidgets.QPushButton) -> None:
            nonlocal row
            form.addWidget(QtWidgets.QLabel(label), row, 0)
            line = QtWidgets.QHBoxLayout()
            for w in widgets:
                line.addWidget(w)
            line.addStretch(1)
            form.addLayout(line, row, 1)
            form.addWidget(button, row, 2)
            row += 1

        self.compute_combo = _combo()
        self.compute_combo.setToolTip("Where the Func is computed: inlined into its uses, all at once, or in a loop")
        self.compute_button = QtWidgets.QPushButton("Set", clicked=self._set_compute)
        add("Compute", [self.compute_combo], self.compute_button)
        self.store_combo = _combo()
        self.store_combo.setToolTip("Where its buffer lives (outside the compute loop: a sliding window)")
        self.store_button = QtWidgets.QPushButton("Set", clicked=self._set_store)
        add("Store", [self.store_combo], self.store_button)

        self.split_loop, self.split_factor = _combo(), _spin(16)
        self.split_tail = _combo(TAILS)
        self.split_button = QtWidgets.QPushButton("Add", clicked=self._add_split)
        add("Split", [self.split_loop, QtWidgets.QLabel("by"), self.split_factor, self.split_tail], self.split_button)

        self.tile_x, self.tile_y = _combo(), _combo()
        self.tile_xsize, self.tile_ysize = _spin(64), _spin(32)
        self.tile_tail = _combo(TAILS)
        self.tile_button = QtWidgets.QPushButton("Add", clicked=self._add_tile)
        add(
            "Tile",
            [self.tile_x, self.tile_y, self.tile_xsize, QtWidgets.QLabel("x"), self.tile_ysize, self.tile_tail],
            self.tile_button,
        )

        self.reorder_edit = QtWidgets.QLineEdit()
        self.reorder_edit.setPlaceholderText("loops, innermost first: xi, yi, c, xo, yo")
        self.reorder_button = QtWidgets.QPushButton("Add", clicked=self._add_reorder)
        add("Reorder", [self.reorder_edit], self.reorder_button)

        self.vector_loop, self.vector_width = _combo(), _combo(["no split", "4", "8", "16", "32"])
        self.vector_width.setCurrentText("8")
        self.vector_button = QtWidgets.QPushButton("Add", clicked=self._add_vectorize)
        add("Vectorize", [self.vector_loop, QtWidgets.QLabel("width"), self.vector_width], self.vector_button)

        self.unroll_loop, self.unroll_factor = _combo(), _combo(["no split", "2", "3", "4", "8"])
        self.unroll_factor.setCurrentText("4")
        self.unroll_button = QtWidgets.QPushButton("Add", clicked=self._add_unroll)
        add("Unroll", [self.unroll_loop, QtWidgets.QLabel("factor"), self.unroll_factor], self.unroll_button)

        self.parallel_loop = _combo()
        self.parallel_button = QtWidgets.QPushButton("Add", clicked=self._add_parallel)
        add("Parallel", [self.parallel_loop], self.parallel_button)

        self.gpu_x, self.gpu_y = _combo(), _combo()
        self.gpu_xsize, self.gpu_ysize = _spin(16, 1024), _spin(16, 1024)
        self.gpu_button = QtWidgets.QPushButton("Add", clicked=self._add_gpu_tile)
        add(
            "GPU blocks",
            [
                self.gpu_x,
                self.gpu_y,
                QtWidgets.QLabel("threads"),
                self.gpu_xsize,
                QtWidgets.QLabel("x"),
                self.gpu_ysize,
            ],
            self.gpu_button,
        )
        self.threads_x, self.threads_y = _combo(), _combo()
        self.threads_button = QtWidgets.QPushButton("Add", clicked=self._add_gpu_threads)
        add("GPU threads", [self.threads_x, self.threads_y], self.threads_button)
        self.gpu_controls = [self.gpu_x, self.gpu_y, self.gpu_xsize, self.gpu_ysize, self.gpu_button,
                             self.threads_x, self.threads_y, self.threads_button]  # fmt: skip
        form.setColumnStretch(1, 1)

        self.directive_list = QtWidgets.QListWidget()
        self.directive_list.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.directive_list.currentRowChanged.connect(self._update_list_buttons)
        self.remove_button = QtWidgets.QPushButton("Remove", clicked=self._remove)
        self.up_button = QtWidgets.QPushButton("Move up", clicked=lambda: self._move(-1))
        self.down_button = QtWidgets.QPushButton("Move down", clicked=lambda: self._move(1))
        list_buttons = QtWidgets.QHBoxLayout()
        for b in (self.remove_button, self.up_button, self.down_button):
            list_buttons.addWidget(b)
        list_buttons.addStretch(1)

        self.preset_combo = _combo(list(PRESETS))
        for i, text in enumerate(PRESETS.values()):
            self.preset_combo.setItemData(i, text, QtCore.Qt.ItemDataRole.ToolTipRole)
        self.preset_button = QtWidgets.QPushButton("Apply preset", clicked=self._request_preset)
        presets = QtWidgets.QHBoxLayout()
        presets.addWidget(QtWidgets.QLabel("Preset:"))
        presets.addWidget(self.preset_combo, 1)
        presets.addWidget(self.preset_button)

        layout = QtWidgets.QVBoxLayout(page)
        layout.addLayout(presets)
        layout.addLayout(form)
        layout.addWidget(QtWidgets.QLabel("Directives of this Func, applied in order:"))
        layout.addWidget(self.directive_list, 1)
        layout.addLayout(list_buttons)
        return page

    def _text_page(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        self.text_edit = QtWidgets.QPlainTextEdit()
        self.text_edit.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.text_edit.setPlaceholderText("out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)")
        self.text_edit.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_error = QtWidgets.QLabel(wordWrap=True)
        self.text_error.setStyleSheet("color: #b91c1c;")
        self.text_error.hide()
        self.text_apply = QtWidgets.QPushButton("Apply (Ctrl+Enter)", clicked=self._apply_text)
        self.text_edit.installEventFilter(self)
        layout = QtWidgets.QVBoxLayout(page)
        layout.addWidget(QtWidgets.QLabel("Halide-style schedule calls, one statement per line:"))
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.text_error)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.text_apply)
        layout.addLayout(buttons)
        return page

    # ------------------------------------------------------------------ public
    def show_node(
        self,
        node_id: str,
        funcs: dict[str, list[str]],
        schedule: Schedule,
        levels: dict[str, list[tuple[str, list[str]]]],
    ) -> None:
        """Edit this node: funcs maps schedule keys to the stage's own loops before any directive,
        innermost first ({"out": ["x", "y", "c"]}); levels maps each Func to where it may be
        computed: the Func using it ("local" or "node.local") with its loops, outermost first."""
        previous = self.func_combo.currentText() if node_id == self.node_id else None
        self.node_id, self.funcs = node_id, {k: list(v) for k, v in funcs.items()}
        self.schedule = copy.deepcopy(schedule)
        self.levels = {key: [(ref, list(loops)) for ref, loops in pairs] for key, pairs in levels.items()}
        self._show_title()
        self.auto.set_node(node_id)
        keys = list(self.funcs) + [k for k in self.schedule if k not in self.funcs]
        self.func_combo.blockSignals(True)
        self.func_combo.clear()
        self.func_combo.addItems(keys)
        if previous in keys:
            self.func_combo.setCurrentText(previous)
        elif "out" in keys:
            self.func_combo.setCurrentText("out")
        self.func_combo.blockSignals(False)
        self.set_problem(None)
        self._set_enabled(bool(keys))
        self._refresh_func()
        self._refresh_text()

    def set_target(self, target: str) -> None:
        """Edit the schedules of target ("host": the CPU ones, "opencl"): the GPU mapping
        controls are live only for OpenCL, presets and the automatic scheduler (which write
        CPU schedules) only for the host."""
        self.target = target
        gpu = target == "opencl"
        tip = "" if gpu else "GPU mapping needs an OpenCL target: choose an OpenCL device in the Target selector"
        for w in self.gpu_controls:
            w.setEnabled(gpu)
            w.setToolTip(tip)
        for w in (self.preset_combo, self.preset_button):
            w.setEnabled(not gpu)
            w.setToolTip("Presets write CPU schedules: choose Host CPU as the target" if gpu else "")
        self.tabs.setTabEnabled(2, not gpu)
        self._show_title()

    def _show_title(self) -> None:
        if self.node_id is None:
            self.title.setText("No node selected")
            return
        which = "OpenCL schedule" if self.target == "opencl" else "Schedule"
        self.title.setText(f"{which} of `{self.node_id}`")

    def clear(self) -> None:
        """No node selected: every control disabled."""
        self.node_id, self.funcs, self.schedule, self.levels = None, {}, {}, {}
        self.title.setText("No node selected")
        self.auto.set_node(None)
        self.func_combo.clear()
        self.directive_list.clear()
        self.text_edit.setPlainText("")
        self.set_problem(None)
        self._set_enabled(False)

    def set_problem(self, text: str | None) -> None:
        """The engine's verdict on the schedule (or a static problem), shown in red; None clears."""
        self.problem.setText(text or "")
        self.problem.setVisible(bool(text))

    def current_key(self) -> str:
        return self.func_combo.currentText()

    # ------------------------------------------------------------------ helpers
    def _set_enabled(self, on: bool) -> None:
        for w in *self.node_pages, self.func_combo:
            w.setEnabled(on)

    def _directives(self) -> list[list[Any]]:
        return self.schedule.get(self.current_key(), [])

    def _loops(self) -> list[str]:
        """The current Func's loops after its directives, innermost first."""
        key = self.current_key()
        local = (parse_key(key) or (key, None))[0]
        dims = self.funcs.get(key) or self.funcs.get(local, [])
        return loops_after(dims, self._directives())

    def _refresh_func(self) -> None:
        key = self.current_key()
        is_update = (parse_key(key) or (key, None))[1] is not None
        self.directive_list.clear()
        for d in self._directives():
            self.directive_list.addItem(directive_text(d))
        self._update_list_buttons()
        loops = self._loops()
        for box in (self.split_loop, self.vector_loop, self.unroll_loop, self.parallel_loop):
            box.clear()
            box.addItems(loops)
        pairs = (self.tile_x, "x"), (self.tile_y, "y"), (self.gpu_x, "x"), (self.gpu_y, "y")
        for box, want in (*pairs, (self.threads_x, "x"), (self.threads_y, "y")):
            box.clear()
            box.addItems(loops)
            if want in loops:
                box.setCurrentText(want)
            elif len(loops) > 1 and want == "y":
                box.setCurrentIndex(1)
        self.reorder_edit.setText(", ".join(loops))
        self.threads_y.insertItem(0, NO_LOOP)
        if "y" not in loops:
            self.threads_y.setCurrentIndex(0)
        self._fill_levels(is_update)

    def _levels(self) -> list[tuple[str, list[str]]]:
        """The Func using the current one, with the loops it may be computed in (none when it
        has several users: then only inline or root are legal)."""
        key = self.current_key()
        return self.levels.get((parse_key(key) or (key, None))[0], [])

    def _fill_levels(self, is_update: bool) -> None:
        self.compute_combo.clear()
        self.store_combo.clear()
        self.compute_combo.addItem("inline", ["compute_inline"])
        self.compute_combo.addItem("root", ["compute_root"])
        self.store_combo.addItem("root", ["store_root"])
        for ref, loops in self._levels():
            for loop in loops:
                self.compute_combo.addItem(f"at {ref} loop {loop}", ["compute_at", ref, loop])
                self.store_combo.addItem(f"at {ref} loop {loop}", ["store_at", ref, loop])
        for box, kinds in ((self.compute_combo, COMPUTE), (self.store_combo, STORE)):
            current = next((d for d in self._directives() if d[0] in kinds), None)
            if current is None:
                continue
            i = box.findData(current)
            if i < 0:  # the schedule's own choice is always shown, even where it is not offered
                ref, loop = [*current[1:], None, None][:2]
                text = {"compute_inline": "inline", "compute_root": "root", "store_root": "root"}.get(current[0])
                text = text or ("root" if ref == "root" else f"at {ref} loop {loop}")
                box.addItem(text, list(current))
                i = box.count() - 1
            box.setCurrentIndex(i)
        for w in self.compute_combo, self.compute_button, self.store_combo, self.store_button:
            w.setEnabled(not is_update)
        where = ", ".join(ref for ref, _ in self._levels())
        tip = (
            "applies to the whole Func: choose the Func itself, not an update"
            if is_update
            else f"at a loop of {where}, the Func that uses it" if where
            else "inline or root: no single Func uses it (or it is an output), so no loop encloses every use"
        )
        for w in self.compute_combo, self.store_combo:
            w.setToolTip(tip)

    def _update_list_buttons(self) -> None:
        row, n = self.directive_list.currentRow(), self.directive_list.count()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < n - 1)

    def _refresh_text(self) -> None:
        self.text_edit.setPlainText(format_schedule(self.schedule, self.node_id or ""))
        self.text_edit.setExtraSelections([])
        self.text_error.hide()

    def _commit(self, schedule: Schedule, select_row: int | None = None) -> bool:
        """Checks a new schedule; shows its problems in place, else keeps it and emits it."""
        if self.node_id is None:
            return False
        schedule = {k: v for k, v in schedule.items() if v}
        problems = check_schedule(schedule)
        if problems:
            self.set_problem("\n".join(problems))
            return False
        self.set_problem(None)
        self.schedule = schedule
        self._refresh_func()
        self._refresh_text()
        if select_row is not None:
            self.directive_list.setCurrentRow(select_row)
        self.schedule_edited.emit(self.node_id, copy.deepcopy(schedule))
        return True

    def _with(self, directives: list[list[Any]]) -> Schedule:
        new = copy.deepcopy(self.schedule)
        new[self.current_key()] = directives
        return new

    def _append(self, directive: list[Any]) -> None:
        self._commit(self._with([*copy.deepcopy(self._directives()), directive]))

    # ------------------------------------------------------------------ actions
    def _set_compute(self) -> None:
        chosen = self.compute_combo.currentData()
        kept = [d for d in self._directives() if d[0] not in COMPUTE]
        self._commit(self._with([list(chosen), *kept]))

    def _set_store(self) -> None:
        chosen = self.store_combo.currentData()
        kept = [d for d in self._directives() if d[0] not in STORE]
        at = next((i + 1 for i, d in enumerate(kept) if d[0] in COMPUTE), 0)
        self._commit(self._with([*kept[:at], list(chosen), *kept[at:]]))

    def _tail(self, box: QtWidgets.QComboBox) -> list[str]:
        return [] if box.currentText() == "auto" else [box.currentText()]

    def _add_split(self) -> None:
        loop, loops = self.split_loop.currentText(), self._loops()
        short = loop.rsplit(".", 1)[-1]
        outer, inner = unused_name(f"{short}o", loops), unused_name(f"{short}i", loops)
        self._append(["split", loop, outer, inner, self.split_factor.value(), *self._tail(self.split_tail)])

    def _add_tile(self) -> None:
        x, y, loops = self.tile_x.currentText(), self.tile_y.currentText(), self._loops()
        if x == y:
            self.set_problem("tile needs two different loops")
            return
        xs, ys = x.rsplit(".", 1)[-1], y.rsplit(".", 1)[-1]
        names = [unused_name(f"{v}{part}", loops) for part, v in (("o", xs), ("o", ys), ("i", xs), ("i", ys))]
        size = [self.tile_xsize.value(), self.tile_ysize.value()]
        self._append(["tile", x, y, *names, *size, *self._tail(self.tile_tail)])

    def _add_reorder(self) -> None:
        names = [n.strip() for n in self.reorder_edit.text().replace(" ", ",").split(",") if n.strip()]
        unknown = [n for n in names if n not in self._loops()]
        if not names or unknown:
            why = f"unknown loop {', '.join(unknown)}" if unknown else "no loops given"
            self.set_problem(f"reorder: {why}; the loops are {', '.join(self._loops())}")
            return
        self._append(["reorder", *names])

    def _with_factor(self, name: str, loop: str, box: QtWidgets.QComboBox) -> None:
        factor = box.currentText()
        self._append([name, loop] + ([] if factor == "no split" else [int(factor)]))

    def _add_vectorize(self) -> None:
        self._with_factor("vectorize", self.vector_loop.currentText(), self.vector_width)

    def _add_unroll(self) -> None:
        self._with_factor("unroll", self.unroll_loop.currentText(), self.unroll_factor)

    def _add_parallel(self) -> None:
        self._append(["parallel", self.parallel_loop.currentText()])

    def _add_gpu_tile(self) -> None:
        x, y, loops = self.gpu_x.currentText(), self.gpu_y.currentText(), self._loops()
        if x == y:
            self.set_problem("GPU tiling needs two different loops")
            return
        bx, by = unused_name("bx", loops), unused_name("by", loops)
        tx, ty = unused_name("tx", loops), unused_name("ty", loops)
        self._append(["gpu_tile", x, y, bx, by, tx, ty, self.gpu_xsize.value(), self.gpu_ysize.value()])

    def _add_gpu_threads(self) -> None:
        x, y = self.threads_x.currentText(), self.threads_y.currentText()
        if x == y:
            self.set_problem("GPU threads needs two different loops (or none as the second)")
            return
        self._append(["gpu_threads", x] + ([] if y == NO_LOOP else [y]))

    def _remove(self) -> None:
        row = self.directive_list.currentRow()
        directives = copy.deepcopy(self._directives())
        if 0 <= row < len(directives):
            del directives[row]
            self._commit(self._with(directives), min(row, len(directives) - 1))

    def _move(self, step: int) -> None:
        row = self.directive_list.currentRow()
        directives = copy.deepcopy(self._directives())
        target = row + step
        if 0 <= row < len(directives) and 0 <= target < len(directives):
            directives[row], directives[target] = directives[target], directives[row]
            self._commit(self._with(directives), target)

    def _request_preset(self) -> None:
        if self.node_id is not None:
            self.preset_requested.emit(self.node_id, self.preset_combo.currentText())

    def _apply_text(self) -> None:
        if self.node_id is None:
            return
        text = self.text_edit.toPlainText()
        known = {self.node_id: {(parse_key(k) or (k, None))[0] for k in self.funcs}}
        try:
            schedule = parse_schedule_text(text, self.node_id, known)
        except ScheduleTextError as e:
            self._show_text_error(e)
            return
        self.text_error.hide()
        self.text_edit.setExtraSelections([])
        self._commit(schedule)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:  # noqa: N802 - Qt's name
        """Ctrl+Enter in the text field applies it (instead of inserting a line)."""
        if (
            watched is self.text_edit
            and event.type() == QtCore.QEvent.Type.KeyPress
            and event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter)
            and event.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier
        ):
            self._apply_text()
            return True
        return super().eventFilter(watched, event)

    def _show_text_error(self, e: ScheduleTextError) -> None:
        """Underlines the fault in place and says what is wrong under the text."""
        sel = QtWidgets.QTextEdit.ExtraSelection()
        sel.format.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline)
        sel.format.setUnderlineColor(QtGui.QColor("#dc2626"))
        sel.format.setBackground(QtGui.QColor("#fee2e2"))
        cursor = QtGui.QTextCursor(self.text_edit.document())
        end = min(e.offset + e.length, len(self.text_edit.toPlainText()))
        start = min(e.offset, max(0, end - 1))
        cursor.setPosition(start)
        cursor.setPosition(max(end, start + 1) if end > start else end, QtGui.QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cursor
        self.text_edit.setExtraSelections([sel])
        self.text_error.setText(f"line {e.line}, column {e.column}: {e.detail}")
        self.text_error.show()
