"""The desktop editor: a PySide6 window over NodeGraphQt. A thin layer: every image and
compiler operation it offers is a call into `nodes/` and `engine/`, run off the GUI thread."""

from pixelweave.app.editor.compat import keep_singletons_alive

keep_singletons_alive()  # before any Qt call: see compat.keep_singletons_alive
