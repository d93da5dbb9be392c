"""Differential verification of a lifted C function: the original compiled with `cc -O2` and
called through ctypes, the lifted pipeline compiled by Pixelweave, both run on the same random
buffers (random sizes, random row strides with padding, random parameter values), and every
byte of every buffer, and the returned value, compared exactly.

Parameter ranges: extents (names in loop bounds) 1..20, other integers 0..255, floats 0..1,
row strides from the footprint plus random padding; a comment `// lift: NAME in LO..HI` in
the file sets a range.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pixelweave.nodes.lift import symbolic as S
from pixelweave.nodes.lift.c_lift import CLift
from pixelweave.nodes.lift.regions import ELEM_BYTES, footprint

CTYPES = {
    "i8": ctypes.c_int8,
    "u8": ctypes.c_uint8,
    "i16": ctypes.c_int16,
    "u16": ctypes.c_uint16,
    "i32": ctypes.c_int32,
    "u32": ctypes.c_uint32,
    "i64": ctypes.c_int64,
    "u64": ctypes.c_uint64,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
}
_LIBRARIES: dict[tuple, ctypes.CDLL] = {}


@dataclass
class Differential:
    """The outcome of differential testing."""

    trials: int
    passed: int
    failure: str | None

    @property
    def held(self) -> bool:
        return self.failure is None and self.passed == self.trials and self.trials > 0


def compile_original(path: str | Path, opt: str = "-O2") -> ctypes.CDLL:
    """The C file as a shared library, built with the system compiler (cached per content)."""
    path = Path(path)
    text = path.read_bytes()
    key = (str(path), hashlib.sha256(text).hexdigest(), opt)
    if key in _LIBRARIES:
        return _LIBRARIES[key]
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("differential verification needs a C compiler (`cc`)")
    out = Path(tempfile.mkdtemp(prefix="pw_lift_")) / f"{path.stem}.so"
    done = subprocess.run(
        [cc, opt, "-shared", "-fPIC", "-o", str(out), str(path)], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"cc failed on {path}: {done.stderr.strip()[:400]}")
    lib = ctypes.CDLL(str(out))
    _LIBRARIES[key] = lib
    return lib


def random_case(lift: CLift, rng: np.random.Generator, ranges: dict[str, tuple[float, float]]):
    """(scalars, buffers) for one trial: parameter values, then buffers sized from the footprint."""
    lifted = lift.lifted
    scalars: dict[str, int | float] = {}
    strides = {b.stride[0] for b in lifted.buffers.values() if b.stride is not None}
    for name, s in lifted.scalars.items():
        if name in ranges:
            lo, hi = ranges[name]
            scalars[name] = int(rng.integers(int(lo), int(hi) + 1)) if S.is_int(s.type) else float(rng.uniform(lo, hi))
        elif name in strides and s.role == "stride":
            scalars[name] = 0  # chosen from the footprints
        elif not S.is_int(s.type):
            scalars[name] = float(rng.uniform(0, 1))
        elif s.role == "extent":
            scalars[name] = int(rng.integers(1, 41))
        else:
            tr = S.type_range(s.type)
            scalars[name] = int(rng.integers(max(tr[0], 0), min(tr[1], 255) + 1))
    return scalars, allocate(lift, rng, scalars, ranges)


def allocate(
    lift: CLift, rng: np.random.Generator, scalars: dict[str, int | float], ranges: dict[str, tuple[float, float]]
) -> dict[str, np.ndarray]:
    """Random buffers for given parameter values, sized from the footprints; pure row-stride
    parameters (in `scalars`) are set here to the widest row they serve plus random padding."""
    lifted = lift.lifted
    strides = {b.stride[0] for b in lifted.buffers.values() if b.stride is not None}
    boxes = {
        name: footprint(lifted, name, scalars)
        for name in lifted.buffers
        if lifted.buffers[name].kind in ("input", "output")
    }
    for name, box in boxes.items():
        if box is not None and (box[0][0] < 0 or box[1][0] < 0):
            raise ValueError(f"`{name}` is accessed before its start (row {box[0][0]}, column {box[1][0]})")
    # pure row strides: the widest row any buffer using them needs, plus padding
    for name in strides:
        if lifted.scalars[name].role != "stride" or name in ranges:
            continue
        need = 1
        unit_all = 1
        for bname, b in lifted.buffers.items():
            if b.stride is None or b.stride[0] != name or boxes.get(bname) is None:
                continue
            size = ELEM_BYTES[b.elem]
            unit = b.stride[1]
            lcm = size * unit // math.gcd(size, unit)
            unit_all = unit_all * lcm // math.gcd(unit_all, lcm)
            need = max(need, -(-(boxes[bname][1][1] + 1) * size // unit))
        step = max(1, unit_all // min(b.stride[1] for b in lifted.buffers.values() if b.stride and b.stride[0] == name))
        need = -(-need // step) * step
        scalars[name] = need + step * int(rng.integers(0, 4))
    buffers: dict[str, np.ndarray] = {}
    for pname, kind in lifted.params:
        if kind != "pointer":
            continue
        b = lifted.buffers[pname]
        box = boxes.get(pname)
        size = ELEM_BYTES[b.elem]
        if box is None:
            nbytes = size
        elif b.stride is None:
            nbytes = (box[1][1] + 1) * size
        else:
            stride_bytes = int(scalars[b.stride[0]]) * b.stride[1]
            nbytes = (box[0][1] + 1) * stride_bytes
            nbytes = max(nbytes, (box[1][1] + 1) * size)
        if S.is_int(b.elem):
            data = rng.integers(0, 256, nbytes, dtype=np.uint8)
        else:
            n = nbytes // size
            data = rng.uniform(0, 1, n).astype(np.float32 if b.elem == "f32" else np.float64).view(np.uint8)
        buffers[pname] = data
    return buffers


def call_original(lib: ctypes.CDLL, lift: CLift, scalars: dict, buffers: dict[str, np.ndarray]):
    lifted = lift.lifted
    fn = getattr(lib, lifted.function)
    args = []
    argtypes = []
    for name, kind in lifted.params:
        if kind == "pointer":
            args.append(ctypes.c_void_p(buffers[name].ctypes.data))
            argtypes.append(ctypes.c_void_p)
        else:
            ct = CTYPES[lifted.scalars[name].type]
            args.append(ct(scalars[name]))
            argtypes.append(ct)
    fn.argtypes = argtypes
    fn.restype = CTYPES[lifted.result_type] if lifted.result_type else None
    return fn(*args)


def differential(lift: CLift, trials: int = 8, seed: int = 0) -> Differential:
    """Run the original and the lifted pipeline on `trials` random cases and compare bits."""
    lib = compile_original(lift.lifted.file)
    ranges = lift.lifted.ranges
    rng = np.random.default_rng(seed)
    passed = 0
    for trial in range(trials):
        scalars, buffers = random_case(lift, rng, ranges)
        theirs = {k: v.copy() for k, v in buffers.items()}
        ours = {k: v.copy() for k, v in buffers.items()}
        expected = call_original(lib, lift, scalars, theirs)
        got = lift.engine.run(ours, scalars)
        for name in buffers:
            if not np.array_equal(theirs[name], ours[name]):
                bad = int(np.flatnonzero(theirs[name] != ours[name])[0])
                return Differential(
                    trials,
                    passed,
                    f"trial {trial} ({_describe(scalars)}): `{name}` differs first at "
                    f"byte {bad}: C wrote {theirs[name][bad]}, lifted {ours[name][bad]}",
                )
        if lift.lifted.result_type is not None and not _same(expected, got):
            return Differential(
                trials, passed, f"trial {trial} ({_describe(scalars)}): returned {got}, C returned {expected}"
            )
        passed += 1
    return Differential(trials, passed, None)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes() or (math.isnan(a) and math.isnan(b))
    return int(a) == int(b)


def _describe(scalars: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in scalars.items())
