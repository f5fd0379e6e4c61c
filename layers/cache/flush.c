/* layers/cache/flush.c -- writing dirty data below: adjacent dirty bytes
 * gathered into runs, each one vector request (asynchronous where that
 * pays); sieving and O_DIRECT alignment; the flush of a set of pages, of a
 * range, of everything; dropping clean pages.
 */
#include "config.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

/* Runs shorter than this are written synchronously: small buffered writes
 * through io_uring are punted to kernel workers and cost more than a
 * pwrite (bench/uring_strided -w). */
#define SYNC_RUN 4096

struct run {
	struct iovec iov[MAX_IOV];
	int cnt;
	off_t off;
	size_t len;
	size_t first, last; /* pages of the set in this run */
	off_t end;          /* the furthest byte any run of this flush reaches */
};

static int cmp_pno(const void *a, const void *b)
{
	int64_t x = (*(struct cpage *const *)a)->pno, y = (*(struct cpage *const *)b)->pno;
	return x < y ? -1 : x > y;
}

/* Submit the run as one asynchronous request (pages referenced by it stay
 * in flight until it completes); small runs, or when no request can be
 * had, are written at once. */
static int emit(struct cache *c, struct run *r, struct cpage **set)
{
	int err;

	if (r->cnt == 0)
		return 0;
	c->stats.below_writes++;
	/* Asynchronous only where it pays: a caller that will wait for the
	 * write (flush, fsync, close) gains nothing from a buffered write
	 * handed to the kernel's workers; O_DIRECT runs gain queue depth. */
	if (c->async.below && r->len >= SYNC_RUN && (!c->async.waiting || c->conf.direct)) {
		int npg = (int)(r->last - r->first + 1);
		struct areq *a = cache_areq_new(c, npg, r->cnt);
		if (a) {
			memcpy(a->iov, r->iov, (size_t)r->cnt * sizeof *r->iov);
			for (int i = 0; i < npg; i++)
				a->pg[i] = set[r->first + (size_t)i];
			a->r = (struct ffio_req){.op = FFIO_OP_WRITE, .off = r->off, .done = cache_write_done};
			a->start = r->off;
			a->len = a->left = r->len;
			if (cache_areq_submit(c, a) == 0) {
				c->stats.async_writes++;
				r->cnt = 0;
				r->len = 0;
				return 0;
			}
			free(a); /* refused: write it now */
		}
	}
	err = ffio_below_pwritev_full(&c->base, r->iov, r->cnt, r->off);
	if (err == 0) {
		c->stats.below_wbytes += r->len;
		if (r->off + (off_t)r->len > c->size.below)
			c->size.below = r->off + (off_t)r->len;
	} else {
		for (size_t i = r->first; i <= r->last; i++)
			set[i]->failed = 1;
	}
	r->cnt = 0;
	r->len = 0;
	return err;
}

/* Add len bytes from base, for file bytes at off of page set[i], to the run
 * (a run not contiguous with them, or full, is emitted first). */
static int add_iov(struct cache *c, struct run *r, struct cpage **set, size_t i, off_t off,
		   const char *base, size_t len)
{
	int err = 0;

	if (r->cnt > 0 && (r->off + (off_t)r->len != off || r->cnt == MAX_IOV))
		err = emit(c, r, set);
	if (r->cnt == 0) {
		r->off = off;
		r->first = i;
	}
	r->iov[r->cnt++] = (struct iovec){(void *)base, len};
	r->len += len;
	r->last = i;
	if (off + (off_t)len > r->end)
		r->end = off + (off_t)len;
	return err;
}

static int add_range(struct cache *c, struct run *r, struct cpage **set, size_t i, uint32_t lo,
		     uint32_t hi)
{
	return add_iov(c, r, set, i, pg_start(c, set[i]->pno) + lo, set[i]->data + lo, hi - lo);
}

/* Zeros for the gaps of pages past the end of the file below (never written
 * to: the kernel reads it from its zero page). */
#define ZERO_GAP ((size_t)64 << 10)
static char zero_gap[ZERO_GAP];

static int add_zeros(struct cache *c, struct run *r, struct cpage **set, size_t i, uint32_t lo,
		     uint32_t hi)
{
	int err = 0, e;
	for (uint32_t at = lo; at < hi; at += (uint32_t)ZERO_GAP) {
		size_t len = hi - at < ZERO_GAP ? hi - at : ZERO_GAP;
		if ((e = add_iov(c, r, set, i, pg_start(c, set[i]->pno) + at, zero_gap, len)) < 0 && !err)
			err = e;
	}
	return err;
}

/* Write the dirty data of the pages set[0..n) (any order): every run of
 * adjacent bytes becomes one vector request.  With sieving, pages whose
 * gaps were filled under a lock (sieve.c) are written from their first to
 * their last dirty byte (and across to a neighbour written so), the
 * others' written bytes alone; with O_DIRECT, block-aligned.  On error
 * the failed pages' data is dropped (they become unknown); the first
 * error returns. */
int cache_flush_set(struct cache *c, struct cpage **set, size_t n)
{
	struct run *r;
	int first = 0, err, locked = 0, sieve = is_sieve(c) && !c->conf.direct;
	off_t true_size, dsize = 0;

	if (n == 0)
		return 0;
	if (!(r = malloc(sizeof *r)))
		return -ENOMEM;
	r->cnt = 0;
	r->len = 0;
	r->end = 0;
	qsort(set, n, sizeof *set, cmp_pno);
	for (size_t i = 0; i < n; i++)
		set[i]->failed = 0;
	int waiting = c->async.waiting;
	if (sieve) {
		first = cache_sieve_prepare(c, set, n, &locked);
		if (locked) /* the writes end before the lock goes */
			c->async.waiting = 1;
	}
	int size_ok = disk_size(c, &dsize) == 0;
	true_size = dsize > c->size.cached_end ? dsize : c->size.cached_end;
	for (size_t i = 0; i < n && c->conf.direct; i++) {
		struct cpage *p = set[i];
		if (!p->known && (err = cache_pg_load(c, p)) < 0) {
			/* cannot write unaligned without the block's bytes */
			p->failed = 1;
			if (!first)
				first = err;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		uint32_t lo, hi;
		if (p->failed || !p->next_ext)
			continue;
		if (c->conf.direct) {
			lo = p->ext[0].lo & ~(uint32_t)(BLOCK - 1);
			hi = 0;
			for (uint32_t k = 0; k < p->next_ext; k++) {
				uint32_t a = p->ext[k].lo & ~(uint32_t)(BLOCK - 1);
				uint32_t b = (p->ext[k].hi + BLOCK - 1) & ~(uint32_t)(BLOCK - 1);
				if (k > 0 && a > hi) {
					if ((err = add_range(c, r, set, i, lo, hi)) < 0 && !first)
						first = err;
					lo = a;
				}
				hi = b;
			}
			if ((err = add_range(c, r, set, i, lo, hi)) < 0 && !first)
				first = err;
		} else if (p->fill) {
			cache_sieve_span(c, set, n, i, &lo, &hi);
			if (p->known) { /* its gaps are the file's bytes now */
				if ((err = add_range(c, r, set, i, lo, hi)) < 0 && !first)
					first = err;
				continue;
			}
			/* past the end: the extents from the page, zeros between */
			uint32_t at = lo;
			for (uint32_t k = 0; k < p->next_ext; k++) {
				if ((err = add_zeros(c, r, set, i, at, p->ext[k].lo)) < 0 && !first)
					first = err;
				if ((err = add_range(c, r, set, i, p->ext[k].lo, p->ext[k].hi)) < 0 && !first)
					first = err;
				at = p->ext[k].hi;
			}
			if ((err = add_zeros(c, r, set, i, at, hi)) < 0 && !first)
				first = err;
		} else { /* the bytes the application wrote, and no other */
			uint32_t pieces = 0;
			for (uint32_t at = 0; cache_sieve_run(p, at, (uint32_t)c->conf.page, 1, &lo, &hi); at = hi) {
				if ((err = add_range(c, r, set, i, lo, hi)) < 0 && !first)
					first = err;
				pieces++;
			}
			cache_aside_sample(c, p->nwrites, pieces);
		}
	}
	if ((err = emit(c, r, set)) < 0 && !first)
		first = err;
	off_t end = r->end;
	free(r);
	if (locked) {
		if ((err = cache_wait_all(c)) < 0 && !first)
			first = err;
		cache_sieve_unlock(c);
		c->async.waiting = waiting;
	}
	/* O_DIRECT wrote whole blocks: where a run ends past the true size,
	 * cut the file back to it once the writes are done (only then: the
	 * writes of a flush within the file stay in flight). */
	if (c->conf.direct && size_ok && end > true_size && (err = cache_wait_all(c)) < 0 && !first)
		first = err;
	if (c->conf.direct && size_ok && c->size.below > true_size) {
		if ((err = ffio_below_truncate(&c->base, true_size)) < 0 && !first)
			first = err;
		else
			c->size.below = true_size;
	}
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		if (p->failed) {
			p->known = p->zeros = 0; /* its data never reached the file: forget it */
			p->nvalid = 0;
		} else if (!p->known && p->next_ext == 1) {
			/* what was written stays readable from memory (no room: it
			 * is read again when asked for) */
			cache_valid_add(p, p->ext[0].lo, p->ext[0].hi);
		}
		pg_set_clean(c, p);
		p->failed = 0;
		p->fill = 0;
	}
	return first;
}

/* cache_flush_set for a caller that waits for the writes at once (a page is
 * needed now): buffered runs go below now, not through the kernel's
 * workers (emit). */
int cache_flush_set_waited(struct cache *c, struct cpage **set, size_t n)
{
	int waiting = c->async.waiting;
	c->async.waiting = 1;
	int err = cache_flush_set(c, set, n);
	c->async.waiting = waiting;
	return err;
}

int cache_flush_pages(struct cache *c, int64_t lo_pno, int64_t hi_pno)
{
	struct cpage **set;
	size_t n = 0;
	int err;

	if (c->pages.ndirty == 0)
		return 0;
	if (!(set = malloc((size_t)c->pages.ndirty * sizeof *set)))
		return -ENOMEM;
	for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru; p = p->next)
		if (p->next_ext && p->pno >= lo_pno && p->pno <= hi_pno)
			set[n++] = p;
	err = cache_flush_set(c, set, n);
	free(set);
	return err;
}

/* Write every dirty byte and wait for everything in flight (errors of
 * requests that completed are recorded for the file). */
int cache_flush_all(struct cache *c)
{
	c->async.waiting = 1;
	int err = cache_flush_pages(c, 0, INT64_MAX);
	c->async.waiting = 0;
	int e2 = cache_wait_all(c);
	return err < 0 ? err : e2;
}

/* Drop the clean pages (nothing may be in flight: callers wait first). */
void cache_drop_clean(struct cache *c)
{
	struct cpage *p = c->pages.lru.next, *next;
	for (; p != &c->pages.lru; p = next) {
		next = p->next;
		if (!p->next_ext && !p->inflight)
			cache_pg_free(c, p);
	}
}
