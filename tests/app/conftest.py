"""GUI tests run offscreen with pytest-qt; settings go to a temporary folder so tests never
touch the user's recent files or autosaves."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gc

import pytest


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Qt settings and autosaves in a per-test folder."""
    monkeypatch.setenv("PIXELWEAVE_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture(autouse=True)
def collector_left_on():
    """A test that leaves a JobRunner running would leave automatic garbage collection off
    for every later test."""
    yield
    assert gc.isenabled(), "a JobRunner was not shut down: garbage collection is still off"


@pytest.fixture
def jobs():
    """A job runner for a panel under test, shut down afterwards."""
    from pixelweave.app.editor.jobs import JobRunner

    runner = JobRunner()
    yield runner
    runner.shutdown()


@pytest.fixture
def window(qtbot):
    """The editor window, shown; closing it discards unsaved changes without asking."""
    from pixelweave.app.editor.main_window import MainWindow
    from pixelweave.nodes.document import Document

    w = MainWindow(ask_unsaved=lambda _parent, _name: "discard")
    qtbot.addWidget(w)
    w.show()
    yield w
    w.session.load(Document())
    w.jobs.shutdown()
