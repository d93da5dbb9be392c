"""A zoomable, pannable view of one 8-bit RGB image, with an optional split comparison.

The view only shows pixels: it receives display-ready (h, w, 3) uint8 arrays (see
`nodes.display.display_rgb`) and reports which image pixel is under the cursor; what the
pixel's value means is the caller's business. Zoomed in, pixels are drawn as sharp squares
(nearest neighbour) so single values can be inspected; zoomed out, the image is smoothed.

Split mode draws a second, same-sized image (the reference) left of a vertical divider that
the user drags, and the main image right of it, in one view, so both are compared at exactly
the same place and zoom. Two views can also be linked so that they share zoom and scroll
(side-by-side comparison).
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

ZOOM_STEP = 1.25
MIN_ZOOM = 1.0 / 64.0
MAX_ZOOM = 128.0
PIXEL_GRID_ZOOM = 12.0
DIVIDER_GRAB_PIXELS = 6


def _qimage_of(rgb: np.ndarray) -> QtGui.QImage:
    """A QImage over the array's memory (no copy): the caller must keep the array alive."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8 or not rgb.flags.c_contiguous:
        raise ValueError(f"ImageView needs a C-contiguous (h, w, 3) uint8 array, got {rgb.shape} {rgb.dtype}")
    height, width = rgb.shape[:2]
    return QtGui.QImage(rgb.data, width, height, 3 * width, QtGui.QImage.Format.Format_RGB888)


class _ImageItem(QtWidgets.QGraphicsItem):
    """Paints the image, or in split mode the reference left of the divider and the image right."""

    def __init__(self) -> None:
        super().__init__()
        self.pixmap: QtGui.QPixmap | None = None
        self.reference: QtGui.QPixmap | None = None
        self.split_x: float | None = None
        self.smooth = True

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt override)
        if self.pixmap is None:
            return QtCore.QRectF()
        return QtCore.QRectF(0, 0, self.pixmap.width(), self.pixmap.height())

    def paint(self, painter: QtGui.QPainter, option: object, widget: object = None) -> None:
        if self.pixmap is None:
            return
        painter.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform, self.smooth)
        bounds = self.boundingRect()
        if self.reference is None or self.split_x is None:
            painter.drawPixmap(QtCore.QPointF(0, 0), self.pixmap)
            return
        left = QtCore.QRectF(0, 0, self.split_x, bounds.height())
        right = QtCore.QRectF(self.split_x, 0, bounds.width() - self.split_x, bounds.height())
        painter.save()
        painter.setClipRect(left)
        painter.drawPixmap(QtCore.QPointF(0, 0), self.reference)
        painter.setClipRect(right)
        painter.drawPixmap(QtCore.QPointF(0, 0), self.pixmap)
        painter.restore()


class ImageView(QtWidgets.QGraphicsView):
    """Shows one image: wheel zoom around the cursor, drag to pan, fit / 1:1 / zoom in / out.

    Signals: `hovered(x, y)` image pixel under the cursor, (-1, -1) off the image;
    `zoom_changed(zoom)` screen pixels per image pixel; `split_moved(fraction)` divider moved
    by the user, as a fraction of the image width."""

    hovered = QtCore.Signal(int, int)
    zoom_changed = QtCore.Signal(float)
    split_moved = QtCore.Signal(float)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QtWidgets.QGraphicsScene(self))
        self._item = _ImageItem()
        self.scene().addItem(self._item)
        self._buffer: np.ndarray | None = None
        self._qimage: QtGui.QImage | None = None
        self._reference_buffer: np.ndarray | None = None
        self._reference_qimage: QtGui.QImage | None = None
        self._split_enabled = False
        self._split_fraction = 0.5
        self._split_titles = ("input", "output")
        self._fit_mode = True
        self._last_hover = (-1, -1)
        self._pan_start: tuple[QtCore.QPointF, int, int] | None = None
        self._dragging_divider = False
        self._linked: list[ImageView] = []
        self._syncing = False

        self.setBackgroundBrush(QtGui.QColor(43, 43, 43))
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.setTransformationAnchor(QtWidgets.QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QtWidgets.QGraphicsView.ViewportAnchor.NoAnchor)
        self.setDragMode(QtWidgets.QGraphicsView.DragMode.NoDrag)
        self.setViewportUpdateMode(QtWidgets.QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.viewport().setCursor(QtCore.Qt.CursorShape.OpenHandCursor)
        self.horizontalScrollBar().valueChanged.connect(self._broadcast_view)
        self.verticalScrollBar().valueChanged.connect(self._broadcast_view)

    # --- content -----------------------------------------------------------------------

    def set_image(self, rgb: np.ndarray) -> None:
        """Show a display-ready (h, w, 3) uint8 image.

        A same-sized image keeps zoom and scroll (live edits must not reset the user's view);
        a differently sized one is fitted when the view was fitted, and otherwise keeps the
        same framing relative to the image (a reduced-resolution preview looks the same)."""
        if rgb is self._buffer:
            return
        qimage = _qimage_of(rgb)
        old_size = self.image_size()
        old_zoom = self.zoom()
        old_centre = self._relative_centre()
        self._buffer, self._qimage = rgb, qimage
        self._item.prepareGeometryChange()
        self._item.pixmap = QtGui.QPixmap.fromImage(qimage)
        new_size = (rgb.shape[1], rgb.shape[0])
        if self._reference_buffer is not None and self._reference_buffer.shape[:2] != rgb.shape[:2]:
            self.set_reference(None)
        self.scene().setSceneRect(QtCore.QRectF(0, 0, new_size[0], new_size[1]))
        self._update_split_geometry()
        if old_size is None or self._fit_mode:
            self.fit()
        elif old_size != new_size:
            self._apply_zoom(old_zoom * old_size[0] / new_size[0])
            self._centre_on_relative(old_centre)
        self.viewport().update()

    def set_reference(self, rgb: np.ndarray | None) -> None:
        """The image drawn left of the divider in split mode; it must have the image's size."""
        if rgb is not None and rgb is self._reference_buffer:
            return
        if rgb is None:
            self._reference_buffer = self._reference_qimage = None
            self._item.reference = None
        else:
            if self._buffer is not None and rgb.shape[:2] != self._buffer.shape[:2]:
                raise ValueError(
                    f"the reference is {rgb.shape[1]} × {rgb.shape[0]} but the image is "
                    f"{self._buffer.shape[1]} × {self._buffer.shape[0]}: a split needs equal sizes"
                )
            self._reference_qimage = _qimage_of(rgb)
            self._reference_buffer = rgb
            self._item.reference = QtGui.QPixmap.fromImage(self._reference_qimage)
        self._update_split_geometry()

    def clear(self) -> None:
        """Show nothing (the next image is fitted)."""
        self._item.prepareGeometryChange()
        self._item.pixmap = None
        self._buffer = self._qimage = None
        self.set_reference(None)
        self._fit_mode = True
        self.scene().setSceneRect(QtCore.QRectF())
        self._emit_hover(-1, -1)
        self.viewport().update()

    def image_size(self) -> tuple[int, int] | None:
        """(width, height) of the shown image, or None."""
        if self._buffer is None:
            return None
        return int(self._buffer.shape[1]), int(self._buffer.shape[0])

    def qimage(self) -> QtGui.QImage | None:
        """The QImage shown (its pixel memory is the array given to set_image)."""
        return self._qimage

    # --- split comparison ---------------------------------------------------------------

    def set_split_enabled(self, enabled: bool) -> None:
        """Draw the reference left of the divider (needs a reference of the same size)."""
        self._split_enabled = enabled
        self._update_split_geometry()

    def split_enabled(self) -> bool:
        return self._split_enabled

    def split_active(self) -> bool:
        """True while the divider is really drawn (enabled, with a reference)."""
        return self._item.split_x is not None

    def set_split_fraction(self, fraction: float) -> None:
        """Place the divider at a fraction (0..1) of the image width."""
        self._split_fraction = min(1.0, max(0.0, float(fraction)))
        self._update_split_geometry()

    def split_fraction(self) -> float:
        return self._split_fraction

    def set_split_titles(self, left: str, right: str) -> None:
        """Labels drawn at the top of each side of the divider."""
        self._split_titles = (left, right)
        self.viewport().update()

    def _update_split_geometry(self) -> None:
        size = self.image_size()
        active = self._split_enabled and size is not None and self._item.reference is not None
        self._item.split_x = self._split_fraction * size[0] if active else None
        self._item.update()
        self.viewport().update()

    # --- zoom --------------------------------------------------------------------------

    def zoom(self) -> float:
        """Screen pixels per image pixel."""
        return float(self.transform().m11())

    def set_zoom(self, zoom: float, anchor: QtCore.QPointF | None = None) -> None:
        """Zoom keeping the image point under `anchor` (viewport coordinates; default: the
        centre) where it is."""
        self._fit_mode = False
        self._zoom_about(zoom, anchor)

    def zoom_in(self) -> None:
        self.set_zoom(self.zoom() * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom() / ZOOM_STEP)

    def actual_size(self) -> None:
        """1:1, one screen pixel per image pixel."""
        self.set_zoom(1.0)

    def fit(self) -> None:
        """The whole image in the view; stays fitted when the view is resized."""
        self._fit_mode = True
        size = self.image_size()
        if size is None:
            return
        viewport = self.viewport().size()
        zoom = min(viewport.width() / size[0], viewport.height() / size[1])
        self._apply_zoom(zoom)
        self.centerOn(size[0] / 2.0, size[1] / 2.0)
        self._broadcast_view()

    def is_fitted(self) -> bool:
        return self._fit_mode

    def _zoom_about(self, zoom: float, anchor: QtCore.QPointF | None) -> None:
        if anchor is None:
            anchor = QtCore.QPointF(self.viewport().width() / 2.0, self.viewport().height() / 2.0)
        scene_point = self._scene_point(anchor)
        self._apply_zoom(zoom)
        moved_to = self.viewportTransform().map(scene_point)
        horizontal, vertical = self.horizontalScrollBar(), self.verticalScrollBar()
        horizontal.setValue(horizontal.value() + round(moved_to.x() - anchor.x()))
        vertical.setValue(vertical.value() + round(moved_to.y() - anchor.y()))
        self._broadcast_view()

    def _apply_zoom(self, zoom: float) -> None:
        zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        if math.isclose(zoom, self.zoom(), rel_tol=1e-9):
            return
        self.setTransform(QtGui.QTransform.fromScale(zoom, zoom))
        self._item.smooth = zoom < 1.0
        self._item.update()
        self.zoom_changed.emit(zoom)

    def _relative_centre(self) -> tuple[float, float]:
        size = self.image_size()
        if size is None:
            return 0.5, 0.5
        centre = self._scene_point(QtCore.QPointF(self.viewport().width() / 2.0, self.viewport().height() / 2.0))
        return centre.x() / size[0], centre.y() / size[1]

    def _centre_on_relative(self, relative: tuple[float, float]) -> None:
        size = self.image_size()
        if size is not None:
            self.centerOn(relative[0] * size[0], relative[1] * size[1])

    # --- linking -----------------------------------------------------------------------

    def link(self, other: ImageView) -> None:
        """Share zoom and scroll with another view (both ways), e.g. for side by side."""
        if other is self or other in self._linked:
            return
        self._linked.append(other)
        other._linked.append(self)
        other._follow(self)

    def unlink(self, other: ImageView) -> None:
        if other in self._linked:
            self._linked.remove(other)
            other._linked.remove(self)

    def _broadcast_view(self) -> None:
        if self._syncing:
            return
        for other in self._linked:
            other._follow(self)

    def _follow(self, leader: ImageView) -> None:
        self._syncing = True
        try:
            self._fit_mode = leader._fit_mode
            self._apply_zoom(leader.zoom())
            self.horizontalScrollBar().setValue(leader.horizontalScrollBar().value())
            self.verticalScrollBar().setValue(leader.verticalScrollBar().value())
        finally:
            self._syncing = False

    # --- pointer -----------------------------------------------------------------------

    def _scene_point(self, view_pos: QtCore.QPointF) -> QtCore.QPointF:
        inverse, _ = self.viewportTransform().inverted()
        return inverse.map(QtCore.QPointF(view_pos))

    def pixel_at(self, view_pos: QtCore.QPointF | QtCore.QPoint) -> tuple[int, int]:
        """The image pixel under a viewport position, or (-1, -1) off the image."""
        size = self.image_size()
        if size is None:
            return -1, -1
        point = self._scene_point(QtCore.QPointF(view_pos))
        x, y = math.floor(point.x()), math.floor(point.y())
        if 0 <= x < size[0] and 0 <= y < size[1]:
            return x, y
        return -1, -1

    def view_position_of(self, x: float, y: float) -> QtCore.QPointF:
        """Viewport position of an image point (the inverse of pixel_at), e.g. to aim a test's mouse."""
        return self.viewportTransform().map(QtCore.QPointF(x, y))

    def hovered_pixel(self) -> tuple[int, int]:
        """The pixel last reported by `hovered`, (-1, -1) when the cursor is off the image."""
        return self._last_hover

    def _emit_hover(self, x: int, y: int) -> None:
        if (x, y) != self._last_hover:
            self._last_hover = (x, y)
            self.hovered.emit(x, y)

    def _near_divider(self, view_pos: QtCore.QPointF) -> bool:
        if self._item.split_x is None:
            return False
        divider = self.viewportTransform().map(QtCore.QPointF(self._item.split_x, 0)).x()
        return abs(view_pos.x() - divider) <= DIVIDER_GRAB_PIXELS

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 (Qt override)
        position = event.position()
        buttons = (QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.MouseButton.MiddleButton)
        if event.button() == QtCore.Qt.MouseButton.LeftButton and self._near_divider(position):
            self._dragging_divider = True
        elif event.button() in buttons:
            self._pan_start = (position, self.horizontalScrollBar().value(), self.verticalScrollBar().value())
            self.viewport().setCursor(QtCore.Qt.CursorShape.ClosedHandCursor)
        else:
            super().mousePressEvent(event)
            return
        event.accept()

    def mouseMoveEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 (Qt override)
        position = event.position()
        size = self.image_size()
        if self._dragging_divider and size is not None:
            fraction = self._scene_point(position).x() / size[0]
            self.set_split_fraction(fraction)
            self.split_moved.emit(self._split_fraction)
        elif self._pan_start is not None:
            start, horizontal, vertical = self._pan_start
            self.horizontalScrollBar().setValue(horizontal - round(position.x() - start.x()))
            self.verticalScrollBar().setValue(vertical - round(position.y() - start.y()))
        else:
            cursor = QtCore.Qt.CursorShape.SplitHCursor if self._near_divider(position) else None
            self.viewport().setCursor(cursor or QtCore.Qt.CursorShape.OpenHandCursor)
        self._emit_hover(*self.pixel_at(position))
        event.accept()

    def mouseReleaseEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 (Qt override)
        if self._dragging_divider or self._pan_start is not None:
            self._dragging_divider = False
            self._pan_start = None
            self.viewport().setCursor(QtCore.Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802 (Qt override)
        """Double click toggles between fit and 1:1 at the clicked point, as image viewers do."""
        if event.button() != QtCore.Qt.MouseButton.LeftButton or self.image_size() is None:
            super().mouseDoubleClickEvent(event)
            return
        if self._fit_mode:
            self._fit_mode = False
            self._zoom_about(1.0, event.position())
        else:
            self.fit()
        event.accept()

    def leaveEvent(self, event: QtCore.QEvent) -> None:  # noqa: N802 (Qt override)
        self._emit_hover(-1, -1)
        super().leaveEvent(event)

    def wheelEvent(self, event: QtGui.QWheelEvent) -> None:  # noqa: N802 (Qt override)
        steps = event.angleDelta().y() / 120.0
        if steps == 0 or self.image_size() is None:
            event.ignore()
            return
        self.set_zoom(self.zoom() * ZOOM_STEP**steps, event.position())
        self._emit_hover(*self.pixel_at(event.position()))
        event.accept()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = QtCore.Qt.Key
        actions = {
            key.Key_Plus: self.zoom_in,
            key.Key_Equal: self.zoom_in,
            key.Key_Minus: self.zoom_out,
            key.Key_F: self.fit,
            key.Key_1: self.actual_size,
        }
        action = actions.get(QtCore.Qt.Key(event.key()))
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if self._fit_mode:
            self.fit()

    # --- overlays ----------------------------------------------------------------------

    def drawForeground(self, painter: QtGui.QPainter, rect: QtCore.QRectF) -> None:  # noqa: N802 (Qt override)
        """Pixel grid when zoomed far in; the split divider and its two titles."""
        size = self.image_size()
        if size is None:
            return
        if self.zoom() >= PIXEL_GRID_ZOOM:
            self._draw_pixel_grid(painter, rect, size)
        if self._item.split_x is not None:
            self._draw_divider(painter, size)

    def _draw_pixel_grid(self, painter: QtGui.QPainter, rect: QtCore.QRectF, size: tuple[int, int]) -> None:
        visible = rect.intersected(QtCore.QRectF(0, 0, size[0], size[1]))
        if visible.isEmpty():
            return
        pen = QtGui.QPen(QtGui.QColor(128, 128, 128, 90), 0)
        painter.setPen(pen)
        left, right = math.floor(visible.left()), math.ceil(visible.right())
        top, bottom = math.floor(visible.top()), math.ceil(visible.bottom())
        lines = [QtCore.QLineF(x, top, x, bottom) for x in range(left, right + 1)]
        lines += [QtCore.QLineF(left, y, right, y) for y in range(top, bottom + 1)]
        painter.drawLines(lines)

    def _draw_divider(self, painter: QtGui.QPainter, size: tuple[int, int]) -> None:
        top = self.viewportTransform().map(QtCore.QPointF(self._item.split_x, 0))
        bottom = self.viewportTransform().map(QtCore.QPointF(self._item.split_x, size[1]))
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QtGui.QPen(QtGui.QColor(0, 0, 0, 160), 4))
        painter.drawLine(top, bottom)
        painter.setPen(QtGui.QPen(QtGui.QColor(255, 255, 255), 2))
        painter.drawLine(top, bottom)
        metrics = painter.fontMetrics()
        label_y = max(top.y(), 0.0) + 6
        for title, align_right in ((self._split_titles[0], True), (self._split_titles[1], False)):
            width = metrics.horizontalAdvance(title) + 10
            x = top.x() - width - 6 if align_right else top.x() + 6
            box = QtCore.QRectF(x, label_y, width, metrics.height() + 4)
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.setBrush(QtGui.QColor(0, 0, 0, 150))
            painter.drawRoundedRect(box, 3, 3)
            painter.setPen(QtGui.QColor(255, 255, 255))
            painter.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, title)
        painter.restore()
