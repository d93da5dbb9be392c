"""The loop-nest inspector: text and toggle, highlighting of a node's lines, click-to-select,
kept scroll position and messages."""

from __future__ import annotations

from pixelweave.app.editor.loop_nest_view import LOOP_COLOURS, LoopNestView
from PySide6 import QtCore, QtGui

NEST = """\
produce result.out:
  parallel y.yo:
    for x.xo:
      store sharpen.blur_x:
        produce sharpen.blur_x:
          for y:
            vectorized x.v0 in [0, 7]:
              sharpen.blur_x(...) = ...
        consume sharpen.blur_x:
          for y.yi:
            for x.xi:
              result.out(...) = ...
"""
STMT = "produce result.out {\n  for (result.out.s0.y, 0, 45) {\n    result.out[0] = 1\n  }\n}\n"


def make(qtbot) -> LoopNestView:
    view = LoopNestView()
    qtbot.addWidget(view)
    view.resize(520, 360)
    view.show()
    view.set_text(NEST, STMT)
    return view


def point_of_line(view: LoopNestView, number: int) -> QtCore.QPoint:
    block = view.editor.document().findBlockByNumber(number)
    rect = view.editor.blockBoundingGeometry(block).translated(view.editor.contentOffset())
    return QtCore.QPoint(30, int(rect.center().y()))


def test_shows_the_loop_nest_and_toggles_to_the_statement(qtbot):
    view = make(qtbot)
    assert view.text().rstrip("\n") == NEST.rstrip("\n")
    assert view.mode_button.isEnabled()
    qtbot.mouseClick(view.mode_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.showing_full_statement() and view.text().startswith("produce result.out {")
    qtbot.mouseClick(view.mode_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.text().startswith("produce result.out:")
    view.set_text(NEST, None)
    assert not view.mode_button.isEnabled()


def test_highlight_marks_the_nodes_lines(qtbot):
    view = make(qtbot)
    view.highlight_node("sharpen")
    assert view.highlighted_lines() == [3, 4, 5, 6, 7, 8]
    marked = [s.cursor.blockNumber() for s in view.editor.extraSelections()]
    assert marked == [3, 4, 5, 6, 7, 8]
    view.highlight_node(None)
    assert view.editor.extraSelections() == []


def test_clicking_a_line_selects_its_node(qtbot):
    view = make(qtbot)
    qtbot.wait(20)
    with qtbot.waitSignal(view.node_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(view.editor.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point_of_line(view, 5))
    assert blocker.args == ["sharpen"]
    with qtbot.waitSignal(view.node_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(view.editor.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point_of_line(view, 10))
    assert blocker.args == ["result"]


def test_loop_kinds_get_their_colours(qtbot):
    view = make(qtbot)
    block = view.editor.document().findBlockByNumber(6)  # "vectorized x.v0 in [0, 7]:"
    formats = block.layout().formats()
    start = block.text().index("vectorized")
    colours = {f.format.foreground().color().name() for f in formats if f.start <= start < f.start + f.length}
    assert colours == {LOOP_COLOURS["vectorized"]}
    assert view.editor.font().styleHint() == QtGui.QFont.StyleHint.TypeWriter


def test_scroll_position_is_kept_on_a_small_change(qtbot):
    view = make(qtbot)
    long_text = "\n".join(f"produce n{i}.out:\n  for x:" for i in range(200))
    view.set_text(long_text)
    bar = view.editor.verticalScrollBar()
    bar.setValue(150)
    view.set_text(long_text.replace("n7.out", "n7.out2"))
    assert bar.value() == 150


def test_message_state(qtbot):
    view = make(qtbot)
    view.set_message("the pipeline has errors: node `sharpen`: bad")
    assert view.message.isVisible() and "has errors" in view.message.text()
    assert not view.editor.isEnabled()
    view.set_text(NEST)
    assert not view.message.isVisible() and view.editor.isEnabled()


def test_screenshot(qtbot):
    view = make(qtbot)
    view.highlight_node("sharpen")
    qtbot.wait(50)
    assert not view.grab().isNull()
    view.grab().save("/tmp/loop_nest_view.png")


def _deep_nest(levels: int) -> str:
    """A loop nest whose output is nested inside many consume blocks (as pyramids' is)."""
    lines, pad = [], ""
    for k in range(levels):
        lines += [f"{pad}produce filter.g{k}:", f"{pad}  for y:", f"{pad}    filter.g{k}(...) = ...", f"{pad}consume filter.g{k}:"]
        pad += "  "
    lines += [f"{pad}produce result.out:", f"{pad}  for y:", f"{pad}    result.out(...) = ..."]
    return "\n".join(lines) + "\n"


def _visible_x(view: LoopNestView, line: int) -> int:
    """Where the line's text (after its indentation) starts in the viewport, in pixels."""
    block = view.editor.document().findBlockByNumber(line)
    cursor = QtGui.QTextCursor(block)
    cursor.setPosition(block.position() + len(block.text()) - len(block.text().lstrip()))
    return view.editor.cursorRect(cursor).left()


def test_a_deep_nest_shows_the_selected_nodes_lines_where_they_can_be_read(qtbot):
    view = make(qtbot)
    text = _deep_nest(40)
    view.set_text(text, None)
    view.editor.horizontalScrollBar().setValue(view.editor.horizontalScrollBar().maximum())  # left far right
    view.highlight_node("result")
    first = view.highlighted_lines()[0]
    width = view.editor.viewport().width()
    bar = view.editor.horizontalScrollBar()
    x = _visible_x(view, first)
    assert 0 <= x < width - 150  # the produce line's text is in view, not off to a side
    assert x <= width // 4 + 2 or bar.value() == bar.maximum()  # as far left as the text allows
    view.editor.horizontalScrollBar().setValue(0)
    view.highlight_node("result")
    assert 0 <= _visible_x(view, first) < width - 150
    view.highlight_node("filter")  # the outermost lines: back to the left edge
    assert view.editor.horizontalScrollBar().value() == 0


def test_a_hint_replaces_the_text_an_error_dims_it(qtbot):
    view = make(qtbot)
    view.set_message("The pipeline has problems")
    assert view.text() == NEST and not view.editor.isEnabled()
    view.set_message("The document is empty", error=False)
    assert view.text() == "" and view.message.text() == "The document is empty"
