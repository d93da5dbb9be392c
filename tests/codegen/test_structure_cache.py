"""The compile cache keyed before lowering: equal structure, equal key; a hit lowers nothing
and runs no LLVM, in this process (memory) and in a new one (disk)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from pixelweave.engine.lower import lowering_count
from pixelweave.engine.runtime.jit import clear_memory_cache

from tests.codegen.structure_programs import blur

REPO = Path(__file__).resolve().parents[2]


def _image() -> np.ndarray:
    return (np.arange(30 * 40, dtype=np.uint16).reshape(30, 40) * 7) % 1000


def test_equal_structure_equal_key_and_params_are_not_part_of_it() -> None:
    a, b = blur("k"), blur("k", gain_default=5.0)  # defined by PROGRAM
    assert a.structural_key() == b.structural_key()
    assert a.structural_key() != blur("k", vector=4).structural_key()  # a schedule change
    assert a.structural_key() != blur("k", offset=1).structural_key()  # an algorithm change
    assert a.structural_key() != blur("other").structural_key()  # names are in the code


def test_a_changed_compiler_source_changes_every_key(monkeypatch, tmp_path) -> None:
    """The disk cache survives upgrades: code from an older compiler must not be found."""
    from pixelweave.engine import structural_key as keys

    before = blur("k").structural_key()
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "pass.py").write_text("A = 1\n")
    monkeypatch.setattr(keys, "ENGINE_ROOT", engine)
    keys.compiler_digest.cache_clear()
    try:
        first = blur("k").structural_key()
        (engine / "pass.py").write_text("A = 2\n")
        keys.compiler_digest.cache_clear()
        second = blur("k").structural_key()
    finally:
        keys.compiler_digest.cache_clear()
    assert len({before, first, second}) == 3


def test_hit_skips_lowering_and_gives_the_same_image() -> None:
    first = blur("memory_hit").compile(level="fast")
    before = lowering_count()
    rebuilt = blur("memory_hit", gain_default=3.0)  # a new pipeline object, same structure
    second = rebuilt.compile(level="fast")
    assert lowering_count() == before
    assert second.from_structure_cache and second.native.cache_hit == "structure-memory"
    assert second.loop_nest_text == first.loop_nest_text
    image = _image()
    expected = rebuilt.realize_reference([36, 26], {"input": image, "gain": 1.5})
    np.testing.assert_array_equal(second([36, 26], {"input": image, "gain": 1.5}), expected)
    # Asking for the lowering afterwards still works (it lowers then).
    assert second.lowering.lowered.name == first.lowering.lowered.name
    assert lowering_count() == before + 1


def test_disk_hit_in_a_new_process() -> None:
    clear_memory_cache()
    blur("disk_hit").compile(level="fast")  # writes the object and the structure record
    child = textwrap.dedent(
        """
        import json
        import numpy as np
        from pixelweave.engine.lower import lowering_count
        from tests.codegen.structure_programs import blur

        fn = blur("disk_hit").compile(level="fast")
        image = (np.arange(30 * 40, dtype=np.uint16).reshape(30, 40) * 7) % 1000
        out = fn([36, 26], {"input": image, "gain": 1.5})
        print(json.dumps({"lowerings": lowering_count(), "hit": fn.native.cache_hit, "sum": int(out.sum())}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        check=True,
        cwd=REPO,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["lowerings"] == 0
    assert report["hit"] == "structure-disk"
    expected = blur("disk_hit").realize_reference([36, 26], {"input": _image(), "gain": 1.5})
    assert report["sum"] == int(expected.sum())


def test_damaged_structure_record_is_a_miss(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIXELWEAVE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    blur("damaged").compile(level="fast")
    records = list(tmp_path.glob("*.structure.json"))
    assert len(records) == 1
    records[0].write_text("{not json")
    clear_memory_cache()
    before = lowering_count()
    fn = blur("damaged").compile(level="fast")
    assert lowering_count() == before + 1 and not fn.from_structure_cache
    assert json.loads(records[0].read_text())["name"] == fn.native.name  # written again
