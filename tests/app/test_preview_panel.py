"""The preview panel driven as a user would: hover, zoom buttons, wheel, drag, compare, histogram."""

import numpy as np
import pytest
from pixelweave.app.editor.image_view import ImageView
from pixelweave.app.editor.preview_panel import PreviewPanel
from PySide6 import QtCore, QtGui, QtWidgets


@pytest.fixture
def panel(qtbot):
    widget = PreviewPanel()
    qtbot.addWidget(widget)
    widget.resize(700, 520)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _settle(qtbot):
    qtbot.wait(20)


def _move(view: ImageView, pos: QtCore.QPointF, buttons=QtCore.Qt.MouseButton.NoButton):
    event = QtGui.QMouseEvent(
        QtCore.QEvent.Type.MouseMove,
        pos,
        view.viewport().mapToGlobal(pos),
        QtCore.Qt.MouseButton.NoButton,
        buttons,
        QtCore.Qt.KeyboardModifier.NoModifier,
    )
    QtWidgets.QApplication.sendEvent(view.viewport(), event)


def _press(view: ImageView, pos: QtCore.QPointF, kind=QtCore.QEvent.Type.MouseButtonPress):
    left = QtCore.Qt.MouseButton.LeftButton
    buttons = left if kind == QtCore.QEvent.Type.MouseButtonPress else QtCore.Qt.MouseButton.NoButton
    event = QtGui.QMouseEvent(
        kind, pos, view.viewport().mapToGlobal(pos), left, buttons, QtCore.Qt.KeyboardModifier.NoModifier
    )
    QtWidgets.QApplication.sendEvent(view.viewport(), event)


def _wheel(view: ImageView, pos: QtCore.QPointF, notches: int):
    event = QtGui.QWheelEvent(
        pos,
        view.viewport().mapToGlobal(pos),
        QtCore.QPoint(0, 0),
        QtCore.QPoint(0, 120 * notches),
        QtCore.Qt.MouseButton.NoButton,
        QtCore.Qt.KeyboardModifier.NoModifier,
        QtCore.Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QtWidgets.QApplication.sendEvent(view.viewport(), event)


def _gray_ramp(width=40, height=30):
    return (np.arange(width * height, dtype=np.uint32).reshape(height, width) % 251).astype(np.uint8)


def _curve_data(item):
    return np.asarray(item.xData), np.asarray(item.yData)


# --- hover and zoom ------------------------------------------------------------------------


def test_starts_with_a_hint(panel):
    assert panel.stack.currentWidget() is panel.message_label
    assert panel.message_label.text() == "Select a node to preview it"
    assert not panel.fit_button.isEnabled() and not panel.compare_combo.isEnabled()


def test_hover_shows_coordinates_and_value_in_the_status_line(panel, qtbot):
    image = _gray_ramp()
    panel.show_result(image, "blur.output")
    _settle(qtbot)
    view = panel.view
    with qtbot.waitSignal(view.hovered) as hovered:
        _move(view, view.view_position_of(3.5, 4.5))
    assert hovered.args == [3, 4]
    zoom_percent = f"{view.zoom() * 100:.0f}%"
    assert panel.status_text() == f"{zoom_percent}   x 3  y 4   value {int(image[4, 3])}"
    with qtbot.waitSignal(view.hovered) as hovered:
        _move(view, view.view_position_of(-2.0, 4.5))
    assert hovered.args == [-1, -1]
    assert panel.status_text() == zoom_percent
    assert "blur.output" in panel.title_label.text() and "40 × 30 gray u8" in panel.title_label.text()


def test_float_colour_values_are_shown_in_their_own_units(panel, qtbot):
    image = np.zeros((3, 20, 30), np.float32)
    image[:, 12, 7] = [0.525, 0.25, 1.5]
    panel.show_result(image, "tone.output")
    _settle(qtbot)
    _move(panel.view, panel.view.view_position_of(7.5, 12.5))
    assert panel.status_text().endswith("x 7  y 12   R 0.525  G 0.250  B 1.500")
    assert "clipped to 0..1" in panel.note_label.text()


def test_fit_one_to_one_and_zoom_buttons(panel, qtbot):
    panel.show_result(np.zeros((300, 400), np.uint8), "out")
    _settle(qtbot)
    view = panel.view
    viewport = view.viewport().size()
    fitted = min(viewport.width() / 400, viewport.height() / 300)
    assert view.zoom() == pytest.approx(fitted)
    with qtbot.waitSignal(view.zoom_changed) as changed:
        qtbot.mouseClick(panel.actual_size_button, QtCore.Qt.MouseButton.LeftButton)
    assert changed.args == [pytest.approx(1.0)]
    assert panel.status_text().startswith("100%")
    qtbot.mouseClick(panel.zoom_in_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.zoom() == pytest.approx(1.25)
    qtbot.mouseClick(panel.zoom_out_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.zoom_out_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.zoom() == pytest.approx(0.8)
    assert panel.status_text().startswith("80%")
    qtbot.mouseClick(panel.fit_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.zoom() == pytest.approx(fitted)


def test_wheel_zooms_around_the_cursor(panel, qtbot):
    panel.show_result(_gray_ramp(200, 150), "out")
    _settle(qtbot)
    view = panel.view
    view.set_zoom(4.0)  # larger than the viewport, so it can scroll to keep the point
    view.centerOn(60, 40)
    target = view.view_position_of(60.5, 40.5)
    before = view.pixel_at(target)
    _wheel(view, target, 3)
    assert view.zoom() == pytest.approx(4.0 * 1.25**3)
    assert view.pixel_at(target) == before == (60, 40)
    _wheel(view, target, -1)
    assert view.zoom() == pytest.approx(4.0 * 1.25**2)
    assert view.pixel_at(target) == (60, 40)


def test_drag_pans_the_image(panel, qtbot):
    panel.show_result(_gray_ramp(200, 150), "out")
    _settle(qtbot)
    view = panel.view
    view.set_zoom(8.0)
    horizontal, vertical = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
    start = QtCore.QPointF(200, 150)
    _press(view, start)
    _move(view, QtCore.QPointF(170, 110), QtCore.Qt.MouseButton.LeftButton)
    _press(view, QtCore.QPointF(170, 110), QtCore.QEvent.Type.MouseButtonRelease)
    assert view.horizontalScrollBar().value() == horizontal + 30
    assert view.verticalScrollBar().value() == vertical + 40


def test_zoom_and_scroll_survive_an_update_of_the_same_size(panel, qtbot):
    panel.show_result(_gray_ramp(200, 150), "out")
    _settle(qtbot)
    view = panel.view
    view.set_zoom(6.0)
    view.horizontalScrollBar().setValue(120)
    view.verticalScrollBar().setValue(70)
    panel.show_result(255 - _gray_ramp(200, 150), "out")
    _settle(qtbot)
    assert view.zoom() == pytest.approx(6.0)
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) == (120, 70)
    panel.show_message("compile error", error=True)
    panel.show_result(_gray_ramp(200, 150), "out")
    assert view.zoom() == pytest.approx(6.0)
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) == (120, 70)


def test_a_smaller_preview_keeps_the_framing(panel, qtbot):
    panel.show_result(_gray_ramp(400, 300), "out")
    _settle(qtbot)
    view = panel.view
    view.set_zoom(2.0)
    panel.show_result(_gray_ramp(100, 75), "out")
    assert view.zoom() == pytest.approx(8.0)


def test_a_fitted_view_stays_fitted_for_a_new_size(panel, qtbot):
    panel.show_result(_gray_ramp(400, 300), "out")
    _settle(qtbot)
    panel.show_result(_gray_ramp(50, 100), "out")
    viewport = panel.view.viewport().size()
    assert panel.view.zoom() == pytest.approx(min(viewport.width() / 50, viewport.height() / 100))


# --- histogram -----------------------------------------------------------------------------


def test_histogram_toggle_plots_numpy_counts_per_channel(panel, qtbot):
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (3, 40, 50), dtype=np.uint8)
    panel.show_result(image, "out")
    assert panel.histogram_plot.isHidden()
    qtbot.mouseClick(panel.histogram_button, QtCore.Qt.MouseButton.LeftButton)
    assert panel.histogram_plot.isVisible()
    curves = panel.histogram_curves()
    assert len(curves) == 3
    for channel, curve in enumerate(curves):
        x, y = _curve_data(curve)
        expected, edges = np.histogram(image[channel], bins=256, range=(0, 256))
        assert np.array_equal(y, expected) and np.allclose(x, edges)
    assert [c.opts["pen"].color().getRgb()[:3] for c in curves] == [(235, 70, 70), (70, 200, 70), (80, 130, 255)]
    qtbot.mouseClick(panel.histogram_button, QtCore.Qt.MouseButton.LeftButton)
    assert panel.histogram_plot.isHidden()


def test_histogram_follows_new_results_and_float_range(panel, qtbot):
    panel.set_histogram_visible(True)
    image = np.linspace(-0.5, 1.0, 600, dtype=np.float32).reshape(20, 30)
    panel.show_result(image, "out")
    (curve,) = panel.histogram_curves()
    x, y = _curve_data(curve)
    expected, edges = np.histogram(image, bins=256, range=(-0.5, 1.0))
    assert np.array_equal(y, expected) and np.allclose(x, edges)


# --- compare -------------------------------------------------------------------------------


def test_compare_is_disabled_without_a_reference(panel):
    panel.show_result(_gray_ramp(), "out")
    assert not panel.compare_combo.isEnabled()
    assert panel.compare_combo.toolTip() == "No input image to compare with"


def test_compare_is_disabled_when_sizes_differ(panel):
    panel.show_result(_gray_ramp(40, 30), "out", reference=np.zeros((3, 60, 80), np.uint8))
    assert not panel.compare_combo.isEnabled()
    assert "80 × 60" in panel.compare_combo.toolTip() and "40 × 30" in panel.compare_combo.toolTip()
    assert "equal sizes" in panel.compare_combo.toolTip()


def test_split_draws_reference_left_of_a_draggable_divider(panel, qtbot):
    reference = np.zeros((3, 30, 40), np.uint8)
    result = np.full((30, 40), 200, np.uint8)
    panel.show_result(result, "bright", reference=reference, reference_title="input")
    assert panel.compare_combo.isEnabled()
    panel.compare_combo.setCurrentIndex(panel.compare_combo.findData("split"))
    _settle(qtbot)
    view = panel.view
    assert panel.compare_mode() == "split" and view.split_active()
    assert not panel.reference_view.isVisible()
    frame = view.grab().toImage()
    left, right = view.view_position_of(10.5, 15.5).toPoint(), view.view_position_of(30.5, 15.5).toPoint()
    assert QtGui.QColor(frame.pixel(left)).red() == 0
    assert QtGui.QColor(frame.pixel(right)).red() == 200
    divider = view.view_position_of(20, 15)
    with qtbot.waitSignal(view.split_moved) as moved:
        _press(view, divider)
        _move(view, view.view_position_of(30, 15), QtCore.Qt.MouseButton.LeftButton)
        _press(view, view.view_position_of(30, 15), QtCore.QEvent.Type.MouseButtonRelease)
    assert moved.args[0] == pytest.approx(0.75, abs=0.02)
    _move(view, view.view_position_of(5.5, 6.5))
    assert panel.status_text().endswith("x 5  y 6   value 200   │ input: R 0  G 0  B 0")


def test_side_by_side_links_zoom_and_scroll(panel, qtbot):
    reference = _gray_ramp(200, 150)
    panel.show_result(255 - reference, "inverted", reference=reference)
    panel.set_compare_mode("side_by_side")
    _settle(qtbot)
    assert panel.reference_view.isVisible() and not panel.view.split_active()
    panel.view.set_zoom(4.0)
    panel.view.horizontalScrollBar().setValue(90)
    assert panel.reference_view.zoom() == pytest.approx(4.0)
    assert panel.reference_view.horizontalScrollBar().value() == 90
    panel.reference_view.verticalScrollBar().setValue(33)
    assert panel.view.verticalScrollBar().value() == 33
    panel.set_compare_mode("off")
    _settle(qtbot)
    assert not panel.reference_view.isVisible()
    panel.view.set_zoom(2.0)
    assert panel.reference_view.zoom() == pytest.approx(4.0)


def test_compare_choice_returns_when_sizes_match_again(panel):
    reference = _gray_ramp(40, 30)
    panel.show_result(reference, "a", reference=reference)
    panel.set_compare_mode("split")
    panel.show_result(_gray_ramp(20, 15), "half", reference=reference)
    assert panel.compare_mode() == "off" and not panel.view.split_active()
    panel.show_result(reference, "a", reference=reference)
    assert panel.compare_mode() == "split" and panel.view.split_active()


# --- other shapes, messages, busy ------------------------------------------------------------


def test_one_dimensional_output_is_a_bar_plot(panel, qtbot):
    table = np.array([5, 0, 12, 7], np.uint32)
    panel.show_result(table, "hist.output")
    assert panel.stack.currentWidget() is panel.array_plot
    (curve,) = panel.array_plot.listDataItems()
    x, y = _curve_data(curve)
    assert np.array_equal(y, table) and np.allclose(x, [-0.5, 0.5, 1.5, 2.5, 3.5])
    assert "array of 4 u32" in panel.title_label.text()
    assert not panel.histogram_button.isEnabled() and not panel.actual_size_button.isEnabled()
    assert panel.fit_button.isEnabled()
    assert not panel.compare_combo.isEnabled() and "array of 4 u32" in panel.compare_combo.toolTip()


def test_scalar_output_is_large_text(panel):
    panel.show_result(np.array(0.525, np.float32), "mean.output")
    assert panel.stack.currentWidget() is panel.scalar_label
    assert "0.525" in panel.scalar_label.text() and "scalar f32" in panel.scalar_label.text()


def test_message_and_unshowable_arrays(panel):
    panel.show_result(_gray_ramp(), "out")
    panel.show_message("node `blur`: radius must be positive", error=True)
    assert panel.stack.currentWidget() is panel.message_label
    assert panel.message_label.text() == "node `blur`: radius must be positive"
    assert "#d9534f" in panel.message_label.styleSheet()
    assert panel.current_array() is None and panel.status_text() == ""
    panel.show_result(np.zeros((6, 10, 10), np.uint8), "weird.output")
    assert panel.stack.currentWidget() is panel.message_label
    assert panel.message_label.text().startswith("Cannot show weird.output:")
    assert "1 to 4 channels" in panel.message_label.text()


def test_busy_indicator_keeps_the_image(panel):
    panel.show_result(_gray_ramp(), "out")
    panel.set_busy(True)
    assert panel.busy_indicator.isVisible() and panel.is_busy()
    assert panel.stack.currentWidget() is not panel.message_label
    panel.set_busy(False)
    assert not panel.is_busy()


def test_note_joins_display_note(panel):
    panel.set_note("preview at 1/4 resolution")
    panel.show_result(np.array([[-3, 9]], np.int16), "diff")
    assert panel.note_label.text() == "shown stretched from -3..9   preview at 1/4 resolution"


def test_unknown_compare_mode_is_refused(panel):
    with pytest.raises(ValueError, match="side_by_side"):
        panel.set_compare_mode("overlay")


def test_renders_a_legible_frame(panel, qtbot, tmp_path):
    ramp_y, ramp_x = np.meshgrid(np.linspace(0, 1, 120), np.linspace(0, 1, 160), indexing="ij")
    image = np.stack([ramp_x, ramp_y, np.full((120, 160), 0.5)])
    panel.show_result(image.astype(np.float32), "gradient.output", reference=np.zeros((120, 160), np.uint8))
    panel.set_histogram_visible(True)
    panel.set_compare_mode("split")
    _settle(qtbot)
    path = tmp_path / "preview.png"
    assert panel.grab().save(str(path))
    frame = QtGui.QImage(str(path))
    assert frame.width() == panel.width()
    colours = {frame.pixel(x, y) for x in range(0, frame.width(), 7) for y in range(0, frame.height(), 7)}
    assert len(colours) > 50


def test_keyboard_and_double_click_zoom(panel, qtbot):
    panel.show_result(_gray_ramp(200, 150), "out")
    _settle(qtbot)
    view = panel.view
    fitted = view.zoom()
    qtbot.keyClick(view, QtCore.Qt.Key.Key_1)
    assert view.zoom() == pytest.approx(1.0)
    qtbot.keyClick(view, QtCore.Qt.Key.Key_Plus)
    assert view.zoom() == pytest.approx(1.25)
    qtbot.keyClick(view, QtCore.Qt.Key.Key_Minus)
    assert view.zoom() == pytest.approx(1.0)
    qtbot.keyClick(view, QtCore.Qt.Key.Key_F)
    assert view.zoom() == pytest.approx(fitted) and view.is_fitted()
    qtbot.mouseDClick(view.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=view.view_position_of(50, 50).toPoint())
    assert view.zoom() == pytest.approx(1.0) and not view.is_fitted()
    qtbot.mouseDClick(view.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(10, 10))
    assert view.zoom() == pytest.approx(fitted)


def test_standalone_image_view_refuses_wrong_buffers(qtbot):
    view = ImageView()
    qtbot.addWidget(view)
    with pytest.raises(ValueError, match="uint8"):
        view.set_image(np.zeros((4, 4, 3), np.float32))
    view.set_image(np.zeros((4, 4, 3), np.uint8))
    assert view.image_size() == (4, 4) and view.qimage().width() == 4
    with pytest.raises(ValueError, match="equal sizes"):
        view.set_reference(np.zeros((5, 4, 3), np.uint8))
    view.clear()
    assert view.image_size() is None and view.pixel_at(QtCore.QPointF(1, 1)) == (-1, -1)


def test_hovering_a_bar_plot_reads_out_the_entry(panel, qtbot):
    table = np.array([5, 0, 12, 7], np.uint32)
    panel.show_result(table, "hist.output")
    _settle(qtbot)
    box = panel.array_plot.getViewBox()
    panel.array_plot.scene().sigMouseMoved.emit(box.mapViewToScene(QtCore.QPointF(2.2, 3.0)))
    assert panel.status_text() == "index 2   value 12"
    panel.array_plot.scene().sigMouseMoved.emit(box.mapViewToScene(QtCore.QPointF(9.0, 3.0)))
    assert panel.status_text() == ""


def test_read_out_follows_a_new_result_under_a_still_cursor(panel, qtbot):
    panel.show_result(np.full((30, 40), 10, np.uint8), "out")
    _settle(qtbot)
    _move(panel.view, panel.view.view_position_of(4.5, 5.5))
    assert panel.status_text().endswith("value 10")
    panel.show_message("recompiling")
    panel.show_result(np.full((30, 40), 99, np.uint8), "out")
    assert panel.status_text().endswith("x 4  y 5   value 99")


def test_long_one_line_texts_never_set_the_panels_minimum_width(panel):
    """A note, a title or a message on one long line must not widen the dock (and with it the
    window, past the screen): the labels take the width they are given."""
    before = panel.minimumSizeHint().width()
    panel.show_result(np.zeros((20, 30), np.float32), "t" * 400)
    panel.set_note("schedule not usable for this preview: " + "x" * 600)
    assert panel.minimumSizeHint().width() <= max(before, 420)
    panel.show_message("cannot read /" + "very_long_folder_name/" * 30 + "image.png", error=True)
    assert panel.minimumSizeHint().width() <= max(before, 420)
