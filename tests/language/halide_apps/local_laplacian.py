"""Local Laplacian filtering (detail and tone manipulation), written as a Halide Python app.

The input's gray level is remapped at several intensity levels k; a Gaussian and a
Laplacian pyramid are built of each remapped image (the pyramids carry k as an extra
dimension, reached through Halide's implicit variables `_`), and the output's Laplacian
pyramid takes, per pixel and level, the interpolation between the two k nearest the
input's own gray level there. Collapsing it and restoring colour gives the result.

The text below is a Halide program: tests/language/test_halide_apps.py runs it once as
is and once with the import lines naming `pixelweave` instead of `halide`.
"""

import sys

import halide as hl
import halide.imageio

x, y, c, k = hl.vars("x y c k")


def pyramid_funcs(prefix, count):
    """count new Funcs named prefix_0 ... prefix_{count-1}."""
    return [hl.Func(f"{prefix}_{level}") for level in range(count)]


def half_size(f):
    """f at half resolution: a 1 3 3 1 filter along x, then along y; any further
    dimensions of f are carried through by the implicit variables."""
    along_x, along_y = hl.funcs("along_x along_y")
    along_x[x, y, hl._] = (
        f[2 * x - 1, y, hl._] + 3.0 * (f[2 * x, y, hl._] + f[2 * x + 1, y, hl._]) + f[2 * x + 2, y, hl._]
    ) / 8.0
    along_y[x, y, hl._] = (
        along_x[x, 2 * y - 1, hl._]
        + 3.0 * (along_x[x, 2 * y, hl._] + along_x[x, 2 * y + 1, hl._])
        + along_x[x, 2 * y + 2, hl._]
    ) / 8.0
    return along_y


def double_size(f):
    """f at twice the resolution, by linear interpolation along x and then y."""
    wide, tall = hl.funcs("wide tall")
    wide[x, y, hl._] = hl.lerp(f[(x + 1) // 2, y, hl._], f[(x - 1) // 2, y, hl._], ((x % 2) * 2 + 1) / 4.0)
    tall[x, y, hl._] = hl.lerp(wide[x, (y + 1) // 2, hl._], wide[x, (y - 1) // 2, hl._], ((y % 2) * 2 + 1) / 4.0)
    return tall


@hl.alias(local_laplacian_auto={"autoscheduler": "Mullapudi2016"})
@hl.generator()
class local_laplacian:
    pyramid_levels = hl.GeneratorParam(8)

    input_buf = hl.InputBuffer(hl.UInt(16), 3)
    levels = hl.InputScalar(hl.Int(32))
    alpha = hl.InputScalar(hl.Float(32))
    beta = hl.InputScalar(hl.Float(32))
    output_buf = hl.OutputBuffer(hl.UInt(16), 3)

    def generate(self):
        gen = self
        depth = gen.pyramid_levels

        # The detail-remapping curve as a lookup table, 256 entries per intensity level.
        t = hl.f32(x) / 256.0
        curve = hl.Func("curve")
        curve[x] = gen.alpha * t * hl.exp(-t * t / 2.0)

        edge = hl.BoundaryConditions.repeat_edge(gen.input_buf)
        unit = hl.Func("unit")
        unit[x, y, c] = edge[x, y, c] / 65535.0
        luma = hl.Func("luma")
        luma[x, y] = hl.f32(0.299) * unit[x, y, 0] + hl.f32(0.587) * unit[x, y, 1] + hl.f32(0.114) * unit[x, y, 2]

        # Gaussian pyramid of the gray image remapped around each level k.
        remapped = pyramid_funcs("remapped", depth)
        intensity = k * (1.0 / (gen.levels - 1))
        lut_index = hl.clamp(hl.i32(luma[x, y] * hl.f32(gen.levels - 1) * 256.0), 0, (gen.levels - 1) * 256)
        remapped[0][x, y, k] = gen.beta * (luma[x, y] - intensity) + intensity + curve[lut_index - 256 * k]
        for j in range(1, depth):
            remapped[j][x, y, k] = half_size(remapped[j - 1])[x, y, k]

        # Its Laplacian pyramid.
        detail = pyramid_funcs("detail", depth)
        detail[depth - 1][x, y, k] = remapped[depth - 1][x, y, k]
        for j in range(depth - 2, -1, -1):
            detail[j][x, y, k] = remapped[j][x, y, k] - double_size(remapped[j + 1])[x, y, k]

        # Gaussian pyramid of the input's gray level.
        guide = pyramid_funcs("guide", depth)
        guide[0][x, y] = luma[x, y]
        for j in range(1, depth):
            guide[j][x, y] = half_size(guide[j - 1])[x, y]

        # The output's Laplacian pyramid: per pixel, blend the two levels k around the guide.
        blended = pyramid_funcs("blended", depth)
        for j in range(depth):
            position = guide[j][x, y] * hl.f32(gen.levels - 1)
            lower = hl.clamp(hl.i32(position), 0, gen.levels - 2)
            weight = position - hl.f32(lower)
            blended[j][x, y] = (1.0 - weight) * detail[j][x, y, lower] + weight * detail[j][x, y, lower + 1]

        # Collapse it.
        collapsed = pyramid_funcs("collapsed", depth)
        collapsed[depth - 1][x, y] = blended[depth - 1][x, y]
        for j in range(depth - 2, -1, -1):
            collapsed[j][x, y] = double_size(collapsed[j + 1])[x, y] + blended[j][x, y]

        # Put the colour back (eps keeps dark noise from being amplified), then 16 bits.
        eps = hl.f32(0.01)
        colour = hl.Func("colour")
        colour[x, y, c] = collapsed[0][x, y] * (unit[x, y, c] + eps) / (luma[x, y] + eps)
        gen.output_buf[x, y, c] = hl.u16(hl.clamp(colour[x, y, c], 0.0, 1.0) * 65535.0)

        gen.input_buf.set_estimates([(0, 1536), (0, 2560), (0, 3)])
        gen.levels.set_estimate(8)
        gen.alpha.set_estimate(1)
        gen.beta.set_estimate(1)
        gen.output_buf.set_estimates([(0, 1536), (0, 2560), (0, 3)])

        if gen.using_autoscheduler():
            pass
        elif gen.target().has_gpu_feature():
            xi, yi = hl.vars("xi yi")
            curve.compute_root()
            gen.output_buf.compute_root().gpu_tile(x, y, xi, yi, 16, 8)
            for j in range(depth):
                size = 16 if j <= 3 else 2
                if j > 0:
                    guide[j].compute_root().gpu_tile(x, y, xi, yi, size, size)
                    remapped[j].compute_root().reorder(k, x, y).gpu_tile(x, y, xi, yi, size, size)
                collapsed[j].compute_root().gpu_tile(x, y, xi, yi, size, size)
        else:
            yo = hl.Var("yo")
            curve.compute_root()
            gen.output_buf.reorder(c, x, y).split(y, yo, y, 64).parallel(yo).vectorize(x, 8)
            luma.compute_root().parallel(y, 32).vectorize(x, 8)
            for j in range(1, 5):
                guide[j].compute_root().parallel(y, 32).vectorize(x, 8)
                remapped[j].compute_root().reorder_storage(x, k, y).reorder(k, y).parallel(y, 8).vectorize(x, 8)
                (
                    collapsed[j]
                    .store_at(gen.output_buf, yo)
                    .compute_at(gen.output_buf, y)
                    .fold_storage(y, 4)
                    .vectorize(x, 8)
                )
            collapsed[0].compute_at(gen.output_buf, y).vectorize(x, 8)
            for j in range(5, depth):
                guide[j].compute_root()
                remapped[j].compute_root().parallel(k)
                collapsed[j].compute_root()


def main(argv):
    """local_laplacian_app input.png levels alpha beta output.png [Manual | AUTOSCHEDULER]:
    returns the 16-bit planar result as well as writing it (as 8 bits)."""
    if len(argv) < 6:
        print(f"Usage: {argv[0]} input.png levels alpha beta output.png [Manual | autoscheduler name]")
        return None
    input_path, levels, alpha, beta, output_path = argv[1], int(argv[2]), float(argv[3]), float(argv[4]), argv[5]
    schedule = argv[6] if len(argv) > 6 else "Manual"

    photo = hl.imageio.imread(input_path)
    assert photo.dtype == "uint8" and photo.ndim == 3
    input_buf = photo.astype("uint16") * 257
    output_buf = input_buf[:3].copy()
    output_buf.fill(0)

    params = {} if schedule == "Manual" else {"autoscheduler": schedule}
    with hl.GeneratorContext(hl.get_jit_target_from_environment()):
        enhance = local_laplacian(params).compile_to_callable()
    enhance(input_buf, levels, alpha / (levels - 1), beta, output_buf)

    hl.imageio.imwrite(output_path, (output_buf // 257).astype("uint8"))
    return output_buf


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("-"):
        hl.main()
    else:
        main(sys.argv)
