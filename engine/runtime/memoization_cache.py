"""The process-wide cache of memoized Funcs' values (Halide's halide_memoization_cache_*).

Generated code calls `pw_memoize_lookup(identity, args)` before producing a memoized Func
and `pw_memoize_store(identity, args)` after producing it (engine/lower/memoization.py);
both are Python callbacks the JIT links in, like the print and trace hooks. `args` points
at int64 values laid out as:

    count, n_keys, key..., n_images, (address, element_bytes, dims, (min, extent, stride) * dims) * n_images,
    n_buffers, (address, bytes) * n_buffers, has_eviction_key, eviction_key

The cache key is the Func's identity, the key values (the Params it depends on and the
region it is computed over), the shape and a hash of the contents of every input image it
depends on, and its buffers' sizes. A hit copies the stored bytes into the Func's buffers.

Entries are evicted least recently used first once their bytes pass the size limit (1 MiB
unless `memoization_cache_set_size` says otherwise, as in Halide); as in Halide the entry
being stored is kept even when it alone is larger than the limit. ctypes takes the GIL for
each call, and a lock guards the cache, so pipelines on several threads may share it.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from pixelweave.engine.ir.memoize_calls import MEMOIZE_HOOKS, MEMOIZE_LOOKUP_PREFIX, MEMOIZE_STORE_PREFIX
from pixelweave.engine.runtime.debug_hooks import callback_addresses

DEFAULT_CACHE_SIZE = 1 << 20  # Halide's default limit, in bytes
_U64 = (1 << 64) - 1
_PENDING_LIMIT = 1024


@dataclass
class _Entry:
    values: list[bytes]
    eviction_key: int | None

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.values)


@dataclass
class _Request:
    key: tuple
    buffers: list[tuple[int, int]]  # (address, bytes) of each buffer of the Func
    eviction_key: int | None


_lock = threading.Lock()
_entries: OrderedDict[tuple, _Entry] = OrderedDict()  # least recently used first
_state = {"limit": DEFAULT_CACHE_SIZE, "size": 0}
_pending: dict[tuple, tuple] = {}  # (identity, buffer address, thread) -> the key its lookup missed
_statistics = {"hits": 0, "misses": 0, "stores": 0}


def memoization_cache_set_size(size: int) -> None:
    """Limit the cache to `size` bytes of stored values (0: the default, 1 MiB), evicting
    least recently used entries at once if it holds more (halide_memoization_cache_set_size)."""
    size = int(size)
    if size < 0:
        raise ValueError(f"memoization_cache_set_size needs a size in bytes >= 0, got {size}")
    with _lock:
        _state["limit"] = size or DEFAULT_CACHE_SIZE
        _prune(0)


def memoization_cache_evict(eviction_key: int) -> None:
    """Remove every entry stored under this eviction key (halide_memoization_cache_evict);
    the key is compared as the uint64 Halide makes of it."""
    wanted = int(eviction_key) & _U64
    with _lock:
        for key in [k for k, entry in _entries.items() if entry.eviction_key == wanted]:
            _remove(key)


def memoization_cache_cleanup() -> None:
    """Empty the cache (halide_memoization_cache_cleanup); the size limit stays."""
    with _lock:
        _entries.clear()
        _pending.clear()
        _state["size"] = 0


def memoization_cache_statistics() -> dict[str, int]:
    """Hits, misses, stores since the process started, and the entries and bytes held now."""
    with _lock:
        return {**_statistics, "entries": len(_entries), "bytes": _state["size"], "limit": _state["limit"]}


def _remove(key: tuple) -> None:
    entry = _entries.pop(key)
    _state["size"] -= entry.size


def _prune(incoming: int) -> None:
    """Evict least recently used entries until `incoming` more bytes fit (or none is left)."""
    while _entries and _state["size"] + incoming > _state["limit"]:
        _remove(next(iter(_entries)))


def _read_request(identity: int, address: int) -> _Request:
    count = ctypes.c_int64.from_address(address).value
    values = list((ctypes.c_int64 * count).from_address(address + 8))
    at = 0

    def take(n: int = 1) -> list[int]:
        nonlocal at
        taken = values[at : at + n]
        at += n
        return taken

    (n_keys,) = take()
    keys = tuple(take(n_keys))
    (n_images,) = take()
    images = []
    for _ in range(n_images):
        image_address, element_bytes, dims = take(3)
        shape = take(3 * dims)
        images.append((tuple(shape), _contents_hash(image_address, element_bytes, shape)))
    (n_buffers,) = take()
    buffers = [(a & _U64, n) for a, n in (take(2) for _ in range(n_buffers))]
    has_eviction_key, eviction_key = take(2)
    key = (identity, keys, tuple(images), tuple(n for _, n in buffers))
    return _Request(key, buffers, (eviction_key & _U64) if has_eviction_key else None)


def _contents_hash(address: int, element_bytes: int, shape: list[int]) -> bytes:
    """A hash of every byte an image's elements span (its min corner is at `address`)."""
    lo, hi = 0, 1
    for d in range(0, len(shape), 3):
        extent, stride = shape[d + 1], shape[d + 2]
        if extent <= 0:
            return b""
        reach = (extent - 1) * stride
        lo += min(reach, 0)
        hi += max(reach, 0)
    start = (address + lo * element_bytes) & _U64
    span = (ctypes.c_char * ((hi - lo) * element_bytes)).from_address(start)
    return hashlib.blake2b(memoryview(span), digest_size=20).digest()


def _lookup(identity: int, address: int) -> int:
    """1 (a miss: compute the Func) or 0 (a hit: its buffers now hold the stored values)."""
    try:
        request = _read_request(identity, address)
        with _lock:
            entry = _entries.get(request.key)
            if entry is None:
                _statistics["misses"] += 1
                if len(_pending) >= _PENDING_LIMIT:  # lookups of runs that failed before storing
                    _pending.clear()
                _pending[_pending_key(identity, request)] = request.key
                return 1
            for (buffer_address, nbytes), stored in zip(request.buffers, entry.values, strict=True):
                ctypes.memmove(buffer_address, stored, nbytes)
            _entries.move_to_end(request.key)
            _statistics["hits"] += 1
            return 0
    except Exception:  # never let a failure here look like a hit
        return 1


def _store(identity: int, address: int) -> int:
    try:
        request = _read_request_without_images(identity, address)
        with _lock:
            key = _pending.pop(_pending_key(identity, request), None)
        if key is None:
            key = _read_request(identity, address).key
        values = [ctypes.string_at(buffer_address, nbytes) for buffer_address, nbytes in request.buffers]
        entry = _Entry(values, request.eviction_key)
        with _lock:
            if key in _entries:
                _remove(key)
            _prune(entry.size)
            _entries[key] = entry
            _state["size"] += entry.size
            _statistics["stores"] += 1
    except Exception:  # the values were computed; only caching them failed
        pass
    return 0


def _read_request_without_images(identity: int, address: int) -> _Request:
    """The buffers and eviction key of a store, without hashing the images again."""
    count = ctypes.c_int64.from_address(address).value
    values = list((ctypes.c_int64 * count).from_address(address + 8))
    at = 1 + values[0]
    n_images = values[at]
    at += 1
    for _ in range(n_images):
        at += 3 + 3 * values[at + 2]
    n_buffers = values[at]
    buffers = [(values[at + 1 + 2 * i] & _U64, values[at + 2 + 2 * i]) for i in range(n_buffers)]
    at += 1 + 2 * n_buffers
    has_eviction_key, eviction_key = values[at], values[at + 1]
    return _Request((), buffers, (eviction_key & _U64) if has_eviction_key else None)


def _pending_key(identity: int, request: _Request) -> tuple:
    first = request.buffers[0][0] if request.buffers else 0
    return (identity, first, threading.get_ident())


_HOOK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p)
_registered: dict[str, tuple] = {}
_registration_lock = threading.Lock()  # not _lock: a hook may be registered while the cache is busy


def memoize_hook_addresses() -> dict[str, int]:
    """C symbol -> address of the lookup and store hooks (made once per process), for the
    JIT to import into every library it links."""
    hooks = {MEMOIZE_HOOKS[MEMOIZE_LOOKUP_PREFIX]: _lookup, MEMOIZE_HOOKS[MEMOIZE_STORE_PREFIX]: _store}
    return callback_addresses(_registered, _registration_lock, _HOOK_TYPE, hooks)
