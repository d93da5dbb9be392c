"""Addresses are computed with C's signed 32-bit arithmetic, as Halide's OpenCL kernels do
(so the OpenCL compiler sees that neighbouring work-items read neighbouring elements),
while values keep wrapping arithmetic: an int32 sum that overflows in a value still wraps
as in the reference, even where the same expression is also an index."""

import re

import numpy as np
import pytest

import pixelweave as pw
from tests.opencl.helpers import assert_matches_reference

pytestmark = pytest.mark.usefixtures("opencl_device")

x, y, xo, yo, xi, yi = pw.Var("x"), pw.Var("y"), pw.Var("xo"), pw.Var("yo"), pw.Var("xi"), pw.Var("yi")


def _definitions(source: str) -> dict[str, str]:
    """Each temporary's defining expression in the kernel source."""
    return dict(re.findall(r"^\s+\w+ (t_\d+) = (.*);$", source, re.MULTILINE))


def _index_chain(source: str, buffer: str) -> list[str]:
    """The definitions the first index of a scalar load from buffer is computed by."""
    definitions = _definitions(source)
    index = re.search(rf"{buffer}\[(t_\d+)\]", source).group(1)
    chain, todo = [], [index]
    while todo:
        name = todo.pop()
        text = definitions.get(name)
        if text is not None:
            chain.append(text)
            todo += re.findall(r"\bt_\d+\b", text)
    return chain


@pytest.mark.parametrize("sizes", [(16, 8), (37, 21)], ids=str)
def test_indices_are_signed_and_values_wrap(sizes, rng) -> None:
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    offset = pw.Param(pw.Int(32), "offset")
    f = pw.Func("f")
    shifted = x + offset  # an index of input, and part of a value
    f[x, y] = inp[shifted, y + 1] + inp[x, y] * 65537 + shifted * 2147483
    f.gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    w, h = sizes
    data = rng.integers(-(2**31), 2**31, (h + 1, w + 3), dtype=np.int64).astype(np.int32)
    fn = assert_matches_reference(pw.Pipeline(f), list(sizes), {"input": data, "offset": 3})
    source = fn.native.kernel_source
    chain = _index_chain(source, "input_buf")
    assert chain and not any("(uint)" in text for text in chain), chain
    wrapped_products = [t for t in _definitions(source).values() if "65537" in t or "2147483" in t]
    assert wrapped_products and all("(uint)" in t for t in wrapped_products), wrapped_products


def _let_definition(source: str, prefix: str) -> str:
    """The text defining the let whose C name starts with prefix (through a temporary)."""
    let = re.search(rf"^\s+int {prefix}\w* = (\w+);$", source, re.MULTILINE)
    before = source[: let.start()]  # the temporary's definition in the same kernel, the last one above
    return _definitions(before).get(let.group(1), let.group(1))


@pytest.mark.parametrize("sizes", [(16, 8), (37, 21)], ids=str)
def test_a_coordinate_only_addresses_use_is_signed_and_one_in_a_value_wraps(sizes, rng) -> None:
    inp = pw.ImageParam(pw.Int(32), 2, "input")
    f, g = pw.Func("f"), pw.Func("g")
    f[x, y] = inp[x + 1, y] * 3  # f's coordinates only address memory
    g[x, y] = f[x, y] + x * 1000003  # g's x is also a value
    for func in (f, g):
        func.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 4)
    w, h = sizes
    data = rng.integers(-(2**31), 2**31, (h, w + 1), dtype=np.int64).astype(np.int32)
    fn = assert_matches_reference(pw.Pipeline(g), list(sizes), {"input": data})
    source = fn.native.kernel_source
    assert "(uint)" not in _let_definition(source, "f_s0_x_"), source
    assert "(uint)" in _let_definition(source, "g_s0_x_"), source
