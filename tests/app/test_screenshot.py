"""`pixelweave --screenshot PNG DOC` in a real X window on a virtual screen (Xvfb): the picture
is a real capture of the editor with the document, its loop nest and its preview."""

import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def test_screenshot_of_the_editor_under_xvfb(tmp_path):
    png = tmp_path / "editor.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "PIXELWEAVE_CONFIG_DIR": str(tmp_path / "config")}
    command = [
        "xvfb-run", "-a", "-s", "-screen 0 1600x1000x24",
        sys.executable, "-m", "pixelweave", "--screenshot", str(png), str(ROOT / "resources/examples/unsharp_mask.json"),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    picture = iio.imread(png)
    assert picture.shape[:2] == (1000, 1600)
    rgb = picture[..., :3].astype(np.int32)
    colours = np.unique(rgb.reshape(-1, 3)[::7], axis=0)
    assert len(colours) > 2000, "a blank or flat capture"
    # the preview dock (top right) shows the photograph: many colours, not a flat panel
    preview = rgb[100:450, 1100:1580]
    assert preview.std() > 30
    # the canvas (centre) is the dark graph background with lighter nodes on it
    canvas = rgb[150:650, 250:1050]
    assert canvas.mean() < 90 and canvas.max() > 150


def test_the_command_line_tools_never_import_qt():
    code = (
        "import sys, pixelweave.app.cli\n"
        "pixelweave.app.cli.main(['inspect', 'resources/examples/blur.json'])\n"
        "assert not any(m.startswith(('PySide6', 'NodeGraphQt')) for m in sys.modules), 'Qt imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_the_editor_without_a_display_says_how_to_proceed(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "pixelweave"], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert "no display" in done.stderr and "xvfb-run" in done.stderr
