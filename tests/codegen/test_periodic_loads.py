"""Vector loads whose lanes repeat a pattern (RGBA read for RGB written: inp[4 * (x / 3) + x % 3])
are dense loads of the span of their lanes and one shuffle per residue of the ramp's base,
not gathers: the values of the reference evaluator at output widths with tails, at output
mins of every residue (negative ones included), with inputs that end (or start) exactly at
an inaccessible page, so that a read of one element outside the lanes' span would crash."""

from __future__ import annotations

import ctypes
import mmap

import numpy as np
import pytest

import pixelweave as pw

_PAGE = mmap.PAGESIZE
_TYPES = {np.uint8: pw.UInt(8), np.uint16: pw.UInt(16), np.int32: pw.Int(32), np.float32: pw.Float(32)}


class _Guarded:
    """Three pages, the first and last inaccessible: arrays placed against either guard."""

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, 3 * _PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self.bytes = np.frombuffer(self.memory, dtype=np.uint8)
        address = self.bytes.ctypes.data
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        for page in (0, 2):
            assert libc.mprotect(ctypes.c_void_p(address + page * _PAGE), _PAGE, 0) == 0

    def ending_at_guard(self, values: np.ndarray) -> np.ndarray:
        nbytes = values.nbytes
        view = self.bytes[2 * _PAGE - nbytes : 2 * _PAGE].view(values.dtype)
        view[:] = values
        return view

    def starting_at_guard(self, values: np.ndarray) -> np.ndarray:
        view = self.bytes[_PAGE : _PAGE + values.nbytes].view(values.dtype)
        view[:] = values
        return view


@pytest.fixture(scope="module")
def guarded() -> _Guarded:
    return _Guarded()


def _rgba_to_rgb(x: pw.Var) -> pw.Expr:
    return 4 * (x / 3) + x % 3


def _alpha_of_rgb(x: pw.Var) -> pw.Expr:
    return 4 * ((x - 1) / 3) + 3


def _two_of_five(x: pw.Var) -> pw.Expr:
    return (x * 5) / 2 + 1


def _backwards(x: pw.Var) -> pw.Expr:
    return 400 - 4 * (x / 3) - x % 3


INDICES = {"rgba_to_rgb": _rgba_to_rgb, "alpha_of_rgb": _alpha_of_rgb, "two_of_five": _two_of_five}


def _pipeline(index, dtype, lanes: int) -> tuple[pw.Pipeline, pw.ImageParam]:
    x = pw.Var("x")
    inp = pw.ImageParam(_TYPES[dtype], 1, "inp")
    f = pw.Func("f")
    f[x] = inp[index(x)]
    f.vectorize(x, lanes)
    return pw.Pipeline(f), inp


def _lanes_read(index, first: int, width: int) -> list[int]:
    x = pw.Var("x")
    probe = pw.Func("probe")
    probe[x] = pw.cast(pw.Int(32), index(x))
    return [int(v) for v in pw.Pipeline(probe).realize_reference([width], {}, mins=[first])]


def test_a_rgba_to_rgb_load_is_not_a_gather(tmp_path):
    pipeline, _ = _pipeline(_rgba_to_rgb, np.uint8, 32)
    path = tmp_path / "f.ll"
    pipeline.compile_to_llvm_assembly(str(path))
    ir = path.read_text()
    assert "masked.gather" not in ir
    assert "shufflevector <32 x i8>" in ir


@pytest.mark.parametrize("name", sorted(INDICES))
@pytest.mark.parametrize(("dtype", "lanes"), [(np.uint8, 32), (np.uint16, 16), (np.int32, 8), (np.float32, 16)])
@pytest.mark.parametrize("first", [0, 1, 2, -7])
def test_periodic_reads_match_the_reference_against_a_guard_page(guarded, name, dtype, lanes, first):
    """The input ends exactly at the largest element the lanes read, against an inaccessible
    page (the last output column is the third channel, so that bounds inference asks for no
    more; a few elements more below, where it asks for them); widths leave a shifted last
    vector."""
    index = INDICES[name]
    pipeline, _ = _pipeline(index, dtype, lanes)
    compiled = pipeline.compile(level="full")
    for width in (lanes, 2 * lanes + 5, 3 * lanes + 2):
        width += (2 - (first + width - 1)) % 3
        read = _lanes_read(index, first, width)
        low, high = min(read) - 4, max(read)
        values = (np.arange(high - low + 1) * 37 % 251 + 1).astype(dtype)
        buffer = pw.Buffer(guarded.ending_at_guard(values))
        buffer.set_min([low])
        ours = compiled([width], {"inp": buffer}, mins=[first])
        expected = pipeline.realize_reference([width], {"inp": buffer}, mins=[first])
        np.testing.assert_array_equal(ours, expected)
        np.testing.assert_array_equal(ours, values[np.array(read) - low])


@pytest.mark.parametrize("first", [0, 1, 2])
def test_a_decreasing_pattern_reads_nothing_before_its_first_element(guarded, first):
    pipeline, _ = _pipeline(_backwards, np.uint8, 32)
    compiled = pipeline.compile(level="full")
    for width in (32, 70):
        width += (2 - (first + width - 1)) % 3
        read = _lanes_read(_backwards, first, width)
        low, high = min(read), max(read) + 4
        values = (np.arange(high - low + 1) * 13 % 255).astype(np.uint8)
        buffer = pw.Buffer(guarded.starting_at_guard(values))
        buffer.set_min([low])
        ours = compiled([width], {"inp": buffer}, mins=[first])
        np.testing.assert_array_equal(ours, values[np.array(read) - low])


@pytest.mark.parametrize("lanes", [2, 3, 4])
def test_narrow_vectors_whose_lanes_share_one_element(lanes):
    """inp[x / 4] in vectors of 2 to 4 lanes: a residue's lanes may all read one element (a
    span of one, which is no vector: left to a gather, as valid IR)."""
    pipeline, _ = _pipeline(lambda x: x / 4, np.uint16, lanes)
    values = (np.arange(40) * 7 % 101).astype(np.uint16)
    ours = pipeline.compile(level="full")([23], {"inp": values})
    np.testing.assert_array_equal(ours, pipeline.realize_reference([23], {"inp": values}))
