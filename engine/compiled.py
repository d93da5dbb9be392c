"""The user-facing callable of a compiled pipeline: sizes and inputs in, NumPy arrays out.

It wraps the native code from the backend with the conventions of `realize_reference`:
`sizes` in Func dimension order, `inputs` by name (falling back to values given with
`.set()` and Param defaults), outputs as arrays of shape `sizes[::-1]`, or written into
`out=` arrays, which avoids fresh allocations when a pipeline runs repeatedly. Like
Halide's realize, a call that allocates its outputs makes them as large as the schedule
writes (output_window.py) and returns the requested window.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from pixelweave.engine.errors import InputError, RuntimeFailure
from pixelweave.engine.ir.param import check_scalar
from pixelweave.engine.lower import LoweringResult
from pixelweave.engine.reference import check_sizes, resolve_inputs
from pixelweave.engine.runtime.buffer import aligned_empty

if TYPE_CHECKING:
    from pixelweave.engine.pipeline import Pipeline
    from pixelweave.engine.runtime.jit import CompiledPipeline

_FROM_OUT, _FROM_IMAGE, _FROM_PARAM = range(3)  # where _call_in_order takes an argument
_MISSING = object()
SMALL_OUTPUT_BYTES = 16  # outputs up to this size are allocated by NumPy alone (_fresh_output)


class Compiled:
    """Call as `fn(sizes, inputs=None, out=None)`; returns an array (a list for several outputs).

    `compile_seconds` is the time lowering and LLVM took; `last_run_seconds` the time of
    the last native call; `last_profile` the seconds per Func of a profiling build.
    `lowering` is None for native code compiled in another process (Pipeline.load_native_code);
    for code from the cache keyed before lowering it is lowered on first use.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        lowering: LoweringResult | None,
        native: CompiledPipeline,
        lower_seconds: float,
        *,
        loop_nest: str | None = None,
        from_structure_cache: bool = False,
    ) -> None:
        self.pipeline = pipeline
        self._lowering = lowering
        self._loop_nest = loop_nest
        self.from_structure_cache = from_structure_cache  # nothing was lowered or compiled for it
        self.native = native
        self.compile_seconds = lower_seconds + native.compile_seconds
        self.output_names = [a.name for a in native.arguments if a.is_output]
        self._outputs = [a for a in native.arguments if a.is_output]
        self._output_dtype = self._outputs[0].type.numpy() if self._outputs else None
        self._output_dtypes = [a.type.numpy() for a in self._outputs]
        self._input_names: frozenset[str] | None = None  # _plain_arguments' view of the inputs, made once
        self._images: list[tuple[Any, str, np.dtype, int]] = []
        self._params: list[tuple[Any, Any, int, int]] = []
        self._plan: list[tuple[int, str, Any]] | None = None  # _order_plan's, made once
        self._plan_made = False

    @property
    def lowering(self) -> LoweringResult | None:
        """The lowering this code came from: lowered on first use when the code came from the
        cache keyed before lowering; None for native code adopted from another process."""
        if self._lowering is None and self.from_structure_cache:
            from pixelweave.engine.lower import lower

            self._lowering = lower(self.pipeline, self.native.target.name, name=self.native.name)
        return self._lowering

    @property
    def loop_nest_text(self) -> str | None:
        """The loop nest as the inspector prints it (kept with cached code, so no lowering);
        None for adopted native code."""
        if self._loop_nest is None and self.lowering is not None:
            from pixelweave.engine.stmt_printer import loop_nest_to_string

            self._loop_nest = loop_nest_to_string(self.lowering.loop_nest)
        return self._loop_nest

    @property
    def kernel_source(self) -> str | None:
        """The OpenCL C source of the kernels (target 'opencl'), else None."""
        return getattr(self.native, "kernel_source", None)

    @property
    def last_run_seconds(self) -> float | None:
        return self.native.last_run_seconds

    @property
    def last_profile(self) -> dict[str, float] | None:
        return self.native.last_profile

    def __call__(
        self,
        sizes: list[int] | tuple[int, ...],
        inputs: dict[str, Any] | None = None,
        out: np.ndarray | list[np.ndarray] | None = None,
        mins: list[int] | None = None,
    ) -> np.ndarray | list[np.ndarray]:
        """`mins` moves the computed domain to [mins, mins + sizes) (0 by default); inputs
        given as `Buffer`s are read over their own mins."""
        single = type(out) is np.ndarray and len(self._outputs) == 1
        if mins is None and (single or (type(out) is list and len(out) == len(self._outputs) > 1)):
            outs = [out] if single else out
            try:
                ran = self._call_in_order(sizes, inputs, outs)
                given = None if ran else self._common_call(sizes, inputs, outs)
                if given is not None:
                    self.native.call_named(given)
                    ran = True
            except RuntimeFailure as failure:  # as the general path below explains it
                images, params = resolve_inputs(self.pipeline, inputs)
                windows = self._written_windows(sizes, params, images)
                if windows is None:
                    raise
                raise RuntimeFailure(f"{failure}; {_beyond_out(windows, sizes)}") from None
            if ran:
                return out if single else list(out)
        if mins is None and out is None and len(self._outputs) == 1:
            fresh = self._fresh_output(sizes)
            if fresh is not None:
                try:
                    if self._call_in_order(sizes, inputs, [fresh]):
                        return fresh
                    given = self._common_call(sizes, inputs, [fresh])
                    if given is not None:
                        self.native.call_named(given)
                        return fresh
                except RuntimeFailure:
                    pass  # the general path below runs it again and widens the output as it explains
        plain = self._plain_arguments(inputs)
        if plain is not None:
            args, buffer_mins = plain
        else:
            images, params = resolve_inputs(self.pipeline, inputs)
            args = dict(images)
            for p in self.pipeline.params:
                args[p.name] = params[p.name]
            buffer_mins = {
                im.name(): [params[f"{im.name()}.min.{i}"] for i in range(im.dimensions())]
                for im in self.pipeline.images
            }
        sizes = check_sizes(self.pipeline, sizes)
        outputs = self._output_arrays(sizes, out)
        if mins is not None:
            if len(mins) != len(sizes):
                raise InputError(f"{len(sizes)} sizes but {len(mins)} mins were given")
            buffer_mins.update({name: list(mins) for name in self.output_names})
        try:
            self.native(args, dict(zip(self.output_names, outputs, strict=True)), mins=buffer_mins)
        except RuntimeFailure as failure:
            # Widening (as Halide's realize does) is worked out for outputs at the origin.
            if mins is not None and any(mins):
                raise
            images, params = resolve_inputs(self.pipeline, inputs)
            windows = self._written_windows(sizes, params, images)
            if windows is None:
                raise
            if out is not None:
                raise RuntimeFailure(f"{failure}; {_beyond_out(windows, sizes)}") from None
            outputs = self._run_over(windows, sizes, args, buffer_mins)
        return outputs[0] if len(outputs) == 1 else outputs

    def _call_in_order(self, sizes: Any, inputs: dict[str, Any] | None, outs: list[Any]) -> bool:
        """Run the most common call in one pass (what _common_call accepts, every value taken
        straight into the native code's argument order: CompiledPipeline.call_in_order)
        and return True; False, having run nothing and raised nothing, for anything else or
        native code without that call, which _common_call and the general path then handle
        (and refuse with their messages). A 1920x1080 pass of a few hundred microseconds
        spent a tenth of its time in the Python side of the call."""
        plan = self._order_plan()
        if plan is None or type(sizes) is not list or len(sizes) != self._outputs[0].dimensions:
            return False
        if type(inputs) is not dict or not inputs or not self._input_names.issuperset(inputs):
            return False
        for size in sizes:
            if type(size) is not int or size < 0:
                return False
        shape = tuple(reversed(sizes))
        for out in outs:
            if type(out) is not np.ndarray or out.shape != shape:
                return False  # dtypes and writability: checked where the block is packed
        values: list[Any] = []
        for source, name, param in plan:
            if source == _FROM_OUT:
                value = outs[param]
            elif source == _FROM_IMAGE:
                if param.constraints:  # set on the ImageParam after compiling: checked by the general path
                    return False
                value = inputs.get(name)
            else:
                value = inputs.get(name, _MISSING)
                if value is _MISSING:
                    value = param.get()
                kind = type(value)
                if kind is not int and kind is not float:
                    return False  # None, a bool, a NumPy scalar: converted or refused by the general path
                lo, hi = param.range  # read at every call: a range set after compiling holds
                if (lo is not None and value < lo) or (hi is not None and value > hi):
                    return False
            values.append(value)
        return self.native.call_in_order(values)

    def _order_plan(self) -> list[tuple[int, str, Any]] | None:
        """Per native argument, in order, where _call_in_order takes its value: (source,
        name, the output's index, the ImageParam or the Param). None where
        that call does not apply: native code without call_in_order, or an argument that is
        none of the pipeline's images, Params and outputs. Made once."""
        if self._plan_made:
            return self._plan
        self._plan_made = True
        if not hasattr(self.native, "call_in_order"):
            return None
        if self._input_names is None:
            self._make_input_tables()
        images = {im.name(): im for im in self.pipeline.images}
        params = {p.name: p for p in self.pipeline.params}
        plan = []
        for a in self.native.arguments:
            if a.is_output:
                plan.append((_FROM_OUT, a.name, self.output_names.index(a.name)))
            elif a.name in images and a.is_buffer():
                plan.append((_FROM_IMAGE, a.name, images[a.name]))
            elif a.name in params and not a.is_buffer():
                plan.append((_FROM_PARAM, a.name, params[a.name]))
            else:
                return None
        self._plan = plan
        return plan

    def _common_call(self, sizes: Any, inputs: dict[str, Any] | None, outs: list[Any]) -> dict[str, Any] | None:
        """The native call's arguments for the most common call, checked in one pass: plain
        inputs (_plain_arguments), sizes as a list of non-negative ints, the outputs written
        into `out=` arrays of their shape and dtype (one per output, in order; several
        outputs of one loop nest in a list). None for anything else, which the
        general path handles (and refuses with its messages). A call of a pipeline on a
        small image spent as long in the general path's checks as in the generated code."""
        output = self._outputs[0]
        if type(sizes) is not list or len(sizes) != output.dimensions:
            return None
        for size in sizes:
            if type(size) is not int or size < 0:
                return None
        shape = tuple(reversed(sizes))
        for out, dtype in zip(outs, self._output_dtypes, strict=True):
            if type(out) is not np.ndarray or out.shape != shape or out.dtype != dtype or not out.flags.writeable:
                return None
        plain = self._plain_arguments(inputs)
        if plain is None:
            return None
        given = plain[0]
        for out, name in zip(outs, self.output_names, strict=True):
            given[name] = out
        return given

    def _fresh_output(self, sizes: Any) -> np.ndarray | None:
        """A new array for the single output of a call without `out=` at plain sizes (a list
        of non-negative ints, as _common_call takes them), None for anything else. A small
        output (a reduction's total) is a plain np.empty: NumPy's allocations are 16-byte
        aligned, so one that small never straddles a cache line, and aligned_empty's work
        cost more than the generated code of a small reduction."""
        if type(sizes) is not list or len(sizes) != self._outputs[0].dimensions:
            return None
        for size in sizes:
            if type(size) is not int or size < 0:
                return None
        shape = tuple(reversed(sizes))
        if self._output_dtype.itemsize * math.prod(shape) <= SMALL_OUTPUT_BYTES:
            return np.empty(shape, self._output_dtype)
        return aligned_empty(shape, self._output_dtype)

    def _plain_arguments(self, inputs: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, list[int]]] | None:
        """(arguments, buffer mins) without resolve_inputs' general work, for the common call
        whose every input image is given as a NumPy array of the right dtype and rank, at
        mins 0, without dim constraints, and every Param by a value within its range; None
        for anything else, which resolve_inputs then handles (and refuses with its message).
        The arrays' layout is checked once more where the native call describes them."""
        if not inputs or type(inputs) is not dict:
            return None
        if self._input_names is None:
            self._make_input_tables()
        if not self._input_names.issuperset(inputs):
            return None
        args: dict[str, Any] = {}
        buffer_mins: dict[str, list[int]] = {}
        for im, name, dtype, dimensions in self._images:
            array = inputs.get(name)
            if type(array) is not np.ndarray or array.dtype != dtype or array.ndim != dimensions or im.constraints:
                return None
            args[name] = array
            buffer_mins[name] = [0] * dimensions
        for p, t, type_lo, type_hi in self._params:
            value = inputs.get(p.name, p.get())
            if value is None:
                return None
            if not (type(value) is int and type_lo <= value <= type_hi):
                value = check_scalar(p.name, t, value)
            lo, hi = p.range
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                return None
            args[p.name] = value
        return args, buffer_mins

    def _make_input_tables(self) -> None:
        """The inputs' names, and per image and Param what _plain_arguments checks."""
        pipeline = self.pipeline
        self._input_names = frozenset(im.name() for im in pipeline.images) | {p.name for p in pipeline.params}
        self._images = [(im, im.name(), im.type().numpy(), im.dimensions()) for im in pipeline.images]
        self._params = [(p, p.type(), *_int_range(p.type())) for p in pipeline.params]

    def _written_windows(self, sizes: list[int], params: dict[str, Any], images: dict[str, Any]):
        """Where the outputs' loops write, when that is beyond the sizes (None otherwise, and
        for adopted native code, which has no lowering to tell)."""
        from pixelweave.engine.output_window import written_windows

        lowering = self.lowering
        if lowering is None or not lowering.output_regions:
            return None
        scalars = {name: v for name, v in params.items() if isinstance(v, (int, float, np.integer, np.floating))}
        return written_windows(lowering.output_regions, sizes, scalars, images)

    def _run_over(
        self,
        windows: dict[str, list[tuple[int, int]]],
        sizes: list[int],
        args: dict[str, Any],
        input_mins: dict[str, list[int]],
    ):
        """Run with each output allocated over its window; return the requested part."""
        arrays, mins, views = [], dict(input_mins), []
        for a in self._outputs:
            window = windows.get(a.name, [(0, n) for n in sizes[: a.dimensions]])
            arrays.append(aligned_empty(tuple(e for _, e in reversed(window)), a.type.numpy()))
            mins[a.name] = [lo for lo, _ in window]
            views.append(tuple(slice(-lo, -lo + n) for (lo, _), n in reversed(list(zip(window, sizes, strict=False)))))
        self.native(args, dict(zip(self.output_names, arrays, strict=True)), mins=mins)
        return [np.ascontiguousarray(array[view]) for array, view in zip(arrays, views, strict=True)]

    def _output_arrays(self, sizes: list[int], out: Any) -> list[np.ndarray]:
        shape = tuple(reversed(sizes))
        if out is None:
            return [aligned_empty(shape, a.type.numpy()) for a in self._outputs]
        given = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(given) != len(self._outputs):
            raise InputError(f"out= needs {len(self._outputs)} array(s), one per output, got {len(given)}")
        for a, array in zip(self._outputs, given, strict=True):
            if not isinstance(array, np.ndarray):
                raise InputError(f"out= for output `{a.name}` must be a NumPy array, got {type(array).__name__}")
            if array.shape != shape or array.dtype != a.type.numpy():
                raise InputError(
                    f"out= for output `{a.name}` must have shape {shape} and dtype {a.type.numpy()}, "
                    f"got shape {array.shape} and dtype {array.dtype}"
                )
            if not array.flags.writeable:
                raise InputError(f"out= for output `{a.name}` is read-only")
        return given

    def __repr__(self) -> str:
        return f"<Compiled pipeline {self.native.name} ({self.native.level}, {self.native.target.name})>"


def _int_range(t: Any) -> tuple[int, int]:
    """The Python ints a scalar of type t takes unchanged ((1, 0), none, for floats and bools:
    check_scalar converts those)."""
    if t.is_int() or t.is_uint():
        return int(t.min()), int(t.max())
    return 1, 0


def _beyond_out(windows: dict[str, list[tuple[int, int]]], sizes: list[int]) -> str:
    """Why out= arrays of the requested size cannot take the result, and what would."""
    parts = []
    for name, window in windows.items():
        spans = [f"[{lo}, {lo + extent - 1}]" for lo, extent in window]
        parts.append(f"`{name}` over {' x '.join(spans)}")
    return (
        f"its schedule writes {', '.join(parts)}, beyond the size {list(sizes)} of the out= arrays: call it without "
        "out= (it then allocates outputs over what the schedule writes and returns the requested size), or use "
        "splits with tail=TailStrategy.GUARD_WITH_IF"
    )
