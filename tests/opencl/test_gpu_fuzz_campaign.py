"""The long-run fuzz script's GPU mode (`tools/fuzz_schedules.py --target opencl`): random
GPU schedules through the same campaign as the CPU mode (workers, summary.json, Halide
share, reproducers), here a tiny campaign run through the script's main function; and a
GPU case's reproducer script compiles for OpenCL on its own."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pixelweave.engine.fuzz.campaign import SEED_STRIDE, Campaign
from pixelweave.engine.fuzz.cases import render_script
from pixelweave.engine.fuzz.execute import run_case
from pixelweave.engine.fuzz.gpu import draw_gpu_case

pytestmark = pytest.mark.usefixtures("opencl_device")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fuzz_schedules", ROOT / "tools" / "fuzz_schedules.py")
fuzz_schedules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_schedules)


def test_a_tiny_gpu_campaign_through_the_script(tmp_path, capsys):
    argv = ["--target", "opencl", "--seed", "3", "--cases", "4", "--halide-every", "2", "--quiet"]
    assert fuzz_schedules.main([*argv, "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["target"] == "opencl" and summary["checked"] is False
    assert summary["cases_run"] == sum(summary["outcomes"].values()) == 4
    assert summary["failures"] == 0 and summary["failure_list"] == []
    assert summary["outcomes"].get("ok", 0) >= 1
    assert summary["halide_compared"].get("same", 0) >= 1
    assert set(summary["directive_outcomes"]) & {"gpu_blocks", "gpu_threads", "gpu_tile"}
    assert '"target": "opencl"' in capsys.readouterr().out


def test_a_gpu_campaign_draws_gpu_cases():
    campaign = Campaign(seed=3, target="opencl")
    case = campaign.draw(3 * SEED_STRIDE)
    assert case == draw_gpu_case(3 * SEED_STRIDE)
    assert case.target == "opencl" and not case.checked
    assert any(d.kind.startswith("gpu_") for d in case.directives)
    assert Campaign(seed=3).draw(3 * SEED_STRIDE).target == "host"


def test_a_gpu_reproducer_compiles_for_opencl_on_its_own(tmp_path):
    case = draw_gpu_case(5502)  # gpu_blocks after a tile (the fuzzer once named a lost loop)
    assert run_case(case)["outcome"] == "ok"  # the case's own target: opencl
    script = render_script(case, "A passing GPU case.")
    assert "TARGET = 'opencl'" in script
    path = tmp_path / "case.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "compiled output equals the reference"
