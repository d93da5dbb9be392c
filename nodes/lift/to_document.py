"""A lifted function as a pipeline document the editor opens: an `image_input` (and a clamp
`boundary_condition`, the lifted pipeline's repeat_edge) per input buffer or array, a
`scalar_parameter` per parameter the stages or sizes use, a `lifted_stage` node per stage
(its definition kept as data, see definition_json.py), an `output` per output buffer (and the
returned value), the stages grouped under the function's name, and the verification outcome
on every stage and in the document's description.

Buffers are seen as the lifted pipeline sees them: a C buffer is a gray image of elements
(`stride` columns by rows, interleaved channels side by side), a Python (h, w) array a gray
image and (h, w, 3) a colour one. Element types the document's inputs lack are converted,
and the document says so: i8 and i16 come from u8 and u16 inputs (the same bits), 32- and
64-bit integers and f64 from f32 inputs (by value: exact for integers below 2^24). Python
prototypes are lifted in the float32 approximation when they use float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.param import ImageParam
from pixelweave.nodes.document import Document
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.definition_json import Source, encode_stage, type_name
from pixelweave.nodes.lift.errors import LiftError

import pixelweave as pw

PORTS = ("a", "b", "c", "d", "e", "f", "g", "h")
LAYOUTS = {0: "scalar", 1: "array", 2: "gray", 3: "colour"}
INPUT_ELEMENTS = {"u8": "u8", "u16": "u16", "f32": "f32", "i8": "u8", "i16": "u16"}
PLANAR = (1, 2, 0)  # a Python (h, w, 3) array is f[c, x, y]; a colour value is f[x, y, c]
SAMPLES = {"gray": "camera.png", "colour": "astronaut.png"}
COLUMN = 240
ROW = 130


@dataclass
class Scalar:
    """A parameter of the lifted function, as a scalar_parameter node."""

    name: str
    type: str
    value: float
    minimum: float
    maximum: float


@dataclass
class LiftedDocument:
    """The document, what was verified and how (lines to print), and which node carries
    each of the function's inputs, parameters and outputs."""

    document: Document
    lines: list[str]
    verified: bool
    inputs: dict[str, str] = field(default_factory=dict)  # buffer or array -> image_input id
    params: dict[str, str] = field(default_factory=dict)  # parameter -> scalar_parameter id
    outputs: dict[str, str] = field(default_factory=dict)  # buffer ("result": returned value) -> output id
    notes: list[str] = field(default_factory=list)  # conversions the document makes

    def pipeline(self) -> pw.Pipeline:
        """The document built, as one engine Pipeline over its outputs."""
        from pixelweave.nodes.pipeline_build import build_document

        return build_document(self.document, check_lowering=False).pipeline()


class _Graph:
    """The Funcs a lifted function's outputs need: the boundary Func of each input image,
    and the stages, callees first."""

    def __init__(self, outputs: list[pw.Func]) -> None:
        self.boundaries: dict[int, ImageParam] = {}
        self.stages: list[pw.Func] = []
        self.reads: dict[int, list[Any]] = {}  # id(stage) -> Funcs, Params, ImageParams in reading order
        seen: set[int] = set()
        for f in outputs:
            self._visit(f, seen)

    def _visit(self, f: pw.Func, seen: set[int]) -> None:
        if id(f) in seen:
            return
        seen.add(id(f))
        found = _reads(f)
        images = [r for r in found if isinstance(r, ImageParam)]
        funcs = [r for r in found if isinstance(r, pw.Func) and r is not f]
        if images and not funcs and not f.updates() and len(images) == 1 and _is_image_call(f.value()):
            self.boundaries[id(f)] = images[0]
            return
        if any(isinstance(r, ImageParam) and not _extent_only(f, r) for r in found):
            raise ValueError(f"Func `{f.name()}` reads an input image other than through its edge")
        for g in funcs:
            self._visit(g, seen)
        self.reads[id(f)] = [r for r in found if r is not f]
        self.stages.append(f)


def _is_image_call(e: E.Expr) -> bool:
    return isinstance(e, E.Call) and e.call_kind == "image"


def _extent_only(f: pw.Func, image: ImageParam) -> bool:
    """Whether f uses image only through its extents (a Python loop bound), not its values."""
    return not any(isinstance(c, E.Call) and c.call_kind == "image" and c.target is image for c in _nodes(f))


def _definition_exprs(f: pw.Func) -> list[E.Expr]:
    out = [f.definition().value]
    for u in f.updates():
        out.extend([u.value, *u.args])
        if u.rdom is not None:
            out.extend(b for pair in u.rdom.bounds for b in pair)
        if u.predicate is not None:
            out.append(u.predicate)
    return out


def _nodes(f: pw.Func, extra: list[E.Expr] = ()) -> list[E.Expr]:
    seen: set[int] = set()
    order: list[E.Expr] = []
    todo = list(reversed([*_definition_exprs(f), *extra]))
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        order.append(e)
        todo.extend(reversed(e.children()))
    return order


def _reads(f: pw.Func, extra: list[E.Expr] = ()) -> list[Any]:
    """The Funcs, Params (by Variable) and images f's definitions (and extra) read, in order."""
    found: list[Any] = []
    keys: set[Any] = set()

    def add(key: Any, thing: Any) -> None:
        if key not in keys:
            keys.add(key)
            found.append(thing)

    for e in _nodes(f, extra):
        if (isinstance(e, E.Call) and e.call_kind == "func") or (isinstance(e, E.Call) and e.call_kind == "image"):
            add(id(e.target), e.target)
        elif isinstance(e, E.Variable) and e.kind == "param":
            if isinstance(e.owner, ImageParam):
                add(id(e.owner), e.owner)
            else:
                add(("param", str(e.name)), e)
    return found


class _Ports:
    """The input ports of one lifted_stage node, given out in reading order."""

    def __init__(self, stage: pw.Func) -> None:
        self.stage = stage
        self.by_source: dict[str, str] = {}  # source node id -> port
        self.described: dict[str, str] = {}  # port -> what it carries

    def port(self, source_id: str, what: str) -> str:
        if source_id not in self.by_source:
            if len(self.by_source) == len(PORTS):
                raise ValueError(
                    f"stage `{self.stage.name()}` reads more than {len(PORTS)} buffers, stages and parameters, "
                    "the inputs a lifted_stage node has"
                )
            self.by_source[source_id] = PORTS[len(self.by_source)]
            self.described[self.by_source[source_id]] = what
        return self.by_source[source_id]


class _Assembler:
    """Builds the document from a lifted function's Funcs, inputs and parameters."""

    def __init__(self, name: str, description: str) -> None:
        self.doc = Document(name=name, description=description)
        self.result = LiftedDocument(self.doc, [], False)
        self.sources: dict[int, tuple[str, tuple[int, ...] | None]] = {}  # id(Func) -> (node id, perm)
        self.image_nodes: dict[str, str] = {}  # image -> its boundary node
        self.param_nodes: dict[str, str] = {}
        self.depth: dict[int, int] = {}

    def build(
        self,
        outputs: list[tuple[str, pw.Func, list[E.Expr]]],
        extents_of: dict[int, list[E.Expr]],
        perms: dict[int, tuple[int, ...]],
        image_perms: dict[str, tuple[int, ...]],
        scalars: dict[str, Scalar],
        stage_info: dict[int, tuple[str, str]],
        verification: str,
        function: str,
    ) -> None:
        graph = _Graph([f for _, f, _ in outputs])
        for _, f, ext in outputs:
            extents_of[id(f)] = ext
        self.graph, self.perms, self.image_perms, self.extents_of = graph, perms, image_perms, extents_of
        self._inputs()
        self._params(scalars)
        for stage in graph.stages:
            self.sources[id(stage)] = (self.doc.unique_id(stage.name()), perms.get(id(stage)))
        stage_ids = []
        for stage in graph.stages:
            line, note = stage_info.get(id(stage), ("", ""))
            fallback = _node_order(outputs[0][2], perms.get(id(outputs[0][1])))
            stage_ids.append(self._stage(stage, {"verification": note or verification, "source": line}, fallback))
        last = COLUMN * (2 + max(self.depth.values(), default=0))
        for row, (name, f, _) in enumerate(outputs):
            node_id = self.doc.unique_id(name)
            self.doc.add_node("output", node_id, {"element": "same", "scale": False}, (last, row * ROW))
            self.doc.connect(self.sources[id(f)][0], node_id, "image")
            self.result.outputs[name] = node_id
        if stage_ids:
            self.doc.add_group(function, stage_ids)

    def _inputs(self) -> None:
        """An image_input and a clamp boundary_condition (the lifted repeat_edge) per image."""
        graph, doc = self.graph, self.doc
        images: dict[str, ImageParam] = {}
        for image in graph.boundaries.values():
            images.setdefault(image.name(), image)
        for stage in graph.stages:
            for r in graph.reads[id(stage)]:
                if isinstance(r, ImageParam):
                    images.setdefault(r.name(), r)
        for row, (name, image) in enumerate(sorted(images.items())):
            element = type_name(image.type())
            doc_element = INPUT_ELEMENTS.get(element, "f32")
            if doc_element != element:
                how = "the same bits" if element in INPUT_ELEMENTS else "by value, exact for integers below 2^24"
                if element == "f64":
                    how = "by value, exact for values an f32 holds"
                self.result.notes.append(f"input `{name}` ({element}) is read from a {doc_element} image ({how})")
            if image.dimensions() not in (2, 3):
                raise ValueError(f"input `{name}` has {image.dimensions()} dimensions; images have 2 or 3")
            layout = "colour" if image.dimensions() == 3 else "gray"
            node_id = doc.unique_id(name)
            # a bundled image, so that the editor previews at once (run and batch take any image)
            params = {"element": doc_element, "layout": layout, "sample": SAMPLES[layout]}
            doc.add_node("image_input", node_id, params, (0, row * ROW))
            edge = doc.unique_id(f"{node_id}_edge")
            doc.add_node("boundary_condition", edge, {"mode": "clamp"}, (COLUMN, row * ROW))
            doc.connect(node_id, edge, "image")
            self.image_nodes[name] = edge
            self.result.inputs[name] = node_id
        for fid, image in graph.boundaries.items():
            self.sources[fid] = (self.image_nodes[image.name()], self.image_perms.get(image.name()))

    def _params(self, scalars: dict[str, Scalar]) -> None:
        """A scalar_parameter per parameter the stages or their sizes use."""
        used: list[str] = []
        for stage in self.graph.stages:
            for r in _reads(stage, self.extents_of.get(id(stage), [])):
                if isinstance(r, E.Variable) and str(r.name) not in used:
                    used.append(str(r.name))
        base = len(self.image_nodes) * ROW
        for row, name in enumerate(used):
            if name not in scalars:
                raise ValueError(f"the stages read `{name}`, which is not a parameter of the function")
            s = scalars[name]
            element = "f32" if s.type[0] == "f" else "i32"
            if element != s.type:
                how = "by value" if s.type[0] == "f" else "converted by value: keep it in the type's range"
                self.result.notes.append(f"parameter `{name}` ({s.type}) is an {element} scalar parameter ({how})")
            node_id = self.doc.unique_id(name)
            cast = float if element == "f32" else int
            values = {"value": cast(s.value), "minimum": cast(s.minimum), "maximum": cast(s.maximum)}
            self.doc.add_node("scalar_parameter", node_id, {**values, "element": element}, (0, base + row * ROW))
            self.param_nodes[name] = node_id
            self.result.params[name] = node_id

    def _stage(self, stage: pw.Func, texts: dict[str, str], fallback: list[E.Expr] | None) -> str:
        """The lifted_stage node of one stage, connected to what it reads; its id."""
        node_id = self.sources[id(stage)][0]
        extents = _node_order(self.extents_of.get(id(stage)), self.perms.get(id(stage)))
        if extents is None and fallback is not None and len(fallback) == stage.dimensions():
            extents = fallback  # a lookup table: the output's size
        reads = [r for r in _reads(stage, extents or []) if r is not stage]  # what the size reads too
        ports = _Ports(stage)
        funcs: dict[int, Source] = {}
        params: dict[str, Source] = {}
        images: dict[str, Source] = {}
        for r in reads:
            if isinstance(r, pw.Func):
                src, perm = self.sources[id(r)]
                funcs[id(r)] = Source(ports.port(src, _describe_func(r, self.graph)), perm)
            elif isinstance(r, ImageParam):
                port = ports.port(self.image_nodes[r.name()], r.name())
                images[r.name()] = Source(port, self.image_perms.get(r.name()))
            else:
                params[str(r.name)] = Source(ports.port(self.param_nodes[str(r.name)], str(r.name)))
        for image in self.graph.boundaries.values():
            src = self.image_nodes[image.name()]
            if src in ports.by_source:
                images[image.name()] = Source(ports.by_source[src], self.image_perms.get(image.name()))
        if id(stage) in self.perms:
            funcs[id(stage)] = Source("", self.perms[id(stage)])
        layout = LAYOUTS.get(stage.dimensions())
        if layout is None:
            raise ValueError(f"stage `{stage.name()}` has {stage.dimensions()} dimensions; a node value has 0 to 3")
        if type_name(stage.type()) in ("u64", "i64"):
            raise ValueError(
                f"stage `{stage.name()}` is {type_name(stage.type())}; node values are at most 32-bit integers"
            )
        if extents is None:
            raise ValueError(f"the size of stage `{stage.name()}` is not known")
        definition = encode_stage(stage, layout, extents, funcs, params, images, ports.described)
        d = 1 + max([self.depth.get(id(r), 0) for r in reads if isinstance(r, pw.Func)] + [0])
        self.depth[id(stage)] = d
        row = sum(1 for i in self.depth.values() if i == d) - 1
        self.doc.add_node("lifted_stage", node_id, {"definition": definition, **texts}, (COLUMN * (1 + d), row * ROW))
        for src, port in ports.by_source.items():
            self.doc.connect(src, node_id, port)
        return node_id


def _describe_func(f: pw.Func, graph: _Graph) -> str:
    if id(f) in graph.boundaries:
        return f"{graph.boundaries[id(f)].name()} (clamped at its edges)"
    return f"stage {f.name()}"


def _node_order(extents: list[E.Expr] | None, perm: tuple[int, ...] | None) -> list[E.Expr] | None:
    if extents is None:
        return None
    return list(extents) if perm is None else [extents[p] for p in perm]


# ---------------------------------------------------------------------------- C


def _c_scalars(lifted: Any) -> dict[str, Scalar]:
    """Defaults and ranges as differential testing draws them (a declared range wins)."""
    out = {}
    for name, s in lifted.scalars.items():
        if name in lifted.ranges:
            lo, hi = lifted.ranges[name]
            out[name] = Scalar(name, s.type, lo, lo, hi)
        elif not S.is_int(s.type):
            out[name] = Scalar(name, s.type, 0.5, 0.0, 1.0)
        elif s.role == "extent":
            out[name] = Scalar(name, s.type, 256, 0, 4096)
        else:
            lo, hi = S.type_range(s.type) or (0, 255)
            out[name] = Scalar(name, s.type, max(lo, 0), max(lo, 0), min(hi, 255))
    return out


def c_document(report: Any) -> LiftedDocument:
    """The document of a lifted and verified C function (a report.LiftReport)."""
    from pixelweave.nodes.lift.to_engine import accumulator_extents, build, loop_trip, written_extents

    lift = report.lift
    # the algorithm as the C wrote it: a last write that wins stays a scatter in C's order (the
    # lifted pipeline computes it from the writes' positions, which a document need not show)
    lifted, engine = lift.lifted, build(lift.lifted, last_write_positions=False)
    lines = report.lines()
    checks = lines[1 + len(report.stages) :]
    verification = "; ".join(checks)
    asm = _Assembler(lifted.function, _description(lifted.file, lifted.function, checks))
    outputs = [(name, f, list(written_extents(engine, name))) for name, f in engine.outputs.items()]
    if engine.result is not None:
        outputs.append(("result", engine.result, []))
    extents_of: dict[int, list[E.Expr]] = {}
    stage_info: dict[int, tuple[str, str]] = {}
    file = Path(lifted.file).name
    for tag, f in engine.funcs.items():
        if tag in lifted.accumulators:
            extents_of[id(f)] = list(accumulator_extents(engine, tag))
            line = lifted.accumulators[tag].line
        else:
            v = lifted.versions[tag.partition("#")[0]]  # "#wide": a table widened (to_engine.py)
            b = lifted.buffers[v.buffer]
            line = lifted.stage_lines.get(tag, v.line)
            try:
                size = list(written_extents(engine, v.buffer)) if b.written else []
            except ValueError:
                size = []
            if len(size) == 2:
                trips = [loop_trip(engine, d) for d in v.dims]
                extents_of[id(f)] = size + trips
        stage_info[id(f)] = (f"{file}:{line}" if line else file, "")
    if engine.result is not None:
        stage_info[id(engine.result)] = (file, "")  # the returned value
    asm.build(outputs, extents_of, {}, {}, _c_scalars(lifted), stage_info, verification, lifted.function)
    result = asm.result
    result.verified = report.verified
    result.lines = [*lines, *(f"note: {n}" for n in result.notes)]
    if result.notes:
        asm.doc.description += "\n" + "\n".join(f"Note: {n}." for n in result.notes)
    _check_sizes(result, lift)
    return result


def _description(file: str, function: str, checks: list[str]) -> str:
    """What the document is and how it was verified (its stages' definitions are on the nodes)."""
    return "\n".join([f"`{function}` lifted from {Path(file).name} by `pixelweave lift`.", *checks])


def _check_sizes(result: LiftedDocument, lift: Any) -> None:
    """The document's output sizes against what the C function writes, for a few parameter
    values as differential testing draws them: the size expressions are derived, and a
    mismatch is refused here rather than met as a wrong-sized output."""
    from pixelweave.nodes.lift.regions import written_extent
    from pixelweave.nodes.lift.verify import random_case
    from pixelweave.nodes.pipeline_build import build_document

    built = build_document(result.document, check_lowering=False)
    rng = np.random.default_rng(1)
    for _ in range(3):
        scalars, buffers = random_case(lift, rng, lift.lifted.ranges)
        wanted = {n: list(written_extent(lift.lifted, n, scalars)) for n in lift.engine.outputs}
        if any(min(w) <= 0 for w in wanted.values()):
            continue  # nothing written: the document's output would be empty
        images, params = document_inputs(result, lift, scalars, buffers)
        sizes = built.output_sizes(images, params)
        for name, want in wanted.items():
            node_id = result.outputs[name]
            if sizes[node_id] != want:
                raise ValueError(
                    f"the size of output `{name}` cannot be derived for the document "
                    f"({sizes[node_id]} instead of {want} for {scalars})"
                )


def document_inputs(
    result: LiftedDocument, lift: Any, scalars: dict[str, Any], buffers: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The document's images and parameter values for a call of the C function (flat byte
    buffers and scalar arguments): each buffer as rows of `stride` elements, converted to
    the element type of its input node."""
    from pixelweave.nodes.lift.regions import ELEM_BYTES, buffer_layout
    from pixelweave.nodes.lift.to_engine import NP_TYPES

    lifted = lift.lifted
    images = {}
    for key, node_id in result.inputs.items():
        name = key[: -len("_in")] if key not in lifted.buffers and key.endswith("_in") else key
        rows, stride = buffer_layout(lifted, name, scalars, buffers[name].size)
        elem = lifted.buffers[name].elem
        flat = buffers[name][: rows * stride * ELEM_BYTES[elem]].view(NP_TYPES[elem]).reshape(rows, stride)
        element = result.document.node(node_id).params["element"]
        target = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}[element]
        if flat.dtype == target:
            array = flat
        elif element != "f32":
            array = flat.view(target)  # i8 as u8, i16 as u16: the same bits
        else:
            array = flat.astype(np.float32)  # by value
        images[node_id] = np.ascontiguousarray(array)
    params = {node_id: scalars[name] for name, node_id in result.params.items()}
    return images, params


def run_like_c(result: LiftedDocument, lift: Any, built: Any, buffers: dict[str, np.ndarray], scalars: dict[str, Any]):
    """Run the built document the way the C function is called: the outputs are written into
    the flat buffers (over what the function writes), and the returned value is returned."""
    from pixelweave.nodes.lift.regions import ELEM_BYTES, buffer_layout, written_extent
    from pixelweave.nodes.lift.to_engine import NP_TYPES

    lifted = lift.lifted
    images, params = document_inputs(result, lift, scalars, buffers)
    if (
        not any(min(written_extent(lifted, n, scalars)) > 0 for n in lift.engine.outputs)
        and "result" not in result.outputs
    ):
        return None
    outs = built.run(images, params)
    value = None
    for name, node_id in result.outputs.items():
        out = np.asarray(outs[node_id])
        if name == "result":
            value = out.item()
            continue
        rows, stride = buffer_layout(lifted, name, scalars, buffers[name].size)
        elem = lifted.buffers[name].elem
        view = buffers[name][: rows * stride * ELEM_BYTES[elem]].view(NP_TYPES[elem]).reshape(rows, stride)
        view[: out.shape[0], : out.shape[1]] = out
    return value


# ---------------------------------------------------------------------------- Python


def python_document(report: Any) -> LiftedDocument:
    """The document of a lifted Python prototype (a report.PythonReport made in the float32
    approximation when the prototype uses float64)."""
    lift = report.lift
    lines = report.lines()
    checks = lines[2:]
    verification = "; ".join(checks)
    asm = _Assembler(lift.function, _description(lift.file or "prototype.py", lift.function, checks))
    extents_of: dict[int, list[E.Expr]] = {}
    perms: dict[int, tuple[int, ...]] = {}
    for name, f in lift.stages.items():
        extents_of[id(f)] = list(lift.extents[name])
        if f.dimensions() == 3:
            perms[id(f)] = PLANAR
    image_perms = {}
    scalars: dict[str, Scalar] = {}
    for name, kind in lift.inputs.items():
        value = lift.param_values[name]
        if kind == "array" and np.asarray(value).ndim == 3:
            image_perms[name] = PLANAR
        elif kind == "scalar":
            is_float = isinstance(value, (float, np.floating))
            t = ("f32" if lift.approximate else "f64") if is_float else "i32"
            v = float(value)
            lo, hi = (min(0.0, v), max(1.0, 4 * v)) if is_float else (min(0, int(v)), max(1024, 4 * int(v)))
            scalars[name] = Scalar(name, t, v, lo, hi)
    output_extents = list(lift.extents.get(_output_name(lift), ())) or [
        pw.cast(pw.Int(32), n) for n in reversed(lift.output_shape)
    ]
    outputs = [("result", lift.output, output_extents)]
    asm.build(outputs, extents_of, perms, image_perms, scalars, {}, verification, lift.function)
    result = asm.result
    result.verified = report.verified
    if lift.approximate:
        result.notes.append("float64 is computed as float32: the document's inputs and parameters are f32")
    result.lines = [*lines, *(f"note: {n}" for n in result.notes)]
    if result.notes:
        asm.doc.description += "\n" + "\n".join(f"Note: {n}." for n in result.notes)
    from pixelweave.nodes.pipeline_build import build_document

    build_document(result.document, check_lowering=False)
    return result


def _output_name(lift: Any) -> str:
    return next((n for n, f in lift.stages.items() if f is lift.output), "")


# ---------------------------------------------------------------------------- entry points


def lift_document(path: str | Path, function: str, trials: int = 8, seed: int = 0) -> LiftedDocument:
    """Lift a function of a C file or a Python prototype, verify it, and make its document
    (LiftError when it cannot be lifted; ValueError when the lifted pipeline has no document
    form). The Pipeline itself is `lift_c(path, function).engine.pipeline` or
    `lift_python(fn, args).pipeline`."""
    from pixelweave.nodes.lift.report import lift_report, python_report

    path = Path(path)
    if path.suffix == ".py":
        report = python_report(path, function, approximate=True)
        return python_document(report)
    if path.suffix != ".c":
        raise LiftError(str(path), None, "the file", "lift takes a C file (.c) or a Python prototype (.py)")
    return c_document(lift_report(path, function, trials=trials, seed=seed))


def functions_in(path: str | Path) -> list[str]:
    """The functions a file defines, to offer for lifting: a C file's function definitions,
    a Python prototype's top-level functions that its examples() gives arguments for (read
    from the source without running it; all top-level functions when there is no examples())."""
    import ast
    import re

    path = Path(path)
    text = path.read_text(errors="replace")
    if path.suffix == ".py":
        tree = ast.parse(text)
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        examples = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "examples"), None)
        keys = (
            {c.value for c in ast.walk(examples) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            if examples
            else set()
        )
        return [n for n in names if n != "examples" and (not keys or n in keys)]
    pattern = r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*\)\s*\{"
    return [m for m in re.findall(pattern, text, re.M) if m not in ("if", "for", "while", "switch")]
