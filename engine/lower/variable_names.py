"""The names of the Variables in expressions, remembered by node identity for one pass.

Lowering's expressions are DAGs that share subtrees heavily (a let's value reappears in
every bound built from it). Asking "which variables does e use" with a fresh walk per
question made passes quadratic; a `VariableNames` answers each shared subtree once.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E

_NO_NAMES: frozenset[str] = frozenset()


class VariableNames:
    """Variable names per subexpression; each entry keeps its node alive, so an identity
    is never reused while the table lives (make one per pass, or per statement)."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[E.Expr, frozenset[str]]] = {}

    def __call__(self, e: E.Expr) -> frozenset[str]:
        """The names of the Variables in e (iteratively: expressions nest deeply)."""
        names = self._names
        hit = names.get(id(e))
        if hit is not None:
            return hit[1]
        stack: list[tuple[E.Expr, bool]] = [(e, False)]
        pop, push = stack.pop, stack.append
        while stack:
            node, children_done = pop()
            if id(node) in names:
                continue
            children = node.children()
            if not children_done and children:
                push((node, True))
                for c in children:
                    if id(c) not in names:
                        push((c, False))
                continue
            if isinstance(node, E.Variable):
                found = frozenset((node.name,))
            elif not children:
                found = _NO_NAMES
            else:
                found = names[id(children[0])][1]
                for c in children[1:]:
                    more = names[id(c)][1]
                    if more and not more <= found:
                        found = found | more  # a new set only where a child adds names
            names[id(node)] = (node, found)
        return names[id(e)][1]

    def uses(self, e: E.Expr, name: str) -> bool:
        return name in self(e)
