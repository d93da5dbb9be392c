"""The editor's main window: the canvas in the centre, docks around it, menus, files.

It owns one EditSession (the document and its history) and wires the panels to it: a
change of the document re-syncs the canvas and refreshes the panels, then (debounced)
re-inspects the document and recomputes the preview on the job runner's worker thread.
Nothing here compiles or computes an image itself: it calls `nodes` through jobs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pixelweave.app.editor.autosave import Autosave
from pixelweave.app.editor.benchmark_panel import BenchmarkPanel
from pixelweave.app.editor.export_dialog import ExportDialog
from pixelweave.app.editor.graph_canvas import GraphCanvas
from pixelweave.app.editor.jobs import JobRunner
from pixelweave.app.editor.log_panel import LogPanel
from pixelweave.app.editor.loop_nest_view import LoopNestView
from pixelweave.app.editor.palette import NodePalette
from pixelweave.app.editor.preview_panel import PreviewPanel
from pixelweave.app.editor.properties_panel import PropertiesPanel
from pixelweave.app.editor.schedule_panel import SchedulePanel
from pixelweave.app.editor.settings import config_directory, settings
from pixelweave.app.editor.trace_panel import TracePanel
from pixelweave.engine.errors import PixelweaveError
from pixelweave.nodes.document import Document, read_document
from pixelweave.nodes.editing import EditSession
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.generator_nodes import load_generator_nodes
from pixelweave.nodes.inspection import HAS_PROBLEMS, Inspection, inspect_document
from pixelweave.nodes.node_type import node_type
from pixelweave.nodes.output_part import left_out_text
from pixelweave.nodes.preview import PreviewComputer, PreviewResult
from PySide6 import QtCore, QtGui, QtWidgets

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
ANALYSIS_DELAY_MS = 120
PREVIEW_DELAY_MS = 60
DRAG_PREVIEW_SCALE = 4
OUT_OF_DATE = "(out of date)"
INSPECTOR_OUT_OF_DATE = "Inspector (out of date — updating…)"
MAX_RECENT = 8
AUTOSCHEDULE_LANE = "autoschedule"  # its own worker thread (jobs.LANE_THREADS): tuning takes minutes
DEFAULT_SIZE = QtCore.QSize(1600, 1000)

# "save", "discard" or "cancel"
UnsavedPrompt = Callable[[QtWidgets.QWidget, str], str]


def ask_about_unsaved(parent: QtWidgets.QWidget, name: str) -> str:
    buttons = QtWidgets.QMessageBox.StandardButton
    answer = QtWidgets.QMessageBox.question(
        parent,
        "Unsaved changes",
        f"“{name}” has unsaved changes. Save them first?",
        buttons.Save | buttons.Discard | buttons.Cancel,
        buttons.Save,
    )
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


def _structure(doc: Document) -> dict:
    """What an automatic schedule was chosen for: the document without node positions."""
    data = doc.to_json()
    for node in data.get("nodes", []):
        node.pop("position", None)
    return data


def _copy(doc: Document) -> Document:
    """A copy for a job: the worker thread never shares the document being edited."""
    copy = Document.from_json(doc.to_json())
    copy.path = doc.path
    return copy


class MainWindow(QtWidgets.QMainWindow):
    """Pixelweave's editor window."""

    def __init__(self, *, ask_unsaved: UnsavedPrompt = ask_about_unsaved) -> None:
        super().__init__()
        self.ask_unsaved = ask_unsaved
        self.session = EditSession()
        self.jobs = JobRunner(self)
        self.previews = PreviewComputer()
        self.inspection = Inspection()
        self.current: str | None = None
        self._shown_type: tuple[str, str] | None = None
        self._preview_scale = 1
        self._generation = 0  # counts document changes, so late results can tell they are stale
        self._statement: tuple[int, str] = (-1, "")  # (generation, full statement printed for it)
        self._preview_text = ""  # the time label: the preview's time, then the fused pipeline's
        self._fused_text = ""
        self._reported: set[str] = set()
        self.target, self.device = "host", None  # what the schedule panel, previews, loop nest and benchmark use
        self.autosave = Autosave(config_directory() / "autosave")

        self.canvas = GraphCanvas(self.session, self)
        self.setCentralWidget(self.canvas.widget)
        self._make_docks()
        self._make_target_bar()
        self._make_actions()
        self._make_status_bar()
        self._connect()

        self._analysis_timer = self._single_shot(ANALYSIS_DELAY_MS, self._start_analysis)
        self._preview_timer = self._single_shot(PREVIEW_DELAY_MS, self._start_preview)
        self._autosave_timer = QtCore.QTimer(self)
        self._autosave_timer.setInterval(20_000)
        self._autosave_timer.timeout.connect(self.write_autosave)
        self._autosave_timer.start()

        self.resize(self._fitted_size(DEFAULT_SIZE))
        self._size_docks()
        self._default_state = self.saveState()
        self._restore_layout()
        self.session.subscribe(self._on_document_changed)
        self._on_document_changed("load")

    # ------------------------------------------------------------------ construction
    def _single_shot(self, delay: int, slot: Callable[[], None]) -> QtCore.QTimer:
        timer = QtCore.QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(delay)
        timer.timeout.connect(slot)
        return timer

    def _dock(self, title: str, widget: QtWidgets.QWidget, area: QtCore.Qt.DockWidgetArea) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_").lower())
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _make_docks(self) -> None:
        areas = QtCore.Qt.DockWidgetArea
        self.palette = NodePalette()
        self.properties = PropertiesPanel()
        self.schedule = SchedulePanel()
        self.preview = PreviewPanel()
        self.loop_nest = LoopNestView()
        self.benchmark = BenchmarkPanel(self.jobs)
        self.trace = TracePanel(self.jobs)
        self.log = LogPanel()
        self.palette_dock = self._dock("Nodes", self.palette, areas.LeftDockWidgetArea)
        self.preview_dock = self._dock("Preview", self.preview, areas.RightDockWidgetArea)
        self.properties_dock = self._dock("Properties", self.properties, areas.RightDockWidgetArea)
        self.schedule_dock = self._dock("Schedule", self.schedule, areas.RightDockWidgetArea)
        self.tabifyDockWidget(self.properties_dock, self.schedule_dock)
        self.properties_dock.raise_()
        # one dock with tabs: three tabified docks leave a stray tab bar behind in Qt 6.12
        self.bottom_tabs = QtWidgets.QTabWidget()
        self.bottom_tabs.setDocumentMode(True)
        tabs = ((self.loop_nest, "Loop nest"), (self.benchmark, "Benchmark"), (self.trace, "Trace"), (self.log, "Log"))
        for widget, title in tabs:
            self.bottom_tabs.addTab(widget, title)
        self.inspector_dock = self._dock("Inspector", self.bottom_tabs, areas.BottomDockWidgetArea)
        self.setCorner(QtCore.Qt.Corner.BottomRightCorner, areas.RightDockWidgetArea)
        self.setCorner(QtCore.Qt.Corner.BottomLeftCorner, areas.LeftDockWidgetArea)
        self._size_docks()

    def _size_docks(self) -> None:
        """The first dock sizes, for a window of the default size or the screen's, if smaller."""
        size = self._fitted_size(DEFAULT_SIZE)
        width, height = size.width(), size.height()
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        self.resizeDocks([self.palette_dock], [min(220, width * 17 // 100)], horizontal)
        self.resizeDocks([self.preview_dock], [min(520, width * 33 // 100)], horizontal)
        self.resizeDocks([self.preview_dock, self.properties_dock], [height * 48 // 100, height * 42 // 100], vertical)
        self.resizeDocks([self.inspector_dock], [min(280, height * 28 // 100)], vertical)

    def _action(self, menu: QtWidgets.QMenu, text: str, slot: Callable[[], Any], shortcut: Any = None) -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
            action.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def _make_target_bar(self) -> None:
        """The target selector: the host CPU and each usable OpenCL device."""
        from pixelweave.nodes.targets import target_choices

        bar = self.addToolBar("Target")
        bar.setObjectName("target_toolbar")
        bar.addWidget(QtWidgets.QLabel(" Target: "))
        self.target_combo = QtWidgets.QComboBox()
        self.target_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        for choice in target_choices():
            self.target_combo.addItem(choice.label, choice)
        self.target_combo.setToolTip(
            "Where the pipeline runs: the schedule panel edits this target's schedules, and the preview, "
            "loop nest and benchmark use them"
        )
        self.target_combo.currentIndexChanged.connect(self._on_target_chosen)
        bar.addWidget(self.target_combo)

    def set_target(self, target: str, device: str | None = None) -> None:
        """Chooses the target ("host" or "opencl"; for OpenCL, `device` or the first listed)."""
        for i in range(self.target_combo.count()):
            choice = self.target_combo.itemData(i)
            if choice.target == target and (device is None or choice.device == device):
                self.target_combo.setCurrentIndex(i)
                return
        raise NodeError(f"target {target!r}{f' on device {device}' if device else ''} is not available here")

    def _on_target_chosen(self, index: int) -> None:
        choice = self.target_combo.itemData(index)
        if choice is None or (choice.target, choice.device) == (self.target, self.device):
            return
        self.target, self.device = choice.target, choice.device
        self.schedule.set_target(self.target)
        self.benchmark.set_target(self.target, self.device)
        self.inspection = Inspection()
        self._show_schedule()
        self._mark_out_of_date()
        self.report("info", f"target: {choice.label}")
        self._analysis_timer.start()
        self._preview_scale = 1
        self._preview_timer.start()

    def _make_actions(self) -> None:
        keys = QtGui.QKeySequence.StandardKey
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&New", self.new_document, keys.New)
        self._action(file, "&Open…", self.open_dialog, keys.Open)
        self.recent_menu = file.addMenu("Open &Recent")
        self.examples_menu = file.addMenu("&Examples")
        for path in sorted(EXAMPLES.glob("*.json")):
            title = path.stem.replace("_", " ").capitalize()
            self._action(self.examples_menu, title, lambda p=path: self.open_example(p))
        file.addSeparator()
        self._action(file, "&Save", self.save, keys.Save)
        self._action(file, "Save &As…", self.save_as, keys.SaveAs)
        self._action(file, "&Export…", self.export_dialog, "Ctrl+E")
        file.addSeparator()
        self._action(file, "Load &Generator Nodes…", self.load_generator_nodes_dialog)
        self._action(file, "&Import Function…", self.import_function_dialog)
        file.addSeparator()
        self._action(file, "&Quit", self.close, keys.Quit)

        edit = bar.addMenu("&Edit")
        self.undo_action = self._action(edit, "&Undo", self.session_undo, keys.Undo)
        self.redo_action = self._action(edit, "&Redo", self.session_redo, keys.Redo)
        edit.addSeparator()
        self._action(edit, "Cu&t", self.cut, keys.Cut)
        self._action(edit, "&Copy", self.copy, keys.Copy)
        self._action(edit, "&Paste", self.paste, keys.Paste)
        self._action(edit, "&Duplicate", self.duplicate, "Ctrl+D")
        self._action(edit, "De&lete", self.delete_selected, keys.Delete)
        self._action(edit, "Select &All", self.select_all, keys.SelectAll)
        edit.addSeparator()
        self._action(edit, "&Group Selection", self.group_selection, "Ctrl+G")
        self._action(edit, "U&ngroup", self.ungroup_selection, "Ctrl+Shift+G")

        view = bar.addMenu("&View")
        self._action(view, "&Frame All", self.canvas.frame_all, "F")
        self._action(view, "Zoom &In", lambda: self.zoom_canvas(0.1), "Ctrl+=")
        self._action(view, "Zoom &Out", lambda: self.zoom_canvas(-0.1), "Ctrl+-")
        self._action(view, "&Reset Zoom", self.canvas.graph.reset_zoom, "Ctrl+0")
        view.addSeparator()
        for dock in self.findChildren(QtWidgets.QDockWidget):
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        self._action(view, "Reset &Layout", self.reset_layout)

        run = bar.addMenu("&Run")
        self._action(run, "&Refresh Preview", self.refresh, "F5")
        self._action(run, "&Benchmark", self.run_benchmark, "Ctrl+B")
        self._action(run, "&Trace Schedule", self.run_trace, "Ctrl+T")
        self._action(run, "&Cancel", self.cancel_jobs, "Esc")
        self._refresh_recent_menu()

    def _make_status_bar(self) -> None:
        self.busy = QtWidgets.QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setMaximumHeight(14)
        self.busy.setVisible(False)
        self.timing = QtWidgets.QLabel()
        self.statusBar().addPermanentWidget(self.timing)
        self.statusBar().addPermanentWidget(self.busy)

    def _connect(self) -> None:
        self.canvas.selection_changed.connect(self._on_selection)
        self.canvas.message.connect(self.report)
        self.palette.node_requested.connect(self.add_node_at_centre)
        self.properties.param_edited.connect(self._on_param_edited)
        self.properties.rename_requested.connect(self._on_rename)
        self.schedule.schedule_edited.connect(self._on_schedule_edited)
        self.schedule.preset_requested.connect(self._on_preset)
        self.schedule.auto.requested.connect(self.auto_schedule)
        self.schedule.auto.cancel_requested.connect(lambda: self.jobs.cancel(AUTOSCHEDULE_LANE))
        self.loop_nest.node_clicked.connect(lambda node_id: self.canvas.select([node_id]))
        self.loop_nest.mode_button.toggled.connect(lambda on: on and self._start_analysis())
        self.benchmark.restore_requested.connect(self._on_restore)
        self.benchmark.finished.connect(self._on_benchmark_finished)
        self.benchmark.room_wanted.connect(self._give_inspector_room)
        self.jobs.busy_changed.connect(self.busy.setVisible)

    # ------------------------------------------------------------------ reporting
    def report(self, level: str, text: str) -> None:
        """Into the log, and the latest one into the status bar: never a dialog."""
        self.log.add(level, text)
        self.statusBar().showMessage(text, 8000)

    # ------------------------------------------------------------------ document changes
    def _on_document_changed(self, reason: str) -> None:
        self.canvas.sync()
        doc = self.session.document
        if self.current is not None and not doc.has_node(self.current):
            self.current = None
        self._update_title()
        self.undo_action.setEnabled(self.session.can_undo())
        self.redo_action.setEnabled(self.session.can_redo())
        self.undo_action.setText(f"&Undo {self.session.undo_label()}".strip())
        self.redo_action.setText(f"&Redo {self.session.redo_label()}".strip())
        self._show_current(rebuild=reason in ("load", "undo", "redo"))
        self.benchmark.set_document(doc)
        self.trace.set_document(doc)
        if reason == "save":
            return
        self._mark_out_of_date()
        self._analysis_timer.start()
        self._preview_timer.start()

    def _mark_out_of_date(self) -> None:
        """Nothing stale is shown as current: the preview (dimmed), the inspector and the time
        label say they are out of date until the new results arrive."""
        self._generation += 1
        if self.preview.current_array() is not None:
            self.preview.set_stale(True, "the document changed")
        self.inspector_dock.setWindowTitle(INSPECTOR_OUT_OF_DATE)
        if self.loop_nest_text():
            self.loop_nest.set_message("Out of date: the document changed; lowering the new pipeline…")
        self.jobs.cancel("fused")
        for name in ("_preview_text", "_fused_text"):
            text = getattr(self, name)
            if text and not text.endswith(OUT_OF_DATE):
                setattr(self, name, f"{text} {OUT_OF_DATE}")
        self._show_timing()

    def _update_title(self) -> None:
        doc = self.session.document
        where = f" — {doc.path}" if doc.path else ""
        self.setWindowTitle(f"{doc.name or 'Untitled'}[*]{where} — Pixelweave")
        self.setWindowModified(self.session.dirty)

    def _on_selection(self, ids: list[str]) -> None:
        node_id = ids[-1] if ids else None
        if node_id == self.current:
            return
        self.current = node_id
        self._show_current(rebuild=True)
        self.loop_nest.highlight_node(node_id)
        self._preview_scale = 1
        self._preview_timer.start()

    def _show_current(self, rebuild: bool) -> None:
        """Refreshes the properties and schedule panels for the selected node."""
        doc = self.session.document
        if self.current is None:
            self.properties.clear()
            self.schedule.clear()
            self._shown_type = None
            if not doc.nodes:
                self.preview.show_message("Add nodes from the palette on the left (or press Tab on the canvas)")
            else:
                self.preview.show_message("Select a node to preview its output")
            return
        node = doc.node(self.current)
        key = (node.id, node.type)
        if rebuild or key != self._shown_type:
            self.properties.show_node(
                node.id, node_type(node.type), dict(node.params), [n.id for n in doc.nodes], doc.folder
            )
            self._shown_type = key
        else:
            self.properties.update_values(dict(node.params))
        self._show_schedule()
        self._show_problems_of_current()

    def _show_schedule(self) -> None:
        if self.current is None:
            return
        node = self.session.document.node(self.current)
        # until the background inspection reports this node's loops, show its Funcs without them
        schedule = node.schedule_for(self.target)
        loops = self.inspection.loops.get(node.id) or {key: [] for key in schedule} or {"out": []}
        self.schedule.show_node(node.id, loops, dict(schedule), self.inspection.levels.get(node.id, {}))

    def _show_problems_of_current(self) -> None:
        if self.current is None:
            return
        problems = self.inspection.problems_of(self.current)
        self.properties.set_error("\n".join(problems) or None)
        schedule_problems = [p for p in problems if "schedule" in p]
        if problems and not schedule_problems and self.current not in self.inspection.loops:
            # the node could not be built: say why its schedule has no loops to offer
            schedule_problems = [f"`{self.current}` has no loops to schedule until this is fixed:", *problems]
        self.schedule.set_problem("\n".join(schedule_problems) or None)

    # ------------------------------------------------------------------ edits from panels
    def _on_param_edited(self, node_id: str, name: str, value: Any, final: bool) -> None:
        try:
            self.session.set_param(node_id, name, value, merge=True)
        except NodeError as e:
            self.report("error", str(e))
            return
        if final:
            self.session.end_merge()
        self._preview_scale = 1 if final else DRAG_PREVIEW_SCALE

    def _on_rename(self, old: str, new: str) -> None:
        try:
            self.session.rename_node(old, new)
        except NodeError as e:
            self.properties.reject_rename(old, e.detail)
            return
        self.current = new
        self.canvas.select([new])

    def _on_schedule_edited(self, node_id: str, schedule: dict) -> None:
        try:
            self.session.set_schedule(node_id, schedule, self.target)
        except NodeError as e:
            self.schedule.set_problem(e.detail)

    def _on_preset(self, node_id: str, preset: str) -> None:
        from pixelweave.nodes.pipeline_build import build_document
        from pixelweave.nodes.schedule_presets import preset_schedule

        doc = _copy(self.session.document)

        def work(token: Any, progress: Any) -> dict:
            return preset_schedule(build_document(doc, check_lowering=False), node_id, preset)

        def failed(error: BaseException, _trace: str) -> None:
            self.schedule.set_problem(f"preset {preset}: {error}")

        self.jobs.submit("preset", work, done=lambda s: self._on_schedule_edited(node_id, s), failed=failed)

    def auto_schedule(self, node_id: str, method: str, budget_s: float) -> None:
        """Chooses a schedule automatically for the whole pipeline ("") or one node, off the GUI
        thread (the tuner's best time plotted as it goes), and applies it as one undoable edit."""
        from pixelweave.nodes.autoschedule import ScheduleChange, auto_schedule_change

        doc = _copy(self.session.document)
        structure = _structure(doc)
        trace: list[tuple[float, float]] = []  # (seconds since start, best seconds): written by the worker
        start = time.perf_counter()
        panel = self.schedule.auto

        def work(token: Any, progress: Any) -> ScheduleChange:
            options: dict[str, Any] = {}
            if method == "tune":

                def tuned(best: float, tried: int) -> None:
                    trace.append((time.perf_counter() - start, best))
                    progress(tried, 0, "")

                options = {"budget_s": budget_s, "progress": tuned, "should_stop": lambda: token.cancelled}
            return auto_schedule_change(doc, node_id or None, method, **options)

        def on_progress(_tried: int, _total: int, _text: str) -> None:
            for seconds, best in trace[len(panel.points()) :]:
                panel.add_point(seconds, best)

        def done(change: ScheduleChange) -> None:
            on_progress(0, 0, "")
            if _structure(self.session.document) != structure:
                panel.show_failure("The document changed while scheduling; run Auto-schedule again")
                return
            what = f"`{node_id}`" if node_id else "the pipeline"
            summary = f"{change.result.method} schedule of {what} chosen in {change.result.search_seconds:.2f} s"
            if change.seconds_before is not None and change.seconds_after is not None:
                summary += (
                    f"; {change.seconds_before * 1e3:.2f} ms (analytic) -> {change.seconds_after * 1e3:.2f} ms "
                    f"after {change.result.tuning.tried} candidates"
                )
            if change.schedules:
                self.session.apply(f"Auto-schedule {node_id or 'pipeline'}", change.apply_to)
            else:
                summary += "; it is the schedule the document already has"
            panel.show_change(summary, change.directives_diff, change.loop_nest_diff)
            self.report("info", summary)

        def failed(error: BaseException, _trace: str) -> None:
            panel.show_failure(f"Auto-schedule: {error}")
            self.report("error", f"auto-schedule: {error}")

        self.jobs.submit(AUTOSCHEDULE_LANE, work, done=done, failed=failed, progress=on_progress)

    def _on_restore(self, data: dict) -> None:
        try:
            doc = Document.from_json(data)
        except DocumentError as e:
            self.report("error", str(e))
            return
        self.session.replace(doc, "Restore benchmarked schedule")
        self.report("info", "restored the schedule of an earlier benchmark run (Undo brings back the current one)")

    def _on_benchmark_finished(self, result: Any) -> None:
        self.report(
            "info",
            f"benchmark: median {result.median * 1e3:.2f} ms, {result.megapixels_per_second:.1f} megapixels/s",
        )

    # ------------------------------------------------------------------ background work
    def _start_analysis(self) -> None:
        if self.jobs.is_busy("preview") or self._preview_timer.isActive():
            # The picture first: lowering the fused pipeline would share the CPU with it.
            self._analysis_timer.start()
            return
        doc = _copy(self.session.document)
        generation, target = self._generation, self.target

        def work(token: Any, progress: Any) -> Inspection:
            # the loop nest is shown as soon as lowering has made it, before the later passes
            return inspect_document(
                doc,
                statement=False,
                check=token.check,
                on_loop_nest=lambda text: progress(1, 2, text),
                target=target,
            )

        self.jobs.submit(
            "analysis",
            work,
            done=lambda inspection: target == self.target and self._on_analysis(inspection),
            failed=self._job_failed,
            progress=lambda _done, _total, text: self._on_early_loop_nest(text, generation),
        )
        # Printing the whole statement can take minutes on deep pipelines: only when it is
        # shown, in a lane of its own, after the loop nest (which never waits for it).
        self.jobs.cancel("statement")
        if self.loop_nest.mode_button.isChecked():

            def printing(token: Any, progress: Any) -> Inspection:
                return inspect_document(doc, statement=True, check=token.check, target=target)

            self.jobs.submit(
                "statement", printing, done=lambda i: self._on_statement(i, generation), failed=self._job_failed
            )

    def _on_early_loop_nest(self, text: str, generation: int) -> None:
        """The loop nest of the current document, before lowering has finished."""
        if generation != self._generation or not text:
            return
        earlier, statement = self._statement
        self.loop_nest.set_text(text, statement if earlier == self._generation else "")
        self.loop_nest.highlight_node(self.current)

    def _on_statement(self, inspection: Inspection, generation: int) -> None:
        if generation != self._generation or not inspection.loop_nest:
            return  # the document changed meanwhile
        self._statement = (generation, inspection.statement)
        self.loop_nest.set_text(inspection.loop_nest, inspection.statement)
        self.loop_nest.highlight_node(self.current)

    def _on_analysis(self, inspection: Inspection) -> None:
        self.inspection = inspection
        self.inspector_dock.setWindowTitle("Inspector")
        if inspection.loop_nest:
            generation, statement = self._statement
            self.loop_nest.set_text(inspection.loop_nest, statement if generation == self._generation else "")
            self.loop_nest.highlight_node(self.current)
            self._start_fused(self._generation)
        else:
            message = inspection.message or HAS_PROBLEMS
            self.loop_nest.set_message(message, error=message == HAS_PROBLEMS)
        by_node: dict[str, list[str]] = {}
        for node_id, message in inspection.problems:
            by_node.setdefault(node_id or "", []).append(message)
        self.canvas.show_problems(by_node)
        current = {f"{n}: {m}" if n else m for n, m in inspection.problems}
        for line in sorted(current - self._reported):
            self.log.add("error", line)
        self._reported = current
        if inspection.problems:
            self.statusBar().showMessage(f"{len(inspection.problems)} problem(s): see the Log", 8000)
        if self.current is not None and self.session.document.has_node(self.current):
            self._show_schedule()
            self._show_problems_of_current()

    def _start_fused(self, generation: int) -> None:
        """Compiles the fused, scheduled pipeline in the background (after the picture and the
        loop nest) and times one run: the code is then cached for the benchmark and export."""
        from pixelweave.nodes.pipeline_build import build_document

        doc, target, device = _copy(self.session.document), self.target, self.device

        def work(token: Any, progress: Any) -> float:
            built = build_document(doc, check_lowering=False, target=target)
            images = built.sample_inputs()
            sizes = built.output_sizes(images)
            compiled = built.runner.compile(sizes, target, device=device)
            token.check()
            start = time.perf_counter()
            for _, size, fn in compiled:
                fn(size, images)
            return time.perf_counter() - start

        def done(seconds: float) -> None:
            if generation == self._generation:
                self._fused_text = f"fused pipeline: {seconds * 1e3:.1f} ms"
                self._show_timing()

        def failed(error: BaseException, _trace: str) -> None:
            if generation == self._generation:  # the preview and the loop nest stand; say why no time
                self._fused_text = ""
                self._show_timing()
                self.report("warning", f"the fused pipeline could not be compiled and timed: {error}")

        self.jobs.submit("fused", work, done=done, failed=failed)

    def _show_timing(self) -> None:
        self.timing.setText("   ".join(part for part in (self._preview_text, self._fused_text) if part))

    def _start_preview(self) -> None:
        if self.current is None:
            return
        doc, node_id, scale = _copy(self.session.document), self.current, self._preview_scale
        computer, target, device = self.previews, self.target, self.device
        self.preview.set_busy(True)

        def work(token: Any, progress: Any) -> PreviewResult:
            return computer.compute(
                doc,
                node_id,
                scale=scale,
                check=token.check,
                progress=lambda done, total: progress(done, total, ""),
                target=target,
                device=device,
            )

        def failed(error: BaseException, _trace: str) -> None:
            self.preview.set_busy(False)
            text = "\n".join(error.problems) if isinstance(error, DocumentError) else str(error)
            self.preview.show_message(f"{node_id}: {text}", error=True)

        shown = self.preview

        def progress(done: int, total: int, _text: str) -> None:
            shown.set_progress(done, total)

        def done(result: PreviewResult) -> None:
            if target == self.target:  # else the picture of the target chosen before: a new one is coming
                self._on_preview(result)

        self.jobs.submit("preview", work, done=done, failed=failed, progress=progress)

    def _on_preview(self, result: PreviewResult) -> None:
        self.preview.set_busy(False)
        if result.node_id != self.current:
            return
        self.preview.show_result(result.array, result.node_id, result.reference, result.reference_title)
        work = f"{result.runs} stage(s) run, {result.compiles} compiled" if result.runs else "all cached"
        timing = f"{result.node_id}: {result.seconds * 1e3:.0f} ms ({work})"
        self.preview.set_note("; ".join(filter(None, [result.note, timing])))
        self._preview_text = f"preview {timing}"
        self._show_timing()
        if result.scale > 1:
            self._preview_scale = 1
            self._preview_timer.start(400)  # full resolution once the slider rests

    def _job_failed(self, error: BaseException, trace: str) -> None:
        self.report("error", f"internal error: {error}")
        self.log.add("error", trace)

    def refresh(self) -> None:
        self._preview_scale = 1
        self._start_analysis()
        self._start_preview()

    def cancel_jobs(self) -> None:
        self.jobs.cancel("preview")
        self.jobs.cancel("analysis")
        self.benchmark.cancel()
        self.trace.cancel()
        self.preview.set_busy(False)

    def zoom_canvas(self, step: float) -> None:
        self.canvas.graph.set_zoom(self.canvas.graph.get_zoom() + step)

    def _give_inspector_room(self) -> None:
        """Comparing two runs needs height for their times and loop nests: the inspector grows
        to half the window (it never shrinks here)."""
        self.inspector_dock.show()
        self.bottom_tabs.setCurrentWidget(self.benchmark)
        wanted = self.height() // 2
        if not self.inspector_dock.isFloating() and self.inspector_dock.height() < wanted:
            self.resizeDocks([self.inspector_dock], [wanted], QtCore.Qt.Orientation.Vertical)

    def run_benchmark(self) -> None:
        self.inspector_dock.show()
        self.bottom_tabs.setCurrentWidget(self.benchmark)
        self.benchmark.start()

    def run_trace(self) -> None:
        """Record a traced run of the document and show it in the Trace tab."""
        self.inspector_dock.show()
        self.bottom_tabs.setCurrentWidget(self.trace)
        self.trace.start()

    # ------------------------------------------------------------------ editing commands
    def session_undo(self) -> None:
        self.session.undo()

    def session_redo(self) -> None:
        self.session.redo()

    def add_node_at_centre(self, type_name: str) -> None:
        viewer = self.canvas.graph.viewer()
        centre = viewer.mapToScene(viewer.viewport().rect().center())
        self.canvas.add_node(type_name, (centre.x(), centre.y()))

    def delete_selected(self) -> None:
        self.session.remove_nodes(self.canvas.selected_ids())

    def select_all(self) -> None:
        self.canvas.select([n.id for n in self.session.document.nodes])

    def copy(self) -> None:
        ids = self.canvas.selected_ids()
        if ids:
            QtWidgets.QApplication.clipboard().setText(self.session.copy(ids))

    def cut(self) -> None:
        self.copy()
        self.delete_selected()

    def paste(self) -> None:
        try:
            ids = self.session.paste(QtWidgets.QApplication.clipboard().text())
        except NodeError as e:
            self.report("warning", e.detail)
            return
        self.canvas.select(ids)

    def duplicate(self) -> None:
        ids = self.canvas.selected_ids()
        if ids:
            self.canvas.select(self.session.duplicate(ids))

    def group_selection(self) -> None:
        ids = self.canvas.selected_ids()
        if not ids:
            self.report("warning", "select the nodes to group first")
            return
        doc = self.session.document
        name = next(f"Group {k}" for k in range(1, 1000) if all(g.name != f"Group {k}" for g in doc.groups))
        try:
            self.session.apply(f"Group {len(ids)} nodes", lambda d: d.add_group(name, ids))
        except NodeError as e:
            self.report("error", str(e))

    def ungroup_selection(self) -> None:
        ids = set(self.canvas.selected_ids())
        names = [g.name for g in self.session.document.groups if ids & set(g.nodes)]
        if not names:
            self.report("warning", "the selected nodes are not in a group")
            return

        def change(doc: Document) -> None:
            for name in names:
                doc.remove_group(name)

        self.session.apply("Ungroup", change)

    # ------------------------------------------------------------------ files
    def _confirm_discard(self) -> bool:
        """True when the current document may be replaced (saved first if the user says so)."""
        if not self.session.dirty:
            return True
        answer = self.ask_unsaved(self, self.session.document.name or "Untitled")
        if answer == "save":
            return self.save()
        return answer == "discard"

    def new_document(self) -> None:
        if self._confirm_discard():
            self.load(Document())

    def load(self, doc: Document, *, dirty: bool = False) -> None:
        self.autosave.discard()
        self.current = None
        self.inspection = Inspection()
        self._reported.clear()
        self._preview_text = self._fused_text = ""  # nothing measured yet for this document
        self.timing.clear()
        self.preview.set_note("")
        self.benchmark.clear_results()
        self.trace.clear()
        self.session.load(doc, dirty=dirty)
        self.canvas.frame_all(readable=True)
        outputs = [n.id for n in doc.nodes if getattr(node_type(n.type), "is_output", False)]
        if outputs:
            self.canvas.select([outputs[0]])

    def open_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Open pipeline", str(self._last_folder()), "Pixelweave pipelines (*.json);;All files (*)"
        )
        if path:
            self.open_path(path)

    def load_generator_nodes_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Load generator nodes", str(self._last_folder()), "Python files (*.py);;All files (*)"
        )
        if path:
            self.load_generator_nodes(path)

    def load_generator_nodes(self, path: str | Path) -> bool:
        """Runs a Python file of @pixelweave.generator classes and adds a node type for each
        to the palette (Custom); a file that fails is reported in the log."""
        try:
            types = load_generator_nodes(path)
        except (PixelweaveError, OSError) as e:
            self.report("error", f"cannot load generator nodes from {path}: {e}")
            return False
        self.canvas.register_node_types()
        self.palette.reload()
        names = ", ".join(t.title for t in types)
        self.report("info", f"loaded generator nodes from {path}: {names}")
        return True

    def import_function_dialog(self) -> None:
        """Asks for a C file or Python prototype and one of its functions, then imports it."""
        from pixelweave.nodes.lift.to_document import functions_in

        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self,
            "Import a function",
            str(self._last_folder()),
            "C files and Python prototypes (*.c *.py);;All files (*)",
        )
        if not path:
            return
        try:
            names = functions_in(path)
        except (OSError, SyntaxError, UnicodeError) as e:
            self.report("error", f"cannot read {path}: {e}")
            return
        if not names:
            self.report("error", f"cannot import from {path}: it defines no function to lift")
            return
        name, ok = QtWidgets.QInputDialog.getItem(
            self, "Import a function", f"Function of {Path(path).name}:", names, 0, False
        )
        if ok and name:
            self.import_function(path, name)

    def import_function(self, path: str | Path, function: str) -> Any:
        """Lifts and verifies a function of a C file or Python prototype in the background (see
        docs/lifting.md), then opens its pipeline document, unsaved, with the verification on
        its stages; what was verified and how goes to the log, and a function that cannot be
        lifted is reported there with its file, line and construct. The job's CancelToken."""
        from pixelweave.nodes.lift.to_document import lift_document

        self.report("info", f"lifting `{function}` from {path}…")

        def work(token: Any, progress: Any) -> Any:
            return lift_document(path, function)

        def done(result: Any) -> None:
            for line in result.lines:
                self.log.add("info" if result.verified else "warning", line)
            if not self._confirm_discard():
                return
            self.load(result.document, dirty=True)
            state = "verified" if result.verified else "NOT verified"
            self.report("info" if result.verified else "warning", f"imported `{function}` from {path} ({state})")

        def failed(error: BaseException, trace: str) -> None:
            self.report("error", f"cannot import `{function}`: {error}")

        return self.jobs.submit("lift", work, done=done, failed=failed)

    def open_path(self, path: str | Path) -> bool:
        """Opens a document file; a broken one is reported in the log and left closed."""
        if not self._confirm_discard():
            return False
        try:
            doc = read_document(path)
        except (DocumentError, NodeError, OSError) as e:
            self.report("error", f"cannot open {path}: {e}")
            return False
        self.load(doc)
        self._add_recent(Path(path))
        self.report("info", f"opened {path}")
        return True

    def open_example(self, path: Path) -> None:
        """Opens a bundled example as a new, unsaved document (Save asks where)."""
        if not self._confirm_discard():
            return
        doc = read_document(path)
        doc.path = None
        self.load(doc)
        self.report("info", f"opened the example “{doc.name}”")

    def save(self) -> bool:
        if self.session.document.path is None:
            return self.save_as()
        return self._save_to(self.session.document.path)

    def save_as(self, path: str | Path | None = None) -> bool:
        if path is None:
            start = self._last_folder() / f"{self.session.document.name or 'untitled'}.json"
            chosen, _ = QtWidgets.QFileDialog.getSaveFileName(
                self, "Save pipeline", str(start), "Pixelweave pipelines (*.json)"
            )
            if not chosen:
                return False
            path = chosen if chosen.endswith(".json") else f"{chosen}.json"
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        try:
            self.session.save(path)
        except (OSError, NodeError) as e:
            self.report("error", f"could not save {path}: {e}")
            return False
        self.autosave.discard()
        self._add_recent(path)
        self._update_title()
        self.report("info", f"saved {path}")
        return True

    def export_dialog(self) -> None:
        dialog = ExportDialog(_copy(self.session.document), self.jobs, self)
        dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.exported.connect(self._on_exported)
        dialog.open()
        self.last_export_dialog = dialog

    def _on_exported(self, result: Any) -> None:
        self.report("info", f"exported {result.name} into {result.directory}")
        if result.left_out:
            self.report("warning", f"export of {result.name}: {left_out_text(result.left_out)}")

    # ------------------------------------------------------------------ recent files, autosave
    def _last_folder(self) -> Path:
        recent = self.recent_files()
        return recent[0].parent if recent else Path.home()

    def recent_files(self) -> list[Path]:
        raw = settings().value("recent_files", [])
        items = raw if isinstance(raw, list) else [raw] if raw else []
        return [Path(p) for p in items if p]

    def _add_recent(self, path: Path) -> None:
        items = [str(path.resolve())] + [str(p) for p in self.recent_files() if p != path.resolve()]
        settings().setValue("recent_files", items[:MAX_RECENT])
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = [p for p in self.recent_files() if p.exists()]
        for path in recent:
            self._action(self.recent_menu, str(path), lambda p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(recent))

    def write_autosave(self) -> None:
        if self.session.dirty:
            try:
                self.autosave.write(self.session.document)
            except OSError as e:
                self.report("warning", f"autosave failed: {e}")

    def recover(self, path: Path) -> None:
        """Loads a document left by an editor that did not close cleanly (marked unsaved)."""
        doc = self.autosave.read(path)
        self.load(doc, dirty=True)
        self.autosave.remove(path)
        self.report("info", "recovered the unsaved document of an earlier session: save it to keep it")

    # ------------------------------------------------------------------ window
    def _fitted_size(self, wanted: QtCore.QSize) -> QtCore.QSize:
        """wanted, made smaller where the screen is smaller (the frame needs a little room)."""
        screen = self.screen() or QtGui.QGuiApplication.primaryScreen()
        if screen is None:
            return wanted
        room = screen.availableGeometry().size() - QtCore.QSize(16, 48)
        return wanted.boundedTo(room)

    def reset_layout(self) -> None:
        """The docks back where they started, with their first sizes, in a window that fits
        the screen (View > Reset Layout)."""
        if self.isMaximized() or self.isFullScreen():
            self.showNormal()
        self.restoreState(self._default_state)
        for dock in self.findChildren(QtWidgets.QDockWidget):
            dock.setFloating(False)
            dock.show()
        self.resize(self._fitted_size(DEFAULT_SIZE))
        self._size_docks()
        settings().remove("window_state")
        self.report("info", "the window layout is back to its default")

    def _restore_layout(self) -> None:
        state = settings().value("window_state")
        if isinstance(state, QtCore.QByteArray) and not os.environ.get("PIXELWEAVE_DEFAULT_LAYOUT"):
            self.restoreState(state)

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:  # noqa: N802
        if not self._confirm_discard():
            event.ignore()
            return
        settings().setValue("window_state", self.saveState())
        self.jobs.shutdown()
        self.autosave.discard()
        event.accept()

    def loop_nest_text(self) -> str:
        """What the loop-nest inspector shows now."""
        return self.loop_nest.text()

    def wait_idle(self, timeout_ms: int = 120_000) -> bool:
        """Lets the debounce timers fire and waits for every job (tests, screenshots)."""
        deadline = QtCore.QDeadlineTimer(timeout_ms)
        app = QtWidgets.QApplication.instance()
        while not deadline.hasExpired():
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
            if not (self._analysis_timer.isActive() or self._preview_timer.isActive() or self.jobs.is_busy()):
                app.processEvents()
                if not (self._analysis_timer.isActive() or self._preview_timer.isActive() or self.jobs.is_busy()):
                    return True
            QtCore.QThread.msleep(5)
        return False
