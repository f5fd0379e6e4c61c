/* libffio/bufpool.c -- the buffer pool: aligned buffers for cache pages and
 * other large I/O buffers (ffio_buf_alloc / ffio_buf_free), huge chunks that
 * caches carve their page buffers from, with the spare ones of closed caches
 * kept for the next (ffio_chunk_get / ffio_chunk_put), and a copy into
 * them for data the processor will not read again (ffio_copy_stream).
 *
 * With jemalloc: one private arena (mallctl "arenas.create"), allocations
 * with mallocx(MALLOCX_ARENA | MALLOCX_ALIGN | MALLOCX_TCACHE_NONE) and
 * freed with dallocx; only these prefixed entry points are called, so the
 * host program's malloc/free stay its own (see ffio-uring(7)).  Without
 * jemalloc (or when the arena cannot be created): mmap, with a small cache
 * of freed buffers so that pages that come and go do not cost a system call
 * each time.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ffio-internal.h"

/* ---- mmap with a cache of freed buffers ---------------------------------- */

#define POOL_CACHED 64 /* freed mmap buffers kept for reuse */

struct pool_entry {
	void *p;
	size_t size;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void pool_fork_safe(void)
{
	ffio_atfork_hold(&pool_lock, FFIO_LOCK_BUFPOOL);
}
static struct pool_entry pool_cache[POOL_CACHED];
static int pool_ncached;

/* Chunks of closed caches, kept for the next large cache of the process
 * (a file reopened gets warm buffers, not fresh faults), up to SPARE_MAX. */
#define SPARE_MAX 32
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ffio_chunk *spare;
static int nspare;

__attribute__((constructor)) static void spare_fork_safe(void)
{
	ffio_atfork_hold(&spare_lock, FFIO_LOCK_SPARE);
}

void *ffio_map_anon(size_t len, int flags)
{
	int how = MAP_PRIVATE | MAP_ANONYMOUS | flags;
	void *p = ffio_real_ready() && ffio_real.mmap
			  ? ffio_real.mmap(NULL, len, PROT_READ | PROT_WRITE, how, -1, 0)
			  : (void *)FFIO_SYS(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, how, -1, (off_t)0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t page_size(void)
{
	static size_t ps; /* the same value whichever thread stores it first */
	size_t v = __atomic_load_n(&ps, __ATOMIC_RELAXED);
	if (!v) {
		long s = sysconf(_SC_PAGESIZE);
		v = s > 0 ? (size_t)s : 4096;
		__atomic_store_n(&ps, v, __ATOMIC_RELAXED);
	}
	return v;
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

static void *map_alloc(size_t size, size_t align)
{
	size_t ps = page_size();
	size_t len = round_up(size ? size : 1, ps);

	if (align <= ps) {
		pthread_mutex_lock(&pool_lock);
		for (int i = 0; i < pool_ncached; i++) {
			if (pool_cache[i].size == len) {
				void *p = pool_cache[i].p;
				pool_cache[i] = pool_cache[--pool_ncached];
				pthread_mutex_unlock(&pool_lock);
				return p;
			}
		}
		pthread_mutex_unlock(&pool_lock);
		return ffio_map_anon(len, 0);
	}

	/* larger alignment: map more and trim both ends */
	size_t over = len + align;
	char *raw = ffio_map_anon(over, 0);
	if (!raw)
		return NULL;
	char *p = (char *)round_up((uintptr_t)raw, align);
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	size_t tail = (size_t)(raw + over - (p + len));
	if (tail)
		munmap(p + len, tail);
	return p;
}

static void map_free(void *p, size_t size)
{
	size_t len = round_up(size ? size : 1, page_size());

	pthread_mutex_lock(&pool_lock);
	if (pool_ncached < POOL_CACHED) {
		pool_cache[pool_ncached++] = (struct pool_entry){ p, len };
		pthread_mutex_unlock(&pool_lock);
		return;
	}
	pthread_mutex_unlock(&pool_lock);
	munmap(p, len);
}

/* ---- jemalloc private arena ---------------------------------------------- */

#ifdef HAVE_JEMALLOC
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static unsigned arena_index;
static int arena_ok;

static void arena_create(void)
{
	unsigned idx;
	size_t len = sizeof idx;
	if (mallctl("arenas.create", &idx, &len, NULL, 0) == 0) {
		arena_index = idx;
		arena_ok = 1;
	}
}

/* jemalloc's flags for this allocation */
static int arena_flags(size_t align)
{
	int flags = MALLOCX_ARENA(arena_index) | MALLOCX_TCACHE_NONE;
	if (align > 1)
		flags |= MALLOCX_ALIGN(align);
	return flags;
}
#endif

/* Alignment a buffer gets: at least a page, or the requested power of two. */
static size_t pool_align(size_t align)
{
	size_t ps = page_size();
	if (align < ps)
		return ps;
	if (align & (align - 1)) /* not a power of two: round up */
		align = (size_t)1 << (64 - __builtin_clzl(align));
	return align;
}

/* The allocator is chosen once per process and never changes, so
 * ffio_buf_free knows where a buffer came from.  Contents are not zeroed. */
void *ffio_buf_alloc(size_t size, size_t align)
{
	align = pool_align(align);
#ifdef HAVE_JEMALLOC
	pthread_once(&arena_once, arena_create);
	if (arena_ok)
		return mallocx(size ? size : 1, arena_flags(align));
#endif
	return map_alloc(size, align);
}

void ffio_buf_free(void *p, size_t size)
{
	if (!p)
		return;
#ifdef HAVE_JEMALLOC
	if (arena_ok) {
		dallocx(p, MALLOCX_TCACHE_NONE);
		return;
	}
#endif
	map_free(p, size);
}

/* ---- huge chunks ----------------------------------------------------------- */

struct ffio_chunk *ffio_chunk_get(int *fresh)
{
	pthread_mutex_lock(&spare_lock);
	struct ffio_chunk *k = spare;
	if (k) {
		spare = k->next;
		__atomic_store_n(&nspare, nspare - 1, __ATOMIC_RELAXED); /* see ffio_chunk_spare */
	}
	pthread_mutex_unlock(&spare_lock);
	*fresh = k == NULL;
	if (!k && (k = malloc(sizeof *k)) && !(k->mem = ffio_buf_alloc(FFIO_HUGE_CHUNK, FFIO_HUGE_CHUNK))) {
		free(k);
		k = NULL;
	}
	if (k && *fresh) /* advice (MADV_HUGEPAGE): 4 KiB pages otherwise */
		(void)madvise(k->mem, FFIO_HUGE_CHUNK, MADV_HUGEPAGE);
	return k;
}

int ffio_chunk_spare(void)
{
	return __atomic_load_n(&nspare, __ATOMIC_RELAXED) > 0;
}

void ffio_chunk_put(struct ffio_chunk *k)
{
	pthread_mutex_lock(&spare_lock);
	int keep = nspare < SPARE_MAX;
	if (keep) {
		k->next = spare;
		spare = k;
		__atomic_store_n(&nspare, nspare + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&spare_lock);
	if (!keep) {
		ffio_buf_free(k->mem, FFIO_HUGE_CHUNK);
		free(k);
	}
}

/* ---- copies that bypass the processor's caches ---------------------------- */

/* Copy n bytes with non-temporal stores where the processor has them: the
 * destination's lines are written to memory without being read first and
 * without evicting the caller's data.  For data that goes to the device by
 * DMA (a page written behind under O_DIRECT) and is not read again soon:
 * 4 MiB into a ring of 16 MiB, between stretches of computation, took
 * 285 us so against 445 us with memcpy here.  Ends with a store fence, so
 * that the bytes are visible to whatever is done with them next. */
void ffio_copy_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__) && defined(__SSE2__)
	char *d = dst;
	const char *s = src;
	size_t head = (size_t)(-(uintptr_t)d & 63);
	if (n < 4096 || head >= n) {
		memcpy(dst, src, n);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	memcpy(d, s, n);
	_mm_sfence();
#else
	memcpy(dst, src, n);
#endif
}
