"""One file of a batch, processed in any process: the unit of work a Dask worker runs.

A BatchJob carries everything a process that has never seen the document needs: the
document's text, the object code it was compiled to (one NativeCode per group of equally
sized outputs), the fixed inputs and the parameter values. A worker rebuilds the document
(cheap: no lowering) once per job, adopts the shipped code, and then runs each file's bytes
through it without lowering or invoking LLVM; the outputs come back encoded, so workers
need no file system shared with the client.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

import numpy as np
from pixelweave.engine.errors import PixelweaveError
from pixelweave.engine.runtime.jit import NativeCode, compile_statistics
from pixelweave.nodes.images import encode_image
from pixelweave.nodes.pipeline_build import BuiltDocument, build_document

BUILT_DOCUMENTS_KEPT = 4  # per process: the documents of the last few jobs


@dataclass(frozen=True)
class BatchJob:
    """A compiled document with its fixed inputs: picklable, shipped once to every worker."""

    document_text: str
    source: str
    batched_input: str
    fixed_inputs: dict[str, np.ndarray]
    params: dict[str, int | float]
    target: str
    level: str
    native: dict[tuple[str, ...], NativeCode]
    key: str = field(default="")

    def __post_init__(self) -> None:
        if not self.key:
            h = hashlib.sha256(self.document_text.encode())
            for part in (self.source, self.target, self.level, *sorted(map(repr, self.native))):
                h.update(b"\0" + part.encode())
            object.__setattr__(self, "key", h.hexdigest())


@dataclass(frozen=True)
class FileResult:
    """What processing one file gave: encoded outputs by node id, or the reason it was
    skipped; `compiles` counts the pipelines and object files compiled in the worker's
    process while it ran (0 and 0 when the shipped code was used)."""

    name: str
    outputs: dict[str, bytes]
    problem: str | None
    compiles: dict[str, int]


def prepare_batch_job(
    built: BuiltDocument,
    batched_input: str,
    fixed_inputs: dict[str, np.ndarray],
    params: dict[str, int | float],
    example: np.ndarray,
    target: str = "host",
    level: str = "full",
) -> BatchJob:
    """Compiles the document here (the compile cache makes this cheap when it was compiled
    before) for the output sizes `example` (one image of the batched input) gives, and
    packs the object code into a BatchJob."""
    sizes = built.output_sizes({**fixed_inputs, batched_input: example}, params)
    native = {ids: fn.native.native_code() for ids, _, fn in built.runner.compile(sizes, target=target, level=level)}
    return BatchJob(
        document_text=built.document.dumps(),
        source=str(built.document.path or built.document.name),
        batched_input=batched_input,
        fixed_inputs=dict(fixed_inputs),
        params=dict(params),
        target=target,
        level=level,
        native=native,
    )


_built: dict[str, BuiltDocument] = {}
_built_lock = threading.Lock()


def _job_document(job: BatchJob) -> BuiltDocument:
    """The job's document built in this process with the shipped code adopted, once per job."""
    with _built_lock:
        built = _built.get(job.key)
        if built is None:
            from pixelweave.nodes.document import Document

            built = build_document(Document.loads(job.document_text, job.source), check_lowering=False)
            for ids, code in job.native.items():
                built.runner.pipeline(ids).load_native_code(code, job.target)
            _built[job.key] = built
            while len(_built) > BUILT_DOCUMENTS_KEPT:
                _built.pop(next(iter(_built)))
        return built


def run_batch_file(job: BatchJob, name: str, data: bytes, suffix: str = ".png") -> FileResult:
    """Runs one file's bytes through the job; a file the pipeline cannot take (unreadable,
    wrong size, ...) gives a FileResult with its problem. Any other exception propagates,
    so that a cluster can retry the task."""
    before = compile_statistics()
    built = _job_document(job)
    try:
        image = built.decode_input(job.batched_input, data, name)
        images = {**job.fixed_inputs, job.batched_input: image}
        results = built.runner.run(images, job.params, target=job.target, level=job.level)
        outputs = {node_id: encode_image(array, suffix) for node_id, array in results.items()}
        problem = None
    except PixelweaveError as e:
        outputs, problem = {}, str(e)
    after = compile_statistics()
    compiles = {k: after[k] - before[k] for k in ("pipelines_compiled", "objects_compiled")}
    return FileResult(name, outputs, problem, compiles)
