"""Progress bars for long command-line work (batch, bench, export): drawn on a terminal,
silent when stderr is piped or captured, so logs and scripts see only the results."""

from __future__ import annotations

import sys
from typing import Any, TextIO


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether stream (default: stderr) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(total: int, description: str, unit: str = "it", stream: TextIO | None = None) -> Any:
    """A tqdm bar on stream (default: stderr), disabled unless stream is a terminal. Use it
    as a context manager; `update(n)` advances it, `set_postfix_str(text)` says what is on."""
    from tqdm import tqdm

    stream = sys.stderr if stream is None else stream
    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        file=stream,
        disable=not on_terminal(stream),
        leave=True,
        dynamic_ncols=True,
    )
