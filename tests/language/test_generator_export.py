"""`pixelweave export FILE.py --generator NAME`: a generator's static library from the command line."""

import subprocess
from pathlib import Path

import pytest
from pixelweave.app.cli import main

GENERATORS = """
import pixelweave as pw


@pw.generator(name="scale_by")
class ScaleBy:
    factor = pw.GeneratorParam(2)
    input = pw.InputBuffer(pw.UInt(16), 1)
    output = pw.OutputBuffer(pw.UInt(16), 1)

    def generate(self):
        x = pw.Var("x")
        self.output[x] = self.input[x] * self.factor


@pw.generator(name="negate")
class Negate:
    input = pw.InputBuffer(pw.Int(32), 1)
    output = pw.OutputBuffer(pw.Int(32), 1)

    def generate(self):
        x = pw.Var("x")
        self.output[x] = -self.input[x]
"""

C_MAIN = r"""
#include <stdio.h>
#include "scale_by.h"
int main(void) {
    uint16_t in[4] = {1, 2, 3, 400}, out[4];
    pw_dimension_t d[1] = {{0, 4, 1, 0}}, e[1] = {{0, 4, 1, 0}};
    pw_buffer_t bin = {(uint8_t *)in, PW_TYPE_UINT, 16, 1, 0, d}, bout = {(uint8_t *)out, PW_TYPE_UINT, 16, 1, 0, e};
    if (scale_by(&bin, &bout) != 0) return 1;
    printf("%d %d %d %d\n", out[0], out[1], out[2], out[3]);
    return 0;
}
"""


def test_export_a_generator_and_call_it_from_c(tmp_path: Path, capsys):
    source = tmp_path / "gens.py"
    source.write_text(GENERATORS)
    out = tmp_path / "out"
    code = main(["export", str(source), "--generator", "scale_by", "--generator-param", "factor=3", "--out", str(out)])
    assert code == 0
    assert "scale_by.a" in capsys.readouterr().out
    (tmp_path / "main.c").write_text(C_MAIN)
    exe = tmp_path / "main"
    subprocess.run(
        ["cc", "-I", str(out), "-o", str(exe), str(tmp_path / "main.c"), str(out / "scale_by.a"), "-lm", "-lpthread"],
        check=True,
    )
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split() == [
        "3", "6", "9", "1200"
    ]  # fmt: skip


def test_export_needs_a_generator_name_when_the_file_has_several(tmp_path: Path, capsys):
    source = tmp_path / "gens.py"
    source.write_text(GENERATORS)
    assert main(["export", str(source), "--out", str(tmp_path / "out")]) != 0
    assert "negate, scale_by" in capsys.readouterr().err
    assert main(["export", str(source), "--generator", "nope", "--out", str(tmp_path / "out")]) != 0
    assert "no generator `nope`" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["factor", "factor=lots"])
def test_export_refuses_bad_generator_params(tmp_path: Path, capsys, bad):
    source = tmp_path / "gens.py"
    source.write_text(GENERATORS)
    args = ["export", str(source), "--generator", "scale_by", "--generator-param", bad, "--out", str(tmp_path / "o")]
    assert main(args) != 0
    assert "factor" in capsys.readouterr().err
