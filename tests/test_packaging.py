"""The distribution installs one import name, `pixelweave`, and nothing else.

`python -m build` makes the sdist from a copy of the source tree and the wheel from the
sdist (so the sdist must hold everything the wheel needs). The wheel is installed into a fresh virtualenv
beside two unrelated packages named `app` and `nodes`, which must neither break Pixelweave
nor be broken by it. The fresh environment borrows this environment's third-party packages
through a .pth file, so the test needs no network.
"""

import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("engine", "nodes", "app", "pixelweave", "resources", "packaging", "setup.py", "pyproject.toml", "README.md",
           "MANIFEST.in")
BARE_IMPORT = re.compile(r"^\s*(from|import)\s+(engine|nodes|app)\b", re.M)


def test_no_source_file_imports_the_bare_folder_names():
    offenders = []
    for folder in ("engine", "nodes", "app", "pixelweave", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if BARE_IMPORT.search(path.read_text()):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"import these through `pixelweave.`: {offenders}"


def test_import_pixelweave_gives_the_algorithm_language():
    import pixelweave.engine

    import pixelweave as pw

    assert pw.Func is pixelweave.engine.Func
    assert set(pixelweave.engine.__all__) <= set(dir(pw))


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel built from it, as `python -m build` makes them."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, source / name)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Building wheel from sdist" in done.stdout + done.stderr, done.stdout[-2000:]
    return out


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    (built,) = dist.glob("pixelweave-*.whl")
    return built


def test_the_sdist_holds_the_sources_the_wheel_is_built_from(dist):
    (sdist,) = dist.glob("pixelweave-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for required in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in", "pixelweave/__init__.py",
                     "engine/__init__.py", "engine/runtime/jit.py", "nodes/catalogue/__init__.py", "app/cli.py",
                     "app/editor/launch.py", "resources/examples/unsharp_mask.json", "resources/images/camera.png",
                     "packaging/build_linux.sh", "packaging/org.pixelweave.Pixelweave.desktop",
                     "packaging/org.pixelweave.Pixelweave.metainfo.xml",
                     "packaging/icons/hicolor/scalable/apps/org.pixelweave.Pixelweave.svg",
                     "packaging/icons/hicolor/256x256/apps/org.pixelweave.Pixelweave.png"):  # fmt: skip
        assert required in names, f"{required} is missing from the sdist"
    python_sources = {str(p.relative_to(ROOT)) for f in ("engine", "nodes", "app") for p in (ROOT / f).rglob("*.py")}
    assert python_sources <= names, sorted(python_sources - names)[:5]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith(("tests/", ".venv/", "benchmarks/"))]


def _fresh_environment(where: Path) -> Path:
    """A virtualenv whose only link to this one is a .pth file naming our site-packages,
    which gives it numpy, llvmlite and the rest but not this checkout's editable finder
    (a .pth inside a directory added by a .pth is not processed)."""
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    target = Path(subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    borrowed = [p for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"]] if Path(p).is_dir()]
    (target / "borrowed_dependencies.pth").write_text("\n".join(dict.fromkeys(borrowed)) + "\n")
    return python


def test_wheel_installs_only_pixelweave_and_works_beside_app_and_nodes(wheel, tmp_path):
    python = _fresh_environment(tmp_path / "env")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(tmp_path / "site"), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    top_level = sorted(p.name for p in (tmp_path / "site").iterdir() if not p.name.endswith((".dist-info", "bin")))
    assert top_level == ["pixelweave"]

    # Two unrelated packages with the generic names the folders have in the source tree.
    others = tmp_path / "others"
    for name in ("app", "nodes", "engine"):
        (others / name).mkdir(parents=True)
        (others / name / "__init__.py").write_text(f"WHO = 'the other {name}'\n")
    script = (
        "import importlib, pkgutil, numpy as np\n"
        "import app, nodes, engine\n"
        "import pixelweave as pw\n"
        "from pixelweave.nodes.pipeline_build import open_document\n"
        "from pixelweave.nodes.document import IMAGES\n"
        "assert app.WHO == 'the other app' and nodes.WHO == 'the other nodes' and engine.WHO == 'the other engine'\n"
        "assert pw.__file__.startswith(SITE), pw.__file__\n"
        "for info in pkgutil.walk_packages(pw.__path__, 'pixelweave.'):\n"
        "    if info.name != 'pixelweave.__main__' and not info.name.endswith('.__main__'):\n"
        "        importlib.import_module(info.name)\n"
        "x = pw.Var('x'); f = pw.Func('f'); f[x] = x * 2\n"
        "assert list(pw.Pipeline(f).realize([4])) == [0, 2, 4, 6]\n"
        "assert (IMAGES / 'camera.png').is_file(), IMAGES\n"
        "from pixelweave.app.editor.launch import ICON\n"
        "assert ICON.is_file() and ICON.read_text().lstrip().startswith('<svg'), ICON\n"
        "built = open_document(IMAGES.parent / 'examples' / 'blur.json')\n"
        "assert 'produce' in built.loop_nest()\n"
        "print('ok')\n"
    )
    env = {"PYTHONPATH": f"{others}{':'}{tmp_path / 'site'}", "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"}
    ran = subprocess.run(
        [str(python), "-c", f"SITE = {str(tmp_path / 'site')!r}\n" + script],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert ran.stdout.strip().endswith("ok")
