"""File > Import Function…: a C function or Python prototype lifted and verified in the
background, opened as an unsaved document with the verification on its stages; a function
outside the subset is reported in the log with its file, line and construct; a document
written by `pixelweave lift -o` opens like any other."""

from pathlib import Path

from pixelweave.app.cli import main
from PySide6 import QtWidgets

CORPUS = Path(__file__).parent.parent / "lift" / "corpus"


def test_import_function_opens_the_lifted_document_with_its_verification(window, monkeypatch):
    offered: list[list[str]] = []
    monkeypatch.setattr(
        QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(CORPUS / "point.c"), "C files (*.c)")
    )

    def pick(_parent, _title, _label, names, *_rest):
        offered.append(list(names))
        return "threshold", True

    monkeypatch.setattr(QtWidgets.QInputDialog, "getItem", pick)
    window.import_function_dialog()
    assert window.jobs.wait_idle(120_000)
    assert "threshold" in offered[0] and "float_gain" in offered[0]
    doc = window.session.document
    assert doc.name == "threshold" and window.session.dirty and doc.path is None
    stages = doc.nodes_of_type("lifted_stage")
    assert stages and doc.group("threshold").nodes == [n.id for n in stages]
    assert "differential: held" in stages[0].params["verification"]
    assert stages[0].params["source"].startswith("point.c:")
    assert any("z3 proof: held" in m for m in window.log.messages("info"))
    window.canvas.select([stages[0].id])
    assert window.wait_idle()
    assert "differential: held" in window.properties.editor("verification").value()
    assert "u8" in window.properties.editor("definition").field.toPlainText()
    assert not window.log.messages("error")


def test_a_function_outside_the_subset_is_reported_with_its_line(window):
    before = window.session.document
    window.import_function(CORPUS / "pipelines.c", "prefix_sum_rows")
    assert window.jobs.wait_idle(120_000)
    assert "pipelines.c:145: cannot lift variable `run`" in window.log.messages("error")[-1]
    assert window.session.document is before


def test_a_document_written_by_the_command_line_opens(window, tmp_path, capsys):
    out = tmp_path / "gray.json"
    assert main(["lift", str(CORPUS / "point.c"), "--function", "rgba_to_gray", "--trials", "1", "-o", str(out)]) == 0
    capsys.readouterr()
    assert window.open_path(out)
    assert window.wait_idle()
    assert window.session.document.nodes_of_type("lifted_stage")
    assert not window.log.messages("error")
