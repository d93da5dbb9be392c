"""`pixelweave batch --dask`: files spread over a Dask LocalCluster, the compiled code shipped
to the workers (which must compile nothing), failed tasks retried, unreadable files skipped
and reported; every output compared with a NumPy result computed here."""

from __future__ import annotations

import collections
import threading
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from distributed import Client, LocalCluster
from pixelweave.app import dask_batch
from pixelweave.app.cli import main
from pixelweave.app.dask_batch import run_on_cluster
from pixelweave.engine.runtime.jit import cache_directory, compile_statistics
from pixelweave.nodes.batch_job import prepare_batch_job, run_batch_file
from pixelweave.nodes.pipeline_build import open_document

from tests.nodes.document_samples import blur_document, node, numpy_box_blur, write_document, write_samples

GAIN = 1.5


def _document(folder: Path) -> Path:
    """input -> box blur -> `result`, and input * gain (a run-time parameter) -> `scaled`:
    two outputs, one parameter, and a tiled parallel schedule for the blur's output."""
    write_samples(folder)
    data = blur_document("gray.png", "gray", 1, out_schedule={"out": [["parallel", "y"]]})
    data["nodes"] += [
        node("gain", "scalar_parameter", {"value": 0.5, "minimum": 0.0, "maximum": 2.0, "element": "f32"}),
        node("times", "arithmetic", {"operation": "multiply"}, {"a": "input.out", "b": "gain.out"}),
        node("scaled", "output", {"element": "u8", "scale": True}, {"image": "times.out"}),
    ]
    return write_document(folder / "doc.json", data)


def _scaled(image: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(image.astype(np.float32) * np.float32(GAIN)), 0, 255).astype(np.uint8)


def _images(folder: Path, count: int) -> list[np.ndarray]:
    folder.mkdir()
    rng = np.random.default_rng(11)
    images = [rng.integers(0, 256, (32, 24 + 8 * (k % 3)), dtype=np.uint8) for k in range(count)]
    for k, image in enumerate(images):
        iio.imwrite(folder / f"img{k:02}.png", image)
    return images


def _check_outputs(out: Path, images: list[np.ndarray]) -> None:
    for k, image in enumerate(images):
        np.testing.assert_array_equal(iio.imread(out / f"img{k:02}_result.png"), numpy_box_blur(image, 1))
        assert np.abs(iio.imread(out / f"img{k:02}_scaled.png").astype(int) - _scaled(image)).max() <= 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # imageio's plugins, trying the broken file
def test_batch_on_a_local_cluster_of_two_worker_processes(tmp_path, capsys, monkeypatch):
    doc = _document(tmp_path)
    images = _images(tmp_path / "in", 40)
    (tmp_path / "in" / "broken.png").write_bytes(b"not a png at all")
    # The workers get an empty compile cache of their own: anything they compiled would land there.
    worker_cache = tmp_path / "worker-cache"
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path / "client-cache"))
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                     env={"PIXELWEAVE_CACHE_DIR": str(worker_cache)}) as cluster,  # fmt: skip
        Client(cluster) as client,
    ):
        status = main(["batch", str(doc), "--input", f"input={tmp_path}/in/*.png", "--param", f"gain={GAIN}",
                       "--output-dir", str(tmp_path / "out"), "--dask", cluster.scheduler_address])  # fmt: skip
        on_workers = client.run(compile_statistics)
        worker_caches = client.run(cache_directory)
    captured = capsys.readouterr()
    assert status == 1, captured.err
    assert "processed 40 of 41 files" in captured.out
    assert "on 2 Dask workers" in captured.out and "0 compiles on the workers" in captured.out
    assert f"pixelweave: skipped {tmp_path / 'in' / 'broken.png'}: node `input`: cannot read image" in captured.err
    assert captured.err.rstrip().endswith("pixelweave: error: 1 of 41 files could not be processed")
    _check_outputs(tmp_path / "out", images)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"img{k:02}_{o}.png" for k in range(40) for o in ("result", "scaled")
    )
    # Nothing was compiled on the workers: the shipped object code was linked, once per worker.
    assert len(on_workers) == 2
    for stats in on_workers.values():
        assert stats["pipelines_compiled"] == 0 and stats["objects_compiled"] == 0, stats
        assert stats["native_code_loaded"] <= 1
    assert sum(s["native_code_loaded"] for s in on_workers.values()) >= 1
    assert set(worker_caches.values()) == {worker_cache}  # a cold cache: the runtime's object code was shipped too
    assert not list(worker_cache.rglob("*.o"))


_attempts: collections.Counter[str] = collections.Counter()
_attempts_lock = threading.Lock()


def _flaky(job, name, data):
    """run_batch_file on a worker that loses its disk once per file; img05 never recovers.
    (Module level, so the in-process workers unpickle it by reference and share _attempts.)"""
    with _attempts_lock:
        _attempts[Path(name).name] += 1
        first = _attempts[Path(name).name] == 1
    if first or name.endswith("img05.png"):
        raise OSError(f"scratch disk lost while processing {Path(name).name}")
    return run_batch_file(job, name, data)


def test_failed_tasks_are_retried_and_a_file_that_keeps_failing_is_skipped(tmp_path):
    doc = _document(tmp_path)
    images = _images(tmp_path / "in", 6)
    files = sorted((tmp_path / "in").glob("*.png"))
    built = open_document(doc)
    example = built.read_input("input", files[0])
    job = prepare_batch_job(built, "input", {}, {"gain": GAIN}, example)
    _attempts.clear()
    written: dict[Path, dict[str, bytes]] = {}
    out = tmp_path / "out"
    out.mkdir()

    def write(f, result):
        written[f] = result.outputs
        for node_id, data in result.outputs.items():
            (out / f"{f.stem}_{node_id}.png").write_bytes(data)

    advanced: list[str] = []
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        report = run_on_cluster(client, job, files, write, advanced.append, retries=2, task=_flaky)
    assert sorted(advanced) == sorted(f.name for f in files)
    assert _attempts == {**{f"img{k:02}.png": 2 for k in range(5)}, "img05.png": 3}
    assert report.skipped == [
        (files[5], "failed on the cluster after 2 retries: OSError: scratch disk lost while processing img05.png")
    ]
    assert set(written) == set(files[:5])
    _check_outputs(out, images[:5])


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, capsys, monkeypatch):
    doc = _document(tmp_path)
    _images(tmp_path / "in", 2)
    monkeypatch.setattr(dask_batch, "CONNECT_TIMEOUT_S", 1)
    status = main(["batch", str(doc), "--input", f"input={tmp_path}/in/*.png", "--output-dir", str(tmp_path / "out"),
                   "--dask", "tcp://127.0.0.1:9"])  # fmt: skip
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("pixelweave: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9"), err
    assert "Traceback" not in err


def test_dask_local_starts_a_cluster_of_its_own(tmp_path, capsys):
    doc = _document(tmp_path)
    images = _images(tmp_path / "in", 3)
    status = main(["batch", str(doc), "--input", f"input={tmp_path}/in/*.png", "--param", f"gain={GAIN}",
                   "--output-dir", str(tmp_path / "out"), "--dask", "local", "--jobs", "1"])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "processed 3 of 3 files" in captured.out
    assert "on 1 Dask worker (local); compiled once here, 0 compiles on the workers" in captured.out
    _check_outputs(tmp_path / "out", images)


def test_a_cluster_without_workers_is_a_clear_error(tmp_path, capsys, monkeypatch):
    doc = _document(tmp_path)
    _images(tmp_path / "in", 2)
    monkeypatch.setattr(dask_batch, "CONNECT_TIMEOUT_S", 1)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        status = main(["batch", str(doc), "--input", f"input={tmp_path}/in/*.png", "--output-dir",
                       str(tmp_path / "out"), "--dask", cluster.scheduler_address])  # fmt: skip
    assert status == 1
    assert capsys.readouterr().err == "pixelweave: error: the Dask cluster has no worker (waited 1 s for one)\n"


def test_the_reference_evaluator_is_not_shipped(tmp_path, capsys):
    doc = _document(tmp_path)
    _images(tmp_path / "in", 1)
    status = main(["batch", str(doc), "--input", f"input={tmp_path}/in/*.png", "--output-dir", str(tmp_path / "out"),
                   "--dask", "local", "--target", "reference"])  # fmt: skip
    assert status == 2
    assert "--target reference cannot be used with it" in capsys.readouterr().err
