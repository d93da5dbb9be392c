typedef unsigned long size_t;
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void free(void *p);
int abs(int v);
#define NULL ((void *)0)
