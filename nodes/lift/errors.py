"""The error every lifter refusal raises: it names the file, the line and the construct."""

from __future__ import annotations


class LiftError(Exception):
    """Code outside the subset the lifter understands (or a file it cannot read)."""

    def __init__(self, file: str, line: int | None, construct: str, why: str) -> None:
        self.file = file
        self.line = line
        self.construct = construct
        self.why = why
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: cannot lift {construct}: {why}")
