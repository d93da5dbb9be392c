"""Every runtime test compiles into a private cache directory, never the user's."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_compile_cache(tmp_path_factory):
    old = os.environ.get("PIXELWEAVE_CACHE_DIR")
    os.environ["PIXELWEAVE_CACHE_DIR"] = str(tmp_path_factory.mktemp("pixelweave-cache"))
    yield
    if old is None:
        os.environ.pop("PIXELWEAVE_CACHE_DIR", None)
    else:
        os.environ["PIXELWEAVE_CACHE_DIR"] = old
