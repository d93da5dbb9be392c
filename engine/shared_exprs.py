"""Shared subexpressions of a statement, for printing them once as lets.

Lowering builds bounds by composing intervals, so one subtree is often referenced from
many places of the same expression (a DAG). Printed as a tree it is written out once per
reference, and along a chain of stages the text grows exponentially. Here each large
subtree referenced more than once gets a name; the printer writes `let tN = ...` once and
the name at each use, so the text is linear in the size of the expression DAG.
"""

from __future__ import annotations

from collections.abc import Iterable

from pixelweave.engine.ir import expr as E

# A subtree smaller than this (in nodes, counted as a tree) is printed in place even when
# it is shared: `(x + 1)` reads better than a name, and its repetitions cost at most this
# much text per reference.
MIN_SHARED_SIZE = 24


class NameSource:
    """Fresh names t0, t1, ... for one printed statement, never a name already in use."""

    def __init__(self) -> None:
        self.counter = 0

    def fresh(self, taken: set[str]) -> str:
        while f"t{self.counter}" in taken:
            self.counter += 1
        name = f"t{self.counter}"
        self.counter += 1
        return name


def shared_subexpressions(
    exprs: Iterable[E.Expr], names: NameSource, min_size: int = MIN_SHARED_SIZE
) -> list[tuple[str, E.Expr]]:
    """(name, subexpression) for every subtree of `exprs` worth naming, each before any
    subexpression that contains it."""
    roots = list(exprs)
    uses: dict[tuple, int] = {}
    nodes: dict[tuple, E.Expr] = {}
    sizes: dict[tuple, int] = {}
    order: list[tuple] = []  # unique nodes, children before parents
    for root in roots:
        key = root.key()
        uses[key] = uses.get(key, 0) + 1
        _postorder(root, nodes, order)
    for key in order:
        node = nodes[key]
        size = 1
        for child in node.children():
            ck = child.key()
            uses[ck] = uses.get(ck, 0) + 1
            size += sizes[ck]
        sizes[key] = size
    wanted = [key for key in order if uses.get(key, 0) >= 2 and sizes[key] >= min_size]
    if not wanted or any(isinstance(nodes[key], E.Let) for key in order):
        return []  # a name printed outside an expression's own let would leave its scope
    taken = {nodes[key].name for key in order if isinstance(nodes[key], E.Variable)}
    return [(names.fresh(taken), nodes[key]) for key in wanted]


def _postorder(root: E.Expr, nodes: dict[tuple, E.Expr], order: list[tuple]) -> None:
    """Append the structurally distinct nodes under root, children first (iteratively:
    expressions can be thousands of levels deep)."""
    stack: list[tuple[E.Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        key = node.key()
        if expanded:
            if key not in nodes:
                nodes[key] = node
                order.append(key)
            continue
        if key in nodes:
            continue
        stack.append((node, True))
        for child in reversed(node.children()):
            if child.key() not in nodes:
                stack.append((child, False))
