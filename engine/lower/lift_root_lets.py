"""Pass: the lets at the head of a realization move above it.

Bounds inference binds each Func's loop bounds as named lets (`gPyramid3.s0.x.min = ...`)
in front of its producer, which for the outermost Funcs stored at the root is inside the
storage of the first of them (`realize gray { let ...; produce gray ... }`). The storage's
own size, computed next (allocation bounds), and the input checks at the top could then
only be written with every one of those lets substituted: along a pyramid, the whole chain
of levels four times over, which was half of the code LLVM compiled for local Laplacian's
entry function. Above the realization, as in Halide, they name the lets instead.

A let moves when it is a root let (see hoist_region_lets.py) and its value does not read
the realized Func nor its storage's bounds (the names storage flattening gives later); the
values are pure, so computing them before the storage exists changes nothing.
"""

from __future__ import annotations

import re

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import walk
from pixelweave.engine.lower.hoist_region_lets import depends_only_on_root
from pixelweave.engine.stmt import For, LetStmt, Load, Realize, Stmt
from pixelweave.engine.stmt_visit import StmtMutator


def lift_root_lets(stmt: Stmt) -> Stmt:
    return _Lift().mutate(stmt)


class _Lift(StmtMutator):
    """Only root lets move (outside every loop, values of the pipeline's parameters and of
    other root lets): inside a loop (compute_at), a region is usually of constant size once
    its lets are substituted, and that size decides stack storage. Constant lets stay too,
    for the same reason."""

    def __init__(self) -> None:
        self.loops = 0
        self.root: set[str] = set()  # root lets in scope

    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        self.loops += 1
        try:
            return self.default(s)
        finally:
            self.loops -= 1

    def visit_LetStmt(self, s: LetStmt) -> Stmt:  # noqa: N802
        root = not self.loops and depends_only_on_root(s.value, self.root)
        outer = s.name in self.root  # (a let of the same name around this one)
        if root:
            self.root.add(s.name)
        else:
            self.root.discard(s.name)
        try:
            return self.default(s)
        finally:
            if outer:
                self.root.add(s.name)
            else:
                self.root.discard(s.name)

    def visit_Realize(self, s: Realize) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        if self.loops:
            return s if body is s.body else Realize(s.name, s.type, s.bounds, body, s.folds)
        lifted: list[LetStmt] = []
        storage = re.compile(rf"{re.escape(s.name)}\.(min|extent|stride)\.\d+")
        known = set(self.root)
        while (
            isinstance(body, LetStmt)
            and not isinstance(body.value, E.Const)
            and depends_only_on_root(body.value, known)
            and not _reads(body.value, s.name, storage)
        ):
            lifted.append(body)
            known.add(body.name)
            body = body.body
        if not lifted and body is s.body:
            return s
        out: Stmt = Realize(s.name, s.type, s.bounds, body, s.folds)
        for let in reversed(lifted):
            out = LetStmt(let.name, let.value, out)
        return out


def _reads(value: E.Expr, func: str, storage: re.Pattern[str]) -> bool:
    """Whether value reads Func `func` (a call or a load) or its storage's bounds."""
    for node in walk(value):
        if isinstance(node, E.Call) and node.name == func:
            return True
        if isinstance(node, Load) and node.buffer == func:
            return True
        if isinstance(node, E.Variable) and storage.fullmatch(node.name):
            return True
    return False
