"""Values that read both as attributes and as Halide's accessor methods.

The engine reads `t.bits`, `v.name` as attributes; Halide's bindings spell them `t.bits()`,
`v.name()`. An int or str subclass that returns itself when called serves both, so Halide
code runs unchanged and engine code (and every branch that uses the attributes) keeps working.
"""

from __future__ import annotations


class CallableInt(int):
    """An int that returns its plain value when called."""

    __slots__ = ()

    def __call__(self) -> int:
        return int(self)


class CallableStr(str):
    """A str that returns its plain value when called."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)
