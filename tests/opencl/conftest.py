"""The OpenCL tests run on whatever usable device is installed (pocl's CPU device in CI)."""

import pytest


@pytest.fixture(scope="session")
def opencl_device():
    """The device the tests compile for; CI installs pocl so there always is one."""
    from pixelweave.engine.runtime.opencl_device import select_device

    return select_device()
