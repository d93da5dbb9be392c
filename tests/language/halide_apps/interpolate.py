"""Filling in the transparent parts of an image from its opaque ones, through a pyramid,
written as a Halide Python app.

Premultiplied RGBA is halved repeatedly; on the way back up, each level's holes (low
alpha) are filled from the level below, and the result is divided by its alpha.

The text below is a Halide program: tests/language/test_halide_apps.py runs it once as
is and once with the import lines naming `pixelweave` instead of `halide`.
"""

import sys

import halide as hl
import halide.imageio


def numbered_funcs(prefix, count):
    """count new Funcs named prefix_0 ... prefix_{count-1}."""
    return [hl.Func(f"{prefix}_{n}") for n in range(count)]


@hl.alias(
    interpolate_auto={"autoscheduler": "Mullapudi2016"},
)
@hl.generator()
class interpolate:
    levels = hl.GeneratorParam(10)

    input_buf = hl.InputBuffer(hl.Float(32), 3)
    output_buf = hl.OutputBuffer(hl.Float(32), 3)

    def generate(self):
        gen = self
        depth = gen.levels
        x, y, c = hl.vars("x y c")

        # The input is RGBA: exactly four channels.
        gen.input_buf.dim(2).set_bounds(0, 4)

        smaller = numbered_funcs("smaller", depth)
        half_x = numbered_funcs("half_x", depth)
        filled = numbered_funcs("filled", depth)
        larger = numbered_funcs("larger", depth)
        larger_x = numbered_funcs("larger_x", depth)

        edge = hl.BoundaryConditions.repeat_edge(gen.input_buf)
        alpha_in = edge[x, y, 3]
        smaller[0][x, y, c] = hl.select(c < 3, edge[x, y, c] * alpha_in, alpha_in)

        for j in range(1, depth):
            source = smaller[j - 1]
            if j == 4:
                # Clamp again part-way down so that the deepest levels do not reach far
                # outside the image.
                w = gen.input_buf.width() / (1 << (j - 1))
                h = gen.input_buf.height() / (1 << (j - 1))
                source = hl.lambda_func(x, y, c, source[hl.clamp(x, 0, w), hl.clamp(y, 0, h), c])
            half_x[j][x, y, c] = (source[x * 2 - 1, y, c] + 2 * source[x * 2, y, c] + source[x * 2 + 1, y, c]) * 0.25
            smaller[j][x, y, c] = (
                half_x[j][x, y * 2 - 1, c] + 2 * half_x[j][x, y * 2, c] + half_x[j][x, y * 2 + 1, c]
            ) * 0.25

        filled[depth - 1][x, y, c] = smaller[depth - 1][x, y, c]
        for j in range(depth - 2, -1, -1):
            larger_x[j][x, y, c] = (filled[j + 1][x / 2, y, c] + filled[j + 1][(x + 1) / 2, y, c]) / 2
            larger[j][x, y, c] = (larger_x[j][x, y / 2, c] + larger_x[j][x, (y + 1) / 2, c]) / 2
            transparency = 1.0 - smaller[j][x, y, 3]
            filled[j][x, y, c] = smaller[j][x, y, c] + transparency * larger[j][x, y, c]

        gen.output_buf[x, y, c] = filled[0][x, y, c] / filled[0][x, y, 3]

        if gen.using_autoscheduler():
            pass
        elif gen.target().has_gpu_feature():
            xi, yi, xii, yii = hl.vars("xi yi xii yii")
            (
                gen.output_buf.bound(x, 0, gen.input_buf.width())
                .bound(y, 0, gen.input_buf.height())
                .bound(c, 0, 3)
                .reorder(c, x, y)
                .tile(x, y, xi, yi, 16, 16, hl.TailStrategy.RoundUp)
                .tile(xi, yi, xii, yii, 2, 2)
                .gpu_blocks(x, y)
                .gpu_threads(xi, yi)
                .unroll(xii)
                .unroll(yii)
                .unroll(c)
            )
            for j in range(1, depth):
                smaller[j].compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xi, yi, 8, 8)
            for j in range(2, depth, 2):
                filled[j].compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xi, yi, 8, 8)
        else:
            xo, xi, yo, yi = hl.vars("xo xi yo yi")
            lanes = gen.natural_vector_size(hl.Float(32))
            for j in range(1, depth - 1):
                smaller[j].compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, lanes)
            # The finest level is recomputed where the first halving needs it, through a
            # clone that only that consumer sees.
            (
                smaller[0]
                .clone_in(half_x[1])
                .store_at(smaller[1], yo)
                .compute_at(smaller[1], yi)
                .reorder(c, x, y)
                .unroll(c)
                .vectorize(x, lanes)
            )
            (
                gen.output_buf.bound(x, 0, gen.input_buf.width())
                .bound(y, 0, gen.input_buf.height())
                .bound(c, 0, 3)
                .split(x, xo, xi, lanes)
                .split(y, yo, yi, 32)
                .reorder(xi, c, xo, yi, yo)
                .unroll(c)
                .vectorize(xi)
                .parallel(yo)
            )
            for j in range(1, depth):
                filled[j].store_at(gen.output_buf, yo).compute_at(gen.output_buf, yi).vectorize(x, lanes)

        gen.input_buf.dim(0).set_estimate(0, 1536).dim(1).set_estimate(0, 2560).dim(2).set_estimate(0, 4)
        (
            gen.output_buf.output_buffer()
            .dim(0)
            .set_estimate(0, 1536)
            .dim(1)
            .set_estimate(0, 2560)
            .dim(2)
            .set_estimate(0, 3)
        )


def main(argv):
    """interpolate_app input.png output.png [Manual | AUTOSCHEDULER]: fill the transparent
    parts of an RGBA photo; returns the float RGB result as well as writing it."""
    if len(argv) < 3:
        print(f"Usage: {argv[0]} input.png output.png [Manual | autoscheduler name]")
        return None
    input_path, output_path = argv[1], argv[2]
    schedule = argv[3] if len(argv) > 3 else "Manual"

    photo = hl.imageio.imread(input_path)
    assert photo.dtype == "uint8" and photo.shape[0] == 4
    input_buf = photo.astype("float32") / 255.0
    output_buf = input_buf[:3].copy()
    output_buf.fill(0.0)

    params = {} if schedule == "Manual" else {"autoscheduler": schedule}
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        fill_holes = interpolate(params).compile_to_callable()
    fill_holes(input_buf, output_buf)

    hl.imageio.imwrite(output_path, (output_buf * 255.0).clip(0, 255).astype("uint8"))
    return output_buf


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("-"):
        hl.main()
    else:
        main(sys.argv)
