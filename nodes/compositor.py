"""The preview path: a document computed stage by stage, like a compositor (Nuke, Natron).

Every Func of the document (a node's stages: one for a point operation, a few for a
separable blur, dozens for a local Laplacian) is compiled on its own (engine/isolate.py),
reading the images of the Funcs it calls as inputs. Its kernel depends only on its own
definitions and schedule and the types of what it reads: it is compiled once per
structural key (the engine keeps compiled code in memory and on disk by that key), and
run-time Param values are arguments, never part of it.

Every Func is computed over the region the fused pipeline would compute it over (bounds
inference on the algorithm alone, `required_regions`), which may reach outside the image:
a stencil downstream with a boundary condition reads its source there, and the source is
defined everywhere. That is what makes the stage-by-stage image equal to the fused
pipeline's. Each image is cached by (kernel key, the images it read, run-time values,
scale) with the box it covers, so an edit recomputes only the stages whose definitions or
inputs changed and what lies downstream of them, and an undo finds every image cached.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import hashlib
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.engine.codegen.llvm_vector_math import VECTOR_MATH
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.isolate import OUTPUT_NAME, Isolated, Source, inlinable, isolate
from pixelweave.engine.lower.collector_pace import paced_collector
from pixelweave.engine.pipeline import func_definitions
from pixelweave.engine.runtime.jit import compiled_by_structure
from pixelweave.engine.stmt import ForType
from pixelweave.engine.structural_key import structural_key
from pixelweave.nodes.document import Document, Problem
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.graph import BuiltGraph, BuiltNode, NodeSpec
from pixelweave.nodes.image_cache import Box, ImageCache, crop
from pixelweave.nodes.images import read_image
from pixelweave.nodes.node_type import node_types
from pixelweave.nodes.pipeline_build import build_nodes
from pixelweave.nodes.ports import short_type_name
from pixelweave.nodes.run import evaluate_extent, input_environment
from pixelweave.nodes.runtime_params import node_runtime_values, node_structure
from pixelweave.nodes.schedule_spec import apply_schedule
from pixelweave.nodes.stage_regions import StageRegions

import pixelweave as pw

KERNELS_KEPT = 512
KERNEL_LEVEL = "fast"  # quick to compile; explicitly vectorized code runs about as fast as at "full"
# How a stage's kernel is isolated, in the order tried: its schedule with shifted tails (the
# fastest), with guarded tails (a box narrower than a split's factor), unscheduled.
MODES = ("shift", "guard", "none")
# Images of a stage inside a node kept per stage and box (a run-time edit's previous values:
# an undo or a slider moved back); a node's output keeps every version the budget allows.
STAGE_VERSIONS = 2
# The most points a stage may have for a quick kernel first (scalar code, rows in parallel).
QUICK_POINTS = 1 << 21
# Seconds without a picture being computed before a scheduled kernel compiles in the background.
UPGRADE_PAUSE = 0.4


@dataclass
class CompositorStats:
    """What the compositor did since it was made (tests and benchmarks read it)."""

    compiles: int = 0  # kernels that had to be lowered and compiled (no cache had them)
    kernel_hits: int = 0  # kernels found compiled (in memory or on disk)
    runs: int = 0  # node kernels run
    image_hits: int = 0  # node images found in the image cache
    upgrades: int = 0  # scheduled kernels compiled in the background after a quick one
    seconds_compiling: float = 0.0
    seconds_running: float = 0.0
    ran: list[str] = field(default_factory=list)  # the Func of each run, in order


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


class Compositor:
    """Computes node outputs one stage (Func) at a time, caching kernels and images."""

    def __init__(self, budget: int | None = None) -> None:
        self.images = ImageCache(budget)
        self.stats = CompositorStats()
        self._inputs: dict[tuple, np.ndarray] = {}
        self._kernels: collections.OrderedDict[str, Any] = collections.OrderedDict()  # structural key -> kernel
        self._built: dict[str, BuiltNode] = {}  # nodes of the last call, by definition and sources
        self._graph_lock = threading.Lock()  # building the graph through reading its Params' values
        self._refused: dict[str, str] = {}  # node key -> why its schedule was not applied
        self._algorithms: weakref.WeakKeyDictionary[pw.Func, tuple[Isolated, str]] = weakref.WeakKeyDictionary()
        self._isolated: weakref.WeakKeyDictionary[pw.Func, dict[str, tuple[Isolated, Any, str, str]]] = (
            weakref.WeakKeyDictionary()
        )
        self._node_outputs: weakref.WeakSet[pw.Func] = weakref.WeakSet()  # never inlined: images cached per node
        self._pipelines: weakref.WeakKeyDictionary[pw.Func, pw.Pipeline] = weakref.WeakKeyDictionary()
        self.regions = StageRegions()
        # structural key -> (mode, Funcs waiting for it, the compile under way)
        self._pending: dict[str, tuple[str, list[tuple[pw.Func, Isolated, Callable[[pw.Func], bool]]], Any]] = {}
        # structural key -> Funcs computed by a quick kernel whose scheduled one is to compile
        # after the picture (`_deferred`), then compiling on `_background` (`_upgrades`)
        self._deferred: dict[str, list[tuple[pw.Func, Isolated, Callable[[pw.Func], bool]]]] = {}
        self._upgrades: dict[str, tuple[list[tuple[pw.Func, Isolated, Callable[[pw.Func], bool]]], Any]] = {}
        self._background: concurrent.futures.ThreadPoolExecutor | None = None
        self._quick_kernels: dict[str, tuple[Any, str]] = {}  # scheduled key -> (quick kernel, its key)

    # ------------------------------------------------------------------ inputs
    def input_image(self, doc: Document, node_id: str, layout: str, element: str, scale: int) -> tuple[np.ndarray, str]:
        """The decoded sample image of input node_id at 1/scale, and its cache key."""
        path = doc.sample_path(node_id)
        if path is None:
            sample = doc.node(node_id).params.get("sample", "")
            why = f"its sample image {sample!r} was not found" if sample else "it has no sample image"
            raise NodeError(f"no image for input `{node_id}`: {why}", node_id)
        resolved = Path(path).resolve()
        key = (str(resolved), layout, element, resolved.stat().st_mtime_ns, scale)
        if key not in self._inputs:
            if len(self._inputs) > 16:
                self._inputs.clear()
            try:
                full = read_image(resolved, layout, element)
            except NodeError as e:
                raise NodeError(e.detail, node_id) from None
            self._inputs[key] = np.ascontiguousarray(full[..., ::scale, ::scale]) if scale > 1 else full
        return self._inputs[key], _digest("input", *key)

    # ------------------------------------------------------------------ the graph
    def built_graph(self, doc: Document, node_id: str) -> tuple[BuiltGraph, list[str]]:
        """node_id and what it reads, built and scheduled; notes for schedules the engine
        refused. Nodes whose definition and sources are unchanged since the last call are
        kept (with their Funcs, whose kernels are then known without isolating them again)."""
        types = node_types()
        keep = upstream_of(doc, node_id)
        problems = doc.node_problems(keep)
        if problems:
            raise DocumentError(problems, str(doc.path) if doc.path else None)
        by_id = {n.id: n for n in doc.nodes if n.id in keep}
        node_keys: dict[str, str] = {}
        fresh: set[str] = set()
        previous = self._built
        current: dict[str, BuiltNode] = {}

        def reuse(spec: NodeSpec, built: dict[str, BuiltNode]) -> BuiltNode | None:
            # keyed without run-time values: a run-time edit keeps the node's Funcs (and with
            # them their isolated kernels and algorithm keys) and only sets its Params
            node = by_id[spec.id]
            cls = types.get(node.type)
            params, derived = node_structure(cls, node.params)
            sources = sorted((port, node_keys[src], out) for port, (src, out) in spec.inputs.items())
            key = _digest(node.type, sorted(params.items()), derived, sorted(node.schedule.items()), sources)
            node_keys[spec.id] = key
            kept = previous.get(key)
            if kept is None or cls is None:
                fresh.add(spec.id)
                return None
            checked = cls.check_params(node.params)
            values = node_runtime_values(cls, node.id, checked)
            if any(p.name not in values for p in kept.scalar_params):
                fresh.add(spec.id)
                return None
            for p in kept.scalar_params:
                p.set(values[p.name])
            kept = dataclasses.replace(kept, spec=spec, params=checked)
            current[key] = kept
            return kept

        found: list[Problem] = []
        sub = Document(doc.name, doc.description, list(by_id.values()), doc.path)
        built = build_nodes(sub, set(), found, reuse)
        if found or node_id not in built:
            raise DocumentError(
                [str(p.message) if p.node is None else f"node `{p.node}`: {p.message}" for p in found]
                or [f"node `{node_id}` could not be built"]
            )
        images = {p.name(): p for node in built.values() for p in node.image_params}
        params = {p.name: p for node in built.values() for p in node.scalar_params}
        graph = BuiltGraph(built, images, params, [])
        notes = []
        for node in sub.nodes:
            if node.id in fresh and node.schedule:
                refused = apply_schedule(graph, node.id, node.schedule)
                if refused:
                    self._refused[node_keys[node.id]] = f"{node.id}: schedule not used in the preview ({refused[0]})"
            note = self._refused.get(node_keys.get(node.id, ""))
            if note:
                notes.append(note)
        current.update({node_keys[i]: built[i] for i in fresh if i in built})
        self._built = current
        return graph, notes

    # ------------------------------------------------------------------ computing
    def compute(
        self,
        doc: Document,
        node_id: str,
        port: str | None = None,
        *,
        scale: int = 1,
        check: Callable[[], None] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[np.ndarray, str]:
        """The output `port` (default: the first) of node_id over [0, size), and a note.
        `check()` is called between stages (it raises to cancel); `progress(done, total)`
        counts the stages. Python's cycle collector is paced as in lowering while it runs:
        isolating, keying and lowering stages allocate many long-lived objects and free no
        cycles, and a full collection landing in an edit cost 50-80 ms of its picture."""
        _ACTIVITY.begin()
        try:
            with paced_collector():
                return self._compute(doc, node_id, port, scale=scale, check=check, progress=progress)
        finally:
            _ACTIVITY.end()

    def _compute(
        self,
        doc: Document,
        node_id: str,
        port: str | None,
        *,
        scale: int,
        check: Callable[[], None] | None,
        progress: Callable[[int, int], None] | None,
    ) -> tuple[np.ndarray, str]:
        check = check or (lambda: None)
        if not doc.has_node(node_id):
            raise NodeError(f"there is no node `{node_id}`")
        self._collect_upgrades()
        # Building sets the kept nodes' Params to this document's values; until they are read
        # into `scalars`, another call on this compositor (another thread) must not set its own.
        with self._graph_lock:
            graph, notes = self.built_graph(doc, node_id)
            outputs = graph.nodes[node_id].outputs
            port = port or next(iter(outputs))
            value = outputs.get(port)
            if value is None:
                raise NodeError(f"node `{node_id}` has no output `{port}`", node_id)
            images: dict[str, np.ndarray] = {}
            image_keys: dict[str, str] = {}
            for name, param in graph.image_params.items():
                layout = "colour" if param.dimensions() == 3 else "gray"
                element = short_type_name(param.type())
                images[name], image_keys[name] = self.input_image(doc, name, layout, element, scale)
            env = input_environment(graph, images, {})
            size = [evaluate_extent(e, env) for e in value.extents]
            if any(s <= 0 for s in size):
                raise NodeError(f"the output would be empty (size {size})", node_id)
            pipeline = self._pipelines.get(value.func)
            if pipeline is None:  # the same Funcs (kept across run-time edits): the same pipeline
                pipeline = self._pipelines[value.func] = pw.Pipeline([value.func])
            # only the Params this node's pipeline reads: a run-time parameter that changes nothing
            # here (a clamp boundary's constant, a node elsewhere) is not one of its inputs
            reads = {p.name for p in pipeline.params}
            scalars: dict[str, Any] = {name: p.get() for name, p in graph.scalar_params.items() if name in reads}
        self._node_outputs.update(v.func for node in graph.nodes.values() for v in node.outputs.values())
        regions = self.regions.regions(pipeline, [(0, n) for n in size], images, scalars)
        for name, array in images.items():  # what the image-size variables are
            for i in range(array.ndim):
                scalars[f"{name}.min.{i}"] = 0
                scalars[f"{name}.extent.{i}"] = int(array.shape[array.ndim - 1 - i])
        check()
        # Producers first; a Func the fused pipeline inlines is inlined into its consumers'
        # kernels (within a node: every node's outputs are images of their own).
        stages = [f for f in pipeline.funcs if f.name() in regions and not self.inlined(f)]
        # What each stage's image is, before anything runs: its algorithm (a schedule never
        # changes the values) and what it reads. Kernels are needed only for images not cached.
        keys: dict[str, str] = {}
        for f in stages:
            isolated, algorithm = self._isolation(f)
            keys[f.name()] = _digest("image", algorithm, self._identity(f, isolated, keys, image_keys, scalars))
        computed: dict[str, tuple[np.ndarray, Box]] = {}
        needed = self._needed(stages, value.func.name(), keys, regions, computed)
        # Kernels compile on worker threads while the stages whose kernels are ready run
        # (LLVM and the kernels run without the GIL): a stage waits only for its own kernel.
        workers = min(len(needed), os.cpu_count() or 1)
        pool = concurrent.futures.ThreadPoolExecutor(workers, "pixelweave-kernel") if workers > 1 else None
        try:
            # an edit (some images are cached) takes quick kernels first; an opening compiles
            # the scheduled ones at once (it would otherwise compile every kernel twice)
            edit = bool(computed)
            quick = {f for f in needed if edit and _quick_eligible(self._isolation(f)[0], regions[f.name()])}
            self.prepare(needed, pool=pool, quick=quick.__contains__)
            for done, f in enumerate(needed):
                check()
                if progress is not None:
                    progress(done, len(needed))
                box = tuple(regions[f.name()])
                out = self._stage(f, box, computed, images, scalars, notes)
                if f in self._node_outputs:
                    self.images.put(keys[f.name()], out, box)
                else:  # a stage inside a node: a few versions are enough (a drag makes many)
                    slot = _digest("slot", f.name(), self._isolation(f)[1], box)
                    self.images.put(keys[f.name()], out, box, slot=slot, versions=STAGE_VERSIONS)
                computed[f.name()] = (out, box)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            self._collect_pending()
            self._start_upgrades()
        array, box = computed[value.func.name()]
        window = tuple((0, n) for n in size)
        return np.ascontiguousarray(crop(array, box, window)), "; ".join(notes)

    def _needed(
        self,
        stages: list[pw.Func],
        output: str,
        keys: dict[str, str],
        regions: dict[str, Any],
        computed: dict[str, tuple[np.ndarray, Box]],
    ) -> list[pw.Func]:
        """The stages to run, producers first: those the output needs, through stages whose
        images are not cached, and whose own images are not cached. The cached images they
        read go into `computed` (held there, so the runs cannot evict them)."""
        sources = {
            f.name(): [s.name for s in self._isolation(f)[0].sources.values() if s.kind == "func"] for f in stages
        }
        demanded, run = {output}, set()
        for f in reversed(stages):  # consumers before their producers
            name = f.name()
            if name not in demanded:
                continue
            box = tuple(regions[name])
            cached = self.images.get(keys[name], box)
            if cached is not None:
                self.stats.image_hits += 1
                computed[name] = (cached, box)
            else:
                run.add(name)
                demanded.update(sources[name])
        return [f for f in stages if f.name() in run]

    def inlined(self, g: pw.Func) -> bool:
        """Whether g is substituted into its consumers' kernels rather than an image of its
        own: a pure Func the fused pipeline inlines, not a node's output."""
        return g not in self._node_outputs and g.schedule_of().compute_level.is_inline() and inlinable(g)

    def _isolation(self, f: pw.Func) -> tuple[Isolated, str]:
        """f isolated with its schedule, and the key of its algorithm (remembered per Func)."""
        known = self._algorithms.get(f)
        if known is None:
            isolated = _isolate(f, "shift", self.inlined)
            known = (isolated, structural_key(isolated.pipeline, schedules=False))
            self._algorithms[f] = known
        return known

    @staticmethod
    def _identity(
        f: pw.Func, isolated: Isolated, keys: dict[str, str], image_keys: dict[str, str], scalars: dict[str, Any]
    ) -> list[tuple[str, Any]]:
        """What the stage reads, as keys and values: its image's identity with the algorithm."""
        identity: list[tuple[str, Any]] = []
        for arg, source in isolated.sources.items():
            if source.kind == "func":
                identity.append((arg, keys[source.name]))
            elif source.kind == "image":
                identity.append((arg, image_keys[source.name]))
            else:
                identity.append((arg, _scalar_value(f, source, scalars)))
        return identity

    def _stage(
        self,
        f: pw.Func,
        box: Box,
        computed: dict[str, tuple[np.ndarray, Box]],
        images: dict[str, np.ndarray],
        scalars: dict[str, Any],
        notes: list[str],
    ) -> np.ndarray:
        """Func f over box, computed by its kernel from what it reads: first with its schedule
        and unguarded tails (fast), then with guarded tails (a box narrower than a split's
        factor), then unscheduled (a schedule that reads outside what the fused pipeline
        computes)."""
        # the message only: the exception's frames hold the stage's arrays (their memory is
        # free for new images only once nothing refers to it)
        failure = ""
        for mode in MODES:
            isolated, compiled, _ = self._kernel(f, notes, mode=mode)
            if mode == "none":
                notes.append(f"`{f.name()}`: its schedule is not used in the preview")
            try:
                return self._run(f, box, isolated, compiled, computed, images, scalars)
            except pw.RuntimeFailure as e:
                failure = str(e)
                if not isolated.scheduled:
                    break
        raise NodeError(f"computing `{f.name()}` failed: {failure}", f.name().split(".", 1)[0]) from None

    def _run(
        self,
        f: pw.Func,
        box: Box,
        isolated: Isolated,
        compiled: Any,
        computed: dict[str, tuple[np.ndarray, Box]],
        images: dict[str, np.ndarray],
        scalars: dict[str, Any],
    ) -> np.ndarray:
        args: dict[str, Any] = {}
        mins: dict[str, list[int]] = {}
        for arg, source in isolated.sources.items():
            if source.kind == "func":
                array, src_box = computed[source.name]
                if array.ndim == 0:
                    args[arg] = array.item()
                else:
                    args[arg], mins[arg] = array, [lo for lo, _ in src_box]
            elif source.kind == "image":
                args[arg] = images[source.name]
            else:
                args[arg] = _scalar_value(f, source, scalars)
        out = self.images.empty(tuple(n for _, n in reversed(box)), f.type().numpy())
        known = {a.name for a in compiled.native.arguments}  # what the kernel does not read is no argument
        start = time.perf_counter()
        compiled.native(
            {k: v for k, v in args.items() if k in known},
            {OUTPUT_NAME: out},
            mins={**{k: v for k, v in mins.items() if k in known}, OUTPUT_NAME: [lo for lo, _ in box]},
        )
        self.stats.seconds_running += time.perf_counter() - start
        self.stats.runs += 1
        self.stats.ran.append(f.name())
        return out

    def kernel_loop_nest(self, f: pw.Func) -> str | None:
        """The loop nest of the kernel that computed f's image last (None before one did)."""
        known = self._isolated.get(f, {})
        for mode in MODES:
            if mode in known:
                return known[mode][1].loop_nest_text
        return None

    def _kernel(self, f: pw.Func, notes: list[str], *, mode: str = "shift") -> tuple[Isolated, Any, str]:
        """f isolated in `mode` (MODES) and its compiled kernel (this compositor's, the
        engine's caches, a compile under way, or a fresh compile); an isolated schedule the
        engine refuses falls back to none."""
        known = self._isolated.get(f, {}).get(mode)
        if known is None:
            for key, (pending_mode, group, future) in list(self._pending.items()):
                if pending_mode == mode and any(g is f for g, _, _ in group):
                    del self._pending[key]
                    self._register(mode, key, group, future.result())
                    break
            else:
                self.prepare([f], mode=mode)
            known = self._isolated[f][mode]
        isolated, compiled, key, note = known
        if note and note not in notes:
            notes.append(note)
        return isolated, compiled, key

    def prepare(
        self,
        funcs: list[pw.Func],
        *,
        mode: str = "shift",
        pool: concurrent.futures.Executor | None = None,
        quick: Callable[[pw.Func], bool] | None = None,
    ) -> None:
        """Finds or compiles the kernels of funcs in `mode`. Those no cache has are compiled
        on `pool` (their stages wait for them when they run), or here, together, on as many
        threads as there are cores (LLVM runs without the GIL). On a pool, a Func for which
        `quick` is true gets a quick kernel first (unscheduled, rows in parallel: about half
        the lowering), and its scheduled kernel compiles in the background at the next pause
        in editing (`_start_upgrades`)."""
        missing: dict[str, list[tuple[pw.Func, Isolated, Callable[[pw.Func], bool]]]] = {}
        for f in funcs:
            if mode in self._isolated.get(f, {}):
                self.stats.kernel_hits += 1
                continue
            isolated = self._isolation(f)[0] if mode == "shift" else _isolate(f, mode, self.inlined)
            key = isolated.pipeline.structural_key()
            if key in self._upgrades and not self._upgrades[key][1].done():
                # its scheduled kernel is still compiling: the quick one serves meanwhile
                self._upgrades[key][0].append((f, isolated, self.inlined))
                compiled, quick_key = self._quick_kernels[key]
                self._isolated.setdefault(f, {})[mode] = (_isolate(f, "none", self.inlined), compiled, quick_key, "")
                self.stats.kernel_hits += 1
                continue
            if key in self._upgrades:
                self._finish_upgrade(key)
            compiled = self._kernels.get(key)
            if compiled is not None:
                self._kernels.move_to_end(key)
                self.stats.kernel_hits += 1
                self._isolated.setdefault(f, {})[mode] = (isolated, compiled, key, "")
            elif key in self._pending:
                self._pending[key][1].append((f, isolated, self.inlined))
            else:
                missing.setdefault(key, []).append((f, isolated, self.inlined))
        if not missing:
            return
        if pool is not None:
            for key, group in missing.items():
                f = group[0][0]
                if (
                    mode == "shift"
                    and quick is not None
                    and quick(f)
                    and compiled_by_structure(key, KERNEL_LEVEL) is None
                ):
                    self._deferred[key] = group
                    self._pending[key] = (mode, group, pool.submit(_compile_quick, f, self.inlined))
                else:
                    self._pending[key] = (mode, group, pool.submit(_compile, *group[0]))
            return
        jobs = [group[0] for group in missing.values()]
        workers = min(len(jobs), os.cpu_count() or 1)
        if workers > 1:
            with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="pixelweave-kernel") as own:
                results = list(own.map(lambda job: _compile(*job), jobs))
        else:
            results = [_compile(*job) for job in jobs]
        for (key, group), result in zip(missing.items(), results, strict=True):
            self._register(mode, key, group, result)

    def _register(
        self,
        mode: str,
        key: str,
        group: list[tuple[pw.Func, Isolated, Callable[[pw.Func], bool]]],
        result: tuple[Isolated, Any, str, str, float],
        *,
        upgrade: bool = False,
    ) -> None:
        """Remember a compiled kernel for every Func of group (Funcs that share the key share
        the kernel; each keeps its own inputs). An upgrade (a scheduled kernel that replaces
        a quick one) is counted apart from the compiles a picture waited for."""
        isolated, compiled, compiled_key, note, seconds = result
        if upgrade:
            self.stats.upgrades += 1
        elif compiled.from_structure_cache:
            self.stats.kernel_hits += 1
        else:
            self.stats.compiles += 1
            self.stats.seconds_compiling += seconds
        self._kernels[compiled_key] = compiled
        for f, own, _ in group:
            same = own.scheduled == isolated.scheduled
            self._isolated.setdefault(f, {})[mode] = (
                own if same else _isolate(f, "none", self.inlined),
                compiled,
                compiled_key,
                note,
            )
        while len(self._kernels) > KERNELS_KEPT:
            self._kernels.popitem(last=False)  # the engine's caches still have its code

    def _start_upgrades(self) -> None:
        """Compile, in the background once no picture has been computed for a moment, the
        scheduled kernels of the stages a quick kernel computed (the picture did not wait)."""
        deferred, self._deferred = self._deferred, {}
        for key, group in deferred.items():
            known = self._isolated.get(group[0][0], {}).get("shift")
            if key in self._upgrades or known is None:
                continue  # already compiling, or its quick kernel never came
            self._quick_kernels[key] = (known[1], known[2])
            if self._background is None:
                self._background = concurrent.futures.ThreadPoolExecutor(1, "pixelweave-upgrade")
            self._upgrades[key] = (group, self._background.submit(_compile_when_idle, *group[0]))

    def finish_background(self) -> None:
        """Wait for the scheduled kernels compiling in the background and use them (tests,
        and a caller about to measure the preview's speed)."""
        for key in list(self._upgrades):
            self._finish_upgrade(key)

    def _collect_upgrades(self) -> None:
        """Take the scheduled kernels that finished compiling in the background."""
        for key, (_, future) in list(self._upgrades.items()):
            if future.done():
                self._finish_upgrade(key)

    def _finish_upgrade(self, key: str) -> None:
        """Wait for the scheduled kernel `key` and use it from now on (a failed one is
        forgotten: the quick kernel stays)."""
        group, future = self._upgrades.pop(key)
        self._quick_kernels.pop(key, None)
        try:
            result = future.result()
        except Exception:  # the quick kernel computes the same image: keep it
            return
        if result[0].scheduled:
            self._register("shift", key, group, result, upgrade=True)

    def _collect_pending(self) -> None:
        """Keep the kernels that finished compiling after the stages stopped asking (a
        cancelled or failed computation); forget those that failed or never started."""
        pending, self._pending = self._pending, {}
        for key, (mode, group, future) in pending.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                self._register(mode, key, group, future.result())


def _scalar_value(f: pw.Func, source: Source, scalars: dict[str, Any]) -> Any:
    """The run-time value of an image size or a Param: the document's, else the Param's own."""
    if source.name in scalars:
        return scalars[source.name]
    value = source.param.get() if source.param is not None else None
    if value is None:
        raise NodeError(f"`{f.name()}` reads parameter `{source.name}`, which has no value", f.name().split(".", 1)[0])
    return value


def _isolate(f: pw.Func, mode: str, inline: Callable[[pw.Func], bool]) -> Isolated:
    """f isolated in a mode of MODES, the Funcs `inline` names substituted into it. A stage
    its document leaves unscheduled (a node's output the fused pipeline inlines into a
    scheduled consumer) runs its rows in parallel: that never changes a value."""
    if mode == "none":
        return isolate(f, schedule=False, inline=inline)
    isolated = isolate(f, guard_tails=mode == "guard", inline=inline)
    if f.dimensions() >= 2 and _unscheduled(f):
        isolated.func.parallel(isolated.func.args()[1])
    return isolated


def _unscheduled(f: pw.Func) -> bool:
    """Whether f is one pure definition whose loops are all serial and unsplit."""
    if f.updates():
        return False
    schedule = f.definition().schedule
    if schedule is None:
        return True
    stages = schedule.all_schedules()
    return not any(stage.splits for stage in stages) and all(
        dim.for_type == ForType.SERIAL for stage in stages for dim in stage.dims
    )


class _Activity:
    """Whether any compositor of this process is computing a picture, and since when none
    is: background compiles wait for a pause, so that they do not slow an edit's picture
    (their lowering holds the GIL) and the edits that follow it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.busy = 0
        self.idle_since = time.monotonic()

    def begin(self) -> None:
        with self._lock:
            self.busy += 1

    def end(self) -> None:
        with self._lock:
            self.busy -= 1
            self.idle_since = time.monotonic()

    def wait_for_pause(self) -> None:
        while True:
            with self._lock:
                quiet = self.busy == 0 and time.monotonic() - self.idle_since >= UPGRADE_PAUSE
            if quiet:
                return
            time.sleep(UPGRADE_PAUSE / 4)


_ACTIVITY = _Activity()


def _compile_when_idle(
    f: pw.Func, isolated: Isolated, inline: Callable[[pw.Func], bool]
) -> tuple[Isolated, Any, str, str, float]:
    """_compile once no picture has been computed for UPGRADE_PAUSE seconds."""
    _ACTIVITY.wait_for_pause()
    return _compile(f, isolated, inline)


def _quick_eligible(isolated: Isolated, region: list[tuple[int, int]]) -> bool:
    """Whether a stage may first run a quick kernel: its region is small enough for scalar
    code, and it calls none of the functions vector code computes differently (exp, log,
    ...: within an ulp of libm's), so the quick kernel's image is the scheduled one's."""
    if math.prod(n for _, n in region) > QUICK_POINTS:
        return False
    for d in func_definitions(isolated.func):
        for e in [*d.all_values(), *d.args]:
            for node in walk(e):
                if isinstance(node, E.Call) and node.call_kind != "func" and node.name in VECTOR_MATH:
                    return False
    return True


def _compile_quick(f: pw.Func, inline: Callable[[pw.Func], bool]) -> tuple[Isolated, Any, str, str, float]:
    """f's quick kernel: unscheduled, its rows in parallel (same sources as mode "none")."""
    start = time.perf_counter()
    isolated = isolate(f, schedule=False, inline=inline)
    if f.dimensions() >= 2:
        isolated.func.parallel(isolated.func.args()[1])
    compiled = isolated.pipeline.compile("host", level=KERNEL_LEVEL)
    return isolated, compiled, isolated.pipeline.structural_key(), "", time.perf_counter() - start


def _compile(
    f: pw.Func, isolated: Isolated, inline: Callable[[pw.Func], bool]
) -> tuple[Isolated, Any, str, str, float]:
    """The kernel of an isolated Func (unscheduled when the engine refuses its schedule):
    (isolated, compiled, key, note, seconds)."""
    start = time.perf_counter()
    key = isolated.pipeline.structural_key()
    note = ""
    try:
        compiled = isolated.pipeline.compile("host", level=KERNEL_LEVEL)
    except pw.ScheduleError as e:
        note = f"`{f.name()}`: its schedule is not used in the preview ({e})"
        isolated = _isolate(f, "none", inline)
        key = isolated.pipeline.structural_key()
        compiled = isolated.pipeline.compile("host", level=KERNEL_LEVEL)
    return isolated, compiled, key, note, time.perf_counter() - start
