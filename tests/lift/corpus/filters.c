#include <stdint.h>
#include <stdlib.h>

/* Filters on 8-bit gray images with byte row strides: fixed 3x3 and 5-tap stencils over the
   interior (the border is left as it was), and variable-radius filters with clamped reads. */

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(v, lo, hi) MIN(MAX(v, lo), hi)

// lift: radius in 0..4

void box3x3(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes, int dstRowBytes) {
    for (int y = 1; y < height - 1; y++) {
        const uint8_t *r0 = src + (y - 1) * srcRowBytes;
        const uint8_t *r1 = src + y * srcRowBytes;
        const uint8_t *r2 = src + (y + 1) * srcRowBytes;
        uint8_t *out = dst + y * dstRowBytes;
        for (int x = 1; x < width - 1; x++) {
            int sum = r0[x - 1] + r0[x] + r0[x + 1] + r1[x - 1] + r1[x] + r1[x + 1] + r2[x - 1] + r2[x] + r2[x + 1];
            out[x] = (uint8_t)((sum + 4) / 9);
        }
    }
}

void box_horizontal3(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 1; x < width - 1; x++) {
            dst[y * rowBytes + x] = (uint8_t)((src[y * rowBytes + x - 1] + src[y * rowBytes + x] + src[y * rowBytes + x + 1]) / 3);
        }
    }
}

void gaussian5_horizontal(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + y * rowBytes;
        for (int x = 2; x < width - 2; x++) {
            dst[y * rowBytes + x] = (uint8_t)((s[x - 2] + 4 * s[x - 1] + 6 * s[x] + 4 * s[x + 1] + s[x + 2] + 8) >> 4);
        }
    }
}

void gaussian3x3(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            const uint8_t *p = src + y * rowBytes + x;
            int v = p[-rowBytes - 1] + 2 * p[-rowBytes] + p[-rowBytes + 1]
                  + 2 * p[-1] + 4 * p[0] + 2 * p[1]
                  + p[rowBytes - 1] + 2 * p[rowBytes] + p[rowBytes + 1];
            dst[y * rowBytes + x] = (uint8_t)((v + 8) >> 4);
        }
    }
}

void sharpen3x3(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes, int dstRowBytes) {
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            int c = src[y * srcRowBytes + x];
            int v = 5 * c - src[(y - 1) * srcRowBytes + x] - src[(y + 1) * srcRowBytes + x]
                  - src[y * srcRowBytes + x - 1] - src[y * srcRowBytes + x + 1];
            dst[y * dstRowBytes + x] = (uint8_t)CLAMP(v, 0, 255);
        }
    }
}

void unsharp_amount(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int amount) {
    // lift: amount in 0..64
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            int c = src[y * rowBytes + x];
            int blur = (src[(y - 1) * rowBytes + x] + src[(y + 1) * rowBytes + x] + src[y * rowBytes + x - 1]
                        + src[y * rowBytes + x + 1] + 2) >> 2;
            int v = c + (((c - blur) * amount) >> 4);
            dst[y * rowBytes + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

void min3x3(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            int m = 255;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    m = MIN(m, src[(y + dy) * rowBytes + x + dx]);
                }
            }
            dst[y * rowBytes + x] = (uint8_t)m;
        }
    }
}

void max3x3(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            int m = 0;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    int v = src[(y + dy) * rowBytes + x + dx];
                    if (v > m) m = v;
                }
            }
            dst[y * rowBytes + x] = (uint8_t)m;
        }
    }
}

void box_radius_horizontal(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int radius) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int sum = 0;
            for (int k = -radius; k <= radius; k++) {
                int xx = CLAMP(x + k, 0, width - 1);
                sum += src[y * rowBytes + xx];
            }
            dst[y * rowBytes + x] = (uint8_t)(sum / (2 * radius + 1));
        }
    }
}

void box_radius_vertical16(const uint16_t *src, uint16_t *dst, int width, int height, int stride, int radius) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t sum = 0;
            for (int k = -radius; k <= radius; k++) {
                int yy = CLAMP(y + k, 0, height - 1);
                sum += src[yy * stride + x];
            }
            dst[y * stride + x] = (uint16_t)(sum / (uint32_t)(2 * radius + 1));
        }
    }
}

void max_radius(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int radius) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = 0;
            for (int dy = -radius; dy <= radius; dy++) {
                for (int dx = -radius; dx <= radius; dx++) {
                    int yy = CLAMP(y + dy, 0, height - 1);
                    int xx = CLAMP(x + dx, 0, width - 1);
                    m = MAX(m, src[yy * rowBytes + xx]);
                }
            }
            dst[y * rowBytes + x] = (uint8_t)m;
        }
    }
}

void min_radius_horizontal(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int radius) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = 255;
            for (int k = -radius; k <= radius; k++) {
                int v = src[y * rowBytes + CLAMP(x + k, 0, width - 1)];
                m = v < m ? v : m;
            }
            dst[y * rowBytes + x] = (uint8_t)m;
        }
    }
}

void gaussian_taps_rgba(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    static const int taps[5] = {1, 4, 6, 4, 1};
    for (int y = 0; y < height; y++) {
        for (int x = 2; x < width - 2; x++) {
            for (int c = 0; c < 4; c++) {
                int sum = 0;
                for (int k = 0; k < 5; k++) {
                    sum += taps[k] * src[y * rowBytes + 4 * (x + k - 2) + c];
                }
                dst[y * rowBytes + 4 * x + c] = (uint8_t)((sum + 8) >> 4);
            }
        }
    }
}

void sobel_magnitude(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 1; y < height - 1; y++) {
        for (int x = 1; x < width - 1; x++) {
            const uint8_t *p = src + y * rowBytes + x;
            int gx = (p[-rowBytes + 1] + 2 * p[1] + p[rowBytes + 1]) - (p[-rowBytes - 1] + 2 * p[-1] + p[rowBytes - 1]);
            int gy = (p[rowBytes - 1] + 2 * p[rowBytes] + p[rowBytes + 1]) - (p[-rowBytes - 1] + 2 * p[-rowBytes] + p[-rowBytes + 1]);
            int m = abs(gx) + abs(gy);
            dst[y * rowBytes + x] = (uint8_t)(m > 255 ? 255 : m);
        }
    }
}
