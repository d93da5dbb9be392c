"""packaging/: the desktop entry and the AppStream metadata pass the freedesktop validators,
name the same application and icon, and the icon's PNG sizes are renderings of its SVG."""

from __future__ import annotations

import configparser
import importlib.util
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
APP_ID = "org.pixelweave.Pixelweave"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
SVG = PACKAGING / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"


def _render_icons():
    spec = importlib.util.spec_from_file_location("render_icons", PACKAGING / "render_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_desktop_entry_is_valid():
    done = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "error" not in done.stdout, done.stdout + done.stderr


def test_the_appstream_metadata_is_valid():
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--no-color", str(METAINFO)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "W:" not in done.stdout and "E:" not in done.stdout, done.stdout


def test_desktop_entry_and_metadata_describe_the_same_application():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(DESKTOP)
    desktop = entry["Desktop Entry"]
    assert desktop["Icon"] == APP_ID
    assert desktop["Exec"].split()[0] == "pixelweave"  # the console script and the bundle's executable
    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("icon") == APP_ID
    assert component.findtext("name") == desktop["Name"]
    assert component.find("provides/binary").text == "pixelweave"
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert component.find("releases/release").get("version") == version


@pytest.mark.parametrize("size", [16, 24, 32, 48, 64, 128, 256, 512])
def test_each_icon_size_is_the_svg_rendered_at_that_size(size, tmp_path):
    render_icons = _render_icons()
    assert size in render_icons.SIZES
    png = render_icons.png_path(size)
    committed = iio.imread(png)
    assert committed.shape == (size, size, 4)
    # transparent corners (a rounded tile), an opaque, colourful middle
    assert committed[0, 0, 3] == 0 and committed[-1, -1, 3] == 0
    middle = committed[size // 4 : 3 * size // 4, size // 4 : 3 * size // 4]
    assert middle[..., 3].min() == 255
    if size >= 32:
        assert len(np.unique(middle[..., :3].reshape(-1, 3), axis=0)) > 8
    fresh = tmp_path / "fresh.png"
    assert render_icons.render(SVG, size).save(str(fresh), "PNG")
    difference = np.abs(iio.imread(fresh).astype(int) - committed.astype(int))
    assert difference.max() <= 2, "the PNG is out of date: run python packaging/render_icons.py"


def test_the_svg_icon_is_square_and_titled():
    svg = ET.parse(SVG).getroot()
    assert svg.get("viewBox") == "0 0 256 256"
    assert svg.findtext("{http://www.w3.org/2000/svg}title") == "Pixelweave"
