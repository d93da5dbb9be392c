"""Starting the editor: `pixelweave [DOC]` opens the window, `pixelweave --screenshot PNG DOC`
renders it with the document loaded and its preview computed, saves the picture and exits
(used to check what a person sees, on a real or virtual screen)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pixelweave.app.editor.main_window import MainWindow
from pixelweave.engine.runtime.compile_worker import start_compile_worker
from pixelweave.nodes.node_type import node_type
from PySide6 import QtCore, QtGui, QtWidgets

APP_ID = "org.pixelweave.Pixelweave"  # the desktop entry's and the icon theme's name
ICON = Path(__file__).resolve().parents[2] / "resources" / "icons" / f"{APP_ID}.svg"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pixelweave", description="Open the Pixelweave editor.")
    p.add_argument("document", nargs="?", help="a pipeline document (.json) to open")
    p.add_argument("--screenshot", metavar="PNG", help="render the window to PNG once the preview is ready, then exit")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot (default 1600x1000)")
    p.add_argument(
        "--nodes",
        action="append",
        default=[],
        metavar="FILE.py",
        help="load the @pixelweave.generator classes of a Python file as node types (runs its code); repeatable",
    )
    return p


def window_icon() -> QtGui.QIcon:
    """The application icon: the installed theme's (a desktop install puts it there), else the
    SVG shipped inside the package."""
    return QtGui.QIcon.fromTheme(APP_ID, QtGui.QIcon(str(ICON)))


def _offer_recovery(window: MainWindow) -> None:
    """One question at start-up when an earlier editor left unsaved work behind."""
    leftovers = window.autosave.leftovers()
    if not leftovers:
        return
    buttons = QtWidgets.QMessageBox.StandardButton
    answer = QtWidgets.QMessageBox.question(
        window,
        "Recover unsaved work",
        "An earlier Pixelweave session ended without saving:\n"
        f"{window.autosave.describe(leftovers[0])}\n\nRecover it?",
        buttons.Yes | buttons.No,
        buttons.Yes,
    )
    if answer == buttons.Yes:
        window.recover(leftovers[0])
    else:
        for path in leftovers:
            window.autosave.remove(path)


def screenshot(window: MainWindow, path: Path) -> None:
    """Selects the first output node, waits for the preview and inspector, saves the window."""
    doc = window.session.document
    outputs = [n.id for n in doc.nodes if getattr(node_type(n.type), "is_output", False)]
    if outputs:
        window.canvas.select([outputs[0]])
    window.wait_idle()
    window.canvas.frame_all(readable=True)
    app = QtWidgets.QApplication.instance()
    for _ in range(10):
        app.processEvents()
        QtCore.QThread.msleep(20)
    screen = window.screen()
    picture = screen.grabWindow(window.winId()) if QtWidgets.QApplication.platformName() == "xcb" else None
    if picture is None or picture.isNull():
        picture = window.grab()
    if not picture.save(str(path)):
        raise OSError(f"could not write the screenshot to {path}")


def _has_display() -> bool:
    """Whether Qt can open a window (Qt aborts the process when it cannot, so ask first)."""
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_editor(argv: list[str]) -> int:
    """The editor's main(): returns the process exit status."""
    args = parser().parse_args(argv)
    if not _has_display():
        if not args.screenshot:
            print(
                "pixelweave: no display to open the editor on (DISPLAY is not set). Run it in a desktop session, "
                "under `xvfb-run`, or use the command-line tools: `pixelweave --help`.",
                file=sys.stderr,
            )
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    app.setApplicationName("Pixelweave")
    app.setOrganizationName("Pixelweave")
    app.setDesktopFileName(APP_ID)  # Wayland and task bars match the window to the desktop entry
    app.setWindowIcon(window_icon())
    if not args.screenshot:
        # The fused pipeline's LLVM work splits across two processes; starting the worker
        # now, in the background, lets the first large compile use it.
        start_compile_worker()
    window = MainWindow()
    if args.screenshot:
        width, _, height = args.size.partition("x")
        window.resize(int(width), int(height))
    window.show()
    loaded = all(window.load_generator_nodes(path) for path in args.nodes)
    opened = loaded and (not args.document or window.open_path(args.document))
    if not opened and args.screenshot:
        problems = window.log.messages("error")
        print(f"pixelweave: {problems[-1] if problems else f'cannot open {args.document}'}", file=sys.stderr)
        return 1
    if args.screenshot:
        screenshot(window, Path(args.screenshot))
        window.session.load(window.session.document)  # nothing to ask about on close
        window.close()
        return 0
    _offer_recovery(window)
    return app.exec()
