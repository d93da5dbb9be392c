"""`pixelweave batch --dask ADDRESS`: the files of a batch spread over a Dask distributed
cluster (`--dask local` starts one on this machine).

The client compiles the document once and ships its object code to every worker inside a
BatchJob (nodes/batch_job.py); workers link it and never compile. Files travel as bytes
and results come back encoded, so the workers need no file system shared with the client.
A bounded number of files is in flight at once (memory stays flat however many files
there are); a task that raises is retried by Dask, and a file that still fails, or that
the pipeline cannot take, is reported as skipped, as without a cluster.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pixelweave.nodes.batch_job import BatchJob, FileResult, run_batch_file

CONNECT_TIMEOUT_S = 20
FILES_IN_FLIGHT_PER_THREAD = 4


class ClusterError(Exception):
    """The cluster cannot be reached or started."""


@dataclass
class ClusterReport:
    """What the cluster did: files skipped (path, why), the worker count, and how many
    pipelines / object files the workers compiled while running the files."""

    workers: int
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    worker_compiles: dict[str, int] = field(default_factory=lambda: {"pipelines_compiled": 0, "objects_compiled": 0})


@contextlib.contextmanager
def dask_client(address: str, local_workers: int | None = None) -> Iterator[Any]:
    """A distributed.Client on the scheduler at address, or on a new LocalCluster for
    "local" (local_workers processes of one thread each, each running the compiled code
    on one thread, so that the files, not the loops, share the cores)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(
            "--dask needs Dask distributed: pip install 'pixelweave[cluster]' (or 'dask[distributed]')"
        ) from None
    from pixelweave.engine.runtime.thread_pool import NUM_THREADS_ENV

    if address == "local":
        cluster = LocalCluster(
            n_workers=local_workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={NUM_THREADS_ENV: "1"},
        )
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    try:
        yield client
    finally:
        client.close()


def run_on_cluster(
    client: Any,
    job: BatchJob,
    files: list[Path],
    write: Callable[[Path, FileResult], None],
    advance: Callable[[str], None],
    retries: int = 2,
    task: Callable[..., FileResult] = run_batch_file,
) -> ClusterReport:
    """Runs every file through job on the client's cluster. write(file, result) stores a
    file's outputs (here, on the client); advance(name) follows each finished file.
    task is what the workers run (run_batch_file; tests pass a wrapper)."""
    from distributed import as_completed

    threads = sum(client.nthreads().values())
    if threads == 0:
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise ClusterError(f"the Dask cluster has no worker (waited {CONNECT_TIMEOUT_S} s for one)") from None
        threads = sum(client.nthreads().values())
    report = ClusterReport(workers=len(client.nthreads()))
    shipped = client.scatter(job, broadcast=True, hash=False)
    run_id = uuid.uuid4().hex[:8]
    queue = iter(enumerate(files))
    in_flight: dict[str, Path] = {}
    finished = as_completed()

    def submit_next() -> bool:
        for i, f in queue:
            try:
                data = f.read_bytes()
            except OSError as e:
                report.skipped.append((f, f"{e.strerror}: {f}" if e.strerror else str(e)))
                advance(f.name)
                continue
            future = client.submit(
                task, shipped, str(f), data, key=f"pixelweave-batch-{run_id}-{i}", retries=retries, pure=False
            )
            in_flight[future.key] = f
            finished.add(future)
            return True
        return False

    for _ in range(max(threads, 1) * FILES_IN_FLIGHT_PER_THREAD):
        if not submit_next():
            break
    for future in finished:
        f = in_flight.pop(future.key)
        if future.status == "error":
            error = future.exception()
            why = f"failed on the cluster after {retries} retries: {type(error).__name__}: {error}"
            report.skipped.append((f, why))
        else:
            result: FileResult = future.result()
            for k, n in result.compiles.items():
                report.worker_compiles[k] = report.worker_compiles.get(k, 0) + n
            if result.problem is not None:
                report.skipped.append((f, result.problem))
            else:
                try:
                    write(f, result)
                except OSError as e:
                    report.skipped.append((f, f"{e.strerror}: {e.filename}" if e.strerror else str(e)))
        future.release()
        advance(f.name)
        submit_next()
    shipped.release()
    return report
