#!/usr/bin/env bash
# A one-folder PyInstaller bundle of Pixelweave for Linux: OUTDIR/pixelweave/pixelweave runs the
# editor (`pixelweave [DOC.json]`, `--screenshot`) and every command-line tool, without Python.
#
#   packaging/build_linux.sh [OUTDIR]        (default OUTDIR: dist/ at the repository top)
#
# Runs with the Python in $PYTHON (default: python3), which must have Pixelweave's
# dependencies, `build` and `pyinstaller` installed (pip install -e ".[package]").
# The bundle is made from the wheel (the installed `pixelweave` package, as users get it),
# with the example documents and sample images, llvmlite's LLVM library, NodeGraphQt's data
# and Qt's plugins (xcb, offscreen, image formats). Dask (`batch --dask`) is left out.
# The desktop entry, icons and AppStream metadata go to OUTDIR/pixelweave/share/.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="$(realpath -m "${1:-$root/dist}")"
python="${PYTHON:-python3}"
app_id="org.pixelweave.Pixelweave"
work="$(mktemp -d "${TMPDIR:-/tmp}/pixelweave-bundle.XXXXXX")"
trap 'rm -rf "$work"' EXIT

step() { printf '\n== %s\n' "$*" >&2; }

step "the sdist and, from it, the wheel (in $work)"
# A copy of the sources, so that building leaves no egg-info or build/ in the checkout.
mkdir "$work/source"
for name in setup.py pyproject.toml README.md MANIFEST.in pixelweave engine nodes app resources packaging; do
    cp -r "$root/$name" "$work/source/"
done
find "$work/source" -name __pycache__ -prune -exec rm -rf {} +
"$python" -m build --no-isolation --outdir "$work/dist" "$work/source" >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log" >&2; exit 1; }
wheel="$(ls "$work"/dist/pixelweave-*.whl)"

step "installing $(basename "$wheel") into a staging directory"
"$python" -m pip install --quiet --no-deps --no-index --target "$work/site" "$wheel"

step "PyInstaller, one folder, into $out/pixelweave"
# Run from $work, with PYTHONPATH naming the staged package: the checkout's own pixelweave/
# folder (cwd) or an editable install of it must not be what PyInstaller finds, also in the
# subprocesses its hooks run in.
cd "$work"
PYTHONPATH="$work/site" "$python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --onedir --name pixelweave \
    --distpath "$out" --workpath "$work/pyinstaller" --specpath "$work" \
    --paths "$work/site" \
    --collect-submodules pixelweave \
    --collect-data pixelweave \
    --collect-data NodeGraphQt \
    --collect-binaries llvmlite \
    --hidden-import Qt \
    --exclude-module tkinter \
    --exclude-module dask --exclude-module distributed \
    --exclude-module halide --exclude-module cv2 --exclude-module skimage \
    --exclude-module matplotlib --exclude-module IPython --exclude-module scipy --exclude-module pandas \
    --exclude-module yaml --exclude-module OpenGL --exclude-module pyqtgraph.opengl \
    --exclude-module pytest --exclude-module hypothesis \
    "$here/pixelweave_main.py"

step "desktop entry, icons and AppStream metadata into $out/pixelweave/share"
share="$out/pixelweave/share"
mkdir -p "$share/applications" "$share/metainfo" "$share/icons"
cp "$here/$app_id.desktop" "$share/applications/"
cp "$here/$app_id.metainfo.xml" "$share/metainfo/"
cp -r "$here/icons/hicolor" "$share/icons/"

printf '\nbuilt %s (%s)\n' "$out/pixelweave/pixelweave" "$(du -sh "$out/pixelweave" | cut -f1)" >&2
