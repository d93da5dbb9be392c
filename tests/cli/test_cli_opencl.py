"""`pixelweave run/bench/inspect --target opencl` build the document with its OpenCL
schedules and run it on the OpenCL device (pocl's CPU device here), `export --target opencl`
writes a library and module that do the same; without a device, one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.app.cli import main

from tests.conftest import ROOT
from tests.nodes.document_samples import blur_document, numpy_box_blur, write_document, write_samples

TILE = ["gpu_tile", "x", "y", "xo", "yo", "xi", "yi", 16, 16]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write_samples(tmp_path)
    data = blur_document("gray.png", "gray", 2, out_schedule={"out": [["split", "y", "y", "yi", 8], ["parallel", "y"]]})
    for n in data["nodes"]:
        if n["id"] == "result":
            n["schedules"] = {"opencl": {"out": [TILE]}}
        if n["id"] == "blur":
            n["schedules"] = {"opencl": {"rows": [["compute_at", "result.out", "xo"], ["gpu_threads", "x", "y"]]}}
    write_document(tmp_path / "gpu.json", data)
    return tmp_path


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("pixelweave: error: ") and "Traceback" not in err, err
    return err


def test_inspect_shows_the_opencl_schedule_for_the_opencl_target(work, capsys):
    assert main(["inspect", str(work / "gpu.json"), "--target", "opencl"]) == 0
    gpu = capsys.readouterr().out
    assert "gpu_block y.yo" in gpu and "gpu_thread x.xi" in gpu and "produce blur.rows" in gpu
    assert main(["inspect", str(work / "gpu.json")]) == 0
    cpu = capsys.readouterr().out
    assert "gpu_" not in cpu and "parallel y" in cpu


def test_run_and_bench_on_the_opencl_device(work, capsys):
    assert main(["run", str(work / "gpu.json"), "-o", str(work / "cl.png"), "--target", "opencl"]) == 0
    image = iio.imread(work / "gray.png")
    np.testing.assert_array_equal(iio.imread(work / "cl.png"), numpy_box_blur(image, 2))
    assert main(["bench", str(work / "gpu.json"), "--target", "opencl", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "(target opencl)" in out and "time per node" not in out


def test_profile_is_for_cpu_code_only(work, capsys):
    assert main(["bench", str(work / "gpu.json"), "--target", "opencl", "--profile"]) == 2
    assert "--profile times CPU code only" in _error(capsys)


def test_a_bad_opencl_schedule_is_reported_on_its_node_for_every_command(work, capsys):
    data = blur_document("gray.png", "gray", 2)
    data["nodes"][2]["schedules"] = {"opencl": {"out": [["gpu_tile", "x", "q", "xo", "yo", "xi", "yi", 8, 8]]}}
    write_document(work / "bad.json", data)
    assert main(["inspect", str(work / "bad.json"), "--target", "opencl"]) == 1
    err = _error(capsys)
    assert "node `result`: OpenCL schedule: schedule of `out`, directive 1" in err and "the engine refuses" in err
    assert main(["inspect", str(work / "bad.json")]) == 0  # the CPU build does not use it


def test_export_for_opencl_writes_a_python_module_that_runs_on_the_device(work, capsys):
    out = work / "lib"
    command = ["export", str(work / "gpu.json"), "--out", str(out), "--target", "opencl", "--python", "--name", "gpu"]
    assert main(command) == 0
    assert f"wrote {out / 'gpu.cl'}" in capsys.readouterr().out
    assert "__kernel void" in (out / "gpu.cl").read_text() and (out / "libgpu.so").exists()
    image = iio.imread(work / "gray.png")
    np.save(work / "in.npy", image)
    script = (
        f"import sys, numpy as np; sys.path.insert(0, {str(out)!r}); import gpu; "
        f"np.save({str(work / 'out.npy')!r}, gpu.run(np.load({str(work / 'in.npy')!r})))"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    np.testing.assert_array_equal(np.load(work / "out.npy"), numpy_box_blur(image, 2))


def test_without_an_opencl_device_the_error_says_how_to_get_one(work):
    env = {**os.environ, "OCL_ICD_VENDORS": str(work / "no-vendors"), "OPENCL_VENDOR_PATH": str(work / "no-vendors")}
    env.pop("PIXELWEAVE_OPENCL_DEVICE", None)
    done = subprocess.run(
        [sys.executable, "-m", "pixelweave.app.cli", "run", str(work / "gpu.json"), "-o", str(work / "o.png"),
         "--target", "opencl"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "needs an OpenCL device and none is usable here" in done.stderr and "pocl-opencl-icd" in done.stderr
    assert not (work / "o.png").exists()
