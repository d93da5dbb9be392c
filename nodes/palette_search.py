"""Finding node types by what a user types: the ranking behind the editor's palette and its
Tab search popup.

Kept free of Qt so that the ranking is tested on its own and any front end (palette tree,
popup at the cursor, command line completion) orders matches the same way. A query matches a
node type when every word of it is found in the type's title, type name, category or summary;
matches are ranked by where the words were found (a title that starts with the query beats a
word of the summary), then by catalogue order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pixelweave.nodes.node_type import CATEGORIES, NodeType, node_types

# Score of one query word by the best place it was found; higher ranks first.
_EXACT_TITLE = 100
_TITLE_PREFIX = 60
_TITLE_WORD_PREFIX = 40
_TITLE_PART = 25
_TYPE_NAME_PART = 20
_CATEGORY_WORD = 10
_SUMMARY_WORD_PREFIX = 5
_SUMMARY_PART = 2


@dataclass(frozen=True)
class PaletteEntry:
    """What the palette shows of one node type, and the lower-case text that searches see."""

    type_name: str
    title: str
    category: str
    summary: str
    tooltip: str

    @classmethod
    def of(cls, type_cls: type[NodeType]) -> PaletteEntry:
        return cls(type_cls.type_name, type_cls.title, type_cls.category, type_cls.summary(), type_cls.tooltip())


def palette_entries() -> list[PaletteEntry]:
    """Every node type, grouped by category in CATEGORIES order and by title within one, so
    the palette lists them in the order a user scans them."""
    order = {name: i for i, name in enumerate(CATEGORIES)}
    entries = [PaletteEntry.of(t) for t in node_types().values()]
    return sorted(entries, key=lambda e: (order.get(e.category, len(order)), e.title.lower()))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _word_score(word: str, entry: PaletteEntry, query: str) -> int:
    """How well one query word fits an entry; 0 when it is found nowhere."""
    title = entry.title.lower()
    title_words = _words(entry.title)
    if title == query:
        return _EXACT_TITLE
    if title.startswith(query) or entry.type_name.startswith(query.replace(" ", "_")):
        return _TITLE_PREFIX
    if any(w.startswith(word) for w in title_words):
        return _TITLE_WORD_PREFIX
    if word in title:
        return _TITLE_PART
    if word in entry.type_name:
        return _TYPE_NAME_PART
    if any(w.startswith(word) for w in _words(entry.category)):
        return _CATEGORY_WORD
    summary = entry.summary.lower()
    if any(w.startswith(word) for w in _words(summary)):
        return _SUMMARY_WORD_PREFIX
    if word in summary:
        return _SUMMARY_PART
    return 0


def match_score(query: str, entry: PaletteEntry) -> int:
    """The rank of an entry for a query: 0 when some word of the query is found nowhere in
    it (so every word narrows the list), otherwise the sum of the words' scores. An empty
    query matches everything equally."""
    normalized = " ".join(query.lower().split())
    words = _words(normalized)
    if not words:
        return 1
    total = 0
    for word in words:
        score = _word_score(word, entry, normalized)
        if score == 0:
            return 0
        total += score
    return total


def search(query: str, entries: list[PaletteEntry] | None = None) -> list[PaletteEntry]:
    """Entries matching `query`, best first; catalogue order breaks ties, so the result is
    stable while the user types."""
    pool = palette_entries() if entries is None else entries
    scored = [(match_score(query, e), i, e) for i, e in enumerate(pool)]
    return [e for score, _, e in sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))]


def best_match(query: str, entries: list[PaletteEntry] | None = None) -> PaletteEntry | None:
    """The entry Enter should add for `query`, or None when nothing matches (or the query
    is blank: adding an arbitrary node would surprise)."""
    if not _words(query):
        return None
    found = search(query, entries)
    return found[0] if found else None
