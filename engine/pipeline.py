"""Pipeline: the outputs of an algorithm and everything they depend on."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.errors import CompileError
from engine.ir import expr as E
from engine.ir.func import Definition, Func
from engine.ir.param import ImageParam, Param
from engine.ir.visit import walk


def definition_exprs(d: Definition) -> list[E.Expr]:
    """Every expression a definition evaluates: value, left-hand side, predicate, RDom bounds."""
    exprs = [d.value, *d.args]
    if d.predicate is not None:
        exprs.append(d.predicate)
    if d.rdom is not None:
        for lo, extent in d.rdom.bounds:
            exprs.extend((lo, extent))
    return exprs


def func_definitions(f: Func) -> list[Definition]:
    return [f.definition(), *f.updates()]


class Pipeline:
    """One or more output Funcs, with the Funcs, images and parameters they reach."""

    def __init__(self, outputs: Func | list[Func] | tuple[Func, ...]) -> None:
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if not outs:
            raise CompileError("a Pipeline needs at least one output Func")
        for f in outs:
            if not isinstance(f, Func):
                raise CompileError(f"a Pipeline's outputs must be Funcs, got {type(f).__name__}")
            if not f.defined():
                raise CompileError(f"output Func `{f.name()}` has no definition")
        self.outputs: list[Func] = outs
        self.funcs: list[Func] = []  # producers before consumers
        self.images: list[ImageParam] = []
        self.params: list[Param] = []
        self._collect()

    def _collect(self) -> None:
        state: dict[int, str] = {}
        images: dict[int, ImageParam] = {}
        params: dict[str, Param] = {}

        def visit(f: Func, path: list[str]) -> None:
            mark = state.get(id(f))
            if mark == "done":
                return
            if mark == "active":
                cycle = " -> ".join([*path[path.index(f.name()) :], f.name()])
                raise CompileError(f"the pipeline has a cycle: {cycle}")
            state[id(f)] = "active"
            for d in func_definitions(f):
                for e in definition_exprs(d):
                    for node in walk(e):
                        if isinstance(node, E.Call) and node.call_kind == "func" and node.target is not f:
                            visit(node.target, [*path, f.name()])
                        elif isinstance(node, E.Call) and node.call_kind == "image":
                            images.setdefault(id(node.target), node.target)
                        elif isinstance(node, E.Variable) and node.kind == "param":
                            if isinstance(node.owner, ImageParam):
                                images.setdefault(id(node.owner), node.owner)
                            elif isinstance(node.owner, Param):
                                params.setdefault(node.name, node.owner)
            state[id(f)] = "done"
            self.funcs.append(f)

        for out in self.outputs:
            visit(out, [])
        self.images = list(images.values())
        self.params = list(params.values())
        seen: dict[str, Any] = {}
        for obj in [*self.images, *self.params]:
            name = obj.name() if isinstance(obj, ImageParam) else obj.name
            if name in seen and seen[name] is not obj:
                raise CompileError(f"two different inputs of the pipeline are both named `{name}`")
            seen[name] = obj

    def loop_nest(self, target: str = "host") -> str:
        """The loop structure the schedules produce (what the schedule inspector shows)."""
        from engine.lower import lower
        from engine.stmt_printer import loop_nest_to_string

        return loop_nest_to_string(lower(self, target).loop_nest)

    def lowered_stmt(self, target: str = "host") -> str:
        """The full lowered statement: allocations, lets, asserts, loads and stores."""
        from engine.lower import lower
        from engine.stmt_printer import stmt_to_string

        return stmt_to_string(lower(self, target).lowered.body)

    def realize_reference(
        self, sizes: list[int] | tuple[int, ...], inputs: dict[str, Any] | None = None
    ) -> np.ndarray | list[np.ndarray]:
        """Evaluate the outputs over [0, size) per dimension with NumPy, ignoring schedules."""
        from engine.reference import realize_reference

        return realize_reference(self, sizes, inputs)
