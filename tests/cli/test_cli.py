"""The `pixelweave` command line, in-process through main() and once as a real subprocess;
results compared with a NumPy box blur computed in the tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.app.cli import main

from tests.conftest import ROOT
from tests.nodes.document_samples import blur_document, node, numpy_box_blur, write_document, write_samples


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write_samples(tmp_path)
    write_document(tmp_path / "gray.json", blur_document("gray.png", "gray", 2))
    write_document(tmp_path / "colour.json", blur_document("colour.png", "colour", 1))
    return tmp_path


def _read_gray(path: Path) -> np.ndarray:
    return iio.imread(path)


def _read_planar(path: Path) -> np.ndarray:
    return np.moveaxis(iio.imread(path), -1, 0)


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("pixelweave: error: "), err
    assert "Traceback" not in err
    return err


def _two_outputs(work: Path) -> Path:
    """input -> blur -> result, and a gain parameter multiplying the input -> scaled."""
    data = blur_document()
    data["nodes"] += [
        node("gain", "scalar_parameter", {"value": 0.5, "minimum": 0.0, "maximum": 2.0, "element": "f32"}),
        node("times", "arithmetic", {"operation": "multiply"}, {"a": "input.out", "b": "gain.out"}),
        node("scaled", "output", {"element": "u8", "scale": True}, {"image": "times.out"}),
    ]
    return write_document(work / "two.json", data)


def _times(image: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(np.rint(image.astype(np.float32) * np.float32(gain)), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------- run


def test_run_writes_the_blurred_sample(work, capsys):
    assert main(["run", str(work / "gray.json"), "--output", str(work / "out.png")]) == 0
    assert "result: wrote" in capsys.readouterr().out
    image = _read_gray(work / "gray.png")
    np.testing.assert_array_equal(_read_gray(work / "out.png"), numpy_box_blur(image, 2))


def test_run_with_an_input_file_given(work):
    other = iio.imread(ROOT / "resources" / "images" / "chelsea.png")[:120, :160]
    iio.imwrite(work / "cat.png", other)
    assert (
        main(["run", str(work / "colour.json"), "--input", f"input={work / 'cat.png'}", "-o", str(work / "o.png")]) == 0
    )
    np.testing.assert_array_equal(_read_planar(work / "o.png"), numpy_box_blur(np.moveaxis(other, -1, 0), 1))


def test_run_with_several_outputs_and_a_parameter(work):
    doc = _two_outputs(work)
    image = _read_gray(work / "gray.png")
    assert main(["run", str(doc), "--param", "gain=1.5", "--output", str(work / "results")]) == 0
    np.testing.assert_array_equal(_read_gray(work / "results" / "result.png"), numpy_box_blur(image, 2))
    got = _read_gray(work / "results" / "scaled.png").astype(int)
    assert np.abs(got - _times(image, 1.5)).max() <= 1  # float32 rounding at ties may differ by one
    assert main(["run", str(doc), "--output", f"scaled={work / 'only.png'}"]) == 0
    assert np.abs(_read_gray(work / "only.png").astype(int) - _times(image, 0.5)).max() <= 1
    assert sorted(p.name for p in work.glob("*.png")) == ["colour.png", "gray.png", "only.png"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--param", "gain"], "--param needs NAME=VALUE, got 'gain'"),
        (["--param", "gain=lots"], "--param gain: 'lots' is not a number"),
        (["--param", "gain=3"], "--param gain=3 is outside its range [0, 2]"),
        (["--param", "offset=1"], "the document has no parameter `offset` (its parameters: gain)"),
        (["--input", "image=x.png"], "the document has no input `image` (its inputs: input)"),
        (["--output", "blurred=x.png"], "--output blurred=x.png: the document has no output `blurred`"),
        (["--output", "result=a.png", "--output", "b"], "give either --output PATH or --output ID=PATH"),
        (["--output", "result=a.txt"], "output 'a.txt' needs an image file extension"),
    ],
)
def test_run_usage_errors(work, capsys, extra, message):
    args = ["run", str(_two_outputs(work)), *extra]
    if "--output" not in extra:
        args += ["--output", str(work / "dir")]
    assert main(args) == 2
    err = _error(capsys)
    assert message in err and err.count("\n") == 1


def _toned(work: Path) -> Path:
    """input -> gamma (`tone`) -> white balance (`wb`, via gray_to_rgb) -> result."""
    data = blur_document()
    data["nodes"] = [n for n in data["nodes"] if n["type"] == "image_input"] + [
        node("tone", "gamma", {"gamma": 2.2}, {"image": "input.out"}),
        node("rgb", "gray_to_rgb", {}, {"image": "tone.out"}),
        node("wb", "colour_matrix", {"matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}, {"image": "rgb.out"}),
        node("result", "output", {"element": "u8", "scale": True}, {"image": "wb.out"}),
    ]
    return write_document(work / "toned.json", data)


def test_run_with_node_parameters_at_run_time(work):
    doc = _toned(work)
    image = _read_gray(work / "gray.png")
    swap = "[[0, 0, 0], [0, 1, 0], [0, 0, 0.5]]"
    assert (
        main(["run", str(doc), "--param", "tone.gamma=1", "--param", f"wb.matrix={swap}", "-o", str(work / "o.png")])
        == 0
    )
    got = _read_planar(work / "o.png").astype(int)
    assert (got[0] == 0).all() and (got[1] == image).all()
    assert np.abs(got[2] - np.rint(image * 0.5)).max() <= 1


def test_inspect_lists_the_runtime_params(work, capsys):
    assert main(["inspect", str(_toned(work))]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "# parameter tone__gamma: float32 = 2.2, range [0.01, 10]" in printed
    assert (
        "# parameter wb__matrix_1_1: float32 = 1.0" in printed
        and "# parameter wb__matrix_2_2: float32 = 1.0" in printed
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--param", "tone.sigma=1"],
            "--param tone.sigma: a gamma node has no parameter `sigma` (run-time ones: gamma)",
        ),
        (["--param", "nope.gamma=1"], "--param nope.gamma: the document has no node `nope`"),
        (["--param", "tone.gamma=fast"], "--param tone.gamma: 'fast' is not a number or a JSON list"),
        (["--param", "tone.gamma=0"], "--param tone.gamma: parameter `gamma` is 0, outside its range [0.01, 10]"),
        (["--param", "wb.matrix=[[1, 0], [0, 1], [1, 1]]"], "--param wb.matrix: the matrix must be 3x3 or 3x4"),
        (["--param", 'input.layout="gray"'], "--param input.layout: `layout` changes the structure of the pipeline"),
        (["--param", "tone__gamma=0.001"], "--param tone__gamma=0.001 is outside its range [0.01, 10]"),
    ],
)
def test_node_parameter_usage_errors(work, capsys, extra, message):
    assert main(["run", str(_toned(work)), *extra, "--output", str(work / "o.png")]) == 2
    assert message in _error(capsys)


def test_several_outputs_need_a_directory(work, capsys):
    (work / "file.png").write_bytes(b"")
    assert main(["run", str(_two_outputs(work)), "--output", str(work / "file.png")]) == 2
    assert "the document has 2 outputs (result, scaled): --output must be a directory" in _error(capsys)


def test_run_refuses_to_overwrite_an_input(work, capsys):
    assert main(["run", str(work / "gray.json"), "--output", str(work / "gray.png")]) == 1
    assert f"refusing to overwrite {work / 'gray.png'}: it is an input of this run" in _error(capsys)
    assert (
        main(
            ["run", str(work / "gray.json"), "--input", f"input={work / 'colour.png'}", "-o", str(work / "colour.png")]
        )
        == 1
    )
    assert _read_planar(work / "colour.png").shape[0] == 3  # untouched


def test_missing_files(work, capsys):
    assert main(["run", str(work / "nothing.json"), "-o", str(work / "o.png")]) == 1
    assert "nothing.json: cannot read the document: No such file or directory" in _error(capsys)
    assert (
        main(["run", str(work / "gray.json"), "--input", f"input={work / 'none.png'}", "-o", str(work / "o.png")]) == 1
    )
    assert "node `input`: cannot read image" in _error(capsys)


def test_malformed_and_invalid_documents(work, capsys):
    (work / "bad.json").write_text('{"format": "pixelweave.pipeline",\n "version": 1,, }')
    assert main(["inspect", str(work / "bad.json")]) == 1
    assert _error(capsys).endswith(
        "bad.json: malformed JSON at line 2, column 15: Expecting property name enclosed in double quotes\n"
    )
    data = blur_document()
    data["nodes"][1]["params"]["radius"] = 0
    data["nodes"][2]["type"] = "outptu"
    write_document(work / "invalid.json", data)
    assert main(["run", str(work / "invalid.json"), "-o", str(work / "o.png")]) == 1
    err = _error(capsys)
    assert err.splitlines() == [
        f"pixelweave: error: {work / 'invalid.json'}: 3 problems:",
        "  - node `blur`: parameter `radius` is 0 px, outside its range [1, 50]",
        "  - node `result`: unknown node type `outptu`; did you mean output?",
        "  - the pipeline has no output node; add an output node and connect it",
    ]


def test_opencl_target_runs_on_the_opencl_device(work, capsys):
    assert main(["run", str(work / "gray.json"), "-o", str(work / "cl.png"), "--target", "opencl"]) == 0
    assert main(["run", str(work / "gray.json"), "-o", str(work / "cpu.png")]) == 0
    np.testing.assert_array_equal(_read_gray(work / "cl.png"), _read_gray(work / "cpu.png"))
    assert main(["bench", str(work / "gray.json"), "--target", "opencl", "--runs", "1"]) == 0
    assert "(target opencl)" in capsys.readouterr().out


def test_unknown_target_is_one_clear_line(work, capsys):
    assert main(["run", str(work / "gray.json"), "-o", str(work / "o.png"), "--target", "cuda"]) == 1
    err = _error(capsys)
    assert err.count("\n") == 1 and "unknown target `cuda`" in err


def test_debug_shows_the_traceback(work, capsys):
    assert main(["run", str(work / "gray.json"), "-o", str(work / "o.png"), "--target", "cuda", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_run_with_generator_nodes_loaded_from_a_file(work, capsys):
    from pixelweave.nodes.node_type import forget_node_type

    from tests.nodes.document_samples import GENERATORS, numpy_soften

    (work / "gens.py").write_text(GENERATORS)
    data = blur_document()
    data["nodes"][1] = node("blur", "generator_soften", {"gain": 2, "offset": 3}, {"input": "input.out"})
    data["nodes"][2]["inputs"] = {"image": "blur.output"}
    doc = write_document(work / "soft.json", data)
    out = work / "soft.png"
    assert main(["run", str(doc), "-o", str(out)]) == 1
    assert "load the Python file that defines the generator" in _error(capsys)
    try:
        assert main(["run", "--nodes", str(work / "gens.py"), str(doc), "--param", "blur.offset=9", "-o", str(out)]) == 0
        assert np.array_equal(_read_gray(out), numpy_soften(_read_gray(work / "gray.png"), 2, 9))
    finally:
        forget_node_type("generator_soften")
        forget_node_type("generator_split_tone")


# ---------------------------------------------------------------------------- help and usage


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("run", "inspect", "bench", "export", "batch"):
        assert command in out


@pytest.mark.parametrize(
    "argv", [[], ["resources/examples/blur.json"], ["--screenshot", "x.png", "resources/examples/blur.json"]]
)
def test_no_command_opens_the_editor(monkeypatch, argv):
    import pixelweave.app.editor.launch

    opened = []
    monkeypatch.setattr(pixelweave.app.editor.launch, "run_editor", lambda args: opened.append(args) or 0)
    assert main(argv) == 0
    assert opened == [argv]


@pytest.mark.parametrize("command", ["run", "inspect", "bench", "export", "batch"])
def test_every_command_has_help(capsys, command):
    assert main([command, "--help"]) == 0
    assert f"usage: pixelweave {command}" in capsys.readouterr().out


def test_usage_errors_are_one_line(capsys):
    assert main(["frobnicate"]) == 2
    assert _error(capsys).count("\n") == 1
    assert main(["bench", "doc.json", "--runs", "0"]) == 2
    assert "argument --runs: needs a positive integer, got 0" in _error(capsys)


# ---------------------------------------------------------------------------- inspect, bench, export


def test_inspect_prints_the_loop_nest(work, capsys):
    data = blur_document(out_schedule={"out": [["split", "y", "y", "yi", 8], ["parallel", "y"]]})
    write_document(work / "sched.json", data)
    assert main(["inspect", str(work / "sched.json")]) == 0
    out = capsys.readouterr().out
    assert "# input input: gray u8, sample gray.png" in out
    assert "# Funcs of blur: bounded, out, rows" in out
    assert "produce result.out:" in out and "parallel y.y:" in out
    assert main(["inspect", str(work / "sched.json"), "--stmt"]) == 0
    assert "result.out" in capsys.readouterr().out


def test_bench_reports_times_and_profile(work, capsys):
    write_document(work / "sched.json", blur_document(blur_schedule={"out": [["compute_root"]]}))
    assert main(["bench", str(work / "sched.json"), "--runs", "3", "--profile"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"compile: [\d.]+ ms", out)
    assert re.search(r"run \(3 runs\): median [\d.]+ ms, min [\d.]+ ms, max [\d.]+ ms, [\d.]+ megapixels/s", out)
    assert f"{200 * 240 / 1e6:.3f} megapixels per run" in out
    profile = out.split("time per node")[1]
    assert re.search(r"\n  result +[\d.]+ ms", profile) and re.search(r"\n  blur +[\d.]+ ms", profile)


def test_export_writes_a_library_callable_from_python(work, capsys):
    out = work / "lib"
    assert main(["export", str(_two_outputs(work)), "--out", str(out), "--name", "demo"]) == 0
    assert {p.name for p in out.iterdir()} >= {"demo.o", "libdemo.so", "demo.h", "README.md"}
    readme = (out / "README.md").read_text()
    assert "| 0 | `input` | input image |" in readme and "| 1 | `gain` | parameter |" in readme
    python = readme.split("```python\n")[1].split("```")[0]
    (out / "example.py").write_text(python)
    image = _read_gray(work / "gray.png")
    np.save(work / "image.npy", image)
    check = (
        "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import example; "
        "a, b = example.run_demo(np.load(sys.argv[2]), 1.25); np.save(sys.argv[3], a); np.save(sys.argv[4], b)"
    )
    subprocess.run(
        [sys.executable, "-c", check, str(out), str(work / "image.npy"), str(work / "a.npy"), str(work / "b.npy")],
        check=True,
    )
    np.testing.assert_array_equal(np.load(work / "a.npy"), numpy_box_blur(image, 2))
    assert np.abs(np.load(work / "b.npy").astype(int) - _times(image, 1.25)).max() <= 1
    c_code = readme.split("```c\n")[1].split("```")[0]
    (out / "main.c").write_text(c_code)
    subprocess.run(["cc", "main.c", "-I.", "-L.", "-ldemo", "-Wl,-rpath,.", "-o", "main"], cwd=out, check=True)
    subprocess.run(["./main"], cwd=out, check=True)


# ---------------------------------------------------------------------------- batch


def _batch_inputs(work: Path) -> tuple[Path, list[np.ndarray]]:
    folder = work / "in"
    folder.mkdir()
    rng = np.random.default_rng(7)
    images = [rng.integers(0, 256, (40 + 8 * k, 50), dtype=np.uint8) for k in range(4)]
    for k, image in enumerate(images):
        iio.imwrite(folder / f"img{k}.png", image)
    (folder / "broken.png").write_bytes(b"not a png at all")
    return folder, images


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # imageio's plugins, trying the broken file
def test_batch_processes_every_file_and_skips_unreadable_ones(work, capsys):
    folder, images = _batch_inputs(work)
    status = main(["batch", str(work / "gray.json"), "--input", f"input={folder}/*.png", "--output-dir",
                   str(work / "out"), "--jobs", "2"])  # fmt: skip
    assert status == 1
    captured = capsys.readouterr()
    assert "processed 4 of 5 files" in captured.out
    assert f"pixelweave: skipped {folder / 'broken.png'}: node `input`: cannot read image" in captured.err
    assert captured.err.startswith("pixelweave: skipped"), "no progress bar when stderr is not a terminal"
    assert captured.err.rstrip().endswith("pixelweave: error: 1 of 5 files could not be processed")
    for k, image in enumerate(images):
        np.testing.assert_array_equal(_read_gray(work / "out" / f"img{k}.png"), numpy_box_blur(image, 2))
    assert not (work / "out" / "broken.png").exists()


def test_batch_refuses_an_output_directory_holding_inputs(work, capsys):
    folder, _ = _batch_inputs(work)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert (
        main(["batch", str(work / "gray.json"), "--input", f"input={folder}/*.png", "--output-dir", str(folder)]) == 1
    )
    assert "refusing to write into" in _error(capsys)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_batch_usage_errors(work, capsys):
    assert main(["batch", str(work / "gray.json"), "--output-dir", str(work / "o")]) == 2
    assert "batch needs --input NAME=GLOB" in _error(capsys)
    assert (
        main(["batch", str(work / "gray.json"), "--input", f"input={work}/none*.png", "--output-dir", str(work / "o")])
        == 1
    )
    assert "no file matches" in _error(capsys)


# ---------------------------------------------------------------------------- a real process


def test_python_dash_m_app_runs(work):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pixelweave", "run", str(work / "gray.json"), "-o", str(work / "p.png")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(_read_gray(work / "p.png"), numpy_box_blur(_read_gray(work / "gray.png"), 2))
    done = subprocess.run(
        [sys.executable, "-m", "pixelweave", "run", str(work / "gray.json")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("pixelweave: error: the following arguments are required: --output")
