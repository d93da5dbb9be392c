"""Python prototypes with explicit loops lift to engine code that computes what CPython does
on the same arguments (tests/lift/prototypes.py: compositing, Mandelbrot, a two-stage blur,
Harris), in float64 and in the float32 approximation mode."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from pixelweave.app.cli import main
from pixelweave.nodes.lift.errors import LiftError
from pixelweave.nodes.lift.python_frontend import check_python, lift_python

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("lift_prototypes", HERE / "prototypes.py")
prototypes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prototypes)
EXAMPLES = prototypes.examples(24)


@pytest.mark.parametrize("name", ["composite", "mandelbrot", "blur", "harris"])
def test_prototype_matches_cpython(name: str):
    fn = getattr(prototypes, name)
    lifted = lift_python(fn, EXAMPLES[name])
    check = check_python(lifted, fn, EXAMPLES[name])
    assert check.held, check.detail
    assert lifted.output_dtype == str(np.asarray(fn(*EXAMPLES[name])).dtype)


@pytest.mark.parametrize("name", ["composite", "blur"])
def test_approximation_computes_float64_as_float32(name: str):
    fn = getattr(prototypes, name)
    lifted = lift_python(fn, EXAMPLES[name], approximate=True)
    assert lifted.output_dtype == "float32"
    assert lifted.run(*EXAMPLES[name]).dtype == np.float32
    assert check_python(lifted, fn, EXAMPLES[name]).held


def test_uint8_arithmetic_follows_numpy_promotion():
    def brighten(img):
        h, w = img.shape
        out = np.zeros((h, w), dtype=np.uint8)
        for y in range(h):
            for x in range(w):
                out[y, x] = img[y, x] + 100  # uint8 + Python int stays uint8 and wraps
        return out

    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    with np.errstate(over="ignore"):
        check = check_python(lift_python(brighten, (img,)), brighten, (img,))
    assert check.held and check.detail == "exact"


def test_while_loop_is_refused_with_its_line():
    def spin(img):
        out = np.zeros_like(img)
        while True:
            pass
        return out

    with pytest.raises(LiftError, match=r"test_python_lift.py:\d+: cannot lift `while`: data-dependent"):
        lift_python(spin, (np.zeros((4, 4)),))


def test_cli_lifts_a_prototype_file(capsys):
    status = main(["lift", str(HERE / "prototypes.py"), "--function", "blur"])
    out = capsys.readouterr().out
    assert status == 0
    assert "checked against CPython on the file's example arguments: held" in out


def test_store_inside_if_and_carried_loop_are_refused():
    def masked(img):
        h, w = img.shape
        out = np.zeros((h, w))
        for y in range(h):
            for x in range(w):
                if img[y, x] > 0.5:
                    out[y, x] = 1.0
        return out

    def running(img):
        h, w = img.shape
        out = np.zeros((h, w))
        for y in range(h):
            total = 0.0
            for k in range(w):
                total += img[y, k]
            for x in range(w):
                out[y, x] = total
        return out

    img = np.zeros((4, 4))
    with pytest.raises(LiftError, match="store into `out` inside an if"):
        lift_python(masked, (img,))
    with pytest.raises(LiftError, match="variable `total` carried across this loop"):
        lift_python(running, (img,))
