"""Parameter editors driven as a user drives them: every emitted value is the document's JSON
value, passes the parameter's own check, and invalid input is shown, never emitted."""

from pathlib import Path

import numpy as np
import pytest
from pixelweave.app.editor.parameter_widgets import (
    BoolEditor,
    ChoiceEditor,
    ColourEditor,
    CurveEditor,
    ExpressionEditor,
    MatrixEditor,
    NumberEditor,
    StringEditor,
    editor_for,
)
from pixelweave.nodes.node_type import node_type, node_types
from pixelweave.nodes.parameters import Parameter
from PySide6 import QtCore, QtGui, QtWidgets

SIGMA = Parameter("sigma", "float", 1.5, 0.1, 30, unit="px", doc="standard deviation")
RADIUS = Parameter("radius", "int", 1, 1, 50, unit="px", doc="half the box width")
CONSTANT = Parameter("value", "float", 0.5, doc="the constant")
KERNEL = Parameter("kernel", "matrix", ((1, 2, 1), (2, 4, 2), (1, 2, 1)), doc="weights", extra={"max_size": 4})
CURVE = Parameter("curve", "curve", [[0.0, 0.0], [1.0, 1.0]], doc="points")
TINT = Parameter("tint", "colour", [1.0, 0.5, 0.0], doc="the colour")


class Emitted:
    """Records `edited` and checks each value against the parameter as it arrives."""

    def __init__(self, editor):
        self.editor = editor
        self.calls = []
        editor.edited.connect(self._record)

    def _record(self, value, final):
        self.editor.param.check(value)  # raises if an editor ever emits a refused value
        self.calls.append((value, final))

    @property
    def last(self):
        return self.calls[-1]


def make(qtbot, param, value=None):
    editor = editor_for(param, param.default if value is None else value)
    qtbot.addWidget(editor)
    editor.resize(360, editor.sizeHint().height())
    editor.show()
    return editor, Emitted(editor)


def type_into_spin(qtbot, spin, text):
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), QtCore.Qt.Key.Key_Return)


def test_editor_for_picks_the_widget_of_each_kind(qtbot):
    kinds = [
        (SIGMA, NumberEditor, 1.5),
        (Parameter("on", "bool", True), BoolEditor, True),
        (Parameter("mode", "choice", "a", choices=("a", "b")), ChoiceEditor, "a"),
        (TINT, ColourEditor, [1.0, 0.5, 0.0]),
        (KERNEL, MatrixEditor, [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]),
        (CURVE, CurveEditor, [[0.0, 0.0], [1.0, 1.0]]),
        (Parameter("expression", "expression", "a"), ExpressionEditor, "a"),
        (Parameter("label", "string", ""), StringEditor, ""),
    ]
    for param, cls, json_value in kinds:
        editor, _ = make(qtbot, param)
        assert isinstance(editor, cls)
        assert editor.value() == json_value


def test_tooltip_gives_doc_range_and_unit(qtbot):
    editor, _ = make(qtbot, SIGMA)
    assert editor.toolTip() == "standard deviation\nrange [0.1, 30] px"
    assert editor.slider.toolTip() == editor.toolTip() == editor.spin.toolTip()


def test_float_slider_drag_previews_then_release_is_final(qtbot):
    editor, emitted = make(qtbot, SIGMA)
    slider = editor.slider
    assert editor.spin.suffix() == " px"
    slider.setSliderDown(True)  # what pressing the handle does
    slider.setSliderPosition(slider.maximum())
    assert emitted.last == (30.0, False)
    middle = (slider.minimum() + slider.maximum()) // 2
    slider.setSliderPosition(middle)
    value, final = emitted.last
    assert not final
    expected = 0.1 + (30 - 0.1) * middle / slider.maximum()
    assert value == pytest.approx(expected, abs=0.01)
    assert editor.spin.value() == pytest.approx(value)
    slider.setSliderDown(False)
    slider.sliderReleased.emit()
    assert emitted.last == (value, True)
    assert all(isinstance(v, float) for v, _ in emitted.calls)


def test_click_on_slider_groove_is_a_final_step(qtbot):
    editor, emitted = make(qtbot, RADIUS)
    slider = editor.slider
    qtbot.mouseClick(
        slider, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(slider.width() - 3, slider.height() // 2)
    )
    value, final = emitted.last
    assert final and isinstance(value, int) and 1 < value <= 50
    assert editor.spin.value() == value


def test_typing_in_the_spin_box_moves_the_slider(qtbot):
    editor, emitted = make(qtbot, SIGMA)
    type_into_spin(qtbot, editor.spin, "12.25")
    assert emitted.calls == [(12.25, True)]
    position = editor.slider.value()
    assert 0.1 + (30 - 0.1) * position / editor.slider.maximum() == pytest.approx(12.25, abs=0.01)
    type_into_spin(qtbot, editor.spin, "99")  # the spin box refuses the keystroke that leaves the range
    assert emitted.last == (9.0, True)


def test_int_spin_emits_ints(qtbot):
    editor, emitted = make(qtbot, RADIUS)
    type_into_spin(qtbot, editor.spin, "7")
    assert emitted.calls == [(7, True)] and type(emitted.last[0]) is int
    assert editor.slider.value() == 7


def test_unbounded_number_has_a_spin_box_alone(qtbot):
    editor, emitted = make(qtbot, CONSTANT)
    assert editor.slider is None
    assert editor.spin.text() == "0.5"
    type_into_spin(qtbot, editor.spin, "-3.75")
    assert emitted.calls == [(-3.75, True)]


def test_float_decimals_fit_the_range(qtbot):
    gamma = Parameter("gamma", "float", 2.2, 0.01, 10)
    k = Parameter("k", "float", 0.04, 0, 0.25)
    assert make(qtbot, gamma)[0].spin.decimals() == 3
    assert make(qtbot, k)[0].spin.decimals() == 4
    assert make(qtbot, SIGMA)[0].spin.decimals() == 2


def test_set_value_emits_nothing_and_bad_stored_value_is_reported(qtbot):
    editor, emitted = make(qtbot, SIGMA)
    editor.set_value(4)
    assert editor.value() == 4.0 and editor.spin.value() == 4.0
    assert emitted.calls == []
    editor.set_value(99)
    assert "outside its range [0.1, 30]" in editor.problem()
    assert editor.value() == 1.5
    assert emitted.calls == []
    editor.set_value(2.0)
    assert editor.problem() is None


def test_bool_and_choice(qtbot):
    editor, emitted = make(qtbot, Parameter("on", "bool", True))
    box = editor.checkbox
    option = QtWidgets.QStyleOptionButton()
    box.initStyleOption(option)
    indicator = box.style().subElementRect(QtWidgets.QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    qtbot.mouseClick(box, QtCore.Qt.MouseButton.LeftButton, pos=indicator.center())
    assert emitted.calls == [(False, True)]
    param = node_type("box_blur").params[1]
    editor, emitted = make(qtbot, param)
    editor.combo.setFocus()
    qtbot.keyClick(editor.combo, QtCore.Qt.Key.Key_Down)
    index = list(param.choices).index(param.default) + 1
    assert emitted.calls == [(param.choices[index], True)]
    assert [editor.combo.itemText(i) for i in range(editor.combo.count())] == list(param.choices)


def test_colour_hex_field(qtbot):
    editor, emitted = make(qtbot, TINT)
    assert editor.hex_field.text() == "#ff8000"
    editor.hex_field.selectAll()
    qtbot.keyClicks(editor.hex_field, "#zz0000")
    qtbot.keyClick(editor.hex_field, QtCore.Qt.Key.Key_Return)
    assert emitted.calls == [] and "not a colour" in editor.problem()
    editor.hex_field.selectAll()
    qtbot.keyClicks(editor.hex_field, "#00ff40")
    qtbot.keyClick(editor.hex_field, QtCore.Qt.Key.Key_Return)
    assert emitted.calls == [([0.0, 1.0, 64 / 255], True)]
    assert editor.problem() is None


def test_colour_swatch_opens_a_dialog(qtbot):
    editor, emitted = make(qtbot, TINT)
    qtbot.mouseClick(editor.swatch, QtCore.Qt.MouseButton.LeftButton)
    dialog = editor.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.currentColor().name() == "#ff8000"
    dialog.setCurrentColor(QtGui.QColor(51, 102, 204))
    dialog.accept()
    value, final = emitted.last
    assert final and value == pytest.approx([0.2, 0.4, 0.8], abs=1e-6)
    assert editor.hex_field.text() == "#3366cc"


def cell(editor, r, c):
    return editor.table.item(r, c)


def test_matrix_cell_edit_and_invalid_cell(qtbot):
    editor, emitted = make(qtbot, KERNEL)
    cell(editor, 1, 1).setText("8")
    assert emitted.calls == [([[1.0, 2.0, 1.0], [2.0, 8.0, 2.0], [1.0, 2.0, 1.0]], True)]
    cell(editor, 0, 2).setText("abc")
    assert len(emitted.calls) == 1
    assert editor.problem() == "row 1, column 3: 'abc' is not a number"
    cell(editor, 0, 2).setText("nan")
    assert len(emitted.calls) == 1 and "not a finite number" in editor.problem()
    cell(editor, 0, 2).setText("-1.5")
    assert emitted.last[0][0] == [1.0, 2.0, -1.5] and editor.problem() is None
    assert "sum 17.5" in editor.info.text()


def test_matrix_rows_columns_and_limit(qtbot):
    editor, emitted = make(qtbot, KERNEL)
    qtbot.mouseClick(editor.add_row_button, QtCore.Qt.MouseButton.LeftButton)
    assert emitted.last == ([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0], [0.0, 0.0, 0.0]], True)
    assert editor.table.rowCount() == 4
    assert not editor.add_row_button.isEnabled()  # max_size 4
    qtbot.mouseClick(editor.remove_column_button, QtCore.Qt.MouseButton.LeftButton)
    assert emitted.last[0] == [[1.0, 2.0], [2.0, 4.0], [1.0, 2.0], [0.0, 0.0]]
    qtbot.mouseClick(editor.add_column_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(editor.remove_row_button, QtCore.Qt.MouseButton.LeftButton)
    assert emitted.last[0] == [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [1.0, 2.0, 0.0]]
    assert editor.table.columnCount() == 3 and editor.table.rowCount() == 3


def test_matrix_normalize(qtbot):
    editor, emitted = make(qtbot, KERNEL)
    qtbot.mouseClick(editor.normalize_button, QtCore.Qt.MouseButton.LeftButton)
    kernel = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=float)
    np.testing.assert_allclose(emitted.last[0], kernel / kernel.sum())
    assert emitted.last[1] is True
    editor.set_value([[1, -1]])
    qtbot.mouseClick(editor.normalize_button, QtCore.Qt.MouseButton.LeftButton)
    assert len(emitted.calls) == 1 and "sum to 0" in editor.problem()


def test_matrix_keeps_exact_values_of_untouched_cells(qtbot):
    editor, emitted = make(qtbot, KERNEL, [[1 / 9] * 3] * 3)
    cell(editor, 0, 0).setText("0")
    assert emitted.last[0][2][2] == 1 / 9


def test_curve_edit_add_remove_and_plot(qtbot):
    editor, emitted = make(qtbot, CURVE, [[0, 0], [0.5, 0.7], [1, 1]])
    assert editor.plotted_points() == [(0, 0), (0.5, 0.7), (1, 1)]
    cell(editor, 1, 1).setText("0.3")
    assert emitted.last == ([[0.0, 0.0], [0.5, 0.3], [1.0, 1.0]], True)
    assert editor.plotted_points()[1] == (0.5, 0.3)
    cell(editor, 1, 0).setText("1.0")  # x no longer strictly increasing
    assert len(emitted.calls) == 1 and "strictly increasing" in editor.problem()
    cell(editor, 1, 0).setText("0.5")
    editor.table.setCurrentCell(0, 0)
    qtbot.mouseClick(editor.add_button, QtCore.Qt.MouseButton.LeftButton)
    assert emitted.last[0] == [[0.0, 0.0], [0.25, 0.15], [0.5, 0.3], [1.0, 1.0]]
    editor.table.setCurrentCell(2, 0)
    assert editor.remove_button.isEnabled()
    qtbot.mouseClick(editor.remove_button, QtCore.Qt.MouseButton.LeftButton)
    assert emitted.last[0] == [[0.0, 0.0], [0.25, 0.15], [1.0, 1.0]]
    assert editor.plotted_points() == [(0, 0), (0.25, 0.15), (1, 1)]


def test_curve_out_of_unit_square_is_refused(qtbot):
    editor, emitted = make(qtbot, CURVE)
    cell(editor, 1, 1).setText("1.5")
    assert emitted.calls == [] and "inside [0, 1]" in editor.problem()


def test_expression_error_is_underlined_and_not_emitted(qtbot):
    param = node_type("custom_expression").params[0]
    editor, emitted = make(qtbot, param)
    editor.field.selectAll()
    text = "a[x-1, y] + foo(2)"
    qtbot.keyClicks(editor.field, text)
    qtbot.keyClick(editor.field, QtCore.Qt.Key.Key_Return)
    assert "`foo`" in editor.problem() and "column 13" in editor.problem()
    assert editor._problem_label.isVisible()
    start = text.index("foo")
    assert editor.underlined_span() == (start, start + len("foo"))
    # Every prefix typed was either invalid (not emitted) or a valid preview.
    assert all(not final for _, final in emitted.calls)
    assert "foo" not in " ".join(v for v, _ in emitted.calls)


def test_expression_valid_text_previews_then_commits_on_enter(qtbot):
    param = node_type("custom_expression").params[0]
    editor, emitted = make(qtbot, param)
    editor.field.selectAll()
    qtbot.keyClicks(editor.field, "(a + b) / 2")
    assert emitted.last == ("(a + b) / 2", False)
    assert editor.problem() is None and editor.underlined_span() is None
    qtbot.keyClick(editor.field, QtCore.Qt.Key.Key_Return)
    assert emitted.last == ("(a + b) / 2", True)
    assert editor.field.toPlainText() == "(a + b) / 2"  # Enter commits, it adds no line
    count = len(emitted.calls)
    qtbot.keyClick(editor.field, QtCore.Qt.Key.Key_Return)
    assert len(emitted.calls) == count  # nothing new to commit


def test_expression_unclosed_bracket_marks_the_end(qtbot):
    editor, emitted = make(qtbot, Parameter("expression", "expression", "a"))
    editor.field.setPlainText("max(a, b")
    assert editor.problem().startswith("syntax error") and "never closed" in editor.problem()
    bracket = "max(a, b".index("(")
    assert editor.underlined_span() == (bracket, bracket + 1)
    assert emitted.calls == []


def test_string_commits_on_editing_finished(qtbot):
    editor, emitted = make(qtbot, Parameter("label", "string", ""))
    assert editor.browse_button is None
    qtbot.keyClicks(editor.line, "hello")
    qtbot.keyClick(editor.line, QtCore.Qt.Key.Key_Return)
    assert emitted.calls == [("hello", True)]


def test_sample_browse_stores_path_relative_to_document(qtbot, tmp_path):
    image = tmp_path / "pictures" / "cat.png"
    image.parent.mkdir()
    QtGui.QImage(4, 4, QtGui.QImage.Format.Format_RGB32).save(str(image))
    param = node_type("image_input").params[2]
    editor = editor_for(param, "", document_folder=tmp_path)
    qtbot.addWidget(editor)
    emitted = Emitted(editor)
    qtbot.mouseClick(editor.browse_button, QtCore.Qt.MouseButton.LeftButton)
    dialog = editor.dialog
    assert isinstance(dialog, QtWidgets.QFileDialog) and dialog.isVisible()
    assert "*.png" in dialog.nameFilters()[0]
    dialog.fileSelected.emit(str(image))
    assert emitted.calls == [("pictures/cat.png", True)]
    assert editor.line.text() == "pictures/cat.png"
    elsewhere = (tmp_path.parent / "elsewhere.png").resolve()  # outside the document and bundled folders
    editor.choose_file(str(elsewhere))
    assert emitted.last == (str(elsewhere), True)
    dialog.close()


def test_every_catalogue_parameter_gets_a_working_editor(qtbot):

    for type_cls in node_types().values():
        for param in type_cls.params:
            editor = editor_for(param, param.default)
            qtbot.addWidget(editor)
            assert editor.problem() is None, (type_cls.type_name, param.name)
            param.check(editor.value())


# --------------------------------------------------------------------------- properties panel


def make_panel(qtbot):
    from pixelweave.app.editor.properties_panel import PropertiesPanel

    panel = PropertiesPanel()
    qtbot.addWidget(panel)
    panel.resize(340, 640)
    panel.show()
    return panel


def test_panel_placeholder_and_form(qtbot):
    from pixelweave.app.editor.properties_panel import PLACEHOLDER

    panel = make_panel(qtbot)
    assert panel.pages.currentWidget().text() == PLACEHOLDER
    assert panel.node_id() is None
    blur = node_type("gaussian_blur")
    panel.show_node("blur1", blur, {"sigma": 4.0})
    assert panel.title_label.text() == blur.title
    assert panel.id_field.text() == "blur1"
    assert panel.summary_label.text() == blur.summary()
    assert panel.title_label.toolTip() == blur.tooltip()
    assert list(panel.editors) == [p.name for p in blur.params]
    assert panel.editor("sigma").value() == 4.0
    assert panel.editor(blur.params[1].name).value() == blur.params[1].default  # missing: default
    labels = [w for w in panel.scroll.widget().findChildren(QtWidgets.QLabel) if w.buddy() is panel.editor("sigma")]
    assert labels[0].text() == "Sigma" and "standard deviation" in labels[0].toolTip()
    panel.clear()
    assert panel.pages.currentWidget().text() == PLACEHOLDER and panel.editor("sigma") is None


def test_panel_emits_param_edited_with_node_and_name(qtbot):
    panel = make_panel(qtbot)
    panel.show_node("blur1", node_type("gaussian_blur"), {})
    spin = panel.editor("sigma").spin
    with qtbot.waitSignal(panel.param_edited, timeout=1000) as signal:
        type_into_spin(qtbot, spin, "3.5")
    assert signal.args == ["blur1", "sigma", 3.5, True]


def test_panel_update_values_emits_nothing(qtbot):
    panel = make_panel(qtbot)
    panel.show_node("blur1", node_type("gaussian_blur"), {"sigma": 2.0})
    seen = []
    panel.param_edited.connect(lambda *args: seen.append(args))
    sigma_editor = panel.editor("sigma")
    panel.update_values({"sigma": 7.25, "boundary": "mirror", "unknown": 1})
    assert panel.editor("sigma") is sigma_editor  # not rebuilt
    assert sigma_editor.spin.value() == 7.25 and panel.editor("boundary").combo.currentText() == "mirror"
    assert seen == []


def test_panel_error_banner(qtbot):
    panel = make_panel(qtbot)
    panel.show_node("blur1", node_type("gaussian_blur"), {})
    panel.set_error("node `blur1`: input `image` is not connected")
    assert panel.error_label.isVisible() and "not connected" in panel.error_label.text()
    panel.set_error(None)
    assert not panel.error_label.isVisible()


def test_panel_rename(qtbot):
    panel = make_panel(qtbot)
    panel.show_node("blur1", node_type("gaussian_blur"), {}, existing_ids={"blur1", "input"})
    renames = []
    panel.rename_requested.connect(lambda old, new: renames.append((old, new)))
    for bad, reason in (("2x", "letters, digits"), ("x", "reserved"), ("input", "already used")):
        panel.id_field.selectAll()
        qtbot.keyClicks(panel.id_field, bad)
        qtbot.keyClick(panel.id_field, QtCore.Qt.Key.Key_Return)
        assert reason in panel.id_problem_label.text() and not panel.id_problem_label.isHidden()
    assert renames == []
    panel.id_field.selectAll()
    qtbot.keyClicks(panel.id_field, "soft_blur")
    qtbot.keyClick(panel.id_field, QtCore.Qt.Key.Key_Return)
    assert renames == [("blur1", "soft_blur")]
    assert panel.node_id() == "soft_blur" and panel.id_problem_label.isHidden()
    with qtbot.waitSignal(panel.param_edited) as signal:
        type_into_spin(qtbot, panel.editor("sigma").spin, "2")
    assert signal.args[0] == "soft_blur"
    panel.reject_rename("blur1", "node id `soft_blur` is already used")
    assert panel.node_id() == "blur1" and panel.id_field.text() == "blur1"
    assert "already used" in panel.id_problem_label.text()


def test_panel_flushes_a_typed_expression_before_switching_node(qtbot):
    panel = make_panel(qtbot)
    panel.show_node("fx", node_type("custom_expression"), {"expression": "a"})
    seen = []
    panel.param_edited.connect(lambda *args: seen.append(args))
    panel.editor("expression").field.setPlainText("a * 2")
    assert seen[-1] == ("fx", "expression", "a * 2", False)
    panel.show_node("blur1", node_type("gaussian_blur"), {})
    assert seen[-1] == ("fx", "expression", "a * 2", True)


def test_panel_node_without_parameters(qtbot):
    from pixelweave.app.editor.properties_panel import NO_PARAMETERS

    typ = next(t for t in node_types().values() if not t.params)
    panel = make_panel(qtbot)
    panel.show_node("n", typ, {})
    texts = [w.text() for w in panel.scroll.widget().findChildren(QtWidgets.QLabel)]
    assert NO_PARAMETERS in texts


def test_render_panels(qtbot, tmp_path):
    """Renders the panel for a few nodes; PIXELWEAVE_RENDER_DIR keeps the PNGs to look at."""
    import os

    out = Path(os.environ.get("PIXELWEAVE_RENDER_DIR", tmp_path))
    panel = make_panel(qtbot)
    for type_name, params in (
        ("gaussian_blur", {}),
        ("convolution", {}),
        ("lookup_table", {"curve": [[0, 0], [0.3, 0.6], [1, 1]]}),
        ("custom_expression", {"expression": "a[x-1, y] + foo(2)"}),
        ("image_input", {"sample": "kodim23.png"}),
        ("levels", {}),
    ):
        panel.show_node(type_name + "1", node_type(type_name), params)
        if type_name == "custom_expression":
            panel.editor("expression").field.setPlainText("a[x-1, y] + foo(2)")
            panel.set_error("node `custom_expression1`: the expression calls an unknown function")
        qtbot.wait(20)
        image = panel.grab().toImage()
        image.save(str(out / f"panel_{type_name}.png"))
        assert not image.isNull() and image.width() == 340
        panel.set_error(None)
