"""The restricted expression parser: every error names the offending token and its place;
valid expressions translate to engine expressions of the expected types (their values are
tested against NumPy in test_custom.py)."""

import ast

import numpy as np
import pytest
from pixelweave.engine.ir.expr import Expr
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.expression_parser import (
    MAX_DEPTH,
    MAX_LENGTH,
    ExpressionError,
    parse_expression,
    referenced,
    translate,
)

import pixelweave as pw

CALLS = "calls are limited to select, min, max, clamp, abs, sqrt, exp, log, pow, sin, cos, tan, atan2, floor, ceil"
COORDINATES = "coordinates must be x, y or c plus an integer offset (or x*k, x/k, an integer, width, height)"

# (expression, the message without its place, column, length of the underlined text)
ERRORS = [
    ("a + foo", "unknown name `foo` (the names are a, b, c, d (inputs), x, y, ch (coordinates), width, height)", 5, 3),
    ("open(a)", f"{CALLS}, round, lerp, f32, u8, u16, i32: `open`", 1, 4),
    ('__import__("os")', f"{CALLS}, round, lerp, f32, u8, u16, i32: `__import__`", 1, 10),
    ("a.width + 1", "attributes are not allowed in an expression: `a.width`", 1, 7),
    ("().__class__", "attributes are not allowed in an expression: `().__class__`", 1, 12),
    ("a[x*y, y]", f"{COORDINATES}: `x*y`", 3, 3),
    ("a[x, y*2.5]", f"{COORDINATES}: `y*2.5`", 6, 5),
    ("a[x, y, z]", f"{COORDINATES}: `z`", 9, 1),
    ("a[b, y]", f"{COORDINATES}: `b`", 3, 1),
    ("a[x/0, y]", f"{COORDINATES}: `x/0`", 3, 3),
    ("a[x:2, y]", f"{COORDINATES}: `x:2`", 3, 3),
    ("a[a, y]", f"{COORDINATES}: `a`", 3, 1),
    ("a[x]", "an input is read at two coordinates [x, y] or three [x, y, c], not 1: `a[x]`", 1, 4),
    ("a[x, y, c, 0]", "an input is read at two coordinates [x, y] or three [x, y, c], not 4: `a[x, y, c, 0]`", 1, 13),
    ("x[0, 0]", "only the inputs a, b, c, d can be read at coordinates: `x`", 1, 1),
    ("a[x, y][x, y]", "only the inputs a, b, c, d can be read at coordinates: `a[x, y]`", 1, 7),
    ("a +", "syntax error: invalid syntax", 4, 1),
    ("a b", "syntax error: invalid syntax", 3, 1),
    ("a = 1", "syntax error: invalid syntax", 3, 1),
    ("a if b", "syntax error: expected 'else' after 'if' expression", 1, 1),
    ("import os", "syntax error: invalid syntax", 1, 1),
    ("clamp(a, 0", "syntax error: '(' was never closed", 6, 1),
    ("a & b", "the operator `&` is not allowed; use and, or, not for conditions; found `&`", 3, 1),
    ("a  << 2", "the operator `<<` is not allowed; found `<<`", 4, 2),
    ("x @ y", "the operator `@` is not allowed; found `@`", 3, 1),
    ("~a", "the operator `~` is not allowed; use `not`; found `~a`", 1, 2),
    ("a is b", "only ==, !=, <, <=, >, >= compare; found `is`", 3, 2),
    ("a not in b", "only ==, !=, <, <=, >, >= compare; found `not in`", 3, 6),
    ("clamp(a, 0)", "`clamp` takes 3 arguments, got 2: `clamp(a, 0)`", 1, 11),
    ("sin(a, b)", "`sin` takes 1 argument, got 2: `sin(a, b)`", 1, 9),
    ("max(a)", "`max` takes at least 2 arguments, got 1: `max(a)`", 1, 6),
    (
        "select(a, b)",
        "`select` takes 3, 5, 7, ... arguments (c1, v1, c2, v2, ..., default), got 2: `select(a, b)`",
        1,
        12,
    ),
    (
        "select(a, b, c, d)",
        "`select` takes 3, 5, 7, ... arguments (c1, v1, c2, v2, ..., default), got 4: `select(a, b, c, d)`",
        1,
        18,
    ),
    ("sqrt(x=a)", "`sqrt` takes no keyword arguments: `x=a`", 6, 3),
    ("sqrt", "`sqrt` is a function: call it as sqrt(...); found `sqrt`", 1, 4),
    ("a + 'text'", "strings are not allowed: `'text'`", 5, 6),
    ('f"{a}"', 'strings are not allowed in an expression: `f"{a}"`', 1, 6),
    ("None", "only numbers are allowed as constants; this is not one: `None`", 1, 4),
    ("2j * a", "only numbers are allowed as constants; this is not one: `2j`", 1, 2),
    ("a + 99999999999", "the integer `99999999999` does not fit in 32 bits", 5, 11),
    ("a * 1e40", "the number `1e40` is too large for a 32-bit float", 5, 4),
    ("[a, b]", "lists are not allowed in an expression: `[a, b]`", 1, 6),
    ("(a, b)", "tuples are not allowed in an expression: `(a, b)`", 1, 6),
    ("lambda: a", "lambdas are not allowed in an expression: `lambda: a`", 1, 9),
    ("[v for v in a]", "comprehensions are not allowed in an expression: `[v for v in a]`", 1, 14),
    ("x if (y := 1) else a", "assignments are not allowed in an expression: `y := 1`", 7, 6),
    ("{a: b}", "dicts are not allowed in an expression: `{a: b}`", 1, 6),
    ("min(*a)", "starred arguments are not allowed in an expression: `*a`", 5, 2),
    (
        "   a + foo",
        "unknown name `foo` (the names are a, b, c, d (inputs), x, y, ch (coordinates), width, height)",
        8,
        3,
    ),
    ("é + foo", "unknown name `é` (the names are a, b, c, d (inputs), x, y, ch (coordinates), width, height)", 1, 1),
    ("éé & b", "the operator `&` is not allowed; use and, or, not for conditions; found `&`", 4, 1),  # UTF-8
    ("   ", "the expression is empty", 1, 1),
]


@pytest.mark.parametrize(("text", "message", "column", "length"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_token_and_its_column(text, message, column, length):
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text)
    e = caught.value
    assert str(e) == f"{message} at column {column}"
    assert (e.line, e.column, e.length) == (1, column, length)
    assert e.offset == column - 1
    assert isinstance(e, NodeError)


def test_multi_line_errors_give_the_line():
    with pytest.raises(ExpressionError) as caught:
        parse_expression("(a +\n   foo)")
    assert str(caught.value).endswith(
        "`foo` (the names are a, b, c, d (inputs), x, y, ch (coordinates), width, height) at line 2, column 4"
    )
    assert (caught.value.line, caught.value.column, caught.value.length, caught.value.offset) == (2, 4, 3, 8)


def test_length_limit():
    text = "+".join(["a"] * 1001)  # 2001 characters
    assert len(text) > MAX_LENGTH
    with pytest.raises(ExpressionError, match="2001 characters long, more than the 2000 allowed") as caught:
        parse_expression(text)
    assert caught.value.column == MAX_LENGTH + 1


def test_depth_limit():
    parse_expression("+".join(["a"] * MAX_DEPTH))  # a chain of MAX_DEPTH - 1 additions is fine
    with pytest.raises(ExpressionError, match=f"nested too deeply \\(more than {MAX_DEPTH} levels\\)"):
        parse_expression("+".join(["a"] * (MAX_DEPTH + 2)))
    with pytest.raises(ExpressionError, match="nested too deeply"):
        parse_expression("sqrt(" * 120 + "a" + ")" * 120)
    with pytest.raises(ExpressionError, match="syntax error: too many nested parentheses"):
        parse_expression("(" * 300 + "a" + ")" * 300)


def test_not_text():
    with pytest.raises(ExpressionError, match="an expression must be text, got int"):
        parse_expression(3)


VALID = [
    "a",
    "(a[x-1, y] + a[x, y] + a[x+1, y]) / 3",
    "select(a > 0.5, 1.0, 0.0)",
    "clamp(a * 1.2 - b, 0, 1)",
    "a[x*2, y/2] + b[2*x - 1, -y // 3] + c[x, y, c + 1] + d[width - 1 - x, (y + 1) * 2]",
    "a[x, y, 0] if 0 < x <= 10 and not y == 3 or ch != 1 else -b ** 2 % 3",
    "lerp(a, b, 0.25) + atan2(a, b) + pow(a, 2) + floor(a) + ceil(b) + round(c) + abs(-d)",
    "f32(u8(a)) + u16(b) + i32(c) + min(a, b, c) + max(a, b) + sqrt(exp(log(sin(cos(tan(a))))))",
    "  a\n",
    "(a +\n b)",
    "True + a",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_expressions_parse(text):
    assert isinstance(parse_expression(text), ast.Expression)


def test_referenced_inputs_and_channel():
    assert referenced(parse_expression("a + b[x, y]")) == ({"a", "b"}, False)
    assert referenced(parse_expression("a[x, y, c]")) == ({"a"}, True)  # c in brackets: the channel
    assert referenced(parse_expression("c + x")) == ({"c"}, False)  # c outside: input c
    assert referenced(parse_expression("d * ch")) == ({"d"}, True)
    assert referenced(parse_expression("x + width")) == (set(), False)


class Images:
    """An Environment over u8 ImageParams, recording each read."""

    x, y, ch = pw.Var("x"), pw.Var("y"), pw.Var("c")

    def __init__(self):
        self.params = {n: pw.ImageParam(pw.UInt(8), 2, n) for n in "abcd"}
        self.reads = []

    def read(self, image, coordinates):
        self.reads.append((image, coordinates))
        coordinates = coordinates or (self.x, self.y)
        return self.params[image][coordinates[:2]]

    def name(self, name):
        return {"x": self.x, "y": self.y, "ch": self.ch, "width": pw.i32(640), "height": pw.i32(480)}[name]


@pytest.mark.parametrize(
    ("text", "type_name"),
    [
        ("a + 1", "uint8"),  # a literal adapts to the image's type, as in Halide
        ("a + b", "uint8"),
        ("a / 2", "float32"),  # / of integers is true division, as in Python
        ("a // 2", "uint8"),
        ("7 / 2", "float32"),
        ("7 // 2", "int32"),
        ("a * 0.5", "float32"),
        ("a > 3", "bool"),
        ("0 < a < 9", "bool"),
        ("u16(a) + b", "uint16"),
        ("i32(a) - 300", "int32"),
        ("abs(i32(a) - 300)", "uint32"),
        ("sqrt(a)", "float32"),
        ("x + y * width", "int32"),
        ("2", "int32"),
        ("1.5", "float32"),
        ("a if x > 3 else 7", "uint8"),
    ],
)
def test_translated_types(text, type_name):
    assert str(translate(text, Images()).type().numpy()) == type_name


def test_reads_and_coordinates():
    env = Images()
    translate("a + b[x - 1, y + 2] + c[x / 2, y * 3] + a[x, y, c]", env)
    assert env.reads[0] == ("a", None)
    x, y, ch = Images.x, Images.y, Images.ch
    image, (cx, cy) = env.reads[1]
    assert image == "b" and str(cx) == str(x - 1) and str(cy) == str(y + 2)
    image, (cx, cy) = env.reads[2]
    assert image == "c" and str(cx) == str(x // 2) and str(cy) == str(y * 3)
    image, coordinates = env.reads[3]
    assert coordinates[0] is x and coordinates[1] is y and coordinates[2] is ch


def test_numbers_are_never_folded_in_python():
    """Two literals are combined by the engine, never by Python: no huge integers, no
    ZeroDivisionError, no hang."""
    assert isinstance(translate("10 ** 10 ** 10", Images()), Expr)
    assert isinstance(translate("1 / 0 + 1 // 0 + 1 % 0", Images()), Expr)
    assert isinstance(translate("9 ** 9 ** 9 ** 9", Images()), Expr)


def test_engine_errors_are_located():
    with pytest.raises(ExpressionError) as caught:
        translate("a + select(a, 1, 2)", Images())
    assert str(caught.value).startswith("the condition of select must be a bool")
    assert str(caught.value).endswith("`select(a, 1, 2)` at column 5")
    assert (caught.value.column, caught.value.length) == (5, 15)
    with pytest.raises(ExpressionError, match=r"needs a boolean operand.*`a and x > 1` at column 1"):
        translate("a and x > 1", Images())
    with pytest.raises(ExpressionError, match=r"lerp needs values of one type.*at column 1"):
        translate("lerp(a, x, 0.5)", Images())


def test_environment_errors_are_located():
    class Missing(Images):
        def read(self, image, coordinates):
            if image == "d":
                raise NodeError("input `d` is not connected")
            return super().read(image, coordinates)

    with pytest.raises(ExpressionError) as caught:
        translate("a + d[x+1, y]", Missing())
    assert str(caught.value) == "input `d` is not connected: `d[x+1, y]` at column 5"


def test_values_through_the_reference_evaluator():
    """A translated expression realized by the engine, against NumPy."""
    image = np.arange(48, dtype=np.uint8).reshape(6, 8) * 5
    env = Images()
    f = pw.Func("f")
    f[Images.x, Images.y] = translate("select(a > 100, a // 2, a + 7) + b[x, y] % 3", env)
    out = pw.Pipeline(f).realize_reference([8, 6], {"a": image, "b": image})
    np.testing.assert_array_equal(out, np.where(image > 100, image // 2, image + 7) + image % 3)
