"""Memoization (after storage flattening): the production of a memoized Func becomes

    produce f {
      let f.cache_miss = memoize_lookup#ID(key...)
      if (f.cache_miss != 0) { <the production>; memoize_store#ID(key...) }
    }

The lookup fills f's storage from the process-wide cache on a hit (see
engine/runtime/memoization_cache.py for the arguments and engine/memoization.py for what
the key holds and how it differs from Halide's). It runs after flattening, where the size
of each allocation and the address of every buffer are known.

`check_memoized` refuses, before any pass runs, the schedules Halide refuses (an output
Func, an inlined Func, storage at another level than computation) and those this
implementation does not support (a Func computed inside a vectorized or GPU loop, OpenCL).
"""

from __future__ import annotations

import hashlib

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.func import Func
from pixelweave.engine.ir.memoize_calls import BUFFER_ADDRESS_PREFIX, MEMOIZE_LOOKUP_PREFIX, MEMOIZE_STORE_PREFIX
from pixelweave.engine.ir.param import ImageParam, Param
from pixelweave.engine.ir.types import Int, UInt
from pixelweave.engine.ir.visit import mutate, walk
from pixelweave.engine.lower.context import FuncInfo, LoweringContext
from pixelweave.engine.lower.flatten import value_buffer
from pixelweave.engine.stmt import Allocate, Evaluate, ForType, IfThenElse, LetStmt, ProducerConsumer, Stmt, make_block
from pixelweave.engine.stmt_visit import StmtMutator

I32, I64 = Int(32), Int(64)


def memoized_funcs(ctx: LoweringContext) -> list[FuncInfo]:
    return [info for info in ctx.funcs if info.schedule.memoized]


def check_memoized(ctx: LoweringContext) -> None:
    """ScheduleError for a memoized Func whose schedule cannot be memoized."""
    for info in memoized_funcs(ctx):
        name = info.func.name()
        where = f"Func `{name}` cannot be memoized"
        if info.is_output or info.computes_output:
            raise ScheduleError(
                f"{where} because it is an output of the pipeline; memoize only an intermediate Func (to cache a "
                "whole pipeline, have its output copy a memoized Func)"
            )
        if info.is_inlined():
            raise ScheduleError(f"{where} because it is computed inline; give it compute_root() or compute_at()")
        level, store = info.compute_level(), info.store_level()
        same = level.kind == store.kind and level.func is store.func and level.var == store.var
        if not same:
            raise ScheduleError(
                f"{where} because its storage (store {store}) and its computation (compute {level}) are scheduled "
                "at different loop levels; remove the store_root()/store_at()"
            )
        if ctx.target == "opencl":
            raise ScheduleError(
                f"{where} for target='opencl': Pixelweave memoizes on CPU targets only; remove the memoize()"
            )
        if level.kind == "at":
            for stage in ctx.info(level.func).stages:
                for d in stage.schedule.dims:
                    if d.name.rsplit(".", 1)[-1] == level.var and d.for_type in (
                        ForType.VECTORIZED,
                        ForType.GPU_BLOCK,
                        ForType.GPU_THREAD,
                    ):
                        raise ScheduleError(
                            f"{where} inside loop {level} of `{level.func.name()}`, which is {d.for_type.value}: "
                            "the cache is looked up once per iteration of a serial, parallel or unrolled loop; "
                            "compute it at another loop or at the root, or remove the memoize()"
                        )


def inject_memoization(ctx: LoweringContext, stmt: Stmt) -> Stmt:
    funcs = {info.name: _MemoizedFunc(ctx, info) for info in memoized_funcs(ctx)}
    if not funcs:
        return stmt
    return _Inject(funcs).mutate(stmt)


class _MemoizedFunc:
    """What the key of one memoized Func is made of, known before its production is found."""

    def __init__(self, ctx: LoweringContext, info: FuncInfo) -> None:
        from pixelweave.engine.pipeline import Pipeline, definition_exprs, func_definitions
        from pixelweave.engine.structural_key import structural_key

        self.info = info
        tuple_types = {info.name: info.types} if len(info.types) > 1 else {}
        self.buffers = [(value_buffer(info.name, i, tuple_types), t) for i, t in enumerate(info.types)]
        reached = Pipeline(info.func)
        digest = structural_key(reached, ctx.target, info.name, "memoize")
        self.identity = int.from_bytes(hashlib.sha256(digest.encode()).digest()[:7], "little")
        params: dict[str, Param] = {}
        images: dict[str, ImageParam] = {}
        for g in reached.funcs:
            for d in func_definitions(g):
                for e in definition_exprs(d):
                    for node in walk(e):
                        if isinstance(node, E.Call) and node.call_kind == "image" and not isinstance(node.target, Func):
                            images.setdefault(node.target.name(), node.target)
                        elif isinstance(node, E.Variable) and node.kind == "param":
                            if isinstance(node.owner, ImageParam):
                                images.setdefault(node.owner.name(), node.owner)
                            elif isinstance(node.owner, Param):
                                params.setdefault(node.name, node.owner)
        self.params = [E.Variable(p.name, p.type(), "param") for _, p in sorted(params.items())]
        self.images = [im for _, im in sorted(images.items())]
        key = info.schedule.memoize_eviction_key
        self.eviction_key = None if key is None else mutate(key, _plain_param)

    def arguments(self, lets: dict[str, E.Expr], allocations: dict[str, Allocate]) -> tuple[E.Expr, ...]:
        """The values the lookup and the store pass to the cache (the layout its module describes)."""
        prefix = self.info.name + "."
        keys = [var for name, var in lets.items() if name.startswith(prefix)] + self.params
        args: list[E.Expr] = [E.Const(I32, len(keys)), *keys, E.Const(I32, len(self.images))]
        for im in self.images:
            args += [_address(im.name()), E.Const(I32, _element_bytes(im.type())), E.Const(I32, im.dimensions())]
            for i in range(im.dimensions()):
                args += [E.Variable(f"{im.name()}.{field}.{i}", I32, "param") for field in ("min", "extent", "stride")]
        args.append(E.Const(I32, len(self.buffers)))
        for name, t in self.buffers:
            allocation = allocations.get(name)
            if allocation is None:
                raise ScheduleError(f"memoized Func `{self.info.func.name()}` is produced outside its storage")
            size = E.Mul(E.Cast(I64, allocation.size), E.Const(I64, _element_bytes(t)))
            args += [_address(name), size]
        if self.eviction_key is None:
            args += [E.Const(I32, 0), E.Const(I32, 0)]
        else:
            args += [E.Const(I32, 1), self.eviction_key]
        return tuple(args)


def _plain_param(node: E.Expr) -> E.Expr | None:
    """A Param object as the variable the generated code binds its value to."""
    if isinstance(node, Param):
        return E.Variable(node.name, node.type(), "param")
    return None


def _address(buffer: str) -> E.Expr:
    return E.Call(UInt(64), f"{BUFFER_ADDRESS_PREFIX}{buffer}", (), "intrinsic")


def _element_bytes(t) -> int:
    return max(t.bits // 8, 1)


class _Inject(StmtMutator):
    def __init__(self, funcs: dict[str, _MemoizedFunc]) -> None:
        self.funcs = funcs
        self.lets: dict[str, E.Expr] = {}  # integer lets in scope, as variables
        self.allocations: dict[str, Allocate] = {}

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        t = s.value.type()
        if not (t.is_scalar() and t.is_integer()):
            return self.default(s)
        outer = self.lets.pop(s.name, None)
        self.lets[s.name] = E.Variable(s.name, t, "param")
        try:
            return self.default(s)
        finally:
            del self.lets[s.name]
            if outer is not None:
                self.lets[s.name] = outer

    def visit_Allocate(self, s: Allocate) -> Stmt:  # noqa: N802
        outer = self.allocations.get(s.name)
        self.allocations[s.name] = s
        try:
            return self.default(s)
        finally:
            if outer is None:
                del self.allocations[s.name]
            else:
                self.allocations[s.name] = outer

    def visit_ProducerConsumer(self, s: ProducerConsumer) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        memoized = self.funcs.get(s.name)
        if memoized is None or not s.is_producer:
            return s if body is s.body else ProducerConsumer(s.name, s.is_producer, body)
        args = memoized.arguments(self.lets, self.allocations)
        miss_name = f"{s.name}.cache_miss"
        lookup = E.Call(I32, f"{MEMOIZE_LOOKUP_PREFIX}{memoized.identity}", args, "intrinsic")
        store = Evaluate(E.Call(I32, f"{MEMOIZE_STORE_PREFIX}{memoized.identity}", args, "intrinsic"))
        miss = E.NE(E.Variable(miss_name, I32, "param"), E.Const(I32, 0))
        guarded = LetStmt(miss_name, lookup, IfThenElse(miss, make_block([body, store])))
        return ProducerConsumer(s.name, True, guarded)
