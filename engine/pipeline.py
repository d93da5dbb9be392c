"""Pipeline: the outputs of an algorithm and everything they depend on."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from pixelweave.engine.errors import CompileError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Definition, Func
from pixelweave.engine.ir.output_buffer import check_output_layout
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Type
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.wrappers import apply_global_wrappers, wrapping_generation

LOOP_NEST_ENTRIES = 16
_loop_nests: OrderedDict[tuple, tuple[tuple, str]] = OrderedDict()


def definition_exprs(d: Definition) -> list[E.Expr]:
    """Every expression a definition evaluates: value, left-hand side, predicate, RDom bounds."""
    exprs = [*d.all_values(), *d.args]
    if d.predicate is not None:
        exprs.append(d.predicate)
    if d.rdom is not None:
        for lo, extent in d.rdom.bounds:
            exprs.extend((lo, extent))
    return exprs


def specialization_conditions(d: Definition) -> list[E.Expr]:
    """The conditions of a stage's specializations, nested ones included (the Params and
    images they read are arguments of the pipeline too)."""
    if d.schedule is None:
        return []
    specs = [s for sched in d.schedule.all_schedules() for s in sched.specializations]
    return [s.condition for s in specs if s.condition is not None]


def output_buffers(f: Func) -> list[tuple[str, Type]]:
    """The output buffers of an output Func, by name and type: one per value of a Tuple,
    named `f.0`, `f.1`, ... as in Halide."""
    types = f.types()
    if len(types) == 1:
        return [(f.name(), types[0])]
    return [(f"{f.name()}.{i}", t) for i, t in enumerate(types)]


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
        self._funcs: list[Func] = []  # producers before consumers
        self._images: list[ImageParam] = []
        self._params: list[Param] = []
        self._compiled: dict[tuple, Any] = {}
        self._collected_at = wrapping_generation()
        self._collect()

    @property
    def funcs(self) -> list[Func]:
        """Every Func the outputs reach, producers before consumers (outputs included)."""
        self._refresh()
        return self._funcs

    @property
    def images(self) -> list[ImageParam]:
        self._refresh()
        return self._images

    @property
    def params(self) -> list[Param]:
        self._refresh()
        return self._params

    def _refresh(self) -> None:
        """Collect again if a wrapper or clone was made since (`f.in_(g)` changes what g calls)."""
        if self._collected_at != wrapping_generation():
            self._collected_at = wrapping_generation()
            self._funcs, self._images, self._params = [], [], []
            self._collect()

    def _collect(self) -> None:
        state: dict[int, str] = {}
        images: dict[int, ImageParam] = {}
        params: dict[str, Param] = {}
        var_names: set[str] = set()

        def visit(f: Func, path: list[str]) -> None:
            mark = state.get(id(f))
            if mark == "done":
                return
            if mark == "active":
                cycle = " -> ".join([*path[path.index(f.name()) :], f.name()])
                raise CompileError(f"the pipeline has a cycle: {cycle}")
            state[id(f)] = "active"
            apply_global_wrappers(f)
            for d in func_definitions(f):
                for e in [*definition_exprs(d), *specialization_conditions(d)]:
                    for node in walk(e):
                        if isinstance(node, E.Call) and node.call_kind == "func" and node.target is not f:
                            visit(node.target, [*path, f.name()])
                        elif isinstance(node, E.Call) and node.call_kind == "image":
                            images.setdefault(id(node.target), node.target)
                        elif isinstance(node, E.Variable) and node.kind == "var":
                            var_names.add(node.name)
                        elif isinstance(node, E.Variable) and node.kind == "param":
                            if isinstance(node.owner, ImageParam):
                                images.setdefault(id(node.owner), node.owner)
                            elif isinstance(node.owner, Param):
                                params.setdefault(node.name, node.owner)
            eviction_key = f.schedule_of().memoize_eviction_key  # memoize(): a run-time argument too
            if eviction_key is not None:
                for node in walk(eviction_key):
                    if isinstance(node, E.Variable) and isinstance(node.owner, Param):
                        params.setdefault(node.name, node.owner)
            state[id(f)] = "done"
            self._funcs.append(f)

        for out in self.outputs:
            visit(out, [])
        self._images = list(images.values())
        self._params = list(params.values())
        clash = sorted(var_names & {p.name for p in self._params})
        if clash:
            raise CompileError(
                f"Param `{clash[0]}` has the same name as a Var used in the pipeline; "
                "names are how variables are bound, so rename one of them"
            )
        seen: dict[str, Any] = {}
        for obj in [*self._images, *self._params]:
            name = obj.name() if isinstance(obj, ImageParam) else obj.name
            if name in seen and seen[name] is not obj:
                raise CompileError(f"two different inputs of the pipeline are both named `{name}`")
            seen[name] = obj

    def loop_nest(self, target: str = "host") -> str:
        """The loop structure the schedules produce (what the schedule inspector shows).
        Remembered per schedule: a pipeline over the same Funcs with the same schedules
        (an editor asks again after each unrelated change) is not lowered again."""
        from pixelweave.engine.lower import lower_loop_nest
        from pixelweave.engine.stmt_printer import loop_nest_to_string

        key = self._loop_nest_key(target)
        hit = _loop_nests.get(key)
        if hit is not None:
            _loop_nests.move_to_end(key)
            return hit[1]
        text = loop_nest_to_string(lower_loop_nest(self, target))
        self._remember_loop_nest(self._loop_nest_key(target), text)  # lowering fills in default schedules
        return text

    def check_schedules(self, target: str = "host") -> None:
        """Lower through every pass, raising what any of them refuses (unroll and vectorize
        included), and remember the loop nest for `loop_nest()`."""
        from pixelweave.engine.lower import lower
        from pixelweave.engine.stmt_printer import loop_nest_to_string

        text = loop_nest_to_string(lower(self, target).loop_nest)
        self._remember_loop_nest(self._loop_nest_key(target), text)

    def _loop_nest_key(self, target: str) -> tuple:
        return (target, tuple(id(f) for f in self.outputs), self._schedule_signature())

    def _remember_loop_nest(self, key: tuple, text: str) -> None:
        # The Funcs are kept with the text, so the ids in the key cannot be reused meanwhile.
        _loop_nests[key] = ((*self.funcs, *self.outputs), text)
        _loop_nests.move_to_end(key)
        while len(_loop_nests) > LOOP_NEST_ENTRIES:
            _loop_nests.popitem(last=False)

    def lowered_stmt(self, target: str = "host") -> str:
        """The full lowered statement: allocations, lets, asserts, loads and stores."""
        from pixelweave.engine.lower import lower
        from pixelweave.engine.stmt_printer import stmt_to_string

        return stmt_to_string(lower(self, target).lowered.body)

    # Halide's ahead-of-time outputs (engine/ahead_of_time.py); fn_name defaults to the first output's name.
    def compile_to_object(self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host") -> None:
        from pixelweave.engine.ahead_of_time import compile_to_object

        compile_to_object(self, filename, arguments, fn_name or self._c_name(), target)

    def compile_to_header(self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host") -> None:
        from pixelweave.engine.ahead_of_time import compile_to_header

        compile_to_header(self, filename, arguments, fn_name or self._c_name(), target)

    def compile_to_static_library(
        self, filename_prefix: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        from pixelweave.engine.ahead_of_time import compile_to_static_library

        compile_to_static_library(self, filename_prefix, arguments, fn_name or self._c_name(), target)

    def compile_to_assembly(
        self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        from pixelweave.engine.ahead_of_time import compile_to_assembly

        compile_to_assembly(self, filename, arguments, fn_name or self._c_name(), target)

    def compile_to_llvm_assembly(
        self, filename: str, arguments: Any = None, fn_name: str = "", target: Any = "host"
    ) -> None:
        from pixelweave.engine.ahead_of_time import compile_to_llvm_assembly

        compile_to_llvm_assembly(self, filename, arguments, fn_name or self._c_name(), target)

    def compile_to_callable(self, arguments: Any = None, target: Any = "host") -> Any:
        """A function of the inputs (in the order of `arguments`) and the output Buffers."""
        from pixelweave.engine.ahead_of_time import Callable

        return Callable(self, arguments, target)

    def _c_name(self) -> str:
        import re

        return re.sub(r"[^0-9A-Za-z_]", "_", self.outputs[0].name())

    def compile_to_lowered_stmt(
        self, filename: str, arguments: Any = None, fmt: Any = "text", target: Any = "host"
    ) -> None:
        """Write the lowered statement to filename as text or, with fmt `StmtOutputFormat.HTML`
        (or "html"), as an HTML page (Halide's compile_to_lowered_stmt; `arguments` is
        accepted for Halide's signature: the pipeline's inputs are found by itself)."""
        from pixelweave.engine.stmt_html import stmt_to_html
        from pixelweave.engine.target_api import engine_target_name

        kind = getattr(fmt, "value", fmt)
        if kind not in ("text", "html"):
            raise CompileError(f"compile_to_lowered_stmt writes text or html, not {fmt!r}")
        text = self.lowered_stmt(engine_target_name(target))
        if kind == "html":
            text = stmt_to_html(text, f"Lowered statement of {self.outputs[0].name()}")
        with open(filename, "w", encoding="utf-8") as out:
            out.write(text)

    def compile(
        self,
        target: str = "host",
        level: str = "full",
        profile: bool = False,
        checked: bool = False,
        device: str | None = None,
    ):
        """Compile to native code: `level="fast"` for quick previews, "full" for speed;
        `profile=True` times each Func; `checked=True` tests every load and store index
        against its buffer and raises RuntimeFailure on the first violation (slower: for
        tests and debugging). target="opencl" runs GPU-scheduled Funcs as OpenCL kernels on
        `device` ("platform:device", else $PIXELWEAVE_OPENCL_DEVICE, else the first usable
        one). Returns a callable `fn(sizes, inputs, out=None)`."""
        import time

        from pixelweave.engine.compiled import Compiled
        from pixelweave.engine.lower import deep_recursion, lower
        from pixelweave.engine.runtime.jit import compile_pipeline, compiled_by_structure
        from pixelweave.engine.stmt_printer import loop_nest_to_string
        from pixelweave.engine.target_api import Target, engine_target_name

        profile = profile or (isinstance(target, Target) and target.profile())
        target = engine_target_name(target)
        if checked and target == "opencl":
            raise CompileError("checked=True is available for CPU targets only, not target='opencl'")
        if profile and target == "opencl":
            raise CompileError("profile=True is available for CPU targets only, not target='opencl'")
        key = (target, level, profile, checked, device, self._schedule_signature())
        cached = self._compiled.get(key)
        if cached is not None:
            return cached
        # checked code is never filed under (or taken from) the pre-lowering key, which does
        # not tell checked and unchecked code apart
        structure = None if checked or self._traced() else self.structural_key(target)
        if structure is not None and target != "opencl":
            hit = compiled_by_structure(structure, level, profile, target)
            if hit is not None:
                native, loop_nest = hit
                compiled = Compiled(self, None, native, 0.0, loop_nest=loop_nest, from_structure_cache=True)
                self._compiled[key] = compiled
                return compiled
        start = time.perf_counter()
        lowering = lower(self, target, name=self._symbol_name())
        lower_seconds = time.perf_counter() - start
        if target == "opencl":
            from pixelweave.engine.runtime.opencl_host import compile_opencl

            with deep_recursion():
                native = compile_opencl(lowering.lowered, device)
            compiled = Compiled(self, lowering, native, lower_seconds)
            self._compiled[key] = compiled
            return compiled
        with deep_recursion():
            native = compile_pipeline(
                lowering.lowered,
                level=level,
                profile=profile,
                target=target,
                structure=structure,
                loop_nest=loop_nest_to_string(lowering.loop_nest),
                checked=checked,
            )
        compiled = Compiled(self, lowering, native, lower_seconds)
        self._compiled[key] = compiled
        return compiled

    def structural_key(self, target: str = "host") -> str:
        """A hash of the algorithm, the schedules and the inputs' types, computed without
        lowering: equal structure, equal key (Param values are not part of it)."""
        from pixelweave.engine.structural_key import structural_key

        return structural_key(self, target, self._symbol_name())

    def load_native_code(self, code: Any, target: str = "host"):
        """Adopt native code compiled for this pipeline elsewhere (`fn.native.native_code()`,
        e.g. on a Dask client): `compile(target, code.level)` then returns it, and nothing is
        lowered or compiled here. CompileError if its arguments are not this pipeline's."""
        from pixelweave.engine.compiled import Compiled
        from pixelweave.engine.runtime.jit import load_native_code

        expected = {(im.name(), "buffer", str(im.type()), im.dimensions(), False) for im in self.images}
        expected |= {(q.name, "scalar", str(q.type()), 0, False) for q in self.params}
        expected |= {
            (name, "buffer", str(t), f.dimensions(), True) for f in self.outputs for name, t in output_buffers(f)
        }
        given = {(a.name, a.kind, str(a.type), a.dimensions, a.is_output) for a in code.arguments}
        if given != expected:
            differ = sorted(n for n, *_ in given ^ expected)
            raise CompileError(
                f"native code `{code.name}` was compiled for another pipeline: its arguments differ in "
                f"{', '.join(dict.fromkeys(differ))}"
            )
        compiled = Compiled(self, None, load_native_code(code), 0.0)
        profile = bool(code.profile_names)
        # Served to compile() without checked=True (shipped code is compiled unchecked).
        self._compiled[(target, code.level, profile, False, None, self._schedule_signature())] = compiled
        return compiled

    def compile_to_library(self, name: str, directory: str = ".", target: str = "host", checked: bool = False):
        """Write NAME.o, libNAME.so and NAME.h (the C ABI: buffer descriptors, scalar
        parameters, an int error code and NAME_error_message()) into directory; checked=True
        as in compile(). target="opencl" embeds the kernels (and writes NAME.cl, their source)."""
        import re

        from pixelweave.engine.lower import deep_recursion, lower
        from pixelweave.engine.runtime.library import export_library
        from pixelweave.engine.target_api import engine_target_name

        target = engine_target_name(target)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise CompileError(f"library name {name!r} must be a C identifier (letters, digits, underscores)")
        if checked and target == "opencl":
            raise CompileError("checked=True is available for CPU targets only, not target='opencl'")
        lowering = lower(self, target if target == "opencl" else "host", name=name)
        with deep_recursion():
            return export_library(lowering.lowered, name, directory, target, checked=checked)

    def auto_schedule(self, target: str = "host", method: str = "analytic", **options: Any) -> str:
        """Choose a schedule for every Func automatically (from the `set_estimate`s of the
        outputs and inputs), apply it and return it as Halide-style text. See
        engine/autoschedule for the methods and their options."""
        from pixelweave.engine.autoschedule import auto_schedule

        return auto_schedule(self, target, method, **options).text

    def realize(
        self,
        sizes: list[int] | tuple[int, ...],
        inputs: dict[str, Any] | None = None,
        target: str = "host",
        out: np.ndarray | list[np.ndarray] | None = None,
        checked: bool = False,
    ) -> np.ndarray | list[np.ndarray]:
        """Compile once (cached by schedule and target) and run; like realize_reference.
        checked=True compiles with every load and store index tested (see compile).
        Given `Buffer`s instead of sizes (one per output), computes over their domains
        (mins included) into them, as Halide's `realize(buffer)`, and returns them."""
        from pixelweave.engine.realize_buffers import as_output_buffers, realize_into

        buffers = as_output_buffers(sizes)
        if buffers is not None:
            realize_into(self, buffers, inputs, target, checked)
            return sizes
        for f in self.outputs:
            check_output_layout(f, [0] * len(sizes), list(sizes), None)
        return self.compile(target, checked=checked)(sizes, inputs, out)

    def realize_buffers(self, sizes: Any, target: Any = "host") -> Any:
        """Halide's `realize`: sizes give new `Buffer`s (laid out as output_buffer() strides
        ask), Buffers are filled over their mins; returns one Buffer or a list."""
        from pixelweave.engine.realize_buffers import allocate_outputs, as_output_buffers, realize_into

        buffers = as_output_buffers(sizes)
        if buffers is None:
            buffers = allocate_outputs(self, sizes)
        realize_into(self, buffers, None, target, False)
        return buffers[0] if len(buffers) == 1 else buffers

    def infer_input_bounds(self, sizes: Any) -> None:
        """Give every input image without a buffer one covering what realizing over sizes
        reads (Halide's `infer_input_bounds`)."""
        from pixelweave.engine.realize_buffers import infer_input_bounds

        infer_input_bounds(self, sizes)

    def _traced(self) -> bool:
        """Whether any Func or image is traced (its code reports to sites registered while
        lowering, so it is never taken from the cache keyed before lowering)."""
        return any(f.traced() for f in self.funcs) or any(im.traces_loads() for im in self.images)

    def _symbol_name(self) -> str:
        import re

        name = re.sub(r"[^0-9A-Za-z_]", "_", self.outputs[0].name())
        return f"pw_{name}"

    def _schedule_signature(self) -> tuple:
        """Everything about the Funcs that changes the generated code, cheaply."""
        parts = []
        for f in self.funcs:
            stages = [repr(d.schedule) for d in func_definitions(f)]
            constraints = f.output_constraints()
            layout = repr(sorted(constraints.constraints.items())) if constraints is not None else ""
            traced = tuple(sorted(f.traced()))
            parts.append((id(f), f.num_update_definitions(), repr(f.schedule_of()), tuple(stages), layout, traced))
        parts.append(tuple(im.name() for im in self.images if im.traces_loads()))
        return tuple(parts)

    def realize_reference(
        self, sizes: list[int] | tuple[int, ...], inputs: dict[str, Any] | None = None, mins: list[int] | None = None
    ) -> np.ndarray | list[np.ndarray]:
        """Evaluate the outputs over [mins, mins + size) per dimension (mins default to 0)
        with NumPy, ignoring schedules."""
        from pixelweave.engine.reference import realize_reference

        return realize_reference(self, sizes, inputs, mins)
