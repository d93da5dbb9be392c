"""Node groups in the pipeline document (the editor's titled frames): the optional "groups"
key, its round trip, every loading error, the editing methods, and groups kept consistent
when nodes are removed or renamed. Documents without groups must not change by a byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pixelweave.nodes.document import GROUP_COLOUR, Document, Group, load_document, read_document
from pixelweave.nodes.errors import DocumentError, NodeError

from tests.conftest import ROOT
from tests.nodes.document_samples import blur_document, write_document, write_samples

EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.json"))


def _doc() -> Document:
    """input -> blur -> result, built with the editing API (no groups yet)."""
    doc = Document("Grouped", "groups test")
    doc.add_node("image_input", "input", {"layout": "gray", "sample": "gray.png"}, position=(0, 0))
    doc.add_node("box_blur", "blur", position=(200, 0))
    doc.add_node("output", "result", position=(400, 0))
    doc.connect("input", "blur", "image")
    doc.connect("blur", "result", "image")
    return doc


def _with_groups(groups: Any) -> dict[str, Any]:
    data = blur_document()
    data["groups"] = groups
    return data


def _problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(DocumentError) as info:
        Document.from_json(data)
    return info.value.problems


# ---------------------------------------------------------------------------- JSON


def test_groups_round_trip_in_canonical_text(tmp_path: Path) -> None:
    write_samples(tmp_path)
    doc = _doc()
    doc.add_group("Filter", ["result", "blur"], (200, 10, 0))
    doc.add_group("Source", ["input"])
    path = doc.save(tmp_path / "grouped.json")
    text = path.read_text()
    data = json.loads(text)
    assert list(data) == ["format", "version", "name", "description", "nodes", "groups"]
    assert data["groups"] == [
        {"name": "Filter", "nodes": ["blur", "result"], "colour": [200, 10, 0]},  # document order
        {"name": "Source", "nodes": ["input"], "colour": list(GROUP_COLOUR)},
    ]
    assert '\n      "nodes": ["blur", "result"],\n      "colour": [200, 10, 0]\n' in text
    again = load_document(path)  # the full load, with the engine build: groups do not disturb it
    assert again == doc
    assert again.groups == [Group("Filter", ["blur", "result"], (200, 10, 0)), Group("Source", ["input"])]
    assert isinstance(again.groups[0].colour, tuple)
    assert again.dumps() == text


def test_a_document_without_groups_has_no_groups_key() -> None:
    doc = _doc()
    assert "groups" not in doc.to_json()
    assert '"groups"' not in doc.dumps()
    data = blur_document()
    assert Document.from_json(data).groups == []
    data["groups"] = []  # an empty list is accepted, and not written back
    assert "groups" not in Document.from_json(data).to_json()


def test_positional_construction_still_works() -> None:
    doc = Document("n", "d", [], Path("x.json"))
    assert (doc.name, doc.description, doc.nodes, doc.path, doc.groups) == ("n", "d", [], Path("x.json"), [])


def test_colour_may_be_left_out_when_loading() -> None:
    doc = Document.from_json(_with_groups([{"name": "G", "nodes": ["blur"]}]))
    assert doc.groups == [Group("G", ["blur"], (70, 90, 110))]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_examples_are_unchanged(example: Path) -> None:
    text = example.read_text(encoding="utf-8")
    doc = read_document(example)
    assert doc.groups == []
    assert doc.dumps() == text


# ---------------------------------------------------------------------------- loading errors

ERRORS = [
    ({"name": "G"}, ["\"groups\" must be a list of groups, got {'name': 'G'}"]),
    (
        [{"name": "Sharpen", "nodes": ["blurr"]}],
        ["group `Sharpen` names node `blurr`, which does not exist; did you mean `blur`?"],
    ),
    ([{"name": "G", "nodes": ["zzz"]}], ["group `G` names node `zzz`, which does not exist"]),
    (
        [{"name": "G", "nodes": ["blur"], "colour": [1, 2]}],
        ["group `G`: the colour must be [r, g, b], three integers 0..255, got [1, 2]"],
    ),
    (
        [{"name": "G", "nodes": ["blur"], "colour": [0, 0, 256]}],
        ["group `G`: the colour must be [r, g, b], three integers 0..255, got [0, 0, 256]"],
    ),
    (
        [{"name": "G", "nodes": ["blur"], "colour": [0.5, 0, 0]}],
        ["group `G`: the colour must be [r, g, b], three integers 0..255, got [0.5, 0, 0]"],
    ),
    (
        [{"name": "G", "nodes": ["blur"], "colour": [True, 0, -1]}],
        ["group `G`: the colour must be [r, g, b], three integers 0..255, got [True, 0, -1]"],
    ),
    (
        [{"name": "G", "nodes": ["blur"], "colour": "red"}],
        ["group `G`: the colour must be [r, g, b], three integers 0..255, got 'red'"],
    ),
    ([{"name": "", "nodes": ["blur"]}], ["a group has an empty name (its nodes: blur)"]),
    ([{"name": "  ", "nodes": ["blur"]}], ["a group has an empty name (its nodes: blur)"]),
    (
        [{"name": "A", "nodes": ["input", "blur"]}, {"name": "B", "nodes": ["blur"]}],
        ["node `blur` is in group `A` and in group `B`; a node belongs to one group at most"],
    ),
    ([{"name": "A", "nodes": ["blur", "blur"]}], ["group `A` names node `blur` twice"]),
    (
        [{"name": "A", "nodes": ["blur"]}, {"name": "A", "nodes": ["input"]}],
        ["the group name `A` is used by more than one group"],
    ),
    ([{"name": "A", "nodes": []}], ["group `A` names no nodes; a group needs at least one"]),
    ([{"name": "A", "nodes": "blur"}], ["group `A`: \"nodes\" must be a list of node ids, got 'blur'"]),
    ([{"name": "A", "nodes": ["blur", 3]}], ["group `A`: \"nodes\" must be a list of node ids, got ['blur', 3]"]),
    ([{"nodes": ["blur"]}], ['group 1 needs a "name" string, got None']),
    (
        ["blur"],
        ['group 1 must be an object {"name": ..., "nodes": [...], "colour": [r, g, b]}, got \'blur\''],
    ),
    (
        [{"name": "A", "nodes": ["blur"], "color": [1, 2, 3]}],
        ["group `A`: unknown key 'color' (known: name, nodes, colour)"],
    ),
]


@pytest.mark.parametrize(("groups", "expected"), ERRORS)
def test_each_group_error_is_reported_precisely(groups: Any, expected: list[str]) -> None:
    assert _problems(_with_groups(groups)) == expected


def test_group_errors_are_reported_together_with_others(tmp_path: Path) -> None:
    data = _with_groups([{"name": "Sharpen", "nodes": ["blurr"], "colour": [0, 0, 999]}])
    data["extra"] = 1
    path = write_document(tmp_path / "bad.json", data)
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert info.value.problems == [
        "unknown key 'extra' at the top level (known: format, version, name, description, nodes, groups)",
        "group `Sharpen`: the colour must be [r, g, b], three integers 0..255, got [0, 0, 999]",
        "group `Sharpen` names node `blurr`, which does not exist; did you mean `blur`?",
    ]


# ---------------------------------------------------------------------------- editing


def test_add_group_checks_its_arguments() -> None:
    doc = _doc()
    with pytest.raises(NodeError, match="a group needs at least one node"):
        doc.add_group("G", [])
    with pytest.raises(NodeError, match=r"group `G` names node `blurr`, which does not exist; did you mean `blur`\?"):
        doc.add_group("G", ["blurr"])
    with pytest.raises(NodeError, match="a group has an empty name"):
        doc.add_group("", ["blur"])
    with pytest.raises(NodeError, match=r"three integers 0\.\.255, got \[0, 0, 300\]"):
        doc.add_group("G", ["blur"], (0, 0, 300))
    assert doc.groups == []
    doc.add_group("G", ["blur", "blur"])  # a repeated id is the same node
    assert doc.groups == [Group("G", ["blur"])]
    with pytest.raises(NodeError, match="group name `G` is already used"):
        doc.add_group("G", ["input"])
    assert doc.groups == [Group("G", ["blur"])]


def test_add_group_moves_nodes_from_other_groups() -> None:
    doc = _doc()
    doc.add_group("A", ["input", "blur"])
    doc.add_group("B", ["result"])
    group = doc.add_group("C", ["blur", "result"], [1, 2, 3])  # type: ignore[arg-type]
    assert group == Group("C", ["blur", "result"], (1, 2, 3))
    assert doc.groups == [Group("A", ["input"]), group]  # B lost its only node
    assert doc.group_of("blur") is group
    assert doc.group_of("input") is doc.group("A")


def test_remove_group_keeps_the_nodes() -> None:
    doc = _doc()
    doc.add_group("A", ["input", "blur"])
    doc.remove_group("A")
    assert doc.groups == []
    assert [n.id for n in doc.nodes] == ["input", "blur", "result"]
    with pytest.raises(NodeError, match="there is no group `A`"):
        doc.remove_group("A")


def test_remove_node_keeps_groups_consistent() -> None:
    doc = _doc()
    doc.add_group("A", ["input", "blur"])
    doc.add_group("B", ["result"])
    doc.remove_node("blur")
    assert doc.groups == [Group("A", ["input"]), Group("B", ["result"])]
    doc.remove_node("result")
    assert doc.groups == [Group("A", ["input"])]  # B was left empty
    assert Document.from_json(doc.to_json()) == doc


def test_rename_node_renames_it_in_its_group() -> None:
    doc = _doc()
    doc.add_group("A", ["input", "blur"])
    doc.rename_node("blur", "smooth")
    assert doc.groups == [Group("A", ["input", "smooth"])]
    assert doc.group_of("blur") is None
    assert Document.from_json(doc.to_json()) == doc
