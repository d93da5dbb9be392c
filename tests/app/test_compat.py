"""NodeGraphQt's own features that PySide6 6.12 broke, working again after compat.apply():
the properties bin with spin boxes, the Tab search menu, backdrops and session restore."""

from NodeGraphQt import BaseNode, NodeGraph, PropertiesBinWidget
from NodeGraphQt.constants import NodePropWidgetEnum
from pixelweave.app.editor import compat
from PySide6 import QtWidgets


class Knobs(BaseNode):
    __identifier__ = "compat.test"
    NODE_NAME = "Knobs"

    def __init__(self):
        super().__init__()
        self.add_input("in")
        self.add_output("out")
        self.add_spinbox("taps", "Taps", value=7)
        self.create_property("gain", 1.5, widget_type=NodePropWidgetEnum.QDOUBLESPIN_BOX.value)
        self.create_property("count", 3, widget_type=NodePropWidgetEnum.QSPIN_BOX.value)


def _graph(qtbot):
    compat.apply()
    graph = NodeGraph()
    graph.register_node(Knobs)
    qtbot.addWidget(graph.widget)
    return graph


def test_properties_bin_shows_spin_box_properties(qtbot):
    graph = _graph(qtbot)
    node = graph.create_node("compat.test.Knobs")
    properties = PropertiesBinWidget(node_graph=graph)
    qtbot.addWidget(properties)
    properties.add_node(node)
    from NodeGraphQt.custom_widgets.properties_bin.prop_widgets_base import PropDoubleSpinBox, PropSpinBox

    spins = properties.findChildren(PropSpinBox) + properties.findChildren(PropDoubleSpinBox)
    assert sorted(s.value() for s in spins) == [1.5, 3]
    assert all(s.buttonSymbols() == QtWidgets.QAbstractSpinBox.ButtonSymbols.NoButtons for s in spins)


def test_tab_search_completer_builds_with_popup_completion(qtbot):
    from NodeGraphQt.widgets.tab_search import TabSearchCompleter, TabSearchMenuWidget

    _graph(qtbot)
    completer = TabSearchCompleter(["Knobs", "Box blur"])
    assert completer.completionMode() == QtWidgets.QCompleter.CompletionMode.PopupCompletion
    menu = TabSearchMenuWidget()
    menu._node_dict = {"Knobs": "compat.test.Knobs"}
    menu.build_menu_tree()
    assert menu._node_dict == {"Knobs": "compat.test.Knobs"}


def test_session_with_spin_box_values_round_trips(qtbot):
    graph = _graph(qtbot)
    a = graph.create_node("compat.test.Knobs", name="a")
    b = graph.create_node("compat.test.Knobs", name="b")
    a.set_property("taps", 11)
    a.output(0).connect_to(b.input(0))
    session = graph.serialize_session()
    assert a.get_property("taps") == 11
    restored = _graph(qtbot)
    restored.deserialize_session(session)
    names = {n.name(): n for n in restored.all_nodes()}
    assert names["a"].get_property("taps") == 11
    assert names["b"].input(0).connected_ports()[0].node().name() == "a"


def test_backdrop_wraps_nodes(qtbot):
    graph = _graph(qtbot)
    node = graph.create_node("compat.test.Knobs")
    backdrop = graph.create_node("nodeGraphQt.nodes.BackdropNode")
    backdrop.wrap_nodes([node])
    assert node in backdrop.nodes()


def test_void_qt_calls_never_use_up_none_true_or_false(qtbot):
    """PySide6 6.12 on Python 3.11 drops a reference to None on every void call: without the
    editor package's fix, a long session (or this loop) aborts the process."""
    import sys

    from PySide6 import QtWidgets

    label = QtWidgets.QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(50_000):
        label.setText("x")
        label.setVisible(False)
    after = sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)
    if sys.version_info < (3, 12):
        assert min(after) > 2**39  # far more references than any session can drop
    assert all(a > 0 for a in after) and before  # and the process is still alive
