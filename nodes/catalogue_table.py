"""The node catalogue as a Markdown table, for README.md (kept in sync by a test).

python -m pixelweave.nodes.catalogue_table            # print the table
python -m pixelweave.nodes.catalogue_table --write    # replace the table in README.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pixelweave.nodes.node_type import CATEGORIES, NodeType, node_types

START, END = "<!-- catalogue:start -->", "<!-- catalogue:end -->"
README = Path(__file__).resolve().parent.parent / "README.md"


def _ports(ports: tuple) -> str:
    return ", ".join(f"`{p.name}`{'?' if p.optional else ''}" for p in ports) or "—"


def _params(cls: type[NodeType]) -> str:
    """The parameter names; run-time ones (compiled as engine Params) marked with *."""
    return ", ".join(f"`{p.name}`{'*' if p.runtime else ''}" for p in cls.params) or "—"


def markdown_table() -> str:
    """One row per node type, grouped by category in catalogue order."""
    lines = [
        "| category | node type | inputs | outputs | parameters | what it does |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    shipped_prefix = "pixelweave.nodes.catalogue."  # not the test suite's own node types
    shipped = [c for c in node_types().values() if c.__module__.startswith(shipped_prefix)]
    types = sorted(shipped, key=lambda c: (CATEGORIES.index(c.category), c.type_name))
    for cls in types:
        summary = cls.summary().replace("|", "\\|")
        lines.append(
            f"| {cls.category} | `{cls.type_name}` | {_ports(cls.inputs)} | {_ports(cls.outputs)} | "
            f"{_params(cls)} | {summary} |"
        )
    return "\n".join(lines)


def readme_block(text: str) -> str | None:
    """The table currently in a README text, or None if it has no markers."""
    if START not in text or END not in text:
        return None
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def write_readme(path: Path = README) -> None:
    text = path.read_text(encoding="utf-8")
    if readme_block(text) is None:
        raise SystemExit(f"{path} has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{START}\n{markdown_table()}\n{END}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="Print (or write into README.md) the node catalogue table.")
    parser.add_argument("--write", action="store_true", help="replace the table in README.md")
    if parser.parse_args().write:
        write_readme()
    else:
        print(markdown_table())


if __name__ == "__main__":
    main()
