"""Large preview images are mapped without NumPy's huge-page advice (where transparent huge
pages are "madvise", first touching advised memory may compact memory synchronously: up
to a second of system time for one stage), and still lend their memory as spares."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from pixelweave.nodes.image_cache import UNADVISED_BYTES, ImageCache


def vm_flags(address: int) -> set[str]:
    """The VmFlags of the mapping holding address (Linux /proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split(maxsplit=1)[0] if line.strip() else ""
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                lo, hi = (int(part, 16) for part in head.split("-"))
                inside = lo <= address < hi
            elif inside and line.startswith("VmFlags:"):
                return set(line.split()[1:])
    raise AssertionError(f"no mapping holds address {address:#x}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_a_large_image_is_not_advised_for_huge_pages() -> None:
    cache = ImageCache(budget=1 << 30)
    shape = (3, 1024, 1024)  # 12 MiB of float32
    image = cache.empty(shape, np.float32)
    assert image.nbytes >= 2 * UNADVISED_BYTES
    assert image.ctypes.data % 64 == 0 and image.flags.writeable
    middle = image.ctypes.data + image.nbytes // 2  # NumPy advises the 2 MiB-aligned inside
    assert "hg" not in vm_flags(middle)
    assert "hg" in vm_flags(np.empty(image.nbytes, np.uint8).ctypes.data + image.nbytes // 2)  # NumPy's own
    image[:] = 3.0
    assert float(image.sum()) == 3.0 * image.size


def test_a_large_image_lends_its_memory_once_evicted() -> None:
    shape = (4, 1024, 1024)  # 16 MiB of float32
    cache = ImageCache(budget=128 << 20)  # spares up to a quarter of it
    box = ((0, 1024), (0, 1024), (0, 4))
    first = cache.empty(shape, np.float32)
    address = first.ctypes.data
    first[:] = 1.0
    cache.put("v1", first, box, slot="stage", versions=1)
    del first
    second = cache.empty(shape, np.float32)  # fresh: v1 is still cached
    second[:] = 2.0
    cache.put("v2", second, box, slot="stage", versions=1)  # v1 goes, its memory a spare
    del second
    assert "v1" not in cache and cache.evictions == 1
    third = cache.empty(shape, np.float32)
    assert cache.reused == 1 and third.ctypes.data == address
    np.testing.assert_array_equal(cache.get("v2", box), np.full(shape, 2.0, np.float32))
