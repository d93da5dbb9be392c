"""The image of any node, for the editor's preview, computed by the compositor path.

The node and what it reads are computed stage by stage (nodes/compositor.py): kernels are
compiled once per structure and every intermediate image is cached, so an edit recomputes
only what changed and what lies downstream of it, and an undo is answered from the cache.
The images equal the fused, scheduled pipeline's (tests/nodes/test_preview_cache.py).

Previews may run on inputs shrunk by an integer factor while a value is being dragged; a
pipeline that cannot run that small is retried at full size.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pixelweave.nodes.compositor import Compositor
from pixelweave.nodes.device_preview import compute_on_device
from pixelweave.nodes.document import Document
from pixelweave.nodes.editing import upstream_of
from pixelweave.nodes.errors import NodeError

import pixelweave as pw


@dataclass
class PreviewResult:
    """A node's output array with what to compare it with."""

    node_id: str
    port: str
    array: np.ndarray
    reference: np.ndarray | None
    reference_title: str
    scale: int
    note: str
    seconds: float
    runs: int = 0  # stage kernels run for this picture (0: every image came from the cache)
    compiles: int = 0  # stage kernels compiled for it (0: every kernel was cached)


class PreviewComputer:
    """Computes node previews; keeps kernels and images (under a memory budget in bytes,
    default a fraction of RAM) between calls."""

    def __init__(self, budget: int | None = None) -> None:
        self.compositor = Compositor(budget)

    def compute(
        self,
        doc: Document,
        node_id: str,
        port: str | None = None,
        *,
        scale: int = 1,
        check: Callable[[], None] | None = None,
        progress: Callable[[int, int], None] | None = None,
        target: str = "host",
        device: str | None = None,
    ) -> PreviewResult:
        """The node's output (its first port unless `port` is given) on the document's
        sample inputs. DocumentError when the node (or what it reads) has a problem;
        NodeError or an engine error when it cannot run. `check` and `progress` as for
        Compositor.compute. Target "opencl" computes it on the OpenCL `device` with the
        document's OpenCL schedules (device_preview.py) instead of stage by stage."""
        start = time.perf_counter()
        stats = self.compositor.stats
        runs, compiles = stats.runs, stats.compiles
        if not doc.has_node(node_id):
            raise NodeError(f"there is no node `{node_id}`")
        used = scale
        if target == "opencl":
            array, note = compute_on_device(doc, node_id, port, scale, self.compositor.input_image, device)
            note = "; ".join(filter(None, [f"computed with OpenCL on {device or 'the default device'}", note]))
            return self._result(doc, node_id, port, array, used, note, start, runs, compiles)
        try:
            array, note = self.compositor.compute(doc, node_id, port, scale=scale, check=check, progress=progress)
        except (NodeError, pw.InputError, pw.BoundsError, pw.RuntimeFailure):
            if scale == 1:
                raise
            used = 1
            array, note = self.compositor.compute(doc, node_id, port, scale=1, check=check, progress=progress)
        if used > 1:
            note = "; ".join(filter(None, [f"preview at 1/{used} resolution", note]))
        return self._result(doc, node_id, port, array, used, note, start, runs, compiles)

    def _result(
        self,
        doc: Document,
        node_id: str,
        port: str | None,
        array: np.ndarray,
        used: int,
        note: str,
        start: float,
        runs: int,
        compiles: int,
    ) -> PreviewResult:
        stats = self.compositor.stats
        port = port or next(iter(self._output_ports(doc, node_id)))
        reference, title = self._reference(doc, node_id, used)
        return PreviewResult(
            node_id,
            port,
            array,
            reference,
            title,
            used,
            note,
            time.perf_counter() - start,
            stats.runs - runs,
            stats.compiles - compiles,
        )

    @staticmethod
    def _output_ports(doc: Document, node_id: str) -> list[str]:
        from pixelweave.nodes.node_type import node_type

        return [p.name for p in node_type(doc.node(node_id).type).outputs]

    def _reference(self, doc: Document, node_id: str, scale: int) -> tuple[np.ndarray | None, str]:
        """The first input image the node reads (for side-by-side comparison)."""
        keep = upstream_of(doc, node_id)
        for node in doc.nodes:
            if node.id in keep and node.type == "image_input":
                layout, element = node.params.get("layout", "colour"), node.params.get("element", "u8")
                try:
                    return self.compositor.input_image(doc, node.id, layout, element, scale)[0], node.id
                except (NodeError, OSError):
                    return None, ""
        return None, ""
