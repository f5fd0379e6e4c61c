/* layers/cache/async.c -- the cache's asynchronous requests below
 * (write-behind runs and read-ahead): building, submitting and linking
 * them, their completions, and waiting for them.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

struct areq *cache_areq_new(struct cache *c, int npg, int cnt)
{
	struct areq *a = calloc(1, sizeof *a + (size_t)npg * sizeof a->pg[0] +
				       (size_t)cnt * sizeof(struct iovec));
	if (!a)
		return NULL;
	a->c = c;
	a->npg = npg;
	a->cnt = cnt;
	a->iov = (struct iovec *)(void *)&a->pg[npg];
	return a;
}

static void areq_link(struct cache *c, struct areq *a)
{
	a->prev = NULL;
	a->next = c->async.reqs;
	if (c->async.reqs)
		c->async.reqs->prev = a;
	c->async.reqs = a;
	for (int i = 0; i < a->npg; i++)
		a->pg[i]->inflight++;
	c->async.nreq++;
	c->async.busy_pages += a->npg;
	cache_passes_update(c);
}

void cache_areq_unlink(struct cache *c, struct areq *a)
{
	if (a->prev)
		a->prev->next = a->next;
	else
		c->async.reqs = a->next;
	if (a->next)
		a->next->prev = a->prev;
	for (int i = 0; i < a->npg; i++) {
		struct cpage *p = a->pg[i];
		if (--p->inflight == 0 && p->gclear) { /* its data is below now (or lost: see below) */
			ffio_guard_unmark_all(p->g);
			p->gclear = 0;
		}
	}
	c->async.nreq--;
	c->async.busy_pages -= a->npg;
	cache_passes_update(c);
}

/* Submit a (linked).  Learns whether the layer below completes requests
 * later (uring) or inside submit (uring without a ring): from then on the
 * cache uses plain synchronous calls over it, as over sys.  0, or -errno when the request was
 * refused (not linked any more; the caller still owns it). */
int cache_areq_submit(struct cache *c, struct areq *a)
{
	int completed = 0;
	void *mark = a;

	areq_link(c, a);
	a->r.iov = a->iov;
	a->r.iovcnt = a->cnt;
	a->r.data = a;
	if (a->r.op == FFIO_OP_READ)
		cache_kernel_readahead_arm(c);
	/* done() frees a: watch the list instead of a itself */
	int err = ffio_below_submit(&c->base, &a->r);
	if (err < 0) {
		cache_areq_unlink(c, a);
		return err;
	}
	completed = 1;
	for (struct areq *x = c->async.reqs; x; x = x->next)
		if ((void *)x == mark) {
			completed = 0;
			break;
		}
	c->async.below = !completed;
	cache_passes_update(c);
	return 0;
}

/* Skip n transferred bytes of a's iovecs. */
static void areq_advance(struct areq *a, size_t n)
{
	while (a->cnt > 0 && n >= a->iov[0].iov_len) {
		n -= a->iov[0].iov_len;
		a->iov++;
		a->cnt--;
	}
	if (a->cnt > 0) {
		a->iov[0].iov_base = (char *)a->iov[0].iov_base + n;
		a->iov[0].iov_len -= n;
	}
}

/* Completion of a write-behind run.  A short write goes again for its
 * rest; on error the pages' bytes never reached the file: they become
 * unknown (reads fetch the file's bytes) and the error is recorded for
 * the next write, fsync or close. */
void cache_write_done(struct ffio_req *r)
{
	struct areq *a = r->data;
	struct cache *c = a->c;
	ssize_t res = r->res;

	if (res > 0 && (size_t)res < a->left) {
		a->left -= (size_t)res;
		areq_advance(a, (size_t)res);
		r->iov = a->iov;
		r->iovcnt = a->cnt;
		r->off += res;
		r->done = cache_write_done;
		r->data = a;
		int err = ffio_below_submit(&c->base, r);
		if (err == 0)
			return;
		res = err;
	} else if (res == 0 && a->left > 0) {
		res = -EIO;
	}
	cache_areq_unlink(c, a);
	if (res < 0) {
		for (int i = 0; i < a->npg; i++) {
			struct cpage *p = a->pg[i];
			p->known = p->zeros = 0;
			p->ra = 0;
			p->failed = 1; /* seen by a cache_flush_set still running (sync below) */
			p->nvalid = 0;
		}
		ffio_file_set_error(c->base.file, (int)res);
	} else {
		c->stats.below_wbytes += a->len;
		if (a->start + (off_t)a->len > c->size.below)
			c->size.below = a->start + (off_t)a->len;
	}
	free(a);
}

/* Completion of a read-ahead request: the pages (or the record's range of
 * one page, sparse) become valid; a failed read leaves them empty (a read
 * of them fetches again, and reports the error). */
void cache_read_done(struct ffio_req *r)
{
	struct areq *a = r->data;
	struct cache *c = a->c;
	ssize_t res = r->res;

	cache_areq_unlink(c, a);
	if (res > 0)
		c->stats.below_rbytes += (uint64_t)res;
	for (int j = 0; j < a->npg; j++) {
		struct cpage *p = a->pg[j];
		p->reading = 0;
		if (res < 0)
			continue;
		if (a->sparse) {
			size_t want = a->hi - a->lo, have = (size_t)res < want ? (size_t)res : want;
			memset(p->data + a->lo + have, 0, want - have); /* past the end of file */
			cache_valid_add(p, a->lo, a->hi); /* no room: a later read fetches it again */
		} else {
			size_t at = (size_t)j * c->conf.page;
			size_t have = (size_t)res > at ? (size_t)res - at : 0;
			if (have > c->conf.page)
				have = c->conf.page;
			memset(p->data + have, 0, c->conf.page - have);
			p->known = 1;
		}
		p->ra = 1;
	}
	if (res > 0 && a->start + (off_t)res > c->size.below)
		c->size.below = a->start + (off_t)res;
	free(a);
}

/* Complete at least one request in flight (commit first).  -EIO when the
 * layer below has nothing to give back although we wait. */
int cache_reap_one(struct cache *c)
{
	long before = c->async.nreq;
	int err = ffio_below_commit(&c->base);
	if (err < 0)
		return err;
	for (int tries = 0; tries < 2 && c->async.nreq == before; tries++) {
		int n = ffio_below_reap(&c->base, 1);
		if (n < 0)
			return n;
	}
	if (c->async.nreq == before && before > 0) {
		static int once;
		ffio_log_once(&once, "cache: requests in flight below never complete");
		return -EIO;
	}
	return 0;
}

/* Wait until no request uses p's buffer. */
int cache_pg_wait(struct cache *c, struct cpage *p)
{
	while (p->inflight) {
		int err = cache_reap_one(c);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Wait for every request in flight. */
int cache_wait_all(struct cache *c)
{
	int err = c->async.nreq ? ffio_below_commit(&c->base) : 0;
	while (c->async.nreq > 0 && err == 0)
		err = cache_reap_one(c);
	return err;
}
