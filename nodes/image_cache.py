"""Intermediate images of the preview path, kept in memory under a budget of bytes (LRU).

An entry is one node output computed over a box: its key says what the values are (the
node's structure, its upstream images, its run-time values, the scale), the box says where
they are known. A request for a box inside the cached one is a view of it. The budget
defaults to a fraction of the machine's memory (PIXELWEAVE_PREVIEW_MEMORY, in MiB,
overrides it); the least recently used images go first.

An entry may belong to a slot (one stage over one box: its versions differ only in values,
e.g. the run-time values of a slider drag) that keeps at most a few versions. Evicted
arrays become spares: a new image of the same size takes a spare's memory instead of fresh
pages (on this kind of machine first-touching fresh memory costs about 2-3 ms per MiB, more
than computing most stages), provided nothing else still holds the spare.
"""

from __future__ import annotations

import collections
import mmap
import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

MEMORY_ENV = "PIXELWEAVE_PREVIEW_MEMORY"
DEFAULT_FRACTION = 0.15
FALLBACK_BYTES = 1 << 30
SPARE_FRACTION = 0.25  # of the budget, at most SPARE_LIMIT bytes, kept as spare arrays
SPARE_LIMIT = 1 << 30
ALIGNMENT = 64  # as the engine's own buffers (engine.runtime.buffer.ALIGNMENT)

Box = tuple[tuple[int, int], ...]  # (min, extent) per dimension, Func order


def default_budget() -> int:
    """Bytes the preview may keep: $PIXELWEAVE_PREVIEW_MEMORY MiB, else a fraction of RAM."""
    configured = os.environ.get(MEMORY_ENV, "").strip()
    if configured:
        try:
            return max(int(float(configured) * (1 << 20)), 0)
        except ValueError:
            raise ValueError(f"{MEMORY_ENV} must be a number of MiB, got {configured!r}") from None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return FALLBACK_BYTES
    return int(total * DEFAULT_FRACTION) if total > 0 else FALLBACK_BYTES


def contains(outer: Box, inner: Box) -> bool:
    return len(outer) == len(inner) and all(
        om <= im and im + ie <= om + oe for (om, oe), (im, ie) in zip(outer, inner, strict=True)
    )


def crop(array: np.ndarray, box: Box, window: Box) -> np.ndarray:
    """The part of array (covering box) that covers window; a view. Axes are dimensions reversed."""
    slices = tuple(
        slice(wm - bm, wm - bm + we) for (bm, _), (wm, we) in zip(reversed(box), reversed(window), strict=True)
    )
    return array[slices]


@dataclass
class CachedImage:
    array: np.ndarray
    box: Box
    slot: str | None = None


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns array's memory (NumPy views point at the owner directly)."""
    return array if array.base is None or not isinstance(array.base, np.ndarray) else array.base


# From this size up, NumPy advises the kernel to back an array with huge pages
# (MADV_HUGEPAGE). Where transparent huge pages are "madvise" with defrag "madvise" (this
# machine's kind), every first touch of an advised huge page may then compact memory
# synchronously: the first run of a stage into a fresh 134 MB image (local Laplacian's
# g_pyramid0 after its levels go 8 -> 9) took 30-900 ms of system time, 0.9-1.1 s when the
# levels go to 10. Images this large are mapped without that advice (plain pages):
# 70-220 ms, always.
UNADVISED_BYTES = 4 << 20


def _fresh_memory(nbytes: int) -> np.ndarray:
    """nbytes of new memory as a 1-D uint8 array that owns it (unmapped when it is freed)."""
    private = getattr(mmap, "MAP_PRIVATE", None)  # not on Windows, which has no such advice either
    if nbytes < UNADVISED_BYTES or private is None:
        return np.empty(nbytes, dtype=np.uint8)
    return np.frombuffer(mmap.mmap(-1, nbytes, flags=private | mmap.MAP_ANONYMOUS), dtype=np.uint8)


def _free(spare: np.ndarray) -> bool:
    """Whether nothing outside the spares holds a spare's memory: no view of it is alive
    (a picture handed out, a stage's input). The references counted are the spares' own,
    the caller's name for it, this function's argument and getrefcount's."""
    return sys.getrefcount(spare) <= 4


class ImageCache:
    """Node images by key, least recently used evicted first once over `budget` bytes."""

    def __init__(self, budget: int | None = None) -> None:
        self.budget = default_budget() if budget is None else int(budget)
        self._entries: collections.OrderedDict[str, CachedImage] = collections.OrderedDict()
        self._slots: dict[str, list[str]] = {}  # slot -> its keys, least recently stored first
        self._bytes = 0
        self._lock = threading.Lock()
        self._spares: collections.OrderedDict[int, np.ndarray] = collections.OrderedDict()  # id -> array
        self._spare_bytes = 0
        self.spare_budget = min(int(self.budget * SPARE_FRACTION), SPARE_LIMIT)
        self.evictions = 0
        self.reused = 0  # arrays handed out again by empty()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str, window: Box) -> np.ndarray | None:
        """The image `key` over window (a view), or None when it is not kept over all of it."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not contains(entry.box, window):
                return None
            self._entries.move_to_end(key)
            return crop(entry.array, entry.box, window)

    def covers(self, key: str, window: Box) -> bool:
        """Whether image `key` is kept over all of window (without counting as a use)."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and contains(entry.box, window)

    def box_of(self, key: str) -> Box | None:
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else entry.box

    def put(self, key: str, array: np.ndarray, box: Box, *, slot: str | None = None, versions: int = 0) -> None:
        """Keeps array (covering box) under key, replacing what was there; an image larger
        than the whole budget is not kept. With a slot and `versions` > 0, the slot keeps
        only its `versions` most recently stored images."""
        with self._lock:
            self._remove(key)
            if array.nbytes > self.budget:
                return
            self._entries[key] = CachedImage(array, box, slot)
            self._bytes += array.nbytes
            if slot is not None:
                keys = self._slots.setdefault(slot, [])
                keys.append(key)
                while versions > 0 and len(keys) > versions:
                    self._evict(keys[0])
            while self._bytes > self.budget and self._entries:
                self._evict(next(iter(self._entries)))

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialised array of shape and dtype, aligned for vector stores: a spare's
        memory when one of exactly its size is free, else new memory."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize + ALIGNMENT
        with self._lock:
            for ident in list(self._spares):
                raw = self._spares[ident]
                if raw.nbytes == nbytes and _free(raw):
                    del self._spares[ident]
                    self._spare_bytes -= raw.nbytes
                    self.reused += 1
                    break
            else:
                raw = _fresh_memory(nbytes)
        offset = (-raw.ctypes.data) % ALIGNMENT
        return raw[offset : offset + nbytes - ALIGNMENT].view(dtype).reshape(shape)

    def _remove(self, key: str) -> CachedImage | None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.array.nbytes
            if entry.slot is not None:
                keys = self._slots[entry.slot]
                keys.remove(key)
                if not keys:
                    del self._slots[entry.slot]
        return entry

    def _evict(self, key: str) -> None:
        """Forget image `key`; its memory becomes a spare (the oldest spares go first)."""
        entry = self._remove(key)
        if entry is None:
            return
        self.evictions += 1
        raw = _owner(entry.array)
        del entry
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.nbytes > self.spare_budget or id(raw) in self._spares:
            return  # not an array empty() made, or too large to keep
        self._spares[id(raw)] = raw
        self._spare_bytes += raw.nbytes
        while self._spare_bytes > self.spare_budget:
            _, dropped = self._spares.popitem(last=False)
            self._spare_bytes -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._slots.clear()
            self._spares.clear()
            self._bytes = self._spare_bytes = 0
