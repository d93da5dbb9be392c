"""Small fixes that make NodeGraphQt 0.6.44 work with PySide6 6.12, applied once at start-up.

PySide6 6.12 no longer resolves enum members through an instance (`self.NoButtons`), which
breaks NodeGraphQt's properties-bin spin boxes, its Tab search completer and its backdrop
items; `NodeSpinBox.get_value()` returns text, which breaks restoring a saved session; and
NodeGraphQt imports `distutils`, which Python 3.12 only has through setuptools. Each fix is
the smallest change that restores the documented behaviour (tests/app/test_compat.py).
`keep_singletons_alive` works around a reference-counting fault of PySide6 6.12 on Python
3.11; the editor package applies it when it is imported.
"""

from __future__ import annotations

import sys
import types

_applied = False
_IMMORTAL_REFERENCES = 1 << 40


def keep_singletons_alive() -> None:
    """PySide6 6.12 returns None from void calls (and True/False from some bool ones) without
    a new reference, as Python 3.12 allows, where these objects are immortal. On Python 3.11
    every such call takes a reference away, and after some thousands of calls (a few minutes
    of editing, or the GUI test suite) the process aborts with "none_dealloc: deallocating
    None". Here they get as many references as 3.12 gives immortal objects, so no number of
    calls can use them up. Nothing changes on Python 3.12 and later."""
    if sys.version_info >= (3, 12):
        return
    import ctypes

    for singleton in (None, True, False):
        refcount = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt, PyObject's first field
        if refcount.value < _IMMORTAL_REFERENCES:
            refcount.value += _IMMORTAL_REFERENCES


def _provide_distutils_version() -> None:
    """A `distutils.version.LooseVersion` good enough for NodeGraphQt's Qt version checks."""
    try:
        import distutils.version  # noqa: F401
    except ImportError:
        import re

        class LooseVersion:
            def __init__(self, text: str) -> None:
                self.version = tuple(int(part) for part in re.findall(r"\d+", str(text))[:3])

            def __lt__(self, other: LooseVersion) -> bool:
                return self.version < other.version

            def __ge__(self, other: LooseVersion) -> bool:
                return self.version >= other.version

        package = types.ModuleType("distutils")
        module = types.ModuleType("distutils.version")
        module.LooseVersion = LooseVersion  # type: ignore[attr-defined]
        package.version = module  # type: ignore[attr-defined]
        sys.modules.setdefault("distutils", package)
        sys.modules.setdefault("distutils.version", module)


def apply() -> None:
    """Patches NodeGraphQt in place; safe to call more than once."""
    global _applied
    if _applied:
        return
    _provide_distutils_version()
    from NodeGraphQt.custom_widgets.properties_bin import prop_widgets_base
    from NodeGraphQt.qgraphics import node_backdrop
    from NodeGraphQt.widgets import node_widgets, tab_search
    from PySide6 import QtWidgets

    no_buttons = QtWidgets.QAbstractSpinBox.ButtonSymbols.NoButtons
    for cls in (prop_widgets_base.PropSpinBox, prop_widgets_base.PropDoubleSpinBox):
        cls.NoButtons = no_buttons
    tab_search.TabSearchCompleter.PopupCompletion = QtWidgets.QCompleter.CompletionMode.PopupCompletion
    node_backdrop.BackdropNodeItem.ItemIsMovable = QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemIsMovable

    def spin_value(self: node_widgets.NodeSpinBox) -> int | float:
        return self.get_custom_widget().value()

    node_widgets.NodeSpinBox.get_value = spin_value
    _applied = True
