"""Render the application icon (icons/hicolor/scalable/apps/org.pixelweave.Pixelweave.svg) to
the PNG sizes desktops look up, in the freedesktop hicolor layout:
icons/hicolor/NxN/apps/org.pixelweave.Pixelweave.png.

Run after editing the SVG: `python packaging/render_icons.py` (Qt's SVG renderer, offscreen:
no display needed). tests/test_desktop_files.py checks that the PNGs match the SVG.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_ID = "org.pixelweave.Pixelweave"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
HERE = Path(__file__).resolve().parent
SVG = HERE / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"


def png_path(size: int, root: Path = HERE / "icons") -> Path:
    return root / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"


def render(svg: Path, size: int) -> object:
    """The SVG rendered to a size x size QImage with a transparent background."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:  # a full QApplication: widgets may be made later in this process
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        render.app = QApplication([])  # type: ignore[attr-defined]  # kept alive for later calls
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG file")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def render_all(svg: Path = SVG, root: Path = HERE / "icons") -> list[Path]:
    written = []
    for size in SIZES:
        path = png_path(size, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not render(svg, size).save(str(path), "PNG"):
            raise OSError(f"cannot write {path}")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render_all():
        print(f"wrote {p.relative_to(HERE)}")
    sys.exit(0)
