/* t/uring_bufpool.c -- the buffer pool: alignment of every size and
 * alignment asked for, every byte usable, buffers reused after free, the
 * host's malloc/free not replaced by the pool's allocator; and the
 * streaming copy into pool buffers exact at every alignment and size,
 * touching no byte around the destination. */
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
	tap_plan(6);

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

	/* ffio_copy_stream: sizes below, at and around its thresholds, at
	 * every offset of source and destination within a cache line */
	enum { SPAN = (1 << 20) + 256 };
	unsigned char *src = ffio_buf_alloc(SPAN, 4096), *dst = ffio_buf_alloc(SPAN + 128, 4096);
	static const size_t lens[] = { 0, 1, 63, 64, 4095, 4096, 4097, 65536 + 7, 1 << 20 };
	int wrong = src == NULL || dst == NULL;
	for (size_t i = 0; i < SPAN && !wrong; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (size_t l = 0; l < sizeof lens / sizeof *lens && !wrong; l++)
		for (size_t so = 0; so < 64; so += 13)
			for (size_t d = 0; d < 64; d += 7) {
				memset(dst, 0x5A, SPAN + 128);
				ffio_copy_stream(dst + 64 + d, src + so, lens[l]);
				wrong += memcmp(dst + 64 + d, src + so, lens[l]) != 0;
				for (size_t k = 0; k < 64 + d; k++)
					wrong += dst[k] != 0x5A;
				for (size_t k = 64 + d + lens[l]; k < SPAN + 128; k++)
					wrong += dst[k] != 0x5A;
			}
	tap_is(wrong, 0, "the streaming copy is exact at every alignment, nothing around it touched");
	ffio_buf_free(src, SPAN);
	ffio_buf_free(dst, SPAN + 128);

	const char *m = owner("malloc"), *f = owner("free");
	tap_ok(!strstr(m, "jemalloc"), "the host's malloc is not the pool's (%s)", m);
	tap_ok(!strstr(f, "jemalloc"), "the host's free is not the pool's (%s)", f);
	return tap_done();
}
