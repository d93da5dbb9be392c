#include <stdint.h>
#include <stdlib.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define DIV255(v) (((v) + 127) / 255)

/* Blend modes on 16-bit images with row strides in elements: planar (one plane per call)
   and interleaved RGB, with and without a mask and opacity. */

// lift: opacity in 0..65535

void blend_normal_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(s);
        }
    }
}

void blend_normal_rgb16_opacity(const uint16_t *src, uint16_t *dst, int width, int height, int stride,
                               uint32_t opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < 3 * width; x++) {
            uint32_t s = src[y * stride + x];
            uint32_t d = dst[y * stride + x];
            uint32_t b = s;
            dst[y * stride + x] = (uint16_t)(((uint64_t)b * opacity + (uint64_t)d * (65535u - opacity) + 32767u) / 65535u);
        }
    }
}

void blend_multiply_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)((s * d + 32767u) / 65535u);
        }
    }
}

void blend_multiply_plane16_mask(const uint16_t *src, const uint16_t *dst, const uint8_t *mask, uint16_t *out,
                               int width, int height, int stride, int maskRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * stride + x], d = dst[y * stride + x];
            uint32_t m = mask[y * maskRowBytes + x] * 257u;
            uint32_t b = (s * d + 32767u) / 65535u;
            out[y * stride + x] = (uint16_t)(((uint64_t)b * m + (uint64_t)d * (65535u - m) + 32767u) / 65535u);
        }
    }
}

void blend_screen_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(65535u - ((65535u - s) * (65535u - d) + 32767u) / 65535u);
        }
    }
}

void blend_screen_rgb16_opacity(const uint16_t *src, uint16_t *dst, int width, int height, int stride,
                               uint32_t opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < 3 * width; x++) {
            uint32_t s = src[y * stride + x];
            uint32_t d = dst[y * stride + x];
            uint32_t b = 65535u - ((65535u - s) * (65535u - d) + 32767u) / 65535u;
            dst[y * stride + x] = (uint16_t)(((uint64_t)b * opacity + (uint64_t)d * (65535u - opacity) + 32767u) / 65535u);
        }
    }
}

void blend_darken_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(MIN(s, d));
        }
    }
}

void blend_darken_plane16_mask(const uint16_t *src, const uint16_t *dst, const uint8_t *mask, uint16_t *out,
                               int width, int height, int stride, int maskRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * stride + x], d = dst[y * stride + x];
            uint32_t m = mask[y * maskRowBytes + x] * 257u;
            uint32_t b = MIN(s, d);
            out[y * stride + x] = (uint16_t)(((uint64_t)b * m + (uint64_t)d * (65535u - m) + 32767u) / 65535u);
        }
    }
}

void blend_lighten_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(MAX(s, d));
        }
    }
}

void blend_lighten_rgb16_opacity(const uint16_t *src, uint16_t *dst, int width, int height, int stride,
                               uint32_t opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < 3 * width; x++) {
            uint32_t s = src[y * stride + x];
            uint32_t d = dst[y * stride + x];
            uint32_t b = MAX(s, d);
            dst[y * stride + x] = (uint16_t)(((uint64_t)b * opacity + (uint64_t)d * (65535u - opacity) + 32767u) / 65535u);
        }
    }
}

void blend_difference_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(s > d ? s - d : d - s);
        }
    }
}

void blend_difference_plane16_mask(const uint16_t *src, const uint16_t *dst, const uint8_t *mask, uint16_t *out,
                               int width, int height, int stride, int maskRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * stride + x], d = dst[y * stride + x];
            uint32_t m = mask[y * maskRowBytes + x] * 257u;
            uint32_t b = s > d ? s - d : d - s;
            out[y * stride + x] = (uint16_t)(((uint64_t)b * m + (uint64_t)d * (65535u - m) + 32767u) / 65535u);
        }
    }
}

void blend_add_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(MIN(s + d, 65535u));
        }
    }
}

void blend_add_rgb16_opacity(const uint16_t *src, uint16_t *dst, int width, int height, int stride,
                               uint32_t opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < 3 * width; x++) {
            uint32_t s = src[y * stride + x];
            uint32_t d = dst[y * stride + x];
            uint32_t b = MIN(s + d, 65535u);
            dst[y * stride + x] = (uint16_t)(((uint64_t)b * opacity + (uint64_t)d * (65535u - opacity) + 32767u) / 65535u);
        }
    }
}

void blend_overlay_plane16(const uint16_t *src, const uint16_t *dst, uint16_t *out, int width, int height,
                          int srcStride, int dstStride, int outStride) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * srcStride + x];
            uint32_t d = dst[y * dstStride + x];
            out[y * outStride + x] = (uint16_t)(d < 32768u ? (2u * s * d + 32767u) / 65535u : 65535u - (2u * (65535u - s) * (65535u - d) + 32767u) / 65535u);
        }
    }
}

void blend_overlay_plane16_mask(const uint16_t *src, const uint16_t *dst, const uint8_t *mask, uint16_t *out,
                               int width, int height, int stride, int maskRowBytes) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint32_t s = src[y * stride + x], d = dst[y * stride + x];
            uint32_t m = mask[y * maskRowBytes + x] * 257u;
            uint32_t b = d < 32768u ? (2u * s * d + 32767u) / 65535u : 65535u - (2u * (65535u - s) * (65535u - d) + 32767u) / 65535u;
            out[y * stride + x] = (uint16_t)(((uint64_t)b * m + (uint64_t)d * (65535u - m) + 32767u) / 65535u);
        }
    }
}

