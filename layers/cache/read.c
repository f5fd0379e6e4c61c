/* layers/cache/read.c -- the read method: from pages (loading what is
 * missing, along runs or strided records where those hold), around the
 * cache for large reads, and the read-ahead that follows each read.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "cache.h"

/* Read [off, off + n) from below straight into the caller's buffer, around
 * the cache, with the kernel's read-ahead on when it is large
 * (cache_kernel_readahead_lift); *got is what arrived (short at the end of
 * the file below). */
static int read_through(struct cache *c, void *buf, size_t n, off_t off, size_t *got)
{
	struct iovec iov = {buf, n};
	int lifted = cache_kernel_readahead_lift(c, n), err;

	c->stats.bypass++;
	err = cache_below_readv(c, &iov, 1, off, got);
	if (lifted)
		cache_kernel_readahead_drop(c);
	return err;
}

/* A read around the cache, n bytes the caller knows lie below the logical
 * end: what the file below lacks of them is a hole (zeros). */
static ssize_t read_around(struct cache *c, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	int err;

	if ((err = read_through(c, buf, n, off, &got)) < 0)
		return err;
	if (got < n)
		memset((char *)buf + got, 0, n - got); /* a hole up to the logical end */
	return (ssize_t)n;
}

/* Where the bytes p holds from lo on, in the piece that holds [lo, hi),
 * end (pg_holds: the whole page if known, else one dirty extent or one
 * valid range); 0 if it does not hold them. */
static uint32_t held_to(const struct cache *c, const struct cpage *p, uint32_t lo, uint32_t hi)
{
	int at;

	if (p->known)
		return (uint32_t)c->conf.page;
	if (ext_covers(p, lo, hi))
		return p->ext[ext_after(p, lo)].hi;
	return valid_covers(p, lo, hi, &at) ? p->valid[at].hi : 0;
}

/* A read of a quarter of a page or more, the first since the file was
 * opened, synced or its clean data dropped (no read pattern known: see
 * struct cache_ra), into pages none of which the cache holds: it goes
 * around the cache, as the kernel would read it.  Loaded, its pages would
 * cost up to four times its bytes, for reads that follow it nowhere: the
 * program that asks so much at once keeps it in a buffer of its own.
 * ROMIO's data-sieving reads are such reads (an extent of 0.5 MB of each
 * rank's blocks, read again after each barrier dropped the page): on the
 * GlusterFS volume of make bench-dfs, 4 ranks reading theirs 3 times took
 * 15.1 ms through 1 MiB pages loaded whole, against 7.9 ms raw (medians
 * of 7).  So is PnetCDF's header read of 256 KiB.  The reads after it
 * are left to the pages and their read-ahead, which learn the pattern from
 * it: records along a stride are loaded and hinted from the second on. */
static int lone_large(struct cache *c, size_t n, off_t off)
{
	if (n < c->conf.page / 4 || c->ra.valid)
		return 0;
	for (int64_t pno = off / (off_t)c->conf.page; pno <= (off + (off_t)n - 1) / (off_t)c->conf.page; pno++)
		if (pg_find(c, pno))
			return 0;
	return 1;
}

/* After a read hit at off of n bytes: arm the next read of the steady
 * pattern (struct cache_hot) when every test the hit path and
 * cache_ra_steady would make of it holds now, and keeps holding, no call
 * coming between, for the reads one step after another up to hot.last:
 * no read is in flight into the page touched last, the file's sizes are
 * known and within the pattern's, the page is no read-ahead waiting for
 * its first use; a read starting up to last ends before the page's last
 * byte, within the logical size and within the bytes the page holds from
 * the next read on, and its read-ahead probe lies before steady_end. */
static void hot_arm(struct cache *c, off_t off, size_t n, off_t size)
{
	struct cpage *p = c->pages.lru.prev;
	off_t step = c->ra.steady_step;

	c->hot.off = -1;
	if (!c->ra.steady_end || step <= 0 || p == &c->pages.lru || p->reading || p->ra ||
	    !c->size.below_known || size > c->ra.steady_size || c->pages.removed != c->ra.steady_removed ||
	    c->ra.last_off != off || c->ra.last_len != n)
		return;
	off_t start = pg_start(c, p->pno), next = off + step;
	off_t last = start + (off_t)c->conf.page - 1 - (off_t)n;
	if (size - (off_t)n < last)
		last = size - (off_t)n;
	if (c->ra.steady_end - step - 1 < last)
		last = c->ra.steady_end - step - 1;
	if (next < start || next > last)
		return;
	uint32_t held = held_to(c, p, (uint32_t)(next - start), (uint32_t)(next - start + (off_t)n));
	if (start + (off_t)held - (off_t)n < last)
		last = start + (off_t)held - (off_t)n;
	if (next > last)
		return;
	c->hot = (struct cache_hot){.off = next, .len = n, .step = step, .last = last,
				    .calls = c->base.file->stack_calls, .data = p->data, .start = start};
}

/* The armed read: what the hit path below would do for it, no test made
 * again. */
static ssize_t read_hot(struct cache *c, void *buf, size_t n, off_t off)
{
	const char *src = c->hot.data + (off - c->hot.start);
	off_t next = off + c->hot.step;

	c->stats.n_read++;
	c->stats.b_read += n;
	c->stats.hits++;
	c->big.return_ns = 0;
	cache_ra_keep(c, off);
	c->hot.off = next <= c->hot.last ? next : -1;
	c->hotw.at.off = -1;
	copy_record(buf, src, n); /* last: nothing of c live across a call */
	return (ssize_t)n;
}

/* The hit path (ffio_layer_ops.read_hit): a small read that lies within
 * the logical end and within the page touched last (the LRU list's tail:
 * pg_touch has nothing to do), which holds its bytes and has no read in
 * flight: what cache_pread does for it, counters and read-ahead included,
 * without the rest.  0, nothing changed, otherwise. */
__attribute__((noinline)) static ssize_t read_hit(struct cache *c, void *buf, size_t n, off_t off)
{
	struct cpage *p = c->pages.lru.prev;

	if (p == &c->pages.lru || p->reading || n > HIT_MAX || !c->size.below_known ||
	    __atomic_load_n(&c->pages.pool->starved, __ATOMIC_RELAXED))
		return 0;
	uint64_t at = (uint64_t)(off - pg_start(c, p->pno));
	off_t size = c->size.below > c->size.cached_end ? c->size.below : c->size.cached_end;
	if (at >= c->conf.page || n >= c->conf.page - at || off + (off_t)n > size)
		return 0;
	if (!pg_holds(p, (uint32_t)at, (uint32_t)(at + n)))
		return 0;
	c->stats.n_read++;
	c->stats.b_read += n;
	c->stats.hits++;
	c->big.return_ns = 0; /* I/O, not work: see behind_pays */
	if (p->ra) {
		p->ra = 0;
		c->stats.ra_used++;
	}
	copy_record(buf, p->data + at, n);
	if (!cache_ra_steady(c, off, n, size))
		cache_read_ahead(c, off, n, size);
	hot_arm(c, off, n, size);
	c->hotw.at.off = -1;
	return (ssize_t)n;
}

/* The armed read first, alone: a leaf that saves no register. */
ssize_t cache_read_hit(struct ffio_layer *l, void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);

	if (cache_hot_due(c, &c->hot, off, n))
		return read_hot(c, buf, n, off);
	return read_hit(c, buf, n, off);
}

/* Does the read go around the cache: large, or lone and large enough
 * (lone_large), into a buffer the layer below takes as it is? */
static int goes_around(struct cache *c, const void *buf, size_t n, off_t off)
{
	return (cache_around(c, n, off) || lone_large(c, n, off)) && aligned(c, buf, n, off);
}

/* Does a small read of [off, off + n) go around the cache as the loop of
 * cache_pread would send it, where the size is not needed: within one
 * page, absent, small reads aside, no read pattern known (so neither runs
 * nor strided records, which load)?  cache_aside_read counts it. */
static int alone_aside(struct cache *c, size_t n, off_t off)
{
	int64_t pno = off / (off_t)c->conf.page;
	return c->aside.reads_on && !c->ra.valid && n > 0 && (off + (off_t)n - 1) / (off_t)c->conf.page == pno &&
	       !cache_ra_runs(c) && !pg_find(c, pno) && cache_aside_read(c, n, off);
}

ssize_t cache_pread(struct ffio_layer *l, void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);
	char *dst = buf;
	size_t done = 0;
	off_t size;
	int err;

	c->stats.n_read++;
	c->big.return_ns = 0; /* I/O, not work: see behind_pays */
	if (__atomic_load_n(&c->pages.pool->starved, __ATOMIC_RELAXED)) /* approximate: read unlocked */
		cache_pool_shrink(c);
	if (c->size.cached_end == 0 && goes_around(c, buf, n, off)) {
		/* No write of this open is cached: the file below holds every
		 * byte, and its size need not be asked for (a short read is its
		 * end).  Program I reads this way after each open. */
		size_t got = 0;
		cache_around_ahead(c, off, n);
		if ((err = read_through(c, buf, n, off, &got)) < 0)
			return err;
		c->stats.b_read += got;
		return (ssize_t)got;
	}
	if (c->size.cached_end == 0 && alone_aside(c, n, off)) {
		/* The same for a small read that goes around an absent page
		 * (aside.c) while the read pattern is forgotten (as after each
		 * drop of the clean data: one statx a read, for PnetCDF's gets
		 * under OMPIO, which drop it at every set_view). */
		size_t got = 0;
		uint64_t t0 = cache_aside_clock(c);
		if ((err = read_through(c, buf, n, off, &got)) < 0)
			return err;
		cache_aside_timed(c, got, t0);
		c->stats.b_read += got;
		cache_read_ahead(c, off, n, INT64_MAX); /* (the pattern's first read: no size wanted) */
		return (ssize_t)got;
	}
	size = logical_size(c, &err);
	if (err < 0)
		return err;
	if (off >= size || n == 0)
		return 0;
	if ((off_t)n > size - off)
		n = (size_t)(size - off);
	c->stats.b_read += n;
	if (goes_around(c, buf, n, off)) {
		int64_t first = off / (off_t)c->conf.page, last = (off + (off_t)n - 1) / (off_t)c->conf.page;
		/* A write-back the read needs and that fails is the file's
		 * error, reported by its next write, fsync or close, never by
		 * the read: the failed bytes are forgotten, the read shows
		 * what the file has.  (A lone large read holds no page: there
		 * is nothing to flush, only writes in flight to wait for.) */
		if ((err = cache_flush_pages(c, first, last)) < 0)
			ffio_file_set_error(c->base.file, err);
		if ((err = cache_wait_all(c)) < 0)
			return err;
		cache_around_ahead(c, off, n);
		return read_around(c, buf, n, off);
	}
	off_t run0 = c->ra.valid && off == c->ra.last_off + (off_t)c->ra.last_len ? c->run.start : off;
	off_t below_end = 0; /* pages past it are zeros: whole ones cost no read */
	int runs_now = cache_ra_runs(c) && disk_size(c, &below_end) == 0;
	while (done < n) {
		off_t o = off + (off_t)done;
		int64_t pno;
		uint32_t lo;
		size_t len = pg_span(c, o, n - done, &pno, &lo);
		struct cpage *p = pg_find(c, pno);
		uint32_t hi = lo + (uint32_t)len;
		int runs = runs_now && pg_start(c, pno) < below_end;

		if (p && p->reading && (err = cache_pg_wait(c, p)) < 0) /* read-ahead on its way */
			return done ? (ssize_t)done : err;
		int holds = p && pg_holds(p, lo, hi);
		if (!holds && (!p || !p->next_ext) && !runs && !cache_ra_sparse(c) && cache_aside_read(c, n, o)) {
			/* a page to be loaded whole, none of its bytes the
			 * application's, for small reads that gain nothing
			 * from such loads (aside.c) */
			uint64_t t0 = cache_aside_clock(c);
			ssize_t r = read_around(c, dst + done, len, o);
			if (r < 0)
				return done ? (ssize_t)done : r;
			cache_aside_timed(c, len, t0);
			done += len;
			continue;
		}
		if (p && !holds) {
			c->stats.misses++;
			if (!p->next_ext && runs)
				err = cache_run_load(c, p, lo, hi, run0);
			else if (!p->next_ext && cache_ra_sparse(c))
				err = cache_pg_load_range(c, p, lo, hi);
			else {
				uint64_t t0 = ffio_now_ns();
				if ((err = cache_pg_fill(c, p)) == 0)
					cache_note_load(c, (off_t)c->conf.page, t0);
			}
			if (err < 0)
				return done ? (ssize_t)done : err;
		} else if (p) {
			c->stats.hits++;
			if (p->ra) {
				p->ra = 0;
				c->stats.ra_used++;
			}
		} else if (runs || cache_ra_sparse(c)) {
			/* absent: what the run needs of it, or just this strided record */
			uint64_t t0 = ffio_now_ns();
			c->stats.misses++;
			if ((err = cache_pg_new(c, pno, &p)) == 0 &&
			    (err = runs ? cache_run_load(c, p, lo, hi, run0)
					: cache_pg_load_range(c, p, lo, hi)) < 0)
				cache_pg_free(c, p);
			if (err == 0 && !runs)
				cache_note_load(c, (off_t)(hi - lo), t0);
			if (err < 0 && err != -EAGAIN)
				return done ? (ssize_t)done : err;
			if (err < 0) {
				ssize_t r = read_around(c, dst + done, len, o);
				if (r < 0)
					return done ? (ssize_t)done : r;
				done += len;
				continue;
			}
		} else {
			/* absent: fetch it with the absent pages after it, in one request */
			int64_t pnos[64];
			int64_t lastp = (off + (off_t)n - 1) / (off_t)c->conf.page;
			int m = 0;
			long cap = c->conf.limit / 2 > 0 ? c->conf.limit / 2 : 1;
			while (m < 64 && m < cap && pno + m <= lastp && (m == 0 || !pg_find(c, pno + m))) {
				pnos[m] = pno + m;
				m++;
			}
			c->stats.misses++;
			uint64_t t0 = ffio_now_ns();
			if ((err = cache_load_missing(c, pnos, m, 0)) < 0)
				return done ? (ssize_t)done : err;
			cache_note_load(c, (off_t)m * (off_t)c->conf.page, t0);
			if (!(p = pg_find(c, pno))) {
				ssize_t r = read_around(c, dst + done, len, o);
				if (r < 0)
					return done ? (ssize_t)done : r;
				done += len;
				continue;
			}
		}
		pg_touch(c, p);
		memcpy(dst + done, p->data + lo, len);
		done += len;
	}
	if (!cache_ra_steady(c, off, n, size))
		cache_read_ahead(c, off, n, size);
	return (ssize_t)n;
}
