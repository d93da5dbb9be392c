"""The editor's start-up: the window carries the application icon, from the package itself
when no icon theme has it (a pip install has no desktop integration)."""

from pathlib import Path

from pixelweave.app.editor.launch import APP_ID, ICON, window_icon

PACKAGING_ICON = Path(__file__).resolve().parents[2] / "packaging" / "icons" / "hicolor" / "scalable" / "apps"


def test_the_window_icon_renders_from_the_packaged_svg(qapp):
    assert ICON.read_bytes() == (PACKAGING_ICON / f"{APP_ID}.svg").read_bytes()
    icon = window_icon()
    assert not icon.isNull()
    image = icon.pixmap(48, 48).toImage()
    assert image.width() == 48 and image.height() == 48
    colours = {image.pixel(x, y) for x in range(0, 48, 4) for y in range(0, 48, 4)}
    assert len(colours) > 3  # a drawing, not an empty or flat square
