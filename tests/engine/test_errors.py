"""Error tests: one per mistake a user can make, asserting the exception and its message.

Each test makes exactly one mistake in an otherwise valid program, and checks the class of
the error (CompileError while defining, InputError / BoundsError when running) and the key
words of its message: the names involved and what to do.
"""

import re

import numpy as np
import pytest

import pixelweave as pw


@pytest.fixture
def xy():
    return pw.Var("x"), pw.Var("y")


@pytest.fixture
def gray():
    return np.zeros((4, 6), np.uint8)


def copy_of(image, x, y):
    out = pw.Func("out")
    out[x, y] = image[x, y]
    return out


# ----------------------------------------------------------------------------- Funcs


def test_calling_an_undefined_func(xy):
    x, _ = xy
    f, g = pw.Func("f"), pw.Func("g")
    with pytest.raises(pw.CompileError, match=r"can't call Func `f` because it has not yet been defined"):
        g[x] = f[x] + 1


def test_a_pure_definition_that_refers_to_itself(xy):
    x, _ = xy
    f = pw.Func("f")
    with pytest.raises(pw.CompileError, match=r"`f` because it has not yet been defined.*cannot refer to itself"):
        f[x] = f[x - 1] + 1


def test_calling_a_func_with_too_few_arguments(xy):
    x, y = xy
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = x + y
    with pytest.raises(pw.CompileError, match=r"Func `f` is called with 1 argument, but was defined with 2 \(x, y\)"):
        g[x] = f[x]


def test_calling_a_func_with_too_many_arguments(xy):
    x, y = xy
    f, g = pw.Func("f"), pw.Func("g")
    f[x] = x
    with pytest.raises(pw.CompileError, match=r"Func `f` is called with 2 arguments, but was defined with 1 \(x\)"):
        g[x, y] = f[x, y]


def test_calling_an_image_with_the_wrong_number_of_arguments(xy):
    x, _ = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    g = pw.Func("g")
    with pytest.raises(pw.CompileError, match=r"input image `input` is called with 1 argument, but has 2 dimensions"):
        g[x] = image[x]


def test_a_float_coordinate_of_an_image(xy):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(pw.CompileError, match=r"`input` is called with a float32 coordinate in argument 0.*i32"):
        image[x * 0.5, y]


def test_a_float_coordinate_of_a_func(xy):
    x, y = xy
    f = pw.Func("f")
    f[x, y] = x + y
    with pytest.raises(pw.CompileError, match=r"Func `f` is called with a float32 coordinate in argument 1"):
        f[x, pw.f32(y) / 2] + 1


def test_an_update_after_the_func_was_used(xy):
    x, _ = xy
    f, g = pw.Func("f"), pw.Func("g")
    f[x] = x
    g[x] = f[x] * 2
    with pytest.raises(
        pw.CompileError,
        match=r"Func `f` cannot be given a new update definition, because it has already been used in the "
        r"definition of Func `g`",
    ):
        f[x] = f[x] + 1


def test_an_update_of_another_type(xy):
    x, _ = xy
    f = pw.Func("f")
    f[x] = pw.u8(x)
    with pytest.raises(
        pw.CompileError,
        match=r"update definition 0 of Func `f`: the value has type uint16, but the pure definition has type uint8",
    ):
        f[x] = f[x] + pw.u16(x)


def test_an_undefined_var_on_the_right_hand_side(xy):
    x, y = xy
    f = pw.Func("f")
    with pytest.raises(pw.CompileError, match=r"undefined variable y in the pure definition of Func `f`"):
        f[x] = x + y


def test_an_undefined_var_in_an_update(xy):
    x, y = xy
    f = pw.Func("f")
    f[x] = x
    with pytest.raises(pw.CompileError, match=r"undefined variable y in update definition 0 of Func `f`"):
        f[x] = f[x] + y


def test_a_pure_definition_with_an_expression_as_argument(xy):
    x, _ = xy
    f = pw.Func("f")
    with pytest.raises(
        pw.CompileError, match=r"pure definition of Func `f` must have Vars as arguments, but argument 0 is \(x \+ 1\)"
    ):
        f[x + 1] = x


def test_rdom_bounds_that_depend_on_a_var(xy):
    x, _ = xy
    with pytest.raises(
        pw.CompileError, match=r"bounds of RDom .* must be known before the pipeline runs .* depends on Var x"
    ):
        pw.RDom([(0, x)])


def test_a_pipeline_with_an_undefined_output():
    with pytest.raises(pw.CompileError, match=r"output Func `g` has no definition"):
        pw.Pipeline(pw.Func("g"))


# ----------------------------------------------------------------------------- types


def test_an_integer_literal_that_does_not_fit(xy):
    x, _ = xy
    with pytest.raises(
        pw.CompileError,
        match=r"integer constant 300 will be implicitly coerced to type uint8, which changes its value to "
        r"\(uint8\)44.*explicit cast",
    ):
        pw.u8(x) + 300


def test_a_negative_literal_beside_an_unsigned_value(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"integer constant -1 will be implicitly coerced to type uint16"):
        pw.u16(x) * -1


def test_bitwise_and_of_signed_and_unsigned(xy):
    x, _ = xy
    with pytest.raises(
        pw.CompileError,
        match=r"arguments to bitwise_and must be both signed or both unsigned: .* has type uint8, .* has type int8",
    ):
        pw.u8(x) & pw.i8(x)


def test_bitwise_or_of_a_float(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"bitwise_or is not defined on floating-point"):
        pw.f32(x) | pw.f32(x)


def test_select_with_values_of_different_types(xy):
    x, _ = xy
    with pytest.raises(
        pw.CompileError,
        match=r"second and third arguments to select do not have a matching type: .* has type uint8, .* has type "
        r"uint16",
    ):
        pw.select(x > 0, pw.u8(x), pw.u16(x))


def test_select_with_a_condition_that_is_not_bool(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"condition of select must be a bool, but x has type int32"):
        pw.select(x, 1, 2)


def test_clamp_with_bounds_of_another_type(xy):
    x, _ = xy
    with pytest.raises(
        pw.CompileError,
        match=r"type mismatch in call to clamp: first argument \(uint8\(x\)\) has type uint8, but second argument "
        r"\(x\) has type int32",
    ):
        pw.clamp(pw.u8(x), x, 3)


def test_clamp_with_a_literal_bound_that_does_not_fit(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"clamp: .* third argument \(256\) has type int32"):
        pw.clamp(pw.u8(x), 0, 256)


def test_if_on_an_expression(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"has no truth value.*use select\(c, a, b\) instead of if/else"):
        if x > 3:
            pass


def test_and_between_expressions(xy):
    x, y = xy
    with pytest.raises(pw.CompileError, match=r"no truth value.*& \| ~ instead of and/or/not"):
        _ = (x > 3) and (y > 3)


def test_lerp_with_a_signed_weight(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"weight of lerp must be unsigned or float, but .* has type int16"):
        pw.lerp(pw.u8(x), pw.u8(x), pw.i16(x))


def test_lerp_with_a_constant_weight_out_of_range(xy):
    x, _ = xy
    with pytest.raises(pw.CompileError, match=r"weight of lerp .* is 1.5, which is not in \[0.0, 1.0\]"):
        pw.lerp(pw.u8(x), pw.u8(x), 1.5)


# ----------------------------------------------------------------------------- running


def test_an_input_too_small_below_its_minimum(xy, gray):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    out = pw.Func("out")
    out[x, y] = image[x - 1, y]
    with pytest.raises(
        pw.BoundsError,
        match=r"input `input` is read at x = -1, below its minimum 0 in x \(dimension 0\); add a boundary condition",
    ):
        pw.Pipeline(out).realize_reference([6, 4], {"input": gray})


def test_an_input_too_small_beyond_its_maximum(xy, gray):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    out = pw.Func("out")
    out[x, y] = image[x, y + 2]
    with pytest.raises(
        pw.BoundsError,
        match=r"input `input` is read at y = 5, beyond its maximum 3 in y \(dimension 1\).*request a smaller output",
    ):
        pw.Pipeline(out).realize_reference([6, 4], {"input": gray})


def test_an_output_larger_than_the_input(xy, gray):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(pw.BoundsError, match=r"input `input` is read at x = 9, beyond its maximum 5"):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([10, 4], {"input": gray})


def test_an_input_of_the_wrong_dtype(xy, gray):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(
        pw.InputError,
        match=r"input `input` has element type uint8 \(NumPy uint8\), but the array given has dtype uint16",
    ):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([6, 4], {"input": gray.astype(np.uint16)})


def test_an_input_of_the_wrong_dimensionality(xy):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    rgb = np.zeros((4, 6, 3), np.uint8)
    with pytest.raises(
        pw.InputError,
        match=r"input `input` has 2 dimensions, but the array given has 3 \(shape \(4, 6, 3\)\)",
    ):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([6, 4], {"input": rgb})


def test_an_input_that_is_not_an_array(xy):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(pw.InputError, match=r"input `input` needs a NumPy array, got list"):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([2, 1], {"input": [[1, 2]]})


def test_a_missing_input(xy):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(pw.InputError, match=r"no array given for input image `input`"):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([6, 4], {})


def test_an_unknown_input_name(xy, gray):
    x, y = xy
    image = pw.ImageParam(pw.UInt(8), 2, "input")
    with pytest.raises(pw.InputError, match=r"`imput` is not an input of this pipeline \(its inputs: input\)"):
        pw.Pipeline(copy_of(image, x, y)).realize_reference([6, 4], {"input": gray, "imput": gray})


def test_a_missing_param_value(xy):
    x, y = xy
    gain = pw.Param(pw.Int(32), "gain")
    out = pw.Func("out")
    out[x, y] = x * gain
    with pytest.raises(pw.InputError, match=r"no value given for parameter `gain`, and it has no default"):
        pw.Pipeline(out).realize_reference([6, 4], {})


def test_a_float_value_for_an_integer_param(xy):
    x, y = xy
    gain = pw.Param(pw.Int(32), "gain", 3)
    out = pw.Func("out")
    out[x, y] = x * gain
    with pytest.raises(pw.InputError, match=r"parameter `gain` has integer type int32 but was given the float 1.5"):
        pw.Pipeline(out).realize_reference([6, 4], {"gain": 1.5})


def test_a_param_value_that_does_not_fit(xy):
    x, y = xy
    level = pw.Param(pw.UInt(8), "level", 3)
    out = pw.Func("out")
    out[x, y] = pw.u8(x) + level
    with pytest.raises(pw.InputError, match=r"value 256 for parameter `level` does not fit its type uint8"):
        pw.Pipeline(out).realize_reference([6, 4], {"level": 256})


def test_the_wrong_number_of_sizes(xy):
    x, y = xy
    out = pw.Func("out")
    out[x, y] = x + y
    with pytest.raises(pw.InputError, match=re.escape("output `out` has 2 dimensions, but 1 size was given")):
        pw.Pipeline(out).realize_reference([6], {})
    with pytest.raises(pw.InputError, match=re.escape("output `out` has 2 dimensions, but 3 sizes were given")):
        pw.Pipeline(out).realize_reference([6, 4, 3], {})


def test_a_negative_size(xy):
    x, y = xy
    out = pw.Func("out")
    out[x, y] = x + y
    with pytest.raises(pw.InputError, match=r"the size of y \(dimension 1\) is negative \(-4\)"):
        pw.Pipeline(out).realize_reference([6, -4], {})


def test_param_named_like_a_var_is_rejected():
    x, y = pw.Var("x"), pw.Var("y")
    p = pw.Param(pw.Int(32), "x", 5)
    f = pw.Func("f")
    f[x, y] = x + p * 10
    with pytest.raises(pw.CompileError, match="Param `x` has the same name as a Var"):
        pw.Pipeline(f)
