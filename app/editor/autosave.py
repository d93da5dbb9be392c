"""Autosave and crash recovery.

While a document has unsaved changes the editor writes it, every few seconds, to a file
named after the editor's process id in the autosave folder. A clean exit, a save or
opening another document removes that file; so a file whose process is no longer running
is what a crashed (or killed) editor left behind, and the next editor offers to recover it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pixelweave.nodes.document import Document
from pixelweave.nodes.files import mode_for

FORMAT = "pixelweave.autosave"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Autosave:
    """The autosave file of this editor process, and the ones others left behind."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / f"autosave-{os.getpid()}.json"

    def write(self, doc: Document) -> Path:
        """Writes atomically (temporary file, then rename): a crash mid-write loses nothing."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {
            "format": FORMAT,
            "saved_at": time.time(),
            "original": str(doc.path) if doc.path else None,
            "document": doc.to_json(),
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.chmod(tmp, mode_for(self.path))
        os.replace(tmp, self.path)
        return self.path

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def leftovers(self) -> list[Path]:
        """Autosaves of editors that are no longer running, newest first."""
        found = []
        for path in self.folder.glob("autosave-*.json"):
            try:
                pid = int(path.stem.split("-", 1)[1])
            except ValueError:
                continue
            if pid != os.getpid() and not _running(pid):
                found.append(path)
        return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)

    def read(self, path: Path) -> Document:
        """The document of an autosave file, with its original path (DocumentError if damaged)."""
        from pixelweave.nodes.errors import DocumentError

        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise DocumentError([f"the autosave file cannot be read: {e}"], str(path)) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DocumentError(["not a Pixelweave autosave file"], str(path))
        doc = Document.from_json(data.get("document"), str(path))
        doc.path = Path(data["original"]) if data.get("original") else None
        return doc

    @staticmethod
    def describe(path: Path) -> str:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            name = data["document"].get("name") or "Untitled"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(data["saved_at"]))
            return f"“{name}”, autosaved {when}" + (f" (from {data['original']})" if data.get("original") else "")
        except (OSError, ValueError, KeyError, TypeError):
            return path.name
