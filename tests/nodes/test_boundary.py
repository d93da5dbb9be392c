"""The BoundaryCondition node: input -> boundary condition -> a custom expression reading far
outside (with its own boundary "none") -> output, against np.pad then slicing."""

import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.graph import NodeSpec, build_graph
from pixelweave.nodes.run import GraphRunner

import pixelweave as pw

H, W = 200, 240
DX, DY = -20, 15  # the expression reads a[x-20, y+15]
PAD = 40
NUMPY_MODES = {
    "clamp": "edge",
    "constant": "constant",
    "wrap": "wrap",
    "mirror": "symmetric",
    "mirror_interior": "reflect",
}


def run_graph(image, mode, constant=0.0, expression=f"a[x{DX:+d}, y{DY:+d}]"):
    element = {np.uint8: "u8", np.uint16: "u16", np.float32: "f32"}[image.dtype.type]
    layout = "colour" if image.ndim == 3 else "gray"
    specs = [
        NodeSpec("src", "image_input", {"element": element, "layout": layout}),
        NodeSpec("edge", "boundary_condition", {"mode": mode, "constant": constant}, {"image": ("src", "out")}),
        NodeSpec(
            "shift",
            "custom_expression",
            {"expression": expression, "boundary": "none", "values": "raw"},
            {"a": ("edge", "out")},
        ),
        NodeSpec("result", "output", {"element": "same"}, {"image": ("shift", "out")}),
    ]
    runner = GraphRunner(build_graph(specs))
    compiled = runner.run({"src": image})["result"]
    reference = runner.run({"src": image}, target="reference")["result"]
    np.testing.assert_array_equal(compiled, reference)
    return compiled


def padded_shift(image, mode, constant=0):
    """image extended by np.pad, read at (x + DX, y + DY)."""
    spatial = [(PAD, PAD), (PAD, PAD)]
    pad = [(0, 0), *spatial] if image.ndim == 3 else spatial
    kwargs = {"constant_values": constant} if mode == "constant" else {}
    big = np.pad(image, pad, mode=NUMPY_MODES[mode], **kwargs)
    return big[..., PAD + DY : PAD + DY + H, PAD + DX : PAD + DX + W]


@pytest.mark.parametrize("mode", list(NUMPY_MODES))
def test_modes_match_numpy_pad_gray(camera, mode):
    image = camera[:H, :W]
    out = run_graph(image, mode)
    np.testing.assert_array_equal(out, padded_shift(image, mode))


@pytest.mark.parametrize("mode", ["wrap", "mirror", "mirror_interior"])
def test_modes_match_numpy_pad_colour(astronaut_planar, mode):
    image = astronaut_planar[:, 50 : 50 + H, 60 : 60 + W]
    out = run_graph(image, mode)
    assert out.shape == (3, H, W)
    np.testing.assert_array_equal(out, padded_shift(image, mode))


def test_constant_level_is_normalized(astronaut_planar, camera):
    """The constant is on the image's full scale: 0.5 is 128 in u8 (rounded), 0.5 in f32."""
    out = run_graph(astronaut_planar[:, :H, :W], "constant", 0.5)
    np.testing.assert_array_equal(out, padded_shift(astronaut_planar[:, :H, :W], "constant", 128))
    image = camera[:H, :W].astype(np.float32) / 255
    out = run_graph(image, "constant", 0.25)
    np.testing.assert_array_equal(out, padded_shift(image, "constant", 0.25))


def test_far_reads_wrap_several_times(camera):
    """Wrap and mirror hold arbitrarily far out, not just one image width away."""
    image = camera[:50, :60]
    out = run_graph(image, "wrap", expression="a[x - 500, y + 333]")
    np.testing.assert_array_equal(out, np.roll(image, (-333, 500), axis=(0, 1)))
    out = run_graph(image, "mirror", expression="a[x + 120, y]")  # two widths on: mirrored twice
    np.testing.assert_array_equal(out, image)
    out = run_graph(image, "mirror", expression="a[x + 60, y]")  # one width on: mirrored once
    np.testing.assert_array_equal(out, image[:, ::-1])


def test_without_it_far_reads_fail(camera):
    """The boundary node is what makes the shifted read legal: without it the read fails."""
    specs = [
        NodeSpec("src", "image_input", {"element": "u8", "layout": "gray"}),
        NodeSpec("shift", "custom_expression", {"expression": "a[x-20, y]", "boundary": "none"}, {"a": ("src", "out")}),
        NodeSpec("result", "output", {"element": "same"}, {"image": ("shift", "out")}),
    ]
    runner = GraphRunner(build_graph(specs))
    with pytest.raises(pw.PixelweaveError, match="input `src` is read at x = -20, below its minimum 0"):
        runner.run({"src": camera[:H, :W]})


def test_unknown_mode_is_an_error(camera):
    specs = [
        NodeSpec("src", "image_input", {"element": "u8", "layout": "gray"}),
        NodeSpec("edge", "boundary_condition", {"mode": "none"}, {"image": ("src", "out")}),
    ]
    with pytest.raises(NodeError, match="parameter `mode` is 'none', which is not one of 'clamp'"):
        build_graph(specs)
