"""One editor widget per kind of node parameter, for the properties panel.

Every editor speaks the document's language: `value()` and the `edited` signal carry the
plain JSON value a document stores (lists, not tuples), and nothing leaves an editor unless
`Parameter.check` accepts it, so the document never receives a value its node would refuse.
A value the user typed that does not fit is shown in red under the editor and kept out of
the document. `edited(value, final)` says whether the edit is still in progress (a slider
being dragged, an expression being typed: the editor previews it at low resolution) or done
(an undo step, a full-resolution run).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from pixelweave.nodes.document import IMAGES
from pixelweave.nodes.errors import ParameterError
from pixelweave.nodes.expression_parser import ExpressionError, parse_expression
from pixelweave.nodes.parameters import Parameter
from PySide6 import QtCore, QtGui, QtWidgets

INVALID_COLOUR = "#c62828"
_INVALID_CELL = QtGui.QColor("#ffcdd2")
_BIG_FLOAT = 1e9
_INT_LIMITS = (-(2**31), 2**31 - 1)
_MAX_SLIDER_STEPS = 10000
IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.tif *.tiff *.bmp *.webp *.ppm *.pgm *.pnm);;All files (*)"


def parameter_tooltip(param: Parameter) -> str:
    """The parameter's doc with its range and unit, so hovering tells what values mean."""
    lines = [param.doc] if param.doc else []
    unit = f" {param.unit}" if param.unit else ""
    if param.describe_range():
        lines.append(f"range {param.describe_range()}{unit}")
    elif param.unit:
        lines.append(f"unit: {param.unit}")
    if param.kind == "choice":
        lines.append("one of: " + ", ".join(param.choices))
    if param.kind == "matrix":
        limit = int(param.extra.get("max_size", 15))
        lines.append(f"at most {limit} rows and {limit} columns")
    if param.kind == "curve":
        lines.append("points (input, output) in [0, 1], inputs strictly increasing")
    return "\n".join(lines)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    return value


def _number_text(value: float) -> str:
    """A number as a person would type it: no trailing zeros, integers without a point."""
    return f"{value:.10g}"


class ParameterEditor(QtWidgets.QWidget):
    """The common behaviour of parameter editors: the checked JSON value, the problem line
    shown under the editor, and `edited(value, final)` emitted only for values that pass
    `param.check`. Subclasses build their controls and implement `_show(value)`."""

    edited = QtCore.Signal(object, bool)

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.param = param
        self._value: Any = _jsonable(param.check(param.default))
        self._problem: str | None = None
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(3)
        self._problem_label = QtWidgets.QLabel()
        self._problem_label.setWordWrap(True)
        self._problem_label.setStyleSheet(f"color: {INVALID_COLOUR};")
        self._problem_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self._problem_label.hide()
        self._layout.addWidget(self._problem_label)
        self.setToolTip(parameter_tooltip(param))
        # Editors take the height they need; a form of them must not spread them apart.
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Maximum)

    def value(self) -> Any:
        """The current valid value, as JSON (a copy: editing it changes nothing here)."""
        return _jsonable(self._value)

    def set_value(self, value: Any) -> None:
        """Shows `value` without emitting `edited` (e.g. after undo). A value the parameter
        refuses (a hand-edited document) is reported and the default shown instead."""
        try:
            checked = _jsonable(self.param.check(value))
        except ParameterError as e:
            checked = _jsonable(self.param.check(self.param.default))
            self._value = checked
            self._show(checked)
            self._set_problem(f"the stored value was refused ({e.detail}); showing the default")
            return
        self._value = checked
        self._show(checked)
        self._set_problem(None)

    def problem(self) -> str | None:
        """What is wrong with what the user typed, or None when the editor shows a valid value."""
        return self._problem

    def flush(self) -> None:
        """Commits an edit still in progress (text typed but not yet confirmed), e.g. before
        the panel switches to another node. Editors that commit at once have nothing to do."""

    def _add(self, item: QtWidgets.QWidget | QtWidgets.QLayout) -> None:
        """Adds a control above the problem line."""
        index = self._layout.indexOf(self._problem_label)
        if isinstance(item, QtWidgets.QLayout):
            self._layout.insertLayout(index, item)
        else:
            self._layout.insertWidget(index, item)

    def _set_problem(self, text: str | None) -> None:
        self._problem = text
        self._problem_label.setText(text or "")
        self._problem_label.setVisible(bool(text))

    def _commit(self, value: Any, final: bool) -> bool:
        """Emits `value` if the parameter accepts it; otherwise shows why and emits nothing."""
        try:
            checked = _jsonable(self.param.check(value))
        except ParameterError as e:
            self._set_problem(e.detail)
            return False
        self._value = checked
        self._set_problem(None)
        self.edited.emit(_jsonable(checked), final)
        return True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_show" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must define _show(value): how its controls display a value")

    def _show(self, value: Any) -> None:
        """Displays a checked value in the controls, emitting nothing (each editor defines it)."""


# --------------------------------------------------------------------------- numbers


def _digits_needed(value: float, limit: int = 6) -> int:
    for digits in range(limit + 1):
        if math.isclose(round(value, digits), value, rel_tol=0, abs_tol=1e-12):
            return digits
    return limit


def decimals_for(param: Parameter) -> int:
    """Decimals a float editor shows: about three significant digits of the range's span,
    and enough to show the bounds and default exactly (a minimum of 0.01 needs two)."""
    if param.kind == "int":
        return 0
    exact = max(_digits_needed(v) for v in (param.minimum, param.maximum, param.default) if v is not None)
    if param.minimum is not None and param.maximum is not None and param.maximum > param.minimum:
        by_span = 3 - math.floor(math.log10(param.maximum - param.minimum))
    else:
        by_span = 3
    return min(max(by_span, exact, 1), 6)


class _TidyDoubleSpinBox(QtWidgets.QDoubleSpinBox):
    """A float spin box that writes 0.5, not 0.500000: trailing zeros hide the value."""

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        text = self.locale().toString(value, "f", self.decimals())
        point = self.locale().decimalPoint()
        if point in text:
            text = text.rstrip("0").rstrip(point)
        return text


class NumberEditor(ParameterEditor):
    """int and float: a slider with a spin box when both bounds are set (the slider drags,
    the spin box types exact values), a spin box alone otherwise."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.integer = param.kind == "int"
        self.decimals = decimals_for(param)
        lo, hi = param.minimum, param.maximum
        if self.integer:
            self.spin: QtWidgets.QAbstractSpinBox = QtWidgets.QSpinBox()
            self.spin.setRange(
                int(lo) if lo is not None else _INT_LIMITS[0], int(hi) if hi is not None else _INT_LIMITS[1]
            )
        else:
            self.spin = _TidyDoubleSpinBox()
            self.spin.setDecimals(self.decimals)
            self.spin.setRange(lo if lo is not None else -_BIG_FLOAT, hi if hi is not None else _BIG_FLOAT)
            self.spin.setSingleStep(10 ** -(self.decimals - 1) if self.decimals > 1 else 0.1)
        self.spin.setKeyboardTracking(False)  # typing "12" must not emit 1 first
        self.spin.setAccelerated(True)
        if param.unit:
            self.spin.setSuffix(f" {param.unit}")
        self.spin.setToolTip(self.toolTip())
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self.slider: QtWidgets.QSlider | None = None
        if lo is not None and hi is not None and hi > lo:
            self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
            self.slider.setRange(*self._slider_range())
            self.slider.setPageStep(max(1, (self.slider.maximum() - self.slider.minimum()) // 10))
            self.slider.setToolTip(self.toolTip())
            self.slider.valueChanged.connect(self._slider_moved)
            self.slider.sliderReleased.connect(self._slider_released)
            row.addWidget(self.slider, 3)
            self.spin.setMinimumWidth(80)
            row.addWidget(self.spin, 1)
        else:
            row.addWidget(self.spin)
        self.spin.valueChanged.connect(self._spin_changed)
        self._add(row)
        self._show(self._value)

    # The float slider runs over a fine integer scale: position i is lo + i * span / steps.
    def _slider_range(self) -> tuple[int, int]:
        if self.integer:
            return int(self.param.minimum), int(self.param.maximum)
        return 0, self._steps()

    def _steps(self) -> int:
        span = self.param.maximum - self.param.minimum
        return max(1, min(round(span * 10**self.decimals), _MAX_SLIDER_STEPS))

    def _from_slider(self, position: int) -> int | float:
        if self.integer:
            return int(position)
        lo, hi = self.param.minimum, self.param.maximum
        value = round(lo + position * (hi - lo) / self._steps(), self.decimals)
        return float(min(max(value, lo), hi))

    def _to_slider(self, value: float) -> int:
        if self.integer:
            return int(value)
        lo, hi = self.param.minimum, self.param.maximum
        return round((value - lo) / (hi - lo) * self._steps())

    def _show(self, value: Any) -> None:
        with QtCore.QSignalBlocker(self.spin):
            self.spin.setValue(value)
        if self.slider is not None:
            with QtCore.QSignalBlocker(self.slider):
                self.slider.setValue(self._to_slider(value))

    def _slider_moved(self, position: int) -> None:
        value = self._from_slider(position)
        with QtCore.QSignalBlocker(self.spin):
            self.spin.setValue(value)
        # While the handle is held the edit is a preview; a click on the groove or a key is final.
        self._commit(value, final=not self.slider.isSliderDown())

    def _slider_released(self) -> None:
        self._commit(self._from_slider(self.slider.value()), final=True)

    def _spin_changed(self, value: float) -> None:
        value = int(value) if self.integer else float(value)
        if self.slider is not None:
            with QtCore.QSignalBlocker(self.slider):
                self.slider.setValue(self._to_slider(value))
        self._commit(value, final=True)


# --------------------------------------------------------------------------- bool, choice


class BoolEditor(ParameterEditor):
    """bool: a checkbox."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.checkbox = QtWidgets.QCheckBox()
        self.checkbox.setToolTip(self.toolTip())
        self.checkbox.toggled.connect(lambda on: self._commit(bool(on), final=True))
        self._add(self.checkbox)
        self._show(self._value)

    def _show(self, value: Any) -> None:
        with QtCore.QSignalBlocker(self.checkbox):
            self.checkbox.setChecked(bool(value))


class ChoiceEditor(ParameterEditor):
    """choice: a combo box of the parameter's choices."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.combo = QtWidgets.QComboBox()
        self.combo.addItems(list(param.choices))
        self.combo.setToolTip(self.toolTip())
        self.combo.currentIndexChanged.connect(self._picked)
        self._add(self.combo)
        self._show(self._value)

    def _picked(self, index: int) -> None:
        if 0 <= index < len(self.param.choices):
            self._commit(self.param.choices[index], final=True)

    def _show(self, value: Any) -> None:
        with QtCore.QSignalBlocker(self.combo):
            self.combo.setCurrentIndex(self.param.choices.index(value))


# --------------------------------------------------------------------------- colour


def colour_to_hex(rgb: list[float]) -> str:
    """[r, g, b] in [0, 1] as #rrggbb (8 bits a channel, rounded)."""
    return "#" + "".join(f"{round(min(max(v, 0.0), 1.0) * 255):02x}" for v in rgb)


def hex_to_colour(text: str) -> list[float] | None:
    """#rrggbb, rrggbb or #rgb as [r, g, b] in [0, 1]; None when it is not a colour."""
    digits = text.strip().removeprefix("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    if len(digits) != 6 or any(d not in "0123456789abcdefABCDEF" for d in digits):
        return None
    return [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]


class ColourEditor(ParameterEditor):
    """colour: a swatch that opens a colour dialog, and a hex field for typing or pasting."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.swatch = QtWidgets.QPushButton()
        self.swatch.setFixedSize(44, 24)
        self.swatch.setToolTip("Choose a colour…")
        self.swatch.clicked.connect(self.open_dialog)
        self.hex_field = QtWidgets.QLineEdit()
        self.hex_field.setPlaceholderText("#rrggbb")
        self.hex_field.setMaxLength(7)
        self.hex_field.setToolTip(self.toolTip())
        self.hex_field.textEdited.connect(self._hex_typed)
        self.hex_field.editingFinished.connect(self._hex_finished)
        self.dialog: QtWidgets.QColorDialog | None = None
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.swatch)
        row.addWidget(self.hex_field, 1)
        self._add(row)
        self._show(self._value)

    def open_dialog(self) -> QtWidgets.QColorDialog:
        """Opens the (window-modal, non-blocking) colour dialog on the current colour."""
        self.dialog = QtWidgets.QColorDialog(self)
        self.dialog.setWindowTitle(f"Choose {self.param.name}")
        self.dialog.setCurrentColor(QtGui.QColor(colour_to_hex(self._value)))
        self.dialog.colorSelected.connect(self._dialog_chose)
        self.dialog.open()
        return self.dialog

    def _dialog_chose(self, colour: QtGui.QColor) -> None:
        if colour.isValid():
            rgb = [colour.redF(), colour.greenF(), colour.blueF()]
            if self._commit([round(v, 6) for v in rgb], final=True):
                self._show(self._value)

    def _hex_typed(self, text: str) -> None:
        if hex_to_colour(text) is None:
            self._set_problem(f"{text!r} is not a colour: type #rrggbb (hexadecimal)")
            self.hex_field.setStyleSheet(f"color: {INVALID_COLOUR};")
        else:
            self._set_problem(None)
            self.hex_field.setStyleSheet("")

    def flush(self) -> None:
        self._hex_finished()

    def _hex_finished(self) -> None:
        rgb = hex_to_colour(self.hex_field.text())
        if rgb is None:
            return  # the problem is already shown; the document keeps the last colour
        if colour_to_hex(rgb) != colour_to_hex(self._value) and self._commit(rgb, final=True):
            self._show(self._value)

    def _show(self, value: Any) -> None:
        code = colour_to_hex(value)
        self.swatch.setStyleSheet(f"QPushButton {{ background-color: {code}; border: 1px solid #777; }}")
        self.hex_field.setText(code)
        self.hex_field.setStyleSheet("")


# --------------------------------------------------------------------------- tables


def _read_table(table: QtWidgets.QTableWidget, previous: list[list[float]]) -> tuple[list[list[float]], list[str]]:
    """The numbers in a table and a message per cell that is not one. A cell still showing
    the previous value's text keeps that exact value (1/9 stays 1/9, not 0.111111)."""
    rows: list[list[float]] = []
    problems: list[str] = []
    for r in range(table.rowCount()):
        row = []
        for c in range(table.columnCount()):
            item = table.item(r, c)
            text = item.text().strip() if item is not None else ""
            old = previous[r][c] if r < len(previous) and c < len(previous[r]) else None
            if old is not None and text == _number_text(old):
                row.append(old)
                continue
            try:
                number = float(text)
            except ValueError:
                problems.append(f"row {r + 1}, column {c + 1}: {text!r} is not a number")
                row.append(math.nan)
                continue
            if not math.isfinite(number):
                problems.append(f"row {r + 1}, column {c + 1}: {text!r} is not a finite number")
            row.append(number)
        rows.append(row)
    return rows, problems


def _fill_table(table: QtWidgets.QTableWidget, rows: list[list[float]]) -> None:
    with QtCore.QSignalBlocker(table):
        table.setRowCount(len(rows))
        table.setColumnCount(len(rows[0]) if rows else 0)
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                item = QtWidgets.QTableWidgetItem(_number_text(v))
                item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)


def _mark_cells(table: QtWidgets.QTableWidget, rows: list[list[float]]) -> None:
    """Tints the cells that do not hold a finite number."""
    with QtCore.QSignalBlocker(table):
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                item = table.item(r, c)
                if item is not None:
                    bad = not math.isfinite(v)
                    item.setBackground(_INVALID_CELL if bad else QtGui.QBrush())


def _fit_table_height(table: QtWidgets.QTableWidget, visible_rows: int) -> None:
    header = 0 if table.horizontalHeader().isHidden() else table.horizontalHeader().sizeHint().height()
    rows = min(table.rowCount(), visible_rows)
    height = header + sum(table.rowHeight(r) for r in range(rows)) + 2 * table.frameWidth()
    table.setFixedHeight(height + (2 if rows < table.rowCount() else 0))


def _tool_button(text: str, tip: str, slot: Any) -> QtWidgets.QToolButton:
    button = QtWidgets.QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
    button.clicked.connect(slot)
    return button


class MatrixEditor(ParameterEditor):
    """matrix (a convolution kernel): a grid of weights, buttons that add or remove a row or
    column, and Normalize, which divides by the sum so the kernel keeps the brightness."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.limit = int(param.extra.get("max_size", 15))
        self.table = QtWidgets.QTableWidget()
        self.table.horizontalHeader().hide()
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setDefaultSectionSize(48)
        self.table.setMinimumWidth(120)  # a wide kernel scrolls inside the grid, not the panel
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setToolTip(self.toolTip())
        self.table.itemChanged.connect(self._cell_edited)
        self.add_row_button = _tool_button("+ Row", "add a row of zeros at the bottom", self.add_row)
        self.remove_row_button = _tool_button("− Row", "remove the bottom row", self.remove_row)
        self.add_column_button = _tool_button("+ Col", "add a column of zeros on the right", self.add_column)
        self.remove_column_button = _tool_button("− Col", "remove the rightmost column", self.remove_column)
        self.normalize_button = _tool_button("Normalize", "divide every weight by their sum", self.normalize)
        self.info = QtWidgets.QLabel()
        self.info.setStyleSheet("color: #666;")
        buttons = QtWidgets.QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for button in (self.add_row_button, self.remove_row_button, self.add_column_button, self.remove_column_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        summary = QtWidgets.QHBoxLayout()
        summary.setContentsMargins(0, 0, 0, 0)
        summary.addWidget(self.info, 1)
        summary.addWidget(self.normalize_button)
        self._add(self.table)
        self._add(buttons)
        self._add(summary)
        self._show(self._value)

    def _show(self, value: Any) -> None:
        _fill_table(self.table, value)
        _fit_table_height(self.table, 8)
        self._update_controls(value)

    def _update_controls(self, rows: list[list[float]]) -> None:
        height, width = len(rows), len(rows[0])
        self.add_row_button.setEnabled(height < self.limit)
        self.remove_row_button.setEnabled(height > 1)
        self.add_column_button.setEnabled(width < self.limit)
        self.remove_column_button.setEnabled(width > 1)
        total = sum(sum(r) for r in rows)
        self.info.setText(f"{width} × {height}, sum {_number_text(round(total, 9))}")

    def _cell_edited(self, _item: QtWidgets.QTableWidgetItem) -> None:
        rows, problems = _read_table(self.table, self._value)
        _mark_cells(self.table, rows)
        if problems:
            self._set_problem("; ".join(problems))
            return
        self._apply(rows)

    def _apply(self, rows: list[list[float]]) -> None:
        if self._commit(rows, final=True):
            self._show(self._value)

    def add_row(self) -> None:
        self._apply([*self._value, [0.0] * len(self._value[0])])

    def remove_row(self) -> None:
        if len(self._value) > 1:
            self._apply(self._value[:-1])

    def add_column(self) -> None:
        self._apply([[*r, 0.0] for r in self._value])

    def remove_column(self) -> None:
        if len(self._value[0]) > 1:
            self._apply([r[:-1] for r in self._value])

    def normalize(self) -> None:
        total = math.fsum(v for r in self._value for v in r)
        if abs(total) < 1e-12:
            self._set_problem("the weights sum to 0, so there is nothing to divide by")
            return
        self._apply([[v / total for v in r] for r in self._value])


class CurveEditor(ParameterEditor):
    """curve (a lookup curve): a table of (input, output) points, add/remove buttons, and a
    plot of the curve as the node applies it (straight segments between points)."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["input", "output"])
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setToolTip(self.toolTip())
        self.table.itemChanged.connect(self._cell_edited)
        self.table.currentCellChanged.connect(lambda *_: self._update_buttons())
        self.add_button = _tool_button("Add point", "add a point halfway after the selected one", self.add_point)
        self.remove_button = _tool_button("Remove point", "remove the selected point", self.remove_point)
        buttons = QtWidgets.QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        self.plot = pg.PlotWidget()
        self.plot.setFixedHeight(150)
        self.plot.setBackground(self.palette().color(QtGui.QPalette.ColorRole.Base))
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setXRange(0, 1, padding=0.05)
        self.plot.setYRange(0, 1, padding=0.05)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        ticks = [[(t, f"{t:g}") for t in (0, 0.25, 0.5, 0.75, 1)]]
        self.plot.setToolTip("the curve: input on the horizontal axis, output on the vertical (dashed: identity)")
        text = self.palette().color(QtGui.QPalette.ColorRole.Text)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setPen(text)
            self.plot.getAxis(axis).setTextPen(text)
            self.plot.getAxis(axis).setTicks(ticks)
        self.plot.plot([0, 1], [0, 1], pen=pg.mkPen((150, 150, 150), style=QtCore.Qt.PenStyle.DashLine))
        self.curve_item = self.plot.plot(
            [], [], pen=pg.mkPen((30, 110, 200), width=2), symbol="o", symbolSize=6, symbolBrush=(30, 110, 200)
        )
        self._add(self.table)
        self._add(buttons)
        self._add(self.plot)
        self._show(self._value)

    def _show(self, value: Any) -> None:
        _fill_table(self.table, value)
        _fit_table_height(self.table, 6)
        self.curve_item.setData([p[0] for p in value], [p[1] for p in value])
        self._update_buttons()

    def plotted_points(self) -> list[tuple[float, float]]:
        """The points the plot shows, so a test (or a caller) can see what is drawn."""
        xs, ys = self.curve_item.getData()
        if xs is None or ys is None:
            return []
        return [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(len(self._value) > 2 and self.table.currentRow() >= 0)

    def _cell_edited(self, _item: QtWidgets.QTableWidgetItem) -> None:
        rows, problems = _read_table(self.table, self._value)
        _mark_cells(self.table, rows)
        if problems:
            self._set_problem("; ".join(problems))
            return
        if self._commit(rows, final=True):
            self._show(self._value)

    def add_point(self) -> None:
        """Inserts the midpoint of the selected point and the next one (the last two when
        none or the last is selected), which keeps the inputs strictly increasing."""
        points = self._value
        row = self.table.currentRow()
        first = row if 0 <= row < len(points) - 1 else len(points) - 2
        a, b = points[first], points[first + 1]
        mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]
        if self._commit([*points[: first + 1], mid, *points[first + 1 :]], final=True):
            self._show(self._value)
            self.table.setCurrentCell(first + 1, 0)

    def remove_point(self) -> None:
        row = self.table.currentRow()
        remaining = self._value[:row] + self._value[row + 1 :]
        if len(self._value) > 2 and 0 <= row < len(self._value) and self._commit(remaining, final=True):
            self._show(self._value)
            self.table.setCurrentCell(min(row, len(self._value) - 1), 0)


# --------------------------------------------------------------------------- expression


class _FormulaEdit(QtWidgets.QPlainTextEdit):
    """A short formula field: Enter commits (a formula is one expression), Shift+Enter
    breaks a long one over lines, and leaving the field commits too."""

    committed = QtCore.Signal()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 - Qt override
        enter = event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter)
        if enter and not (event.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier):
            self.committed.emit()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QtGui.QFocusEvent) -> None:  # noqa: N802 - Qt override
        super().focusOutEvent(event)
        self.committed.emit()


class ExpressionEditor(ParameterEditor):
    """expression: a formula checked on every keystroke by the project's own parser (the
    one the Custom node builds with), its faulty span underlined in red and the parser's
    message shown under it. Valid text is emitted as a preview while typing and as final
    on Enter or when the field loses focus; invalid text is never emitted."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self._committed_text = self._value
        self.field = _FormulaEdit()
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.field.setFont(font)
        self.field.setTabChangesFocus(True)
        self.field.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.field.setFixedHeight(QtGui.QFontMetrics(font).lineSpacing() * 3 + 12)
        self.field.setPlaceholderText("e.g. (a[x-1, y] + a + a[x+1, y]) / 3")
        self.field.setToolTip(self.toolTip())
        self.field.textChanged.connect(self._typed)
        self.field.committed.connect(self._finish)
        self._add(self.field)
        self._show(self._value)

    def text(self) -> str:
        return self.field.toPlainText()

    def _show(self, value: Any) -> None:
        self._committed_text = value
        with QtCore.QSignalBlocker(self.field):
            self.field.setPlainText(value)
        self._underline(None)

    def _check(self, text: str) -> ExpressionError | None:
        try:
            parse_expression(text)
        except ExpressionError as e:
            return e
        return None

    def _typed(self) -> None:
        text = self.text()
        error = self._check(text)
        self._underline(error)
        if error is not None:
            self._set_problem(error.detail)
            return
        if text != self._value:
            self._commit(text, final=False)
        else:
            self._set_problem(None)

    def flush(self) -> None:
        self._finish()

    def _finish(self) -> None:
        text = self.text()
        if self._check(text) is None and text != self._committed_text and self._commit(text, final=True):
            self._committed_text = text

    def _underline(self, error: ExpressionError | None) -> None:
        """Marks the span the parser blames with a red wavy underline (the last character
        when the fault is at the very end, e.g. an unclosed bracket)."""
        if error is None:
            self.field.setExtraSelections([])
            return
        length = len(self.text())
        start = min(error.offset, max(length - 1, 0))
        end = min(max(error.offset + error.length, start + 1), length)
        selection = QtWidgets.QTextEdit.ExtraSelection()
        selection.format.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline)
        selection.format.setUnderlineColor(QtGui.QColor(INVALID_COLOUR))
        selection.format.setForeground(QtGui.QColor(INVALID_COLOUR))
        cursor = self.field.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QtGui.QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        self.field.setExtraSelections([selection])

    def underlined_span(self) -> tuple[int, int] | None:
        """(start, end) character offsets of the underlined fault, or None."""
        selections = self.field.extraSelections()
        if not selections:
            return None
        cursor = selections[0].cursor
        return cursor.selectionStart(), cursor.selectionEnd()


# --------------------------------------------------------------------------- string


class StringEditor(ParameterEditor):
    """string: a line edit, committed when editing finishes. For `sample` (an input's image
    file) a Browse… button opens a file dialog; a file inside the document's folder or the
    bundled images is stored relative to it, so the document can move with its images."""

    def __init__(
        self, param: Parameter, parent: QtWidgets.QWidget | None = None, document_folder: Path | None = None
    ) -> None:
        super().__init__(param, parent)
        self.document_folder = document_folder
        self.line = QtWidgets.QLineEdit()
        self.line.setToolTip(self.toolTip())
        self.line.editingFinished.connect(self._finished)
        self.dialog: QtWidgets.QFileDialog | None = None
        self.browse_button: QtWidgets.QPushButton | None = None
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.line, 1)
        if param.name == "sample":
            self.line.setPlaceholderText("image file (empty: supply the input when running)")
            self.browse_button = QtWidgets.QPushButton("Browse…")
            self.browse_button.setToolTip("choose an image file")
            self.browse_button.clicked.connect(self.open_dialog)
            row.addWidget(self.browse_button)
        self._add(row)
        self._show(self._value)

    def _show(self, value: Any) -> None:
        self.line.setText(value)
        self.line.setCursorPosition(0)  # a long value (a lifted stage's verification) from its start

    def flush(self) -> None:
        self._finished()

    def _finished(self) -> None:
        if self.line.text() != self._value:
            self._commit(self.line.text(), final=True)

    def open_dialog(self) -> QtWidgets.QFileDialog:
        """Opens the (non-blocking) image file dialog in the current file's folder."""
        start = self._start_folder()
        self.dialog = QtWidgets.QFileDialog(self, "Choose an input image", str(start), IMAGE_FILTER)
        self.dialog.setFileMode(QtWidgets.QFileDialog.FileMode.ExistingFile)
        self.dialog.fileSelected.connect(self.choose_file)
        self.dialog.open()
        return self.dialog

    def _start_folder(self) -> Path:
        current = Path(self._value).expanduser() if self._value else None
        for folder in (self.document_folder, IMAGES):
            if current is not None and folder is not None:
                candidate = current if current.is_absolute() else folder / current
                if candidate.parent.is_dir():
                    return candidate.parent
        return self.document_folder or IMAGES

    def choose_file(self, path: str) -> None:
        """Stores a chosen file, relative to the document's folder or the bundled images
        when it lies inside one of them (where the document looks for samples)."""
        if not path:
            return
        chosen = Path(path).resolve()
        stored = str(chosen)
        for folder in (self.document_folder, IMAGES):
            if folder is not None and chosen.is_relative_to(Path(folder).resolve()):
                stored = chosen.relative_to(Path(folder).resolve()).as_posix()
                break
        if self._commit(stored, final=True):
            self._show(self._value)


# --------------------------------------------------------------------------- data


def data_summary(value: Any) -> str:
    """A few lines saying what plain JSON data holds; for a lifted stage's definition, its
    type, layout, what each input carries and how many operations it has."""
    import json

    if isinstance(value, dict) and {"type", "layout", "pure"} <= set(value):
        reads = value.get("reads") or {}
        lines = [f"{value.get('layout')} {value.get('type')}"]
        lines += [f"{port}: {what}" for port, what in reads.items()]
        pure = value.get("pure") or {}
        count = len(pure.get("exprs") or []) if isinstance(pure, dict) else 0
        updates = value.get("updates") or []
        count += sum(len(u.get("exprs") or []) for u in updates if isinstance(u, dict))
        more = f", {len(updates)} update(s) over an RDom" if updates else ""
        lines.append(f"{count} operations{more}")
        return "\n".join(lines)
    text = json.dumps(value)
    return text if len(text) <= 400 else text[:400] + "…"


class DataEditor(ParameterEditor):
    """data: plain JSON data written by a tool (a lifted stage's definition), shown as a
    read-only summary: it is edited in the document's text, where it is checked on loading."""

    def __init__(self, param: Parameter, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(param, parent)
        self.field = QtWidgets.QPlainTextEdit()
        self.field.setReadOnly(True)
        self.field.setToolTip(self.toolTip())
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.field.setFont(font)
        self.field.setFixedHeight(QtGui.QFontMetrics(font).lineSpacing() * 6 + 12)
        self._add(self.field)
        self._show(self._value)

    def _show(self, value: Any) -> None:
        self.field.setPlainText(data_summary(value))


_EDITORS: dict[str, type[ParameterEditor]] = {
    "int": NumberEditor,
    "float": NumberEditor,
    "bool": BoolEditor,
    "choice": ChoiceEditor,
    "colour": ColourEditor,
    "matrix": MatrixEditor,
    "curve": CurveEditor,
    "expression": ExpressionEditor,
    "string": StringEditor,
    "data": DataEditor,
}


def editor_for(
    param: Parameter, value: Any, parent: QtWidgets.QWidget | None = None, document_folder: Path | None = None
) -> ParameterEditor:
    """The editor for a parameter's kind, showing `value` (emitting nothing).
    `document_folder` lets an image path be stored relative to the document."""
    if param.kind == "string":
        editor: ParameterEditor = StringEditor(param, parent, document_folder=document_folder)
    else:
        editor = _EDITORS[param.kind](param, parent)
    editor.set_value(value)
    return editor
