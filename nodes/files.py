"""File modes for atomic writes: mkstemp creates 0600 files, but a saved document or image
should keep the mode of the file it replaces, or get the usual mode for a new file."""

from __future__ import annotations

import os
from pathlib import Path


def mode_for(target: Path) -> int:
    """The permission bits a file written to `target` should have."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
