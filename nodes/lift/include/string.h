typedef unsigned long size_t;
void *memset(void *p, int value, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
