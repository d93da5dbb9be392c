"""The small Halide APIs the learning apps use (tests/language/test_halide_apps.py runs
the apps themselves), each against `halide` where Halide gives an answer to compare."""

import uuid

import halide as hl
import halide.imageio
import numpy as np
import pytest
from pixelweave.engine.generator import registered_generators

import pixelweave as pw
import pixelweave.imageio


def test_vars_and_funcs_name_one_object_per_word():
    for lang in (pw, hl):
        x, y, c = lang.vars("x y c")
        unique = f"funcs_test_{uuid.uuid4().hex}"
        left, right = lang.funcs(f"{unique}_left {unique}_right")
        assert [v.name() for v in (x, y, c)] == ["x", "y", "c"]
        assert isinstance(x, lang.Var) and isinstance(right, lang.Func)
        # Halide may add a `$N` suffix that depends on what the process made before (seen
        # in a full run even for a fresh name); Pixelweave keeps the name as given
        names = (left.name(), right.name())
        if lang is hl:
            names = tuple(n.split("$")[0] for n in names)
        assert names == (f"{unique}_left", f"{unique}_right")


def test_lambda_func_matches_halide():
    results = []
    for lang in (pw, hl):
        x, y = lang.vars("x y")
        f = lang.lambda_func(x, y, x * 3 + y)
        assert f.name().startswith("lambda_")
        results.append(np.asarray(f.realize([5, 4])))
    np.testing.assert_array_equal(*results)
    with pytest.raises(pw.CompileError, match="takes Vars before its value"):
        pw.lambda_func(3, pw.Var("x"))


def test_has_gpu_feature_matches_halide():
    for spec, gpu in (("x86-64-linux-avx2", False), ("x86-64-linux-opencl", True)):
        assert pw.Target(spec).has_gpu_feature() is gpu is hl.Target(spec).has_gpu_feature()


@pw.alias(scaled_by_three={"scale": 3}, scaled_auto={"autoscheduler": "Adams2019"})
@pw.generator(name="scaled")
class Scaled:
    scale = pw.GeneratorParam(2)
    input = pw.InputBuffer(pw.Float(32), 2)
    output = pw.OutputBuffer(pw.Float(32), 2)

    def generate(self):
        x, y = pw.vars("x y")
        self.output[x, y] = self.input[x, y] * self.scale
        self.input.set_estimates([(0, 64), (0, 64)])
        self.output.set_estimates([(0, 64), (0, 64)])
        if not self.using_autoscheduler():
            self.output.vectorize(x, 8, pw.TailStrategy.GuardWithIf)


def test_generator_target_alias_and_autoscheduler():
    data = np.arange(64 * 48, dtype=np.float32).reshape(48, 64)  # the autoscheduler plans for 64 x 64
    generators = registered_generators()
    assert generators["scaled_by_three"].__mro__[1] is Scaled
    plain, tripled, auto = Scaled(), generators["scaled_by_three"](), generators["scaled_auto"]()
    assert isinstance(plain.target(), pw.Target) and not plain.target().has_gpu_feature()
    assert not plain.using_autoscheduler() and not tripled.using_autoscheduler() and auto.using_autoscheduler()
    for generator, scale in ((plain, 2), (tripled, 3), (auto, 2)):
        out = np.zeros_like(data)
        generator.compile_to_callable()(data, out)
        np.testing.assert_array_equal(out, data * scale)
    assert "vectorize" in auto.scheduled_pipeline().loop_nest()
    with pytest.raises(pw.CompileError, match="unknown autoscheduler 'Fancy2030'"):
        Scaled({"autoscheduler": "Fancy2030"})
    with pytest.raises(pw.CompileError, match="takes no options"):
        Scaled({"autoscheduler": "Adams2019", "autoscheduler.parallelism": "8"})
    with pytest.raises(pw.CompileError, match="in conjunction with @generator"):
        pw.alias(other={})(type("NotAGenerator", (), {}))
    with pytest.raises(pw.CompileError, match="something other than a dict"):
        pw.alias(other=3)(Scaled)


def test_input_dimension_constraints_are_refused_as_halide_refuses_them():
    def build(lang):
        x, y = lang.vars("x y")
        image = lang.ImageParam(lang.Float(32), 2, "image")
        image.dim(0).set_bounds(0, 4).dim(1).set_min(0)
        f = lang.Func("f")
        f[x, y] = image[x, y] * 2
        return image, f

    for lang in (pw, hl):
        image, f = build(lang)
        image.set(lang.Buffer(np.ones((3, 4), np.float32)))
        np.testing.assert_array_equal(np.asarray(f.realize([4, 3])), np.full((3, 4), 2.0))
        image.set(lang.Buffer(np.ones((3, 5), np.float32)))
        with pytest.raises(lang.HalideError):
            f.realize([4, 3])
    image, _ = build(pw)
    with pytest.raises(pw.CompileError, match="must be a constant integer"):
        image.dim(1).set_extent(image.width())


def test_tail_strategy_given_last_is_the_tail_keyword():
    def schedule(positional):
        x, y, xi, yi = pw.vars("x y xi yi")
        f = pw.Func("f")
        f[x, y] = x + y * 10
        if positional:
            f.tile(x, y, xi, yi, 4, 3, pw.TailStrategy.GuardWithIf).unroll(xi, 2, pw.TailStrategy.GuardWithIf)
        else:
            f.tile(x, y, xi, yi, 4, 3, tail=pw.TailStrategy.GuardWithIf).unroll(xi, 2, tail=pw.TailStrategy.GuardWithIf)
        return f

    assert pw.Pipeline(schedule(True)).loop_nest() == pw.Pipeline(schedule(False)).loop_nest()
    np.testing.assert_array_equal(
        np.asarray(schedule(True).realize([7, 5])), np.asarray(schedule(False).realize([7, 5]))
    )


def test_main_is_halides_generator_command_line(tmp_path):
    written = pw.main(["gens.py", "-g", "scaled_auto", "-o", str(tmp_path / "out"), "-e", "h,stmt", "scale=5"])
    assert sorted(p.rsplit("/", 1)[1] for p in written) == ["scaled_auto.h", "scaled_auto.stmt"]
    assert "scaled_auto(" in (tmp_path / "out" / "scaled_auto.h").read_text()
    with pytest.raises(pw.CompileError, match="-g is required"):
        pw.main(["gens.py", "-o", str(tmp_path)])
    with pytest.raises(pw.CompileError, match="unknown emit `python_extension`"):
        pw.main(["gens.py", "-g", "scaled", "-o", str(tmp_path), "-e", "python_extension"])
    with pytest.raises(pw.CompileError, match="no generator `nope`"):
        pw.main(["gens.py", "-g", "nope", "-o", str(tmp_path)])
    with pytest.raises(pw.CompileError, match="no GeneratorParam `sclae`"):
        pw.main(["gens.py", "-g", "scaled", "-o", str(tmp_path), "sclae=3"])


@pytest.mark.parametrize("shape", [(6, 5), (6, 5, 3), (6, 5, 4)])
def test_imageio_reads_and_writes_as_halide_imageio(tmp_path, shape):
    pixels = np.random.default_rng(5).integers(0, 256, shape, dtype=np.uint8)
    path = tmp_path / "image.png"
    halide.imageio.imwrite(path, halide.imageio.copy_to_planar(pixels))
    ours, theirs = pixelweave.imageio.imread(path), halide.imageio.imread(path)
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)
    pixelweave.imageio.imwrite(tmp_path / "again.png", ours)
    np.testing.assert_array_equal(halide.imageio.imread(tmp_path / "again.png"), theirs)
