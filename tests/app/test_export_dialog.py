"""The export dialog driven like a user: pick the kind, target, name and folder, click Export,
wait for the job; the files exist and the summary lists them with their sizes and the usage
text; OpenCL is shown unavailable with its reason; bad names and failures show in the dialog."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from pixelweave.app.editor.export_dialog import ExportDialog
from pixelweave.nodes.document import Document
from pixelweave.nodes.pipeline_build import build_document
from PySide6 import QtCore

from tests.nodes.document_samples import blur_document, write_samples


@pytest.fixture
def document(tmp_path):
    write_samples(tmp_path)
    doc = Document.from_json(blur_document(radius=1))
    doc.path = tmp_path / "doc.json"
    return doc


@pytest.fixture
def dialog(qtbot, jobs, document):
    widget = ExportDialog(document, jobs)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _click(qtbot, button) -> None:
    """A click on the button's left part (a radio button reacts on its indicator and label only)."""
    position = QtCore.QPoint(min(8, button.width() // 2), button.height() // 2)
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton, pos=position)


def test_export_library_lists_the_files(qtbot, dialog, tmp_path):
    out = tmp_path / "out"
    assert dialog.name.text() == "box_blur"
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "blurry")
    dialog.set_folder(out)
    dialog.target.setCurrentIndex(dialog.target.findData("x86-64-v3"))
    with qtbot.waitSignal(dialog.exported, timeout=60_000) as blocker:
        _click(qtbot, dialog.export_button)
        assert dialog.is_running() and not dialog.export_button.isEnabled()
    assert not dialog.is_running() and dialog.export_button.isEnabled()
    names = ["libblurry.so", "blurry.h", "blurry.o", "README.md"]
    for name in names:
        assert (out / name).is_file()
    rows = dialog.summary_rows()
    assert [r[0] for r in rows] == [str(out / n) for n in names]
    header_size = (out / "blurry.h").stat().st_size
    assert rows[1][1] == f"{header_size / 1024:.1f} KiB" if header_size >= 1024 else f"{header_size} bytes"
    usage = dialog.usage.toPlainText()
    assert "int32_t blurry(const pw_buffer_t *input, pw_buffer_t *result_out);" in usage
    assert "Target x86-64-v3" in usage and blocker.args[0].target == "x86-64-v3"
    qtbot.wait(50)
    dialog.grab().save(str(tmp_path / "export_dialog.png"))


def test_export_python_module_runs(qtbot, dialog, document, tmp_path):
    out = tmp_path / "py"
    dialog.set_folder(out)
    _click(qtbot, dialog.kind_buttons["python"])
    assert dialog.kind() == "python"
    with qtbot.waitSignal(dialog.exported, timeout=60_000):
        _click(qtbot, dialog.export_button)
    assert dialog.summary_rows()[0][0] == str(out / "box_blur.py")
    assert "box_blur.run(input)" in dialog.usage.toPlainText()
    image = (np.arange(24 * 30) % 251).astype(np.uint8).reshape(24, 30)
    np.save(tmp_path / "in.npy", image)
    script = (
        f"import sys, numpy as np; sys.path.insert(0, {str(out)!r}); import box_blur; "
        f"np.save({str(tmp_path / 'out.npy')!r}, box_blur.run(np.load({str(tmp_path / 'in.npy')!r})))"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    expected = build_document(Document.from_json(document.to_json())).run({"input": image})["result"]
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)


def test_opencl_is_listed_but_unavailable(dialog):
    button = dialog.kind_buttons["opencl"]
    assert not button.isEnabled()
    assert button.toolTip().startswith("OpenCL source: not available alone — choose target opencl")
    assert dialog.target.itemData(0) == "host" and dialog.target.findData("x86-64-v4") > 0


def test_bad_name_disables_export_with_a_message(qtbot, dialog):
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "my-lib")
    assert not dialog.export_button.isEnabled()
    assert "not a C identifier" in dialog.name_problem.text() and dialog.name_problem.isVisibleTo(dialog)
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "numpy")
    assert dialog.export_button.isEnabled()
    _click(qtbot, dialog.kind_buttons["python"])
    assert not dialog.export_button.isEnabled() and "cannot name a Python module" in dialog.name_problem.text()


def test_failures_are_shown_in_the_dialog(qtbot, jobs, dialog, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    dialog.set_folder(blocker)
    _click(qtbot, dialog.export_button)
    assert "is a file, not a folder" in dialog.message.text() and not dialog.is_running()

    bad = Document.from_json(blur_document(out_schedule={"out": [["vectorize", "zz", 8]]}))
    bad_dialog = ExportDialog(bad, jobs)
    qtbot.addWidget(bad_dialog)
    bad_dialog.set_folder(tmp_path / "never")
    _click(qtbot, bad_dialog.export_button)
    assert jobs.wait_idle(60_000)
    assert "cannot be exported" in bad_dialog.message.text() and "node `result`" in bad_dialog.message.text()
    assert bad_dialog.progress.format() == "failed" and bad_dialog.export_button.isEnabled()
    assert not (tmp_path / "never").exists()


def test_a_scratch_node_is_left_out_and_the_readme_is_the_command_lines(qtbot, jobs, document, tmp_path):
    from pixelweave.app.cli import main

    document.add_node("gaussian_blur", "scratch", {}, (0, 300))  # dropped in, not connected
    cli_doc = tmp_path / "with_scratch.json"
    document.save(cli_doc)
    assert main(["export", str(cli_doc), "--out", str(tmp_path / "cli"), "--name", "blurry"]) == 0
    dialog = ExportDialog(document, jobs)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.set_folder(tmp_path / "gui")
    dialog.name.setText("blurry")
    with qtbot.waitSignal(dialog.exported, timeout=60_000) as blocker:
        _click(qtbot, dialog.export_button)
    result = blocker.args[0]
    assert result.left_out == ["scratch"]
    assert "left out 1 node not connected to an output: `scratch`" in dialog.message.text()
    assert dialog.message.isVisible() and dialog.usage.toPlainText().startswith("Note: left out 1 node")
    readme = (tmp_path / "gui" / "README.md").read_text()
    assert readme == (tmp_path / "cli" / "README.md").read_text()
    assert "## Not exported" in readme and "`scratch`" in readme
    assert str(tmp_path / "gui" / "README.md") in [row[0] for row in dialog.summary_rows()]
