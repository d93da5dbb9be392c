"""Small documents and independent NumPy results shared by the document, schedule and
command-line tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import imageio.v3 as iio
import numpy as np
from pixelweave.nodes.editing import EditSession

from tests.conftest import IMAGES

HEIGHT, WIDTH = 200, 240


def write_samples(folder: Path) -> dict[str, np.ndarray]:
    """Crops of the bundled photographs written as gray.png and colour.png in folder; returns
    them as the engine reads them: gray (h, w) and planar colour (3, h, w), u8."""
    gray = iio.imread(IMAGES / "camera.png")[100 : 100 + HEIGHT, 150 : 150 + WIDTH]
    colour = iio.imread(IMAGES / "astronaut.png")[50 : 50 + HEIGHT, 120 : 120 + WIDTH, :3]
    iio.imwrite(folder / "gray.png", gray)
    iio.imwrite(folder / "colour.png", colour)
    return {"gray": gray, "colour": np.ascontiguousarray(np.moveaxis(colour, -1, 0))}


def node(node_id: str, type_name: str, params: dict[str, Any], inputs: dict[str, str] | None = None,
         schedule: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    data: dict[str, Any] = {"id": node_id, "type": type_name, "params": params, "position": [0, 0]}
    if inputs:
        data["inputs"] = inputs
    if schedule:
        data["schedule"] = schedule
    return data


def blur_document(sample: str = "gray.png", layout: str = "gray", radius: int = 2,
                  blur_schedule: dict[str, Any] | None = None, out_schedule: dict[str, Any] | None = None
                  ) -> dict[str, Any]:  # fmt: skip
    """input -> box_blur -> output, as JSON data."""
    return {
        "format": "pixelweave.pipeline",
        "version": 1,
        "name": "Box blur",
        "description": "a test document",
        "nodes": [
            node("input", "image_input", {"element": "u8", "layout": layout, "sample": sample}),
            node("blur", "box_blur", {"radius": radius, "boundary": "clamp"}, {"image": "input.out"}, blur_schedule),
            node("result", "output", {"element": "u8", "scale": True}, {"image": "blur.out"}, out_schedule),
        ],
    }


def write_document(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return path


def numpy_box_blur(image: np.ndarray, radius: int) -> np.ndarray:
    """Mean over a (2r+1)^2 square with edge pixels repeated, rounded to nearest (ties up),
    per plane: written independently of the node's code."""
    n = 2 * radius + 1
    pad = [(0, 0)] * (image.ndim - 2) + [(radius, radius), (radius, radius)]
    padded = np.pad(image.astype(np.int64), pad, mode="edge")
    h, w = image.shape[-2:]
    total = np.zeros(image.shape, np.int64)
    for dy in range(n):
        for dx in range(n):
            total += padded[..., dy : dy + h, dx : dx + w]
    return ((total + n * n // 2) // (n * n)).astype(np.uint8)


def sample_document(folder: Path, **schedules: Any):
    """The blur test document (blur_document's keywords) with its samples written to folder,
    its path in folder so the samples are found."""
    from pixelweave.nodes.document import Document

    write_samples(folder)
    doc = Document.from_json(blur_document(**schedules))
    doc.path = folder / "doc.json"
    return doc


# A file of two generators, loaded as node types by the generator-node tests.
GENERATORS = '''
import pixelweave as pw


@pw.generator(name="soften")
class Soften:
    """Blurs a gray u8 image horizontally, then scales it and adds an offset."""

    gain = pw.GeneratorParam(2)
    input = pw.InputBuffer(pw.UInt(8), 2)
    offset = pw.InputScalar(pw.Int(32))
    output = pw.OutputBuffer(pw.UInt(8), 2)

    def generate(g):
        x, y = pw.Var("x"), pw.Var("y")
        clamped = pw.BoundaryConditions.repeat_edge(g.input)
        blur = pw.Func("blur")
        blur[x, y] = (pw.u16(clamped[x - 1, y]) + clamped[x, y] + clamped[x + 1, y]) / 3
        g.output[x, y] = pw.u8(pw.clamp(pw.i32(blur[x, y]) * g.gain + g.offset, 0, 255))
        g.offset.set_estimate(5)
        blur.compute_root()


@pw.generator(name="split_tone")
class SplitTone:
    """Splits a colour image into a weighted gray image and the colour scaled by a float."""

    weights = pw.GeneratorParam("luma")
    work = pw.GeneratorParam(pw.Float(32))
    input = pw.InputBuffer(pw.UInt(8), 3)
    strength = pw.InputScalar(pw.Float(32))
    gray = pw.OutputBuffer(pw.UInt(8), 2)
    scaled = pw.OutputBuffer(pw.UInt(8), 3)

    def generate(g):
        x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
        w = (0.25, 0.625, 0.125) if g.weights == "luma" else (0.25, 0.5, 0.25)
        v = pw.cast(g.work, g.input[x, y, 0]) * w[0] + g.input[x, y, 1] * w[1] + g.input[x, y, 2] * w[2]
        g.gray[x, y] = pw.u8(pw.clamp(v + 0.5, 0, 255))
        g.scaled[x, y, c] = pw.u8(pw.clamp(pw.f32(g.input[x, y, c]) * g.strength, 0, 255))
'''


def numpy_soften(image: np.ndarray, gain: int, offset: int) -> np.ndarray:
    """What the `soften` generator of GENERATORS computes."""
    padded = np.pad(image.astype(np.int64), ((0, 0), (1, 1)), mode="edge")
    blur = (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) // 3
    return np.clip(blur * gain + offset, 0, 255).astype(np.uint8)


def blur_gamma_session() -> EditSession:
    """An edit session of input -> box blur -> gamma (a run-time parameter) -> output, for
    the preview tests."""
    session = EditSession()
    session.add_node("image_input", (0, 0), {"sample": "camera.png", "element": "f32", "layout": "gray"})
    session.add_node("box_blur", (200, 0), {"radius": 2})
    session.add_node("gamma", (400, 0))
    session.add_node("output", (600, 0))
    session.connect("image_input", "out", "box_blur", "image")
    session.connect("box_blur", "out", "gamma", "image")
    session.connect("gamma", "out", "output", "image")
    return session
