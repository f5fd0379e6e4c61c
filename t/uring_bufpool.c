/* t/uring_bufpool.c -- the buffer pool: alignment of every size and
 * alignment asked for, every byte usable, buffers reused after free, and
 * the host's malloc/free not replaced by the pool's allocator. */
#include "uring_common.h"

#include <dlfcn.h>
#include <stdint.h>

static const char *owner(const char *sym)
{
	void *p = dlsym(RTLD_DEFAULT, sym);
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

int main(void)
{
	static const size_t sizes[] = { 1, 3000, 4096, 65536, 1 << 20, (1 << 20) + 17 };
	static const size_t aligns[] = { 0, 512, 4096, 65536, 2 << 20 };
	tap_plan(5);

	int misaligned = 0, failed = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
		for (size_t j = 0; j < sizeof aligns / sizeof *aligns; j++) {
			size_t a = aligns[j] < 4096 ? 4096 : aligns[j];
			unsigned char *p = ffio_buf_alloc(sizes[i], aligns[j]);
			if (!p) {
				failed++;
				continue;
			}
			misaligned += (uintptr_t)p % a != 0;
			memset(p, 0xA5, sizes[i]);
			failed += p[sizes[i] - 1] != 0xA5;
			ffio_buf_free(p, sizes[i]);
		}
	tap_is(failed, 0, "every size and alignment allocated and writable");
	tap_is(misaligned, 0, "every buffer aligned to max(page, asked)");

	/* many pages that come and go: distinct while live, reused after */
	void *live[32];
	int dup = 0;
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 32; i++) {
			live[i] = ffio_buf_alloc(65536, 4096);
			memset(live[i], i, 65536);
		}
		for (int i = 0; i < 32; i++)
			for (int k = 0; k < i; k++)
				dup += live[i] == live[k];
		for (int i = 0; i < 32; i++)
			dup += ((unsigned char *)live[i])[65535] != i;
		for (int i = 0; i < 32; i++)
			ffio_buf_free(live[i], 65536);
	}
	tap_is(dup, 0, "3200 live pages never overlap");

	const char *m = owner("malloc"), *f = owner("free");
	tap_ok(!strstr(m, "jemalloc"), "the host's malloc is not the pool's (%s)", m);
	tap_ok(!strstr(f, "jemalloc"), "the host's free is not the pool's (%s)", f);
	return tap_done();
}
