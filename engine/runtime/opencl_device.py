"""Choosing the OpenCL device that target "opencl" runs on.

Some installed platforms list devices on which nothing builds (the PyPI pocl binary with
an LLVM older than the CPU, say), and the broken one may come first. So a device is usable
only once a trivial kernel has built on it: platforms are tried in order and the first
device that builds wins. `PIXELWEAVE_OPENCL_DEVICE="platform:device"` (indices, as
`list_devices()` prints them) or `select_device("0:1")` names one instead.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from pixelweave.engine.errors import CompileError

DEVICE_ENV = "PIXELWEAVE_OPENCL_DEVICE"

HOW_TO_GET_ONE = (
    "install an OpenCL driver: on Debian or Ubuntu `apt-get install pocl-opencl-icd ocl-icd-libopencl1` "
    "gives a CPU OpenCL device; a GPU vendor's driver gives a GPU device"
)

_PROBE_SOURCE = "__kernel void pw_probe(__global int *out) { out[get_global_id(0)] = (int)get_global_id(0) * 2; }"


@dataclass
class OpenCLDevice:
    """A usable device, its context and queue (shared by every pipeline compiled for it)."""

    platform_index: int
    device_index: int
    platform_name: str
    device_name: str
    device: Any
    context: Any
    queue: Any

    @property
    def label(self) -> str:
        return f"{self.platform_index}:{self.device_index} {self.platform_name} / {self.device_name}"

    @property
    def max_work_group_size(self) -> int:
        return int(self.device.max_work_group_size)

    @property
    def shares_host_memory(self) -> bool:
        """A CPU device: its memory is the host's, so a buffer over host memory
        (CL_MEM_USE_HOST_PTR) needs no copy."""
        import pyopencl as cl

        d = self.device
        return bool(d.type & cl.device_type.CPU) and bool(d.host_unified_memory)

    @property
    def supports_double(self) -> bool:
        return "cl_khr_fp64" in self.device.extensions or self.device.double_fp_config != 0


_lock = threading.Lock()
_chosen: dict[str | None, OpenCLDevice] = {}


def _import_pyopencl() -> Any:
    try:
        import pyopencl
    except ImportError as e:  # pragma: no cover - pyopencl is a dependency
        raise CompileError(f"target 'opencl' needs the pyopencl package (pip install pyopencl), and {e}") from e
    return pyopencl


def _platforms(cl: Any) -> list[Any]:
    try:
        return list(cl.get_platforms())
    except cl.Error:  # the ICD loader finds no platform at all
        return []


def list_devices() -> list[tuple[str, str, str]]:
    """(\"platform:device\", platform name, device name) for every device OpenCL lists,
    usable or not."""
    cl = _import_pyopencl()
    found = []
    for p, platform in enumerate(_platforms(cl)):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        for d, device in enumerate(devices):
            found.append((f"{p}:{d}", platform.name.strip(), device.name.strip()))
    return found


def _probe(cl: Any, device: Any) -> tuple[Any, Any] | str:
    """(context, queue) when a trivial kernel builds and runs on device, else why not."""
    try:
        context = cl.Context([device])
        queue = cl.CommandQueue(context)
        program = cl.Program(context, _PROBE_SOURCE).build()
        import numpy as np

        out = np.zeros(4, np.int32)
        buf = cl.Buffer(context, cl.mem_flags.WRITE_ONLY, out.nbytes)
        program.pw_probe(queue, (4,), None, buf)
        cl.enqueue_copy(queue, out, buf)
        queue.finish()
        if list(out) != [0, 2, 4, 6]:
            return f"the probe kernel computed {list(out)}"
        return context, queue
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return first


def _parse_choice(choice: str) -> tuple[int, int]:
    parts = choice.strip().split(":")
    try:
        if len(parts) == 1:
            return int(parts[0]), 0
        if len(parts) == 2:
            return int(parts[0]), int(parts[1])
    except ValueError:
        pass
    raise CompileError(
        f'OpenCL device {choice!r} is not of the form "platform:device" (indices, e.g. "0:0"); '
        f"set {DEVICE_ENV} or the device option to one of: {_listing()}"
    )


def _listing() -> str:
    devices = list_devices()
    return "; ".join(f"{k} ({p} / {d})" for k, p, d in devices) or "none (no OpenCL device is installed)"


def select_device(choice: str | None = None) -> OpenCLDevice:
    """The device to run on: `choice` ("platform:device"), else $PIXELWEAVE_OPENCL_DEVICE,
    else the first listed device on which a trivial kernel builds. Remembered per choice.
    CompileError saying how to get a device when there is none."""
    if choice is None:
        choice = os.environ.get(DEVICE_ENV) or None
    with _lock:
        hit = _chosen.get(choice)
        if hit is not None:
            return hit
        device = _choose(choice)
        _chosen[choice] = device
        return device


def _choose(choice: str | None) -> OpenCLDevice:
    cl = _import_pyopencl()
    platforms = _platforms(cl)
    if choice is not None:
        p, d = _parse_choice(choice)
        try:
            device = platforms[p].get_devices()[d]
        except (IndexError, cl.Error):
            raise CompileError(f"there is no OpenCL device {choice!r}; the devices are: {_listing()}") from None
        probed = _probe(cl, device)
        if isinstance(probed, str):
            raise CompileError(f"OpenCL device {choice!r} ({device.name.strip()}) cannot build kernels: {probed}")
        return OpenCLDevice(p, d, platforms[p].name.strip(), device.name.strip(), device, *probed)
    failures = []
    for p, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error as e:
            failures.append(f"platform {p} ({platform.name.strip()}): {e}")
            continue
        for d, device in enumerate(devices):
            probed = _probe(cl, device)
            if isinstance(probed, str):
                failures.append(f"{p}:{d} ({device.name.strip()}): {probed}")
                continue
            return OpenCLDevice(p, d, platform.name.strip(), device.name.strip(), device, *probed)
    tried = ("; the devices found could not build a trivial kernel: " + "; ".join(failures)) if failures else ""
    raise CompileError(
        f"target 'opencl' needs an OpenCL device and none is usable here{tried}. To get one, {HOW_TO_GET_ONE}"
    )


def forget_devices() -> None:
    """Drop the remembered choices (tests that change the environment use it)."""
    with _lock:
        _chosen.clear()
