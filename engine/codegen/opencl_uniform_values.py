"""Integer values that are the same for every work-item, computed once on the host.

A kernel's index arithmetic often holds clamps of kernel arguments alone, such as the
channel of a `repeat_edge` input: `(clamp(c, min2, min2 + extent2 - 1) - min2) * stride2`,
once per channel read. On pocl's CPU device, each work-item's code is optimised (SLP
vectorizer included) before its work-item loop exists; side-by-side clamps of this kind are
packed into short vectors there, and a loop holding vector instructions is then refused
by the loop vectorizer that makes work-groups SIMD ("instruction return type cannot be
vectorized"): the whole kernel stays scalar. Halide evaluates such values on the host
and passes them as kernel arguments; so does this pass.

A value moves to the host when it is an integer scalar, reads no memory, calls nothing,
depends only on the kernel's arguments (no name bound inside the kernel), and holds a
min, max, select, division or modulo (affine arithmetic stays visible to the kernel
generator's alignment and range reasoning). Division and modulo move only by a nonzero
constant, so the host never evaluates a division the kernel would not.
"""

from __future__ import annotations

from pixelweave.engine.ir import expr as E
from pixelweave.engine.ir.visit import mutate, walk
from pixelweave.engine.stmt import Broadcast, For, Load, Ramp, Stmt
from pixelweave.engine.stmt_visit import StmtMutator

_NON_AFFINE = (E.Min, E.Max, E.Select, E.Div, E.Mod)
MAX_HOISTED = 32  # kernel arguments added at most per kernel (each is 4 bytes of the launch)


def _movable(e: E.Expr, bound: set[str]) -> bool:
    t = e.type()
    if t.lanes != 1 or not (t.is_int() or t.is_uint()) or t.bits not in (8, 16, 32):
        return False
    non_affine = False
    for node in walk(e):
        if isinstance(node, (Load, E.Call, E.Let)):
            return False
        if isinstance(node, E.Variable) and node.name in bound:
            return False
        if isinstance(node, (Ramp, Broadcast)):
            return False
        if isinstance(node, (E.Div, E.Mod)):
            divisor = node.b
            if not (isinstance(divisor, E.Const) and divisor.value != 0):
                return False
        non_affine |= isinstance(node, _NON_AFFINE)
    return non_affine


def hoist_uniform_values(root: Stmt, bound: set[str], prefix: str) -> tuple[Stmt, list[tuple[str, E.Expr]]]:
    """root with its work-item-invariant integer values replaced by new variables, and the
    (name, value) pairs the host must bind around the launch, in order. `bound` holds the
    names bound inside root; the new names are `prefix` and a number."""
    hoisted: dict[tuple, E.Variable] = {}
    values: list[tuple[str, E.Expr]] = []

    def replace(node: E.Expr) -> E.Expr | None:
        if isinstance(node, (E.Variable, E.Const)) or not _movable(node, bound):
            return None
        key = node.key()
        var = hoisted.get(key)
        if var is None:
            if len(values) >= MAX_HOISTED:
                return None
            name = f"{prefix}{len(values)}"
            var = E.Variable(name, node.type(), kind="param")
            hoisted[key] = var
            values.append((name, node))
        return var

    class _Hoist(StmtMutator):
        def mutate_expr(self, e: E.Expr) -> E.Expr:
            return mutate(e, replace)

        def visit_For(self, s: For) -> Stmt:  # noqa: N802 (StmtMutator dispatches on the class name)
            # loop bounds stay as they are: the kernel generator reads block and thread
            # extents (constant work-group sizes, host-computed block ranges) from them
            body = self.mutate(s.body)
            return s if body is s.body else For(s.name, s.min, s.extent, s.for_type, body)

    return _Hoist().mutate(root), values
