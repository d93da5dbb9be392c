"""The Blend node against the W3C Compositing and Blending Level 1 formulas written here in
NumPy, compiled and through the reference evaluator."""

from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError

from tests.nodes.harness import run_node

IMAGES = Path(__file__).resolve().parents[2] / "resources" / "images"
H, W = 200, 240


@pytest.fixture(scope="module")
def layers(astronaut_planar):
    base = astronaut_planar[:, 100 : 100 + H, 150 : 150 + W]
    coffee = iio.imread(IMAGES / "coffee.png")[..., :3]
    blend = np.ascontiguousarray(np.moveaxis(coffee[50 : 50 + H, 100 : 100 + W], -1, 0))
    return base, blend


def run(inputs, params):
    """The compiled result, checked against the reference evaluator. Integer results may
    differ by one level where the compiled code fuses a float multiply-add (FMA) before
    rounding, which the reference evaluator does not."""
    ((compiled, reference),) = run_node("blend", inputs, params).values()
    assert compiled.dtype == reference.dtype and compiled.shape == reference.shape
    if np.issubdtype(compiled.dtype, np.floating):
        np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5)
    else:
        difference = np.abs(compiled.astype(int) - reference.astype(int))
        assert difference.max() <= 1 and (difference == 0).mean() > 0.99
    return compiled


def w3c(mode, cb, cs):
    """B(Cb, Cs) from the W3C recommendation (section 9.2), in float64."""
    if mode == "normal":
        return cs
    if mode == "multiply":
        return cb * cs
    if mode == "screen":
        return cb + cs - cb * cs
    if mode == "overlay":
        return w3c("hard_light", cs, cb)
    if mode == "darken":
        return np.minimum(cb, cs)
    if mode == "lighten":
        return np.maximum(cb, cs)
    if mode == "difference":
        return np.abs(cb - cs)
    if mode == "exclusion":
        return cb + cs - 2 * cb * cs
    if mode == "add":
        return np.minimum(cb + cs, 1)
    if mode == "subtract":
        return np.maximum(cb - cs, 0)
    if mode == "hard_light":
        return np.where(cs <= 0.5, cb * 2 * cs, w3c("screen", cb, 2 * cs - 1))
    if mode == "soft_light":
        d = np.where(cb <= 0.25, ((16 * cb - 12) * cb + 4) * cb, np.sqrt(cb))
        return np.where(cs <= 0.5, cb - (1 - 2 * cs) * cb * (1 - cb), cb + (2 * cs - 1) * (d - cb))
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "colour_dodge":
            return np.where(cb == 0, 0, np.where(cs == 1, 1, np.minimum(1, cb / (1 - cs))))
        if mode == "colour_burn":
            return np.where(cb == 1, 1, np.where(cs == 0, 0, 1 - np.minimum(1, (1 - cb) / cs)))
    raise ValueError(mode)


def expected_u8(mode, base, blend, opacity, mask=None):
    cb, cs = base / 255.0, blend / 255.0
    weight = opacity * (1.0 if mask is None else mask / 255.0)
    out = cb + (w3c(mode, cb, cs) - cb) * weight
    return np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)


MODES = [
    "normal", "multiply", "screen", "overlay", "darken", "lighten", "difference", "exclusion", "add",
    "subtract", "soft_light", "hard_light", "colour_dodge", "colour_burn",
]  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_modes_match_w3c_formulas(layers, mode):
    base, blend = layers
    out = run({"base": base, "blend": blend}, {"mode": mode, "opacity": 0.8})
    expected = expected_u8(mode, base, blend, 0.8)
    difference = np.abs(out.astype(int) - expected)
    assert difference.max() <= 1  # float32 against float64 at a rounding boundary
    assert (difference == 0).mean() > 0.99


@pytest.mark.parametrize("mode", ["colour_dodge", "colour_burn", "soft_light"])
def test_full_opacity_on_extremes(mode):
    """The special cases of dodge and burn (0 and 1 in either layer) at full opacity."""
    levels = np.array([0, 1, 64, 127, 128, 191, 254, 255], dtype=np.uint8)
    base, blend = np.meshgrid(levels, levels)
    out = run({"base": np.ascontiguousarray(base), "blend": np.ascontiguousarray(blend)}, {"mode": mode})
    np.testing.assert_array_equal(out, expected_u8(mode, base, blend, 1.0))


def test_gray_mask_over_colour(layers, camera):
    base, blend = layers
    mask = camera[:H, :W]
    out = run({"base": base, "blend": blend, "mask": mask}, {"mode": "multiply", "opacity": 0.6})
    expected = expected_u8("multiply", base, blend, 0.6, mask[None])
    assert np.abs(out.astype(int) - expected).max() <= 1


def test_float_mask_and_gray_blend_layer(layers, camera):
    """A gray blend layer is used for every channel of a colour base; a float mask is 0..1."""
    base, _ = layers
    gray = camera[:H, :W]
    mask = np.linspace(0, 1, W, dtype=np.float32)[None].repeat(H, 0)
    out = run({"base": base, "blend": gray, "mask": mask}, {"mode": "screen"})
    expected = expected_u8("screen", base, gray[None], 1.0, mask[None] * 255)
    assert np.abs(out.astype(int) - expected).max() <= 1


def test_float_layers_stay_float(layers):
    base, blend = (v.astype(np.float32) / 255 for v in layers)
    out = run({"base": base, "blend": blend}, {"mode": "overlay", "opacity": 0.5})
    assert out.dtype == np.float32
    expected = base + (w3c("overlay", base.astype(float), blend.astype(float)) - base) * 0.5
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_mixed_types_normalize_each_layer(layers):
    """A u8 base with a u16 blend layer: each is normalized by its own full scale."""
    base, blend = layers
    blend16 = blend.astype(np.uint16) * 257  # the same image in u16
    out = run({"base": base, "blend": blend16}, {"mode": "difference"})
    np.testing.assert_array_equal(out, expected_u8("difference", base, blend, 1.0))


def lowbias32_noise(h, w):
    """The documented dissolve hash, written out in NumPy (uint32 arithmetic wraps)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.uint32)
    v = y * np.uint32(65536) + x
    v ^= v >> 16
    v *= np.uint32(0x7FEB352D)
    v ^= v >> 15
    v *= np.uint32(0x846CA68B)
    v ^= v >> 16
    return (v >> 8).astype(np.float64) / 2**24


@pytest.mark.parametrize("opacity", [0.0, 0.3, 1.0])
def test_dissolve_is_deterministic_hash_noise(layers, opacity):
    base, blend = layers
    out = run({"base": base, "blend": blend}, {"mode": "dissolve", "opacity": opacity})
    chosen = lowbias32_noise(H, W) < opacity
    np.testing.assert_array_equal(out, np.where(chosen[None], blend, base))
    # whole pixels, in about the proportion asked for
    assert abs(chosen.mean() - opacity) < 0.01


def test_dissolve_with_mask(layers):
    base, blend = layers
    mask = np.zeros((H, W), np.uint8)
    mask[:, W // 2 :] = 255
    out = run({"base": base, "blend": blend, "mask": mask}, {"mode": "dissolve", "opacity": 0.5})
    chosen = lowbias32_noise(H, W) < 0.5 * (mask / 255)
    np.testing.assert_array_equal(out, np.where(chosen[None], blend, base))
    np.testing.assert_array_equal(out[:, :, : W // 2], base[:, :, : W // 2])


def test_colour_layer_over_gray_base_is_an_error(layers, camera):
    with pytest.raises(NodeError, match="blend layer is colour but the base is gray"):
        run_node("blend", {"base": camera[:H, :W], "blend": layers[1]}, {"mode": "normal"})


def test_opacity_out_of_range_is_an_error(layers):
    # build_graph re-raises ParameterError as a plain NodeError naming the node
    with pytest.raises(NodeError, match=r"node `node`: parameter `opacity` is 1.5, outside its range \[0, 1\]"):
        run_node("blend", {"base": layers[0], "blend": layers[1]}, {"opacity": 1.5})
