"""Vector loads and stores at arbitrary lane addresses as LLVM's gather and scatter.

Lane by lane, a gather of N lanes is N address computations, N loads and N inserts (and
a scatter N extracts and N stores), which multiplies the IR that LLVM's passes chew on
inside every vectorized loop that reads through a computed index (lookup tables,
data-dependent coordinates). `llvm.masked.gather` / `llvm.masked.scatter` with every lane
enabled say the same in three instructions; the backend emits hardware gathers where the
target has them (AVX2, AVX-512) and the per-lane sequence otherwise. The lanes' order is
kept: of scatter lanes writing one address, the highest lane's value stays, as before.
"""

from __future__ import annotations

from pixelweave.engine.codegen.llvm_ir import FunctionBuilder, ModuleBuilder, Value, lanes_of


def vector_suffix(vector_ty: str) -> str:
    """`<16 x float>` -> `v16f32` (the type suffix of an overloaded vector intrinsic)."""
    lanes = lanes_of(vector_ty)
    scalar = vector_ty.split(" x ")[1].rstrip(">")
    suffix = {"float": "f32", "double": "f64", "half": "f16"}.get(scalar, scalar)
    return f"v{lanes}{suffix}"


def _all_lanes(lanes: int) -> str:
    return f"<{lanes} x i1> <{', '.join(['i1 true'] * lanes)}>"


def gather(
    b: FunctionBuilder, module: ModuleBuilder, vector_ty: str, elem_ty: str, base: Value, index64: Value, align: int
) -> Value:
    """Load base[index64[k]] into lane k; index64 is a `<N x i64>` vector."""
    lanes = lanes_of(vector_ty)
    pointers = b.gep(elem_ty, base, index64, "gather.addr")
    name = f"llvm.masked.gather.{vector_suffix(vector_ty)}.v{lanes}p0"
    fn = module.intrinsic(name, vector_ty, [pointers.ty, "i32", f"<{lanes} x i1>", vector_ty])
    return b.assign(
        vector_ty,
        f"call {vector_ty} {fn}({pointers}, i32 {align}, {_all_lanes(lanes)}, {vector_ty} poison)",
        "gather",
    )


def scatter(
    b: FunctionBuilder, module: ModuleBuilder, value: Value, elem_ty: str, base: Value, index64: Value, align: int
) -> None:
    """Store lane k of value at base[index64[k]], lanes in order."""
    lanes = lanes_of(value.ty)
    pointers = b.gep(elem_ty, base, index64, "scatter.addr")
    name = f"llvm.masked.scatter.{vector_suffix(value.ty)}.v{lanes}p0"
    fn = module.intrinsic(name, "void", [value.ty, pointers.ty, "i32", f"<{lanes} x i1>"])
    b.emit(f"call void {fn}({value}, {pointers}, i32 {align}, {_all_lanes(lanes)})")
