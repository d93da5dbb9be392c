"""Long command-line work (batch, bench, export) draws a progress bar on a terminal and writes
nothing extra when stderr is piped or captured."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.app.cli import main

from tests.conftest import ROOT
from tests.nodes.document_samples import blur_document, write_document, write_samples


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write_samples(tmp_path)
    write_document(tmp_path / "gray.json", blur_document("gray.png", "gray", 1))
    folder = tmp_path / "in"
    folder.mkdir()
    for k in range(5):
        iio.imwrite(folder / f"img{k}.png", np.full((20, 30), 40 * k, dtype=np.uint8))
    return tmp_path


def _commands(work: Path) -> dict[str, list[str]]:
    doc = str(work / "gray.json")
    return {
        "batch": ["batch", doc, "--input", f"input={work}/in/*.png", "--output-dir", str(work / "out")],
        "bench": ["bench", doc, "--runs", "3"],
        "export": ["export", doc, "--out", str(work / "lib")],
    }


@pytest.mark.parametrize(("command", "total"), [("batch", 5), ("bench", 3), ("export", 2)])
def test_a_progress_bar_on_a_terminal(work, monkeypatch, capsys, command, total):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(_commands(work)[command]) == 0
    drawn = terminal.getvalue()
    assert f"{command}: " in drawn and f"{total}/{total}" in drawn and "100%" in drawn
    assert "\r" in drawn  # redrawn in place, not one line per step
    assert capsys.readouterr().out  # the results still go to stdout


@pytest.mark.parametrize("command", ["batch", "bench", "export"])
def test_quiet_when_stderr_is_not_a_terminal(work, capsys, command):
    assert main(_commands(work)[command]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out


def test_a_real_terminal_and_a_real_pipe(work):
    """The same command in a subprocess: stderr on a pseudo-terminal shows the bar, on a pipe nothing."""
    command = [sys.executable, "-m", "pixelweave", *_commands(work)["batch"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    piped = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty is 0 columns wide
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, timeout=120, env=env, cwd=ROOT)
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other side is closed and everything was read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert b"batch: " in drawn and b"5/5" in drawn and b"\r" in drawn
    assert b"processed 5 of 5 files" in done.stdout
