"""`pixelweave schedule DOC [--write]`: prints the automatic schedule per node with the
time before and after, and with --write saves it into the document, which then still
computes the same image."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from pixelweave.app.cli import main
from pixelweave.nodes.pipeline_build import open_document

from tests.nodes.document_samples import blur_document, numpy_box_blur, write_document, write_samples


def _document(tmp_path: Path) -> tuple[Path, np.ndarray]:
    samples = write_samples(tmp_path)
    path = write_document(tmp_path / "blur.json", blur_document("gray.png", "gray", 2))
    return path, samples["gray"]


def test_schedule_prints_the_schedule_and_times_without_changing_the_document(tmp_path, capsys):
    path, _ = _document(tmp_path)
    before = path.read_text()
    assert main(["schedule", str(path), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "# result\nout." in out and ".parallel(y)" in out and ".vectorize(x, " in out
    assert re.search(r"# blur\n.*compute_at\(result\.out, yi\)", out)  # the blur's rows slide down the strips
    assert re.search(r"analytic schedule chosen in [\d.]+ s; time [\d.]+ ms with the document's schedule, "
                     r"[\d.]+ ms with this one \([\d.]+x\)", out)  # fmt: skip
    assert path.read_text() == before


def test_schedule_write_saves_a_schedule_that_computes_the_same_image(tmp_path, capsys):
    path, gray = _document(tmp_path)
    assert main(["schedule", str(path), "--runs", "1", "--write"]) == 0
    assert f"written into {path}" in capsys.readouterr().out
    nodes = {n["id"]: n for n in json.loads(path.read_text())["nodes"]}
    assert any(d[0] == "parallel" for d in nodes["result"]["schedule"]["out"])
    assert any(d[0] == "compute_at" for directives in nodes["blur"]["schedule"].values() for d in directives)
    built = open_document(path)
    out = built.run({"input": gray})["result"]
    np.testing.assert_array_equal(out, numpy_box_blur(gray, 2))


def test_schedule_of_a_missing_document_is_one_line_error(tmp_path, capsys):
    assert main(["schedule", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pixelweave: error: ") and "Traceback" not in err


def test_schedule_tune_searches_on_the_documents_images(tmp_path, capsys):
    path, gray = _document(tmp_path)
    assert main(["schedule", str(path), "--runs", "1", "--tune", "2", "--write"]) == 0
    captured = capsys.readouterr()
    assert "tune schedule chosen in" in captured.out
    assert re.search(r"tuning: \d+ candidates tried, best [\d.]+ ms", captured.err)
    out = open_document(path).run({"input": gray})["result"]
    np.testing.assert_array_equal(out, numpy_box_blur(gray, 2))


def test_schedule_tune_needs_positive_seconds(tmp_path, capsys):
    path, _ = _document(tmp_path)
    assert main(["schedule", str(path), "--tune", "0"]) == 2
    assert "positive number of seconds" in capsys.readouterr().err
