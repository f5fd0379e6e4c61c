/* layers/cache/cache.c -- the cache layer's methods that are not reads or
 * writes: open (parameters, the page budget, the hash table), close, size,
 * truncate, flush, fsync, invalidate, discard, statistics (.diag,
 * ffgetstats); and the layer's one exported symbol,
 * its method table ffio_layer_cache.  cache.h describes the cache.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

/* ---- size, truncate, flush, fsync, invalidate --------------------------- */

static int cache_size(struct ffio_layer *l, off_t *len)
{
	int err;
	*len = logical_size(CACHE(l), &err);
	return err;
}

static int cache_truncate(struct ffio_layer *l, off_t len)
{
	struct cache *c = CACHE(l);
	int err;

	if ((err = cache_wait_all(c)) < 0)
		return err;
	/* In flight until the pages agree: a guardian finishing it writes no
	 * marked byte at or past len (libffio/guard). */
	if (c->guard.file)
		ffio_guard_trunc_begin(c->guard.file, len);
	if ((err = ffio_below_truncate(l, len)) < 0) {
		if (c->guard.file)
			ffio_guard_trunc_end(c->guard.file);
		return err;
	}
	struct cpage *p = c->pages.lru.next, *next;
	for (; p != &c->pages.lru; p = next) {
		next = p->next;
		off_t ps = pg_start(c, p->pno);
		if (ps >= len) {
			cache_pg_free(c, p);
		} else if (ps + (off_t)c->conf.page > len) {
			uint32_t cut = (uint32_t)(len - ps);
			if (p->g)
				ffio_guard_unmark(p->g, cut, (uint32_t)c->conf.page);
			if (p->next_ext && cache_ext_remove(c, p, cut, (uint32_t)c->conf.page) < 0) {
				cache_pg_free(c, p); /* out of memory: drop the page's data */
				continue;
			}
			memset(p->data + cut, 0, c->conf.page - cut);
			cache_valid_cut(p, cut);
		}
	}
	/* recount the dirty pages: cutting may have emptied some */
	c->pages.ndirty = 0;
	for (p = c->pages.lru.next; p != &c->pages.lru; p = p->next)
		c->pages.ndirty += p->next_ext != 0;
	c->size.below = len;
	c->size.below_known = 1;
	if (c->size.cached_end > len)
		c->size.cached_end = len;
	if (c->guard.file)
		ffio_guard_trunc_end(c->guard.file);
	return 0;
}

static int cache_flush(struct ffio_layer *l)
{
	CACHE(l)->big.return_ns = 0; /* I/O, not work: see behind_pays */
	int err = cache_flush_all(CACHE(l));
	int e2 = ffio_below_flush(l);
	return err < 0 ? err : e2;
}

static int cache_fsync(struct ffio_layer *l, int datasync)
{
	struct cache *c = CACHE(l);
	c->big.return_ns = 0; /* I/O, not work: see behind_pays */
	int err = cache_flush_all(c);
	int e2 = ffio_below_fsync(l, datasync);
	cache_drop_clean(c);
	c->size.below_known = 0;
	cache_ra_forget(c);
	return err < 0 ? err : e2;
}

static void recompute_cached_end(struct cache *c)
{
	c->size.cached_end = 0;
	for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru; p = p->next)
		if (p->next_ext) {
			off_t e = pg_start(c, p->pno) + p->ext[p->next_ext - 1].hi;
			if (e > c->size.cached_end)
				c->size.cached_end = e;
		}
}

static int cache_invalidate(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = cache_wait_all(c);
	if (err < 0)
		return err;
	c->pages.removed_at_drop = c->pages.removed;
	cache_drop_clean(c);
	c->pages.drops++; /* (aside.c: reads around that come back) */
	/* What stays is dirty.  A page made known past the end of the file
	 * holds zeros where it was not written: the end of the file then,
	 * which another process may have moved since (its bytes are read
	 * again from below when wanted). */
	for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru; p = p->next)
		if (p->zeros)
			p->known = p->zeros = 0;
	c->size.below_known = 0;
	cache_ra_forget(c);
	recompute_cached_end(c);
	return ffio_below_invalidate(l);
}

/* Drop everything without writing it. */
static int cache_discard(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = cache_wait_all(c);
	if (err < 0)
		return err;
	while (c->pages.lru.next != &c->pages.lru)
		cache_pg_free(c, c->pages.lru.next);
	c->size.cached_end = 0;
	c->size.below_known = 0;
	return 0;
}

/* ---- open, close, statistics -------------------------------------------- */

static int cache_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct cache *c = CACHE(l);
	const struct ffio_layer_spec *ls = l->spec;
	int err, bflags;

	c->conf.page = (size_t)ls->arg[FFIO_CACHE_PAGE];
	c->conf.limit = (long)ls->arg[FFIO_CACHE_PAGES];
	c->conf.ahead = (int)ls->arg[FFIO_CACHE_AHEAD];
	c->conf.flags = ls->flags;
	if (c->conf.page < 1)
		c->conf.page = 1;
	if (c->conf.page > (size_t)1 << 30)
		c->conf.page = (size_t)1 << 30;
	if (c->conf.limit < 1)
		c->conf.limit = 1;
	c->conf.direct = (c->conf.flags & FFIO_CACHE_DIRECT) != 0;
	if (c->conf.direct)
		c->conf.page = (c->conf.page + BLOCK - 1) & ~(size_t)(BLOCK - 1);
	c->pages.lru.next = c->pages.lru.prev = &c->pages.lru;

	/* Open below readable when possible (sieving, partial pages). */
	bflags = flags & ~O_APPEND;
	c->conf.can_read = (flags & O_ACCMODE) != O_WRONLY;
	c->guard.want = (flags & O_ACCMODE) != O_RDONLY;
	if ((flags & O_ACCMODE) == O_WRONLY)
		bflags = (bflags & ~O_ACCMODE) | O_RDWR;
	if (c->conf.direct)
		bflags |= O_DIRECT;
	err = ffio_below_open(l, dirfd, path, bflags, mode);
	if (err == -EACCES && (flags & O_ACCMODE) == O_WRONLY) {
		bflags = (bflags & ~O_ACCMODE) | O_WRONLY;
		err = ffio_below_open(l, dirfd, path, bflags, mode);
	} else if (err == 0) {
		c->conf.can_read = 1;
	}
	if (err == -EINVAL && c->conf.direct) {
		static int once;
		ffio_log_once(&once, "%s: O_DIRECT not supported here; the cache runs without it", path);
		c->conf.direct = 0;
		bflags &= ~O_DIRECT;
		err = ffio_below_open(l, dirfd, path, bflags, mode);
	}
	if (err < 0)
		return err;
	/* Without AHEAD the kernel's read-ahead stays on. */
	c->ra.kernel_armed = c->conf.ahead > 0 && c->conf.can_read && !c->conf.direct;

	size_t hsize = 16;
	long want = c->conf.limit;
	if (c->conf.flags & FFIO_CACHE_SHARED) {
		struct ffio_layer_spec *mls = (struct ffio_layer_spec *)ls;
		pthread_mutex_lock(&mls->shared_lock);
		if (!mls->shared) {
			struct cpool *pool = calloc(1, sizeof *pool);
			if (pool) {
				pthread_mutex_init(&pool->lock, NULL);
				pool->limit = c->conf.limit;
			}
			mls->shared = pool;
		}
		c->pages.pool = mls->shared;
		if (c->pages.pool) {
			pthread_mutex_lock(&c->pages.pool->lock);
			c->pages.pool->nfiles++;
			pthread_mutex_unlock(&c->pages.pool->lock);
		}
		pthread_mutex_unlock(&mls->shared_lock);
	}
	if (!c->pages.pool) {
		c->pages.pool = &c->pages.own_pool;
		pthread_mutex_init(&c->pages.own_pool.lock, NULL);
		c->pages.own_pool.limit = c->conf.limit;
		c->pages.own_pool.nfiles = 1;
	}
	while ((long)hsize < 2 * want && hsize < ((size_t)1 << 24))
		hsize *= 2;
	c->pages.hash = calloc(hsize, sizeof *c->pages.hash);
	if (!c->pages.hash) {
		ffio_below_close(l);
		return -ENOMEM;
	}
	c->pages.hmask = hsize - 1;
	cache_evict_open(c);
	c->big.around_ns_per_mib = 250000; /* a first guess: 4 GiB/s into the page cache */
	c->big.copy_ns_per_mib = 100000;   /* and 10 GiB/s for a copy */
	/* Expect asynchronous completion over uring (learned at each submit:
	 * a uring without a ring completes at once, as sys). */
	for (struct ffio_layer *b = l->below; b; b = b->below)
		if (!b->below && b->ops == &ffio_layer_uring && !ffio_layer_uring.unavailable)
			c->async.below = 1;
	return 0;
}

static void report(struct cache *c)
{
	const struct cache_stats *s = &c->stats;
	char label[128], text[2048];
	int n;

	ffio_layer_label(&c->base, label, sizeof label);
	n = snprintf(text, sizeof text,
		     "ffio cache %s: %s\n"
		     "  reads %" PRIu64 " (%" PRIu64 " bytes), writes %" PRIu64 " (%" PRIu64 " bytes)\n"
		     "  page hits %" PRIu64 ", misses %" PRIu64 ", read-ahead used %" PRIu64 ", wasted %" PRIu64
		     ", read advice below %" PRIu64 ", fetches along runs %" PRIu64 "\n"
		     "  below: %" PRIu64 " reads (%" PRIu64 " bytes), %" PRIu64 " writes (%" PRIu64 " bytes); %" PRIu64 " requests went around the cache\n"
		     "  asynchronous: %" PRIu64 " writes, %" PRIu64 " reads\n"
		     "  evictions: %" PRIu64 " clean, %" PRIu64 " complete dirty, %" PRIu64 " dirty with gaps"
		     "; %" PRIu64 " of them in a loop, most recent first\n"
		     "  memory: at most %ld of %ld pages held (%zu KiB of page buffers)\n",
		     label, c->base.file->path, s->n_read, s->b_read, s->n_write, s->b_write, s->hits,
		     s->misses, s->ra_used, s->ra_wasted, s->ra_advice, s->run_loads, s->below_reads, s->below_rbytes, s->below_writes,
		     s->below_wbytes, s->bypass, s->async_writes, s->async_reads, s->ev_clean,
		     s->ev_complete, s->ev_gaps, s->ev_loop, c->pages.npages_peak, c->conf.limit,
		     (size_t)c->pages.npages_peak * (c->conf.page >> 10));
	if (n > 0 && (size_t)n < sizeof text && is_sieve(c))
		n += snprintf(text + n, sizeof text - (size_t)n,
			      "  sieve: %" PRIu64 " flushes filled gaps under a lock, %" PRIu64
			      " wrote the written bytes alone (no lock to be had); %" PRIu64
			      " waits for another process's lock\n",
			      s->sieve_locked, s->sieve_unlocked, s->sieve_waits);
	if (n > 0)
		ffio_log_raw(text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

static void release(struct cache *c)
{
	while (c->pages.lru.next != &c->pages.lru)
		cache_pg_free(c, c->pages.lru.next);
	cache_bufs_release(c);
	cache_evict_release(c);
	cache_wmaps_release(c);
	free(c->pages.hash);
	c->pages.hash = NULL;
	ffio_guard_close(c->guard.file); /* (no page of it left) */
	c->guard.file = NULL;
	c->guard.tried = 0;
	if (c->pages.pool != &c->pages.own_pool) {
		pthread_mutex_lock(&c->pages.pool->lock);
		c->pages.pool->nfiles--;
		pthread_mutex_unlock(&c->pages.pool->lock);
	}
}

static int cache_close(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = cache_flush_all(c);

	if (c->conf.flags & FFIO_CACHE_DIAG)
		report(c);
	if (c->async.nreq > 0) { /* cannot free buffers in flight: keep them */
		ffio_log("%s: cache: %ld requests never completed", c->base.file->path, c->async.nreq);
		return ffio_below_close(l);
	}
	release(c);
	int e2 = ffio_below_close(l);
	return err < 0 ? err : e2;
}

static int cache_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	struct cache *c = CACHE(l);
	st->position = l->index;
	st->count[FFIO_STAT_READ] = c->stats.n_read;
	st->bytes[FFIO_STAT_READ] = c->stats.b_read;
	st->count[FFIO_STAT_WRITE] = c->stats.n_write;
	st->bytes[FFIO_STAT_WRITE] = c->stats.b_write;
	st->hits = c->stats.hits;
	st->misses = c->stats.misses;
	st->readahead_used = c->stats.ra_used;
	st->readahead_wasted = c->stats.ra_wasted;
	st->evictions = c->stats.ev_clean + c->stats.ev_complete + c->stats.ev_gaps;
	return 0;
}

static const struct ffio_flag cache_flags[] = {
	{.name = "direct", .bit = FFIO_CACHE_DIRECT},
	{.name = "wt", .bit = FFIO_CACHE_WT},
	{.name = "diag", .bit = FFIO_CACHE_DIAG},
	{.name = "shared", .bit = FFIO_CACHE_SHARED},
	{.name = "sieve", .bit = FFIO_CACHE_SIEVE},
	{NULL},
};

static const struct ffio_param cache_params[] = {
	{.name = "page", .type = FFIO_P_SIZE, .def = 1 << 20, .min = 1, .max = (int64_t)1 << 30},
	{.name = "pages", .type = FFIO_P_COUNT, .def = 16, .min = 1, .max = 1 << 20},
	{.name = "ahead", .type = FFIO_P_COUNT, .def = 2, .min = 0, .max = 1024},
	{NULL},
};

const struct ffio_layer_ops ffio_layer_cache = {
	.name = "cache",
	.flags = cache_flags,
	.params = cache_params,
	.instance_size = sizeof(struct cache),
	.open = cache_open,
	.close = cache_close,
	.pread = cache_pread,
	.pwrite = cache_pwrite,
	.passed = cache_passed,
	.read_hit = cache_read_hit,
	.write_hit = cache_write_hit,
	.flush = cache_flush,
	.fsync = cache_fsync,
	.truncate = cache_truncate,
	.size = cache_size,
	.invalidate = cache_invalidate,
	.stats = cache_stats,
	.discard = cache_discard,
};
