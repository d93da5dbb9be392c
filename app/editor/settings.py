"""Where the editor keeps its settings (recent files, window layout) and autosaves:
$PIXELWEAVE_CONFIG_DIR when set (tests point it at a temporary folder), else the
platform's configuration folder."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6 import QtCore


def config_directory() -> Path:
    configured = os.environ.get("PIXELWEAVE_CONFIG_DIR")
    if configured:
        return Path(configured)
    base = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(base or Path.home() / ".config") / "pixelweave"


def settings() -> QtCore.QSettings:
    """The editor's settings file (an INI file in the configuration folder)."""
    folder = config_directory()
    folder.mkdir(parents=True, exist_ok=True)
    return QtCore.QSettings(str(folder / "editor.ini"), QtCore.QSettings.Format.IniFormat)
