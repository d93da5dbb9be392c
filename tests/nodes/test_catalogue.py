"""The catalogue as a whole: every node type is well formed and README lists them all."""

from pixelweave.nodes.catalogue_table import README, markdown_table, readme_block
from pixelweave.nodes.node_type import CATEGORIES, node_types


def test_readme_catalogue_table_is_current():
    block = readme_block(README.read_text(encoding="utf-8"))
    assert block is not None, "README.md lost its catalogue markers"
    assert block == markdown_table(), "README's node table is stale: run `python -m pixelweave.nodes.catalogue_table --write`"


def test_every_node_type_has_a_tooltip_and_documented_parameters():
    types = node_types().values()
    assert {cls.category for cls in types} <= set(CATEGORIES)
    for cls in types:
        assert cls.summary(), cls.type_name
        for p in cls.params:
            assert p.doc, f"{cls.type_name}.{p.name} has no description (its tooltip)"


def test_a_node_type_without_build_is_refused_when_defined():
    import pytest
    from pixelweave.nodes.node_type import NodeType

    with pytest.raises(TypeError, match="needs a build"):

        class Incomplete(NodeType):
            """A node type that forgot its build()."""

            category = "Stencils"
