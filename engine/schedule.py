"""The scheduling vocabulary: how each Func's loops are ordered, split and run, and where
it is computed and stored (Halide's names and meaning).

A stage (a Func's pure definition or one of its updates) has a *domain order*: its loop
dimensions, innermost first, each serial, parallel, vectorized, unrolled or mapped to the
GPU, and the splits and fuses that made them. A Func has a *call schedule*: the loop level
at which it is computed and the one at which it is stored. Directives only record; the
lowering passes read them and report impossible combinations.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from pixelweave.engine.errors import ScheduleError
from pixelweave.engine.ir import expr as E
from pixelweave.engine.stmt import ForType

if TYPE_CHECKING:
    from pixelweave.engine.ir.func import Definition, Func


class TailStrategy(Enum):
    """What a split does when the factor does not divide the extent.

    AUTO is Halide's default: SHIFT_INWARDS for pure definitions, ROUND_UP for pure
    variables of update definitions, GUARD_WITH_IF for reduction variables. As in Halide,
    an update refuses the strategies that would change its result: SHIFT_INWARDS anywhere
    (it recomputes some points, and an update applied twice is not the same), and ROUND_UP
    on a reduction variable (it iterates outside the RDom).
    """

    AUTO = "auto"
    ROUND_UP = "round_up"
    GUARD_WITH_IF = "guard_with_if"
    SHIFT_INWARDS = "shift_inwards"
    # Halide's spellings, as aliases.
    Auto = "auto"
    RoundUp = "round_up"
    GuardWithIf = "guard_with_if"
    ShiftInwards = "shift_inwards"


class MemoryType(Enum):
    """Where a Func's storage lives (Halide's MemoryType), set with store_in(). On CPU targets
    AUTO puts small storage of constant size on the stack and the rest on the heap; HEAP and
    STACK choose; REGISTER is stack storage of constant size. On target "opencl" (see
    engine/codegen/opencl.py) GPU_SHARED is work-group local memory, REGISTER and STACK
    private memory of one work-item, HEAP global device memory, and AUTO lets the compute
    level decide. GPU_TEXTURE, LOCKED_CACHE, VTCM and AMX_TILE are Halide's names only."""

    AUTO = "auto"
    HEAP = "heap"
    STACK = "stack"
    REGISTER = "register"
    GPU_SHARED = "gpu_shared"
    GPU_TEXTURE = "gpu_texture"
    LOCKED_CACHE = "locked_cache"
    VTCM = "vtcm"
    AMX_TILE = "amx_tile"
    # Halide's spellings, as aliases.
    Auto = "auto"
    Heap = "heap"
    Stack = "stack"
    Register = "register"
    GPUShared = "gpu_shared"
    GPUTexture = "gpu_texture"
    LockedCache = "locked_cache"
    AMXTile = "amx_tile"

    @property
    def halide_name(self) -> str:
        """The name Halide writes (MemoryType.Stack, MemoryType.GPUShared, ...)."""
        return _HALIDE_MEMORY_NAMES[self.value]


_FOREIGN_MEMORY = {MemoryType.GPU_TEXTURE: "GPU texture reads", MemoryType.LOCKED_CACHE: "Hexagon's locked cache",
                   MemoryType.VTCM: "Hexagon's VTCM", MemoryType.AMX_TILE: "Intel AMX tile registers"}  # fmt: skip
_HALIDE_MEMORY_NAMES = {"auto": "Auto", "heap": "Heap", "stack": "Stack", "register": "Register",
                        "gpu_shared": "GPUShared", "gpu_texture": "GPUTexture", "locked_cache": "LockedCache",
                        "vtcm": "VTCM", "amx_tile": "AMXTile"}  # fmt: skip
CPU_MEMORY_TYPES = (MemoryType.AUTO, MemoryType.HEAP, MemoryType.STACK, MemoryType.REGISTER)
GPU_MEMORY_TYPES = (*CPU_MEMORY_TYPES, MemoryType.GPU_SHARED)  # what target "opencl" places


class Partition(Enum):
    """Whether lowering may split a loop into a prologue, a steady state and an epilogue
    (Halide's loop partitioning): in the steady state the boundary conditions (clamps of
    repeat_edge and the like, the per-vector boundary tests) and tail guards are known to
    hold and vanish. AUTO partitions a loop that has any; NEVER keeps the loop whole (less
    code); ALWAYS is AUTO that fails to compile when the loop has nothing to partition."""

    AUTO = "auto"
    NEVER = "never"
    ALWAYS = "always"
    # Halide's spellings, as aliases.
    Auto = "auto"
    Never = "never"
    Always = "always"


class LoopAlignStrategy(Enum):
    """How compute_with() lines up a fused loop of this stage with its parent's when their
    ranges differ (Halide's): AlignStart shifts this stage's iterations so both start
    together, AlignEnd so both end together; NoAlign and Auto (the default) do not shift.
    The fused loop runs over the union of both ranges, each body only over its own."""

    AlignStart = "align_start"
    AlignEnd = "align_end"
    NoAlign = "no_align"
    Auto = "auto"


@dataclass(frozen=True)
class FuseLevel:
    """compute_with(): this stage's loops, from the outermost down to `var`, are fused with
    those of stage `stage` of Func `func` (the parent), whose body runs first in them."""

    func: Any
    stage: int
    var: str
    align: tuple[tuple[str, LoopAlignStrategy], ...] = ()

    def __deepcopy__(self, memo: dict) -> FuseLevel:
        return self  # immutable, and it names another Func, which a copy must not clone

    def __repr__(self) -> str:
        return f"FuseLevel({self.func.name()}.s{self.stage}.{self.var}, {[(v, a.name) for v, a in self.align]})"


@dataclass(frozen=True)
class LoopLevel:
    """Where a Func is computed or stored: inlined, at the root, or inside a loop of a Func."""

    kind: str  # "inline", "root" or "at"
    func: Any = None
    var: str | None = None

    @staticmethod
    def root() -> LoopLevel:
        return LoopLevel("root")

    @staticmethod
    def inlined() -> LoopLevel:
        return LoopLevel("inline")

    @staticmethod
    def at(func: Func, var: Any) -> LoopLevel:
        return LoopLevel("at", func, var_name(var))

    def is_root(self) -> bool:
        return self.kind == "root"

    def is_inline(self) -> bool:
        return self.kind == "inline"

    def __str__(self) -> str:
        if self.kind == "at":
            return f"{self.func.name()}.{self.var}"
        return self.kind


def resolve_tail(tail: TailStrategy, stage: int, is_rvar: bool, bounded: bool = False) -> TailStrategy:
    """The strategy AUTO stands for in stage `stage` (0: the pure definition), as Halide's.
    In an update, a loop bounded by an earlier split or fuse is guarded: rounding it up would
    apply the update twice to the points it shares with the next iteration outside."""
    if tail != TailStrategy.AUTO:
        return tail
    if stage == 0:
        return TailStrategy.SHIFT_INWARDS
    return TailStrategy.GUARD_WITH_IF if is_rvar or bounded else TailStrategy.ROUND_UP


def _tail_name(tail: TailStrategy) -> str:
    return "".join(part.capitalize() for part in tail.value.split("_"))


@dataclass
class Split:
    """`split` (old -> outer, inner by factor), `fuse` (inner, outer -> fused) or a rename."""

    kind: str
    old: str
    outer: str
    inner: str
    factor: int = 1
    tail: TailStrategy = TailStrategy.AUTO
    is_rvar: bool = False  # it splits a reduction variable (or a loop made from one)
    bounded: bool = False  # it splits a loop whose extent a split or fuse bounds (Dim.bounded)


@dataclass
class Dim:
    name: str
    for_type: ForType = ForType.SERIAL
    is_rvar: bool = False
    # Its extent is bounded by a split factor or a fuse (the inner loop of a split, a fused
    # loop, or an outer split of one): rounding it up would revisit points of a neighbour.
    bounded: bool = False
    partition: Partition = Partition.AUTO


@dataclass
class StageSchedule:
    """The domain order of one definition: loop dims innermost first, and the splits."""

    dims: list[Dim]
    splits: list[Split] = field(default_factory=list)
    single_thread: bool = False  # gpu_single_thread(): the stage runs in one GPU work-item
    atomic: bool = False  # atomic(): the update stores with atomic read-modify-writes
    specializations: list[Specialization] = field(default_factory=list)  # specialize(), tried in order
    fuse_level: FuseLevel | None = None  # compute_with()

    @staticmethod
    def for_definition(d: Definition) -> StageSchedule:
        dims: list[Dim] = []
        if d.rdom is not None:
            dims.extend(Dim(v.name, is_rvar=True) for v in d.rdom.vars)
        dims.extend(Dim(name) for name in d.pure_vars)
        return StageSchedule(dims)

    def all_schedules(self) -> list[StageSchedule]:
        """This schedule and those of its specializations, nested ones included: every loop
        nest the stage may run."""
        out = [self]
        for spec in self.specializations:
            if spec.schedule is not None:
                out.extend(spec.schedule.all_schedules())
        return out


@dataclass
class Specialization:
    """One specialize(condition) of a stage: when the condition holds (and no earlier one
    did) the stage runs with `schedule`, a copy of the stage's schedule taken when
    specialize() was called. specialize_fail(message) is the last one, with no condition
    and no schedule: reaching it fails the pipeline with the message."""

    condition: E.Expr | None
    schedule: StageSchedule | None
    failure_message: str | None = None

    def __deepcopy__(self, memo: dict) -> Specialization:
        # The condition is an immutable Expr holding the Params themselves: share it.
        return Specialization(self.condition, copy.deepcopy(self.schedule, memo), self.failure_message)


SPECIALIZE_FAIL_MESSAGE = "A schedule specialized with specialize_fail() was chosen: "  # Halide's words


@dataclass
class FuncSchedule:
    """The call schedule of a Func, its explicit bounds and its storage order."""

    compute_level: LoopLevel = field(default_factory=LoopLevel.inlined)
    store_level: LoopLevel | None = None  # None: stored where it is computed
    bounds: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    storage_order: list[str] | None = None
    bound_extents: dict[str, Any] = field(default_factory=dict)  # bound_extent(): extent fixed, min inferred
    # align_bounds()/align_extent(): (modulus, remainder); remainder None keeps the min
    alignments: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    storage_alignments: dict[str, int] = field(default_factory=dict)  # align_storage(): extent padded to a multiple
    memory_type: MemoryType = MemoryType.AUTO  # store_in()
    memoized: bool = False  # memoize(): values cached across realizations (engine/memoization.py)
    memoize_eviction_key: Any = None  # memoize(EvictionKey(e)): the Expr entries are filed under
    storage_folds: dict[str, tuple[int, bool]] = field(default_factory=dict)  # fold_storage(): (factor, forward)
    hoist_level: LoopLevel | None = None  # hoist_storage(): where the allocation is made; None: the store level

    def copy(self) -> FuncSchedule:
        """An independent copy (the levels are shared: they name other Funcs' loops)."""
        return FuncSchedule(
            self.compute_level,
            self.store_level,
            dict(self.bounds),
            None if self.storage_order is None else list(self.storage_order),
            dict(self.bound_extents),
            dict(self.alignments),
            dict(self.storage_alignments),
            self.memory_type,
            self.memoized,
            self.memoize_eviction_key,
            dict(self.storage_folds),
            self.hoist_level,
        )


def var_name(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, E.Variable):
        return v.name
    raise ScheduleError(f"expected a Var or RVar in a schedule, got {v!r}")


def last_part(name: str) -> str:
    return name.rsplit(".", 1)[-1]


# the directive that sets each loop type, named when the loop it names does not exist
_MARK_DIRECTIVES = {
    ForType.VECTORIZED: "vectorize",
    ForType.UNROLLED: "unroll",
    ForType.PARALLEL: "parallel",
    ForType.SERIAL: "serial",
    ForType.GPU_BLOCK: "gpu_blocks",
    ForType.GPU_THREAD: "gpu_threads",
}


def _qualified(old: str, new: str) -> str:
    """Loop names carry their origin, as in Halide: splitting x into x and xi gives x.x, x.xi."""
    return f"{old}.{new}"


class Stage:
    """The scheduling handle of one definition (`f` itself for its pure one, `f.update(i)`).

    Every directive returns the stage, so calls chain as in Halide.
    """

    def __init__(self, func: Func, index: int, specialization: tuple[int, ...] = ()) -> None:
        self.func = func
        self.index = index
        self.specialization = specialization  # the path to a specialize() of the stage, if any

    # ------------------------------------------------------------------ helpers
    @property
    def definition(self) -> Definition:
        return self.func.definition() if self.index == 0 else self.func.updates()[self.index - 1]

    @property
    def schedule(self) -> StageSchedule:
        d = self.definition
        if d.schedule is None:
            d.schedule = StageSchedule.for_definition(d)
        sched = d.schedule
        for i in self.specialization:
            sched = sched.specializations[i].schedule
        return sched

    def describe(self) -> str:
        where = (
            f"Func `{self.func.name()}`" if self.index == 0 else f"update {self.index - 1} of Func `{self.func.name()}`"
        )
        if not self.specialization:
            return where
        sched, conditions = self.definition.schedule, []
        for i in self.specialization:
            conditions.append(str(sched.specializations[i].condition))
            sched = sched.specializations[i].schedule
        return f"the specialization of {where} on {' and '.join(conditions)}"

    def specialize(self, condition: Any) -> Stage:
        """A copy of this stage's schedule, taken now, used when `condition` (a bool Expr of
        Params and image sizes) holds at run time; schedule it independently. Later
        directives on this stage change only its own schedule. Specializations are tried in
        the order they were made; asking again with the same condition returns the same one."""
        from pixelweave.engine.ir.coerce import to_expr
        from pixelweave.engine.ir.visit import walk

        cond = to_expr(condition) if isinstance(condition, (bool, E.Expr)) else None
        if cond is None or not cond.type().is_bool() or not cond.type().is_scalar():
            raise ScheduleError(
                f"Argument passed to specialize must be of type bool (in {self.describe()}), got {condition!r}"
            )
        for node in walk(cond):
            if isinstance(node, E.Variable) and node.kind in ("var", "rvar"):
                raise ScheduleError(
                    f"Specialization condition {cond} for {self.describe()} depends on Var or RVar {node.name}. "
                    "Specialization conditions may not depend on any Vars or RVars."
                )
            if isinstance(node, E.Call) and node.call_kind in ("func", "image"):
                raise ScheduleError(
                    f"Specialization condition {cond} for {self.describe()} reads `{node.name}`; Pixelweave "
                    "specializes on Params and image sizes (im.width(), im.dim(i).extent(), ...) only"
                )
        specs = self.schedule.specializations
        for i, spec in enumerate(specs):
            if spec.condition is not None and spec.condition.same_as(cond):
                return Stage(self.func, self.index, (*self.specialization, i))
        if specs and specs[-1].failure_message is not None:
            raise ScheduleError(f"Cannot add new specializations after specialize_fail() (in {self.describe()}).")
        own = copy.deepcopy(self.schedule)
        own.specializations = []  # a specialization inherits everything but the specializations
        specs.append(Specialization(cond, own))
        return Stage(self.func, self.index, (*self.specialization, len(specs) - 1))

    def specialize_fail(self, message: str) -> None:
        """End this stage's chain of specializations: when none of them holds, the pipeline
        fails with `message` (a RuntimeFailure) instead of running the unspecialized schedule."""
        if not isinstance(message, str) or not message:
            raise ScheduleError(f"Argument passed to specialize_fail() must not be empty (in {self.describe()}).")
        specs = self.schedule.specializations
        if specs and specs[-1].failure_message is not None:
            raise ScheduleError(f"Only one specialize_fail() may be defined per Stage (in {self.describe()}).")
        specs.append(Specialization(None, None, message))

    def _dim_index(self, v: Any, directive: str) -> int:
        """The position of loop `v`; a refusal names `directive`, the call that named the loop."""
        name = var_name(v)
        dims = self.schedule.dims
        for i, d in enumerate(dims):
            if d.name == name:
                return i
        matches = [i for i, d in enumerate(dims) if last_part(d.name) == name]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(d.name for d in reversed(dims))
        if not matches:
            raise ScheduleError(
                f"{directive}({name}): {self.describe()} has no dimension named {name}; its loops are (outermost "
                f"first) {known}: use one of these names"
            )
        raise ScheduleError(
            f"{directive}({name}): the name {name} is ambiguous in {self.describe()}: it matches several of "
            f"{known}; use the full name"
        )

    def _check_factor(self, factor: Any, what: str) -> int:
        if isinstance(factor, bool) or not isinstance(factor, int):
            raise ScheduleError(f"{what} in {self.describe()} must be a positive integer constant, got {factor!r}")
        if factor < 1:
            raise ScheduleError(f"{what} in {self.describe()} must be positive, got {factor}")
        return factor

    def _generated_name(self) -> str:
        """The inner loop name vectorize/unroll/parallel with a factor make up: v0, v1, ... the
        first that no loop of this stage has (or had) as its last part. Counting per stage, not
        per process, gives the same names in every build of a schedule, and the short name stays
        unambiguous within the stage (the loop's full name, `f.s0.x.v0`, is unique in a pipeline)."""
        used = {last_part(d.name) for d in self.schedule.dims}
        for s in self.schedule.splits:
            used.update(last_part(n) for n in (s.old, s.outer, s.inner))
        k = 0
        while f"v{k}" in used:
            k += 1
        return f"v{k}"

    def _check_new_name(self, name: str) -> None:
        for d in self.schedule.dims:
            if d.name == name:
                raise ScheduleError(f"{self.describe()} already has a dimension named {name}; use another name")

    def rfactor(self, preserved: Any, var: Any = None) -> Func:
        """Halide's rfactor: `f.update(0).rfactor([(r.y, u)])` (or `rfactor(r.y, u)`) makes
        an intermediate Func reducing over the other RVars for each u, and this update merges
        its results; returns the intermediate Func to schedule (parallel or vectorize u)."""
        from pixelweave.engine.rfactor import rfactor

        if self.index == 0:
            raise ScheduleError(f"rfactor applies to an update definition, not to {self.describe()}")
        if self.specialization or self.schedule.specializations:
            raise ScheduleError(
                f"rfactor of {self.describe()}: a specialized stage (or a specialization) cannot be factored; "
                "call rfactor() before specialize() and specialize the intermediate Func or the merging update"
            )
        return rfactor(self.func, self.index - 1, preserved if var is None else [(preserved, var)])

    # ------------------------------------------------------------------ domain order
    def split(self, old: Any, outer: Any, inner: Any, factor: int, tail: TailStrategy = TailStrategy.AUTO) -> Stage:
        """Split `old` into `outer` * factor + `inner`; inner runs from 0 to factor - 1."""
        factor = self._check_factor(factor, "the split factor")
        if not isinstance(tail, TailStrategy):
            raise ScheduleError(f"the tail of a split in {self.describe()} must be a TailStrategy, got {tail!r}")
        i = self._dim_index(old, "split")
        dims = self.schedule.dims
        old_dim = dims[i]
        outer_name = _qualified(old_dim.name, var_name(outer))
        inner_name = _qualified(old_dim.name, var_name(inner))
        if outer_name == inner_name:
            raise ScheduleError(
                f"split of {old_dim.name} in {self.describe()} needs two different names: use one for the outer "
                "loop and another for the inner"
            )
        for n in (outer_name, inner_name):
            if n != old_dim.name:
                self._check_new_name(n)
        if old_dim.for_type in (ForType.GPU_BLOCK, ForType.GPU_THREAD):
            raise ScheduleError(
                f"cannot split {old_dim.name} in {self.describe()}: it is already a {old_dim.for_type.value} loop; "
                "split first, then map the new loops to the GPU"
            )
        self._check_tail(old_dim, tail)
        self.schedule.splits.append(
            Split(
                "split", old_dim.name, outer_name, inner_name, factor, tail, is_rvar=old_dim.is_rvar,
                bounded=old_dim.bounded,
            )
        )
        # As in Halide, both loops of a split inherit the loop's kind (a vectorized loop
        # split in two is two vectorized loops, whose lanes multiply; an unrolled one, two
        # unrolled loops; a parallel one, two parallel loops) and its partition policy.
        dims[i : i + 1] = [
            Dim(inner_name, old_dim.for_type, is_rvar=old_dim.is_rvar, bounded=True, partition=old_dim.partition),
            Dim(
                outer_name,
                old_dim.for_type,
                is_rvar=old_dim.is_rvar,
                bounded=old_dim.bounded,
                partition=old_dim.partition,
            ),
        ]
        return self

    def _check_tail(self, dim: Dim, tail: TailStrategy) -> None:
        """Refuse, as Halide does, a tail strategy that would change an update's result."""
        if self.index == 0 or tail == TailStrategy.AUTO:
            return
        what = f"split of {dim.name} in {self.describe()}"
        if dim.is_rvar and tail != TailStrategy.GUARD_WITH_IF:
            raise ScheduleError(
                f"the {what} cannot use TailStrategy.{_tail_name(tail)}: {dim.name} is a reduction variable, "
                "and iterations outside its RDom (or counted twice) would change the result; legal tail "
                "strategies for it are GuardWithIf and Auto"
            )
        if tail == TailStrategy.SHIFT_INWARDS:
            raise ScheduleError(
                f"the {what} cannot use TailStrategy.ShiftInwards: it computes some points twice, which changes "
                "the result of an update definition; legal tail strategies here are RoundUp, GuardWithIf and Auto"
            )
        if tail == TailStrategy.ROUND_UP and dim.bounded:
            raise ScheduleError(
                f"the {what} cannot use TailStrategy.RoundUp: {dim.name} comes from an earlier split or fuse, so "
                "rounding it up would apply the update twice to points of the next outer iteration; legal tail "
                "strategies here are GuardWithIf and Auto"
            )

    def fuse(self, inner: Any, outer: Any, fused: Any) -> Stage:
        """Merge two loops into one at the inner loop's place (outer outside inner; loops of
        pure variables between them stay outside the fused loop, as in Halide)."""
        i, j = self._dim_index(inner, "fuse"), self._dim_index(outer, "fuse")
        dims = self.schedule.dims
        name = var_name(fused)
        self._check_new_name(name)  # before any reorder: a refused fuse leaves the loops as they were
        if j > i + 1 and dims[i].is_rvar == dims[j].is_rvar and not any(d.is_rvar for d in dims[i + 1 : j]):
            # As in Halide, the fused loop takes the inner loop's place and the loops between
            # stay outside it: the outer loop moves in next to the inner one first (loops of
            # pure variables reorder freely; reduction variables keep their order).
            self.reorder(dims[i].name, dims[j].name, *(d.name for d in dims[i + 1 : j]))
            j = i + 1
        if j != i + 1:
            outside = dims[i + 1].name if i + 1 < len(dims) else None
            legal = f"fuse({dims[i].name}, {outside}, ...)" if outside is not None else f"no fuse of {dims[i].name}"
            raise ScheduleError(
                f"cannot fuse {dims[i].name} and {dims[j].name} in {self.describe()}: {dims[j].name} must be "
                f"the loop directly outside {dims[i].name}; legal: {legal}, or reorder first so that "
                f"{dims[j].name} is directly outside {dims[i].name}"
            )
        if dims[i].is_rvar != dims[j].is_rvar:
            raise ScheduleError(
                f"cannot fuse a pure variable with a reduction variable in {self.describe()}: fuse two pure "
                "variables or two reduction variables"
            )
        self.schedule.splits.append(Split("fuse", name, dims[j].name, dims[i].name, is_rvar=dims[i].is_rvar))
        policies = {dims[i].partition, dims[j].partition}
        policy = next((p for p in (Partition.NEVER, Partition.ALWAYS) if p in policies), Partition.AUTO)
        dims[i : j + 1] = [Dim(name, is_rvar=dims[i].is_rvar, bounded=True, partition=policy)]
        return self

    def reorder(self, *names: Any) -> Stage:
        """Reorder the given loops among their positions; the first given is innermost."""
        if len(names) == 1 and isinstance(names[0], (list, tuple)):
            names = tuple(names[0])
        idx = [self._dim_index(v, "reorder") for v in names]
        if len(set(idx)) != len(idx):
            raise ScheduleError(f"reorder in {self.describe()} names a dimension twice; name each loop once")
        dims = self.schedule.dims
        chosen = [dims[i] for i in idx]
        for slot, d in zip(sorted(idx), chosen, strict=True):
            dims[slot] = d
        return self

    def tile(self, x: Any, y: Any, *names: Any, tail: TailStrategy = TailStrategy.AUTO) -> Stage:
        """tile(x, y, xo, yo, xi, yi, xf, yf) or tile(x, y, xi, yi, xf, yf): split both and
        put the inner loops innermost; a TailStrategy may also come last, as in Halide."""
        if names and isinstance(names[-1], TailStrategy):
            *names, tail = names
        if len(names) == 6:
            xo, yo, xi, yi, xf, yf = names
        elif len(names) == 4:
            xi, yi, xf, yf = names
            xo, yo = x, y
        else:
            raise ScheduleError(
                "tile takes (x, y, xo, yo, xi, yi, xfactor, yfactor) or (x, y, xi, yi, xfactor, yfactor)"
            )
        for v in (x, y):  # a missing loop is refused as tile's, not as the split inside it
            self._dim_index(v, "tile")
        self.split(x, xo, xi, xf, tail).split(y, yo, yi, yf, tail)
        return self.reorder(xi, yi, xo, yo)

    def _mark(
        self, v: Any, for_type: ForType, factor: int | None, what: str, tail: TailStrategy = TailStrategy.AUTO
    ) -> Stage:
        # refused before any split is made, so a refused directive leaves the schedule as it was
        directive = _MARK_DIRECTIVES[for_type]
        self._check_mark(self.schedule.dims[self._dim_index(v, directive)], for_type, what)
        if factor is not None:
            factor = self._check_factor(factor, f"the {what} factor")
            i = self._dim_index(v, directive)
            self.split(v, v, self._generated_name(), factor, tail)
            v = self.schedule.dims[i].name
        self.schedule.dims[self._dim_index(v, directive)].for_type = for_type
        return self

    def _check_mark(self, dim: Dim, for_type: ForType, what: str) -> None:
        if self.schedule.atomic and for_type in (ForType.VECTORIZED, ForType.GPU_BLOCK, ForType.GPU_THREAD):
            raise ScheduleError(
                f"cannot {what} {dim.name} of {self.describe()}: its stores are atomic (atomic()), which "
                "Pixelweave does for one point at a time on the CPU; use parallel()"
            )
        atomic_parallel = self.schedule.atomic and for_type == ForType.PARALLEL
        if dim.is_rvar and not atomic_parallel and for_type in (
            ForType.PARALLEL, ForType.VECTORIZED, ForType.GPU_BLOCK, ForType.GPU_THREAD
        ):  # fmt: skip
            raise ScheduleError(
                f"cannot {what} reduction variable {dim.name} of {self.describe()}: its iterations may "
                "depend on each other; only pure variables of an update can run in parallel, as vectors "
                "or on the GPU (a +, min or max update may run its reduction variables in parallel "
                "after atomic())"
            )

    def atomic(self, override_associativity_test: bool = False) -> Stage:
        """Halide's Stage.atomic: the update's stores become atomic read-modify-writes, so its
        reduction variables may run in parallel (the order of the updates to one point then
        varies, which changes float sums by rounding). For updates `f[L] = f[L] op e` with op
        +, min or max (and -, with `override_associativity_test=True`, as in Halide)."""
        from pixelweave.engine.self_reference import atomic_form, is_associative

        if self.index == 0:
            raise ScheduleError(
                f"atomic() applies to update definitions, not to the pure definition of {self.describe()}"
            )
        d = self.definition
        if d.extra_values:
            raise ScheduleError(f"atomic() of {self.describe()}: a Func with a Tuple of values is not supported")
        if self.func.type().is_bool():
            raise ScheduleError(f"atomic() of {self.describe()}: a bool Func has no atomic read-modify-write")
        form = atomic_form(self.func, d)
        if form is None:
            raise ScheduleError(
                f"atomic() of {self.describe()} needs an update of the form f[...] = f[...] op e with op one of "
                f"+, -, min, max and e not reading `{self.func.name()}`; its value is {d.value}"
            )
        if not is_associative(form[0]) and not override_associativity_test:
            raise ScheduleError(
                f"atomic() of {self.describe()}: its operation ({form[0]}) is not associative and commutative, so "
                "the result would depend on the order of the updates (as Halide, pass "
                "override_associativity_test=True to run it anyway)"
            )
        for dim in self.schedule.dims:
            if dim.for_type in (ForType.VECTORIZED, ForType.GPU_BLOCK, ForType.GPU_THREAD):
                raise ScheduleError(
                    f"atomic() of {self.describe()}: loop {dim.name} is {dim.for_type.value}; atomic stores "
                    "are made one point at a time on the CPU"
                )
        self.schedule.atomic = True
        return self

    def partition(self, v: Any, policy: Partition) -> Stage:
        """Set whether the loop of `v` may be partitioned (see Partition)."""
        if not isinstance(policy, Partition):
            raise ScheduleError(
                f"partition({var_name(v)}, ...) in {self.describe()} takes a Partition (Partition.Auto, "
                f"Partition.Never or Partition.Always), got {policy!r}"
            )
        self.schedule.dims[self._dim_index(v, "partition")].partition = policy
        return self

    def never_partition(self, *names: Any) -> Stage:
        """partition(v, Partition.Never) for each loop named (a list or several arguments)."""
        for v in _flat_names(names):
            self.partition(v, Partition.NEVER)
        return self

    def always_partition(self, *names: Any) -> Stage:
        """partition(v, Partition.Always) for each loop named (a list or several arguments)."""
        for v in _flat_names(names):
            self.partition(v, Partition.ALWAYS)
        return self

    def never_partition_all(self) -> Stage:
        for d in self.schedule.dims:
            d.partition = Partition.NEVER
        return self

    def always_partition_all(self) -> Stage:
        for d in self.schedule.dims:
            d.partition = Partition.ALWAYS
        return self

    def vectorize(self, v: Any, width: int | None = None, tail: TailStrategy = TailStrategy.AUTO) -> Stage:
        """Run the loop as SIMD lanes; with a width, split it by the width (with tail) first."""
        return self._mark(v, ForType.VECTORIZED, width, "vectorize", tail)

    def unroll(self, v: Any, factor: int | None = None, tail: TailStrategy = TailStrategy.AUTO) -> Stage:
        """Replicate the loop body; with a factor, split it by the factor (with tail) first."""
        return self._mark(v, ForType.UNROLLED, factor, "unroll", tail)

    def parallel(self, v: Any, task_size: int | None = None) -> Stage:
        """Run iterations on several threads; with a task size, split by it first."""
        if task_size is not None:
            task_size = self._check_factor(task_size, "the parallel task size")
            i = self._dim_index(v, "parallel")
            self.split(v, v, self._generated_name(), task_size)
            return self._mark(self.schedule.dims[i + 1].name, ForType.PARALLEL, None, "parallelize")
        return self._mark(v, ForType.PARALLEL, None, "parallelize")

    def serial(self, v: Any) -> Stage:
        return self._mark(v, ForType.SERIAL, None, "serialize")

    def gpu_blocks(self, *names: Any) -> Stage:
        """Map loops to GPU work-groups (recorded for the OpenCL backend)."""
        for v in names:
            self._mark(v, ForType.GPU_BLOCK, None, "map to GPU blocks")
        return self

    def gpu_threads(self, *names: Any) -> Stage:
        """Map loops to GPU work-items within a work-group (recorded for the OpenCL backend)."""
        for v in names:
            self._mark(v, ForType.GPU_THREAD, None, "map to GPU threads")
        return self

    def gpu_lanes(self, v: Any, device_api: Any = None) -> Stage:
        """Halide maps the loop to the lanes of a GPU warp (lockstep, with warp shuffles);
        its OpenCL backend refuses the directive, and OpenCL is Pixelweave's only GPU target."""
        raise ScheduleError(
            f"gpu_lanes({var_name(v)}) in {self.describe()}: warp lanes (loops run in lockstep across a warp, "
            "with shuffles between lanes) are a CUDA feature in Halide, whose OpenCL backend refuses gpu_lanes, "
            "and OpenCL is Pixelweave's GPU target; use gpu_threads for this loop"
        )

    def gpu_tile(self, *args: Any, tail: TailStrategy = TailStrategy.AUTO) -> Stage:
        """Tile 1, 2 or 3 loops and map the outer ones to GPU blocks, the inner to threads,
        in Halide's forms: (x, bx, tx, xsize), (x, tx, xsize), (x, y, bx, by, tx, ty, xsize,
        ysize), (x, y, tx, ty, xsize, ysize), and the 3-D (x, y, z, bx, by, bz, tx, ty, tz,
        xsize, ysize, zsize) and (x, y, z, tx, ty, tz, xsize, ysize, zsize). Without block
        names, the tiled loops themselves become the block loops. A TailStrategy may come last."""
        if args and isinstance(args[-1], TailStrategy):
            *args, tail = args
        forms = {4: (1, True), 3: (1, False), 8: (2, True), 6: (2, False), 12: (3, True), 9: (3, False)}
        if len(args) not in forms:
            raise ScheduleError(
                f"gpu_tile in {self.describe()} takes (x, bx, tx, xsize), (x, tx, xsize), "
                "(x, y, bx, by, tx, ty, xsize, ysize), (x, y, tx, ty, xsize, ysize), "
                "(x, y, z, bx, by, bz, tx, ty, tz, xsize, ysize, zsize) or (x, y, z, tx, ty, tz, xsize, ysize, zsize); "
                f"got {len(args)} arguments"
            )
        n, has_blocks = forms[len(args)]
        loops = list(args[:n])
        blocks = list(args[n : 2 * n]) if has_blocks else [var_name(v) for v in loops]
        threads = list(args[(2 if has_blocks else 1) * n : (3 if has_blocks else 2) * n])
        sizes = list(args[-n:])
        for v in loops:  # a missing loop is refused as gpu_tile's, not as the split inside it
            self._dim_index(v, "gpu_tile")
        for v, b, t, size in zip(loops, blocks, threads, sizes, strict=True):
            self.split(v, b, t, size, tail)
        self.reorder(*threads, *blocks)
        return self.gpu_blocks(*blocks).gpu_threads(*threads)

    def gpu_single_thread(self) -> Stage:
        """Run this stage on the GPU in one work-item (for stages that cannot be parallel,
        such as scans), as Halide's gpu_single_thread."""
        self.schedule.single_thread = True
        return self

    def compute_with(self, target: Any, var: Any = None, align: Any = LoopAlignStrategy.Auto) -> Stage:
        """Fuse this stage's loops, from the outermost down to `var`, with those of another
        stage (Halide's compute_with): `compute_with(stage_or_func, var, align)` or
        `compute_with(LoopLevel.at(func, var), align)` (the Func's pure stage). `align` is a
        LoopAlignStrategy for `var`, or a list of (var, LoopAlignStrategy). The lowering
        checks the pair (same compute level, matching loops, no dependence between them)."""
        from pixelweave.engine.ir.func import Func

        if isinstance(target, LoopLevel):
            if var is not None:
                align = var
            if target.kind != "at":
                what = f"LoopLevel.{target.kind}()" if target.kind in ("root", "inline") else repr(target)
                raise ScheduleError(
                    f"compute_with of {self.describe()} needs a loop of another stage, not {what}; "
                    "use compute_with(stage, var) or compute_with(LoopLevel.at(func, var))"
                )
            parent, stage, name = target.func, 0, target.var
        elif isinstance(target, (Stage, Func)):
            if var is None:
                raise ScheduleError(
                    f"compute_with of {self.describe()} needs the loop to fuse down to: compute_with(stage, var)"
                )
            parent, stage = (target.func, target.index) if isinstance(target, Stage) else (target, 0)
            name = var_name(var)
        else:
            raise ScheduleError(
                f"compute_with of {self.describe()} takes a Stage, a Func or a LoopLevel, got {target!r}"
            )
        if parent is self.func:
            raise ScheduleError(
                f"cannot schedule {self.describe()} to be computed with {parent.name()}.s{stage}.{name}: "
                "compute_with fuses stages of two different Funcs (as in Halide)"
            )
        self.schedule.fuse_level = FuseLevel(parent, stage, name, self._alignments(align, name))
        return self

    def _alignments(self, align: Any, fused_var: str) -> tuple[tuple[str, LoopAlignStrategy], ...]:
        if isinstance(align, LoopAlignStrategy):
            return ((fused_var, align),)
        pairs = list(align) if isinstance(align, (list, tuple)) else None
        if pairs is None or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[1], LoopAlignStrategy) for p in pairs
        ):
            raise ScheduleError(
                f"the align of compute_with of {self.describe()} must be a LoopAlignStrategy or a list of "
                f"(var, LoopAlignStrategy) pairs, got {align!r}"
            )
        return tuple((var_name(v), a) for v, a in pairs)


def _flat_names(names: tuple) -> list[Any]:
    """never_partition([x, y]) as Halide's Python spells it, or never_partition(x, y)."""
    out: list[Any] = []
    for n in names:
        out.extend(n if isinstance(n, (list, tuple)) else [n])
    return out


class FuncScheduling:
    """The schedule directives of a Func: its call schedule, plus the domain-order
    directives of its pure definition (those of an update go through `f.update(i)`)."""

    def _sched(self) -> FuncSchedule:
        if self._schedule_state is None:
            self._schedule_state = FuncSchedule()
        return self._schedule_state

    def _pure_stage(self) -> Stage:
        self._require_defined()
        return Stage(self, 0)

    def update(self, i: int = 0) -> Stage:
        """The scheduling handle of update definition i."""
        n = self.num_update_definitions()
        if not 0 <= i < n:
            raise ScheduleError(
                f"Func `{self.name()}` has {n} update definition{'s' if n != 1 else ''}, not an update {i}; "
                + (f"legal: update(0) to update({n - 1})" if n else "schedule the Func itself")
            )
        return Stage(self, i + 1)

    def compute_root(self):
        """Compute all of this Func before any consumer runs."""
        self._sched().compute_level = LoopLevel.root()
        return self

    def compute_at(self, f: Any, var: Any):
        """Compute the region a consumer's iteration of loop `var` of `f` needs, inside that loop."""
        from pixelweave.engine.ir.func import Func

        if not isinstance(f, Func):
            raise ScheduleError(
                f"compute_at of Func `{self.name()}` needs a Func and one of its loop variables, got {f!r}; use "
                "compute_at(consumer, var)"
            )
        if f is self:
            raise ScheduleError(
                f"Func `{self.name()}` cannot be computed at one of its own loops (compute_at); use compute_root() "
                "or a loop of a Func that uses it"
            )
        self._sched().compute_level = LoopLevel.at(f, var)
        return self

    def compute_inline(self):
        """Substitute the definition into every use (the default for pure Funcs)."""
        if self.has_update_definition():
            raise ScheduleError(
                f"Func `{self.name()}` cannot be computed inline because it has update definitions; "
                "use compute_root() or compute_at()"
            )
        self._sched().compute_level = LoopLevel.inlined()
        return self

    def store_root(self):
        """Allocate storage outside all loops (with compute_at: a sliding window)."""
        self._sched().store_level = LoopLevel.root()
        return self

    def store_at(self, f: Any, var: Any):
        """Allocate storage inside loop `var` of `f`, outside where it is computed."""
        from pixelweave.engine.ir.func import Func

        if not isinstance(f, Func):
            raise ScheduleError(
                f"store_at of Func `{self.name()}` needs a Func and one of its loop variables, got {f!r}; use "
                "store_at(consumer, var)"
            )
        self._sched().store_level = LoopLevel.at(f, var)
        return self

    def bound(self, v: Any, min: Any, extent: Any):  # noqa: A002 - Halide's keyword
        """Promise that only [min, min + extent) of dimension v is ever needed; computed exactly there."""
        name = var_name(v)
        pure = [a.name for a in self.args()]
        if name not in pure:
            raise ScheduleError(
                f"Func `{self.name()}` has no pure dimension {name} to bound; its dimensions are {', '.join(pure)}"
            )
        for what, value in (("min", min), ("extent", extent)):
            if not isinstance(value, (int, E.Expr)) or isinstance(value, bool):
                raise ScheduleError(f"the {what} given to bound({name}) of `{self.name()}` must be an int or an Expr")
        if isinstance(extent, int) and extent < 1:
            raise ScheduleError(f"the extent given to bound({name}) of `{self.name()}` must be positive, got {extent}")
        self._sched().bounds[name] = (min, extent)
        return self

    def _pure_dimension(self, v: Any, directive: str) -> str:
        name = var_name(v)
        pure = [a.name for a in self.args()]
        if name not in pure:
            raise ScheduleError(
                f"{directive} of Func `{self.name()}` needs one of its pure dimensions ({', '.join(pure)}), got {name}"
            )
        return name

    def bound_extent(self, v: Any, extent: Any):
        """Compute exactly `extent` points of dimension v, from wherever its region starts
        (Halide's bound_extent): a constant extent lets the loop be unrolled or vectorized
        and the storage be a fixed size. Reading more than that raises RuntimeFailure."""
        name = self._pure_dimension(v, "bound_extent")
        if not isinstance(extent, (int, E.Expr)) or isinstance(extent, bool):
            raise ScheduleError(
                f"the extent given to bound_extent({name}) of `{self.name()}` must be an int or an Expr"
            )
        if isinstance(extent, int) and extent < 1:
            raise ScheduleError(
                f"the extent given to bound_extent({name}) of `{self.name()}` must be positive, got {extent}"
            )
        self._sched().bound_extents[name] = extent
        return self

    def align_bounds(self, v: Any, modulus: int, remainder: int = 0):
        """Widen the region computed in dimension v so that its min is remainder modulo
        `modulus` and its extent a multiple of `modulus` (Halide's align_bounds)."""
        name = self._pure_dimension(v, "align_bounds")
        if isinstance(remainder, bool) or not isinstance(remainder, int):
            raise ScheduleError(
                f"the remainder given to align_bounds({name}) of `{self.name()}` must be an int, got {remainder!r}"
            )
        self._sched().alignments[name] = (self._modulus(name, modulus, "align_bounds"), remainder)
        return self

    def align_extent(self, v: Any, modulus: int):
        """Widen the region computed in dimension v so that its extent is a multiple of
        `modulus`, keeping its min (Halide's align_extent)."""
        name = self._pure_dimension(v, "align_extent")
        self._sched().alignments[name] = (self._modulus(name, modulus, "align_extent"), None)
        return self

    def store_in(self, memory_type: MemoryType):
        """Put this Func's storage in the given memory (Halide's store_in): MemoryType.Heap,
        Stack, Register (constant size) or Auto on every target, GPUShared (work-group local
        memory) on target "opencl"; where the schedule cannot honour it, compiling refuses."""
        if not isinstance(memory_type, MemoryType):
            raise ScheduleError(
                f"store_in of `{self.name()}` takes a MemoryType (MemoryType.Heap, Stack, Register, Auto, ...), "
                f"got {memory_type!r}"
            )
        if memory_type not in GPU_MEMORY_TYPES:
            raise ScheduleError(
                f"store_in(MemoryType.{memory_type.halide_name}) of `{self.name()}`: Pixelweave has no "
                f"{memory_type.halide_name} memory (Halide's is for {_FOREIGN_MEMORY[memory_type]}); it places storage "
                f"in {', '.join(m.halide_name for m in GPU_MEMORY_TYPES)} memory (GPUShared on target 'opencl' only)"
            )
        self._sched().memory_type = memory_type
        return self

    def memoize(self, eviction_key: Any = None):
        """Keep this Func's values across realizations and reuse them when the same inputs
        come back (Halide's memoize); see engine/memoization.py for the key and the refusals."""
        from pixelweave.engine.memoization import eviction_key_expr

        sched = self._sched()
        sched.memoize_eviction_key = eviction_key_expr(self.name(), eviction_key, sched.memoize_eviction_key)
        sched.memoized = True
        return self

    def align_storage(self, v: Any, alignment: int):
        """Pad the storage of dimension v to a multiple of `alignment` elements (Halide's
        align_storage), so the strides of the dimensions stored outside it are multiples of it."""
        name = self._pure_dimension(v, "align_storage")
        self._sched().storage_alignments[name] = self._modulus(name, alignment, "align_storage")
        return self

    def fold_storage(self, v: Any, extent: int, fold_forward: bool = True):
        """Store dimension v in a circular buffer of `extent` slots (Halide's fold_storage):
        coordinate c lives in slot c mod extent. Lowering proves the fold large enough for
        what one iteration of the loop it folds over touches, or checks it at run time."""
        name = self._pure_dimension(v, "fold_storage")
        if isinstance(extent, bool) or not isinstance(extent, int) or extent < 1:
            raise ScheduleError(
                f"the fold factor given to fold_storage({name}) of `{self.name()}` must be a positive int, "
                f"got {extent!r}"
            )
        if not isinstance(fold_forward, bool):
            raise ScheduleError(
                f"fold_forward given to fold_storage({name}) of `{self.name()}` must be a bool, got {fold_forward!r}"
            )
        self._sched().storage_folds[name] = (extent, fold_forward)
        return self

    def hoist_storage(self, f: Any, var: Any = None):
        """Make the allocation once per iteration of loop `var` of `f` (or at a LoopLevel),
        at or outside the store level, sized for the largest region the loops in between
        need (Halide's hoist_storage). Values are unchanged: only the allocation moves."""
        from pixelweave.engine.ir.func import Func

        if isinstance(f, LoopLevel) and var is None:
            if f.is_inline():
                raise ScheduleError(
                    f"hoist_storage of Func `{self.name()}` needs the root or a loop of a Func, not LoopLevel.inlined()"
                )
            self._sched().hoist_level = f
            return self
        if not isinstance(f, Func) or var is None:
            raise ScheduleError(
                f"hoist_storage of Func `{self.name()}` needs a Func and one of its loop variables (or a LoopLevel), "
                f"got {f!r}; use hoist_storage(consumer, var) or hoist_storage_root()"
            )
        self._sched().hoist_level = LoopLevel.at(f, var)
        return self

    def hoist_storage_root(self):
        """Make the allocation once, outside all loops (Halide's hoist_storage_root)."""
        self._sched().hoist_level = LoopLevel.root()
        return self

    def _modulus(self, name: str, modulus: Any, directive: str) -> int:
        if isinstance(modulus, bool) or not isinstance(modulus, int) or modulus < 1:
            raise ScheduleError(
                f"the modulus given to {directive}({name}) of `{self.name()}` must be a positive int, got {modulus!r}"
            )
        return modulus

    def reorder_storage(self, *dims: Any):
        """Lay out storage with the given dimensions, innermost (stride 1) first."""
        names = [var_name(v) for v in dims]
        pure = [a.name for a in self.args()]
        if sorted(names) != sorted(pure):
            raise ScheduleError(
                f"reorder_storage of `{self.name()}` must list each of its dimensions ({', '.join(pure)}) once"
            )
        self._sched().storage_order = names
        return self

    def schedule_of(self) -> FuncSchedule:
        return self._sched()

    def schedule_snapshot(self) -> tuple[FuncSchedule, list[StageSchedule | None]]:
        """A copy of every directive given to this Func and its updates (restore_schedule
        puts it back), so a search can try other schedules and return to this one."""
        call = self._sched().copy()
        stages = [self._require_defined(), *self.updates()]
        return call, [copy.deepcopy(d.schedule) for d in stages]

    def restore_schedule(self, snapshot: tuple[FuncSchedule, list[StageSchedule | None]]):
        """Put back the directives a schedule_snapshot() recorded."""
        call, stage_schedules = snapshot
        self._schedule_state = call.copy()
        for d, stage in zip([self._require_defined(), *self.updates()], stage_schedules, strict=True):
            d.schedule = copy.deepcopy(stage)
        return self

    def clear_schedule(self):
        """Forget every directive given to this Func and its updates (back to the defaults)."""
        self._schedule_state = None
        self._require_defined().schedule = None
        for d in self.updates():
            d.schedule = None
        return self

    def split(self, *args: Any, **kw: Any):
        self._pure_stage().split(*args, **kw)
        return self

    def fuse(self, *args: Any):
        self._pure_stage().fuse(*args)
        return self

    def reorder(self, *args: Any):
        self._pure_stage().reorder(*args)
        return self

    def tile(self, *args: Any, **kw: Any):
        self._pure_stage().tile(*args, **kw)
        return self

    def vectorize(self, *args: Any, **kw: Any):
        self._pure_stage().vectorize(*args, **kw)
        return self

    def unroll(self, *args: Any, **kw: Any):
        self._pure_stage().unroll(*args, **kw)
        return self

    def parallel(self, *args: Any):
        self._pure_stage().parallel(*args)
        return self

    def serial(self, *args: Any):
        self._pure_stage().serial(*args)
        return self

    def partition(self, *args: Any):
        self._pure_stage().partition(*args)
        return self

    def never_partition(self, *args: Any):
        self._pure_stage().never_partition(*args)
        return self

    def always_partition(self, *args: Any):
        self._pure_stage().always_partition(*args)
        return self

    def never_partition_all(self):
        self._pure_stage().never_partition_all()
        return self

    def always_partition_all(self):
        self._pure_stage().always_partition_all()
        return self

    def gpu_blocks(self, *args: Any):
        self._pure_stage().gpu_blocks(*args)
        return self

    def gpu_threads(self, *args: Any):
        self._pure_stage().gpu_threads(*args)
        return self

    def gpu_lanes(self, v: Any, device_api: Any = None):
        self._pure_stage().gpu_lanes(v, device_api)
        return self

    def gpu_tile(self, *args: Any, **kw: Any):
        self._pure_stage().gpu_tile(*args, **kw)
        return self

    def gpu_single_thread(self):
        self._pure_stage().gpu_single_thread()
        return self

    def specialize(self, condition: Any) -> Stage:
        """Specialize the pure definition (Stage.specialize); returns the specialized Stage."""
        return self._pure_stage().specialize(condition)

    def specialize_fail(self, message: str) -> None:
        """End the pure definition's specializations with a failure (Stage.specialize_fail)."""
        self._pure_stage().specialize_fail(message)
    def compute_with(self, *args: Any, **kw: Any):
        self._pure_stage().compute_with(*args, **kw)
        return self
