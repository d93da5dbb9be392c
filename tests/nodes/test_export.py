"""Exporting documents: the native library's usage text holds a C program that compiles and
runs, the generated Python module imported in a fresh process gives what `built.run` gives
(several outputs, a parameter, a halved size), and the lists of kinds, targets and names."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pixelweave.app.cli import main
from pixelweave.nodes.document import Document
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.export import (
    build_for_export,
    default_export_name,
    export_kinds,
    export_library,
    export_name_problem,
    export_python_module,
    export_targets,
)
from pixelweave.nodes.pipeline_build import build_document

from tests.nodes.document_samples import blur_document, node, write_document, write_samples


def _document(folder: Path) -> dict:
    """input -> blur -> result; input * gain -> scaled; input -> downsample2x -> small."""
    data = blur_document(radius=1)
    data["nodes"] += [
        node("gain", "scalar_parameter", {"value": 0.5, "minimum": 0.0, "maximum": 2.0, "element": "f32"}),
        node("times", "arithmetic", {"operation": "multiply"}, {"a": "input.out", "b": "gain.out"}),
        node("scaled", "output", {"element": "u8", "scale": True}, {"image": "times.out"}),
        node("half", "downsample2x", {"boundary": "clamp"}, {"image": "input.out"}),
        node("small", "output", {"element": "u8", "scale": True}, {"image": "half.out"}),
    ]
    return data


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    write_samples(folder)
    doc = Document.from_json(_document(folder))
    doc.path = folder / "doc.json"
    return build_document(doc)


def test_library_files_and_a_c_program_from_the_usage_text(built, tmp_path):
    result = export_library(built, tmp_path, "demo", "x86-64-v3")
    assert [p.name for p in result.files] == ["libdemo.so", "demo.h", "demo.o"]
    assert all(size > 0 for _, size in result.file_sizes())
    assert "int32_t demo(const pw_buffer_t *input, float gain, pw_buffer_t *result_out" in result.usage
    assert "x86-64-v3" in result.usage
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    program = result.usage.split("Calling it from C:\n\n")[1].split("\n\nBuild:")[0]
    (tmp_path / "main.c").write_text(textwrap.dedent(program))
    subprocess.run(["cc", "main.c", "-I.", "-L.", "-ldemo", "-Wl,-rpath,.", "-o", "main"], cwd=tmp_path, check=True)
    subprocess.run(["./main"], cwd=tmp_path, check=True, timeout=60)


def _run_module(folder: Path, name: str, arrays: dict[str, np.ndarray], call: str) -> dict[str, np.ndarray]:
    """Imports folder/name.py in a fresh interpreter, evaluates call, returns the arrays it saved."""
    for key, array in arrays.items():
        np.save(folder / f"arg_{key}.npy", array)
    script = textwrap.dedent(
        f"""
        import sys, json, numpy as np
        sys.path.insert(0, {str(folder)!r})
        import {name}
        args = {{k: np.load({str(folder)!r} + f"/arg_{{k}}.npy") for k in {list(arrays)!r}}}
        outputs = {call}
        for key, array in zip({name}.OUTPUTS, outputs if isinstance(outputs, tuple) else (outputs,)):
            np.save({str(folder)!r} + f"/out_{{key}}.npy", array)
        print(json.dumps(list({name}.OUTPUTS)))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return {key: np.load(folder / f"out_{key}.npy") for key in json.loads(done.stdout)}


def test_python_module_matches_built_run(built, tmp_path):
    result = export_python_module(built, tmp_path, "demo_module", "host")
    assert [p.name for p in result.files] == ["demo_module.py", "libdemo_module.so", "demo_module.h", "demo_module.o"]
    assert "demo_module.run(input, gain=0.5)" in result.usage
    image = built.sample_inputs()["input"][:37, :51].copy()
    outputs = _run_module(tmp_path, "demo_module", {"image": image}, "demo_module.run(args['image'], gain=1.25)")
    expected = built.run({"input": image}, {"gain": 1.25})
    assert set(outputs) == {"result", "scaled", "small"}
    assert outputs["small"].shape == (19, 26)
    for key in ("result", "scaled", "small"):
        np.testing.assert_array_equal(outputs[key], expected[key])
    # independent check of one output: the input times the gain, rounded and clamped
    np.testing.assert_array_equal(outputs["scaled"], np.clip(np.rint(image * np.float32(1.25)), 0, 255))


def test_python_module_refuses_a_wrong_dtype(built, tmp_path):
    export_python_module(built, tmp_path, "strict", "host")
    script = (
        f"import sys, numpy as np; sys.path.insert(0, {str(tmp_path)!r}); import strict\n"
        "try:\n    strict.run(np.zeros((8, 8), np.float32))\nexcept TypeError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert "input must be a 2-dimensional uint8 array, got 2 dimension(s) of float32" in done.stdout


def test_export_kinds_and_targets():
    kinds = {k.key: k for k in export_kinds()}
    assert kinds["library"].available and kinds["python"].available
    assert not kinds["opencl"].available
    assert kinds["opencl"].reason.startswith("OpenCL source: not available alone — choose target opencl")
    targets = [t for t, _ in export_targets()]
    assert targets[0] == "host" and {"x86-64", "x86-64-v3", "x86-64-v4", "opencl"} <= set(targets)


def test_names():
    assert default_export_name("Unsharp mask") == "unsharp_mask"
    assert default_export_name("3D look-up!") == "pw_3d_look_up"
    assert export_name_problem("good_name") is None
    assert "not a C identifier" in export_name_problem("my-lib")
    assert "not a C identifier" in export_name_problem("9lives")
    assert "give a name" in export_name_problem("")
    assert export_name_problem("class") is None
    assert "cannot name a Python module" in export_name_problem("class", "python")
    assert "cannot name a Python module" in export_name_problem("numpy", "python")


def test_bad_name_and_target_are_refused_before_compiling(built, tmp_path):
    with pytest.raises(NodeError, match="not a C identifier"):
        export_library(built, tmp_path, "bad name", "host")
    with pytest.raises(NodeError, match="unknown target `arm`; legal targets are host"):
        export_library(built, tmp_path, "fine", "arm")
    assert list(tmp_path.iterdir()) == []


def test_cli_export_with_python_module(tmp_path, capsys):
    write_samples(tmp_path)
    doc = write_document(tmp_path / "gray.json", blur_document())
    out = tmp_path / "lib"
    assert main(["export", str(doc), "--out", str(out), "--name", "blurry", "--python"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"wrote {out / n}" for n in ("blurry.py", "libblurry.so", "blurry.h", "blurry.o", "README.md")]
    image = np.arange(30 * 40, dtype=np.uint8).reshape(30, 40)
    outputs = _run_module(out, "blurry", {"image": image}, "blurry.run(args['image'])")
    np.testing.assert_array_equal(outputs["result"], build_document(Document.from_json(blur_document())).run(
        {"input": image})["result"])  # fmt: skip
    assert main(["export", str(doc), "--out", str(out), "--name", "numpy", "--python"]) == 2
    assert "--name: 'numpy' cannot name a Python module" in capsys.readouterr().err


def _toned_document() -> dict:
    """input -> gamma (`tone`, a run-time parameter) -> threshold (`cut`) -> result."""
    data = blur_document(radius=1)
    data["nodes"] = [n for n in data["nodes"] if n["type"] == "image_input"] + [
        node("tone", "gamma", {"gamma": 2.2}, {"image": "input.out"}),
        node("cut", "threshold", {"threshold": 0.5}, {"image": "tone.out"}),
        node("result", "output", {"element": "u8", "scale": True}, {"image": "cut.out"}),
    ]
    return data


def test_runtime_parameters_are_arguments_with_the_documents_values_as_defaults(tmp_path):
    write_samples(tmp_path)
    doc = Document.from_json(_toned_document())
    doc.path = tmp_path / "doc.json"
    built = build_document(doc)
    library = export_library(built, tmp_path / "c", "toned", "host")
    assert "int32_t toned(const pw_buffer_t *input, float tone__gamma, float cut__threshold, pw_buffer_t *" in (
        library.usage
    )
    assert "tone__gamma (float, default 2.2)" in library.usage
    result = export_python_module(built, tmp_path / "py", "toned_module", "host")
    assert "toned_module.run(input, tone__gamma=2.2, cut__threshold=0.5)" in result.usage
    image = built.sample_inputs()["input"][:24, :32].copy()
    # the defaults are the document's values; new values agree with a build holding them as constants
    default = _run_module(tmp_path / "py", "toned_module", {"image": image}, "toned_module.run(args['image'])")
    np.testing.assert_array_equal(default["result"], built.run({"input": image})["result"])
    changed = _run_module(
        tmp_path / "py",
        "toned_module",
        {"image": image},
        "toned_module.run(args['image'], tone__gamma=1.0, cut__threshold=0.3)",
    )
    edited = Document.from_json(_toned_document())
    edited.set_param("tone", "gamma", 1.0)
    edited.set_param("cut", "threshold", 0.3)
    constant = build_document(edited, runtime_params=False).run({"input": image})["result"]
    np.testing.assert_array_equal(changed["result"], constant)
    np.testing.assert_array_equal(changed["result"], np.where(image >= 77, 255, 0))  # ceil(0.3 * 255)
    assert not np.array_equal(changed["result"], default["result"])


def test_cli_export_param_sets_the_documented_default(tmp_path, capsys):
    write_samples(tmp_path)
    doc = write_document(tmp_path / "toned.json", _toned_document())
    out = tmp_path / "lib"
    assert (
        main(["export", str(doc), "--out", str(out), "--name", "toned", "--python", "--param", "tone.gamma=1.5"]) == 0
    )
    assert "def run(input, tone__gamma=1.5, cut__threshold=0.5)" in (out / "toned.py").read_text()
    assert main(["export", str(doc), "--out", str(out), "--param", "tone.gamma=99"]) == 2
    assert "--param tone.gamma: parameter `gamma` is 99, outside its range [0.01, 10]" in capsys.readouterr().err


def test_what_the_outputs_do_not_read_is_left_out_and_named(tmp_path, capsys):
    write_samples(tmp_path)
    data = blur_document()
    data["nodes"].append(node("scratch", "gaussian_blur", {}))  # not connected to anything
    data["nodes"].append(node("side", "box_blur", {}, {"image": "input.out"}))  # a branch no output reads
    doc = write_document(tmp_path / "scratch.json", data)
    with pytest.raises(Exception, match="scratch"):  # the whole document does not build
        build_document(Document.from_json(data))
    built, left_out = build_for_export(Document.from_json(data))
    assert left_out == ["scratch", "side"] and built.output_ids == ["result"]
    out = tmp_path / "lib"
    assert main(["export", str(doc), "--out", str(out), "--name", "blurry"]) == 0
    captured = capsys.readouterr()
    assert "left out 2 nodes not connected to an output: `scratch`, `side`" in captured.err
    assert f"wrote {out / 'README.md'}" in captured.out and (out / "libblurry.so").is_file()
    empty = Document("nothing")
    empty.add_node("image_input", "photo", {"sample": "gray.png"}, (0, 0))
    with pytest.raises(NodeError, match="no output node, so there is nothing to export"):
        build_for_export(empty)
