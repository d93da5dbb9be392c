"""Item 6 of issue 13: Python Generators with Halide's declarations, against `halide`'s generators."""

import subprocess

import halide as hl
import numpy as np
import pytest

import pixelweave as pw


def define(lang, name):
    @lang.generator(name=name)
    class Brighten:
        gain = lang.GeneratorParam(2)
        input = lang.InputBuffer(lang.UInt(8), 2)
        offset = lang.InputScalar(lang.Int(32))
        output = lang.OutputBuffer(lang.UInt(8), 2)

        def generate(self):
            x, y = lang.Var("x"), lang.Var("y")
            self.output[x, y] = lang.u8(lang.min(lang.i32(self.input[x, y]) * self.gain + self.offset, 255))

    return Brighten


OURS = define(pw, "pw_brighten")
THEIRS = define(hl, "hl_brighten")
DATA = np.random.default_rng(11).integers(0, 256, size=(6, 9), dtype=np.uint8)


def run_ours(params):
    out = pw.Buffer(pw.UInt(8), [9, 6])
    OURS(params).compile_to_callable()(pw.Buffer(DATA), 7, out)
    return np.asarray(out)


def run_theirs(params):
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        out = hl.Buffer(hl.UInt(8), [9, 6])
        THEIRS(params).compile_to_callable()(hl.Buffer(DATA), 7, out)
        return np.asarray(out)


@pytest.mark.parametrize("params", [{}, {"gain": 3}, {"gain": "1"}])
def test_generator_callable_matches_halide(params):
    np.testing.assert_array_equal(run_ours(params), run_theirs(params))


def test_generator_call_inside_another_algorithm_matches_halide():
    x, y = pw.Var("x"), pw.Var("y")
    result = OURS.call(pw.Buffer(DATA), 5, generator_params={"gain": 3})
    doubled = pw.Func("doubled")
    doubled[x, y] = pw.u16(result[x, y]) * 2
    ours = doubled.realize([9, 6])
    hx, hy = hl.Var("x"), hl.Var("y")
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        hresult = THEIRS.call(hl.Buffer(DATA), 5, generator_params={"gain": 3})
        hdoubled = hl.Func("doubled")
        hdoubled[hx, hy] = hl.u16(hresult[hx, hy]) * 2
        theirs = hdoubled.realize([9, 6])
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    with pytest.raises(pw.CompileError, match="needs an ImageParam or a Buffer"):
        OURS.call(pw.Func("f"), 5)
    with (
        pytest.raises(hl.HalideError, match="requires an ImageParam or Buffer"),
        hl.GeneratorContext(hl.get_jit_target_from_environment()),
    ):
        THEIRS.call(hl.Func("f"), 5)


def test_generator_refusals():
    with pytest.raises(pw.CompileError, match="no GeneratorParam `gian`"):
        OURS({"gian": 3})
    with pytest.raises(pw.CompileError, match="is a int"):
        OURS({"gain": "lots"})
    with pytest.raises(pw.CompileError, match="needs its input `offset`"):
        OURS.call(pw.Buffer(DATA))

    @pw.generator(name="pw_wrong_type")
    class Wrong:
        output = pw.OutputBuffer(pw.UInt(8), 1)

        def generate(self):
            x = pw.Var("x")
            self.output[x] = x

    with pytest.raises(pw.CompileError, match="declared uint8 with 1 dimensions"):
        Wrong().build_pipeline()

    @pw.generator(name="pw_undefined")
    class Undefined:
        output = pw.OutputBuffer(pw.UInt(8), 1)

        def generate(self):
            pass

    with pytest.raises(pw.CompileError, match="did not define its output `output`"):
        Undefined().compile_to_callable()


def test_generator_as_a_static_library(tmp_path):
    OURS({"gain": 3}).compile_to_static_library(str(tmp_path / "brighten"))
    header = (tmp_path / "brighten.h").read_text()
    assert "int32_t pw_brighten(const pw_buffer_t *input, int32_t offset, pw_buffer_t *output);" in header
    listing = subprocess.run(["nm", str(tmp_path / "brighten.a")], capture_output=True, text=True, check=True).stdout
    assert " T pw_brighten" in listing


def test_generator_context_sets_the_target():
    with pw.GeneratorContext(pw.Target("x86-64-linux-sse41")):
        generator = OURS()
    assert generator.target().engine_target() == "x86-64-v2"
    out = pw.Buffer(pw.UInt(8), [9, 6])
    generator.compile_to_callable()(pw.Buffer(DATA), 7, out)
    np.testing.assert_array_equal(np.asarray(out), run_theirs({}))
