/* layers/cache/write.c -- the write method: write-behind into pages,
 * write-through (.wt), large writes that go around the cache or, over an
 * asynchronous stack, are copied and written behind (split with a tail
 * that goes below at once).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include "cache.h"

/* After n bytes at off reached the file directly: cached pages agree. */
static void absorb_direct_write(struct cache *c, const char *buf, size_t n, off_t off)
{
	int64_t first = off / (off_t)c->conf.page, last = (off + (off_t)n - 1) / (off_t)c->conf.page;

	if (c->pages.npages == 0)
		return;
	for (int64_t k = first; k <= last; k++) {
		struct cpage *p = pg_find(c, k);
		if (!p)
			continue;
		off_t ps = pg_start(c, k);
		off_t end = ps + (off_t)c->conf.page;
		off_t a = off > ps ? off : ps, b = off + (off_t)n < end ? off + (off_t)n : end;
		p->zeros = 0; /* bytes not written (any more) and not zero */
		if (p->g) /* below now: before the page's copy changes */
			ffio_guard_unmark(p->g, (uint32_t)(a - ps), (uint32_t)(b - ps));
		if (cache_pg_wait(c, p) == 0) {
			memcpy(p->data + (a - ps), buf + (a - off), (size_t)(b - a));
		} else { /* cannot touch its buffer: forget what it held */
			p->known = 0;
			p->nvalid = 0;
		}
		if (p->next_ext) {
			if (cache_ext_remove(c, p, (uint32_t)(a - ps), (uint32_t)(b - ps)) < 0) {
				p->next_ext = 1; /* out of memory: forget the page's other bytes */
				p->known = 0;
			}
			if (p->next_ext == 0)
				c->pages.ndirty--;
		}
	}
}

/* The part of [off, off + n) in cached page p, [*a, *b) of it: does it
 * hold bytes marked in guarded memory? */
static int page_meets_marks(const struct cache *c, const struct cpage *p, off_t off, size_t n, uint32_t *a,
			    uint32_t *b)
{
	off_t ps = pg_start(c, p->pno), end = off + (off_t)n;
	off_t lo = off > ps ? off : ps, hi = end < ps + (off_t)c->conf.page ? end : ps + (off_t)c->conf.page;
	*a = (uint32_t)(lo - ps);
	*b = (uint32_t)(hi - ps);
	return p->g && p->next_ext && lo < hi && ffio_guard_marked(p->g, *a, *b);
}

/* Does the cached page p meet [off, off + n) with marked bytes?  Then,
 * with take (the write's bytes), the page takes its part of them first. */
static int page_marked_part(struct cache *c, struct cpage *p, off_t off, size_t n, const char *take)
{
	uint32_t a, b;
	if (!page_meets_marks(c, p, off, n, &a, &b))
		return 0;
	if (!take || (p->inflight && cache_pg_wait(c, p) < 0))
		return 1;
	ffio_guard_copy(c->guard.file, p->g, p->data, a, take + (pg_start(c, p->pno) + a - off), b - a);
	if (cache_ext_add(p, a, b) < 0) { /* out of memory: the page's other bytes forgotten */
		p->ext[0] = (struct cext){a, b};
		p->next_ext = 1;
		p->known = 0;
	}
	return 1;
}

/* Do the cached pages of [off, off + n) hold bytes marked in guarded
 * memory (the application's, not yet below)?  With take, each such page
 * takes its part of the write's bytes, take, dirty and marked as a write
 * into the cache would leave them (each page's part whole or absent,
 * should the process die): before a write goes around the cache there
 * (write_around).  Else, if the process died after the write reached the
 * file and before the page learnt of it (absorb_direct_write), its
 * guardian would write the older bytes over the newer. */
static int marked_pages(struct cache *c, off_t off, size_t n, const char *take)
{
	int64_t first = off / (off_t)c->conf.page, last = (off + (off_t)n - 1) / (off_t)c->conf.page;
	int met = 0;

	if (!c->guard.file || c->pages.ndirty == 0)
		return 0;
	if (last - first >= c->pages.npages) { /* fewer pages held than in the range */
		for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru && !(met && !take); p = p->next)
			if (p->pno >= first && p->pno <= last)
				met |= page_marked_part(c, p, off, n, take);
		return met;
	}
	for (int64_t k = first; k <= last && !(met && !take); k++) {
		struct cpage *p = pg_find(c, k);
		if (p)
			met |= page_marked_part(c, p, off, n, take);
	}
	return met;
}

/* What a write into the cache notes first, whichever way it then goes
 * (cache_pwrite, cache_passed): its count and bytes; and pages given back
 * while a file of the shared pool waits for some. */
static inline void write_entered(struct cache *c, size_t n)
{
	c->stats.n_write++;
	c->stats.b_write += n;
	if (__atomic_load_n(&c->pages.pool->starved, __ATOMIC_RELAXED)) /* approximate: read unlocked */
		cache_pool_shrink(c);
}

/* got bytes of a write at off reached the layer below around the cache
 * (write_around, write_split's tail, cache_passed): counted, and the size
 * below moved past them. */
static inline void around_done(struct cache *c, off_t off, size_t got)
{
	c->stats.below_wbytes += got;
	if (c->size.below_known && off + (off_t)got > c->size.below)
		c->size.below = off + (off_t)got;
}

static ssize_t write_around(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct iovec iov = {(void *)buf, n};
	int err;

	if (n == 0) /* (a writev's empty element: nothing below would take it) */
		return 0;

	(void)marked_pages(c, off, n, buf);
	c->stats.bypass++;
	c->stats.below_writes++;
	/* not inside another process's sieving (sieve.c) */
	int locked = is_sieve(c) && !c->conf.direct && cache_sieve_lock(c, off, (off_t)n, F_RDLCK);
	err = ffio_below_pwritev_full(&c->base, &iov, 1, off);
	if (locked)
		cache_sieve_unlock(c);
	if (err < 0)
		return err;
	around_done(c, off, n);
	absorb_direct_write(c, buf, n, off);
	cache_passes_update(c); /* (the glue's flags may have changed) */
	return (ssize_t)n;
}

/* A write that passed the stack while the cache passes writes
 * (cache_passes_update): what cache_pwrite and write_around would have
 * noted of it, with nothing held to keep in step. */
FFIO_HOT void cache_passed(struct ffio_layer *l, int write, off_t off, size_t n, ssize_t r)
{
	struct cache *c = CACHE(l);

	(void)write; /* (writes alone: see cache_passes_update) */
	write_entered(c, n);
	c->stats.bypass++;
	c->stats.below_writes++;
	if (r > 0)
		around_done(c, off, (size_t)r);
	if (!cache_around(c, n, off))
		(void)cache_aside_takes(c, n, off); /* (may take writes in again) */
}

/* A smoothed cost (ns per MiB) and a new sample of it.  Samples err on
 * the high side (page faults on a fresh cache, a preempted thread), so a
 * lower one is taken at once and a higher one counts for an eighth. */
static uint64_t cost_update(uint64_t cost, uint64_t sample)
{
	return sample < cost ? sample : (7 * cost + sample) / 8;
}

/* Over an asynchronous stack, does copying a large write and writing it
 * behind pay?  Only when the application has been away (computing) since
 * its last large write for at least half of what writing this one now
 * would cost: then the write overlaps the next stretch of work.  Writes
 * that come back to back gain nothing from the copy; they go around, and
 * so do writes after a read, flush or fsync of the file since the last
 * one (the application was doing I/O, not computing: Program I's write,
 * fsync, read loop over cache, uring ran 1.12-1.16 times as long as raw
 * with its writes copied, the same as over sys without). */
static int behind_pays(const struct cache *c, size_t n, uint64_t now)
{
	uint64_t cost = (uint64_t)(n >> 10) * c->big.around_ns_per_mib >> 10;
	return c->big.return_ns && now - c->big.return_ns >= cost / 2;
}

/* write_around, timed: the cost that behind_pays weighs. */
static ssize_t write_around_timed(struct cache *c, const void *buf, size_t n, off_t off, uint64_t t0)
{
	ssize_t r = write_around(c, buf, n, off);
	uint64_t t = ffio_now_ns() - t0, mib = n >> 20 ? n >> 20 : 1;
	if (r > 0)
		c->big.around_ns_per_mib = cost_update(c->big.around_ns_per_mib, t / mib);
	return r;
}

static ssize_t cache_write_in(struct cache *c, const void *buf, size_t n, off_t off);
static ssize_t write_split(struct cache *c, const void *buf, size_t n, off_t off);

/* After a write hit at off of n bytes into p: arm the next write of the
 * steady pattern (struct cache_hot_write) when the write before was a hit
 * of the same length one step back, and the next ones, each ending before
 * the page's last byte, either fall inside the page's last extent as it
 * is (nothing to record), or extend it as this one did: the sieve hull of
 * a known page, or, one after the other (a step of n), the last extent.
 * Every other test of the hit path was made for this write, and holds, no
 * call coming between, for the next ones (ffio_file.stack_calls; a read
 * hit disarms it). */
static void hot_write_arm(struct cache *c, struct cpage *p, off_t off, size_t n)
{
	struct cache_hot_write *w = &c->hotw;
	off_t step = off - w->prev_off;
	int steady = w->prev_len == n && step > 0;

	w->at.off = -1;
	w->prev_off = off;
	w->prev_len = n;
	if (!steady)
		return;
	int hull = p->wmap != NULL;
	struct cext *last = &p->ext[p->next_ext - 1];
	off_t start = pg_start(c, p->pno), next = off + step;
	off_t end = start + (off_t)c->conf.page - 1 - (off_t)n; /* the last offset that leaves the page's end */
	if (hull && p->next_ext != 1)
		return;
	if (next + (off_t)n <= start + (off_t)last->hi) { /* inside it */
		if (start + (off_t)last->hi - (off_t)n < end)
			end = start + (off_t)last->hi - (off_t)n;
		w->ext = NULL;
	} else if (last->hi == (uint32_t)(off - start + (off_t)n) && step >= (off_t)n && (hull || step == (off_t)n)) {
		w->ext = last; /* extending it (a hull's holes: the map, see write_hot_marked) */
	} else {
		return;
	}
	if (next > end)
		return;
	w->at = (struct cache_hot){.off = next, .len = n, .step = step, .last = end,
				   .calls = c->base.file->stack_calls, .data = p->data, .start = start};
	w->page = p;
	w->wmap = p->wmap; /* made and dropped only by calls that disarm it */
	w->guarded = p->g != NULL;
}

/* The armed write: what the hit path below would do for it, no test made
 * again. */
static inline char *hot_advance(struct cache *c, size_t n, off_t off)
{
	struct cache_hot_write *w = &c->hotw;
	char *dst = w->at.data + (off - w->at.start);
	off_t next = off + w->at.step;

	if (w->ext)
		w->ext->hi = (uint32_t)(off - w->at.start + (off_t)n);
	w->page->nwrites += w->page->nwrites != UINT32_MAX;
	c->stats.n_write++;
	c->stats.b_write += n;
	if (off + (off_t)n > c->size.cached_end)
		c->size.cached_end = off + (off_t)n;
	c->hot.off = -1;
	w->prev_off = off;
	w->at.off = next <= w->at.last ? next : -1;
	return dst;
}

static ssize_t write_hot(struct cache *c, const void *buf, size_t n, off_t off)
{
	copy_record(hot_advance(c, n, off), buf, n); /* last: nothing of c live across a call */
	return (ssize_t)n;
}

/* The hit path (ffio_layer_ops.write_hit): a small write into the page
 * touched last (the LRU list's tail), which is dirty already and idle,
 * while cache_pwrite would have nothing else to do (no pool to shrink, no
 * write-behind to take in, no write-through; the size below is known, so
 * cache_write_in would not ask for it).  Its bytes join the page's sieve hull, or its last extent
 * (or follow it), as cache_write_in records them.  A write that would fill
 * the page to its end takes the full path: that may start a write-behind.
 * Returns 0, nothing changed, for anything else. */
__attribute__((noinline)) static ssize_t write_hit(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct cpage *p = c->pages.lru.prev;

	if (p == &c->pages.lru || !p->next_ext || p->inflight || p->reading || n > HIT_MAX || c->async.nreq ||
	    !c->size.below_known || __atomic_load_n(&c->pages.pool->starved, __ATOMIC_RELAXED) ||
	    (c->conf.flags & FFIO_CACHE_WT) || (c->base.file->glue_flags & FFIO_FILE_WRITETHROUGH))
		return 0;
	uint64_t at = (uint64_t)(off - pg_start(c, p->pno));
	if (at >= c->conf.page || n >= c->conf.page - at)
		return 0;
	uint32_t lo = (uint32_t)at, hi = (uint32_t)(at + n);
	struct cext *last = &p->ext[p->next_ext - 1];
	int sieve = is_sieve(c);
	if (p->wmap) { /* the hull, as in cache_write_in */
		if (p->next_ext != 1)
			return 0;
		if (lo < last->lo)
			last->lo = lo;
	} else if (lo < last->lo) {
		return 0;
	} else if (lo > last->hi) { /* a new last extent, where there is room */
		if (p->next_ext == p->cap_ext || (sieve && p->next_ext >= c->conf.page / ZERO_GAP_SPACING))
			return 0; /* (the full path may make a sieved page known) */
		p->ext[p->next_ext++] = (struct cext){lo, hi};
		last = NULL;
	}
	if (last && hi > last->hi)
		last->hi = hi;
	if (p->wmap)
		wmap_mark(p, lo, hi);
	pg_copy(c, p, lo, buf, n);
	p->nwrites += p->nwrites != UINT32_MAX;
	c->stats.n_write++;
	c->stats.b_write += n;
	if (off + (off_t)n > c->size.cached_end)
		c->size.cached_end = off + (off_t)n;
	c->hot.off = -1;
	hot_write_arm(c, p, off, n);
	return (ssize_t)n;
}

/* The armed write into a page with a map of written bytes: marked too,
 * and in guarded memory if the page is guarded (pg_copy) (apart, so that
 * write_hot stays a leaf; never inlined, and built twice: with the popcnt
 * instruction where the processor has it, which counts the bits newly
 * marked). */
__attribute__((target_clones("popcnt", "default"))) static ssize_t
write_hot_marked(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct cache_hot_write *w = &c->hotw;
	struct cpage *p = w->page;
	uint32_t lo = (uint32_t)(off - w->at.start);
	hot_advance(c, n, off);
	pg_copy(c, p, lo, buf, n);
	wmap_mark(p, lo, lo + (uint32_t)n);
	return (ssize_t)n;
}

/* The armed write into a guarded page without a map of its own: its bytes
 * marked in guarded memory (pg_copy; the rare case apart, so that the
 * common one saves no register). */
__attribute__((noinline)) static ssize_t write_hot_guarded_slow(struct cache *c, struct cpage *p, uint32_t lo,
								 const void *buf, size_t n)
{
	ffio_guard_copy(c->guard.file, p->g, p->data, lo, buf, n);
	return (ssize_t)n;
}

__attribute__((noinline)) static ssize_t write_hot_guarded(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct cpage *p = c->hotw.page;
	uint32_t lo = (uint32_t)(off - c->hotw.at.start);
	hot_advance(c, n, off);
	if (pg_copy_fast(c, p->g, p->data, lo, buf, n))
		return (ssize_t)n;
	return write_hot_guarded_slow(c, p, lo, buf, n);
}

/* The armed write first, alone: a leaf that saves no register. */
ssize_t cache_write_hit(struct ffio_layer *l, const void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);

	if (cache_hot_due(c, &c->hotw.at, off, n))
		return c->hotw.wmap ? write_hot_marked(c, buf, n, off)
		       : c->hotw.guarded ? write_hot_guarded(c, buf, n, off) : write_hot(c, buf, n, off);
	return write_hit(c, buf, n, off);
}

ssize_t cache_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);
	int err;

	write_entered(c, n);
	/* Take in the write-behinds that completed meanwhile (no waiting):
	 * their pages are free for this write and the next runs. */
	if (c->async.nreq > 0 && (err = ffio_below_reap(&c->base, 0)) < 0)
		ffio_file_set_error(c->base.file, err);
	if ((c->conf.flags & FFIO_CACHE_WT) || (c->base.file->glue_flags & FFIO_FILE_WRITETHROUGH))
		return write_around(c, buf, n, off);
	/* Large aligned writes go straight below, unless the layer below
	 * writes behind asynchronously and the application leaves it time
	 * to (behind_pays): then they are copied and submitted.  So do
	 * smaller ones inside a range the program holds locked (cache_around):
	 * it unlocks soon, a flush point, and the write would wait there. */
	/* A large write over bytes the application wrote before, still
	 * cached, is taken in like a small one: should the process die, it is
	 * then absent, whole, or its first pages (write_around would leave
	 * the cached pages' parts of it, marked_pages); not so inside a
	 * range the program holds locked (its own read-modify-write, see
	 * cache_around). */
	if (cache_around(c, n, off) && aligned(c, buf, n, off) &&
	    !(marked_pages(c, off, n, NULL) && !ffio_file_app_locked(c->base.file, off, n))) {
		if (!c->async.below || n < c->conf.page) /* (under the program's lock: see cache_around) */
			return write_around(c, buf, n, off);
		uint64_t now = ffio_now_ns();
		if (!behind_pays(c, n, now)) {
			ssize_t r = write_around_timed(c, buf, n, off, now);
			c->big.return_ns = ffio_now_ns();
			return r;
		}
		ssize_t r = write_split(c, buf, n, off);
		c->big.return_ns = ffio_now_ns();
		return r;
	}
	if (cache_aside_takes(c, n, off)) /* (aside.c) */
		return write_around(c, buf, n, off);
	return cache_write_in(c, buf, n, off);
}

/* The tail of a split write, below while the head is copied. */
struct tail_req {
	struct ffio_req r;
	struct iovec iov;
	int done;
};

static void tail_done(struct ffio_req *r)
{
	((struct tail_req *)r->data)->done = 1;
}

/* A large write going behind, split in two: its last whole pages go below
 * at once from the caller's buffer (the layer below hands them to a kernel
 * worker, on another core) while this thread copies the first pages into
 * the cache; the call returns when both are done.  The split follows the
 * measured costs, so that both halves take about as long.  Only where no
 * page of the tail is cached (nothing there to keep in step), else the
 * whole write is copied. */
static ssize_t write_split(struct cache *c, const void *buf, size_t n, off_t off)
{
	size_t pages = n / c->conf.page, copy = c->big.copy_ns_per_mib, around = c->big.around_ns_per_mib;
	/* rounded down: the call waits for the tail, so a tail that would take
	 * longer than the copy of the head is worse than none (O_DIRECT: the
	 * device is slower than a copy, and the tail is then empty) */
	size_t tail_pages = (size_t)((uint64_t)pages * copy / (copy + around));
	/* Whole pages only: the tail then covers exactly tail_pages pages, and
	 * none of them may be cached (a cached one could hold older dirty
	 * bytes that a later flush would write over the tail's). */
	if (off % (off_t)c->conf.page != 0 || n % c->conf.page != 0 || tail_pages == 0 || tail_pages >= pages)
		tail_pages = 0;
	size_t head = n - tail_pages * c->conf.page;
	int64_t first = (off + (off_t)head) / (off_t)c->conf.page;
	for (size_t i = 0; i < tail_pages; i++)
		if (pg_find(c, first + (int64_t)i)) {
			tail_pages = 0;
			head = n;
			break;
		}
	struct tail_req t = { .iov = { (char *)buf + head, n - head } };
	int err = 0;
	if (head < n) {
		t.r = (struct ffio_req){ .op = FFIO_OP_WRITE, .iov = &t.iov, .iovcnt = 1,
					 .off = off + (off_t)head, .done = tail_done, .data = &t };
		c->stats.below_writes++;
		if (ffio_below_submit(&c->base, &t.r) < 0 || ffio_below_commit(&c->base) < 0)
			head = n; /* refused (not in flight): copy it all */
	}
	uint64_t t0 = ffio_now_ns(); /* the copy alone: not the tail's submission */
	ssize_t r = cache_write_in(c, buf, head, off);
	if (r > 0) {
		uint64_t t = ffio_now_ns() - t0, mib = (size_t)r >> 20 ? (size_t)r >> 20 : 1;
		c->big.copy_ns_per_mib = cost_update(c->big.copy_ns_per_mib, t / mib);
		/* the head's pages are whole: they start on their way now, to be
		 * written while the application works (nothing will join them) */
		long sent = cache_write_behind(c, 0);
		if (sent < 0)
			ffio_file_set_error(c->base.file, (int)sent);
	}
	if (head == n)
		return r;
	while (!t.done && err == 0)
		err = ffio_below_reap(&c->base, 1) < 0 ? -EIO : 0;
	while (!t.done) /* the request still uses buf: it must end first */
		ffio_below_reap(&c->base, 1);
	ssize_t res = t.r.res;
	if (res >= 0 && (size_t)res < n - head) { /* short: the rest now */
		struct iovec rest = { (char *)buf + head + res, n - head - (size_t)res };
		int e = ffio_below_pwritev_full(&c->base, &rest, 1, off + (off_t)head + res);
		res = e < 0 ? e : (ssize_t)(n - head);
	}
	if (r < 0 || (size_t)r < head)
		return r; /* the tail is below; the head's failure is what the caller sees */
	if (res < 0)
		return (ssize_t)head;
	around_done(c, off + (off_t)head, n - head);
	return (ssize_t)n;
}

/* Under O_DIRECT a large piece of a write is copied into its page with
 * non-temporal stores (ffio_copy_stream): the page goes to the device by
 * DMA, and the copy neither reads the page's lines first nor evicts the
 * program's data.  bench/uring_overlap -d (32 writes of 4 MiB between
 * 5 ms of computation over cache.direct:1m:16:0, uring.direct:64): the
 * writes took 15.9 ms in all with memcpy, 11.4 ms so, and the overlap
 * went from 60-80% (median 72%) to 74-77% (76%) in five paired runs.
 * Into the page cache the kernel reads the page again at once, better
 * from the processor's cache: memcpy there. */
#define STREAM_COPY_MIN ((size_t)64 << 10)

/* A write over several pages of a guarded file (up to as many as one
 * intent holds) is whole or absent in the file if the process dies
 * before it returns: one intent over all its copies, its pages pinned
 * meanwhile, so that none of them is written back (and its part of the
 * write made impossible to undo) before the last is copied. */
struct write_intent {
	int on;
	int npinned;
	struct cpage *pinned[GUARD_INTENT_ENTRIES];
};

static void intent_begin(struct cache *c, struct write_intent *wi, size_t n, off_t off)
{
	int64_t first = off / (off_t)c->conf.page, last = (off + (off_t)n - 1) / (off_t)c->conf.page;

	wi->on = c->guard.file && first != last && last - first < GUARD_INTENT_ENTRIES;
	wi->npinned = 0;
	if (wi->on) {
		ffio_guard_begin(c->guard.file);
		c->guard.begun = 1;
	}
}

static void intent_pin(struct write_intent *wi, struct cpage *p)
{
	if (wi->on && !p->pin && wi->npinned < GUARD_INTENT_ENTRIES) {
		p->pin = 1;
		wi->pinned[wi->npinned++] = p;
	}
}

/* The write is whole in memory (or goes on below): the intent ends. */
static void intent_end(struct cache *c, struct write_intent *wi)
{
	if (!wi->on)
		return;
	ffio_guard_end(c->guard.file);
	c->guard.begun = 0;
	for (int i = 0; i < wi->npinned; i++)
		wi->pinned[i]->pin = 0;
	wi->on = 0;
}

static ssize_t write_in_pages(struct cache *c, const char *src, size_t n, off_t off, struct write_intent *wi,
			      int *filled)
{
	size_t done = 0;
	off_t size;
	int err;

	if ((err = disk_size(c, &size)) < 0)
		return err;
	while (done < n) {
		off_t o = off + (off_t)done;
		int64_t pno;
		uint32_t lo;
		size_t len = pg_span(c, o, n - done, &pno, &lo);
		struct cpage *p = pg_find(c, pno);

		if (!p) {
			int fresh;
			err = cache_pg_new_fresh(c, pno, &p, &fresh);
			if (err == -EAGAIN && wi->on) { /* its own pages pinned fill the cache */
				intent_end(c, wi);
				err = cache_pg_new_fresh(c, pno, &p, &fresh);
			}
			if (err == -EAGAIN && !c->conf.direct) {
				intent_end(c, wi); /* what is copied stays: the rest goes below */
				ssize_t r = write_around(c, src + done, n - done, o);
				if (r < 0)
					return done ? (ssize_t)done : r;
				return (ssize_t)n;
			}
			if (err < 0)
				return done ? (ssize_t)done : err;
			/* A write of the whole page makes it known.  Past the end of
			 * the file below, every byte not written is zero: a fresh
			 * buffer holds those zeros already and the page is known; a
			 * reused one is left unknown, its gaps zeroed only if
			 * something needs them (cache_pg_load) or written from zero_gap by
			 * a sieving flush. */
			if (len == c->conf.page) {
				p->known = 1;
			} else if (pg_start(c, pno) >= c->size.below && (fresh || c->conf.direct)) {
				if (!fresh)
					memset(p->data, 0, c->conf.page);
				p->known = 1;
				p->zeros = 1;
			}
		} else {
			pg_touch(c, p);
			if (p->inflight && (err = cache_pg_wait(c, p)) < 0) /* never modified in flight */
				return done ? (ssize_t)done : err;
		}
		/* a page made before the guard opened (read, or its buffer
		 * reused): its first bytes of the application's go to guarded
		 * memory */
		if (!p->g && !p->next_ext && c->guard.file && (err = cache_buf_guard(c, p)) < 0)
			return done ? (ssize_t)done : err;
		intent_pin(wi, p);
		/* A sieved known page of many extents keeps a hull and a map
		 * of its written bytes (made before the copy: a page that
		 * cannot have one is left as it was). */
		int hull = p->known && is_sieve(c) && p->next_ext && sieve_hull_due(c, p);
		if (hull && (err = cache_hull_map(c, p)) < 0)
			return done ? (ssize_t)done : err;
		if (p->g)
			pg_copy(c, p, lo, src + done, len);
		else if (c->conf.direct && len >= STREAM_COPY_MIN)
			ffio_copy_stream(p->data + lo, src + done, len);
		else
			memcpy(p->data + lo, src + done, len);
		if (!p->next_ext)
			c->pages.ndirty++;
		p->nwrites += p->nwrites != UINT32_MAX;
		if (hull) {
			if (lo < p->ext[0].lo)
				p->ext[0].lo = lo;
			if (lo + len > p->ext[0].hi)
				p->ext[0].hi = lo + (uint32_t)len;
			if (p->wmap)
				wmap_mark(p, lo, lo + (uint32_t)len);
		} else if ((err = cache_ext_add(p, lo, lo + (uint32_t)len)) < 0) {
			if (!p->next_ext)
				c->pages.ndirty--;
			if (p->g) /* not the page's: not to be written back */
				ffio_guard_unmark(p->g, lo, lo + (uint32_t)len);
			return done ? (ssize_t)done : err;
		} else if (!p->known && is_sieve(c) && p->next_ext > c->conf.page / ZERO_GAP_SPACING &&
			   pg_start(c, pno) >= c->size.below && (err = cache_pg_load(c, p)) < 0) {
			return done ? (ssize_t)done : err;
		}
		done += len;
		if (o + (off_t)len > c->size.cached_end)
			c->size.cached_end = o + (off_t)len;
		if (lo + len == c->conf.page)
			*filled = 1;
	}
	return (ssize_t)n;
}

/* Copy n bytes at off into the cache (write-behind). */
static ssize_t cache_write_in(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct write_intent wi;
	int filled = 0;

	cache_guard_start(c);
	intent_begin(c, &wi, n, off);
	ssize_t r = write_in_pages(c, buf, n, off, &wi, &filled);
	intent_end(c, &wi);
	if (r < 0 || (size_t)r < n)
		return r;
	/* Over an asynchronous stack, complete pages start on their way as
	 * soon as a quarter of the cache is dirty: the application goes on
	 * while they are written. */
	if (filled && c->async.below && c->pages.ndirty >= (c->conf.limit + 3) / 4) {
		long sent = cache_write_behind(c, 0);
		if (sent < 0)
			ffio_file_set_error(c->base.file, (int)sent);
	}
	return (ssize_t)n;
}
