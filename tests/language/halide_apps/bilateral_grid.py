"""Edge-aware smoothing through a bilateral grid, written as a Halide Python app.

The grayscale image is splatted into a coarse 3-D grid (x / s_sigma, y / s_sigma,
intensity / r_sigma) holding a weighted sum and a weight per cell; the grid is blurred
along each of its three axes and sliced back at every pixel with trilinear interpolation.

The text below is a Halide program: tests/language/test_halide_apps.py runs it once as
is and once with the import lines naming `pixelweave` instead of `halide`.
"""

import sys

import halide as hl
import halide.imageio


def blur_five_taps(f, name, axis):
    """The 1 4 6 4 1 binomial filter (unnormalized) along one axis of a 4-D grid Func."""
    x, y, z, c = hl.vars("x y z c")
    blurred = hl.Func(name)
    taps = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}

    def at(offset):
        coords = [x, y, z, c]
        coords[axis] = coords[axis] + offset
        return f[coords[0], coords[1], coords[2], coords[3]]

    total = at(-2)
    for offset in (-1, 0, 1, 2):
        total = total + at(offset) * taps[offset]
    blurred[x, y, z, c] = total
    return blurred


@hl.alias(
    bilateral_grid_auto={"autoscheduler": "Mullapudi2016"},
)
@hl.generator()
class bilateral_grid:
    s_sigma = hl.GeneratorParam(8)

    input_buf = hl.InputBuffer(hl.Float(32), 2)
    r_sigma = hl.InputScalar(hl.Float(32))
    bilateral_grid = hl.OutputBuffer(hl.Float(32), 2)

    def generate(self):
        gen = self
        s = gen.s_sigma
        x, y, z, c = hl.vars("x y z c")

        edge = hl.BoundaryConditions.repeat_edge(gen.input_buf)

        # Splat: each grid cell sums the s x s pixels it covers, binned by intensity;
        # channel 0 of the grid holds the value, channel 1 the count (via mux).
        r = hl.RDom([(0, s), (0, s)])
        sample = hl.clamp(edge[x * s + r.x - s // 2, y * s + r.y - s // 2], 0.0, 1.0)
        bin_index = hl.i32(sample / gen.r_sigma + 0.5)
        grid = hl.Func("grid")
        grid[x, y, z, c] = 0.0
        grid[x, y, bin_index, c] += hl.mux(c, [sample, 1.0])

        # Blur the grid along intensity, then x, then y.
        blur_z = blur_five_taps(grid, "blur_z", 2)
        blur_x = blur_five_taps(blur_z, "blur_x", 0)
        blur_y = blur_five_taps(blur_x, "blur_y", 1)

        # Slice: trilinear interpolation of the blurred grid at each pixel.
        level = hl.clamp(edge[x, y], 0.0, 1.0) / gen.r_sigma
        zi = hl.i32(level)
        zf = level - zi
        xi, yi = x / s, y / s
        xf = hl.f32(x % s) / s
        yf = hl.f32(y % s) / s

        def bilinear(zz):
            top = hl.lerp(blur_y[xi, yi, zz, c], blur_y[xi + 1, yi, zz, c], xf)
            bottom = hl.lerp(blur_y[xi, yi + 1, zz, c], blur_y[xi + 1, yi + 1, zz, c], xf)
            return hl.lerp(top, bottom, yf)

        sliced = hl.Func("sliced")
        sliced[x, y, c] = hl.lerp(bilinear(zi), bilinear(zi + 1), zf)

        gen.bilateral_grid[x, y] = sliced[x, y, 0] / sliced[x, y, 1]

        # Estimates for the autoscheduler (a 1536 x 2560 photo).
        gen.input_buf.set_estimates([(0, 1536), (0, 2560)])
        gen.r_sigma.set_estimate(0.1)
        grid.set_estimate(z, -2, 16)
        for f in (blur_z, blur_x, blur_y):
            f.set_estimate(z, 0, 12)
        gen.bilateral_grid.set_estimates([(0, 1536), (0, 2560)])

        if gen.using_autoscheduler():
            pass
        elif gen.target().has_gpu_feature():
            tx, ty, tz = hl.vars("tx ty tz")
            # The grid and its z blur per 8 x 8 tile of cells, in one kernel.
            blur_z.compute_root().reorder(c, z, x, y).gpu_tile(x, y, tx, ty, 8, 8)
            grid.reorder(c, z, x, y).compute_at(blur_z, x).gpu_threads(x, y)
            grid.update().reorder(c, r.x, r.y, x, y).gpu_threads(x, y).unroll(c)
            for f in (blur_x, blur_y):
                (
                    f.compute_root()
                    .reorder(c, x, y, z)
                    .reorder_storage(c, x, y, z)
                    .vectorize(c)
                    .unroll(y, 2, hl.TailStrategy.RoundUp)
                    .gpu_tile(x, y, z, tx, ty, tz, 16, 8, 1, hl.TailStrategy.RoundUp)
                )
            gen.bilateral_grid.compute_root().gpu_tile(x, y, tx, ty, 16, 16)
            sliced.compute_at(gen.bilateral_grid, tx).vectorize(c)
        else:
            blur_z.compute_root().reorder(c, z, x, y).parallel(y).vectorize(x, 8).unroll(c)
            grid.compute_at(blur_z, y)
            grid.update().reorder(c, r.x, r.y, x, y).unroll(c)
            for f in (blur_x, blur_y):
                f.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, 8).unroll(c)
            gen.bilateral_grid.compute_root().parallel(y).vectorize(x, 8)


def main(argv):
    """bilateral_grid_app input.png range_sigma output.png [Manual | AUTOSCHEDULER]:
    smooth a grayscale photo; returns the float result as well as writing it."""
    if len(argv) < 4:
        print(f"Usage: {argv[0]} input.png range_sigma output.png [Manual | autoscheduler name]")
        return None
    input_path, r_sigma, output_path = argv[1], float(argv[2]), argv[3]
    schedule = argv[4] if len(argv) > 4 else "Manual"

    photo = hl.imageio.imread(input_path)
    assert photo.dtype == "uint8" and photo.ndim == 2
    input_buf = photo.astype("float32") / 255.0
    output_buf = input_buf.copy()
    output_buf.fill(0.0)

    params = {} if schedule == "Manual" else {"autoscheduler": schedule}
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        smooth = bilateral_grid(params).compile_to_callable()
    smooth(input_buf, r_sigma, output_buf)

    hl.imageio.imwrite(output_path, (output_buf * 255.0).clip(0, 255).astype("uint8"))
    return output_buf


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("-"):
        hl.main()
    else:
        main(sys.argv)
