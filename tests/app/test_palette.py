"""The node palette: grouped by category, filtered by typing, drags carry the node type,
double-click and Enter request a node."""

import os
from pathlib import Path

from pixelweave.app.editor.palette import NODE_TYPE_MIME, NodePalette, node_type_mime_data, type_name_from_mime
from pixelweave.nodes.node_type import CATEGORIES, node_types
from PySide6 import QtCore, QtWidgets


def make(qtbot):
    palette = NodePalette()
    qtbot.addWidget(palette)
    palette.resize(260, 600)
    palette.show()
    return palette


def test_tree_groups_every_type_by_category_in_order(qtbot):
    palette = make(qtbot)
    tree = palette.tree
    headings = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert headings == [c for c in CATEGORIES if any(t.category == c for t in node_types().values())]
    listed = {}
    for i in range(tree.topLevelItemCount()):
        heading = tree.topLevelItem(i)
        for j in range(heading.childCount()):
            item = heading.child(j)
            type_cls = node_types()[item.data(0, QtCore.Qt.ItemDataRole.UserRole)]
            assert type_cls.category == heading.text(0)
            assert item.text(0) == type_cls.title
            assert item.toolTip(0) == type_cls.tooltip()
            listed[type_cls.type_name] = item
    assert set(listed) == set(node_types())
    assert not heading.flags() & QtCore.Qt.ItemFlag.ItemIsDragEnabled
    assert palette.visible_type_names() == list(palette.type_items)


def test_typing_filters_and_hides_empty_categories(qtbot):
    palette = make(qtbot)
    qtbot.keyClicks(palette.search_field, "blur")
    visible = palette.visible_type_names()
    assert {"box_blur", "gaussian_blur"} <= set(visible)
    for name in visible:  # every visible type mentions the word somewhere a user can read
        t = node_types()[name]
        assert "blur" in f"{t.title} {t.type_name} {t.category} {t.summary()}".lower()
    hidden_categories = [c for c, item in palette.category_items.items() if item.isHidden()]
    assert "Inputs and outputs" in hidden_categories and "Stencils" not in hidden_categories
    assert palette.tree.currentItem() is palette.type_items[palette.best_match()]


def test_filter_by_category_and_summary_words(qtbot):
    palette = make(qtbot)
    palette.set_filter("resampling")
    visible = palette.visible_type_names()
    assert visible and all(node_types()[n].category == "Resampling" for n in visible)
    palette.set_filter("zzqx")
    assert palette.visible_type_names() == []
    assert palette.message.isVisible() and "zzqx" in palette.message.text()
    palette.set_filter("")
    assert len(palette.visible_type_names()) == len(node_types())
    assert not palette.message.isVisible()


def test_enter_in_search_requests_the_best_match(qtbot):
    palette = make(qtbot)
    qtbot.keyClicks(palette.search_field, "gauss")
    with qtbot.waitSignal(palette.node_requested, timeout=1000) as signal:
        qtbot.keyClick(palette.search_field, QtCore.Qt.Key.Key_Return)
    assert signal.args == ["gaussian_blur"]
    palette.search_field.clear()
    qtbot.keyClicks(palette.search_field, "zzqx")
    with qtbot.assertNotEmitted(palette.node_requested):
        qtbot.keyClick(palette.search_field, QtCore.Qt.Key.Key_Return)


def double_click(qtbot, widget, pos):
    """A real double-click: a first click (the view remembers the pressed item), then the
    double-click event."""
    qtbot.mouseClick(widget, QtCore.Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(widget, QtCore.Qt.MouseButton.LeftButton, pos=pos)


def test_double_click_requests_the_node(qtbot):
    palette = make(qtbot)
    item = palette.type_items["unsharp_mask"]
    palette.tree.scrollToItem(item)
    rect = palette.tree.visualItemRect(item)
    with qtbot.waitSignal(palette.node_requested, timeout=1000) as signal:
        double_click(qtbot, palette.tree.viewport(), rect.center())
    assert signal.args == ["unsharp_mask"]


def test_double_click_on_a_category_requests_nothing(qtbot):
    palette = make(qtbot)
    heading = palette.category_items["Stencils"]
    rect = palette.tree.visualItemRect(heading)
    with qtbot.assertNotEmitted(palette.node_requested):
        double_click(qtbot, palette.tree.viewport(), rect.center())


def test_down_then_enter_from_the_search_field(qtbot):
    palette = make(qtbot)
    palette.focus_search()
    qtbot.keyClicks(palette.search_field, "sharp")
    qtbot.keyClick(palette.search_field, QtCore.Qt.Key.Key_Down)
    assert palette.tree.currentItem() is palette.type_items["sharpen"]
    qtbot.keyClick(palette.tree, QtCore.Qt.Key.Key_Down)
    with qtbot.waitSignal(palette.node_requested, timeout=1000) as signal:
        qtbot.keyClick(palette.tree, QtCore.Qt.Key.Key_Return)
    assert signal.args == [palette.visible_type_names()[1]]


def test_escape_clears_the_search(qtbot):
    palette = make(qtbot)
    qtbot.keyClicks(palette.search_field, "blur")
    qtbot.keyClick(palette.search_field, QtCore.Qt.Key.Key_Escape)
    assert palette.search_field.text() == ""
    assert len(palette.visible_type_names()) == len(node_types())


def test_drag_mime_data(qtbot):
    mime = node_type_mime_data("gaussian_blur")
    assert NODE_TYPE_MIME in mime.formats()
    assert bytes(mime.data(NODE_TYPE_MIME).data()) == b"gaussian_blur"
    assert type_name_from_mime(mime) == "gaussian_blur"
    plain = QtCore.QMimeData()
    plain.setText("gaussian_blur")
    assert type_name_from_mime(plain) is None
    palette = make(qtbot)
    assert palette.tree.mimeTypes() == [NODE_TYPE_MIME]
    dragged = palette.tree.mimeData([palette.type_items["crop"]])
    assert bytes(dragged.data(NODE_TYPE_MIME).data()) == b"crop"
    assert palette.tree.mimeData([palette.category_items["Stencils"]]) is None
    assert palette.tree.dragDropMode() == QtWidgets.QAbstractItemView.DragDropMode.DragOnly


def test_render_palette(qtbot, tmp_path):
    """PIXELWEAVE_RENDER_DIR keeps the PNGs to look at."""
    out = Path(os.environ.get("PIXELWEAVE_RENDER_DIR", tmp_path))
    palette = make(qtbot)
    qtbot.wait(20)
    palette.grab().save(str(out / "palette.png"))
    palette.set_filter("blur")
    qtbot.wait(20)
    image = palette.grab().toImage()
    image.save(str(out / "palette_blur.png"))
    assert image.width() == 260 and not image.isNull()
