"""Storage computed for an output (a bound() output) that may be the output buffer itself
(`Allocate.output_alias`): the OpenCL host code uses the output's device buffer when the
regions and strides agree (the copy into the output is then skipped) and its own buffer
otherwise. The lowering marks such storage on CPU targets; these tests run that lowered
statement through the OpenCL backend, both ways, against the reference evaluator."""

import numpy as np
import pytest
from pixelweave.engine.lower import lower
from pixelweave.engine.runtime.opencl_host import compile_opencl

import pixelweave as pw

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, c = pw.vars("x y c")


def _bound_output() -> pw.Pipeline:
    inp = pw.ImageParam(pw.Float(32), 3, "input")
    out = pw.Func("out")
    out[x, y, c] = inp[x, y, c] * 2.0 + inp[x, y, 0]
    out.bound(c, 0, 3)
    return pw.Pipeline(out)


@pytest.mark.parametrize("channels", [3, 2], ids=["aliased", "copied"])
def test_storage_that_may_be_the_output_is_its_device_buffer_when_they_agree(channels, rng) -> None:
    """3 channels: the output holds exactly the region computed, so the kernel writes the
    output's device buffer and nothing is copied. 2 channels: the bound() region is larger,
    computed into storage of its own and copied."""
    pipeline = _bound_output()
    lowered = lower(pipeline, "host", name=f"alias_{channels}").lowered
    fn = compile_opencl(lowered)
    assert "is_output" in str(fn.program.host)
    data = rng.random((3, 9, 13), dtype=np.float32)
    for _ in range(2):  # the second call reuses the device buffers
        result = np.zeros((channels, 9, 13), np.float32)
        fn({"input": data}, {"out": result})
        np.testing.assert_array_equal(result, pipeline.realize_reference([13, 9, channels], {"input": data}))
