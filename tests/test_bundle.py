"""packaging/build_linux.sh makes a one-folder PyInstaller bundle that runs without Python or
a virtualenv: it compiles and runs a bundled example with the same result as this checkout,
and takes a real screenshot of the editor under Xvfb. Building takes about a minute, so the
tests are marked slow; CI runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.nodes.pipeline_build import open_document

ROOT = Path(__file__).resolve().parent.parent
APP_ID = "org.pixelweave.Pixelweave"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build_linux.sh"), str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out / "pixelweave"


def _bare_environment(tmp_path: Path) -> dict[str, str]:
    """No Python paths or virtualenv, an empty compile cache and home: only what the bundle holds."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "PIXELWEAVE_CACHE_DIR": str(tmp_path / "cache"),
        "PIXELWEAVE_CONFIG_DIR": str(tmp_path / "config"),
    }


def test_the_bundle_holds_its_examples_and_desktop_files(bundle):
    assert (bundle / "pixelweave").is_file() and os.access(bundle / "pixelweave", os.X_OK)
    examples = bundle / "_internal" / "pixelweave" / "resources" / "examples"
    assert {p.name for p in examples.glob("*.json")} == {p.name for p in (ROOT / "resources/examples").glob("*.json")}
    assert (bundle / "share" / "applications" / f"{APP_ID}.desktop").is_file()
    assert (bundle / "share" / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    assert (bundle / "share" / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png").is_file()


def test_the_bundle_compiles_and_runs_an_example_like_the_checkout(bundle, tmp_path):
    example = bundle / "_internal" / "pixelweave" / "resources" / "examples" / "unsharp_mask.json"
    out = tmp_path / "out.png"
    done = subprocess.run(
        [str(bundle / "pixelweave"), "run", str(example), "--output", str(out)],
        env=_bare_environment(tmp_path), capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "result: wrote" in done.stdout
    assert list((tmp_path / "cache").glob("*.o")), "the bundle compiled nothing: its LLVM did not run"
    built = open_document(ROOT / "resources" / "examples" / "unsharp_mask.json")
    expected = built.run(built.sample_inputs())["result"]
    np.testing.assert_array_equal(np.moveaxis(iio.imread(out), -1, 0), expected)


def test_the_bundle_takes_a_screenshot_of_an_example_under_xvfb(bundle, tmp_path):
    png = tmp_path / "editor.png"
    example = bundle / "_internal" / "pixelweave" / "resources" / "examples" / "unsharp_mask.json"
    command = [
        "xvfb-run", "-a", "-s", "-screen 0 1600x1000x24",
        str(bundle / "pixelweave"), "--screenshot", str(png), str(example),
    ]  # fmt: skip
    env = {**_bare_environment(tmp_path), "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    picture = iio.imread(png)
    assert picture.shape[:2] == (1000, 1600)
    rgb = picture[..., :3].astype(np.int32)
    assert len(np.unique(rgb.reshape(-1, 3)[::7], axis=0)) > 2000, "a blank or flat capture"
    preview = rgb[100:450, 1100:1580]  # the preview dock shows the photograph
    assert preview.std() > 30
    canvas = rgb[150:650, 250:1050]  # the dark graph canvas with lighter nodes on it
    assert canvas.mean() < 90 and canvas.max() > 150
