"""The machine the automatic scheduler plans for: cores, cache sizes and SIMD width.

Cache sizes come from the operating system (Linux's sysfs), falling back to typical
values only where it does not say; the SIMD width comes from the code generation target.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pixelweave.engine.codegen.target import resolve_target

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
# Used only when the operating system does not report a level (not Linux, or a container
# that hides sysfs): common sizes of current x86 and ARM cores.
_FALLBACK = {1: 32 * 1024, 2: 1024 * 1024, 3: 8 * 1024 * 1024}


@dataclass(frozen=True)
class Machine:
    """What the cost model needs to know about the hardware."""

    cores: int
    l1_bytes: int
    l2_bytes: int
    l3_bytes: int
    vector_bits: int

    def lanes(self, bits: int) -> int:
        """The natural vector width (lanes) for elements of `bits` bits."""
        return max(1, self.vector_bits // max(8, bits))


def _parse_size(text: str) -> int | None:
    text = text.strip().upper()
    scale = 1
    if text.endswith("K"):
        scale, text = 1024, text[:-1]
    elif text.endswith("M"):
        scale, text = 1024 * 1024, text[:-1]
    try:
        return int(text) * scale
    except ValueError:
        return None


def cache_sizes(root: Path = _SYSFS_CACHE) -> dict[int, int]:
    """Data (or unified) cache size in bytes per level, as the operating system reports it."""
    sizes: dict[int, int] = {}
    if not root.is_dir():
        return sizes
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or size is None:
            continue
        sizes[level] = size
    return sizes


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def host_machine(target: str = "host") -> Machine:
    """The running machine's cores and caches, with the SIMD width of `target`."""
    caches = cache_sizes()
    threads = os.environ.get("PIXELWEAVE_NUM_THREADS", "")
    cores = int(threads) if threads.isdigit() and int(threads) > 0 else _cores()
    return Machine(
        cores=cores,
        l1_bytes=caches.get(1, _FALLBACK[1]),
        l2_bytes=caches.get(2, _FALLBACK[2]),
        l3_bytes=caches.get(3, _FALLBACK[3]),
        vector_bits=resolve_target(target).vector_bits(),
    )
