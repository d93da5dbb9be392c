"""The names a kind of statement carries anywhere below each statement (the Funcs produced,
the Funcs realized), remembered by identity for one pass.

Several passes rewrite the whole statement once per Func, though only the statements
around that Func's `produce` or `realize` can change; with this table a rewrite returns
every other subtree as it is without walking it. Statements are immutable, and each entry
keeps its statement alive, so an identity is never reused while the table lives (make one
per pass: a rewrite keeps most subtrees, whose entries the next Func's rewrite finds).
"""

from __future__ import annotations

from collections.abc import Callable

from pixelweave.engine.stmt import Stmt

_NO_NAMES: frozenset[str] = frozenset()


class NamesBelow:
    """names(s): the names that `name_of` gives s and the statements below it."""

    def __init__(self, name_of: Callable[[Stmt], str | None]) -> None:
        self._name_of = name_of
        self._names: dict[int, tuple[Stmt, frozenset[str]]] = {}

    def __call__(self, s: Stmt) -> frozenset[str]:
        hit = self._names.get(id(s))
        if hit is not None:
            return hit[1]
        found = _NO_NAMES
        for c in s.children():
            if isinstance(c, Stmt):
                more = self(c)
                if more and not more <= found:
                    found = found | more  # a new set only where a child adds names
        own = self._name_of(s)
        if own is not None and own not in found:
            found = found | {own}
        self._names[id(s)] = (s, found)
        return found
