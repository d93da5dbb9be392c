"""The bundled demo: sharpen a sample photograph with an unsharp mask and write a PNG.

Run with `python -m pixelweave.app.demo [--image PATH] [--output PATH] [--amount A]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np

import pixelweave as pw

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
DEFAULT_IMAGE = RESOURCES / "images" / "astronaut.png"


def unsharp_mask(amount: pw.Param) -> tuple[pw.Func, pw.ImageParam]:
    """Planar RGB u8 in, sharpened planar RGB u8 out: a Gaussian-ish 5-tap blur in x and y,
    then out = in + amount * (in - blur), saturated to 8 bits."""
    x, y, c = pw.Var("x"), pw.Var("y"), pw.Var("c")
    inp = pw.ImageParam(pw.UInt(8), 3, "input")
    clamped = pw.BoundaryConditions.repeat_edge(inp)
    as_float = pw.Func("as_float")
    as_float[x, y, c] = pw.f32(clamped[x, y, c])
    taps = (1.0, 4.0, 6.0, 4.0, 1.0)
    blur_x = pw.Func("blur_x")
    blur_x[x, y, c] = sum(w * as_float[x + i - 2, y, c] for i, w in enumerate(taps)) / 16.0
    blur_y = pw.Func("blur_y")
    blur_y[x, y, c] = sum(w * blur_x[x, y + i - 2, c] for i, w in enumerate(taps)) / 16.0
    sharpened = pw.Func("sharpened")
    sharpened[x, y, c] = pw.saturating_cast(
        pw.UInt(8), pw.round(as_float[x, y, c] + amount * (as_float[x, y, c] - blur_y[x, y, c]))
    )
    # The schedule: strips of 16 rows in parallel, each computing the blurs it needs as
    # sliding windows over its rows, 8 pixels at a time.
    yo, yi = pw.Var("yo"), pw.Var("yi")
    sharpened.reorder(x, c, y).split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
    blur_x.store_at(sharpened, yo).compute_at(sharpened, yi).vectorize(x, 8)
    return sharpened, inp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", type=Path, default=DEFAULT_IMAGE, help="an RGB image to sharpen")
    parser.add_argument("--output", type=Path, default=Path("out/demo.png"), help="where to write the PNG")
    parser.add_argument("--amount", type=float, default=1.5, help="sharpening strength")
    args = parser.parse_args(argv)
    try:
        rgb = iio.imread(args.image)
    except (OSError, ValueError) as err:
        print(f"error: cannot read {args.image}: {err}", file=sys.stderr)
        return 1
    if rgb.ndim == 2:
        rgb = np.stack([rgb] * 3, axis=-1)
    planar = np.ascontiguousarray(np.moveaxis(rgb[..., :3], -1, 0)).astype(np.uint8)
    amount = pw.Param(pw.Float(32), "amount", args.amount)
    out_func, _ = unsharp_mask(amount)
    channels, height, width = planar.shape
    pipeline = pw.Pipeline(out_func)
    fn = pipeline.compile(level="fast")
    start = time.perf_counter()
    result = fn([width, height, channels], {"input": planar})
    elapsed = time.perf_counter() - start
    args.output.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(args.output, np.moveaxis(result, 0, -1))
    print(
        f"sharpened {args.image.name} ({width}x{height}) in {elapsed * 1000:.1f} ms "
        f"(compiled in {fn.compile_seconds * 1000:.0f} ms) -> {args.output}"
    )
    print("loop nest:")
    print(pipeline.loop_nest())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
