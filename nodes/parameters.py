"""Parameters of node types: their kind, default, range and unit, and the check of a value.

A parameter value in a document is plain JSON; `Parameter.check` turns it into the Python
value that `build()` receives, or raises ParameterError saying what is wrong.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from pixelweave.nodes.errors import ParameterError

RUNTIME_KINDS = ("int", "float", "colour", "matrix", "curve")
KINDS = ("int", "float", "bool", "choice", "colour", "matrix", "curve", "expression", "string", "data")


@dataclass(frozen=True)
class Parameter:
    """One knob of a node type.

    kind: int, float, bool, choice (one of `choices`), colour (list of 3 floats in
    [0, 1]), matrix (rows of floats: a convolution kernel), curve (points [x, y] with
    increasing x in [0, 1]: a lookup curve), expression (text parsed by the custom
    expression parser), string, data (plain JSON data: objects, lists, strings, numbers,
    booleans and null, checked further by the node type's check_values; a lifted stage's
    definition).
    """

    name: str
    kind: str
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    doc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    runtime: bool = False

    def __post_init__(self) -> None:
        if self.runtime and self.kind not in RUNTIME_KINDS:
            raise ValueError(
                f"parameter `{self.name}`: a {self.kind} parameter cannot be run-time; run-time kinds are "
                f"{', '.join(RUNTIME_KINDS)}"
            )
        if self.kind not in KINDS:
            raise ValueError(f"parameter `{self.name}`: unknown kind {self.kind!r}; kinds are {', '.join(KINDS)}")
        if self.kind == "choice" and self.default not in self.choices:
            raise ValueError(f"parameter `{self.name}`: default {self.default!r} is not one of its choices")
        self.check(self.default)  # a node type with a bad default fails when it is defined

    def check(self, value: Any) -> Any:
        """The value as build() receives it; ParameterError if it does not fit."""
        checker = getattr(self, f"_check_{self.kind}")
        return checker(value)

    def describe_range(self) -> str:
        if self.minimum is None and self.maximum is None:
            return ""
        lo = "-inf" if self.minimum is None else _num(self.minimum)
        hi = "inf" if self.maximum is None else _num(self.maximum)
        return f"[{lo}, {hi}]"

    def _fail(self, message: str) -> ParameterError:
        return ParameterError(f"parameter `{self.name}` {message}")

    def _in_range(self, v: float) -> None:
        if (self.minimum is not None and v < self.minimum) or (self.maximum is not None and v > self.maximum):
            unit = f" {self.unit}" if self.unit else ""
            raise self._fail(f"is {_num(v)}{unit}, outside its range {self.describe_range()}")

    def _check_int(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self._fail(f"needs an integer, got {value!r}")
        self._in_range(value)
        return int(value)

    def _check_float(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(f"needs a number, got {value!r}")
        if not math.isfinite(value):
            raise self._fail(f"needs a finite number, got {value!r}")
        self._in_range(float(value))
        return float(value)

    def _check_bool(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self._fail(f"needs true or false, got {value!r}")
        return value

    def _check_choice(self, value: Any) -> str:
        if value not in self.choices:
            raise self._fail(f"is {value!r}, which is not one of {', '.join(map(repr, self.choices))}")
        return value

    def _check_colour(self, value: Any) -> tuple[float, float, float]:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            raise self._fail(f"needs a colour [r, g, b] with components in [0, 1], got {value!r}")
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise self._fail(f"needs colour components in [0, 1], got {v!r}")
            out.append(float(v))
        return (out[0], out[1], out[2])

    def _check_matrix(self, value: Any) -> tuple[tuple[float, ...], ...]:
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(r, (list, tuple)) for r in value):
            raise self._fail(f"needs a matrix given as a list of rows, got {value!r}")
        width = len(value[0])
        if width == 0 or any(len(r) != width for r in value):
            raise self._fail("needs rows of equal, non-zero length")
        limit = int(self.extra.get("max_size", 15))
        if len(value) > limit or width > limit:
            raise self._fail(f"is {width}x{len(value)}, larger than the largest allowed kernel {limit}x{limit}")
        rows = []
        for r in value:
            for v in r:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise self._fail(f"needs finite numbers, got {v!r}")
            rows.append(tuple(float(v) for v in r))
        return tuple(rows)

    def _check_curve(self, value: Any) -> tuple[tuple[float, float], ...]:
        if not isinstance(value, (list, tuple)) or len(value) < 2:
            raise self._fail(f"needs at least two points [x, y], got {value!r}")
        points = []
        for p in value:
            if (
                not isinstance(p, (list, tuple))
                or len(p) != 2
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in p)
            ):
                raise self._fail(f"needs points [x, y] of numbers, got {p!r}")
            if not (0 <= p[0] <= 1 and 0 <= p[1] <= 1):
                raise self._fail(f"needs points inside [0, 1] x [0, 1], got {list(p)}")
            points.append((float(p[0]), float(p[1])))
        if any(b[0] <= a[0] for a, b in itertools.pairwise(points)):
            raise self._fail("needs points with strictly increasing x")
        return tuple(points)

    def _check_expression(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self._fail(f"needs a non-empty expression, got {value!r}")
        return value

    def _check_string(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self._fail(f"needs a string, got {value!r}")
        return value

    def _check_data(self, value: Any) -> Any:
        problem = _json_problem(value, 0)
        if problem is not None:
            raise self._fail(f"needs plain JSON data: {problem}")
        return value


DATA_DEPTH_LIMIT = 64


def _json_problem(value: Any, depth: int) -> str | None:
    """Why value is not plain JSON data (or nests deeper than DATA_DEPTH_LIMIT), or None."""
    if depth > DATA_DEPTH_LIMIT:
        return f"it nests deeper than {DATA_DEPTH_LIMIT} levels"
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r} is not a finite number"
    if isinstance(value, (list, tuple)):
        return next((p for v in value if (p := _json_problem(v, depth + 1)) is not None), None)
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"key {k!r} is not a string"
            p = _json_problem(v, depth + 1)
            if p is not None:
                return p
        return None
    return f"{type(value).__name__} is not JSON"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
