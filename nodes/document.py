"""The pipeline document: a versioned, diff-friendly JSON file describing a node graph.

`Document` is the in-memory model the editor changes (add, remove, connect, set parameters
and schedules); `to_json()`/`from_json()` convert it to and from plain JSON data, `dumps()`
writes the canonical text (stable key order, 2-space indent, one node per block) and
`save()` writes it atomically. Loading (`load_document`, `Document.load`) reports every
problem at once in a DocumentError, each naming its node: the document format is described
in docs/document-format.md.

Loading never runs code from the file: it is JSON, checked value by value against the node
types' declared ports and parameters, then built with the engine to catch what only the
engine can tell (port types, schedules the engine refuses).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pixelweave.nodes.errors import DocumentError, NodeError, ParameterError
from pixelweave.nodes.files import mode_for
from pixelweave.nodes.schedule_spec import check_directive, check_schedule, rename_referenced_node

FORMAT = "pixelweave.pipeline"
VERSION = 1
IMAGES = Path(__file__).resolve().parent.parent / "resources" / "images"
NODE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Node ids name engine Params and Funcs; these are the names of the loop variables nodes use
# (a Param named like a Var would be confused with it).
RESERVED_IDS = frozenset({"x", "y", "c", "i"})
TOP_KEYS = ("format", "version", "name", "description", "nodes", "groups")
NODE_KEYS = ("id", "type", "params", "inputs", "schedule", "schedules", "position")
# The targets a schedule is written for. "host" (every CPU target) is the node's `schedule`;
# the others are keys of its optional `schedules` object.
HOST = "host"
SCHEDULE_TARGETS = ("opencl",)
TARGET_TITLES = {HOST: "CPU", "opencl": "OpenCL"}
GROUP_KEYS = ("name", "nodes", "colour")
GROUP_COLOUR = (70, 90, 110)


@dataclass
class DocNode:
    """One node of a document: its id (chosen by the document, stable), its node type,
    complete parameter values (JSON), input connections ("port" -> "node.port"), schedule
    for the CPU (local Func name -> directives), schedules for other targets (target ->
    schedule, see schedule_for) and editor position."""

    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    schedule: dict[str, list[list[Any]]] = field(default_factory=dict)
    position: tuple[float, float] = (0, 0)
    schedules: dict[str, dict[str, list[list[Any]]]] = field(default_factory=dict)

    def schedule_for(self, target: str) -> dict[str, list[list[Any]]]:
        """The schedule the node has for a compile target: its OpenCL schedule for "opencl"
        (empty when it has none: the engine's default), its CPU schedule for any other."""
        kind = schedule_target(target)
        return self.schedule if kind == HOST else self.schedules.get(kind, {})

    def all_schedules(self) -> dict[str, dict[str, list[list[Any]]]]:
        """Every schedule of the node by target, the CPU one under "host"."""
        return {HOST: self.schedule, **self.schedules}

    def source(self, port: str) -> tuple[str, str] | None:
        """(node id, output port) connected to an input port, or None."""
        ref = self.inputs.get(port)
        if not isinstance(ref, str) or "." not in ref:
            return None
        node, _, out = ref.partition(".")
        return node, out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type, "params": _sorted(self._complete_params())}
        if self.inputs:
            data["inputs"] = _sorted(self.inputs)
        if self.schedule:
            data["schedule"] = _sorted(self.schedule)
        schedules = {t: _sorted(s) for t, s in sorted(self.schedules.items()) if s}
        if schedules:
            data["schedules"] = schedules
        data["position"] = list(self.position)
        return data

    def _complete_params(self) -> dict[str, Any]:
        """The parameters with defaults filled in for any missing one (when the type is known)."""
        from pixelweave.nodes.node_type import node_types

        cls = node_types().get(self.type)
        params = {p.name: _jsonable(p.default) for p in cls.params} if cls else {}
        params.update(self.params)
        return params


@dataclass
class Group:
    """A titled frame the editor draws around some nodes (a backdrop). It only organises the
    drawing: it changes nothing in the pipeline. A node belongs to at most one group."""

    name: str
    nodes: list[str]
    colour: tuple[int, int, int] = GROUP_COLOUR

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "nodes": list(self.nodes), "colour": list(self.colour)}


def schedule_target(target: str) -> str:
    """Which of a node's schedules a compile target uses: "opencl" for "opencl", "host"
    (the CPU schedule) for every CPU target and for "reference"."""
    return target if target in SCHEDULE_TARGETS else HOST


def _sorted(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in sorted(d)}


def _jsonable(value: Any) -> Any:
    """A parameter value as fresh JSON data: a default (a `data` parameter's nested lists and
    objects included) is copied, so that editing a node's value never changes the default."""
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def resolve_sample(sample: str, base: Path | None) -> Path | None:
    """A sample image path: absolute, else relative to the document's folder, else one of the
    bundled images in resources/images. None if empty or not found."""
    if not sample:
        return None
    p = Path(sample).expanduser()
    if p.is_absolute():
        return p if p.exists() else None
    for folder in ([base] if base is not None else []) + [IMAGES]:
        if (folder / p).exists():
            return folder / p
    return None


@dataclass
class Document:
    """A pipeline document. Node order is kept: output nodes are realized in it."""

    name: str = "Untitled"
    description: str = ""
    nodes: list[DocNode] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)
    groups: list[Group] = field(default_factory=list)

    # ------------------------------------------------------------------ queries
    def node(self, node_id: str) -> DocNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise NodeError(f"there is no node `{node_id}`")

    def has_node(self, node_id: str) -> bool:
        return any(n.id == node_id for n in self.nodes)

    def nodes_of_type(self, type_name: str) -> list[DocNode]:
        return [n for n in self.nodes if n.type == type_name]

    def group(self, name: str) -> Group:
        """The group of that name (NodeError if there is none)."""
        for g in self.groups:
            if g.name == name:
                return g
        raise NodeError(f"there is no group `{name}`")

    def group_of(self, node_id: str) -> Group | None:
        """The group a node belongs to, if any."""
        return next((g for g in self.groups if node_id in g.nodes), None)

    @property
    def folder(self) -> Path | None:
        return self.path.resolve().parent if self.path is not None else None

    def sample_path(self, node_id: str) -> Path | None:
        """The default image of an input node (its `sample` parameter, resolved)."""
        sample = self.node(node_id).params.get("sample", "")
        return resolve_sample(sample, self.folder) if isinstance(sample, str) else None

    # ------------------------------------------------------------------ editing
    def unique_id(self, stem: str) -> str:
        """stem, or stem_2, stem_3, ...: the first id not used yet."""
        stem = re.sub(r"\W", "_", stem) or "node"
        if stem[0].isdigit() or stem in RESERVED_IDS:
            stem = f"n_{stem}"
        candidate, k = stem, 2
        while self.has_node(candidate):
            candidate, k = f"{stem}_{k}", k + 1
        return candidate

    def add_node(
        self,
        type_name: str,
        node_id: str | None = None,
        params: dict[str, Any] | None = None,
        position: tuple[float, float] = (0, 0),
    ) -> DocNode:
        """A new node of a known type, every parameter at its default unless given."""
        from pixelweave.nodes.node_type import node_type

        cls = node_type(type_name)
        node_id = node_id or self.unique_id(type_name)
        _check_id(node_id)
        if self.has_node(node_id):
            raise NodeError(f"node id `{node_id}` is already used")
        values = {p.name: _jsonable(p.default) for p in cls.params}
        node = DocNode(node_id, type_name, values, position=tuple(position))  # type: ignore[arg-type]
        for name, value in (params or {}).items():
            self._set_param(node, name, value)
        self.nodes.append(node)
        return node

    def remove_node(self, node_id: str) -> None:
        """Removes a node and every connection from it, and takes it out of its group (a group
        left empty goes too)."""
        self.nodes.remove(self.node(node_id))
        for n in self.nodes:
            for port in [p for p in n.inputs if (n.source(p) or ("",))[0] == node_id]:
                del n.inputs[port]
        self._ungroup([node_id])

    def rename_node(self, old: str, new: str) -> None:
        """Changes a node id, updating connections and schedule references to it."""
        _check_id(new)
        if self.has_node(new):
            raise NodeError(f"node id `{new}` is already used")
        self.node(old).id = new
        for g in self.groups:
            g.nodes = [new if i == old else i for i in g.nodes]
        for n in self.nodes:
            for port, ref in n.inputs.items():
                if ref.startswith(f"{old}."):
                    n.inputs[port] = f"{new}.{ref[len(old) + 1 :]}"
            for schedule in n.all_schedules().values():
                for directives in schedule.values():
                    for d in directives:
                        rename_referenced_node(d, {old: new})

    def add_group(
        self, name: str, node_ids: list[str] | tuple[str, ...], colour: tuple[int, int, int] | None = None
    ) -> Group:
        """A new group of existing nodes (kept in document order). A node already in another
        group moves to this one; a group that loses all its nodes that way is removed."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            raise NodeError("a group needs at least one node")
        group = Group(name, sorted(ids, key=self._node_index), GROUP_COLOUR if colour is None else colour)
        if any(g.name == name for g in self.groups):
            raise NodeError(f"group name `{name}` is already used")
        problems = _group_problems([group], {n.id for n in self.nodes})
        if problems:
            raise NodeError("; ".join(problems))
        group.colour = tuple(group.colour)  # type: ignore[assignment]
        self._ungroup(ids)
        self.groups.append(group)
        return group

    def remove_group(self, name: str) -> None:
        """Removes a group (its nodes stay in the document, ungrouped)."""
        self.groups.remove(self.group(name))

    def _node_index(self, node_id: str) -> int:
        return next(k for k, n in enumerate(self.nodes) if n.id == node_id) if self.has_node(node_id) else -1

    def _ungroup(self, node_ids: list[str]) -> None:
        """Takes nodes out of their groups, removing groups left empty."""
        for g in self.groups:
            g.nodes = [i for i in g.nodes if i not in node_ids]
        self.groups[:] = [g for g in self.groups if g.nodes]

    def connect(self, source: str, target: str, port: str, source_port: str = "out") -> None:
        """Connects output `source_port` of node `source` to input `port` of node `target`."""
        from pixelweave.nodes.node_type import node_type

        src, dst = self.node(source), self.node(target)
        if node_type(dst.type).input_port(port) is None:
            raise NodeError(f"a {dst.type} node has no input `{port}`", target)
        if node_type(src.type).output_port(source_port) is None:
            raise NodeError(f"a {src.type} node has no output `{source_port}`", source)
        dst.inputs[port] = f"{source}.{source_port}"

    def disconnect(self, target: str, port: str) -> None:
        self.node(target).inputs.pop(port, None)

    def set_param(self, node_id: str, name: str, value: Any) -> None:
        """Sets a parameter, checked against its declaration (ParameterError if it does not fit)."""
        self._set_param(self.node(node_id), name, value)

    @staticmethod
    def _set_param(node: DocNode, name: str, value: Any) -> None:
        from pixelweave.nodes.node_type import node_type

        param = next((p for p in node_type(node.type).params if p.name == name), None)
        if param is None:
            raise ParameterError(f"a {node.type} node has no parameter `{name}`", node.id)
        try:
            param.check(value)
        except ParameterError as e:
            raise ParameterError(e.detail, node.id) from None
        node.params[name] = _jsonable(value)

    def set_schedule(self, node_id: str, key: str, directives: list[list[Any]], target: str = HOST) -> None:
        """Sets the directives of one Func of a node ([] removes them) in its schedule for
        `target` ("host" or "opencl"); NodeError naming every static problem (the engine's
        verdict comes when the document is built)."""
        node = self.node(node_id)
        kind = schedule_target(target)
        if kind != target and target != HOST:
            known = ", ".join((HOST, *SCHEDULE_TARGETS))
            raise NodeError(f"there are no schedules for target {target!r} (targets: {known})")
        problems = check_schedule({key: directives})
        if problems:
            raise NodeError("; ".join(problems), node_id)
        schedule = node.schedule if kind == HOST else node.schedules.setdefault(kind, {})
        if directives:
            schedule[key] = [list(d) for d in directives]
        else:
            schedule.pop(key, None)
        if kind != HOST and not schedule:
            node.schedules.pop(kind, None)

    # ------------------------------------------------------------------ checks
    def validate(self) -> list[str]:
        """Every problem found without the engine (types, parameters, connections, cycles,
        schedule syntax, outputs), one line each, naming the node."""
        return [format_problem(p) for p in self._problems()]

    def _problems(self) -> list[Problem]:
        return _validate(self)

    def node_problems(self, node_ids: set[str]) -> list[str]:
        """The problems that stop the given nodes from being built (types, parameters,
        connections), one line each, naming the node; schedules and outputs are not checked."""
        return [format_problem(p) for p in self._problems() if p.node in node_ids and p.kind == "node"]

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "description": self.description,
            "nodes": [n.to_json() for n in self.nodes],
        }
        if self.groups:  # optional: documents without groups keep their text
            data["groups"] = [g.to_json() for g in self.groups]
        return data

    def dumps(self) -> str:
        """The canonical text: fixed key order, 2-space indent, short lists on one line."""
        return _dump(self.to_json(), 0) + "\n"

    @classmethod
    def from_json(cls, data: Any, source: str | None = None) -> Document:
        """A Document from parsed JSON (migrated from older versions); DocumentError listing
        every problem of its structure. Does not build it: see `load_document` for that."""
        problems: list[str] = []
        doc = _from_json(data, problems)
        if problems:
            raise DocumentError(problems, source)
        return doc

    @classmethod
    def loads(cls, text: str, source: str | None = None) -> Document:
        """A Document from JSON text, checked in structure (malformed JSON: line and column)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise DocumentError([f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}"], source) from None
        return cls.from_json(data, source)

    @classmethod
    def load(cls, path: str | Path) -> Document:
        """Reads and fully validates a document (see load_document)."""
        return load_document(path)

    def save(self, path: str | Path | None = None) -> Path:
        """Writes the document atomically (a temporary file beside it, then a rename)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise NodeError("the document has no file name yet: give a path to save it to")
        text = self.dumps()
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, mode_for(target))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.path = target
        return target


def read_document(path: str | Path) -> Document:
    """Reads a document and checks its structure (not its build): the first half of loading."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise DocumentError([f"cannot read the document: {why}"], str(path)) from None
    doc = Document.loads(text, str(path))
    doc.path = path
    return doc


def load_document(path: str | Path) -> Document:
    """Reads a document and validates everything, building it with the engine (port types,
    the schedules of every target); DocumentError listing every problem."""
    from pixelweave.nodes.pipeline_build import check_every_target

    doc = read_document(path)
    check_every_target(doc)
    return doc


# ---------------------------------------------------------------------------- migration


def _from_version_0(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0 wrote a connection as {"node": ID, "port": PORT} and a position as
    {"x": X, "y": Y}; version 1 writes "ID.PORT" and [X, Y]."""
    for node in data.get("nodes", []) if isinstance(data.get("nodes"), list) else []:
        if not isinstance(node, dict):
            continue
        inputs = node.get("inputs")
        if isinstance(inputs, dict):
            for port, ref in inputs.items():
                if isinstance(ref, dict) and set(ref) == {"node", "port"}:
                    inputs[port] = f"{ref['node']}.{ref['port']}"
        pos = node.get("position")
        if isinstance(pos, dict) and set(pos) == {"x", "y"}:
            node["position"] = [pos["x"], pos["y"]]
    data["version"] = 1
    return data


# MIGRATIONS[n] turns version n data into version n + 1 (in place or not; it returns it).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _from_version_0}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Data of any readable version brought to VERSION, one step at a time."""
    version = data["version"]
    while version < VERSION:
        if version not in MIGRATIONS:
            raise DocumentError([f"format version {version} cannot be read (no migration from it)"])
        data = MIGRATIONS[version](data)
        version += 1
        data["version"] = version
    return data


# ---------------------------------------------------------------------------- structure


def _from_json(data: Any, problems: list[str]) -> Document:
    doc = Document()
    if not isinstance(data, dict):
        problems.append(f"a document must be a JSON object, got {type(data).__name__}")
        return doc
    if data.get("format") != FORMAT:
        problems.append(f'not a Pixelweave pipeline: "format" must be "{FORMAT}", got {data.get("format")!r}')
        return doc
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        problems.append(f'"version" must be a format version number, got {version!r}')
        return doc
    if version > VERSION:
        problems.append(f"written by a newer Pixelweave: format version {version}, this version reads up to {VERSION}")
        return doc
    try:
        data = migrate(dict(data))
    except DocumentError as e:
        problems.extend(e.problems)
        return doc
    for key in data:
        if key not in TOP_KEYS:
            problems.append(f"unknown key {key!r} at the top level (known: {', '.join(TOP_KEYS)})")
    for key in ("name", "description"):
        value = data.get(key, "")
        if not isinstance(value, str):
            problems.append(f'"{key}" must be a string, got {value!r}')
        else:
            setattr(doc, key, value)
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        problems.append(f'"nodes" must be a list of nodes, got {nodes!r}')
        return doc
    for index, raw in enumerate(nodes):
        node = _node_from_json(raw, index, problems)
        if node is not None:
            doc.nodes.append(node)
    groups = data.get("groups", [])
    if not isinstance(groups, list):
        problems.append(f'"groups" must be a list of groups, got {groups!r}')
        return doc
    for index, raw in enumerate(groups):
        group = _group_from_json(raw, index, problems)
        if group is not None:
            doc.groups.append(group)
    problems.extend(_group_problems(doc.groups, {n.id for n in doc.nodes}))
    return doc


def _group_from_json(raw: Any, index: int, problems: list[str]) -> Group | None:
    """A Group with the JSON types checked; its contents are checked by _group_problems."""
    where = f"group {index + 1}"
    if not isinstance(raw, dict):
        problems.append(f'{where} must be an object {{"name": ..., "nodes": [...], "colour": [r, g, b]}}, got {raw!r}')
        return None
    name = raw.get("name")
    if not isinstance(name, str):
        problems.append(f'{where} needs a "name" string, got {name!r}')
        return None
    where = f"group `{name}`"
    for key in raw:
        if key not in GROUP_KEYS:
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(GROUP_KEYS)})")
    ids = raw.get("nodes")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        problems.append(f'{where}: "nodes" must be a list of node ids, got {ids!r}')
        return None
    colour = raw.get("colour", list(GROUP_COLOUR))
    return Group(name, list(ids), tuple(colour) if isinstance(colour, list) else colour)


def _group_problems(groups: list[Group], ids: set[str]) -> list[str]:
    """What is wrong with groups of a document whose node ids are `ids`, one line each."""
    problems = []
    owner: dict[str, str] = {}
    names: set[str] = set()
    for g in groups:
        if not g.name.strip():
            problems.append(f"a group has an empty name (its nodes: {', '.join(g.nodes) or 'none'})")
        elif g.name in names:
            problems.append(f"the group name `{g.name}` is used by more than one group")
        names.add(g.name)
        colour = g.colour
        if not (
            isinstance(colour, (tuple, list))
            and len(colour) == 3
            and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in colour)
        ):
            shown = list(colour) if isinstance(colour, tuple) else colour
            problems.append(f"group `{g.name}`: the colour must be [r, g, b], three integers 0..255, got {shown!r}")
        if not g.nodes:
            problems.append(f"group `{g.name}` names no nodes; a group needs at least one")
        for node_id in sorted({i for i in g.nodes if g.nodes.count(i) > 1}, key=g.nodes.index):
            problems.append(f"group `{g.name}` names node `{node_id}` twice")
        for node_id in dict.fromkeys(g.nodes):
            if node_id not in ids:
                near = difflib.get_close_matches(node_id, ids, n=1)
                hint = f"; did you mean `{near[0]}`?" if near else ""
                problems.append(f"group `{g.name}` names node `{node_id}`, which does not exist{hint}")
            elif node_id in owner:
                problems.append(
                    f"node `{node_id}` is in group `{owner[node_id]}` and in group `{g.name}`; "
                    "a node belongs to one group at most"
                )
            else:
                owner[node_id] = g.name
    return problems


def _node_from_json(raw: Any, index: int, problems: list[str]) -> DocNode | None:
    where = f"node {index + 1}"
    if not isinstance(raw, dict):
        problems.append(f"{where} must be an object, got {raw!r}")
        return None
    node_id = raw.get("id")
    if not isinstance(node_id, str):
        problems.append(f'{where} needs an "id" string, got {node_id!r}')
        return None
    where = f"node `{node_id}`"
    node_type = raw.get("type")
    if not isinstance(node_type, str):
        problems.append(f'{where}: needs a "type" string, got {node_type!r}')
        return None
    node = DocNode(node_id, node_type)
    for key in raw:
        if key not in NODE_KEYS:
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(NODE_KEYS)})")
    params = raw.get("params", {})
    if isinstance(params, dict):
        node.params = dict(params)
    else:
        problems.append(f'{where}: "params" must be an object, got {params!r}')
    inputs = raw.get("inputs", {})
    if isinstance(inputs, dict):
        node.inputs = dict(inputs)
    else:
        problems.append(f'{where}: "inputs" must be an object mapping ports to "node.port", got {inputs!r}')
    schedule = raw.get("schedule", {})
    if isinstance(schedule, dict):
        node.schedule = dict(schedule)
    else:
        problems.append(f'{where}: "schedule" must be an object mapping Func names to directives, got {schedule!r}')
    schedules = raw.get("schedules", {})
    if not isinstance(schedules, dict):
        problems.append(f'{where}: "schedules" must be an object mapping targets ({", ".join(SCHEDULE_TARGETS)}) '
                        f"to schedules, got {schedules!r}")  # fmt: skip
        schedules = {}
    for target, value in schedules.items():
        if target not in SCHEDULE_TARGETS:
            why = "its CPU schedule is `schedule`" if target in (HOST, "cpu") else "no such target"
            problems.append(
                f'{where}: "schedules" has target {target!r} ({why}); the targets are {", ".join(SCHEDULE_TARGETS)}'
            )
        elif not isinstance(value, dict):
            problems.append(f'{where}: the {TARGET_TITLES[target]} schedule must be an object mapping Func names to '
                            f"directives, got {value!r}")  # fmt: skip
        else:
            node.schedules[target] = dict(value)
    position = raw.get("position", [0, 0])
    if (
        isinstance(position, list)
        and len(position) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in position)
    ):
        node.position = (position[0], position[1])
    else:
        problems.append(f'{where}: "position" must be [x, y] numbers, got {position!r}')
    return node


# ---------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class Problem:
    """One fault; `kind` says what it blocks: "node" (the node cannot be built), "schedule"
    (its schedule cannot be applied) or "document"."""

    node: str | None
    kind: str
    message: str
    target: str = HOST  # for a "schedule" problem: the schedule's target


GPU_DIRECTIVES = ("gpu_blocks", "gpu_threads", "gpu_tile", "gpu_single_thread")


def _gpu_on_cpu(schedule: Any) -> list[str]:
    """GPU directives in a CPU schedule: they belong in the node's OpenCL schedule."""
    if not isinstance(schedule, dict):
        return []
    found = sorted({d[0] for ds in schedule.values() if isinstance(ds, list) for d in ds
                    if isinstance(d, list) and d and d[0] in GPU_DIRECTIVES})  # fmt: skip
    if not found:
        return []
    names = ", ".join(f"`{n}`" for n in found)
    return [f"{names} in the CPU schedule: GPU mapping needs target='opencl'; put it in the node's OpenCL "
            'schedule ("schedules": {"opencl": ...})']  # fmt: skip


def format_problem(p: Problem) -> str:
    return f"node `{p.node}`: {p.message}" if p.node else p.message


def _check_id(node_id: str) -> None:
    if not NODE_ID.fullmatch(node_id):
        raise NodeError(f"node id {node_id!r} must be letters, digits and underscores, not starting with a digit")
    if node_id in RESERVED_IDS:
        raise NodeError(f"node id {node_id!r} is reserved (a loop variable name)")


def _validate(doc: Document) -> list[Problem]:
    from pixelweave.nodes.node_type import node_types, unknown_type_message

    problems: list[Problem] = []
    types = node_types()
    ids = [n.id for n in doc.nodes]
    by_id = {n.id: n for n in doc.nodes}
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(Problem(dup, "node", f"the id is used by {ids.count(dup)} nodes; ids must be unique"))
    for node in doc.nodes:
        try:
            _check_id(node.id)
        except NodeError as e:
            problems.append(Problem(node.id, "node", e.detail))
        cls = types.get(node.type)
        if cls is None:
            problems.append(Problem(node.id, "node", unknown_type_message(node.type)))
        else:
            problems.extend(Problem(node.id, "node", m) for m in _param_problems(node, cls))
            problems.extend(Problem(node.id, "node", m) for m in _input_problems(node, cls, by_id, types))
        problems.extend(Problem(node.id, "schedule", m) for m in check_schedule(node.schedule))
        problems.extend(Problem(node.id, "schedule", m) for m in _gpu_on_cpu(node.schedule))
        for target, schedule in node.schedules.items():
            title = TARGET_TITLES[target]
            problems.extend(
                Problem(node.id, "schedule", f"{title} schedule: {m}", target) for m in check_schedule(schedule)
            )
    problems.extend(_cycle_problems(doc, by_id))
    if not any(getattr(types.get(n.type), "is_output", False) for n in doc.nodes):
        problems.append(Problem(None, "document", "the pipeline has no output node; add an output node and connect it"))
    return problems


def _param_problems(node: DocNode, cls: Any) -> list[str]:
    out = []
    known = {p.name: p for p in cls.params}
    for name in node.params:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else f" (its parameters: {', '.join(known) or 'none'})"
            out.append(f"unknown parameter `{name}` for a {cls.type_name} node{hint}")
    for name, p in known.items():
        if name not in node.params:
            out.append(f"missing parameter `{name}` (its default is {json.dumps(_jsonable(p.default))})")
            continue
        try:
            p.check(node.params[name])
        except ParameterError as e:
            out.append(e.detail)
    if not out:
        out.extend(cls.check_values({p.name: p.check(node.params[p.name]) for p in known.values()}))
    return out


def _input_problems(node: DocNode, cls: Any, by_id: dict[str, DocNode], types: dict[str, Any]) -> list[str]:
    out = []
    for port, ref in node.inputs.items():
        target = cls.input_port(port)
        if target is None:
            names = ", ".join(p.name for p in cls.inputs) or "none"
            out.append(f"a {cls.type_name} node has no input `{port}` (its inputs: {names})")
            continue
        if not isinstance(ref, str) or ref.count(".") != 1:
            out.append(f'input `{port}` must be connected as "node.port", got {ref!r}')
            continue
        src_id, src_port = ref.split(".")
        src = by_id.get(src_id)
        if src is None:
            near = difflib.get_close_matches(src_id, by_id, n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            out.append(f"input `{port}` is connected to node `{src_id}`, which does not exist{hint}")
            continue
        src_cls = types.get(src.type)
        if src_cls is None:
            continue  # reported on that node
        source = src_cls.output_port(src_port)
        if source is None:
            names = ", ".join(p.name for p in src_cls.outputs)
            out.append(f"input `{port}` is connected to output `{src_port}` of node `{src_id}`, which has only {names}")
            continue
        if not set(source.layouts) & set(target.layouts) or not set(source.elements) & set(target.elements):
            out.append(
                f"input `{port}` takes a {target.describe()}, but output `{src_port}` of node `{src_id}` "
                f"gives a {source.describe()}"
            )
    for port in cls.inputs:
        if port.name not in node.inputs and not port.optional:
            out.append(f"input `{port.name}` is not connected")
    return out


def _cycle_problems(doc: Document, by_id: dict[str, DocNode]) -> list[Problem]:
    """One problem per cycle of connections, naming the nodes on it."""
    problems = []
    state: dict[str, str] = {}
    seen_cycles: set[frozenset[str]] = set()

    def visit(node: DocNode, path: list[str]) -> None:
        state[node.id] = "active"
        for port in node.inputs:
            src = node.source(port)
            if src is None or src[0] not in by_id:
                continue
            if state.get(src[0]) == "active":
                cycle = [*path[path.index(src[0]) :], node.id] if src[0] in path else [node.id]
                if frozenset(cycle) not in seen_cycles:
                    seen_cycles.add(frozenset(cycle))
                    loop = " -> ".join([*cycle, cycle[0]])
                    problems.append(Problem(cycle[0], "node", f"the connections form a cycle: {loop}"))
            elif state.get(src[0]) is None:
                visit(by_id[src[0]], [*path, node.id])
        state[node.id] = "done"

    for node in doc.nodes:
        if state.get(node.id) is None:
            visit(node, [])
    return problems


def cycle_members(doc: Document) -> set[str]:
    """Ids of the nodes that lie on a cycle of connections."""
    by_id = {n.id: n for n in doc.nodes}
    members = set()
    for p in _cycle_problems(doc, by_id):
        members.update(p.message.split(": ", 1)[1].split(" -> "))
    return members


# ---------------------------------------------------------------------------- writing

_INLINE_WIDTH = 100


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _dump(value: Any, indent: int) -> str:
    """JSON with dicts expanded one entry per line and lists of scalars on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_dump(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if all(_scalar(v) for v in value):
            flat = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
            if len(flat) + indent <= _INLINE_WIDTH:
                return flat
        items = [f"{inner}{_dump(v, indent + 2)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


# The directive checker is part of the public surface for the editor (one directive at a time).
__all__ = [
    "FORMAT",
    "MIGRATIONS",
    "VERSION",
    "DocNode",
    "Document",
    "Group",
    "Problem",
    "check_directive",
    "load_document",
    "migrate",
    "read_document",
    "resolve_sample",
]
