#include <stdint.h>
#include <stdlib.h>

/* Multi-stage pipelines with temporaries between stages, tiled loops, and reductions. */

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TILE 8

void separable_blur(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    uint16_t *tmp = (uint16_t *)malloc((size_t)width * height * sizeof(uint16_t));
    for (int y = 0; y < height; y++) {
        for (int x = 1; x < width - 1; x++) {
            tmp[y * width + x] = (uint16_t)(src[y * rowBytes + x - 1] + 2 * src[y * rowBytes + x] + src[y * rowBytes + x + 1]);
        }
    }
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            dst[y * rowBytes + x] = (uint8_t)((tmp[(y - 1) * width + x] + 2 * tmp[y * width + x] + tmp[(y + 1) * width + x] + 8) >> 4);
        }
    }
    free(tmp);
}

void unsharp_pipeline(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    int16_t *blur = (int16_t *)malloc((size_t)width * height * 2);
    int16_t *detail = (int16_t *)malloc((size_t)width * height * 2);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int l = src[y * rowBytes + MAX(x - 1, 0)];
            int r = src[y * rowBytes + MIN(x + 1, width - 1)];
            blur[y * width + x] = (int16_t)((l + 2 * src[y * rowBytes + x] + r + 2) >> 2);
        }
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            detail[y * width + x] = (int16_t)(src[y * rowBytes + x] - blur[y * width + x]);
        }
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int v = src[y * rowBytes + x] + detail[y * width + x] * 3 / 2;
            dst[y * rowBytes + x] = (uint8_t)MIN(MAX(v, 0), 255);
        }
    }
    free(blur);
    free(detail);
}

void row_buffer_blur(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    /* a line buffer reused for every row */
    uint16_t line[4096];
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            line[x] = (uint16_t)(src[y * rowBytes + x] * 3);
        }
        for (int x = 1; x < width - 1; x++) {
            dst[y * rowBytes + x] = (uint8_t)((line[x - 1] + line[x] + line[x + 1]) / 9);
        }
    }
}

void tiled_invert(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int ty = 0; ty < height; ty += TILE) {
        for (int tx = 0; tx < width; tx += TILE) {
            for (int y = ty; y < MIN(ty + TILE, height); y++) {
                for (int x = tx; x < MIN(tx + TILE, width); x++) {
                    dst[y * rowBytes + x] = (uint8_t)(255 - src[y * rowBytes + x]);
                }
            }
        }
    }
}

void tiled_box3(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int ty = 1; ty < height - 1; ty += TILE) {
        for (int tx = 1; tx < width - 1; tx += TILE) {
            for (int y = ty; y < MIN(ty + TILE, height - 1); y++) {
                for (int x = tx; x < MIN(tx + TILE, width - 1); x++) {
                    const uint8_t *p = src + y * rowBytes + x;
                    dst[y * rowBytes + x] = (uint8_t)((p[-rowBytes] + p[-1] + p[0] + p[1] + p[rowBytes] + 2) / 5);
                }
            }
        }
    }
}

void histogram(const uint8_t *src, uint32_t *hist, int width, int height, int rowBytes) {
    for (int i = 0; i < 256; i++) {
        hist[i] = 0;
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            hist[src[y * rowBytes + x]]++;
        }
    }
}

void histogram_rgba_luma(const uint8_t *src, uint32_t *hist, int width, int height, int rowBytes) {
    for (int i = 0; i < 256; i++) {
        hist[i] = 0;
    }
    for (int y = 0; y < height; y++) {
        const uint8_t *p = src + y * rowBytes;
        for (int x = 0; x < width; x++) {
            int luma = (77 * p[4 * x] + 150 * p[4 * x + 1] + 29 * p[4 * x + 2]) >> 8;
            hist[luma] += 1;
        }
    }
}

uint32_t sum_image(const uint8_t *src, int width, int height, int rowBytes) {
    uint32_t total = 0;
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            total += src[y * rowBytes + x];
        }
    }
    return total;
}

int max_image16(const uint16_t *src, int width, int height, int stride) {
    int best = 0;
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            best = MAX(best, src[y * stride + x]);
        }
    }
    return best;
}

void row_sums(const uint8_t *src, uint32_t *sums, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        uint32_t s = 0;
        for (int x = 0; x < width; x++) {
            s += src[y * rowBytes + x];
        }
        sums[y] = s;
    }
}

void prefix_sum_rows(const uint8_t *src, uint32_t *out, int width, int height, int rowBytes, int outStride) {
    for (int y = 0; y < height; y++) {
        uint32_t run = 0;
        for (int x = 0; x < width; x++) {
            run += src[y * rowBytes + x];
            out[y * outStride + x] = run;
        }
    }
}

void equalize_lut(const uint8_t *src, uint8_t *dst, const uint8_t *lut, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * rowBytes + x] = lut[src[y * rowBytes + x]];
        }
    }
}

void last_position(const uint8_t *src, int32_t *where, int width, int height, int rowBytes) {
    /* for each value, the last column it appears in (order-dependent scatter) */
    for (int i = 0; i < 256; i++) {
        where[i] = -1;
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            where[src[y * rowBytes + x]] = x;
        }
    }
}
