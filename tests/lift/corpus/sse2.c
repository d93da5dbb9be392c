#include <stdint.h>
#include <emmintrin.h>

/* Blends and filters written with SSE2 integer intrinsics, 16 pixels at a time, with a
   scalar loop for the rest of each row. */

void sse2_add_saturate(const uint8_t *a, const uint8_t *b, uint8_t *out, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        const uint8_t *pa = a + y * rowBytes;
        const uint8_t *pb = b + y * rowBytes;
        uint8_t *po = out + y * rowBytes;
        int x = 0;
        for (; x + 16 <= width; x += 16) {
            __m128i va = _mm_loadu_si128((const __m128i *)(pa + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(pb + x));
            _mm_storeu_si128((__m128i *)(po + x), _mm_adds_epu8(va, vb));
        }
        for (; x < width; x++) {
            int v = pa[x] + pb[x];
            po[x] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

void sse2_average(const uint8_t *a, const uint8_t *b, uint8_t *out, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        int x;
        for (x = 0; x + 16 <= width; x += 16) {
            __m128i va = _mm_loadu_si128((const __m128i *)(a + y * rowBytes + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(b + y * rowBytes + x));
            _mm_storeu_si128((__m128i *)(out + y * rowBytes + x), _mm_avg_epu8(va, vb));
        }
        for (; x < width; x++) {
            out[y * rowBytes + x] = (uint8_t)((a[y * rowBytes + x] + b[y * rowBytes + x] + 1) >> 1);
        }
    }
}

void sse2_darken_lighten(const uint8_t *a, const uint8_t *b, uint8_t *lo, uint8_t *hi, int width, int height,
                         int rowBytes) {
    for (int y = 0; y < height; y++) {
        int x = 0;
        for (; x + 16 <= width; x += 16) {
            __m128i va = _mm_loadu_si128((const __m128i *)(a + y * rowBytes + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(b + y * rowBytes + x));
            _mm_storeu_si128((__m128i *)(lo + y * rowBytes + x), _mm_min_epu8(va, vb));
            _mm_storeu_si128((__m128i *)(hi + y * rowBytes + x), _mm_max_epu8(va, vb));
        }
        for (; x < width; x++) {
            int va = a[y * rowBytes + x], vb = b[y * rowBytes + x];
            lo[y * rowBytes + x] = (uint8_t)(va < vb ? va : vb);
            hi[y * rowBytes + x] = (uint8_t)(va > vb ? va : vb);
        }
    }
}

void sse2_subtract(const uint8_t *a, const uint8_t *b, uint8_t *out, int width, int height, int rowBytes) {
    for (int y = 0; y < height; y++) {
        int x = 0;
        for (; x + 16 <= width; x += 16) {
            __m128i va = _mm_loadu_si128((const __m128i *)(a + y * rowBytes + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(b + y * rowBytes + x));
            _mm_storeu_si128((__m128i *)(out + y * rowBytes + x), _mm_subs_epu8(va, vb));
        }
        for (; x < width; x++) {
            int v = a[y * rowBytes + x] - b[y * rowBytes + x];
            out[y * rowBytes + x] = (uint8_t)(v < 0 ? 0 : v);
        }
    }
}

void sse2_multiply(const uint8_t *a, const uint8_t *b, uint8_t *out, int width, int height, int rowBytes) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i bias = _mm_set1_epi16(128);
    for (int y = 0; y < height; y++) {
        int x = 0;
        for (; x + 16 <= width; x += 16) {
            __m128i va = _mm_loadu_si128((const __m128i *)(a + y * rowBytes + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(b + y * rowBytes + x));
            __m128i lo = _mm_add_epi16(_mm_mullo_epi16(_mm_unpacklo_epi8(va, zero), _mm_unpacklo_epi8(vb, zero)), bias);
            __m128i hi = _mm_add_epi16(_mm_mullo_epi16(_mm_unpackhi_epi8(va, zero), _mm_unpackhi_epi8(vb, zero)), bias);
            lo = _mm_srli_epi16(_mm_add_epi16(lo, _mm_srli_epi16(lo, 8)), 8);
            hi = _mm_srli_epi16(_mm_add_epi16(hi, _mm_srli_epi16(hi, 8)), 8);
            _mm_storeu_si128((__m128i *)(out + y * rowBytes + x), _mm_packus_epi16(lo, hi));
        }
        for (; x < width; x++) {
            unsigned t = (unsigned)(a[y * rowBytes + x] * b[y * rowBytes + x] + 128);
            out[y * rowBytes + x] = (uint8_t)((t + (t >> 8)) >> 8);
        }
    }
}

void sse2_box3_horizontal16(const uint16_t *src, uint16_t *dst, int width, int height, int stride) {
    for (int y = 0; y < height; y++) {
        int x = 1;
        for (; x + 8 <= width - 1; x += 8) {
            __m128i l = _mm_loadu_si128((const __m128i *)(src + y * stride + x - 1));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + y * stride + x));
            __m128i r = _mm_loadu_si128((const __m128i *)(src + y * stride + x + 1));
            __m128i s = _mm_avg_epu16(_mm_avg_epu16(l, r), c);
            _mm_storeu_si128((__m128i *)(dst + y * stride + x), s);
        }
        for (; x < width - 1; x++) {
            int lr = (src[y * stride + x - 1] + src[y * stride + x + 1] + 1) >> 1;
            dst[y * stride + x] = (uint16_t)((lr + src[y * stride + x] + 1) >> 1);
        }
    }
}

void sse2_difference16(const uint16_t *a, const uint16_t *b, uint16_t *out, int width, int height, int stride) {
    for (int y = 0; y < height; y++) {
        int x = 0;
        for (; x + 8 <= width; x += 8) {
            __m128i va = _mm_loadu_si128((const __m128i *)(a + y * stride + x));
            __m128i vb = _mm_loadu_si128((const __m128i *)(b + y * stride + x));
            __m128i d = _mm_or_si128(_mm_subs_epu16(va, vb), _mm_subs_epu16(vb, va));
            _mm_storeu_si128((__m128i *)(out + y * stride + x), d);
        }
        for (; x < width; x++) {
            int d = a[y * stride + x] - b[y * stride + x];
            out[y * stride + x] = (uint16_t)(d < 0 ? -d : d);
        }
    }
}

void sse2_brightness(const uint8_t *src, uint8_t *dst, int width, int height, int rowBytes, int amount) {
    // lift: amount in -128..127
    for (int y = 0; y < height; y++) {
        __m128i add = _mm_set1_epi16((short)amount);
        __m128i zero = _mm_setzero_si128();
        int x = 0;
        for (; x + 16 <= width; x += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(src + y * rowBytes + x));
            __m128i lo = _mm_adds_epi16(_mm_unpacklo_epi8(v, zero), add);
            __m128i hi = _mm_adds_epi16(_mm_unpackhi_epi8(v, zero), add);
            _mm_storeu_si128((__m128i *)(dst + y * rowBytes + x), _mm_packus_epi16(lo, hi));
        }
        for (; x < width; x++) {
            int v = src[y * rowBytes + x] + amount;
            dst[y * rowBytes + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}
