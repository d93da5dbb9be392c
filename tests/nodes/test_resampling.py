"""Resampling nodes against OpenCV and NumPy, compiled and through the reference evaluator."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import pytest
from pixelweave.nodes.errors import NodeError
from pixelweave.nodes.graph import NodeSpec, build_graph
from pixelweave.nodes.run import GraphRunner

import pixelweave as pw
from tests.nodes.harness import assert_same, run_node, run_node_once

F32 = np.float32


@pytest.fixture
def gray(camera):
    return camera[:200, :240]


@pytest.fixture
def colour(astronaut_planar):
    return astronaut_planar[:, :200, :240]


def interleaved(planar: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(planar, 0, -1))


def planar(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(image, -1, 0))


# ----------------------------------------------------------------------------- NumPy pyramids
# Written independently of the nodes: plain array slicing over padded arrays.


def pad(a: np.ndarray, n: int | tuple[int, int], mode: str = "edge") -> np.ndarray:
    """Pads the last two axes (y, x)."""
    return np.pad(a, [(0, 0)] * (a.ndim - 2) + [(n, n), (n, n)] if isinstance(n, int) else n, mode=mode)


def down_axis(a: np.ndarray, axis: int) -> np.ndarray:
    """[1 3 3 1]/8 at 2i-1 .. 2i+2 along an axis padded by one in front and two behind."""
    n = (a.shape[axis] - 3 + 1) // 2  # outputs whose four taps lie inside
    t = [np.take(a, np.arange(n) * 2 + o, axis=axis) for o in range(4)]
    return (t[0] + F32(3) * (t[1] + t[2]) + t[3]) / F32(8)


def downsample_np(a: np.ndarray, mode: str = "edge") -> np.ndarray:
    """Downsample2x with a boundary condition on this level (odd sizes round up)."""
    h, w = a.shape[-2:]
    p = pad(a, [(0, 0)] * (a.ndim - 2) + [(1, 2 + h % 2), (1, 2 + w % 2)], mode)
    return down_axis(down_axis(p, -1), -2)[..., : (h + 1) // 2, : (w + 1) // 2]


def up_axis(a: np.ndarray, axis: int) -> np.ndarray:
    """out[2m] = 1/4 a[m-1] + 3/4 a[m], out[2m+1] = 3/4 a[m] + 1/4 a[m+1], along an axis
    padded by one on both sides (the output covers the unpadded part, twice as long)."""
    n = a.shape[axis] - 2
    near = np.repeat(np.take(a, np.arange(1, n + 1), axis=axis), 2, axis=axis)
    far_index = np.arange(2 * n) // 2 + 2 * (np.arange(2 * n) % 2)  # padded m - 1 or m + 1
    far = np.take(a, far_index, axis=axis)
    return F32(0.25) * far + F32(0.75) * near


def upsample_np(a: np.ndarray, mode: str = "edge") -> np.ndarray:
    return up_axis(up_axis(pad(a, 1, mode), -1), -2)


def gaussian_np(a: np.ndarray, level: int, mode: str = "edge") -> list[np.ndarray]:
    levels = [a]
    for _ in range(level):
        levels.append(downsample_np(levels[-1], mode))
    return levels


def to_unit(a: np.ndarray) -> np.ndarray:
    return a.astype(F32) * F32(1 / 255) if a.dtype == np.uint8 else a.astype(F32)


# ----------------------------------------------------------------------------- down/up 2x


@pytest.mark.parametrize(("boundary", "mode"), [("clamp", "edge"), ("mirror_interior", "reflect")])
def test_downsample2x_float(colour, boundary, mode):
    image = to_unit(colour[:, :199, :239])  # odd sizes round up
    out = run_node_once("downsample2x", {"image": image}, {"boundary": boundary})
    assert out.shape == (3, 100, 120)
    np.testing.assert_allclose(out, downsample_np(image, mode), atol=1e-6)


def test_downsample2x_u8_rounds(gray):
    out = run_node_once("downsample2x", {"image": gray})
    p = pad(gray.astype(np.int64), [(1, 2), (1, 2)])
    k = np.array([1, 3, 3, 1])
    sums = sum(k[i] * k[j] * p[i : i + 200 : 2, j : j + 240 : 2] for i in range(4) for j in range(4))
    np.testing.assert_array_equal(out, (sums + 32) // 64)


def test_upsample2x(colour, gray):
    image = to_unit(colour)
    out = run_node_once("upsample2x", {"image": image})
    assert out.shape == (3, 400, 480)
    np.testing.assert_allclose(out, upsample_np(image), atol=1e-6)
    out = run_node_once("upsample2x", {"image": gray[:50, :60]}, {"boundary": "mirror"})
    p = pad(gray[:50, :60].astype(np.int64), 1, "symmetric")
    near, far_x = np.repeat(p[:, 1:-1], 2, axis=1), p[:, np.arange(120) // 2 + 2 * (np.arange(120) % 2)]
    across = far_x + 3 * near
    near, far_y = np.repeat(across[1:-1], 2, axis=0), across[np.arange(100) // 2 + 2 * (np.arange(100) % 2)]
    np.testing.assert_array_equal(out, (far_y + 3 * near + 8) // 16)


# ----------------------------------------------------------------------------- resize

OPENCV = {"nearest": cv2.INTER_NEAREST_EXACT, "bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC}


@pytest.mark.parametrize("method", ["bilinear", "bicubic"])
@pytest.mark.parametrize(("width", "height"), [(97, 131), (333, 250)])
def test_resize_float_matches_opencv(colour, method, width, height):
    image = to_unit(colour)
    out = run_node_once("resize", {"image": image}, {"width": width, "height": height, "method": method})
    expected = cv2.resize(interleaved(image), (width, height), interpolation=OPENCV[method])
    np.testing.assert_allclose(out, planar(expected), atol=2e-5)


@pytest.mark.parametrize("method", ["bilinear", "bicubic"])
def test_resize_u8_matches_opencv(gray, method):
    out = run_node_once("resize", {"image": gray}, {"width": 150, "height": 310, "method": method})
    expected = cv2.resize(gray, (150, 310), interpolation=OPENCV[method])
    # OpenCV interpolates u8 in fixed point: one level apart at most
    assert np.abs(out.astype(int) - expected).max() <= 1


@pytest.mark.parametrize(("width", "height"), [(80, 100), (97, 131), (480, 333)])
def test_resize_nearest(colour, width, height):
    out = run_node_once("resize", {"image": colour}, {"width": width, "height": height, "method": "nearest"})
    sx = np.minimum(((np.arange(width) + 0.5) * 240 / width).astype(int), 239)
    sy = np.minimum(((np.arange(height) + 0.5) * 200 / height).astype(int), 199)
    np.testing.assert_array_equal(out, colour[:, sy][:, :, sx])
    if height != 333:
        # OpenCV's fixed point rounds exact ties down: (166 + 0.5) * 200 / 333 = 100 becomes row 99
        expected = cv2.resize(interleaved(colour), (width, height), interpolation=cv2.INTER_NEAREST_EXACT)
        np.testing.assert_array_equal(out, planar(expected))


# ----------------------------------------------------------------------------- geometry


def test_crop(colour):
    out = run_node_once("crop", {"image": colour}, {"x": 30, "y": 20, "width": 100, "height": 90})
    np.testing.assert_array_equal(out, colour[:, 20:110, 30:130])


def test_crop_outside_the_image_is_a_bounds_error(gray):
    with pytest.raises(pw.RuntimeFailure, match="input_image` is read at x = 299, beyond its maximum 239"):
        run_node_once("crop", {"image": gray}, {"x": 200, "y": 0, "width": 100, "height": 50})


@pytest.mark.parametrize(
    ("boundary", "mode"),
    [("clamp", "edge"), ("wrap", "wrap"), ("mirror", "symmetric"), ("mirror_interior", "reflect")],
)
def test_pad(colour, boundary, mode):
    params = {"left": 5, "right": 7, "top": 3, "bottom": 11, "boundary": boundary}
    out = run_node_once("pad", {"image": colour}, params)
    np.testing.assert_array_equal(out, np.pad(colour, [(0, 0), (3, 11), (5, 7)], mode=mode))


def test_pad_constant(gray):
    params = {"left": 4, "right": 0, "top": 0, "bottom": 6, "boundary": "constant", "fill": 0.5}
    out = run_node_once("pad", {"image": gray}, params)
    np.testing.assert_array_equal(out, np.pad(gray, [(0, 6), (4, 0)], constant_values=128))


@pytest.mark.parametrize(("direction", "axes"), [("horizontal", (2,)), ("vertical", (1,)), ("both", (1, 2))])
def test_flip(colour, direction, axes):
    out = run_node_once("flip", {"image": colour}, {"direction": direction})
    np.testing.assert_array_equal(out, np.flip(colour, axes))


@pytest.mark.parametrize("angle", ["90", "180", "270"])
def test_rotate90(colour, gray, angle):
    turns = int(angle) // 90
    out = run_node_once("rotate90", {"image": colour}, {"angle": angle})
    np.testing.assert_array_equal(out, np.rot90(colour, turns, axes=(1, 2)))
    out = run_node_once("rotate90", {"image": gray}, {"angle": angle})
    np.testing.assert_array_equal(out, np.rot90(gray, turns))


# ----------------------------------------------------------------------------- pyramids


def test_gaussian_pyramid_level(colour, gray):
    image = to_unit(colour[:, :198, :238])
    out = run_node_once("gaussian_pyramid_level", {"image": image}, {"level": 3})
    assert out.shape == (3, 25, 30)
    np.testing.assert_allclose(out, gaussian_np(image, 3)[-1], atol=1e-6)
    # integer images: computed in float, rounded once
    out = run_node_once("gaussian_pyramid_level", {"image": gray}, {"level": 2, "boundary": "mirror"})
    expected = gaussian_np(to_unit(gray), 2, "symmetric")[-1] * 255
    assert out.dtype == np.uint8 and np.abs(out - expected).max() <= 0.5 + 1e-3
    out = run_node_once("gaussian_pyramid_level", {"image": gray}, {"level": 0})
    np.testing.assert_array_equal(out, gray)


def test_laplacian_pyramid_level(gray):
    out = run_node_once("laplacian_pyramid_level", {"image": gray}, {"level": 1})
    levels = gaussian_np(to_unit(gray), 2)
    assert out.dtype == np.float32 and out.shape == (100, 120)
    np.testing.assert_allclose(out, levels[1] - upsample_np(levels[2]), atol=1e-6)


def run_graph(specs: list[NodeSpec], images: dict[str, np.ndarray]) -> np.ndarray:
    runner = GraphRunner(build_graph(specs))
    compiled = runner.run(images)["out"]
    assert_same(compiled, runner.run(images, target="reference")["out"])
    return compiled


def pyramid_specs(levels: int, boundary: str, element: str, layout: str) -> list[NodeSpec]:
    """Laplacian levels 0 .. levels-1 and the Gaussian residual, collapsed again."""
    specs = [NodeSpec("in", "image_input", {"element": element, "layout": layout})]
    links = {}
    for j in range(levels):
        specs.append(
            NodeSpec(f"l{j}", "laplacian_pyramid_level", {"level": j, "boundary": boundary}, {"image": ("in", "out")})
        )
        links[f"level{j}"] = (f"l{j}", "out")
    specs.append(
        NodeSpec("g", "gaussian_pyramid_level", {"level": levels, "boundary": boundary}, {"image": ("in", "out")})
    )
    links["residual"] = ("g", "out")
    specs.append(NodeSpec("collapse", "collapse_laplacian_pyramid", {"boundary": boundary}, links))
    specs.append(NodeSpec("out", "output", {"element": "f32"}, {"image": ("collapse", "out")}))
    return specs


def test_collapse_laplacian_pyramid_rebuilds_the_image(colour):
    image = to_unit(colour[:, :198, :238])
    out = run_graph(pyramid_specs(3, "mirror", "f32", "colour"), {"in": image})
    np.testing.assert_allclose(out, image, atol=2e-6)


def test_collapse_of_u8_pyramid_with_fewer_levels(gray):
    out = run_graph(pyramid_specs(2, "clamp", "u8", "gray"), {"in": gray})
    # the u8 residual is rounded: off by at most half a level
    assert np.abs(out * 255 - gray).max() <= 0.5 + 1e-3


def test_collapse_needs_levels_in_order(gray):
    specs = pyramid_specs(2, "clamp", "u8", "gray")
    del specs[-2].inputs["level0"]
    with pytest.raises(NodeError, match="level0 is missing"):
        build_graph(specs)


# ----------------------------------------------------------------------------- local Laplacian


@dataclass
class Grid:
    """Values of a function over a rectangle of the infinite plane: data[..., j, i] is the
    value at (x0 + i, y0 + j). Halide's pyramids live on the infinite plane: only the input
    has a boundary condition, and each level is evaluated wherever the next one reads it."""

    data: np.ndarray
    x0: int
    y0: int

    def down(self) -> Grid:
        # outputs whose taps 2x-1 .. 2x+2 lie inside
        x0, y0 = -((-self.x0 - 1) // 2), -((-self.y0 - 1) // 2)
        a = self.data[..., 2 * y0 - 1 - self.y0 :, 2 * x0 - 1 - self.x0 :]
        return Grid(down_axis(down_axis(a, -1), -2), x0, y0)

    def up(self) -> Grid:
        # outputs in [2 x0 + 1, ...]: reading x0 .. x0 + n - 1 (one pixel of margin each side)
        return Grid(up_axis(up_axis(self.data, -1), -2), 2 * self.x0 + 2, 2 * self.y0 + 2)

    def window(self, x0: int, y0: int, w: int, h: int) -> np.ndarray:
        assert x0 >= self.x0 and y0 >= self.y0, "the grid does not cover the window"
        out = self.data[..., y0 - self.y0 : y0 - self.y0 + h, x0 - self.x0 : x0 - self.x0 + w]
        assert out.shape[-2:] == (h, w), "the grid does not cover the window"
        return out

    def combine(self, other: Grid, fn) -> Grid:
        x0, y0 = max(self.x0, other.x0), max(self.y0, other.y0)
        x1 = min(self.x0 + self.data.shape[-1], other.x0 + other.data.shape[-1])
        y1 = min(self.y0 + self.data.shape[-2], other.y0 + other.data.shape[-2])
        w, h = x1 - x0, y1 - y0
        return Grid(fn(self.window(x0, y0, w, h), other.window(x0, y0, w, h)), x0, y0)


def local_laplacian_np(image: np.ndarray, levels: int, k_levels: int, alpha: float, beta: float) -> np.ndarray:
    """Halide's apps/local_laplacian in NumPy (float32), on planar colour or gray in [0, 1]."""
    margin = 2 ** (levels + 1) + 4  # enough for every level's reads (Grid.window checks)
    floating = pad(to_unit(image), margin)
    if image.ndim == 3:
        gray = F32(0.299) * floating[0] + F32(0.587) * floating[1] + F32(0.114) * floating[2]
    else:
        gray = floating
    steps = k_levels - 1
    i = np.arange(-256 * steps, 256 * steps + 1)
    fx = i.astype(F32) / F32(256)
    remap = F32(alpha / steps) * fx * np.exp(-fx * fx / F32(2))
    index = np.clip((gray * F32(steps) * F32(256)).astype(np.int64), 0, 256 * steps)
    processed = []
    for k in range(k_levels):
        ref = F32(k) * F32(1 / steps)
        processed.append(F32(beta) * (gray - ref) + ref + remap[index - 256 * k + 256 * steps])
    g_pyr = [Grid(np.stack(processed), -margin, -margin)]
    in_pyr = [Grid(gray, -margin, -margin)]
    for _ in range(1, levels):
        g_pyr.append(g_pyr[-1].down())
        in_pyr.append(in_pyr[-1].down())
    result = None
    for j in reversed(range(levels)):
        lap = g_pyr[j] if j == levels - 1 else g_pyr[j].combine(g_pyr[j + 1].up(), lambda a, b: a - b)

        def blend(g, lp):
            level = g * F32(steps)
            li = np.clip(level.astype(np.int64), 0, steps - 1)
            lf = level - li.astype(F32)
            lo = np.take_along_axis(lp, li[None], 0)[0]
            hi = np.take_along_axis(lp, li[None] + 1, 0)[0]
            return (F32(1) - lf) * lo + lf * hi

        out_lap = in_pyr[j].combine(lap, blend)
        result = out_lap if result is None else result.up().combine(out_lap, lambda a, b: a + b)
    h, w = image.shape[-2:]
    out = result.window(0, 0, w, h)
    if image.ndim == 3:
        eps = F32(0.01)
        fl, gr = floating[:, margin:-margin, margin:-margin], gray[margin:-margin, margin:-margin]
        out = out * (fl + eps) / (gr + eps)
    return np.clip(out, 0, 1)


def assert_close_but_for_lut_steps(out: np.ndarray, expected: np.ndarray, alpha: float, k_levels: int) -> None:
    """Equal up to float rounding, except that the remapping curve is a table indexed by
    int(gray * (K - 1) * 256): a last-bit difference in the luma (a fused multiply-add) can
    pick the neighbouring entry, one table step apart, on a few pixels."""
    step = abs(alpha) / (k_levels - 1) / 256
    diff = np.abs(out - expected)
    assert diff.max() <= 2 * step + 1e-4
    assert np.mean(diff > 1e-4) < 1e-3


@pytest.mark.parametrize(
    ("crop", "params"),
    [
        ((slice(None), slice(0, 200), slice(0, 240)), {"levels": 4, "intensity_levels": 6, "alpha": 2.0, "beta": 0.8}),
        ((slice(None), slice(100, 164), slice(200, 280)), {}),  # Halide's defaults: J = 8, K = 8, alpha = beta = 1
    ],
)
def test_local_laplacian_colour(astronaut_planar, crop, params):
    image = astronaut_planar[crop]
    ((out, reference),) = run_node("local_laplacian", {"image": image}, params).values()
    p = {"levels": 8, "intensity_levels": 8, "alpha": 1.0, "beta": 1.0, **params}
    assert_close_but_for_lut_steps(out, reference, p["alpha"], p["intensity_levels"])
    expected = local_laplacian_np(image, p["levels"], p["intensity_levels"], p["alpha"], p["beta"])
    assert out.dtype == np.float32 and out.shape == image.shape
    assert_close_but_for_lut_steps(out, expected, p["alpha"], p["intensity_levels"])
    assert np.abs(out - to_unit(image)).mean() > 0.005  # it did change the image


def test_local_laplacian_gray(gray):
    params = {"levels": 5, "intensity_levels": 4, "alpha": 3.0, "beta": 1.0}
    ((out, reference),) = run_node("local_laplacian", {"image": gray}, params).values()
    assert_close_but_for_lut_steps(out, reference, 3.0, 4)
    assert_close_but_for_lut_steps(out, local_laplacian_np(gray, 5, 4, 3.0, 1.0), 3.0, 4)
