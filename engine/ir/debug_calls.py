"""Names shared by the debugging intrinsics (print, tracing), the backend and the runtime hooks.

A debugging call is an intrinsic named `PREFIX#site`; the backend passes its arguments'
bits to the C symbol DEBUG_HOOKS[PREFIX#], which the JIT resolves to a Python callback.
"""

PRINT_PREFIX = "print#"
TRACE_PREFIX = "trace#"

DEBUG_HOOKS = {PRINT_PREFIX: "pw_debug_print", TRACE_PREFIX: "pw_debug_trace"}
DEBUG_CALL_PREFIXES = tuple(DEBUG_HOOKS)
