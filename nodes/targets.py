"""The compile targets the editor offers: the host CPU and each usable OpenCL device.

A device is usable once a trivial kernel builds and runs on it (the engine's probe,
engine/runtime/opencl_device.py): an installed platform may list devices that build
nothing, and those are left out. The listing is made once per process (probing creates
an OpenCL context per device)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pixelweave.engine.errors import CompileError, PixelweaveError


@dataclass(frozen=True)
class TargetChoice:
    """One entry of the target selector: what it says, the compile target ("host" or
    "opencl") and for OpenCL the device as "platform:device"."""

    label: str
    target: str
    device: str | None = None


HOST_CHOICE = TargetChoice("Host CPU", "host")


@functools.cache
def opencl_choices() -> tuple[TargetChoice, ...]:
    """Every usable OpenCL device, in the order OpenCL lists them (none without pyopencl or
    an OpenCL driver)."""
    try:
        from pixelweave.engine.runtime.opencl_device import list_devices, select_device

        listed = list_devices()
    except (PixelweaveError, ImportError):
        return ()
    found = []
    for key, platform, device in listed:
        try:
            select_device(key)
        except CompileError:
            continue
        found.append(TargetChoice(f"OpenCL {key}: {device} ({platform})", "opencl", key))
    return tuple(found)


def target_choices() -> list[TargetChoice]:
    """The host CPU first, then each usable OpenCL device."""
    return [HOST_CHOICE, *opencl_choices()]
