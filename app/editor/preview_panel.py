"""The preview dock's contents: the selected node's output, whatever its shape.

The lead computes node outputs in a background job and hands the arrays here; this panel only
displays them. Images go to an `ImageView` (with optional side-by-side or split comparison
against the pipeline input and a per-channel histogram), 1-D arrays (histograms, lookup
tables) to a bar plot, 0-d scalars to a large read-out. All value mapping and read-out text
comes from the Qt-free `nodes.display`, so what is shown is tested without a screen.

Live editing sends a new result on every change: the panel keeps the user's zoom, scroll,
compare mode and histogram choice across updates, and a bad array becomes a message in the
panel, never an exception escaping into Qt. While a new result is being computed the last
picture stays, dimmed, the header says it is out of date, and a progress bar counts the
stages computed; the next result (or message) clears all three.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pixelweave.app.editor.image_view import ImageView
from pixelweave.nodes import display
from PySide6 import QtCore, QtGui, QtWidgets

COMPARE_OFF = "off"
COMPARE_SIDE_BY_SIDE = "side_by_side"
COMPARE_SPLIT = "split"
COMPARE_MODES = ((COMPARE_OFF, "Off"), (COMPARE_SIDE_BY_SIDE, "Side by side"), (COMPARE_SPLIT, "Split"))

_CHANNEL_COLOURS = {
    1: ((220, 220, 220),),
    2: ((220, 220, 220), (150, 150, 255)),
    3: ((235, 70, 70), (70, 200, 70), (80, 130, 255)),
    4: ((235, 70, 70), (70, 200, 70), (80, 130, 255), (200, 200, 200)),
}
_PLOT_COLOUR = (90, 160, 230)
_HISTOGRAM_HEIGHT = 150


def _tool_button(text: str, tooltip: str, checkable: bool = False) -> QtWidgets.QToolButton:
    button = QtWidgets.QToolButton()
    button.setText(text)
    button.setToolTip(tooltip)
    button.setCheckable(checkable)
    button.setAutoRaise(True)
    button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def _never_widens(label: QtWidgets.QLabel) -> None:
    """A one-line label whose text may be long (a note, a title, pixel values) must not set
    the panel's minimum width: the dock, and with it the window, would grow past the screen.
    It takes the width it is given; the whole text stays readable in its tooltip."""
    label.setMinimumWidth(1)
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QtWidgets.QSizePolicy.Policy.Ignored)
    label.setSizePolicy(policy)


def _zoom_text(zoom: float) -> str:
    percent = zoom * 100.0
    return f"{percent:.0f}%" if percent >= 10 else f"{percent:.1f}%"


class PreviewPanel(QtWidgets.QWidget):
    """Preview of one node output: image (zoom, pan, compare, histogram), plot or scalar.

    Public children, for the main window and tests: `view` and `reference_view` (ImageView),
    the toolbar buttons `fit_button`, `actual_size_button`, `zoom_in_button`,
    `zoom_out_button`, `histogram_button`, the `compare_combo`, `histogram_plot` and
    `array_plot` (pyqtgraph PlotWidget), `scalar_label`, `message_label`, `title_label`,
    `note_label`, `status_label`, `busy_indicator`, `stale_label`."""

    STALE_OPACITY = 0.4

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._array: np.ndarray | None = None
        self._title = ""
        self._reference: np.ndarray | None = None
        self._reference_rgb: np.ndarray | None = None
        self._reference_title = "input"
        self._comparable = False
        self._preferred_compare = COMPARE_OFF
        self._note = ""
        self._display_note = ""
        self._hover: tuple[int, int] = (-1, -1)
        self._stale = False
        self._build()
        self.show_message("Select a node to preview it")

    # --- construction ------------------------------------------------------------------

    def _build(self) -> None:
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(self._build_toolbar())

        # the title (with the staleness marker beside it) on its own line and the note under it
        # across the whole width: a long note (why a schedule cannot be used for the preview)
        # wraps in two or three lines instead of widening the dock
        header = QtWidgets.QVBoxLayout()
        header.setSpacing(0)
        title_row = QtWidgets.QHBoxLayout()
        self.title_label = QtWidgets.QLabel()
        self.title_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.stale_label = QtWidgets.QLabel()
        self.stale_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.stale_label.setStyleSheet("color: #c98a1b; font-size: small;")
        self.stale_label.hide()
        title_row.addWidget(self.title_label, 1)
        title_row.addWidget(self.stale_label)
        self.note_label = QtWidgets.QLabel()
        self.note_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.note_label.setStyleSheet("color: palette(mid); font-size: small;")
        header.addLayout(title_row)
        header.addWidget(self.note_label)
        for label in (self.title_label, self.stale_label, self.note_label):
            _never_widens(label)
        self.note_label.setWordWrap(True)
        layout.addLayout(header)

        self.stack = QtWidgets.QStackedWidget()
        self.message_label = QtWidgets.QLabel()
        self.message_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.message_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.message_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.setMargin(12)
        _never_widens(self.message_label)  # an error naming a long path wraps, or is clipped
        self.stack.addWidget(self.message_label)
        self.stack.addWidget(self._build_image_page())
        self.array_plot = pg.PlotWidget()
        self.array_plot.showGrid(x=True, y=True, alpha=0.25)
        self.array_plot.setLabel("bottom", "index")
        self.array_plot.scene().sigMouseMoved.connect(self._on_plot_hover)
        self.stack.addWidget(self.array_plot)
        self.scalar_label = QtWidgets.QLabel()
        self.scalar_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.scalar_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stack.addWidget(self.scalar_label)
        self._dim = QtWidgets.QGraphicsOpacityEffect(self.stack)
        self._dim.setOpacity(1.0)
        self._dim.setEnabled(False)
        self.stack.setGraphicsEffect(self._dim)
        layout.addWidget(self.stack, 1)

        self.status_label = QtWidgets.QLabel()
        self.status_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.status_label.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.status_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        _never_widens(self.status_label)
        layout.addWidget(self.status_label)

    def _build_toolbar(self) -> QtWidgets.QHBoxLayout:
        bar = QtWidgets.QHBoxLayout()
        bar.setSpacing(2)
        self.fit_button = _tool_button("Fit", "Fit the whole image in the view (F)")
        self.actual_size_button = _tool_button("1:1", "One screen pixel per image pixel (1)")
        self.zoom_in_button = _tool_button("+", "Zoom in (+ or the mouse wheel)")
        self.zoom_out_button = _tool_button("−", "Zoom out (- or the mouse wheel)")
        self.fit_button.clicked.connect(self._fit)
        self.actual_size_button.clicked.connect(self.view_actual_size)
        self.zoom_in_button.clicked.connect(lambda: self._zoom_by(1.25))
        self.zoom_out_button.clicked.connect(lambda: self._zoom_by(1 / 1.25))
        for button in (self.fit_button, self.actual_size_button, self.zoom_in_button, self.zoom_out_button):
            bar.addWidget(button)
        bar.addSpacing(10)
        bar.addWidget(QtWidgets.QLabel("Compare"))
        self.compare_combo = QtWidgets.QComboBox()
        for mode, text in COMPARE_MODES:
            self.compare_combo.addItem(text, mode)
        self.compare_combo.currentIndexChanged.connect(self._on_compare_chosen)
        bar.addWidget(self.compare_combo)
        bar.addSpacing(10)
        self.histogram_button = _tool_button("Histogram", "Show a per-channel histogram under the image", True)
        self.histogram_button.toggled.connect(self._on_histogram_toggled)
        bar.addWidget(self.histogram_button)
        bar.addStretch(1)
        self.busy_indicator = QtWidgets.QProgressBar()
        self.busy_indicator.setRange(0, 0)
        self.busy_indicator.setMaximumWidth(110)
        self.busy_indicator.setMaximumHeight(14)
        self.busy_indicator.setTextVisible(False)
        self.busy_indicator.setToolTip("Computing the preview…")
        self.busy_indicator.hide()
        bar.addWidget(self.busy_indicator)
        return bar

    def _build_image_page(self) -> QtWidgets.QWidget:
        self.view = ImageView()
        self.reference_view = ImageView()
        self.view.hovered.connect(self._on_hover)
        self.reference_view.hovered.connect(self._on_hover)
        self.view.zoom_changed.connect(self._update_status)
        self.result_caption = QtWidgets.QLabel()
        self.reference_caption = QtWidgets.QLabel()
        self._reference_box = self._captioned(self.reference_caption, self.reference_view)
        self._result_box = self._captioned(self.result_caption, self.view)
        self._reference_box.hide()
        self.result_caption.hide()

        self._views_splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self._views_splitter.addWidget(self._reference_box)
        self._views_splitter.addWidget(self._result_box)
        self._views_splitter.setChildrenCollapsible(False)

        self.histogram_plot = pg.PlotWidget()
        self.histogram_plot.setMinimumHeight(80)
        self.histogram_plot.setMouseEnabled(x=True, y=False)
        self.histogram_plot.hideAxis("left")
        self.histogram_plot.hide()

        page = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        page.addWidget(self._views_splitter)
        page.addWidget(self.histogram_plot)
        page.setStretchFactor(0, 1)
        page.setStretchFactor(1, 0)
        page.setChildrenCollapsible(False)
        self._image_page = page
        return page

    @staticmethod
    def _captioned(caption: QtWidgets.QLabel, view: ImageView) -> QtWidgets.QWidget:
        box = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        caption.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        column.addWidget(caption)
        column.addWidget(view, 1)
        return box

    # --- public ------------------------------------------------------------------------

    def show_result(
        self,
        array: np.ndarray,
        title: str,
        reference: np.ndarray | None = None,
        reference_title: str = "input",
    ) -> None:
        """Show a node output: an image (h, w) / (1-4, h, w), a 1-D array as a bar plot, or a
        0-d array as large text. `reference` (usually the pipeline input) enables comparison
        when it is an image of the same width and height."""
        try:
            array = np.asarray(array)
            self._title = title
            if array.ndim == 0:
                self._show_scalar(array)
            elif array.ndim == 1:
                self._show_plot(array)
            else:
                rgb = display.display_rgb(array)
                self._array = array
                self._show_image(rgb, reference, reference_title)
        except (display.DisplayError, ValueError, TypeError) as error:
            self.show_message(f"Cannot show {title}: {error}", error=True)
        self.set_stale(False)

    def show_message(self, text: str, error: bool = False) -> None:
        """No result, a readable message instead (a hint, or an error in red). The image view
        keeps its zoom, so the next image of the same size appears where the user left it."""
        self._array = None
        self.message_label.setText(text)
        colour = "#d9534f" if error else "palette(mid)"
        self.message_label.setStyleSheet(f"color: {colour}; font-size: 14px;")
        self.title_label.setText("")
        self._display_note = ""
        self._update_note()
        self.stack.setCurrentWidget(self.message_label)
        self._set_comparable(False, "Nothing to compare: no image is shown")
        self._update_tools()
        self._update_status()
        self.set_stale(False)

    def set_busy(self, busy: bool) -> None:
        """Show or hide the busy indicator; the last result stays visible meanwhile."""
        if busy:
            self.busy_indicator.setRange(0, 0)  # indeterminate until progress arrives
        self.busy_indicator.setVisible(busy)

    def set_progress(self, done: int, total: int) -> None:
        """Stages computed so far out of total, while busy."""
        if total > 0:
            self.busy_indicator.setRange(0, total)
            self.busy_indicator.setValue(min(done, total))
            self.busy_indicator.setToolTip(f"Computing the preview: {done} of {total} stages")

    def set_stale(self, stale: bool, why: str = "out of date") -> None:
        """Dim the picture shown and say why it is no longer current (the document changed and
        the new picture is being computed); False restores it."""
        self._stale = stale
        self._dim.setOpacity(self.STALE_OPACITY if stale else 1.0)
        self._dim.setEnabled(stale)
        self.stale_label.setText(f"({why} — updating…)" if stale else "")
        self.stale_label.setVisible(stale)

    def is_stale(self) -> bool:
        return self._stale

    def opacity(self) -> float:
        """The opacity of the picture: 1 when current, less while dimmed."""
        return self._dim.opacity() if self._dim.isEnabled() else 1.0

    def is_busy(self) -> bool:
        return not self.busy_indicator.isHidden()

    def set_note(self, text: str) -> None:
        """A small remark beside the title, e.g. "preview at 1/4 resolution"."""
        self._note = text
        self._update_note()

    def compare_mode(self) -> str:
        """The comparison in effect: "off", "side_by_side" or "split"."""
        return str(self.compare_combo.currentData())

    def set_compare_mode(self, mode: str) -> None:
        """Choose a comparison (as the combo does); ignored while comparison is unavailable,
        but remembered for the next comparable result."""
        modes = [value for value, _ in COMPARE_MODES]
        if mode not in modes:
            raise ValueError(f"unknown compare mode {mode!r}: expected one of {', '.join(modes)}")
        self._preferred_compare = mode
        if self._comparable:
            self.compare_combo.setCurrentIndex(modes.index(mode))

    def set_histogram_visible(self, visible: bool) -> None:
        self.histogram_button.setChecked(visible)

    def current_array(self) -> np.ndarray | None:
        """The node output shown, or None while a message is shown."""
        return self._array

    def status_text(self) -> str:
        return self.status_label.text()

    def view_actual_size(self) -> None:
        """1:1 zoom of the image (the 1:1 button)."""
        self.view.actual_size()

    # --- showing each kind of result ---------------------------------------------------

    def _show_image(self, rgb: np.ndarray, reference: np.ndarray | None, reference_title: str) -> None:
        self._reference_title = reference_title
        self._prepare_reference(reference)
        width, height = rgb.shape[1], rgb.shape[0]
        comparable, reason = self._comparison_check(width, height)
        self.view.unlink(self.reference_view)
        self.view.set_reference(None)
        self.view.set_image(rgb)
        self.title_label.setText(f"{self._title}   {display.describe(self._array)}")
        self._display_note = display.display_note(self._array)
        self._update_note()
        self.stack.setCurrentWidget(self._image_page)
        self._hover = self.view.hovered_pixel()
        self._set_comparable(comparable, reason)
        if self.histogram_button.isChecked():
            self._draw_histogram()
        self._update_tools()
        self._update_status()

    def _show_scalar(self, array: np.ndarray) -> None:
        text = display.scalar_text(array)
        self._array = array
        self.scalar_label.setText(
            f"<div style='font-size: 40px; font-weight: 600;'>{text}</div>"
            f"<div style='color: gray;'>{display.describe(array)}</div>"
        )
        self.title_label.setText(f"{self._title}   {display.describe(array)}")
        self._display_note = ""
        self._update_note()
        self.stack.setCurrentWidget(self.scalar_label)
        self._set_comparable(False, "Comparison needs an image; this output is a scalar")
        self._update_tools()
        self._update_status()

    def _show_plot(self, array: np.ndarray) -> None:
        edges, heights = display.series(array)
        self._array = array
        self.array_plot.clear()
        self.array_plot.plot(
            edges,
            heights,
            stepMode="center",
            fillLevel=0,
            pen=pg.mkPen(_PLOT_COLOUR, width=1),
            brush=pg.mkBrush(*_PLOT_COLOUR, 110),
        )
        self.array_plot.setLabel("left", display.element_name(array.dtype))
        self.array_plot.autoRange()
        self.title_label.setText(f"{self._title}   {display.describe(array)}")
        self._display_note = display.display_note(array)
        self._update_note()
        self.stack.setCurrentWidget(self.array_plot)
        self._set_comparable(False, f"Comparison needs an image; this output is {display.describe(array)}")
        self._update_tools()
        self._hover = (-1, -1)
        self._update_status()

    # --- comparison --------------------------------------------------------------------

    def _prepare_reference(self, reference: np.ndarray | None) -> None:
        """Convert the reference for display once; the lead passes the same input every time."""
        if reference is None:
            self._reference, self._reference_rgb = None, None
            return
        if reference is self._reference and self._reference_rgb is not None:
            return
        self._reference = np.asarray(reference)
        try:
            self._reference_rgb = display.display_rgb(self._reference)
        except display.DisplayError:
            self._reference_rgb = None

    def _comparison_check(self, width: int, height: int) -> tuple[bool, str]:
        """Whether the result can be compared with the reference, and the combo's tooltip."""
        name = self._reference_title
        if self._reference is None:
            return False, "No input image to compare with"
        if self._reference_rgb is None:
            try:
                display.channels(self._reference)
            except display.DisplayError as error:
                return False, f"The {name} cannot be shown: {error}"
            return False, f"The {name} cannot be shown"
        ref_height, ref_width = self._reference_rgb.shape[:2]
        if (ref_width, ref_height) != (width, height):
            return False, (
                f"The {name} is {ref_width} × {ref_height} and this output is {width} × {height}: "
                "comparison needs equal sizes"
            )
        return True, f"Compare this output with the {name}: side by side, or split by a draggable divider"

    def _set_comparable(self, comparable: bool, reason: str) -> None:
        self._comparable = comparable
        self.compare_combo.setEnabled(comparable)
        self.compare_combo.setToolTip(reason)
        wanted = self._preferred_compare if comparable else COMPARE_OFF
        index = [value for value, _ in COMPARE_MODES].index(wanted)
        self.compare_combo.blockSignals(True)
        self.compare_combo.setCurrentIndex(index)
        self.compare_combo.blockSignals(False)
        self._apply_compare_mode()

    def _on_compare_chosen(self, _index: int) -> None:
        self._preferred_compare = self.compare_mode()
        self._apply_compare_mode()

    def _apply_compare_mode(self) -> None:
        mode = self.compare_mode() if self._comparable else COMPARE_OFF
        side_by_side = mode == COMPARE_SIDE_BY_SIDE
        self.view.unlink(self.reference_view)
        if mode == COMPARE_OFF:
            self.view.set_split_enabled(False)
            self.view.set_reference(None)
        else:
            self.view.set_reference(self._reference_rgb)
            self.view.set_split_enabled(mode == COMPARE_SPLIT)
            self.view.set_split_titles(self._reference_title, self._title)
        if side_by_side:
            self.reference_view.set_image(self._reference_rgb)
            self.view.link(self.reference_view)
            self.reference_caption.setText(self._reference_title)
            self.result_caption.setText(self._title)
        newly_side_by_side = side_by_side and self._reference_box.isHidden()
        self._reference_box.setVisible(side_by_side)
        self.result_caption.setVisible(side_by_side)
        if newly_side_by_side:
            half = max(1, self._views_splitter.width() // 2)
            self._views_splitter.setSizes([half, half])
        self._update_status()

    # --- histogram ---------------------------------------------------------------------

    def _on_histogram_toggled(self, checked: bool) -> None:
        self.histogram_plot.setVisible(checked)
        if checked:
            self._draw_histogram()
            sizes = self._image_page.sizes()
            total = sum(sizes)
            if total > _HISTOGRAM_HEIGHT * 2:
                self._image_page.setSizes([total - _HISTOGRAM_HEIGHT, _HISTOGRAM_HEIGHT])

    def _draw_histogram(self) -> None:
        self.histogram_plot.clear()
        if self._array is None or not display.is_image(self._array):
            return
        edges, counts = display.histogram(self._array)
        colours = _CHANNEL_COLOURS[counts.shape[0]]
        for channel_counts, colour in zip(counts, colours, strict=True):
            self.histogram_plot.plot(
                edges,
                channel_counts,
                stepMode="center",
                fillLevel=0,
                pen=pg.mkPen(colour, width=1),
                brush=pg.mkBrush(*colour, 60),
            )
        self.histogram_plot.autoRange()

    def histogram_curves(self) -> list[pg.PlotDataItem]:
        """The histogram's curves, one per channel (R, G, B order), for the main window's tests."""
        return list(self.histogram_plot.listDataItems())

    # --- tools and status --------------------------------------------------------------

    def _update_tools(self) -> None:
        page = self.stack.currentWidget()
        image, plot = page is self._image_page, page is self.array_plot
        for button in (self.fit_button, self.zoom_in_button, self.zoom_out_button):
            button.setEnabled(image or plot)
        self.actual_size_button.setEnabled(image)
        self.histogram_button.setEnabled(image)
        self.histogram_button.setToolTip(
            "Show a per-channel histogram under the image" if image else "A histogram needs an image"
        )
        self.compare_combo.setEnabled(self._comparable and image)

    def _fit(self) -> None:
        if self.stack.currentWidget() is self.array_plot:
            self.array_plot.autoRange()
        else:
            self.view.fit()

    def _zoom_by(self, factor: float) -> None:
        if self.stack.currentWidget() is self.array_plot:
            self.array_plot.getViewBox().scaleBy(x=1.0 / factor, y=1.0)
        elif factor > 1:
            self.view.zoom_in()
        else:
            self.view.zoom_out()

    def _on_hover(self, x: int, y: int) -> None:
        self._hover = (x, y)
        self._update_status()

    def _on_plot_hover(self, scene_pos: QtCore.QPointF) -> None:
        if self._array is None or self._array.ndim != 1:
            return
        point = self.array_plot.getViewBox().mapSceneToView(scene_pos)
        self._hover = (round(point.x()), 0)
        self._update_status()

    def _update_note(self) -> None:
        text = "   ".join(part for part in (self._display_note, self._note) if part)
        self.note_label.setText(text)
        self.note_label.setToolTip(text)

    def _update_status(self, *_args: object) -> None:
        parts = []
        page = self.stack.currentWidget()
        if page is self._image_page:
            parts.append(_zoom_text(self.view.zoom()))
        if self._array is not None and self._array.ndim >= 1:
            parts.append(display.pixel_text(self._array, *self._hover))
            if self.compare_mode() != COMPARE_OFF and self._reference is not None and self._array.ndim >= 2:
                reference_values = display.pixel_values_text(self._reference, *self._hover)
                if reference_values:
                    parts.append(f"│ {self._reference_title}: {reference_values}")
        self.status_label.setText("   ".join(part for part in parts if part))
