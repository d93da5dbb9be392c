"""The preview path: a document computed node by node, like a compositor (Nuke, Natron).

Each node is built on its own, with engine inputs standing for what its input ports
receive: an ImageParam per image port (a Param per scalar port), and a Param per upstream
extent that is not a constant. Its kernel therefore depends only on the node's own
structure (type, structural parameters, schedule, the types of what it reads) and is
compiled once per structural key (engine/structural_key.py; the engine keeps compiled
code in memory and on disk by that key). Run-time Param values are arguments, never part
of the kernel's key.

Every node output is computed over the region the fused pipeline would compute it over
(bounds inference on the algorithm alone, `required_regions`), which may reach outside the
image: a stencil downstream with a boundary condition reads its source there, and the
source is defined everywhere. That is what makes the node-by-node image equal to the fused
pipeline's. The image is cached by (kernel key, upstream image keys, run-time values,
scale) with the box it covers, so an edit recomputes only the changed node and what lies
downstream of it, and an undo finds every image in the cache.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.engine.ir.expr import Const, Expr
from pixelweave.engine.lower.simplify import simplify
from pixelweave.engine.reference import required_regions
from pixelweave.engine.runtime.buffer import aligned_empty
from pixelweave.nodes.document import DocNode, Document, Problem, _format
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.errors import DocumentError, NodeError
from pixelweave.nodes.graph import BuiltGraph, BuiltNode, NodeSpec, _build_node
from pixelweave.nodes.image_cache import Box, ImageCache, crop
from pixelweave.nodes.images import read_image
from pixelweave.nodes.pipeline_build import _build_nodes
from pixelweave.nodes.ports import short_type_name
from pixelweave.nodes.run import _environment, evaluate_extent
from pixelweave.nodes.schedule_spec import apply_schedule
from pixelweave.nodes.values import Value

import pixelweave as pw

_PLACEMENT = ("compute_at", "store_at", "compute_root", "compute_inline", "store_root")
_UPSTREAM = "__upstream_"


@dataclass
class CompositorStats:
    """What the compositor did since it was made (tests and benchmarks read it)."""

    compiles: int = 0  # kernels that had to be lowered and compiled (no cache had them)
    kernel_hits: int = 0  # kernels found compiled (in memory or on disk)
    runs: int = 0  # node kernels run
    image_hits: int = 0  # node images found in the image cache
    seconds_compiling: float = 0.0
    seconds_running: float = 0.0
    ran: list[str] = field(default_factory=list)  # "node.port" of each run, in order


@dataclass
class _Kernel:
    """A node output's compiled code and how to call it."""

    compiled: Any
    key: str
    output: str
    standins: dict[str, tuple[str, str, str]]  # argument -> (port, upstream node, upstream port)
    extents: dict[str, tuple[str, int]]  # Param name -> (port, dimension)
    note: str


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def _pruned_schedule(schedule: dict[str, list[list[Any]]], output_key: str) -> dict[str, list[list[Any]]]:
    """The node's directives that still apply when it is built alone: none that place a Func
    inside another node's loops, none that place the output (it is the root here)."""
    result: dict[str, list[list[Any]]] = {}
    for key, directives in schedule.items():
        kept = []
        for d in directives:
            if d and d[0] in ("compute_at", "store_at") and len(d) > 1 and "." in str(d[1]):
                continue
            if key == output_key and d and d[0] in _PLACEMENT:
                continue
            kept.append(d)
        if kept:
            result[key] = kept
    return result


class Compositor:
    """Computes node outputs one node at a time, caching kernels and images."""

    def __init__(self, budget: int | None = None) -> None:
        self.images = ImageCache(budget)
        self.stats = CompositorStats()
        self._inputs: dict[tuple, np.ndarray] = {}

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
    def _fused(self, doc: Document, keep: set[str], node_id: str) -> BuiltGraph:
        problems = [p for p in doc._problems() if p.node in keep and p.kind == "node"]
        if problems:
            raise DocumentError([_format(p) for p in problems], str(doc.path) if doc.path else None)
        found: list[Problem] = []
        sub = Document(doc.name, doc.description, [n for n in doc.nodes if n.id in keep], doc.path)
        built = _build_nodes(sub, set(), found)
        if found or node_id not in built:
            raise DocumentError([_format(p) for p in found] or [f"node `{node_id}` could not be built"])
        images = {p.name(): p for node in built.values() for p in node.image_params}
        params = {p.name: p for node in built.values() for p in node.scalar_params}
        return BuiltGraph(built, images, params, [])

    # ------------------------------------------------------------------ computing
    def compute(
        self,
        doc: Document,
        node_id: str,
        port: str | None = None,
        *,
        scale: int = 1,
        check: Callable[[], None] | None = None,
    ) -> tuple[np.ndarray, str]:
        """The output `port` (default: the first) of node_id over [0, size), and a note."""
        check = check or (lambda: None)
        if not doc.has_node(node_id):
            raise NodeError(f"there is no node `{node_id}`")
        keep = upstream_of(doc, node_id)
        graph = self._fused(doc, keep, node_id)
        outputs = graph.nodes[node_id].outputs
        port = port or next(iter(outputs))
        value = outputs.get(port)
        if value is None:
            raise NodeError(f"node `{node_id}` has no output `{port}`", node_id)

        images: dict[str, np.ndarray] = {}
        image_keys: dict[str, str] = {}
        for name, param in graph.image_params.items():
            layout = "colour" if param.dimensions() == 3 else "gray"
            images[name], image_keys[name] = self.input_image(doc, name, layout, short_type_name(param.type()), scale)
        env = _environment(graph, images, {})
        size = [evaluate_extent(e, env) for e in value.extents]
        if any(s <= 0 for s in size):
            raise NodeError(f"the output would be empty (size {size})", node_id)
        inputs: dict[str, Any] = dict(images)
        inputs.update({name: p.get() for name, p in graph.scalar_params.items()})
        regions = required_regions(pw.Pipeline([value.func]), [[(0, n) for n in size]], inputs)
        check()

        keys: dict[tuple[str, str], str] = {}
        arrays: dict[tuple[str, str], tuple[np.ndarray, Box]] = {}
        notes: list[str] = []
        for nid, built in graph.nodes.items():  # built in dependency order
            doc_node = doc.node(nid)
            for out_port, out_value in built.outputs.items():
                box = regions.get(out_value.func.name())
                if box is None:
                    continue
                check()
                array, key, note = self._node_output(
                    doc_node, graph, out_port, out_value, tuple(box), env, keys, arrays, images, image_keys
                )
                keys[(nid, out_port)] = key
                arrays[(nid, out_port)] = (array, tuple(box))
                if note and note not in notes:
                    notes.append(note)
        array, box = arrays[(node_id, port)]
        window = tuple((0, n) for n in size)
        return np.ascontiguousarray(crop(array, box, window)), "; ".join(notes)

    def _node_output(
        self,
        doc_node: DocNode,
        graph: BuiltGraph,
        port: str,
        fused_value: Value,
        box: Box,
        env: dict[str, Expr],
        keys: dict[tuple[str, str], str],
        arrays: dict[tuple[str, str], tuple[np.ndarray, Box]],
        images: dict[str, np.ndarray],
        image_keys: dict[str, str],
    ) -> tuple[np.ndarray, str, str]:
        node_id = doc_node.id
        sources = {p: doc_node.source(p) for p in doc_node.inputs}
        sources = {p: s for p, s in sources.items() if s is not None and s[0] in graph.nodes}
        kernel, standalone = self._kernel(doc_node, graph, port, sources)
        args: dict[str, Any] = {}
        mins: dict[str, list[int]] = {}
        upstream_keys = []
        for arg, (in_port, src, src_port) in kernel.standins.items():
            array, src_box = arrays[(src, src_port)]
            if array.ndim == 0:
                args[arg] = array.item()
            else:
                args[arg] = array
                mins[arg] = [lo for lo, _ in src_box]
            upstream_keys.append((in_port, keys[(src, src_port)]))
        extent_values = {}
        for name, (in_port, i) in kernel.extents.items():
            src, src_port = sources[in_port]
            extent_values[name] = evaluate_extent(graph.nodes[src].outputs[src_port].extents[i], env)
        args.update(extent_values)
        own = {}
        for p in standalone.scalar_params:
            own[p.name] = p.get()
        for im in standalone.image_params:
            args[im.name()] = images[im.name()]
            upstream_keys.append((im.name(), image_keys[im.name()]))
        args.update(own)
        key = _digest("image", kernel.key, sorted(upstream_keys), sorted(own.items()), sorted(extent_values.items()))
        cached = self.images.get(key, box)
        if cached is not None:
            self.stats.image_hits += 1
            return cached, key, kernel.note
        out = aligned_empty(tuple(n for _, n in reversed(box)), fused_value.type.numpy())
        native = kernel.compiled.native
        known = {a.name for a in native.arguments}  # what the kernel does not read is no argument
        args = {k: v for k, v in args.items() if k in known}
        mins = {k: v for k, v in mins.items() if k in known}
        start = time.perf_counter()
        try:
            native(args, {kernel.output: out}, mins={**mins, kernel.output: [lo for lo, _ in box]})
        except pw.RuntimeFailure as e:
            raise NodeError(str(e), node_id) from None
        self.stats.seconds_running += time.perf_counter() - start
        self.stats.runs += 1
        self.stats.ran.append(f"{node_id}.{port}")
        self.images.put(key, out, box)
        return out, key, kernel.note

    def _kernel(
        self, doc_node: DocNode, graph: BuiltGraph, port: str, sources: dict[str, tuple[str, str]]
    ) -> tuple[_Kernel, BuiltNode]:
        """The node built alone and its compiled output `port` (from a cache when it has one)."""
        standins: dict[str, tuple[str, str, str]] = {}
        extents: dict[str, tuple[str, int]] = {}
        fake: dict[str, BuiltNode] = {}
        spec_inputs: dict[str, tuple[str, str]] = {}
        for in_port, (src, src_port) in sources.items():
            fused = graph.nodes[src].outputs[src_port]
            value, arg, extent_params = _standin(doc_node.id, in_port, fused)
            standins[arg] = (in_port, src, src_port)
            extents.update({name: (in_port, i) for name, i in extent_params.items()})
            upstream = f"{_UPSTREAM}{in_port}"
            fake[upstream] = BuiltNode(
                NodeSpec(upstream, "", {}, {}), type(None), {}, {"out": value}, {}, [], []  # type: ignore[arg-type]
            )
            spec_inputs[in_port] = (upstream, "out")
        spec = NodeSpec(doc_node.id, doc_node.type, doc_node.params, spec_inputs)
        built = _build_node(spec, fake)
        func = built.outputs[port].func
        local = func.name().split(".", 1)[1] if "." in func.name() else func.name()
        note = ""
        if doc_node.schedule:
            alone = BuiltGraph({doc_node.id: built}, {}, {}, [])
            refused = apply_schedule(alone, doc_node.id, _pruned_schedule(doc_node.schedule, local))
            if refused:
                built = _build_node(spec, fake)  # unscheduled
                func = built.outputs[port].func
                note = f"{doc_node.id}: schedule not usable in the preview ({refused[0]}); computed unscheduled"
        pipeline = pw.Pipeline([func])
        start = time.perf_counter()
        try:
            compiled = pipeline.compile("host", level="fast")
        except pw.ScheduleError as e:
            built = _build_node(spec, fake)
            func = built.outputs[port].func
            pipeline = pw.Pipeline([func])
            compiled = pipeline.compile("host", level="fast")
            note = f"{doc_node.id}: schedule not usable in the preview ({e}); computed unscheduled"
        if compiled.from_structure_cache:
            self.stats.kernel_hits += 1
        else:
            self.stats.compiles += 1
            self.stats.seconds_compiling += time.perf_counter() - start
        kernel = _Kernel(compiled, pipeline.structural_key(), func.name(), standins, extents, note)
        return kernel, built


def _standin(node_id: str, port: str, fused: Value) -> tuple[Value, str, dict[str, int]]:
    """What input `port` of node_id reads when the node is built alone: a Func over an
    ImageParam (a Param for a scalar), with the same type and layout, whose extents are
    Params unless they are constants. Returns the Value, the argument name, and the extent
    Params by dimension."""
    name = f"{node_id}.{_UPSTREAM}{port}"
    func = pw.Func(name)
    dims = len(fused.extents)
    if dims == 0:
        param = pw.Param(fused.type, name)
        func[()] = param
        return Value(func, fused.layout, ()), name, {}
    image = pw.ImageParam(fused.type, dims, name)
    args = [pw.Var(v) for v in ("x", "y", "c", "w")[:dims]] if dims <= 4 else [pw.Var(f"d{i}") for i in range(dims)]
    func[tuple(args)] = image[tuple(args)]
    extents: list[Expr] = []
    params: dict[str, int] = {}
    for i, e in enumerate(fused.extents):
        constant = simplify(e)
        if isinstance(constant, Const):
            extents.append(constant)
        else:
            p = pw.Param(pw.Int(32), f"{name}.extent{i}")
            extents.append(p)
            params[p.name] = i
    return Value(func, fused.layout, tuple(extents)), name, params
