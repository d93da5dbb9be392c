"""Failure reporting shared by every compiled pipeline: claiming a call's context and
formatting its message (pw_report_error), and naming a buffer's element type
(pw_type_name).

Emitting these inline at every check made argument validation and bounds assertions most
of a small module's IR (a claim, two branches and a printf call per check, a chain of
selects per buffer), and LLVM's work grew with them. The JIT links them once per process,
in the runtime library beside the thread pool; an exported library embeds them with
internal linkage.
"""

from __future__ import annotations

from collections.abc import Sequence

from pixelweave.engine.codegen.llvm_ir import ModuleBuilder

REPORT_ERROR = "pw_report_error"
REPORT_ERROR_SIGNATURE = "void (ptr, ptr, ...)"  # (context, printf format, arguments...)
TYPE_NAME = "pw_type_name"
TYPE_NAME_SIGNATURE = "ptr (i32, i32)"  # (type code, bits) -> NUL-terminated name
VA_LIST_BYTES = 32  # large enough for x86-64 (24) and AArch64 (32)


def declare_error_reporting(module: ModuleBuilder) -> None:
    """Declare the shared functions in a module that links against the runtime."""
    module.declare(REPORT_ERROR, REPORT_ERROR_SIGNATURE)
    module.declare(TYPE_NAME, TYPE_NAME_SIGNATURE)


def add_error_reporting(
    module: ModuleBuilder,
    *,
    export: bool,
    message_offset: int,
    message_bytes: int,
    type_names: Sequence[tuple[int, int, str]],
) -> None:
    """Define pw_report_error and pw_type_name in module (visible to other JIT libraries when
    `export`, else internal). The message is written at `message_offset` of the context, at
    most `message_bytes` long, only by the first failure of a call (it claims the context's
    flag); type_names lists (code, bits, name) of every element type."""
    linkage = "" if export else "internal "
    module.declare("vsnprintf", "i32 (ptr, i64, ptr, ptr)")
    module.intrinsic("llvm.va_start.p0", "void", ["ptr"])
    module.intrinsic("llvm.va_end.p0", "void", ["ptr"])
    module.add_function(
        f"""define {linkage}void @{REPORT_ERROR}(ptr %context, ptr %format, ...) nounwind cold noinline {{
entry:
  %args = alloca [{VA_LIST_BYTES} x i8], align 16
  %claim = cmpxchg ptr %context, i32 0, i32 1 seq_cst seq_cst, align 4
  %first = extractvalue {{ i32, i1 }} %claim, 1
  br i1 %first, label %write, label %done
write:
  call void @llvm.va_start.p0(ptr %args)
  %message = getelementptr i8, ptr %context, i64 {message_offset}
  %n = call i32 @vsnprintf(ptr %message, i64 {message_bytes}, ptr %format, ptr %args)
  call void @llvm.va_end.p0(ptr %args)
  br label %done
done:
  ret void
}}"""
    )
    lines = [f"define {linkage}ptr @{TYPE_NAME}(i32 %code, i32 %bits) nounwind cold noinline {{", "entry:"]
    name = module.string_constant("unsupported").ref
    for k, (code, bits, text) in enumerate(type_names):
        lines += [
            f"  %code{k} = icmp eq i32 %code, {code}",
            f"  %bits{k} = icmp eq i32 %bits, {bits}",
            f"  %same{k} = and i1 %code{k}, %bits{k}",
            f"  %name{k} = select i1 %same{k}, ptr {module.string_constant(text).ref}, ptr {name}",
        ]
        name = f"%name{k}"
    lines += [f"  ret ptr {name}", "}"]
    module.add_function("\n".join(lines))
