"""Generic traversal of expression trees: find nodes, rebuild with substitutions."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pixelweave.engine.ir import expr as E


def walk(e: E.Expr) -> Iterator[E.Expr]:
    """Every node of the tree, each shared node once, parents before children."""
    if not e.children():  # a leaf (most questions asked of bounds are about one)
        yield e
        return
    seen: set[int] = set()
    mark = seen.add
    stack = [e]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        i = id(node)
        if i in seen:
            continue
        mark(i)
        yield node
        children = node.children()
        if children:
            push(children[::-1])


def find_variables(e: E.Expr) -> list[E.Variable]:
    found: dict[tuple, E.Variable] = {}
    for node in walk(e):
        if isinstance(node, E.Variable):
            found.setdefault((node.name, node.kind), node)
    return list(found.values())


def find_calls(e: E.Expr) -> list[E.Call]:
    return [node for node in walk(e) if isinstance(node, E.Call)]


def rebuild(e: E.Expr, children: tuple[E.Expr, ...]) -> E.Expr:
    """A copy of e with new children (e itself when they are the same objects)."""
    if isinstance(e, E.BinaryOp) and len(children) == 2:  # most nodes: no generic checks
        a, b = children
        if a is e.a and b is e.b:
            return e
        return type(e)(a, b)
    old = e.children()
    if len(old) != len(children):
        raise ValueError(f"{type(e).__name__} has {len(old)} children, not {len(children)}")
    for a, b in zip(old, children, strict=False):  # lengths checked above
        if a is not b:
            break
    else:
        return e
    if isinstance(e, E.BinaryOp):
        return type(e)(children[0], children[1])
    if isinstance(e, E.Cast):
        return E.Cast(e.type(), children[0])
    if isinstance(e, E.Not):
        return E.Not(children[0])
    if isinstance(e, E.Select):
        return E.Select(*children)
    if isinstance(e, E.Let):
        return E.Let(e.name, children[0], children[1])
    if isinstance(e, E.Call):
        return E.Call(e.type(), e.name, children, e.call_kind, e.target, e.value_index)
    rebuild_with = getattr(e, "with_children", None)
    if rebuild_with is not None:
        return rebuild_with(children)
    raise TypeError(f"cannot rebuild {type(e).__name__}")


def mutate(e: E.Expr, fn: Callable[[E.Expr], E.Expr | None]) -> E.Expr:
    """Rebuild e bottom-up; fn(node) may return a replacement (None keeps the node).

    fn sees each node before its children are visited; a returned replacement is not
    descended into. Shared subtrees are rewritten once.
    """
    memo: dict[int, E.Expr] = {}
    remembered = memo.get

    def go(node: E.Expr) -> E.Expr:
        hit = remembered(id(node))
        if hit is not None:
            return hit
        replaced = fn(node)
        if replaced is None:
            children = node.children()
            if not children:
                replaced = node
            elif len(children) == 2:  # most nodes: no list built for them
                replaced = rebuild(node, (go(children[0]), go(children[1])))
            else:
                replaced = rebuild(node, tuple([go(c) for c in children]))
        memo[id(node)] = replaced
        return replaced

    try:
        return go(e)
    finally:
        go = None  # a recursive closure is a reference cycle until its name is cleared (see simplify)


def substitute(e: E.Expr, replacements: dict[str, E.Expr]) -> E.Expr:
    """Replace Variables by name."""
    if not replacements:
        return e

    def fn(node: E.Expr) -> E.Expr | None:
        if isinstance(node, E.Variable):
            return replacements.get(node.name)
        return None

    return mutate(e, fn)
