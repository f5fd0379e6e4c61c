/* libffio/bufpool.c -- aligned buffers for cache pages (placeholder: mmap). */
#include "config.h"
#include <sys/mman.h>
#include "ffio-internal.h"

void *ffio_buf_alloc(size_t size, size_t align)
{
	(void)align;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void ffio_buf_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}
