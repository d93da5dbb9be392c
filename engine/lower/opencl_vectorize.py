"""Pass 8 for target 'opencl': vectorized loops become OpenCL vector code where it can.

OpenCL C has vector types of 2, 3, 4, 8 and 16 lanes only. A vectorized loop of one of
those widths is vectorized by the common pass (engine/lower/vectorize.py) and reaches the
OpenCL backend as vector expressions (engine/codegen/opencl_expr.py emits them as
`floatN`, `vloadN`, ...). Every other vectorized loop runs as a serial loop inside its
work-item, which computes the same values: one of another width, one whose extent is not
a constant, and one that contains GPU loops (its lanes would be host values around a
kernel).
"""

from __future__ import annotations

from pixelweave.engine.lower.simplify import as_const_int
from pixelweave.engine.lower.vectorize import vectorize_loops
from pixelweave.engine.stmt import For, ForType, Stmt
from pixelweave.engine.stmt_visit import StmtMutator, walk_stmt

OPENCL_VECTOR_WIDTHS = (2, 3, 4, 8, 16)
_GPU = (ForType.GPU_BLOCK, ForType.GPU_THREAD)


def vectorize_loops_for_opencl(stmt: Stmt) -> Stmt:
    """The vectorization pass restricted to loops OpenCL vector types can express."""
    return vectorize_loops(_SerializeUnsupported().mutate(stmt))


class _SerializeUnsupported(StmtMutator):
    def visit_For(self, s: For) -> Stmt:  # noqa: N802
        body = self.mutate(s.body)
        for_type = s.for_type
        if for_type == ForType.VECTORIZED and not _vectorizable(s, body):
            for_type = ForType.SERIAL
        if body is s.body and for_type == s.for_type:
            return s
        return For(s.name, s.min, s.extent, for_type, body)


def _vectorizable(loop: For, body: Stmt) -> bool:
    if as_const_int(loop.extent) not in (1, *OPENCL_VECTOR_WIDTHS):
        return False
    return not any(isinstance(n, For) and n.for_type in _GPU for n in walk_stmt(body))
