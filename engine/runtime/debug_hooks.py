"""The Python callbacks generated code calls for `print` and tracing.

They are registered once per process as the C symbols the backend declares (see
engine/ir/debug_calls.py), so cached object code links to them in any process. ctypes
takes the GIL for each call, so worker threads of parallel loops may call them too.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

from pixelweave.engine.ir.debug_calls import DEBUG_HOOKS, PRINT_PREFIX, TRACE_PREFIX

_HOOK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
_lock = threading.Lock()
_registered: dict[str, tuple] = {}


def callback_addresses(
    registry: dict[str, tuple], lock: threading.Lock, hook_type: Any, hooks: dict[str, Callable[..., Any]]
) -> dict[str, int]:
    """C symbol -> address of each Python hook, made into a ctypes callback the first time
    (kept in `registry` for the life of the process, so the address stays valid)."""
    with lock:
        if not registry:
            for symbol, fn in hooks.items():
                callback = hook_type(fn)
                registry[symbol] = (callback, ctypes.cast(callback, ctypes.c_void_p).value)
        return {name: address for name, (_, address) in registry.items()}


def _values(address: int, count: int) -> list[int]:
    return list((ctypes.c_int64 * count).from_address(address))


def _print_hook(number: int, address: int) -> None:
    from pixelweave.engine.ir.debug_print import emit_print, site_size

    emit_print(number, _values(address, site_size(number)))


def _trace_hook(number: int, address: int) -> None:
    from pixelweave.engine.tracing import emit_trace, trace_site_size

    emit_trace(number, _values(address, trace_site_size(number)))


def debug_hook_addresses() -> dict[str, int]:
    """C symbol -> address of the print and trace hooks (made once per process), for the
    JIT to import into every library it links."""
    hooks = {DEBUG_HOOKS[PRINT_PREFIX]: _print_hook, DEBUG_HOOKS[TRACE_PREFIX]: _trace_hook}
    return callback_addresses(_registered, _lock, _HOOK_TYPE, hooks)
