"""Palette search: every node type is listed once in catalogue order, every query word narrows
the list, and the best match is the one a user typing that text means."""

from pixelweave.nodes.node_type import CATEGORIES, node_types
from pixelweave.nodes.palette_search import PaletteEntry, best_match, match_score, palette_entries, search


def test_entries_list_every_type_once_grouped_by_category_order():
    entries = palette_entries()
    assert sorted(e.type_name for e in entries) == sorted(node_types())
    positions = [CATEGORIES.index(e.category) for e in entries]
    assert positions == sorted(positions)
    blur = next(e for e in entries if e.type_name == "gaussian_blur")
    assert blur.title == node_types()["gaussian_blur"].title
    assert blur.tooltip == node_types()["gaussian_blur"].tooltip()


def test_empty_query_matches_everything_in_catalogue_order():
    entries = palette_entries()
    assert search("", entries) == entries
    assert search("   ", entries) == entries
    assert best_match("  ") is None


def test_title_prefix_ranks_first():
    assert best_match("gauss").type_name == "gaussian_blur"
    assert best_match("Gaussian blur").type_name == "gaussian_blur"
    assert best_match("resize").type_name == "resize"
    assert [e.type_name for e in search("sharp")][:2] == ["sharpen", "unsharp_mask"]


def test_every_word_must_match_somewhere():
    names = [e.type_name for e in search("box blur")]
    assert names == ["box_blur"]
    assert search("blur zzzz") == []
    assert best_match("qqqq") is None


def test_type_name_category_and_summary_words_match():
    assert "custom_expression" in [e.type_name for e in search("custom_expr")]
    in_stencils = [e.type_name for e in search("stencils")]
    assert in_stencils and all(node_types()[n].category == "Stencils" for n in in_stencils)
    entry = PaletteEntry("t", "Thing", "Custom", "Turns pixels purple", "Turns pixels purple.")
    assert match_score("purple", entry) > 0
    assert match_score("thing", entry) > match_score("purple", entry)
    assert match_score("green", entry) == 0


def test_ties_keep_catalogue_order():
    a = PaletteEntry("a", "Alpha blur", "Stencils", "", "")
    b = PaletteEntry("b", "Beta blur", "Stencils", "", "")
    assert search("blur", [a, b]) == [a, b]
    assert search("blur", [b, a]) == [b, a]
