/* layers/cache.c -- the cache layer: write-behind with byte-exact dirty
 * tracking, coalescing of adjacent dirty data into single vector requests,
 * eviction that keeps pages whose gaps are still being filled, optional
 * sieving (.sieve), read-ahead along sequential and constant-stride
 * patterns, fetches that follow runs (a tile read through netCDF's
 * windows), read hints to the kernel for files that come from the device,
 * read-your-writes for sizes and truncation, write-through (.wt),
 * O_DIRECT below (.direct), one page pool for all files of an entry
 * (.shared), and statistics (.diag, ffgetstats).  See ffio-cache(7).
 *
 * A page is PAGE bytes of the file at a PAGE-aligned offset.  Its bytes are
 * "known" when the whole page holds the file's current content (read from
 * below, zeros past the end of file, or written by the application); an
 * unknown page holds valid bytes only inside its dirty extents.  Dirty
 * extents are a sorted array of disjoint [lo, hi) ranges per page; a known
 * page under sieving keeps one hull extent instead.  An unknown page may
 * also hold a few ranges of clean valid bytes (records fetched alone by
 * strided read-ahead, the parts of runs fetched alone, data just written
 * behind).
 *
 * Asynchronous I/O below (submit / commit / reap): write-behind of dirty
 * runs and read-ahead are submitted as requests and committed in one
 * batch; the application waits for them only at flush points, or when it
 * touches a page whose buffer is in flight (a page in flight is never
 * modified in place: the writer waits for it; see ffio-cache(7)).  The
 * completion callbacks run inside calls into the layers below, with the
 * file's lock held by the current call: they only update page states and
 * counters, never free or move pages.  Over a synchronous stack (sys) the
 * same requests complete inside submit.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"

#define BLOCK 4096          /* alignment of O_DIRECT requests and page buffers */
#define MAX_IOV 1024        /* iovecs in one request below (IOV_MAX) */
#define MAX_VALID 8         /* clean valid ranges an unknown page remembers */
/* Runs shorter than this are written synchronously: small buffered writes
 * through io_uring are punted to kernel workers and cost more than a
 * pwrite (bench/uring_strided -w). */
#define SYNC_RUN 4096
/* A record read that takes longer than this came from the device, not the
 * kernel's page cache (about 1-2 us here; a device read, 60 us). */
#define COLD_READ_NS 20000
/* Page buffers of a cache that has grown past HUGE_AFTER bytes are carved
 * from HUGE_CHUNK-aligned chunks backed by transparent huge pages: a big
 * file's first touch of its cache then costs one fault per 2 MiB instead
 * of one per 4 KiB (bench/netcdf_tilerec.sh), and small pages no mapping
 * each (bench/netcdf_seed.sh over cache:64k:1024:8: six readers took 2.3
 * times as long as raw with a mapping per page, 0.4-1.0 times carved).
 * Here a 4 KiB fault of fresh memory costs about 2.6 us (0.67 ms per MiB)
 * and a huge one 0.1-0.2 ms: the netCDF tile + record write (13.8 MB,
 * cache:1m:64:4) took 15.5 ms with chunks from 4 MiB, 14.4 ms from 1 MiB
 * (medians of 15).  A file under 1 MiB never takes a chunk
 * (a 10 KB file written by a new process: 0.20 ms from 1 MiB, 0.30 ms
 * when its first page was carved too); a file that holds a chunk or more
 * when the cache opens takes one from its first page: a new process
 * reading a worker's tile (bench/netcdf_seed.sh's default file) took
 * 4.9 ms with its first page loaded into 4 KiB faults (0.8 ms of it, and
 * the slow load made the cache hint every run to the kernel as if the file
 * came from the device), 4.5 ms so; raw, 4.3 ms.
 * Pages that are not a multiple of a block, or do not divide the chunk,
 * have buffers of their own. */
#define HUGE_CHUNK FFIO_HUGE_CHUNK
#define HUGE_AFTER ((size_t)1 << 20)
#define HUGE_MIN_PAGE ((size_t)BLOCK)

struct cext {
	uint32_t lo, hi;
};

struct cpage {
	int64_t pno;                      /* page number: offset / PAGE */
	char *data;
	struct cpage *hnext;              /* hash chain */
	struct cpage *prev, *next;        /* LRU list, least recent first */
	struct cext *ext;                 /* dirty extents, sorted, disjoint */
	uint32_t next_ext, cap_ext;
	unsigned known : 1;               /* every byte valid */
	unsigned ra : 1;                  /* read ahead, not used yet */
	unsigned pin : 1;                 /* being filled: not a victim */
	unsigned failed : 1;              /* scratch flag of a flush */
	unsigned reading : 1;             /* a read into it is in flight */
	unsigned holes : 1;               /* a sieve hull spans bytes not written */
	unsigned evicted : 1;             /* written behind to make room (counted) */
	unsigned chunked : 1;             /* data is carved from a huge chunk */
	uint16_t inflight;                /* requests below using data */
	uint8_t nvalid;                   /* clean valid ranges of an unknown page: */
	struct cext valid[MAX_VALID];     /* sorted, disjoint, not touching */
};

/* The page budget: one per file, or one per entry with .shared. */
struct cpool {
	pthread_mutex_t lock;
	long limit;   /* pages */
	long used;
	int nfiles;
	int starved;  /* a file under its share found the pool full */
};

struct cache {
	struct ffio_layer base;
	size_t page;
	long limit;
	int ahead;
	unsigned flags;
	int direct;                  /* O_DIRECT below is in force */
	int can_read;                /* the file is open for reading below */
	struct cpool *pool;
	struct cpool own_pool;

	struct cpage **hash;
	size_t hmask;
	struct cpage lru;            /* sentinel */
	long npages, ndirty;
	long npages_peak;            /* the most pages held at once (.diag) */
	struct cpage *last;          /* the page touched last */
	char *scratch;               /* one page, for merging reads into dirty pages */

	/* page buffers carved from huge chunks (not .shared) */
	struct ffio_chunk *chunks;   /* every chunk, given back at release */
	char *carve;                 /* the rest of the newest chunk */
	size_t carve_left;
	int carve_fresh;             /* the newest chunk was never used: zeros */
	void *free_bufs;             /* freed carved buffers, linked through their first bytes */

	off_t disk_size;             /* the file's size below, as last known */
	int size_known;
	off_t cached_end;            /* end of the furthest write not known to be below */

	/* read-ahead pattern */
	off_t ra_last_off;
	size_t ra_last_len;
	off_t ra_stride;
	int ra_hits;
	int ra_valid;
	int no_advise;               /* nothing below takes read hints */
	off_t ra_hinted;             /* records before this offset were hinted */
	int kernel_ra_off;           /* the kernel's read-ahead is off (RANDOM) */
	int kernel_ra_armed;         /* turn it off before the first page or record is read */

	/* runs: sequential reads that jump ahead now and then (see ra_runs) */
	off_t run_start;             /* where the current run began */
	int run_reads;               /* reads in it so far */
	off_t run_len, run_prev_len; /* the last two runs' lengths (0: none, or one read) */
	off_t run_stride;            /* from the last run's start to this one's */
	off_t run_hinted;            /* runs starting before this offset were hinted */
	int slow_loads;              /* loads in a row slower than memory (note_load) */
	int from_device;             /* two of them: the file comes from the device (sticky) */

	/* loops larger than the cache (see ghost_note) */
	int64_t *ghost;              /* the pages evicted last, a ring of ghost_cap (-1: none) */
	int32_t *ghost_at;           /* ring slots by page, open addressing (-1: empty) */
	int ghost_cap, ghost_bits;
	uint64_t ghost_seq;          /* evictions recorded */
	int64_t ghost_prev;          /* ring slot of the last page found there, or -1 */
	int loop_new, loop_in_order; /* new pages, and those evicted in order, this window */
	int loop_mode;               /* victims from the most recent end */
	long grow_limit;             /* pages taken before clean ones are reused (see ghost_note) */

	/* statistics */
	uint64_t n_read, b_read, n_write, b_write;
	uint64_t hits, misses, ra_used, ra_wasted, ra_hints, run_loads;
	uint64_t below_reads, below_writes, below_rbytes, below_wbytes;
	uint64_t ev_clean, ev_complete, ev_gaps, bypass, ev_loop;
	uint64_t async_writes, async_reads;

	/* asynchronous requests below */
	int async_below;             /* the layer below completes requests later */
	int waiting;                 /* in flush_all: the caller waits for the writes */
	long nreq;                   /* requests in flight */
	long busy_pages;             /* page references of requests in flight */
	struct areq *reqs;           /* requests in flight (for fork) */

	/* large writes over an asynchronous stack: copy and write behind, or
	 * write around now (see behind_pays) */
	uint64_t big_return_ns;      /* when the last large write returned, or 0 */
	uint64_t around_ns_per_mib;  /* what writing around cost, smoothed */
	uint64_t copy_ns_per_mib;    /* what copying into the cache cost, smoothed */
};

/* A request of the cache in flight below: a write-behind run or a read. */
struct areq {
	struct ffio_req r;
	struct cache *c;
	struct areq *prev, *next;    /* c->reqs */
	size_t left;                 /* bytes still to transfer */
	off_t start;                 /* file offset of the first byte */
	uint32_t lo, hi;             /* a sparse read: range within its page */
	int sparse;
	int cnt;                     /* iovecs */
	int npg;                     /* pages */
	size_t len;                  /* bytes of the whole request */
	struct iovec *iov;           /* cnt, after pg */
	struct cpage *pg[];          /* npg */
};

#define CACHE(l) ((struct cache *)(l))

static int is_sieve(const struct cache *c)
{
	return (c->flags & FFIO_CACHE_SIEVE) || (c->base.file->hints & FFIO_FILE_SIEVE);
}

/* ---- dirty extents ----------------------------------------------------- */

static int ext_reserve(struct cpage *p, uint32_t n)
{
	if (n <= p->cap_ext)
		return 0;
	uint32_t cap = p->cap_ext ? p->cap_ext : 4;
	while (cap < n)
		cap *= 2;
	struct cext *e = realloc(p->ext, cap * sizeof *e);
	if (!e)
		return -ENOMEM;
	p->ext = e;
	p->cap_ext = cap;
	return 0;
}

/* Mark [lo, hi) dirty, merging with touching extents. */
static int ext_add(struct cpage *p, uint32_t lo, uint32_t hi)
{
	uint32_t n = p->next_ext;

	if (n > 0) {
		struct cext *last = &p->ext[n - 1];
		if (lo >= last->lo && lo <= last->hi) { /* the common case: appending */
			if (hi > last->hi)
				last->hi = hi;
			return 0;
		}
		if (lo > last->hi) {
			if (ext_reserve(p, n + 1) < 0)
				return -ENOMEM;
			p->ext[n] = (struct cext){lo, hi};
			p->next_ext++;
			return 0;
		}
	}
	/* General case: first extent with hi >= lo, last with lo <= hi. */
	uint32_t a = 0, b = n;
	while (a < b) {
		uint32_t m = (a + b) / 2;
		if (p->ext[m].hi < lo)
			a = m + 1;
		else
			b = m;
	}
	uint32_t first = a, end = a;
	while (end < n && p->ext[end].lo <= hi)
		end++;
	if (first == end) { /* insert */
		if (ext_reserve(p, n + 1) < 0)
			return -ENOMEM;
		memmove(&p->ext[first + 1], &p->ext[first], (n - first) * sizeof *p->ext);
		p->ext[first] = (struct cext){lo, hi};
		p->next_ext++;
		return 0;
	}
	struct cext m = {lo < p->ext[first].lo ? lo : p->ext[first].lo,
			 hi > p->ext[end - 1].hi ? hi : p->ext[end - 1].hi};
	p->ext[first] = m;
	memmove(&p->ext[first + 1], &p->ext[end], (n - end) * sizeof *p->ext);
	p->next_ext -= end - first - 1;
	return 0;
}

/* Forget [lo, hi) as dirty (superseded below, or truncated away). */
static int ext_remove(struct cpage *p, uint32_t lo, uint32_t hi)
{
	uint32_t n = p->next_ext, out = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct cext e = p->ext[i];
		if (e.hi <= lo || e.lo >= hi) {
			p->ext[out++] = e;
		} else if (e.lo < lo && e.hi > hi) { /* split in two; the rest lies after hi */
			uint32_t rest = n - i - 1;
			if (ext_reserve(p, out + 2 + rest) < 0)
				return -ENOMEM;
			memmove(&p->ext[out + 2], &p->ext[i + 1], rest * sizeof *p->ext);
			p->ext[out] = (struct cext){e.lo, lo};
			p->ext[out + 1] = (struct cext){hi, e.hi};
			p->next_ext = out + 2 + rest;
			return 0;
		} else if (e.lo < lo) {
			p->ext[out++] = (struct cext){e.lo, lo};
		} else if (e.hi > hi) {
			p->ext[out++] = (struct cext){hi, e.hi};
		}
	}
	p->next_ext = out;
	return 0;
}

/* Is [lo, hi) inside one dirty extent? */
static int ext_covers(const struct cpage *p, uint32_t lo, uint32_t hi)
{
	uint32_t a = 0, b = p->next_ext;
	while (a < b) {
		uint32_t m = (a + b) / 2;
		if (p->ext[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < p->next_ext && p->ext[a].lo <= lo && p->ext[a].hi >= hi;
}

/* ---- clean valid ranges of an unknown page ------------------------------ */

/* Remember [lo, hi) as valid, merging with the ranges it touches.
 * -ENOSPC when that would make more than MAX_VALID ranges. */
static int valid_add(struct cpage *p, uint32_t lo, uint32_t hi)
{
	int n = p->nvalid, a = 0, b;

	while (a < n && p->valid[a].hi < lo)
		a++;
	for (b = a; b < n && p->valid[b].lo <= hi; b++)
		;
	if (a == b) { /* touches none: a new range at a */
		if (n == MAX_VALID)
			return -ENOSPC;
		memmove(&p->valid[a + 1], &p->valid[a], (size_t)(n - a) * sizeof *p->valid);
		p->valid[a] = (struct cext){lo, hi};
		p->nvalid++;
		return 0;
	}
	struct cext m = {lo < p->valid[a].lo ? lo : p->valid[a].lo, hi > p->valid[b - 1].hi ? hi : p->valid[b - 1].hi};
	p->valid[a] = m;
	memmove(&p->valid[a + 1], &p->valid[b], (size_t)(n - b) * sizeof *p->valid);
	p->nvalid = (uint8_t)(n - (b - a - 1));
	return 0;
}

/* Is [lo, hi) inside one valid range?  The range holding lo (or ending at
 * it) is returned in *at, else -1. */
static int valid_covers(const struct cpage *p, uint32_t lo, uint32_t hi, int *at)
{
	*at = -1;
	for (int i = 0; i < p->nvalid; i++)
		if (p->valid[i].lo <= lo && lo <= p->valid[i].hi) {
			*at = i;
			return hi <= p->valid[i].hi;
		}
	return 0;
}

/* Does p hold the file's bytes [lo, hi): known, dirty, or in one valid
 * range? */
static int pg_holds(const struct cpage *p, uint32_t lo, uint32_t hi)
{
	int at;
	return p->known || ext_covers(p, lo, hi) || valid_covers(p, lo, hi, &at);
}

/* The file ends at cut within the page: nothing valid past it. */
static void valid_cut(struct cpage *p, uint32_t cut)
{
	int n = 0;
	for (int i = 0; i < p->nvalid; i++) {
		if (p->valid[i].lo >= cut)
			break;
		p->valid[n] = p->valid[i];
		if (p->valid[n].hi > cut)
			p->valid[n].hi = cut;
		n++;
	}
	p->nvalid = (uint8_t)n;
}

/* A known page under sieving needs only the hull of its dirty bytes. */
static void ext_to_hull(struct cpage *p)
{
	if (p->next_ext > 1) {
		p->ext[0].hi = p->ext[p->next_ext - 1].hi;
		p->next_ext = 1;
	}
}

/* ---- pages: hash, LRU, pool -------------------------------------------- */

static size_t hash_of(const struct cache *c, int64_t pno)
{
	return (size_t)(((uint64_t)pno * 0x9E3779B97F4A7C15ull) >> 17) & c->hmask;
}

static struct cpage *pg_find(struct cache *c, int64_t pno)
{
	if (c->last && c->last->pno == pno)
		return c->last;
	for (struct cpage *p = c->hash[hash_of(c, pno)]; p; p = p->hnext)
		if (p->pno == pno)
			return c->last = p;
	return NULL;
}

static void lru_unlink(struct cpage *p)
{
	p->prev->next = p->next;
	p->next->prev = p->prev;
}

static void lru_append(struct cache *c, struct cpage *p)
{
	p->prev = c->lru.prev;
	p->next = &c->lru;
	c->lru.prev->next = p;
	c->lru.prev = p;
}

static void pg_touch(struct cache *c, struct cpage *p)
{
	if (c->lru.prev != p) {
		lru_unlink(p);
		lru_append(c, p);
	}
}

static void hash_remove(struct cache *c, struct cpage *p)
{
	struct cpage **pp = &c->hash[hash_of(c, p->pno)];
	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	if (c->last == p)
		c->last = NULL;
}

static void pg_set_clean(struct cache *c, struct cpage *p)
{
	if (p->next_ext) {
		p->next_ext = 0;
		c->ndirty--;
	}
	p->holes = 0;
}

/* ---- page buffers ----------------------------------------------------- */

/* May c's page buffers come from huge chunks?  Large pages of a cache of
 * its own that already holds HUGE_AFTER bytes, or of a file of a chunk or
 * more: a small file never pays for a huge page it would not fill. */
static int huge_ok(const struct cache *c)
{
	return c->page >= HUGE_MIN_PAGE && c->page % BLOCK == 0 && HUGE_CHUNK % c->page == 0 &&
	       c->pool == &c->own_pool &&
	       ((size_t)c->npages * c->page >= HUGE_AFTER ||
		(c->size_known && c->disk_size >= (off_t)HUGE_CHUNK));
}

/* A buffer for p->data: a freed carved one first, then a carved one, else
 * one of the buffer pool.  *fresh: its bytes are zeros. */
static char *buf_get(struct cache *c, struct cpage *p, int *fresh)
{
	*fresh = 0;
	p->chunked = 0;
	if (c->free_bufs) {
		char *b = c->free_bufs;
		memcpy(&c->free_bufs, b, sizeof(void *));
		p->chunked = 1;
		return b;
	}
	if (c->carve_left < c->page && huge_ok(c)) {
		int chunk_fresh;
		struct ffio_chunk *k = ffio_chunk_get(&chunk_fresh);
		c->carve_fresh = chunk_fresh;
		if (k) {
			k->next = c->chunks;
			c->chunks = k;
			c->carve = k->mem;
			c->carve_left = HUGE_CHUNK;
		}
	}
	if (c->carve_left >= c->page) {
		char *b = c->carve;
		c->carve += c->page;
		c->carve_left -= c->page;
		p->chunked = 1;
		*fresh = c->carve_fresh; /* never touched: the kernel gives zeros */
		return b;
	}
	return ffio_buf_alloc(c->page, BLOCK);
}

/* Give p's buffer back (carved ones stay with the cache until release). */
static void buf_put(struct cache *c, struct cpage *p)
{
	if (p->chunked) {
		memcpy(p->data, &c->free_bufs, sizeof(void *));
		c->free_bufs = p->data;
	} else {
		ffio_buf_free(p->data, c->page);
	}
	p->data = NULL;
}

static void chunks_release(struct cache *c)
{
	while (c->chunks) {
		struct ffio_chunk *k = c->chunks;
		c->chunks = k->next;
		ffio_chunk_put(k);
	}
	c->carve = NULL;
	c->carve_left = 0;
	c->free_bufs = NULL;
}

/* Unlink p and give its memory back to the pool. */
static void pg_free(struct cache *c, struct cpage *p)
{
	if (p->ra)
		c->ra_wasted++;
	pg_set_clean(c, p);
	hash_remove(c, p);
	lru_unlink(p);
	buf_put(c, p);
	free(p->ext);
	free(p);
	c->npages--;
	pthread_mutex_lock(&c->pool->lock);
	c->pool->used--;
	pthread_mutex_unlock(&c->pool->lock);
}

static off_t pg_start(const struct cache *c, int64_t pno)
{
	return (off_t)pno * (off_t)c->page;
}

/* The part of [o, o + left) within o's page: the page, the offset in it
 * (*lo), and the length returned. */
static size_t pg_span(const struct cache *c, off_t o, size_t left, int64_t *pno, uint32_t *lo)
{
	*pno = o / (off_t)c->page;
	*lo = (uint32_t)(o - pg_start(c, *pno));
	return c->page - *lo < left ? c->page - *lo : left;
}

static int pg_complete(const struct cache *c, const struct cpage *p)
{
	if (p->next_ext != 1 || p->ext[0].lo != 0 || p->holes)
		return 0;
	return p->ext[0].hi == c->page || pg_start(c, p->pno) + p->ext[0].hi >= c->cached_end;
}

/* Written whole by the application: what goes behind before it is needed
 * (write_behind without must).  A page whose bytes merely reach the end of
 * the file's data is still growing: written early, it was written again
 * with every window netCDF added (tiles into a file four times the cache
 * over cache:1m:64:4, uring:64: 3800 extra writes, 0.44 s against 0.31 s
 * over sys). */
static int pg_full(const struct cache *c, const struct cpage *p)
{
	return p->next_ext == 1 && p->ext[0].lo == 0 && p->ext[0].hi == c->page && !p->holes;
}

static int flush_set(struct cache *c, struct cpage **set, size_t n);

/* flush_set for a caller that waits for the writes at once (a page is
 * needed now): buffered runs go below now, not through the kernel's
 * workers (emit). */
static int flush_set_waited(struct cache *c, struct cpage **set, size_t n)
{
	int waiting = c->waiting;
	c->waiting = 1;
	int err = flush_set(c, set, n);
	c->waiting = waiting;
	return err;
}

/* ---- asynchronous requests ------------------------------------------------ */

static struct areq *areq_new(struct cache *c, int npg, int cnt)
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
	a->next = c->reqs;
	if (c->reqs)
		c->reqs->prev = a;
	c->reqs = a;
	for (int i = 0; i < a->npg; i++)
		a->pg[i]->inflight++;
	c->nreq++;
	c->busy_pages += a->npg;
}

static void areq_unlink(struct cache *c, struct areq *a)
{
	if (a->prev)
		a->prev->next = a->next;
	else
		c->reqs = a->next;
	if (a->next)
		a->next->prev = a->prev;
	for (int i = 0; i < a->npg; i++)
		a->pg[i]->inflight--;
	c->nreq--;
	c->busy_pages -= a->npg;
}

static void kernel_readahead(struct cache *c, int on);

/* Before the cache reads its first page or record of the file below: a
 * cache that reads ahead turns the kernel's read-ahead off (see
 * kernel_readahead), unless the pattern decided otherwise already.  Not at
 * open: a file only written, or read in large requests around the cache
 * (Program I), pays no system call for it. */
static void kernel_readahead_arm(struct cache *c)
{
	if (c->kernel_ra_armed)
		kernel_readahead(c, 0);
}

/* Submit a (linked).  Learns whether the layer below completes requests
 * later (uring) or inside submit (uring without a ring): from then on the
 * cache uses plain synchronous calls over it, as over sys.  0, or -errno when the request was
 * refused (not linked any more; the caller still owns it). */
static int areq_submit(struct cache *c, struct areq *a)
{
	int completed = 0;
	void *mark = a;

	areq_link(c, a);
	a->r.iov = a->iov;
	a->r.iovcnt = a->cnt;
	a->r.data = a;
	if (a->r.op == FFIO_OP_READ)
		kernel_readahead_arm(c);
	/* done() frees a: watch the list instead of a itself */
	int err = ffio_below_submit(&c->base, &a->r);
	if (err < 0) {
		areq_unlink(c, a);
		return err;
	}
	completed = 1;
	for (struct areq *x = c->reqs; x; x = x->next)
		if ((void *)x == mark) {
			completed = 0;
			break;
		}
	c->async_below = !completed;
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
static void write_done(struct ffio_req *r)
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
		r->done = write_done;
		r->data = a;
		int err = ffio_below_submit(&c->base, r);
		if (err == 0)
			return;
		res = err;
	} else if (res == 0 && a->left > 0) {
		res = -EIO;
	}
	areq_unlink(c, a);
	if (res < 0) {
		for (int i = 0; i < a->npg; i++) {
			struct cpage *p = a->pg[i];
			p->known = 0;
			p->ra = 0;
			p->failed = 1; /* seen by a flush_set still running (sync below) */
			p->nvalid = 0;
		}
		ffio_file_set_error(c->base.file, (int)res);
	} else {
		c->below_wbytes += a->len;
		if (a->start + (off_t)a->len > c->disk_size)
			c->disk_size = a->start + (off_t)a->len;
	}
	free(a);
}

/* Completion of a read-ahead request: the pages (or the record's range of
 * one page, sparse) become valid; a failed read leaves them empty (a read
 * of them fetches again, and reports the error). */
static void read_done(struct ffio_req *r)
{
	struct areq *a = r->data;
	struct cache *c = a->c;
	ssize_t res = r->res;

	areq_unlink(c, a);
	if (res > 0)
		c->below_rbytes += (uint64_t)res;
	for (int j = 0; j < a->npg; j++) {
		struct cpage *p = a->pg[j];
		p->reading = 0;
		if (res < 0)
			continue;
		if (a->sparse) {
			size_t want = a->hi - a->lo, have = (size_t)res < want ? (size_t)res : want;
			memset(p->data + a->lo + have, 0, want - have); /* past the end of file */
			valid_add(p, a->lo, a->hi); /* no room: a later read fetches it again */
		} else {
			size_t at = (size_t)j * c->page;
			size_t have = (size_t)res > at ? (size_t)res - at : 0;
			if (have > c->page)
				have = c->page;
			memset(p->data + have, 0, c->page - have);
			p->known = 1;
		}
		p->ra = 1;
	}
	if (res > 0 && a->start + (off_t)res > c->disk_size)
		c->disk_size = a->start + (off_t)res;
	free(a);
}

/* Complete at least one request in flight (commit first).  -EIO when the
 * layer below has nothing to give back although we wait. */
static int reap_one(struct cache *c)
{
	long before = c->nreq;
	int err = ffio_below_commit(&c->base);
	if (err < 0)
		return err;
	for (int tries = 0; tries < 2 && c->nreq == before; tries++) {
		int n = ffio_below_reap(&c->base, 1);
		if (n < 0)
			return n;
	}
	if (c->nreq == before && before > 0) {
		static int once;
		ffio_log_once(&once, "cache: requests in flight below never complete");
		return -EIO;
	}
	return 0;
}

/* Wait until no request uses p's buffer. */
static int pg_wait(struct cache *c, struct cpage *p)
{
	while (p->inflight) {
		int err = reap_one(c);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Wait for every request in flight. */
static int wait_all(struct cache *c)
{
	int err = c->nreq ? ffio_below_commit(&c->base) : 0;
	while (c->nreq > 0 && err == 0)
		err = reap_one(c);
	return err;
}

/* The most pages that may be in flight at once. */
static long busy_limit(const struct cache *c)
{
	return c->limit / 2 > 0 ? c->limit / 2 : 1;
}

static int pg_idle(const struct cpage *p)
{
	return !p->inflight && !p->pin;
}

/* Collect the run of adjacent dirty idle pages around p (only complete
 * ones when p is complete: pages still being filled stay) into set. */
static size_t run_around(struct cache *c, struct cpage *p, struct cpage **set, size_t max)
{
	int complete = pg_complete(c, p);
	size_t n = 0, left = 0;
	struct cpage *q;

	for (int64_t k = p->pno - 1; left < max / 2 && (q = pg_find(c, k)) && q->next_ext &&
				     pg_idle(q) && (!complete || pg_complete(c, q)); k--)
		left++;
	for (size_t i = left; i > 0; i--)
		set[n++] = pg_find(c, p->pno - (int64_t)i);
	set[n++] = p;
	for (int64_t k = p->pno + 1; n < max && (q = pg_find(c, k)) && q->next_ext &&
				     pg_idle(q) && (!complete || pg_complete(c, q)); k++)
		set[n++] = q;
	return n;
}

/* Write behind: submit the least recently used dirty runs, complete pages
 * first, while fewer than busy_limit pages are in flight.  With gaps only
 * when must is set and nothing else can make room.  Returns the number of
 * pages submitted, or -errno. */
static long write_behind(struct cache *c, int must)
{
	enum { MAXRUN = 256 };
	struct cpage *set[MAXRUN];
	long sent = 0;
	int err = 0;

	for (int pass = 0; pass < 2 && err == 0; pass++) {
		if (pass == 1 && (sent > 0 || !must || c->nreq > 0))
			break;
		struct cpage *p = c->lru.next;
		while (p != &c->lru && c->busy_pages < busy_limit(c)) {
			struct cpage *next = p->next;
			if (p->next_ext && pg_idle(p) && (pass == 1 || (must ? pg_complete(c, p) : pg_full(c, p)))) {
				long room = busy_limit(c) - c->busy_pages;
				size_t n = run_around(c, p, set, room < MAXRUN ? (size_t)room : MAXRUN);
				int complete = pass == 0;
				for (size_t i = 0; i < n; i++) {
					if (complete)
						c->ev_complete++;
					else
						c->ev_gaps++;
					set[i]->evicted = 1;
				}
				/* pages with gaps go only when a page is needed now */
				err = pass == 1 ? flush_set_waited(c, set, n) : flush_set(c, set, n);
				sent += (long)n;
				/* over a synchronous stack one run per eviction, as the
				 * pages are clean again at once */
				if (err < 0 || pass == 1 || !c->async_below)
					break;
				next = p->next; /* flush_set leaves the list as it is */
			}
			p = next;
		}
	}
	if (err == 0 && sent > 0)
		err = ffio_below_commit(&c->base);
	return err < 0 ? err : sent;
}

/* ---- loops larger than the cache ---------------------------------------- */

/* A program that goes again and again, in the same order, through more
 * pages than the cache holds (netCDF writing tile after tile of a variable
 * larger than the cache: every tile goes through every plane) finds none
 * of them under LRU: each page is evicted just before it is needed again.
 * The cache remembers the pages it evicted last (a ring of GHOSTS_PER_PAGE
 * x PAGES, at most GHOST_MAX).  When most new pages of a window are pages
 * it evicted, and in the order it evicted them (a loop; random pages
 * would come back in any order), victims come from the most recently used
 * end (loop_victim): the pages at the start of the loop stay and are
 * found the next time round, about PAGES of the loop's pages instead of
 * none.  When the new pages stop coming back that way, LRU again.  Caches
 * of fewer than LOOP_MIN_PAGES pages stay LRU.
 * The same memory decides how many pages the cache takes: it starts with
 * GROW_START and, while it has clean pages to reuse (not counting pages
 * read ahead and not used yet), takes more only when a page it gave up
 * comes back (a larger cache would have kept it).  A program that reads a
 * file once (every worker reading its tile) no longer touches PAGES x PAGE
 * of fresh memory for pages that are used once: one worker's tile of a
 * 216 MB file, through cache:1m:64:4, took 0.04-0.24 s against 0.034 s
 * raw, the time going into the first touch of 64 MiB; with 8 pages, 0.034
 * s.  Six fresh processes each reading its tile of the 13.8 MB seed file
 * once: 0.072 s in all with 64 pages, 0.061 s starting from 2, 0.058 s raw.
 * For a page to write into (pg_new_fresh) the rule holds over a
 * synchronous stack, where a page the program wrote whole is written and
 * reused as well (write_victim); pages with gaps make the cache grow, so
 * that gaps are filled in the cache.  Over an asynchronous stack a page
 * for a write is taken as needed, up to PAGES: write-behind has its
 * pages. */
#define GHOSTS_PER_PAGE 4
#define GHOST_MAX 1024
#define LOOP_MIN_PAGES 8
#define LOOP_WINDOW 32 /* new pages between decisions */
#define LOOP_STEP 4    /* a page evicted at most this many evictions after the last one found */
#define GROW_START 2

/* The ring's index: a table of 2^ghost_bits slots (at least twice the
 * ring), linear probing, entries removed by shifting back the ones after
 * them, so that a lookup costs a probe or two whatever the ring's size (a
 * scan of 1024 entries made every new 4 KiB page a third dearer). */
static size_t ghost_hash(const struct cache *c, int64_t pno)
{
	return (size_t)(((uint64_t)pno * 0x9E3779B97F4A7C15ull) >> (64 - c->ghost_bits));
}

static long ghost_find(const struct cache *c, int64_t pno)
{
	size_t mask = ((size_t)1 << c->ghost_bits) - 1;
	for (size_t i = ghost_hash(c, pno);; i = (i + 1) & mask) {
		if (c->ghost_at[i] < 0)
			return -1;
		if (c->ghost[c->ghost_at[i]] == pno)
			return (long)i;
	}
}

static void ghost_unindex(struct cache *c, size_t i)
{
	size_t mask = ((size_t)1 << c->ghost_bits) - 1, j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (c->ghost_at[j] < 0)
			break;
		size_t k = ghost_hash(c, c->ghost[c->ghost_at[j]]);
		/* the entry at j may move to i if its home is not in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			c->ghost_at[i] = c->ghost_at[j];
			i = j;
		}
	}
	c->ghost_at[i] = -1;
}

static void ghost_add(struct cache *c, int64_t pno)
{
	if (!c->ghost)
		return;
	size_t mask = ((size_t)1 << c->ghost_bits) - 1;
	int32_t slot = (int32_t)(c->ghost_seq++ % (uint64_t)c->ghost_cap);
	long i;
	if (c->ghost[slot] >= 0 && (i = ghost_find(c, c->ghost[slot])) >= 0)
		ghost_unindex(c, (size_t)i); /* the oldest one leaves the ring */
	if ((i = ghost_find(c, pno)) >= 0) { /* evicted twice: the newer slot */
		c->ghost[c->ghost_at[i]] = -1;
		ghost_unindex(c, (size_t)i);
	}
	c->ghost[slot] = pno;
	size_t j = ghost_hash(c, pno);
	while (c->ghost_at[j] >= 0)
		j = (j + 1) & mask;
	c->ghost_at[j] = slot;
}

/* Page pno is about to be loaded (it is not cached): was it evicted lately,
 * just after the last one that came back?  Decide the mode every window. */
static void ghost_note(struct cache *c, int64_t pno)
{
	long i;
	int at = -1;

	if (!c->ghost)
		return;
	if ((i = ghost_find(c, pno)) >= 0) {
		at = c->ghost_at[i];
		ghost_unindex(c, (size_t)i);
	}
	if (at >= 0) {
		int64_t d = c->ghost_prev < 0 ? -1 : (at - c->ghost_prev + c->ghost_cap) % c->ghost_cap;
		if (d >= 1 && d <= LOOP_STEP)
			c->loop_in_order++;
		c->ghost[at] = -1; /* found once */
		c->ghost_prev = at;
		if (c->grow_limit < c->limit) {
			c->grow_limit += c->grow_limit / 4 + 1;
			if (c->grow_limit > c->limit)
				c->grow_limit = c->limit;
		}
	}
	if (++c->loop_new == LOOP_WINDOW) {
		if (4 * c->loop_in_order >= 3 * LOOP_WINDOW)
			c->loop_mode = 1;
		else if (4 * c->loop_in_order < LOOP_WINDOW)
			c->loop_mode = 0;
		c->loop_new = c->loop_in_order = 0;
	}
}

/* Victim p is taken: counted as a clean page unless it was written to
 * make room (counted then), and remembered as evicted. */
static struct cpage *victim_taken(struct cache *c, struct cpage *p)
{
	if (p->evicted)
		p->evicted = 0;
	else
		c->ev_clean++;
	ghost_add(c, p->pno);
	return p;
}

/* Make the dirty victim p clean now: written alone, and waited for, its
 * eviction counted.  0 when it is clean and idle; -1 when it is not
 * (its write failed: the error is the file's). */
static int victim_clean_now(struct cache *c, struct cpage *p)
{
	if (pg_complete(c, p))
		c->ev_complete++;
	else
		c->ev_gaps++;
	p->evicted = 1;
	struct cpage *set[1] = {p};
	int err = flush_set_waited(c, set, 1);
	if (err == 0)
		err = ffio_below_commit(&c->base);
	if (err == 0)
		err = pg_wait(c, p);
	if (err < 0)
		ffio_file_set_error(c->base.file, err);
	return err < 0 || p->next_ext || !pg_idle(p) ? -1 : 0;
}

/* In a loop: the most recently used idle page but the newest one (the
 * program may still be in it) and pages read ahead and not used yet, made
 * clean first if it is dirty.  NULL: none, or its write failed (LRU
 * then). */
static struct cpage *loop_victim(struct cache *c)
{
	struct cpage *p;

	for (p = c->lru.prev->prev; p != &c->lru && (!pg_idle(p) || p->ra); p = p->prev)
		;
	if (p == &c->lru || (p->next_ext && victim_clean_now(c, p) < 0))
		return NULL;
	c->ev_loop++;
	return victim_taken(c, p);
}

/* The least recently used clean page not in flight, among the
 * CLEAN_WALK least recently used pages; NULL when there is none (then the
 * oldest dirty pages are written behind, or the cache grows).  Walking
 * every page cost as much as the rest of the cache put together when old
 * dirty pages sat in front of the clean ones: a file of strided records
 * read back after being written (4 KiB pages, 1024 of them) walked 500
 * pages for each read; and a cache filling with dirty pages walked them
 * all for each new page. */
#define CLEAN_WALK 64
static struct cpage *clean_victim(struct cache *c, int keep_ra)
{
	int walked = 0;
	if (c->ndirty >= c->npages)
		return NULL;
	for (struct cpage *p = c->lru.next; p != &c->lru && walked++ < CLEAN_WALK; p = p->next)
		if (!p->next_ext && pg_idle(p) && !(keep_ra && p->ra))
			return victim_taken(c, p);
	return NULL;
}

/* Over a synchronous stack, a buffer for a new page of a write once the
 * cache holds grow_limit pages: a clean idle page, else, with pages of
 * WRITE_REUSE_PAGE or more, the least recently used idle page the program
 * wrote whole (pg_full: nothing will join it), made clean now and
 * reused.  NULL: none of the CLEAN_WALK oldest pages is either (the cache
 * grows), or the write failed (the error is the file's).  A program
 * writing a file from start to end then goes through a few pages of
 * memory, not one per MiB of its file: ncrcat's 26 MB output through
 * cache:1m:64:4 took 50 MB of memory at its peak, 26 MB so (raw: 19.5),
 * and 6% less processor time.  Smaller pages are left to coalesce: one
 * write per page would be one system call per few KiB.  Over an
 * asynchronous stack pages for writes are taken up to PAGES: write-behind
 * wants them (O_DIRECT writes of 4 MiB with computation between,
 * bench/uring_overlap -d, overlapped 62% against 69% when clean pages
 * were reused, medians of six paired runs). */
#define WRITE_REUSE_PAGE ((size_t)256 << 10)
static struct cpage *write_victim(struct cache *c)
{
	if (c->async_below)
		return NULL;
	struct cpage *v = clean_victim(c, 1);
	int walked = 0;

	if (v || c->page < WRITE_REUSE_PAGE)
		return v;
	for (struct cpage *p = c->lru.next; p != &c->lru && walked++ < CLEAN_WALK; p = p->next)
		if (p->next_ext && pg_idle(p) && pg_full(c, p))
			return victim_clean_now(c, p) < 0 ? NULL : victim_taken(c, p);
	return NULL;
}

/* Choose a victim among this file's pages: in a loop, loop_victim; else a
 * clean page not in flight (least recently used first).  When there is
 * none, dirty runs are written behind (complete pages first, then pages
 * with gaps) and the oldest request in flight is waited for.  Returns the
 * victim, still linked, or NULL (nothing can be had). */
static struct cpage *pick_victim(struct cache *c)
{
	struct cpage *v;

	if (c->loop_mode && c->npages >= 2 && (v = loop_victim(c)))
		return v;
	for (;;) {
		if ((v = clean_victim(c, 0)))
			return v;
		long sent = write_behind(c, 1);
		if (sent < 0) {
			ffio_file_set_error(c->base.file, (int)sent);
			sent = 0;
		}
		if (c->nreq > 0) {
			int err = reap_one(c);
			if (err < 0) {
				ffio_file_set_error(c->base.file, err);
				return NULL;
			}
		} else if (sent == 0) {
			return NULL;
		}
	}
}

/* Take p's memory for page pno. */
static void pg_reuse(struct cache *c, struct cpage *p, int64_t pno)
{
	if (p->ra)
		c->ra_wasted++;
	hash_remove(c, p);
	p->pno = pno;
	p->known = p->ra = p->pin = p->failed = p->reading = p->holes = p->evicted = 0;
	p->nvalid = 0;
	p->next_ext = 0;
	size_t h = hash_of(c, pno);
	p->hnext = c->hash[h];
	c->hash[h] = p;
	pg_touch(c, p);
}

/* Give pages back while a starved file of the shared pool waits. */
static void pool_shrink(struct cache *c)
{
	struct cpool *pool = c->pool;
	long share;

	pthread_mutex_lock(&pool->lock);
	share = pool->limit / (pool->nfiles ? pool->nfiles : 1);
	if (share < 1)
		share = 1;
	int starved = pool->starved;
	pthread_mutex_unlock(&pool->lock);
	while (starved && c->npages > share) {
		struct cpage *v = pick_victim(c);
		if (!v)
			break;
		pg_free(c, v);
	}
	if (starved && c->npages <= share) {
		pthread_mutex_lock(&pool->lock);
		__atomic_store_n(&pool->starved, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&pool->lock);
	}
}

/* A new page for pno (not present), linked most recent; reading: for data
 * to be read into it (see pg_new).  -EAGAIN: no page can be had now (the
 * caller goes around the cache). */
static int pg_take(struct cache *c, int64_t pno, struct cpage **out, int *fresh, int reading)
{
	struct cpool *pool = c->pool;
	int take;

	*fresh = 0;
	ghost_note(c, pno);
	struct cpage *v;
	if (c->npages >= c->grow_limit && (v = reading ? clean_victim(c, 1) : write_victim(c))) {
		pg_reuse(c, v, pno);
		*out = v;
		return 0;
	}
	pthread_mutex_lock(&pool->lock);
	long share = pool->limit / (pool->nfiles ? pool->nfiles : 1);
	take = pool->used < pool->limit;
	if (take)
		pool->used++;
	else if (c->npages == 0 || (c->npages < share && pool->nfiles > 1))
		__atomic_store_n(&pool->starved, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pool->lock);

	if (!take) {
		v = c->npages ? pick_victim(c) : NULL;
		if (!v)
			return -EAGAIN;
		pg_reuse(c, v, pno);
		*out = v;
		return 0;
	}
	struct cpage *p = calloc(1, sizeof *p);
	if (p)
		p->data = buf_get(c, p, fresh);
	if (!p || !p->data) {
		free(p);
		pthread_mutex_lock(&pool->lock);
		pool->used--;
		pthread_mutex_unlock(&pool->lock);
		return -ENOMEM;
	}
	p->pno = pno;
	size_t h = hash_of(c, pno);
	p->hnext = c->hash[h];
	c->hash[h] = p;
	lru_append(c, p);
	if (++c->npages > c->npages_peak)
		c->npages_peak = c->npages;
	*out = p;
	return 0;
}

/* A page for a write: over an asynchronous stack taken as needed, up to
 * PAGES (write-behind wants its pages: O_DIRECT writes 4 MiB at a time
 * overlapped 5-10 points less with the computation when they had to reuse
 * clean ones); over a synchronous one, see write_victim. */
static int pg_new_fresh(struct cache *c, int64_t pno, struct cpage **out, int *fresh)
{
	return pg_take(c, pno, out, fresh, 0);
}

/* A page to read into: a clean one is reused before the cache grows
 * (ghost_note says when it grows). */
static int pg_new(struct cache *c, int64_t pno, struct cpage **out)
{
	int fresh;
	return pg_take(c, pno, out, &fresh, 1);
}

/* ---- I/O below ---------------------------------------------------------- */

static int disk_size(struct cache *c, off_t *size)
{
	if (!c->size_known) {
		int err = ffio_below_size(&c->base, &c->disk_size);
		if (err < 0)
			return err;
		c->size_known = 1;
	}
	*size = c->disk_size;
	return 0;
}

static off_t logical_size(struct cache *c, int *err)
{
	off_t d = 0;
	*err = disk_size(c, &d);
	return d > c->cached_end ? d : c->cached_end;
}

/* Read up to the total of iov at off; *got is what arrived (short at end
 * of file).  With O_DIRECT one call: a short read is the end of file. */
static int below_readv(struct cache *c, struct iovec *iov, int cnt, off_t off, size_t *got)
{
	size_t total = ffio_iov_len(iov, cnt), done = 0;
	ssize_t r;

	c->below_reads++;
	if (cnt == 1 && !c->direct) {
		int err = ffio_below_pread_full(&c->base, iov[0].iov_base, total, off, got);
		if (err < 0)
			return err;
		c->below_rbytes += *got;
		return 0;
	}
	for (;;) {
		do
			r = ffio_below_preadv(&c->base, iov, cnt, off);
		while (r == -EINTR);
		if (r < 0)
			return (int)r;
		done += (size_t)r;
		if (r == 0 || done == total || c->direct)
			break;
		/* short but not at end: go on with the rest */
		size_t skip = (size_t)r;
		while (cnt > 0 && skip >= iov->iov_len) {
			skip -= iov->iov_len;
			iov++;
			cnt--;
		}
		iov->iov_base = (char *)iov->iov_base + skip;
		iov->iov_len -= skip;
		off += r;
	}
	c->below_rbytes += done;
	*got = done;
	return 0;
}

static int get_scratch(struct cache *c)
{
	if (!c->scratch && !(c->scratch = ffio_buf_alloc(c->page, BLOCK)))
		return -ENOMEM;
	return 0;
}

/* Make p known: read its bytes from below around its dirty extents. */
static int pg_load(struct cache *c, struct cpage *p)
{
	off_t start = pg_start(c, p->pno), size;
	size_t got = 0;
	int err;

	if (p->known)
		return 0;
	if ((err = pg_wait(c, p)) < 0 || (err = disk_size(c, &size)) < 0)
		return err;
	if (p->known) /* a read-ahead of it arrived */
		return 0;
	if (start < size) {
		if (!c->can_read)
			return -EBADF;
		if (p->next_ext && (err = get_scratch(c)) < 0)
			return err;
		char *dst = p->next_ext ? c->scratch : p->data;
		struct iovec iov = {dst, c->page};
		kernel_readahead_arm(c);
		if ((err = below_readv(c, &iov, 1, start, &got)) < 0)
			return err;
		if (start + (off_t)got > c->disk_size)
			c->disk_size = start + (off_t)got;
		memset(dst + got, 0, c->page - got);
		if (p->next_ext) { /* copy the bytes around the dirty extents */
			uint32_t at = 0;
			for (uint32_t i = 0; i < p->next_ext; i++) {
				memcpy(p->data + at, dst + at, p->ext[i].lo - at);
				at = p->ext[i].hi;
			}
			memcpy(p->data + at, dst + at, c->page - at);
		}
	} else {
		uint32_t at = 0;
		for (uint32_t i = 0; i < p->next_ext; i++) {
			memset(p->data + at, 0, p->ext[i].lo - at);
			at = p->ext[i].hi;
		}
		memset(p->data + at, 0, c->page - at);
	}
	p->known = 1;
	p->nvalid = 0;
	if (is_sieve(c) && p->next_ext > 1) {
		ext_to_hull(p);
		p->holes = 1;
	}
	return 0;
}

/* Read the absent pages pnos[0..n) (ascending) into new pages; adjacent
 * ones in one request.  Stops quietly when no page can be had. */
static int load_missing(struct cache *c, const int64_t *pnos, int n, int ra)
{
	struct cpage *pg[MAX_IOV];
	struct iovec iov[MAX_IOV];
	int i = 0, err = 0;
	off_t size;

	if ((err = disk_size(c, &size)) < 0)
		return err;
	while (i < n && err == 0) {
		int k = 0, starved = 0;
		while (i + k < n && k < MAX_IOV && (k == 0 || pnos[i + k] == pnos[i + k - 1] + 1)) {
			if (pg_new(c, pnos[i + k], &pg[k]) < 0) {
				starved = 1;
				break;
			}
			pg[k]->pin = 1;
			iov[k] = (struct iovec){pg[k]->data, c->page};
			k++;
		}
		if (k == 0)
			break;
		off_t start = pg_start(c, pnos[i]);
		size_t got = 0;
		if (start < size && !c->can_read) {
			err = -EBADF;
		} else if (start < size) {
			kernel_readahead_arm(c);
			err = below_readv(c, iov, k, start, &got);
		}
		for (int j = 0; j < k; j++) {
			struct cpage *p = pg[j];
			size_t at = (size_t)j * c->page, have = got > at ? got - at : 0;
			p->pin = 0;
			if (err < 0) {
				pg_free(c, p);
				continue;
			}
			if (have < c->page)
				memset(p->data + have, 0, c->page - have);
			p->known = 1;
			p->ra = ra;
		}
		if (err == 0 && start + (off_t)got > c->disk_size)
			c->disk_size = start + (off_t)got;
		i += k;
		if (starved)
			break;
	}
	return err;
}

/* ---- flushing ----------------------------------------------------------- */

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
	c->below_writes++;
	/* Asynchronous only where it pays: a caller that will wait for the
	 * write (flush, fsync, close) gains nothing from a buffered write
	 * handed to the kernel's workers; O_DIRECT runs gain queue depth. */
	if (c->async_below && r->len >= SYNC_RUN && (!c->waiting || c->direct)) {
		int npg = (int)(r->last - r->first + 1);
		struct areq *a = areq_new(c, npg, r->cnt);
		if (a) {
			memcpy(a->iov, r->iov, (size_t)r->cnt * sizeof *r->iov);
			for (int i = 0; i < npg; i++)
				a->pg[i] = set[r->first + (size_t)i];
			a->r = (struct ffio_req){.op = FFIO_OP_WRITE, .off = r->off, .done = write_done};
			a->start = r->off;
			a->len = a->left = r->len;
			if (areq_submit(c, a) == 0) {
				c->async_writes++;
				r->cnt = 0;
				r->len = 0;
				return 0;
			}
			free(a); /* refused: write it now */
		}
	}
	err = ffio_below_pwritev_full(&c->base, r->iov, r->cnt, r->off);
	if (err == 0) {
		c->below_wbytes += r->len;
		if (r->off + (off_t)r->len > c->disk_size)
			c->disk_size = r->off + (off_t)r->len;
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

/* Records closer than this are not worth a vector entry each with a gap
 * of zeros between them: a sieved page past the end with more extents
 * than PAGE / ZERO_GAP_SPACING is made known (its gaps cleared, its
 * extents one hull) as it is written.  Measured with bench/strided, write
 * phase against raw lseek+write: 256 B records at a 4 KiB stride, 5.0-5.2x
 * with zero gaps, 4.3-4.6x cleared; 8 B records at 64 B, 14.6x with zero
 * gaps, 36.5x cleared. */
#define ZERO_GAP_SPACING 2048

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

/* A dirty page the sieve may write as a whole without reading it: known,
 * or unknown but wholly past the end of the file below (below_end), where
 * the bytes it was not given are zeros. */
static int zero_past_end(const struct cache *c, const struct cpage *p, off_t below_end)
{
	return !p->known && !c->direct && p->next_ext && pg_start(c, p->pno) >= below_end;
}

static int sieve_whole(const struct cache *c, const struct cpage *p, off_t below_end)
{
	return p->known || zero_past_end(c, p, below_end);
}

/* Is an unknown dirty page of existing data worth reading so that the
 * sieve writes it in one piece?  Only when its extents lie closer than
 * SIEVE_READ_SPACING apart on average: then one read and one write cost
 * less than a write per extent.  A page with a few long extents (netCDF
 * writes whole windows) is written extent by extent: reading 1 MiB for
 * each one evicted made tiles written into a file four times the cache
 * 0.7x raw (bench/netcdf_tilerec.sh at 600x600x150), 4.1 GB read below
 * for a 216 MB file. */
#define SIEVE_READ_SPACING 8192
static int sieve_read_pays(const struct cache *c, const struct cpage *p)
{
	return (size_t)p->next_ext * SIEVE_READ_SPACING >= c->page;
}

/* Write the dirty data of the pages set[0..n) (any order): every run of
 * adjacent bytes becomes one vector request.  With sieving (or O_DIRECT),
 * known pages are written from their first to their last dirty byte (and
 * across to a dirty neighbour), or block-aligned.  On error the failed
 * pages' data is dropped (they become unknown); the first error returns. */
static int flush_set(struct cache *c, struct cpage **set, size_t n)
{
	struct run *r;
	int first = 0, err, sieve = is_sieve(c);
	off_t true_size, dsize = 0;

	if (n == 0)
		return 0;
	if (!(r = malloc(sizeof *r)))
		return -ENOMEM;
	r->cnt = 0;
	r->len = 0;
	r->end = 0;
	qsort(set, n, sizeof *set, cmp_pno);
	int size_ok = disk_size(c, &dsize) == 0;
	true_size = dsize > c->cached_end ? dsize : c->cached_end;
	/* Pages wholly past the end below, as it is now (before this flush
	 * writes anything), need no reading: their gaps are zeros. */
	off_t below_end = size_ok ? dsize : INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		p->failed = 0;
		if (sieve && zero_past_end(c, p, below_end))
			continue;
		if ((c->direct || (sieve && sieve_read_pays(c, p))) && !p->known && (err = pg_load(c, p)) < 0) {
			if (c->direct) { /* cannot write unaligned without the block's bytes */
				p->failed = 1;
				if (!first)
					first = err;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		if (p->failed || !p->next_ext)
			continue;
		if (c->direct) {
			uint32_t lo = p->ext[0].lo & ~(uint32_t)(BLOCK - 1), hi = 0;
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
		} else if (sieve && sieve_whole(c, p, below_end)) {
			uint32_t lo = p->ext[0].lo, hi = p->ext[p->next_ext - 1].hi;
			/* join a dirty neighbour written whole: the bytes between are known */
			if (i > 0 && set[i - 1]->pno == p->pno - 1 && !set[i - 1]->failed &&
			    sieve_whole(c, set[i - 1], below_end))
				lo = 0;
			if (i + 1 < n && set[i + 1]->pno == p->pno + 1 && !set[i + 1]->failed &&
			    sieve_whole(c, set[i + 1], below_end))
				hi = (uint32_t)c->page;
			if (p->known) {
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
		} else {
			for (uint32_t k = 0; k < p->next_ext; k++)
				if ((err = add_range(c, r, set, i, p->ext[k].lo, p->ext[k].hi)) < 0 && !first)
					first = err;
		}
	}
	if ((err = emit(c, r, set)) < 0 && !first)
		first = err;
	off_t end = r->end;
	free(r);
	/* O_DIRECT wrote whole blocks: where a run ends past the true size,
	 * cut the file back to it once the writes are done (only then: the
	 * writes of a flush within the file stay in flight). */
	if (c->direct && size_ok && end > true_size && (err = wait_all(c)) < 0 && !first)
		first = err;
	if (c->direct && size_ok && c->disk_size > true_size) {
		if ((err = ffio_below_truncate(&c->base, true_size)) < 0 && !first)
			first = err;
		else
			c->disk_size = true_size;
	}
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		if (p->failed) {
			p->known = 0; /* its data never reached the file: forget it */
			p->nvalid = 0;
		} else if (!p->known && p->next_ext == 1) {
			/* what was written stays readable from memory (no room: it
			 * is read again when asked for) */
			valid_add(p, p->ext[0].lo, p->ext[0].hi);
		}
		pg_set_clean(c, p);
		p->failed = 0;
	}
	return first;
}

static int flush_pages(struct cache *c, int64_t lo_pno, int64_t hi_pno)
{
	struct cpage **set;
	size_t n = 0;
	int err;

	if (c->ndirty == 0)
		return 0;
	if (!(set = malloc((size_t)c->ndirty * sizeof *set)))
		return -ENOMEM;
	for (struct cpage *p = c->lru.next; p != &c->lru; p = p->next)
		if (p->next_ext && p->pno >= lo_pno && p->pno <= hi_pno)
			set[n++] = p;
	err = flush_set(c, set, n);
	free(set);
	return err;
}

/* Write every dirty byte and wait for everything in flight (errors of
 * requests that completed are recorded for the file). */
static int flush_all(struct cache *c)
{
	c->waiting = 1;
	int err = flush_pages(c, 0, INT64_MAX);
	c->waiting = 0;
	int e2 = wait_all(c);
	return err < 0 ? err : e2;
}

/* Drop the clean pages (nothing may be in flight: callers wait first). */
static void drop_clean(struct cache *c)
{
	struct cpage *p = c->lru.next, *next;
	for (; p != &c->lru; p = next) {
		next = p->next;
		if (!p->next_ext && !p->inflight)
			pg_free(c, p);
	}
}

/* ---- writes ------------------------------------------------------------- */

/* After n bytes at off reached the file directly: cached pages agree. */
static void absorb_direct_write(struct cache *c, const char *buf, size_t n, off_t off)
{
	int64_t first = off / (off_t)c->page, last = (off + (off_t)n - 1) / (off_t)c->page;

	if (c->npages == 0)
		return;
	for (int64_t k = first; k <= last; k++) {
		struct cpage *p = pg_find(c, k);
		if (!p)
			continue;
		off_t ps = pg_start(c, k);
		off_t a = off > ps ? off : ps, b = off + (off_t)n < ps + (off_t)c->page ? off + (off_t)n : ps + (off_t)c->page;
		if (pg_wait(c, p) == 0) {
			memcpy(p->data + (a - ps), buf + (a - off), (size_t)(b - a));
		} else { /* cannot touch its buffer: forget what it held */
			p->known = 0;
			p->nvalid = 0;
		}
		if (p->next_ext) {
			if (ext_remove(p, (uint32_t)(a - ps), (uint32_t)(b - ps)) < 0) {
				p->next_ext = 1; /* out of memory: forget the page's other bytes */
				p->known = 0;
			}
			if (p->next_ext == 0)
				c->ndirty--;
		}
	}
}

static ssize_t write_around(struct cache *c, const void *buf, size_t n, off_t off)
{
	struct iovec iov = {(void *)buf, n};
	int err;

	c->bypass++;
	c->below_writes++;
	if ((err = ffio_below_pwritev_full(&c->base, &iov, 1, off)) < 0)
		return err;
	c->below_wbytes += n;
	if (c->size_known && off + (off_t)n > c->disk_size)
		c->disk_size = off + (off_t)n;
	absorb_direct_write(c, buf, n, off);
	return (ssize_t)n;
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
	uint64_t cost = (uint64_t)(n >> 10) * c->around_ns_per_mib >> 10;
	return c->big_return_ns && now - c->big_return_ns >= cost / 2;
}

/* write_around, timed: the cost that behind_pays weighs. */
static ssize_t write_around_timed(struct cache *c, const void *buf, size_t n, off_t off, uint64_t t0)
{
	ssize_t r = write_around(c, buf, n, off);
	uint64_t t = ffio_now_ns() - t0, mib = n >> 20 ? n >> 20 : 1;
	if (r > 0)
		c->around_ns_per_mib = cost_update(c->around_ns_per_mib, t / mib);
	return r;
}

static int aligned(const struct cache *c, const void *buf, size_t n, off_t off)
{
	return !c->direct || (((uintptr_t)buf | n | (size_t)off) & (BLOCK - 1)) == 0;
}

static ssize_t cache_write_in(struct cache *c, const void *buf, size_t n, off_t off);
static ssize_t write_split(struct cache *c, const void *buf, size_t n, off_t off);

static ssize_t cache_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);
	int err;

	c->n_write++;
	c->b_write += n;
	if (__atomic_load_n(&c->pool->starved, __ATOMIC_RELAXED)) /* a hint, read unlocked */
		pool_shrink(c);
	/* Take in the write-behinds that completed meanwhile (no waiting):
	 * their pages are free for this write and the next runs. */
	if (c->nreq > 0 && (err = ffio_below_reap(&c->base, 0)) < 0)
		ffio_file_set_error(c->base.file, err);
	if ((c->flags & FFIO_CACHE_WT) || (c->base.file->hints & FFIO_FILE_WRITETHROUGH))
		return write_around(c, buf, n, off);
	/* Large aligned writes go straight below, unless the layer below
	 * writes behind asynchronously and the application leaves it time
	 * to (behind_pays): then they are copied and submitted. */
	if (n >= c->page && aligned(c, buf, n, off)) {
		if (!c->async_below)
			return write_around(c, buf, n, off);
		uint64_t now = ffio_now_ns();
		if (!behind_pays(c, n, now)) {
			ssize_t r = write_around_timed(c, buf, n, off, now);
			c->big_return_ns = ffio_now_ns();
			return r;
		}
		ssize_t r = write_split(c, buf, n, off);
		c->big_return_ns = ffio_now_ns();
		return r;
	}
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
	size_t pages = n / c->page, copy = c->copy_ns_per_mib, around = c->around_ns_per_mib;
	/* rounded down: the call waits for the tail, so a tail that would take
	 * longer than the copy of the head is worse than none (O_DIRECT: the
	 * device is slower than a copy, and the tail is then empty) */
	size_t tail_pages = (size_t)((uint64_t)pages * copy / (copy + around));
	/* Whole pages only: the tail then covers exactly tail_pages pages, and
	 * none of them may be cached (a cached one could hold older dirty
	 * bytes that a later flush would write over the tail's). */
	if (off % (off_t)c->page != 0 || n % c->page != 0 || tail_pages == 0 || tail_pages >= pages)
		tail_pages = 0;
	size_t head = n - tail_pages * c->page;
	int64_t first = (off + (off_t)head) / (off_t)c->page;
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
		c->below_writes++;
		if (ffio_below_submit(&c->base, &t.r) < 0 || ffio_below_commit(&c->base) < 0)
			head = n; /* refused (not in flight): copy it all */
	}
	uint64_t t0 = ffio_now_ns(); /* the copy alone: not the tail's submission */
	ssize_t r = cache_write_in(c, buf, head, off);
	if (r > 0) {
		uint64_t t = ffio_now_ns() - t0, mib = (size_t)r >> 20 ? (size_t)r >> 20 : 1;
		c->copy_ns_per_mib = cost_update(c->copy_ns_per_mib, t / mib);
		/* the head's pages are whole: they start on their way now, to be
		 * written while the application works (nothing will join them) */
		long sent = write_behind(c, 0);
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
	c->below_wbytes += n - head;
	if (c->size_known && off + (off_t)n > c->disk_size)
		c->disk_size = off + (off_t)n;
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

/* Copy n bytes at off into the cache (write-behind). */
static ssize_t cache_write_in(struct cache *c, const void *buf, size_t n, off_t off)
{
	const char *src = buf;
	size_t done = 0;
	off_t size;
	int err, filled = 0;

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
			err = pg_new_fresh(c, pno, &p, &fresh);
			if (err == -EAGAIN && !c->direct) {
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
			 * something needs them (pg_load) or written from zero_gap by
			 * a sieving flush. */
			if (len == c->page) {
				p->known = 1;
			} else if (pg_start(c, pno) >= c->disk_size && (fresh || c->direct)) {
				if (!fresh)
					memset(p->data, 0, c->page);
				p->known = 1;
			}
		} else {
			pg_touch(c, p);
			if (p->inflight && (err = pg_wait(c, p)) < 0) /* never modified in flight */
				return done ? (ssize_t)done : err;
		}
		if (c->direct && len >= STREAM_COPY_MIN)
			ffio_copy_stream(p->data + lo, src + done, len);
		else
			memcpy(p->data + lo, src + done, len);
		if (!p->next_ext)
			c->ndirty++;
		if (p->known && is_sieve(c) && p->next_ext) {
			if (lo + len < p->ext[0].lo || lo > p->ext[p->next_ext - 1].hi)
				p->holes = 1; /* the hull spans bytes not written */
			if (lo < p->ext[0].lo)
				p->ext[0].lo = lo;
			if (lo + len > p->ext[p->next_ext - 1].hi)
				p->ext[p->next_ext - 1].hi = lo + (uint32_t)len;
			ext_to_hull(p);
		} else if ((err = ext_add(p, lo, lo + (uint32_t)len)) < 0) {
			if (!p->next_ext)
				c->ndirty--;
			return done ? (ssize_t)done : err;
		} else if (!p->known && is_sieve(c) && p->next_ext > c->page / ZERO_GAP_SPACING &&
			   pg_start(c, pno) >= c->disk_size && (err = pg_load(c, p)) < 0) {
			return done ? (ssize_t)done : err;
		}
		done += len;
		if (o + (off_t)len > c->cached_end)
			c->cached_end = o + (off_t)len;
		if (lo + len == c->page)
			filled = 1;
	}
	/* Over an asynchronous stack, complete pages start on their way as
	 * soon as a quarter of the cache is dirty: the application goes on
	 * while they are written. */
	if (filled && c->async_below && c->ndirty >= (c->limit + 3) / 4) {
		long sent = write_behind(c, 0);
		if (sent < 0)
			ffio_file_set_error(c->base.file, (int)sent);
	}
	return (ssize_t)n;
}

/* ---- reads -------------------------------------------------------------- */

/* A load of n bytes from below, begun at t0, has ended.  Slower than
 * 2 GB/s (and 20 us) twice in a row: the file comes from the device, and
 * the records, pages or runs ahead are worth a hint to the kernel
 * (ra_hint_records, ra_hint_pages, ra_hint_runs).  Twice, since the first
 * touch of a fresh cache buffer (a huge page cleared) is as slow as one
 * device read: on one slow record, warm 256 B records 64 KiB apart were
 * all hinted, 0.71x raw.  A hint of data the kernel holds already costs a
 * system call and a walk of its pages: 58 us for 1 MiB, half as much as
 * loading the page. */
static void note_load(struct cache *c, off_t n, uint64_t t0)
{
	if (ffio_now_ns() - t0 > COLD_READ_NS + (uint64_t)n / 2)
		c->from_device |= ++c->slow_loads >= 2;
	else
		c->slow_loads = 0;
}

/* The k-th page ahead along the pattern from offset next. */
static int64_t ra_page(const struct cache *c, off_t next, off_t step, int k)
{
	if (step >= (off_t)c->page)
		return (next + (off_t)k * step) / (off_t)c->page;
	return next / (off_t)c->page + k;
}

/* Is the pattern strided with records much smaller than a page, one
 * record per page at most?  Then only the records' bytes are fetched. */
static int ra_sparse(const struct cache *c)
{
	return !c->direct && c->ra_valid && c->ra_stride >= (off_t)c->page &&
	       c->ra_last_len * 4 <= c->page;
}

/* Runs: sequential reads that jump ahead between runs, as netCDF reads a
 * worker's tile of a 3-D array, window after window through the part of
 * each plane that is the worker's, then on to the next plane.  Follow
 * them: the length of the last two runs (of two reads or more each) and
 * the distance between run starts. */
static void run_track(struct cache *c, off_t off)
{
	if (c->ra_valid && off == c->ra_last_off + (off_t)c->ra_last_len) {
		c->run_reads++;
		return;
	}
	if (c->ra_valid) {
		off_t end = c->ra_last_off + (off_t)c->ra_last_len;
		c->run_prev_len = c->run_len;
		c->run_len = c->run_reads >= 2 && end > c->run_start ? end - c->run_start : 0;
		c->run_stride = off - c->run_start;
		if (off < c->run_start)
			c->run_hinted = 0; /* back to an earlier part of the file */
	}
	c->run_start = off;
	c->run_reads = 1;
}

/* Do runs hold: the last two of about the same length (within a quarter),
 * at most half a page, and the next run starting at least half a run past
 * the end of the last?  Then whole pages would mostly hold bytes the
 * application skips (a 1 MiB page holds four planes of a tile read of
 * which the worker needs half), and a miss fetches only what the run
 * still needs of the page (run_load). */
static int ra_runs(const struct cache *c)
{
	off_t len = c->run_len, d = len - c->run_prev_len;
	return !c->direct && len > 0 && c->run_prev_len > 0 && d * 4 <= len && -d * 4 <= len &&
	       len * 2 <= (off_t)c->page && c->run_stride * 2 >= len * 3;
}

/* Submit reads of the absent pages pnos[0..m) (ascending, adjacent ones in
 * one request) into new pages; they arrive later (read_done). */
static void ra_pages(struct cache *c, const int64_t *pnos, int m)
{
	struct cpage *pg[MAX_IOV];
	int i = 0;

	while (i < m) {
		int k = 0, starved = 0;
		while (i + k < m && k < MAX_IOV && (k == 0 || pnos[i + k] == pnos[i + k - 1] + 1)) {
			if (pg_new(c, pnos[i + k], &pg[k]) < 0) {
				starved = 1;
				break;
			}
			pg[k++]->pin = 1; /* not a victim of the pages after it */
		}
		if (k == 0)
			break;
		struct areq *a = areq_new(c, k, k);
		for (int j = 0; j < k; j++) {
			pg[j]->pin = 0;
			if (a) {
				a->pg[j] = pg[j];
				a->iov[j] = (struct iovec){pg[j]->data, c->page};
				pg[j]->reading = 1;
			}
		}
		if (a) {
			a->start = pg_start(c, pnos[i]);
			a->len = a->left = (size_t)k * c->page;
			a->r = (struct ffio_req){.op = FFIO_OP_READ, .off = a->start, .done = read_done};
			c->below_reads++;
			c->async_reads++;
			if (areq_submit(c, a) < 0) {
				for (int j = 0; j < k; j++)
					pg[j]->reading = 0;
				free(a);
				a = NULL;
			}
		}
		if (!a) { /* no request: give the pages back */
			for (int j = 0; j < k; j++)
				pg_free(c, pg[j]);
			break;
		}
		i += k;
		if (starved)
			break;
	}
}

static int pg_load_range(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi);

/* Fetch just the records [ro, ro + n) ahead (sparse strided): requests
 * submitted together, or one read each over a synchronous stack. */
static void ra_records(struct cache *c, off_t next, off_t stride, size_t n, int window, off_t size)
{
	for (int k = 0; k < window; k++) {
		off_t ro = next + (off_t)k * stride;
		if (ro >= size)
			break;
		int64_t pno = ro / (off_t)c->page;
		uint32_t lo = (uint32_t)(ro - pg_start(c, pno));
		if (lo + n > c->page || pg_find(c, pno))
			continue;
		struct cpage *p;
		if (pg_new(c, pno, &p) < 0)
			break;
		if (!c->async_below) { /* one read now, as the application would */
			uint64_t t0 = ffio_now_ns();
			if (pg_load_range(c, p, lo, lo + (uint32_t)n) < 0) {
				pg_free(c, p);
				break;
			}
			p->ra = 1;
			note_load(c, (off_t)n, t0);
			if (c->from_device)
				break; /* hint the rest (ra_hint_records) */
			continue;
		}
		struct areq *a = areq_new(c, 1, 1);
		if (!a) {
			pg_free(c, p);
			break;
		}
		a->pg[0] = p;
		a->iov[0] = (struct iovec){p->data + lo, n};
		a->sparse = 1;
		a->lo = lo;
		a->hi = lo + (uint32_t)n;
		a->start = ro;
		a->len = a->left = n;
		a->r = (struct ffio_req){.op = FFIO_OP_READ, .off = ro, .done = read_done};
		p->reading = 1;
		c->below_reads++;
		c->async_reads++;
		if (areq_submit(c, a) < 0) {
			p->reading = 0;
			free(a);
			pg_free(c, p);
			break;
		}
	}
}

/* The kernel's own read-ahead follows the cache's page loads, not the
 * application's pattern.  Strided records 64 KiB apart, with 64 KiB pages,
 * are adjacent pages to it: it read the whole 256 MB file in 4 MiB
 * requests to serve 4096 records of 256 bytes, 3.2x slower than without
 * it.  So a cache that reads ahead (AHEAD > 0) turns the kernel's
 * read-ahead off (POSIX_FADV_RANDOM) before it reads its first page or
 * record of the file (kernel_readahead_arm), turns it on while the
 * pattern is sequential (it streams better than any hint: it reads into
 * large folios; hints of the same window were 1.5x slower), and off again
 * when a strided pattern holds: then the cache tells the kernel what to
 * read next (WILLNEED starts the reads and returns) and loads each page or
 * record when the application asks for it, from the kernel's page cache. */
static void kernel_readahead(struct cache *c, int on)
{
	c->kernel_ra_armed = 0; /* decided */
	if (c->no_advise || c->kernel_ra_off == !on)
		return;
	int err = ffio_below_advise(&c->base, 0, 0, on ? POSIX_FADV_NORMAL : POSIX_FADV_RANDOM);
	if (err == -EOPNOTSUPP)
		c->no_advise = 1;
	else if (err == 0)
		c->kernel_ra_off = !on;
}

/* A hint: the kernel starts reading [off, off + len).  Returns 0, or
 * -EOPNOTSUPP when nothing below takes hints. */
static int ra_hint(struct cache *c, off_t off, off_t len)
{
	int err;

	if (c->no_advise || !c->kernel_ra_off)
		return -EOPNOTSUPP;
	err = ffio_below_advise(&c->base, off, len, POSIX_FADV_WILLNEED);
	if (err == -EOPNOTSUPP)
		c->no_advise = 1;
	else if (err == 0)
		c->ra_hints++;
	return err == -EOPNOTSUPP ? err : 0; /* a hint: a failure loses nothing */
}

/* Sparse strided records from the device: a hint for each record of the
 * window not yet hinted; each is read when the application asks for it.
 * Measured with 256-byte records 64 KiB apart, cold: 70 us a record one
 * pread at a time, 13 us with the next 32 hinted; reading them ahead into
 * the cache at queue depth over uring, 25 us. */
static int ra_hint_records(struct cache *c, off_t next, off_t stride, size_t n, int window, off_t size)
{
	off_t ro = c->ra_hinted > next ? c->ra_hinted : next;

	for (; ro < next + (off_t)window * stride && ro < size; ro += stride)
		if (ra_hint(c, ro, (off_t)n) < 0)
			return -EOPNOTSUPP;
	c->ra_hinted = ro;
	return 0;
}

/* The pages pnos[0..m) (ascending) ahead along the pattern: a hint for
 * each run of adjacent ones. */
static int ra_hint_pages(struct cache *c, const int64_t *pnos, int m, off_t size)
{
	for (int i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && pnos[j] == pnos[j - 1] + 1;)
			j++;
		off_t lo = pg_start(c, pnos[i]), hi = pg_start(c, pnos[j - 1]) + (off_t)c->page;
		if (ra_hint(c, lo, (hi < size ? hi : size) - lo) < 0)
			return -EOPNOTSUPP;
	}
	return 0;
}

/* Are all bytes of [off, off + len) in the cache? */
static int cached(struct cache *c, off_t off, off_t len)
{
	while (len > 0) {
		int64_t pno;
		uint32_t lo;
		size_t n = pg_span(c, off, (size_t)len, &pno, &lo);
		struct cpage *p = pg_find(c, pno);
		if (!p || !pg_holds(p, lo, lo + (uint32_t)n))
			return 0;
		off += (off_t)n;
		len -= (off_t)n;
	}
	return 1;
}

/* What a run's fetch takes past the last run's length: what the last two
 * runs differed by, at least a 32nd of a run.  netCDF's runs over a tile
 * differ by a window as the tile's rows fall across its 8 KiB windows;
 * an eighth to spare read 7-8% more than that (a worker's tile of the
 * seed file: 8.75 MB below, 8.12 MB so, in the same 63 reads; at full
 * size 83.6 MB and 77.1 MB in 218), and only the difference, without the
 * 32nd, made 40 more reads of 218 at full size (each a round trip to the
 * device for a file not in the page cache). */
static off_t run_spare(const struct cache *c)
{
	off_t d = c->run_len > c->run_prev_len ? c->run_len - c->run_prev_len : c->run_prev_len - c->run_len;
	return d > c->run_len / 32 ? d : c->run_len / 32;
}

/* Runs ahead, once runs come from the device (note_load): a hint for each of
 * the next AHEAD runs not hinted yet and not cached, with the kernel's own
 * read-ahead off (it would read the gaps between them too); each run's
 * part of a page is fetched when the application gets to it (run_load).
 * A file in the page cache gets no hints: a hint costs a system call and
 * a walk of the kernel's pages (2134 of them made a warm tile + record
 * run 2.5 times as slow). */
static void ra_hint_runs(struct cache *c, off_t size)
{
	off_t len = c->run_len + run_spare(c);

	if (!c->from_device)
		return;
	kernel_readahead(c, 0);
	for (int k = 1; k <= c->ahead; k++) {
		off_t ro = c->run_start + (off_t)k * c->run_stride;
		if (ro >= size)
			break;
		if (ro < c->run_hinted)
			continue;
		off_t n = len < size - ro ? len : size - ro;
		if (!cached(c, ro, n) && ra_hint(c, ro, n) < 0)
			return;
		c->run_hinted = ro + 1;
	}
}

/* Follow the access pattern: remember it, and when it holds, make sure the
 * next AHEAD pages (or records, sparse) along it are cached or on their
 * way: requests submitted together and committed in one batch, topped up
 * when the one half-way ahead is missing. */
static void read_ahead(struct cache *c, off_t off, size_t n, off_t size)
{
	off_t step;

	run_track(c, off);
	if (c->ra_valid && off == c->ra_last_off + (off_t)c->ra_last_len) {
		c->ra_stride = 0;
		c->ra_hits++;
	} else if (c->ra_valid && off - c->ra_last_off == c->ra_stride && c->ra_stride > 0) {
		c->ra_hits++;
	} else {
		c->ra_stride = c->ra_valid ? off - c->ra_last_off : 0;
		c->ra_hits = 0;
		c->ra_hinted = 0;
	}
	c->ra_valid = 1;
	c->ra_last_off = off;
	c->ra_last_len = n;
	if (c->ahead <= 0 || !c->can_read)
		return;
	if (ra_runs(c)) {
		ra_hint_runs(c, size);
		return;
	}
	if (c->ra_hits < 1)
		return;
	kernel_readahead(c, c->ra_stride == 0);
	if (c->ra_stride == 0 && !c->async_below && !c->kernel_ra_off && !c->no_advise)
		return; /* sequential over a synchronous stack: the kernel reads ahead, pages load on demand */
	off_t next = c->ra_stride ? off + c->ra_stride : off + (off_t)n;
	step = c->ra_stride ? c->ra_stride : (off_t)c->page;
	int window = c->ahead;
	if (window > c->limit / 2)
		window = (int)(c->limit / 2);
	if (window < 1)
		return;
	int64_t probe = ra_page(c, next, step, window / 2);
	if (pg_start(c, probe) >= size || pg_find(c, probe))
		return;
	if (c->ra_hinted > next + (off_t)(window / 2) * step)
		return; /* hinted far enough ahead */
	if (ra_sparse(c) && c->from_device && ra_hint_records(c, next, c->ra_stride, n, window, size) == 0) {
		return;
	} else if (ra_sparse(c)) {
		ra_records(c, next, c->ra_stride, n, window, size);
	} else {
		/* the missing pages of the window along the pattern */
		int64_t pnos[MAX_IOV];
		int m = 0;
		for (int k = 0; k < window && m < MAX_IOV; k++) {
			int64_t pno = ra_page(c, next, step, k);
			if (pg_start(c, pno) >= size)
				break;
			if (!pg_find(c, pno) && (m == 0 || pnos[m - 1] != pno))
				pnos[m++] = pno;
		}
		if (!c->async_below && c->ra_stride && !c->no_advise && c->from_device) {
			int k = 0; /* those not hinted yet */
			while (k < m && pg_start(c, pnos[k]) < c->ra_hinted)
				k++;
			if (ra_hint_pages(c, pnos + k, m - k, size) == 0) {
				/* hinted up to the end of the window's last page (with a
				 * stride under a page, the next records' offsets are still
				 * in this page: every record hinted the next page again,
				 * 15 times as slow as raw for 256 B records 4 KiB apart) */
				off_t end = m > 0 ? pg_start(c, pnos[m - 1]) + (off_t)c->page : next + (off_t)window * step;
				if (end > c->ra_hinted)
					c->ra_hinted = end;
				return;
			}
		}
		if (!c->async_below) { /* no hints: read them now */
			uint64_t t0 = ffio_now_ns();
			if (m > 0 && load_missing(c, pnos, m, 1) < 0)
				c->ra_valid = 0;
			else if (m > 0)
				note_load(c, (off_t)m * (off_t)c->page, t0);
			return;
		}
		ra_pages(c, pnos, m);
	}
	if (ffio_below_commit(&c->base) < 0)
		c->ra_valid = 0; /* read-ahead is a hint: forget the pattern */
}

/* Fetch just [lo, hi) of page p (no dirty bytes) from below, now. */
static int pg_load_range(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi)
{
	struct iovec iov = {p->data + lo, hi - lo};
	size_t got = 0;
	int err;

	if (!c->can_read)
		return -EBADF;
	kernel_readahead_arm(c);
	if ((err = pg_wait(c, p)) < 0 || (err = below_readv(c, &iov, 1, pg_start(c, p->pno) + lo, &got)) < 0)
		return err;
	memset(p->data + lo + got, 0, hi - lo - got);
	if (valid_add(p, lo, hi) < 0) { /* no room: this range alone */
		p->nvalid = 0;
		valid_add(p, lo, hi);
	}
	return 0;
}

/* A miss at [lo, hi) of page p (no dirty bytes) while runs hold: fetch
 * up to where the current run, begun at start, should end (its length as
 * the last one's, and run_spare; past that, a quarter run at a time),
 * within the page; from the end of the valid range lo is in, if any (the
 * range grows).  When that range holds an earlier run's bytes, the
 * application reads the page through, run after run (tiles side by side):
 * the whole page is loaded. */
static int run_load(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi, off_t start)
{
	off_t ps = pg_start(c, p->pno), end = start + c->run_len + run_spare(c);
	int err;

	if ((err = pg_wait(c, p)) < 0)
		return err;
	if (end < ps + (off_t)hi)
		end = ps + (off_t)hi + c->run_len / 4;
	if (end > ps + (off_t)c->page)
		end = ps + (off_t)c->page;
	int at;
	if (valid_covers(p, lo, hi, &at))
		return 0; /* arrived while waiting */
	if (at >= 0 && ps + (off_t)p->valid[at].lo < start)
		return pg_load(c, p); /* this run goes on from an earlier one's bytes: all of the page is wanted */
	c->run_loads++;
	uint32_t from = at >= 0 ? p->valid[at].hi : lo;
	uint64_t t0 = ffio_now_ns();
	if ((err = pg_load_range(c, p, from, (uint32_t)(end - ps))) == 0)
		note_load(c, end - ps - from, t0);
	return err;
}

/* A large read that goes around the cache: when it continues the one
 * before it, the kernel reads ahead (see kernel_readahead). */
static void around_ahead(struct cache *c, off_t off, size_t n)
{
	run_track(c, off);
	if (c->ra_valid && off == c->ra_last_off + (off_t)c->ra_last_len)
		kernel_readahead(c, 1);
	c->ra_hinted = 0;
	c->ra_valid = 1;
	c->ra_last_off = off;
	c->ra_last_len = n;
	c->ra_stride = 0;
}

/* Read [off, off + n) from below straight into the caller's buffer, around
 * the cache; *got is what arrived (short at the end of the file below). */
static int read_through(struct cache *c, void *buf, size_t n, off_t off, size_t *got)
{
	struct iovec iov = {buf, n};
	c->bypass++;
	return below_readv(c, &iov, 1, off, got);
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

static ssize_t cache_pread(struct ffio_layer *l, void *buf, size_t n, off_t off)
{
	struct cache *c = CACHE(l);
	char *dst = buf;
	size_t done = 0;
	off_t size;
	int err;

	c->n_read++;
	c->big_return_ns = 0; /* I/O, not work: see behind_pays */
	if (__atomic_load_n(&c->pool->starved, __ATOMIC_RELAXED)) /* a hint, read unlocked */
		pool_shrink(c);
	if (n >= c->page && c->cached_end == 0 && aligned(c, buf, n, off)) {
		/* No write of this open is cached: the file below holds every
		 * byte, and its size need not be asked for (a short read is its
		 * end).  Program I reads this way after each open. */
		size_t got = 0;
		around_ahead(c, off, n);
		if ((err = read_through(c, buf, n, off, &got)) < 0)
			return err;
		c->b_read += got;
		return (ssize_t)got;
	}
	size = logical_size(c, &err);
	if (err < 0)
		return err;
	if (off >= size || n == 0)
		return 0;
	if ((off_t)n > size - off)
		n = (size_t)(size - off);
	c->b_read += n;
	if (n >= c->page && aligned(c, buf, n, off)) {
		int64_t first = off / (off_t)c->page, last = (off + (off_t)n - 1) / (off_t)c->page;
		if ((err = flush_pages(c, first, last)) < 0 || (err = wait_all(c)) < 0)
			return err;
		around_ahead(c, off, n);
		return read_around(c, buf, n, off);
	}
	off_t run0 = c->ra_valid && off == c->ra_last_off + (off_t)c->ra_last_len ? c->run_start : off;
	off_t below_end = 0; /* pages past it are zeros: whole ones cost no read */
	int runs_now = ra_runs(c) && disk_size(c, &below_end) == 0;
	while (done < n) {
		off_t o = off + (off_t)done;
		int64_t pno;
		uint32_t lo;
		size_t len = pg_span(c, o, n - done, &pno, &lo);
		struct cpage *p = pg_find(c, pno);
		uint32_t hi = lo + (uint32_t)len;
		int runs = runs_now && pg_start(c, pno) < below_end;

		if (p && p->reading && (err = pg_wait(c, p)) < 0) /* read-ahead on its way */
			return done ? (ssize_t)done : err;
		if (p && !pg_holds(p, lo, hi)) {
			c->misses++;
			if (!p->next_ext && runs)
				err = run_load(c, p, lo, hi, run0);
			else if (!p->next_ext && ra_sparse(c))
				err = pg_load_range(c, p, lo, hi);
			else {
				uint64_t t0 = ffio_now_ns();
				if ((err = pg_load(c, p)) == 0)
					note_load(c, (off_t)c->page, t0);
			}
			if (err < 0)
				return done ? (ssize_t)done : err;
		} else if (p) {
			c->hits++;
			if (p->ra) {
				p->ra = 0;
				c->ra_used++;
			}
		} else if (runs || ra_sparse(c)) {
			/* absent: what the run needs of it, or just this strided record */
			uint64_t t0 = ffio_now_ns();
			c->misses++;
			if ((err = pg_new(c, pno, &p)) == 0 &&
			    (err = runs ? run_load(c, p, lo, hi, run0) : pg_load_range(c, p, lo, hi)) < 0)
				pg_free(c, p);
			if (err == 0 && !runs)
				note_load(c, (off_t)(hi - lo), t0);
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
			int64_t lastp = (off + (off_t)n - 1) / (off_t)c->page;
			int m = 0;
			long cap = c->limit / 2 > 0 ? c->limit / 2 : 1;
			while (m < 64 && m < cap && pno + m <= lastp && (m == 0 || !pg_find(c, pno + m))) {
				pnos[m] = pno + m;
				m++;
			}
			c->misses++;
			uint64_t t0 = ffio_now_ns();
			if ((err = load_missing(c, pnos, m, 0)) < 0)
				return done ? (ssize_t)done : err;
			note_load(c, (off_t)m * (off_t)c->page, t0);
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
	read_ahead(c, off, n, size);
	return (ssize_t)n;
}

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

	if ((err = wait_all(c)) < 0 || (err = ffio_below_truncate(l, len)) < 0)
		return err;
	struct cpage *p = c->lru.next, *next;
	for (; p != &c->lru; p = next) {
		next = p->next;
		off_t ps = pg_start(c, p->pno);
		if (ps >= len) {
			pg_free(c, p);
		} else if (ps + (off_t)c->page > len) {
			uint32_t cut = (uint32_t)(len - ps);
			if (p->next_ext && ext_remove(p, cut, (uint32_t)c->page) < 0) {
				pg_free(c, p); /* out of memory: drop the page's data */
				continue;
			}
			memset(p->data + cut, 0, c->page - cut);
			valid_cut(p, cut);
		}
	}
	/* recount the dirty pages: cutting may have emptied some */
	c->ndirty = 0;
	for (p = c->lru.next; p != &c->lru; p = p->next)
		c->ndirty += p->next_ext != 0;
	c->disk_size = len;
	c->size_known = 1;
	if (c->cached_end > len)
		c->cached_end = len;
	return 0;
}

static int cache_flush(struct ffio_layer *l)
{
	CACHE(l)->big_return_ns = 0; /* I/O, not work: see behind_pays */
	int err = flush_all(CACHE(l));
	int e2 = ffio_below_flush(l);
	return err < 0 ? err : e2;
}

static int cache_fsync(struct ffio_layer *l, int datasync)
{
	struct cache *c = CACHE(l);
	c->big_return_ns = 0; /* I/O, not work: see behind_pays */
	int err = flush_all(c);
	int e2 = ffio_below_fsync(l, datasync);
	drop_clean(c);
	c->size_known = 0;
	c->ra_valid = 0;
	return err < 0 ? err : e2;
}

static void recompute_cached_end(struct cache *c)
{
	c->cached_end = 0;
	for (struct cpage *p = c->lru.next; p != &c->lru; p = p->next)
		if (p->next_ext) {
			off_t e = pg_start(c, p->pno) + p->ext[p->next_ext - 1].hi;
			if (e > c->cached_end)
				c->cached_end = e;
		}
}

static int cache_invalidate(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = wait_all(c);
	if (err < 0)
		return err;
	drop_clean(c);
	c->size_known = 0;
	c->ra_valid = 0;
	recompute_cached_end(c);
	return ffio_below_invalidate(l);
}

/* Drop everything without writing it. */
static int cache_discard(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = wait_all(c);
	if (err < 0)
		return err;
	while (c->lru.next != &c->lru)
		pg_free(c, c->lru.next);
	c->cached_end = 0;
	c->size_known = 0;
	return 0;
}

/* ---- open, close, statistics -------------------------------------------- */

static int cache_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct cache *c = CACHE(l);
	const struct ffio_layer_spec *ls = l->spec;
	int err, bflags;

	c->page = (size_t)ls->arg[FFIO_CACHE_PAGE];
	c->limit = (long)ls->arg[FFIO_CACHE_PAGES];
	c->ahead = (int)ls->arg[FFIO_CACHE_AHEAD];
	c->flags = ls->flags;
	if (c->page < 1)
		c->page = 1;
	if (c->page > (size_t)1 << 30)
		c->page = (size_t)1 << 30;
	if (c->limit < 1)
		c->limit = 1;
	c->direct = (c->flags & FFIO_CACHE_DIRECT) != 0;
	if (c->direct)
		c->page = (c->page + BLOCK - 1) & ~(size_t)(BLOCK - 1);
	c->lru.next = c->lru.prev = &c->lru;

	/* Open below readable when possible (sieving, partial pages). */
	bflags = flags & ~O_APPEND;
	c->can_read = (flags & O_ACCMODE) != O_WRONLY;
	if ((flags & O_ACCMODE) == O_WRONLY)
		bflags = (bflags & ~O_ACCMODE) | O_RDWR;
	if (c->direct)
		bflags |= O_DIRECT;
	err = ffio_below_open(l, dirfd, path, bflags, mode);
	if (err == -EACCES && (flags & O_ACCMODE) == O_WRONLY) {
		bflags = (bflags & ~O_ACCMODE) | O_WRONLY;
		err = ffio_below_open(l, dirfd, path, bflags, mode);
	} else if (err == 0) {
		c->can_read = 1;
	}
	if (err == -EINVAL && c->direct) {
		static int once;
		ffio_log_once(&once, "%s: O_DIRECT not supported here; the cache runs without it", path);
		c->direct = 0;
		bflags &= ~O_DIRECT;
		err = ffio_below_open(l, dirfd, path, bflags, mode);
	}
	if (err < 0)
		return err;
	/* Without AHEAD the kernel's read-ahead stays on. */
	c->kernel_ra_armed = c->ahead > 0 && c->can_read && !c->direct;

	size_t hsize = 16;
	long want = c->limit;
	if (c->flags & FFIO_CACHE_SHARED) {
		struct ffio_layer_spec *mls = (struct ffio_layer_spec *)ls;
		pthread_mutex_lock(&mls->shared_lock);
		if (!mls->shared) {
			struct cpool *pool = calloc(1, sizeof *pool);
			if (pool) {
				pthread_mutex_init(&pool->lock, NULL);
				pool->limit = c->limit;
			}
			mls->shared = pool;
		}
		c->pool = mls->shared;
		if (c->pool) {
			pthread_mutex_lock(&c->pool->lock);
			c->pool->nfiles++;
			pthread_mutex_unlock(&c->pool->lock);
		}
		pthread_mutex_unlock(&mls->shared_lock);
	}
	if (!c->pool) {
		c->pool = &c->own_pool;
		pthread_mutex_init(&c->own_pool.lock, NULL);
		c->own_pool.limit = c->limit;
		c->own_pool.nfiles = 1;
	}
	while ((long)hsize < 2 * want && hsize < ((size_t)1 << 24))
		hsize *= 2;
	c->hash = calloc(hsize, sizeof *c->hash);
	if (!c->hash) {
		ffio_below_close(l);
		return -ENOMEM;
	}
	c->hmask = hsize - 1;
	c->ghost_prev = -1;
	c->grow_limit = c->limit;
	if (c->limit >= LOOP_MIN_PAGES) {
		long cap = GHOSTS_PER_PAGE * c->limit;
		c->ghost_cap = cap < GHOST_MAX ? (int)cap : GHOST_MAX;
		/* none: LRU only, and every page taken as needed */
		c->ghost_bits = 1;
		while (((size_t)1 << c->ghost_bits) < 2 * (size_t)c->ghost_cap)
			c->ghost_bits++;
		c->ghost = malloc((size_t)c->ghost_cap * sizeof *c->ghost);
		c->ghost_at = malloc(((size_t)1 << c->ghost_bits) * sizeof *c->ghost_at);
		if (!c->ghost || !c->ghost_at) {
			free(c->ghost);
			free(c->ghost_at);
			c->ghost = NULL;
			c->ghost_at = NULL;
		} else {
			memset(c->ghost, 0xff, (size_t)c->ghost_cap * sizeof *c->ghost);   /* -1: none */
			memset(c->ghost_at, 0xff, ((size_t)1 << c->ghost_bits) * sizeof *c->ghost_at);
			if (GROW_START < c->limit)
				c->grow_limit = GROW_START;
		}
	}
	c->around_ns_per_mib = 250000; /* a first guess: 4 GiB/s into the page cache */
	c->copy_ns_per_mib = 100000;   /* and 10 GiB/s for a copy */
	/* Expect asynchronous completion over uring (learned at each submit:
	 * a uring without a ring completes at once, as sys). */
	for (struct ffio_layer *b = l->below; b; b = b->below)
		if (!b->below && b->ops == &ffio_layer_uring && !ffio_layer_uring.unavailable)
			c->async_below = 1;
	return 0;
}

static void report(struct cache *c)
{
	char label[128], text[2048];
	int n;

	ffio_layer_label(&c->base, label, sizeof label);
	n = snprintf(text, sizeof text,
		     "ffio cache %s: %s\n"
		     "  reads %" PRIu64 " (%" PRIu64 " bytes), writes %" PRIu64 " (%" PRIu64 " bytes)\n"
		     "  page hits %" PRIu64 ", misses %" PRIu64 ", read-ahead used %" PRIu64 ", wasted %" PRIu64
		     ", read hints below %" PRIu64 ", fetches along runs %" PRIu64 "\n"
		     "  below: %" PRIu64 " reads (%" PRIu64 " bytes), %" PRIu64 " writes (%" PRIu64 " bytes); %" PRIu64 " requests went around the cache\n"
		     "  asynchronous: %" PRIu64 " writes, %" PRIu64 " reads\n"
		     "  evictions: %" PRIu64 " clean, %" PRIu64 " complete dirty, %" PRIu64 " dirty with gaps"
		     "; %" PRIu64 " of them in a loop, most recent first\n"
		     "  memory: at most %ld of %ld pages held (%zu KiB of page buffers)\n",
		     label, c->base.file->path, c->n_read, c->b_read, c->n_write, c->b_write, c->hits,
		     c->misses, c->ra_used, c->ra_wasted, c->ra_hints, c->run_loads, c->below_reads, c->below_rbytes, c->below_writes,
		     c->below_wbytes, c->bypass, c->async_writes, c->async_reads, c->ev_clean,
		     c->ev_complete, c->ev_gaps, c->ev_loop, c->npages_peak, c->limit,
		     (size_t)c->npages_peak * (c->page >> 10));
	if (n > 0)
		ffio_log_raw(text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

static void release(struct cache *c)
{
	while (c->lru.next != &c->lru)
		pg_free(c, c->lru.next);
	if (c->scratch)
		ffio_buf_free(c->scratch, c->page);
	c->scratch = NULL;
	chunks_release(c);
	free(c->ghost);
	free(c->ghost_at);
	free(c->hash);
	c->hash = NULL;
	if (c->pool != &c->own_pool) {
		pthread_mutex_lock(&c->pool->lock);
		c->pool->nfiles--;
		pthread_mutex_unlock(&c->pool->lock);
	}
}

static int cache_close(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	int err = flush_all(c);

	if (c->flags & FFIO_CACHE_DIAG)
		report(c);
	if (c->nreq > 0) { /* cannot free buffers in flight: keep them */
		ffio_log("%s: cache: %ld requests never completed", c->base.file->path, c->nreq);
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
	st->count[FFIO_STAT_READ] = c->n_read;
	st->bytes[FFIO_STAT_READ] = c->b_read;
	st->count[FFIO_STAT_WRITE] = c->n_write;
	st->bytes[FFIO_STAT_WRITE] = c->b_write;
	st->hits = c->hits;
	st->misses = c->misses;
	st->readahead_used = c->ra_used;
	st->readahead_wasted = c->ra_wasted;
	st->evictions = c->ev_clean + c->ev_complete + c->ev_gaps;
	return 0;
}

/* In the child after fork: the parent's dirty data is the parent's. */
static void cache_atfork_child(struct ffio_layer *l)
{
	struct cache *c = CACHE(l);
	if (c->pool != &c->own_pool)
		pthread_mutex_init(&c->pool->lock, NULL);
	pthread_mutex_init(&c->own_pool.lock, NULL);
	/* the parent's requests in flight are not ours (the layer below
	 * dropped them without completing them) */
	while (c->reqs) {
		struct areq *a = c->reqs;
		areq_unlink(c, a);
		free(a);
	}
	for (struct cpage *p = c->lru.next; p != &c->lru; p = p->next) {
		if (p->next_ext || p->reading)
			p->known = 0;
		pg_set_clean(c, p);
		p->pin = p->reading = 0;
		p->inflight = 0;
	}
	drop_clean(c);
	recompute_cached_end(c);
	c->size_known = 0;
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
	.flush = cache_flush,
	.fsync = cache_fsync,
	.truncate = cache_truncate,
	.size = cache_size,
	.invalidate = cache_invalidate,
	.stats = cache_stats,
	.atfork_child = cache_atfork_child,
	.discard = cache_discard,
};
