#include <stdint.h>
#include <stdlib.h>

/* Point operations: per-pixel kernels on 8- and 16-bit, gray and interleaved images. */

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

// lift: threshold in 0..255
// lift: gain in 0..512
// lift: offset in -64..64

void threshold(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int threshold) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * rowBytes + x] = src[y * rowBytes + x] >= threshold ? 255 : 0;
        }
    }
}

void brightness_contrast(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int gain, int offset) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int v = ((src[y * rowBytes + x] - 128) * gain >> 8) + 128 + offset;
            if (v < 0) v = 0;
            if (v > 255) v = 255;
            dst[y * rowBytes + x] = (uint8_t)v;
        }
    }
}

void rgba_to_gray(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes, int dstRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + y * srcRowBytes;
        uint8_t *d = dst + y * dstRowBytes;
        for (int x = 0; x < width; x++) {
            d[x] = (uint8_t)((s[4 * x] * 77 + s[4 * x + 1] * 150 + s[4 * x + 2] * 29 + 128) >> 8);
        }
    }
}

void swap_rb(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * rowBytes + 4 * x + 0] = src[y * rowBytes + 4 * x + 2];
            dst[y * rowBytes + 4 * x + 1] = src[y * rowBytes + 4 * x + 1];
            dst[y * rowBytes + 4 * x + 2] = src[y * rowBytes + 4 * x + 0];
            dst[y * rowBytes + 4 * x + 3] = src[y * rowBytes + 4 * x + 3];
        }
    }
}

void premultiply(uint8_t *pixels, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        uint8_t *p = pixels + y * rowBytes;
        for (int x = 0; x < width; x++) {
            int a = p[4 * x + 3];
            p[4 * x + 0] = (uint8_t)((p[4 * x + 0] * a + 127) / 255);
            p[4 * x + 1] = (uint8_t)((p[4 * x + 1] * a + 127) / 255);
            p[4 * x + 2] = (uint8_t)((p[4 * x + 2] * a + 127) / 255);
        }
    }
}

void unpremultiply(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int a = src[y * rowBytes + 4 * x + 3];
            for (int c = 0; c < 3; c++) {
                int v = src[y * rowBytes + 4 * x + c];
                dst[y * rowBytes + 4 * x + c] = a == 0 ? 0 : (uint8_t)MIN(255, (v * 255 + a / 2) / a);
            }
            dst[y * rowBytes + 4 * x + 3] = (uint8_t)a;
        }
    }
}

void to16(const uint8_t *src, uint16_t *dst, int width, int height, int srcRowBytes, int dstStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * dstStride + x] = (uint16_t)(src[y * srcRowBytes + x] * 257);
        }
    }
}

void to8(const uint16_t *src, uint8_t *dst, int width, int height, int srcStride, int dstRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * dstRowBytes + x] = (uint8_t)((src[y * srcStride + x] * 255u + 32895u) >> 16);
        }
    }
}

void posterize(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int bits) {
    // lift: bits in 1..8
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int mask = (0xff << (8 - bits)) & 0xff;
            dst[y * rowBytes + x] = (uint8_t)(src[y * rowBytes + x] & mask);
        }
    }
}

void flip_horizontal(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes, int dstRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            dst[y * dstRowBytes + x] = src[y * srcRowBytes + (width - 1 - x)];
        }
    }
}

void float_gain(const float *src, float *dst, int width, int height, int stride, float gain) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            float v = src[y * stride + x] * gain;
            dst[y * stride + x] = v > 1.0f ? 1.0f : v;
        }
    }
}

void planar_rgb_to_gray(const uint8_t *r, const uint8_t *g, const uint8_t *b, uint8_t *gray, int width, int height,
                        int rowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int i = y * rowBytes + x;
            gray[i] = (uint8_t)((r[i] * 77 + g[i] * 150 + b[i] * 29 + 128) >> 8);
        }
    }
}
