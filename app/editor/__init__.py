"""The desktop editor: a PySide6 window over NodeGraphQt. A thin layer: every image and
compiler operation it offers is a call into `nodes/` and `engine/`, run off the GUI thread."""
