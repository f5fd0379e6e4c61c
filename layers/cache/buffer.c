/* layers/cache/buffer.c -- page buffers: in guarded memory for a file the
 * cache may write (libffio/guard), else carved from huge chunks (the
 * buffer pool's, libffio/bufpool.c) for a large cache, or one from the
 * buffer pool per page; the scratch page of loads.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

/* Page buffers of a cache that has grown past HUGE_AFTER bytes are carved
 * from HUGE_CHUNK-aligned chunks backed by transparent huge pages: a big
 * file's first touch of its cache then costs one fault per 2 MiB instead
 * of one per 4 KiB (bench/netcdf_tilerec.sh), and small pages no mapping
 * each (bench/netcdf_seed.sh over cache:64k:1024:8: six readers took 2.3
 * times as long as raw with a mapping per page, 0.4-1.0 times carved).
 * Here a 4 KiB fault of fresh memory costs about 2.6 us (0.67 ms per MiB)
 * and a huge one 0.1-0.2 ms: the netCDF tile + record write (13.8 MB,
 * cache:1m:64:4) took 15.5 ms with chunks from 4 MiB, 14.4 ms from 1 MiB
 * (medians of 15).  Pages of half a chunk or more take one from the
 * first page: a chunk holds two of them at most, so at most one page's
 * memory waits unused.  On a machine where a 4 KiB fault costs 12 us
 * (and a huge one 0.3 ms), a new process writing a file through
 * cache:1m:64:4 in 4 KiB calls took, open to close: 12 KiB 0.96 ms with
 * the first page's buffer of its own, 1.06 ms carved; 128 KiB 1.42 ms and
 * 1.16 ms; 1 MiB 5.5 ms and 1.26 ms; the tile + record write 21.0 ms and
 * 16.7 ms (its ceiling 15.7 ms).  Smaller pages take no chunk in a cache
 * under HUGE_AFTER, as a small file never pays for a huge page it would
 * not fill (a 10 KB file: 0.20 ms from 1 MiB, 0.30 ms when its first
 * page was carved too, at 2.6 us a fault); a file that holds a chunk or more
 * when the cache opens takes one from its first page: a new process
 * reading a worker's tile (bench/netcdf_seed.sh's default file) took
 * 4.9 ms with its first page loaded into 4 KiB faults (0.8 ms of it, and
 * the slow load made the cache advise every run to the kernel as if the file
 * came from the device), 4.5 ms so; raw, 4.3 ms.
 * Pages that are not a multiple of a block, or do not divide the chunk,
 * have buffers of their own. */
#define HUGE_CHUNK FFIO_HUGE_CHUNK
#define HUGE_AFTER ((size_t)1 << 20)
#define HUGE_MIN_PAGE ((size_t)BLOCK)

/* May c's page buffers come from huge chunks?  Pages of a cache of its
 * own: of half a chunk or more, or once the cache holds HUGE_AFTER bytes,
 * or for a file of a chunk or more. */
static int huge_ok(const struct cache *c)
{
	return c->conf.page >= HUGE_MIN_PAGE && c->conf.page % BLOCK == 0 && HUGE_CHUNK % c->conf.page == 0 &&
	       c->pages.pool == &c->pages.own_pool &&
	       (c->conf.page >= HUGE_CHUNK / 2 || (size_t)c->pages.npages * c->conf.page >= HUGE_AFTER ||
		(c->size.below_known && c->size.below >= (off_t)HUGE_CHUNK));
}

/* The file's guard, opened at its first write into the cache (write.c's
 * cache_write_in), not before: a file open for writing that the cache
 * only reads for (ROMIO opens read-write; its reads around its own locks)
 * starts no guardian.  Not from a signal handler, which may run on a
 * small stack of its own (Python's faulthandler: its report's page then
 * overran that stack, starting the guardian); a later write guards the
 * file.  What a handler writes reaches the kernel before it returns
 * anyway. */
void cache_guard_start(struct cache *c)
{
	if (!c->guard.want || c->guard.tried || ffio_in_handler)
		return;
	c->guard.tried = 1;
	c->guard.file = ffio_guard_open(c->base.file->fd);
}

/* A buffer outside guarded memory (cache_buf_get). */
static char *plain_buf_get(struct cache *c, struct cpage *p, int *fresh)
{
	if (c->bufs.free_bufs) {
		char *b = c->bufs.free_bufs;
		memcpy(&c->bufs.free_bufs, b, sizeof(void *));
		p->chunked = 1;
		return b;
	}
	if (c->bufs.carve_left < c->conf.page && huge_ok(c)) {
		int chunk_fresh;
		struct ffio_chunk *k = ffio_chunk_get(&chunk_fresh);
		c->bufs.carve_fresh = chunk_fresh;
		if (k) {
			k->next = c->bufs.chunks;
			c->bufs.chunks = k;
			c->bufs.carve = k->mem;
			c->bufs.carve_left = HUGE_CHUNK;
		}
	}
	if (c->bufs.carve_left >= c->conf.page) {
		char *b = c->bufs.carve;
		c->bufs.carve += c->conf.page;
		c->bufs.carve_left -= c->conf.page;
		p->chunked = 1;
		*fresh = c->bufs.carve_fresh; /* never touched: the kernel gives zeros */
		return b;
	}
	return ffio_buf_alloc(c->conf.page, BLOCK);
}

/* A buffer for p->data: a guarded one once the file's guard is open
 * (cache_guard_start), else (guarding off, no guardian, guarded memory
 * full, nothing written yet) a freed carved one first, then a carved one,
 * else one of the buffer pool.  *fresh: its bytes are zeros. */
char *cache_buf_get(struct cache *c, struct cpage *p, int *fresh)
{
	char *b = NULL;

	*fresh = 0;
	p->chunked = 0;
	p->g = NULL;
	if (c->guard.file)
		b = ffio_guard_buf_get(c->guard.file, c->conf.page, &p->g, fresh);
	if (!b)
		b = plain_buf_get(c, p, fresh);
	if (b && *fresh) /* its first touch faults: see cache_note_load */
		c->bufs.fresh_ns = ffio_now_ns();
	return b;
}

/* Clean page p, made before the file's guard opened, is about to take the
 * application's bytes: its buffer moves to guarded memory, bytes and all
 * (left where it is when guarded memory is full, as a new page would be).
 * Nothing may hold its old buffer after: no I/O in flight on it, no hot
 * path armed on it. */
int cache_buf_guard(struct cache *c, struct cpage *p)
{
	struct guard_page *g;
	int fresh, err;

	if ((p->inflight || p->reading) && (err = cache_pg_wait(c, p)) < 0)
		return err;
	char *b = ffio_guard_buf_get(c->guard.file, c->conf.page, &g, &fresh);
	if (!b)
		return 0;
	memcpy(b, p->data, c->conf.page);
	cache_buf_put(c, p);
	p->data = b;
	p->g = g;
	p->chunked = 0;
	ffio_guard_bind(c->guard.file, g, p->pno);
	c->hot.off = -1;
	c->hotw.at.off = -1;
	return 0;
}

/* Would a new page's buffer be memory touched before: a freed carved one,
 * the rest of a chunk used before, or a spare chunk of a closed cache?
 * Then a new page costs no fresh faults (see cache_pg_new). */
int cache_buf_warm(const struct cache *c)
{
	if (c->bufs.free_bufs || (c->bufs.carve_left >= c->conf.page && !c->bufs.carve_fresh))
		return 1;
	return c->bufs.carve_left < c->conf.page && huge_ok(c) && ffio_chunk_spare();
}

/* Give p's buffer back (carved ones stay with the cache until release). */
void cache_buf_put(struct cache *c, struct cpage *p)
{
	if (p->g) {
		ffio_guard_buf_put(p->g);
		p->g = NULL;
	} else if (p->chunked) {
		memcpy(p->data, &c->bufs.free_bufs, sizeof(void *));
		c->bufs.free_bufs = p->data;
	} else {
		ffio_buf_free(p->data, c->conf.page);
	}
	p->data = NULL;
}

/* At close: the chunks go back to the buffer pool (kept as spares), the
 * scratch page too. */
void cache_bufs_release(struct cache *c)
{
	if (c->bufs.scratch)
		ffio_buf_free(c->bufs.scratch, c->conf.page);
	c->bufs.scratch = NULL;
	while (c->bufs.chunks) {
		struct ffio_chunk *k = c->bufs.chunks;
		c->bufs.chunks = k->next;
		ffio_chunk_put(k);
	}
	c->bufs.carve = NULL;
	c->bufs.carve_left = 0;
	c->bufs.free_bufs = NULL;
}

int cache_get_scratch(struct cache *c)
{
	if (!c->bufs.scratch && !(c->bufs.scratch = ffio_buf_alloc(c->conf.page, BLOCK)))
		return -ENOMEM;
	return 0;
}
