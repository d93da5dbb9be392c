"""The restricted expression language of the Custom expression node.

A user types a pixel formula in Python syntax (`(a[x-1, y] + a[x+1, y]) / 2`,
`select(a > 0.5, 1.0, 0.0)`). The text is parsed with `ast.parse(mode="eval")` and only an
explicit whitelist of syntax is translated into engine expressions; nothing is ever
evaluated, executed or compiled as Python. Everything else raises ExpressionError, whose
message names the offending token and its column and which carries `.line`, `.column`
(1-based) and `.length` so that an editor can underline it.

The language:
- numbers (`3`, `0.5`, `True`), the inputs `a`, `b`, `c`, `d` (a bare name reads the pixel
  itself), the coordinates `x`, `y`, `ch` (the channel) and `width`, `height`;
- reads at other coordinates: `a[x-1, y+2]`, `a[x*2, y/2]`, `a[x, y, 0]`. Each coordinate
  is an integer expression of x, y, ch, width, height and integer constants using + and -,
  multiplication by an integer constant and division (rounding down) by a positive integer
  constant. Inside brackets `c` also names the channel, as in Halide's `f[x, y, c]`: an
  image can never be a coordinate, so there is no ambiguity with input `c`;
- `+ - * / // % **`, unary `-`, comparisons (chained as in Python), `and`, `or`, `not`,
  `p if q else r`. As in Python, `/` of two integers gives a float and `//` rounds down;
- calls of the functions in FUNCTIONS.

Checking (parse_expression) needs no engine; translation (translate) asks an Environment
for the inputs and names, so the node decides layouts, boundary conditions and scaling.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pixelweave.engine.errors import PixelweaveError
from pixelweave.engine.ir.coerce import is_python_number, to_expr
from pixelweave.engine.ir.expr import Expr
from pixelweave.nodes.errors import NodeError

import pixelweave as pw

MAX_LENGTH = 2000
MAX_DEPTH = 100
FLOAT32_MAX = 3.4028234663852886e38

IMAGES = ("a", "b", "c", "d")
COORDINATES = ("x", "y", "ch")
SIZES = ("width", "height")
NAMES = (*IMAGES, *COORDINATES, *SIZES)
# Inside brackets these name coordinates (`c` is the channel there, as in f[x, y, c]).
COORDINATE_NAMES = {"x": "x", "y": "y", "c": "ch", "ch": "ch", "width": "width", "height": "height"}


def _cast(t: pw.Type) -> Callable[[Any], Expr]:
    return lambda e: pw.cast(t, e)


# name: (fewest arguments, most arguments (None: any number), the engine function)
FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Expr]]] = {
    "select": (3, None, pw.select),
    "min": (2, None, pw.min),
    "max": (2, None, pw.max),
    "clamp": (3, 3, pw.clamp),
    "abs": (1, 1, pw.abs),
    "sqrt": (1, 1, pw.sqrt),
    "exp": (1, 1, pw.exp),
    "log": (1, 1, pw.log),
    "pow": (2, 2, pw.pow),
    "sin": (1, 1, pw.sin),
    "cos": (1, 1, pw.cos),
    "tan": (1, 1, pw.tan),
    "atan2": (2, 2, pw.atan2),
    "floor": (1, 1, pw.floor),
    "ceil": (1, 1, pw.ceil),
    "round": (1, 1, pw.round),
    "lerp": (3, 3, pw.lerp),
    "f32": (1, 1, _cast(pw.Float(32))),
    "u8": (1, 1, _cast(pw.UInt(8))),
    "u16": (1, 1, _cast(pw.UInt(16))),
    "i32": (1, 1, _cast(pw.Int(32))),
}

_BINARY: dict[type, tuple[str, Callable[[Any, Any], Any] | None]] = {
    ast.Add: ("+", lambda p, q: p + q),
    ast.Sub: ("-", lambda p, q: p - q),
    ast.Mult: ("*", lambda p, q: p * q),
    ast.Div: ("/", None),  # true division: see _Translator._divide
    ast.FloorDiv: ("//", lambda p, q: p // q),
    ast.Mod: ("%", lambda p, q: p % q),
    ast.Pow: ("**", pw.pow),
    ast.BitAnd: ("&", None),
    ast.BitOr: ("|", None),
    ast.BitXor: ("^", None),
    ast.LShift: ("<<", None),
    ast.RShift: (">>", None),
    ast.MatMult: ("@", None),
}
_ALLOWED_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)

_COMPARE: dict[type, Callable[[Any, Any], Expr]] = {
    ast.Lt: lambda p, q: p < q,
    ast.LtE: lambda p, q: p <= q,
    ast.Gt: lambda p, q: p > q,
    ast.GtE: lambda p, q: p >= q,
    ast.Eq: lambda p, q: p == q,
    ast.NotEq: lambda p, q: p != q,
}

# What a node kind outside the language is called in messages.
_KIND_NAMES = {
    ast.Attribute: "attributes",
    ast.Lambda: "lambdas",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generators",
    ast.NamedExpr: "assignments",
    ast.JoinedStr: "strings",
    ast.Starred: "starred arguments",
    ast.Slice: "slices",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}

_COORDINATE_RULE = "coordinates must be x, y or c plus an integer offset (or x*k, x/k, an integer, width, height)"


class ExpressionError(NodeError):
    """A custom expression that cannot be used; `line`, `column` (1-based) and `length`
    (characters) locate the offending text, `offset` is its 0-based index in the text."""

    def __init__(self, message: str, line: int = 1, column: int = 1, length: int = 1, offset: int = 0) -> None:
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.offset = offset
        super().__init__(message)


class Environment(Protocol):
    """What translation asks of the node: the value of an input read at some coordinates
    (None: at the pixel itself) and the value of a coordinate or size name."""

    def read(self, image: str, coordinates: tuple[Expr, ...] | None) -> Expr: ...

    def name(self, name: str) -> Expr: ...


@dataclass(frozen=True)
class _Source:
    """The text, with the leading whitespace that ast.parse would reject set aside."""

    text: str
    skip: int  # characters of leading whitespace

    @property
    def body(self) -> str:
        return self.text[self.skip :]

    def offset(self, lineno: int, byte_col: int) -> int:
        """Character index in `text` of an ast position (line of the body, UTF-8 byte column)."""
        lines = self.body.split("\n")
        lineno = min(max(lineno, 1), len(lines))
        before = sum(len(line) + 1 for line in lines[: lineno - 1])
        column = len(lines[lineno - 1].encode()[:byte_col].decode(errors="ignore"))
        return self.skip + before + column

    def error(self, message: str, start: int, end: int) -> ExpressionError:
        """ExpressionError for text[start:end], its position appended to the message."""
        start = min(max(start, 0), len(self.text))
        line = self.text.count("\n", 0, start) + 1
        column = start - (self.text.rfind("\n", 0, start) + 1) + 1
        where = f"column {column}" if "\n" not in self.text else f"line {line}, column {column}"
        return ExpressionError(f"{message} at {where}", line, column, end - start, start)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
        return start, max(end, start + 1)

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return _shorten(self.text[start:end])

    def node_error(self, message: str, node: ast.AST) -> ExpressionError:
        return self.error(message, *self.span(node))


def _shorten(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse(text: str) -> tuple[_Source, ast.Expression]:
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"the expression is {len(text)} characters long, more than the {MAX_LENGTH} allowed",
            column=MAX_LENGTH + 1,
            offset=MAX_LENGTH,
        )
    body = text.lstrip()
    source = _Source(text, len(text) - len(body))
    if not body.strip():
        raise source.error("the expression is empty", 0, 1)
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError as e:
        start = source.offset(e.lineno or 1, 0) + (e.offset or 0) - 1 if e.offset and e.offset > 0 else len(text)
        raise source.error(f"syntax error: {e.msg}", start, start + 1) from None
    except (ValueError, MemoryError, RecursionError) as e:  # null bytes, absurd nesting
        raise source.error(f"cannot parse the expression: {e}", 0, 1) from None
    _check_depth(source, tree)
    return source, tree


def _check_depth(source: _Source, tree: ast.AST) -> None:
    """Reject deep nesting before any recursive walk (iteratively, so it cannot overflow)."""
    stack = [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise source.node_error(f"the expression is nested too deeply (more than {MAX_DEPTH} levels)", node)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))


def parse_expression(text: str) -> ast.Expression:
    """The checked syntax tree of an expression; ExpressionError on anything outside the
    language. Needs no engine, inputs or types: an editor can call it on every keystroke."""
    source, tree = _parse(text)
    _Checker(source).check(tree.body)
    return tree


def referenced(tree: ast.Expression) -> tuple[set[str], bool]:
    """The inputs an expression reads and whether it uses the channel coordinate."""
    images: set[str] = set()
    channel = False

    def walk(node: ast.AST, in_brackets: bool) -> None:
        nonlocal channel
        if isinstance(node, ast.Subscript):
            images.add(node.value.id)  # type: ignore[attr-defined] - checked: a Name
            walk(node.slice, True)
            return
        if isinstance(node, ast.Name):
            if in_brackets or node.id not in IMAGES:
                channel = channel or COORDINATE_NAMES.get(node.id) == "ch"
            else:
                images.add(node.id)
            return
        for child in ast.iter_child_nodes(node):
            walk(child, in_brackets)

    walk(tree.body, False)
    return images, channel


def translate(text: str, environment: Environment) -> Expr:
    """The engine expression of `text`; ExpressionError (located) on any problem, engine
    type errors included."""
    source, tree = _parse(text)
    _Checker(source).check(tree.body)
    return to_expr(_Translator(source, environment).visit(tree.body))


class _Checker:
    """Walks a parsed expression and rejects everything outside the language."""

    def __init__(self, source: _Source) -> None:
        self.source = source

    def fail(self, message: str, node: ast.AST) -> ExpressionError:
        return self.source.node_error(message, node)

    def check(self, node: ast.AST) -> None:
        method = getattr(self, f"check_{type(node).__name__.lower()}", None)
        if method is None:
            kind = _KIND_NAMES.get(type(node), "this syntax")
            verb = "is" if kind in ("this syntax", "await", "yield") else "are"
            raise self.fail(f"{kind} {verb} not allowed in an expression: `{self.source.segment(node)}`", node)
        method(node)

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            if not -(2**31) <= value < 2**31:
                raise self.fail(f"the integer `{self.source.segment(node)}` does not fit in 32 bits", node)
            return
        if isinstance(value, float):
            if not abs(value) <= FLOAT32_MAX:
                raise self.fail(f"the number `{self.source.segment(node)}` is too large for a 32-bit float", node)
            return
        what = "strings" if isinstance(value, (str, bytes)) else "only numbers are allowed as constants; this"
        verb = "are not allowed" if what == "strings" else "is not one"
        raise self.fail(f"{what} {verb}: `{self.source.segment(node)}`", node)

    def check_name(self, node: ast.Name) -> None:
        if node.id in NAMES:
            return
        if node.id in FUNCTIONS:
            raise self.fail(f"`{node.id}` is a function: call it as {node.id}(...); found `{node.id}`", node)
        known = "a, b, c, d (inputs), x, y, ch (coordinates), width, height"
        raise self.source.node_error(f"unknown name `{node.id}` (the names are {known})", node)

    def check_binop(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, _ALLOWED_BINARY):
            symbol = _BINARY.get(type(node.op), ("?", None))[0]
            raise self._operator_error(node, symbol)
        self.check(node.left)
        self.check(node.right)

    def _operator_error(self, node: ast.BinOp, symbol: str) -> ExpressionError:
        hint = "; use and, or, not for conditions" if symbol in "&|^" else ""
        return self._between(f"the operator `{symbol}` is not allowed{hint}; found", symbol, node.left, node.right)

    def _between(self, message: str, symbol: str, left: ast.AST, right: ast.AST) -> ExpressionError:
        """An error pointing at an operator, found in the text between its operands."""
        _, left_end = self.source.span(left)
        right_start, _ = self.source.span(right)
        at = self.source.text.find(symbol.split()[0], left_end, right_start)
        if at < 0:
            return self.source.error(f"{message} `{symbol}`", left_end, right_start)
        end = self.source.text.find(symbol.split()[-1], at) + len(symbol.split()[-1])
        return self.source.error(f"{message} `{self.source.text[at:end]}`", at, end)

    def check_unaryop(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Invert):
            raise self.fail(f"the operator `~` is not allowed; use `not`; found `{self.source.segment(node)}`", node)
        self.check(node.operand)

    def check_boolop(self, node: ast.BoolOp) -> None:
        for v in node.values:
            self.check(v)

    def check_compare(self, node: ast.Compare) -> None:
        operands = (node.left, *node.comparators)
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            if type(op) not in _COMPARE:
                word = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}[type(op)]
                raise self._between("only ==, !=, <, <=, >, >= compare; found", word, left, right)
        for v in (node.left, *node.comparators):
            self.check(v)

    def check_ifexp(self, node: ast.IfExp) -> None:
        for v in (node.test, node.body, node.orelse):
            self.check(v)

    def check_call(self, node: ast.Call) -> None:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            listed = ", ".join(FUNCTIONS)
            raise self.fail(f"calls are limited to {listed}: `{self.source.segment(node.func)}`", node.func)
        if node.keywords:
            keyword = node.keywords[0]
            raise self.fail(f"`{name}` takes no keyword arguments: `{self.source.segment(keyword)}`", keyword)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.check(arg)
        fewest, most, _ = FUNCTIONS[name]
        n = len(node.args)
        if n < fewest or (most is not None and n > most) or (name == "select" and n % 2 == 0):
            if name == "select":
                wanted = "3, 5, 7, ... arguments (c1, v1, c2, v2, ..., default)"
            elif most is None:
                wanted = f"at least {fewest} arguments"
            else:
                wanted = f"{fewest} argument{'s' if fewest > 1 else ''}"
            raise self.fail(f"`{name}` takes {wanted}, got {n}: `{self.source.segment(node)}`", node)
        for arg in node.args:
            self.check(arg)

    def check_subscript(self, node: ast.Subscript) -> None:
        if not (isinstance(node.value, ast.Name) and node.value.id in IMAGES):
            raise self.fail(
                f"only the inputs a, b, c, d can be read at coordinates: `{self.source.segment(node.value)}`",
                node.value,
            )
        coordinates = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(coordinates) not in (2, 3):
            raise self.fail(
                f"an input is read at two coordinates [x, y] or three [x, y, c], "
                f"not {len(coordinates)}: `{self.source.segment(node)}`",
                node,
            )
        for coordinate in coordinates:
            if not _is_coordinate(coordinate):
                raise self.fail(f"{_COORDINATE_RULE}: `{self.source.segment(coordinate)}`", coordinate)


def _int_constant(node: ast.AST) -> int | None:
    """The value of an integer literal, possibly negated; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _int_constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and type(node.value) is int and -(2**31) <= node.value < 2**31:
        return node.value
    return None


def _is_coordinate(node: ast.AST) -> bool:
    """Whether node is an integer expression of the coordinate names (see the module doc)."""
    if _int_constant(node) is not None:
        return True
    if isinstance(node, ast.Name):
        return node.id in COORDINATE_NAMES
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_coordinate(node.operand)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return _is_coordinate(node.left) and _is_coordinate(node.right)
        if isinstance(node.op, ast.Mult):
            if _int_constant(node.left) is not None:
                return _is_coordinate(node.right)
            return _int_constant(node.right) is not None and _is_coordinate(node.left)
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):
            divisor = _int_constant(node.right)
            return divisor is not None and divisor > 0 and _is_coordinate(node.left)
    return False


class _Translator:
    """Turns a checked syntax tree into engine expressions. Python numbers stay Python
    numbers where Halide lets literals adapt to the other operand's type (`a + 1` on u8
    stays u8), but two numbers are never combined in Python (no constant folding of
    `10 ** 10 ** 10`): the left one becomes an engine constant first."""

    def __init__(self, source: _Source, environment: Environment) -> None:
        self.source = source
        self.env = environment

    def visit(self, node: ast.AST) -> Any:
        try:
            return getattr(self, f"visit_{type(node).__name__.lower()}")(node)
        except ExpressionError:
            raise
        except (PixelweaveError, ZeroDivisionError, OverflowError) as e:
            message = e.detail if isinstance(e, NodeError) else str(e)
            raise self.source.node_error(f"{message}: `{self.source.segment(node)}`", node) from None

    def visit_constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_name(self, node: ast.Name) -> Expr:
        if node.id in IMAGES:
            return self.env.read(node.id, None)
        return self.env.name(node.id)

    def visit_subscript(self, node: ast.Subscript) -> Expr:
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        coordinates = tuple(to_expr(self._coordinate(e)) for e in elements)
        return self.env.read(node.value.id, coordinates)  # type: ignore[attr-defined]

    def _coordinate(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.env.name(COORDINATE_NAMES[node.id])
        if isinstance(node, ast.UnaryOp):
            value = self._coordinate(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        assert isinstance(node, ast.BinOp)
        left, right = _engine_pair(self._coordinate(node.left), self._coordinate(node.right))
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left // right  # a positive constant divisor: rounds down, as x/2 should

    def visit_binop(self, node: ast.BinOp) -> Any:
        left, right = _engine_pair(self.visit(node.left), self.visit(node.right))
        if isinstance(node.op, ast.Div):
            return _divide(left, right)
        fn = _BINARY[type(node.op)][1]
        assert fn is not None
        return fn(left, right)

    def visit_unaryop(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return pw.logical_not(to_expr(value))
        if isinstance(node.op, ast.USub):
            return -value
        return value

    def visit_boolop(self, node: ast.BoolOp) -> Expr:
        combine = pw.logical_and if isinstance(node.op, ast.And) else pw.logical_or
        result = to_expr(self.visit(node.values[0]))
        for v in node.values[1:]:
            result = combine(result, to_expr(self.visit(v)))
        return result

    def visit_compare(self, node: ast.Compare) -> Expr:
        operands = [self.visit(v) for v in (node.left, *node.comparators)]
        result = None
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            test = _COMPARE[type(op)](*_engine_pair(left, right))
            result = test if result is None else pw.logical_and(result, test)
        assert result is not None
        return result

    def visit_ifexp(self, node: ast.IfExp) -> Expr:
        return pw.select(to_expr(self.visit(node.test)), self.visit(node.body), self.visit(node.orelse))

    def visit_call(self, node: ast.Call) -> Expr:
        _, _, fn = FUNCTIONS[node.func.id]  # type: ignore[attr-defined] - checked: a Name
        args = [self.visit(a) for a in node.args]
        if args and all(is_python_number(a) for a in args):
            args[0] = to_expr(args[0])
        return fn(*args)


def _engine_pair(left: Any, right: Any) -> tuple[Any, Any]:
    """Two operands, the left one an engine constant when both are Python numbers."""
    if is_python_number(left) and is_python_number(right):
        left = to_expr(left)
    return left, right


def _is_integer(value: Any) -> bool:
    if is_python_number(value):
        return isinstance(value, int)
    t = to_expr(value).type()
    return not t.is_float()


def _divide(left: Any, right: Any) -> Expr:
    """Python's `/`: true division, so that two integers give a float32."""
    if _is_integer(left) and _is_integer(right):
        left = pw.f32(left)
    return left / right
