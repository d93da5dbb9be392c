"""Item 7 of issue 13: the small pieces of Halide's Python API, checked against `halide`."""

import halide as hl
import numpy as np
import pytest

import pixelweave as pw

TYPES = [("UInt", 8), ("UInt", 16), ("UInt", 32), ("Int", 8), ("Int", 16), ("Int", 32), ("Int", 64),
         ("Float", 32), ("Float", 64)]  # fmt: skip


def halide_text(e) -> str:
    """The expression text inside Halide's `<halide.Expr of type T: text>`."""
    return str(e).split(": ", 1)[1][:-1]


@pytest.mark.parametrize(("maker", "bits"), TYPES)
def test_type_methods_agree_with_halide(maker, bits):
    ours, theirs = getattr(pw, maker)(bits), getattr(hl, maker)(bits)
    assert ours.bits() == theirs.bits() and ours.bytes() == theirs.bytes()
    assert ours.lanes() == theirs.lanes() == 1
    for method in ("is_float", "is_int", "is_uint", "is_bool", "is_scalar", "is_vector", "is_handle", "is_bfloat"):
        assert getattr(ours, method)() == getattr(theirs, method)(), method
    wider = 64 if ours.is_float() else 16
    assert str(ours.with_bits(wider)) == str(theirs.with_bits(wider))
    assert str(ours.with_lanes(4)) == str(theirs.with_lanes(4))
    assert str(ours.with_lanes(4).element_of()) == str(theirs.with_lanes(4).element_of())
    if not ours.is_float():
        assert ours.is_max(ours.max()) and theirs.is_max(ours.max())
        assert ours.is_min(ours.min()) and theirs.is_min(ours.min())
        assert not ours.is_max(ours.max() - 1) and not theirs.is_max(ours.max() - 1)


def test_type_fields_still_read_as_attributes():
    t = pw.UInt(16)
    assert t.bits == 16 and t.bits + 0 == 16 and t.code == "uint" and t.code() == "uint"
    assert {pw.UInt(16): 1}[t] == 1 and pw.Bool().bits() == hl.Bool().bits() == 1


@pytest.mark.parametrize("value", [3, -7, 2**40, 1.5, True, False])
def test_expr_constructor_types_like_halide(value):
    ours, theirs = pw.Expr(value), hl.Expr(value)
    assert str(ours.type()) == str(theirs.type())
    assert isinstance(ours, pw.Expr) and ours.defined()


def test_expr_of_var_param_and_call_are_exprs():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 2
    assert isinstance(pw.Expr(x), pw.Expr) and isinstance(pw.Expr(f[x]), pw.Expr)
    assert isinstance(x + 1, pw.Expr)
    assert pw.Expr(pw.Param(pw.UInt(8), "p")).type() == pw.UInt(8)
    with pytest.raises(pw.HalideError, match="cannot use"):
        pw.Expr(object())


def test_logical_not_method_form():
    x, hx = pw.Var("x"), hl.Var("x")
    f, hf = pw.Func("f"), hl.Func("f")
    f[x] = pw.select((x > 2).logical_not(), 1, 0)
    hf[hx] = hl.select((hx > 2).logical_not(), 1, 0)
    assert list(pw.Pipeline(f).realize([6])) == list(np.asarray(hf.realize([6])))
    assert str((x > 2).logical_not()) == halide_text((hx > 2).logical_not())
    with pytest.raises(pw.CompileError):
        x.logical_not()  # int32, not bool


def test_names_are_methods_and_attributes():
    x = pw.Var("x")
    assert x.name() == hl.Var("x").name() == "x" and x.name == "x"
    p = pw.Param(pw.Int(32), "p", 3)
    assert p.name() == "p"


def test_param_min_and_max_values():
    p, hp = pw.Param(pw.Int(32), "p", 3), hl.Param(hl.Int(32), "p", 3)
    p.set_min_value(0)
    p.set_max_value(10)
    hp.set_min_value(0)
    hp.set_max_value(10)
    assert str(p.min_value()) == halide_text(hp.min_value()) and str(p.max_value()) == halide_text(hp.max_value())
    assert pw.Param(pw.Float(32), "q").min_value() is None


def test_host_target_matches_halide_on_the_features_that_apply():
    ours, theirs = pw.get_host_target(), hl.get_host_target()
    assert str(ours.arch).split(".")[-1].lower() == str(theirs.arch).split(".")[-1].lower()
    assert ours.bits == theirs.bits
    for name in ("sse41", "avx", "avx2", "fma", "f16c", "avx512", "avx512_skylake"):
        assert ours.has_feature(name) == theirs.has_feature(
            getattr(hl.TargetFeature, name.upper().replace("AVX512_SKYLAKE", "AVX512_Skylake"))
        ), name
    assert pw.Target("host") == ours and ours.engine_target() == "host"
    assert pw.get_jit_target_from_environment().has_feature(pw.TargetFeature.JIT)


def test_target_strings_parse_and_print_as_in_halide():
    for spec in ("x86-64-linux", "x86-64-linux-avx2", "x86-64-linux-avx-avx2-f16c-fma-sse41-profile"):
        assert pw.Target(spec).to_string() == hl.Target(spec).to_string()
        assert pw.Target.validate_target_string(spec) == hl.Target.validate_target_string(spec)
    t = pw.Target("x86-64-linux-avx2")
    assert t.natural_vector_size(pw.Float(32)) == hl.Target("x86-64-linux-avx2").natural_vector_size(hl.Float(32))
    assert t.natural_vector_size(pw.UInt(8)) == hl.Target("x86-64-linux-avx2").natural_vector_size(hl.UInt(8))
    assert t.with_feature(pw.TargetFeature.Profile).to_string() == "x86-64-linux-avx2-profile"
    assert not t.without_feature("avx2").has_feature("avx2")
    for bad in ("nonsense", "x86-64-linux-foo", "x86-64-avx2"):
        assert not pw.Target.validate_target_string(bad) and not hl.Target.validate_target_string(bad)
        with pytest.raises(pw.HalideError, match="Did not understand target"):
            pw.Target(bad)


def test_target_selects_the_engine_target():
    assert pw.Target("x86-64-linux-avx2-fma-f16c").engine_target() == "x86-64-v3"
    assert pw.Target("x86-64-linux-sse41").engine_target() == "x86-64-v2"
    assert pw.Target("x86-64-linux").engine_target() == "x86-64"
    with pytest.raises(pw.CompileError, match="64-bit x86"):
        pw.Target("arm-64-osx").engine_target()


def test_a_target_object_compiles_and_runs():
    x = pw.Var("x")
    f = pw.Func("f")
    f[x] = x * 3
    out = pw.Pipeline(f).realize([5], target=pw.Target("x86-64-linux"))
    assert list(out) == [0, 3, 6, 9, 12]


def test_halide_error_is_the_base_of_every_refusal():
    assert issubclass(pw.CompileError, pw.HalideError) and issubclass(pw.ScheduleError, pw.HalideError)
    with pytest.raises(pw.HalideError):
        pw.Func("f").dimensions()


def test_estimates_with_halide_signatures():
    x, y = pw.Var("x"), pw.Var("y")
    f = pw.Func("f")
    f[x, y] = x + y
    assert f.set_estimate(x, 0, 100) is f
    f.set_estimates([(0, 100), (0, 50)])
    assert f.estimates() == {"x": (0, 100), "y": (0, 50)}
    im = pw.ImageParam(pw.UInt(8), 2, "im")
    im.dim(0).set_estimate(0, 64)
    im.set_estimates([(0, 64), (0, 32)])
    assert im.estimates() == {0: (0, 64), 1: (0, 32)}
    p = pw.Param(pw.Int(32), "p")
    p.set_estimate(5)
    assert p.estimate == 5


@pytest.mark.parametrize(("value", "message"), [(11, "must be at most 10"), (-1, "must be at least 0")])
def test_param_values_outside_the_range_are_refused_like_halide(value, message):
    x, hx = pw.Var("x"), hl.Var("x")
    p, hp = pw.Param(pw.Int(32), "p", 3), hl.Param(hl.Int(32), "p", 3)
    for q in (p, hp):
        q.set_min_value(0)
        q.set_max_value(10)
        q.set(value)
    f, hf = pw.Func("f"), hl.Func("f")
    f[x] = x + p
    hf[hx] = hx + hp
    with pytest.raises(hl.HalideError, match=message):
        hf.realize([2])
    with pytest.raises(pw.HalideError, match=f"Parameter p is {value} but {message}"):
        f.realize([2])
    with pytest.raises(pw.InputError, match=message):
        pw.Pipeline(f).realize_reference([2])
    p.set(10)
    assert list(np.asarray(f.realize([2]))) == [10, 11]
