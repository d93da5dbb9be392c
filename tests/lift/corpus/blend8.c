#include <stdint.h>
#include <stdlib.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define DIV255(v) (((v) + 127) / 255)

/* Blend modes on 8-bit interleaved RGBA rows with byte row strides, in the style of
   image-editor blend code: out = blend(src over dst). */

// lift: opacity in 0..255

void blend_normal_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(s);
            }
        }
    }
}

void blend_normal_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = s;
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = s;
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = s;
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = s;
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_multiply_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(DIV255(s * d));
            }
        }
    }
}

void blend_multiply_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = DIV255(s * d);
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_screen_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(255 - DIV255((255 - s) * (255 - d)));
            }
        }
    }
}

void blend_screen_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = 255 - DIV255((255 - s) * (255 - d));
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = 255 - DIV255((255 - s) * (255 - d));
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = 255 - DIV255((255 - s) * (255 - d));
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = 255 - DIV255((255 - s) * (255 - d));
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_darken_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(MIN(s, d));
            }
        }
    }
}

void blend_darken_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = MIN(s, d);
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_lighten_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(MAX(s, d));
            }
        }
    }
}

void blend_lighten_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = MAX(s, d);
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = MAX(s, d);
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = MAX(s, d);
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = MAX(s, d);
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_overlay_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(d < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d)));
            }
        }
    }
}

void blend_overlay_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = d < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d));
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_hardlight_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(s < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d)));
            }
        }
    }
}

void blend_hardlight_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = s < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d));
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = s < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d));
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = s < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d));
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = s < 128 ? DIV255(2 * s * d) : 255 - DIV255(2 * (255 - s) * (255 - d));
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_difference_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(abs(s - d));
            }
        }
    }
}

void blend_difference_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = abs(s - d);
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_exclusion_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(s + d - DIV255(2 * s * d));
            }
        }
    }
}

void blend_exclusion_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = s + d - DIV255(2 * s * d);
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = s + d - DIV255(2 * s * d);
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = s + d - DIV255(2 * s * d);
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = s + d - DIV255(2 * s * d);
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_add_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(MIN(s + d, 255));
            }
        }
    }
}

void blend_add_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = MIN(s + d, 255);
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_subtract_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)(MAX(d - s, 0));
            }
        }
    }
}

void blend_subtract_rgba8_opacity(const uint8_t *src, uint8_t *dst, int width, int height, int srcRowBytes,
                               int dstRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            {
                int s = src[4 * x + 0], d = dst[4 * x + 0];
                int b = MAX(d - s, 0);
                dst[4 * x + 0] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 1], d = dst[4 * x + 1];
                int b = MAX(d - s, 0);
                dst[4 * x + 1] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 2], d = dst[4 * x + 2];
                int b = MAX(d - s, 0);
                dst[4 * x + 2] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
            {
                int s = src[4 * x + 3], d = dst[4 * x + 3];
                int b = MAX(d - s, 0);
                dst[4 * x + 3] = (uint8_t)DIV255(b * opacity + d * (255 - opacity));
            }
        }
        src += srcRowBytes;
        dst += dstRowBytes;
    }
}

void blend_average_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                       int srcRowBytes, int dstRowBytes, int outRowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *sp = src + y * srcRowBytes;
        const uint8_t *dp = dst + y * dstRowBytes;
        uint8_t *op = out + y * outRowBytes;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < 4; c++) {
                int s = sp[4 * x + c];
                int d = dp[4 * x + c];
                op[4 * x + c] = (uint8_t)((s + d) >> 1);
            }
        }
    }
}

void blend_average_rgba8_mask(const uint8_t *src, const uint8_t *dst, const uint8_t *mask, uint8_t *out,
                            int width, int height, int rowBytes, int maskRowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int m = DIV255(mask[y * maskRowBytes + x] * opacity);
            for (int c = 0; c < 4; c++) {
                int s = src[y * rowBytes + 4 * x + c];
                int d = dst[y * rowBytes + 4 * x + c];
                int b = (s + d) >> 1;
                out[y * rowBytes + 4 * x + c] = (uint8_t)DIV255(b * m + d * (255 - m));
            }
        }
    }
}

void blend_dissolve_rgba8(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                          int rowBytes, int opacity) {
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            unsigned h = (unsigned)(x * 73856093) ^ (unsigned)(y * 19349663);
            h = (h ^ (h >> 13)) * 1274126177u;
            int keep = (int)((h >> 24) & 255) < opacity;
            for (int c = 0; c < 4; c++) {
                out[y * rowBytes + 4 * x + c] = keep ? src[y * rowBytes + 4 * x + c] : dst[y * rowBytes + 4 * x + c];
            }
        }
    }
}

void blend_normal_rgb8_alpha(const uint8_t *src, const uint8_t *dst, uint8_t *out, int width, int height,
                             int rowBytes) {
    /* src is RGBA, dst and out RGB: classic "over" with src alpha */
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + y * rowBytes;
        const uint8_t *d = dst + y * rowBytes;
        uint8_t *o = out + y * rowBytes;
        for (int x = 0; x < width; x++) {
            int a = s[4 * x + 3];
            o[3 * x + 0] = (uint8_t)DIV255(s[4 * x + 0] * a + d[3 * x + 0] * (255 - a));
            o[3 * x + 1] = (uint8_t)DIV255(s[4 * x + 1] * a + d[3 * x + 1] * (255 - a));
            o[3 * x + 2] = (uint8_t)DIV255(s[4 * x + 2] * a + d[3 * x + 2] * (255 - a));
        }
    }
}

