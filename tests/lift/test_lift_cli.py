"""`pixelweave lift FILE.c --function NAME [--report OUT.json] [-o DOC.json]`: prints the
stages and what was verified and how, writes the same as JSON (--report) or the lifted
function as a pipeline document (-o, see test_lift_document.py), and fails clearly on code
outside the subset."""

from __future__ import annotations

import json
from pathlib import Path

from pixelweave.app.cli import main

CORPUS = Path(__file__).parent / "corpus"


def test_lift_prints_verification_and_writes_json(tmp_path, capsys):
    out = tmp_path / "threshold.json"
    status = main(["lift", str(CORPUS / "point.c"), "--function", "threshold", "--trials", "3", "--report", str(out)])
    printed = capsys.readouterr().out
    assert status == 0
    assert "differential: held on 3 random cases" in printed
    assert "z3 proof: held" in printed
    data = json.loads(out.read_text())
    assert data["format"] == "pixelweave.lifted" and data["function"] == "threshold"
    assert data["verification"]["differential"]["held"] is True
    assert data["verification"]["z3"]["held"] is True
    assert [p["name"] for p in data["parameters"]][:2] == ["src", "dst"]
    assert any("select" in s["definition"] for s in data["stages"])


def test_lift_reports_a_reduction_as_tested_not_proved(capsys):
    status = main(["lift", str(CORPUS / "pipelines.c"), "--function", "histogram", "--trials", "2"])
    printed = capsys.readouterr().out
    assert status == 0
    assert "differential: held" in printed and "z3 proof: not attempted" in printed


def test_lift_refusal_names_file_line_and_construct(capsys):
    status = main(["lift", str(CORPUS / "pipelines.c"), "--function", "prefix_sum_rows"])
    err = capsys.readouterr().err
    assert status == 1
    assert "pipelines.c:145: cannot lift variable `run`" in err


def test_lift_needs_a_c_file(capsys):
    assert main(["lift", "prototype.txt", "--function", "f"]) == 2
    assert "lift takes a C file (.c) or a Python prototype (.py)" in capsys.readouterr().err
