"""Intermediate images of the preview path, kept in memory under a budget of bytes (LRU).

An entry is one node output computed over a box: its key says what the values are (the
node's structure, its upstream images, its run-time values, the scale), the box says where
they are known. A request for a box inside the cached one is a view of it. The budget
defaults to a fraction of the machine's memory (PIXELWEAVE_PREVIEW_MEMORY, in MiB,
overrides it); the least recently used images go first.
"""

from __future__ import annotations

import collections
import os
import threading
from dataclasses import dataclass

import numpy as np

MEMORY_ENV = "PIXELWEAVE_PREVIEW_MEMORY"
DEFAULT_FRACTION = 0.15
FALLBACK_BYTES = 1 << 30

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


class ImageCache:
    """Node images by key, least recently used evicted first once over `budget` bytes."""

    def __init__(self, budget: int | None = None) -> None:
        self.budget = default_budget() if budget is None else int(budget)
        self._entries: collections.OrderedDict[str, CachedImage] = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.evictions = 0

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

    def put(self, key: str, array: np.ndarray, box: Box) -> None:
        """Keeps array (covering box) under key, replacing what was there; an image larger
        than the whole budget is not kept."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.array.nbytes
            if array.nbytes > self.budget:
                return
            self._entries[key] = CachedImage(array, box)
            self._bytes += array.nbytes
            while self._bytes > self.budget and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.array.nbytes
                self.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
