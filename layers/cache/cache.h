/* layers/cache/cache.h -- the cache layer's private header: its structures,
 * the small helpers all its parts use (static inline), and the functions
 * the parts share (hidden: not exported from the library; the layer's one
 * exported symbol is its method table, ffio_layer_cache, in cache.c).
 *
 * The cache layer: write-behind with byte-exact dirty tracking, coalescing
 * of adjacent dirty data into single vector requests, eviction that keeps
 * pages whose gaps are still being filled, optional sieving (.sieve),
 * read-ahead along sequential and constant-stride patterns, fetches that
 * follow runs (a tile read through netCDF's windows), read advice to the
 * kernel for files that come from the device, read-your-writes for sizes
 * and truncation, write-through (.wt), O_DIRECT below (.direct), one page
 * pool for all files of an entry (.shared), and statistics (.diag,
 * ffgetstats).  See ffio-cache(7).
 *
 * A page is PAGE bytes of the file at a PAGE-aligned offset.  Its bytes are
 * "known" when the whole page holds the file's current content (read from
 * below, zeros past the end of file, or written by the application); an
 * unknown page holds valid bytes only inside its dirty extents.  Dirty
 * extents are a sorted array of disjoint [lo, hi) ranges per page; a known
 * page under sieving keeps them exact while they are few, else one hull
 * extent and a written map (wmap, a bit per byte) of the bytes written
 * (sieve_hull_due): what the page holds of the application's is always
 * known to the byte, whatever the sieve writes (sieve.c).  An unknown page may
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
 *
 * The parts, one file each:
 *   cache.c      open, close, size, truncate, flush, fsync, invalidate,
 *                discard, statistics; the method table
 *   page.c       pages: dirty extents, clean valid ranges, hash, LRU, budget
 *   buffer.c     page buffers: carved from huge chunks or the buffer pool
 *   async.c      requests in flight below: submission, completion, waiting
 *   evict.c      write-behind, victims, loops larger than the cache
 *   below.c      reads from below into pages
 *   flush.c      dirty data written below in runs; flush points
 *   sieve.c      the gaps of sieved pages filled under a lock on the range
 *   write.c      the write method
 *   readahead.c  read-ahead along patterns and runs; advice to the kernel
 *   read.c       the read method
 */
#ifndef FFIO_LAYERS_CACHE_H
#define FFIO_LAYERS_CACHE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "ffio-internal.h"
#include "guard/guard.h"

/* The functions the parts share are internal to the library, as all of
 * it is (-fvisibility=hidden). */

#define BLOCK 4096          /* alignment of O_DIRECT requests and page buffers */
#define MAX_IOV 1024        /* iovecs in one request below (IOV_MAX) */
/* Pages one load or read-ahead request fills, and the pages a read-ahead
 * looks at in one go: lists of them are on the stack, and a signal
 * handler on a small alternate stack (12 KiB) may read or write through
 * the cache. */
#define LOAD_BATCH 64
#define RA_WINDOW_MAX 128
#define MAX_VALID 8         /* clean valid ranges an unknown page remembers */

/* A range [lo, hi) of bytes within a page. */
struct cext {
	uint32_t lo, hi;
};

/* A page of the file held in the cache. */
struct cpage {
	int64_t pno;                      /* page number: offset / PAGE */
	char *data;
	uint64_t *wmap;                   /* a sieve hull's written bytes, a bit each, or NULL */
	struct guard_page *g;             /* its record in guarded memory, or NULL (see cache_guard) */
	struct cpage *prev, *next;        /* LRU list, least recent first */
	struct cext *ext;                 /* dirty extents, sorted, disjoint */
	uint32_t next_ext, cap_ext;
	unsigned known : 1;               /* every byte valid */
	unsigned ra : 1;                  /* read ahead, not used yet */
	unsigned pin : 1;                 /* being filled: not a victim */
	unsigned failed : 1;              /* scratch flag of a flush */
	unsigned reading : 1;             /* a read into it is in flight */
	unsigned holes : 1;               /* a sieve hull spans bytes not written (wmap says which) */
	unsigned evicted : 1;             /* written behind to make room (counted) */
	unsigned chunked : 1;             /* data is carved from a huge chunk */
	unsigned fill : 2;                /* scratch of a sieving flush: written whole (FILL, sieve.c) */
	unsigned zeros : 1;               /* known, made past the end: the bytes not written are zeros */
	unsigned gclear : 1;              /* clean, its writes in flight: unmarked when they end */
	uint16_t inflight;                /* requests below using data */
	uint8_t nvalid;                   /* clean valid ranges of an unknown page: */
	uint32_t nwrites;                 /* writes into it since it was clean (aside.c) */
	/* (the hit paths read no field below) */
	uint32_t wcount;                  /* bytes marked in wmap */
	struct cpage *hnext;              /* hash chain */
	struct cext valid[MAX_VALID];     /* sorted, disjoint, not touching */
};

/* cpage.fill: its gaps are the file's bytes (zeros past the end, or
 * loaded under the lock), or are to be read again under it. */
enum { FILL = 1, FILL_REFRESH = 2 };

/* The page budget: one per file, or one per entry with .shared. */
struct cpool {
	pthread_mutex_t lock;
	long limit;   /* pages */
	long used;
	int nfiles;
	int starved;  /* a file under its share found the pool full */
};

/* The state of one cache (one file, or one file of a .shared entry) is
 * grouped by the part that owns it: the part that writes it, or most of
 * it; the others read it, and the few other writers are named. */

/* The parameters, fixed at open (cache.c). */
struct cache_conf {
	size_t page;                 /* PAGE: bytes per page */
	long limit;                  /* PAGES: the most pages held */
	int ahead;                   /* AHEAD: pages (or records, runs) read ahead */
	unsigned flags;              /* FFIO_CACHE_* of the spec */
	int direct;                  /* O_DIRECT below is in force */
	int can_read;                /* the file is open for reading below */
};

/* The pages: found by number in the hash table, aged on the LRU list,
 * taken from the page budget (page.c; set up at open, cache.c).  ndirty
 * follows the pages' dirty extents wherever they change (writes, flushes,
 * truncation). */
struct cache_pages {
	struct cpool *pool;          /* the budget: own_pool, or the entry's (.shared) */
	struct cpool own_pool;
	struct cpage **hash;
	size_t hmask;
	struct cpage lru;            /* sentinel */
	long npages, ndirty;
	long npages_peak;            /* the most pages held at once (.diag) */
	struct cpage *last;          /* the page touched last */
	uint64_t removed;            /* pages taken out of the hash table, ever */
	uint64_t drops;              /* times told to drop its clean data (invalidate), ever */
	uint64_t removed_at_drop;    /* removed just before the last of them */
	uint64_t *spare_maps;        /* maps of written bytes given back, linked through
				        their first word (page.c) */
};

/* Page buffers carved from huge chunks (not .shared), and the scratch
 * page (buffer.c). */
struct cache_bufs {
	struct ffio_chunk *chunks;   /* every chunk, given back at release */
	char *carve;                 /* the rest of the newest chunk */
	size_t carve_left;
	int carve_fresh;             /* the newest chunk was never used: zeros */
	uint64_t fresh_ns;           /* when a buffer never touched was last handed out */
	void *free_bufs;             /* freed carved buffers, linked through their first bytes */
	char *scratch;               /* one page, for merging reads into dirty pages */
};

/* The file's size.  Below: disk_size asks the layer below when it is not
 * known (forgotten at fsync, invalidate and discard, cache.c), and
 * every part that writes or reads past it moves it on.  With the cached
 * writes: cached_end (write.c; truncation and invalidate recompute
 * it, cache.c). */
struct cache_size {
	off_t below;                 /* the file's size below, as last known */
	int below_known;             /* below holds it */
	off_t cached_end;            /* end of the furthest write not known to be below */
};

/* The read-ahead pattern, the kernel's read-ahead and advice
 * (readahead.c; forgotten at fsync and invalidate, cache.c). */
struct cache_ra {
	off_t last_off;              /* the last read */
	size_t last_len;
	off_t stride;                /* from the read before it (0: sequential) */
	long hits;                   /* reads in a row along the pattern */
	int valid;                   /* last_off, last_len hold a read */
	off_t advised;               /* records before this offset were advised */
	int no_advise;               /* nothing below takes read advice */
	int kernel_off;              /* the kernel's read-ahead is off (RANDOM) */
	int kernel_armed;            /* turn it off before the first page or record is read */
	int slow_loads;              /* loads in a row slower than memory (cache_note_load) */
	int from_device;             /* two of them: the file comes from the device (sticky) */
	off_t steady_end;            /* 0, or a steady pattern holds up to here (cache_ra_steady) */
	uint64_t steady_removed;     /* pages.removed when steady_end was set */
	off_t steady_size;           /* and the logical size at most this */
	off_t steady_step;           /* from one read to the next: the stride, or the length */
};

/* The next read of a steady pattern, known before it comes (read.c's
 * read_hot): a read hit arms it when the same length one step on would
 * also be a hit that keeps the pattern (cache_ra_steady), every test of
 * the hit path passed for it in advance.  It holds while no other call
 * enters the stack (ffio_file.stack_calls), no write hit comes between
 * and the shared pool is not starved.  calloc's zeros: none. */
struct cache_hot {
	off_t off;                   /* where that read is, or -1 (len 0: never armed) */
	size_t len;                  /* its length */
	off_t step;                  /* from it to the one after */
	off_t last;                  /* reads starting up to here pass the tests too */
	unsigned long calls;         /* the file's stack_calls when armed */
	char *data;                  /* the page's bytes */
	off_t start;                 /* the page's first offset */
};

/* The next write of a steady pattern (write.c's write_hot), armed by a
 * write hit the same way: the same length one step on, into the page
 * touched last, inside its last extent, or extending it (the sieve hull
 * of a known page, or writes one after the other).  A read hit disarms
 * it, as a write hit disarms the read's. */
struct cache_hot_write {
	struct cache_hot at;         /* where, how long, up to where, when armed */
	struct cpage *page;
	uint64_t *wmap;              /* the page's map of written bytes, or NULL (as armed) */
	int guarded;                 /* the page is in guarded memory (as armed) */
	struct cext *ext;            /* the extent that grows, or NULL: writes inside it */
	off_t prev_off;              /* the write hit before, for the step */
	size_t prev_len;
};

/* Runs: sequential reads that jump ahead now and then (see cache_ra_runs;
 * readahead.c). */
struct cache_run {
	off_t start;                 /* where the current run began */
	long reads;                  /* reads in it so far */
	off_t len, prev_len;         /* the last two runs' lengths (0: none, or one read) */
	off_t stride;                /* from the last run's start to this one's */
	off_t advised;               /* runs starting before this offset were advised */
};

/* Loops larger than the cache, and how far the cache grows (see
 * cache_ghost_note; evict.c). */
struct cache_evict {
	int64_t *ghost;              /* the pages evicted last, a ring of ghost_cap (-1: none) */
	int32_t *ghost_at;           /* ring slots by page, open addressing (-1: empty) */
	int ghost_cap, ghost_bits;
	uint64_t ghost_seq;          /* evictions recorded */
	int64_t ghost_prev;          /* ring slot of the last page found there, or -1 */
	int loop_new, loop_in_order; /* new pages, and those evicted in order, this window */
	int loop_mode;               /* victims from the most recent end */
	long grow_limit;             /* pages taken before clean ones are reused (see cache_ghost_note) */
};

/* Requests below in flight (async.c; waiting is set by flush.c). */
struct cache_async {
	int below;                   /* the layer below completes requests later */
	int waiting;                 /* in cache_flush_all: the caller waits for the writes */
	long nreq;                   /* requests in flight */
	long busy_pages;             /* page references of requests in flight */
	struct areq *reqs;           /* requests in flight (async.c) */
};

/* Large writes over an asynchronous stack: copy and write behind, or
 * write around now (see behind_pays; write.c; reads, flushes and fsyncs
 * reset return_ns). */
struct cache_big {
	uint64_t return_ns;          /* when the last large write returned, or 0 */
	uint64_t around_ns_per_mib;  /* what writing around cost, smoothed */
	uint64_t copy_ns_per_mib;    /* what copying into the cache cost, smoothed */
};

/* Stepping aside for small writes and reads the cache gains nothing on (aside.c). */
#define READ_PROBES 4 /* small reads timed going around */
struct cache_aside {
	int on;                      /* small writes go around the cache */
	uint64_t writes, pieces;     /* this window of write-backs: writes in, requests out */
	uint64_t seen, merging;      /* while aside: writes, and those that would have merged */
	uint64_t window;             /* while aside: writes judged together (0: ASIDE_WINDOW) */
	int shared_seen;             /* FFIO_FILE_SHARED was seen (shared_start) */
	off_t prev_off, prev_end;    /* while aside: the last write */
	/* reads: small reads into absent pages go around (aside.c) */
	int reads_on;                /* they do */
	int judged;                  /* a window was weighed since the file opened (or reads came back) */
	int reuse;                   /* reads came back to bytes read around: loaded for good */
	uint32_t loads;              /* this window: loads made for reads ... */
	uint64_t load_ns, load_bytes; /* ... what they took, and their bytes ... */
	int load_fresh;              /* ... one into memory never touched (its faults timed) */
	int on_fresh;                /* reads_on was weighed on such a load */
	uint64_t reads0, bytes0;     /* stats.n_read and b_read when the window began */
	uint64_t probe_ns[READ_PROBES]; /* small reads timed going around ... */
	size_t probe_len[READ_PROBES];  /* ... their lengths */
	int probes;                     /* ... how many (READ_PROBES: all) */
	uint64_t retry_after;        /* reads around before loads are tried again (0: none yet) */
	uint64_t reads_aside;        /* while aside: reads that went around ... */
	off_t read_lo, read_hi;      /* ... the span they covered ... */
	off_t prev_read;             /* ... the last one */
	uint64_t reads_kept;         /* ... those since the clean data was last dropped */
	uint64_t removed0;           /* pages.removed when they began */
	uint64_t drops0;             /* pages.drops when read_lo..read_hi began */
};

/* The guard (libffio/guard): a file the cache may write keeps its pages
 * in guarded memory, each byte the application wrote marked there until
 * it is in the file, so that a guardian process writes it back if this
 * process dies (see ffio-reliability(7)).  Opened at the first write into
 * the cache (cache_guard_start): pages made before, for reads, move to
 * guarded memory when first written (cache_buf_guard); begun by a write
 * over several pages (write.c). */
struct cache_guard {
	int want;                    /* the file is open for writing */
	int tried;                   /* ffio_guard_open was asked */
	struct ffio_guard *file;     /* or NULL: not guarded */
	int begun;                   /* one intent over the pages of a write */
};

/* Counters, reported at close (.diag) and by ffgetstats (cache.c); each
 * counted where its event happens. */
struct cache_stats {
	uint64_t n_read, n_write, b_read, b_write; /* not pairwise: two counts of a call, one add each */
	uint64_t hits, misses, ra_used, ra_wasted, ra_advice, run_loads;
	uint64_t below_reads, below_writes, below_rbytes, below_wbytes;
	uint64_t ev_clean, ev_complete, ev_gaps, bypass, ev_loop;
	uint64_t async_writes, async_reads;
	uint64_t sieve_locked, sieve_unlocked; /* flushes that filled gaps under a lock; that could not lock */
	uint64_t sieve_waits;        /* locks another process held, waited for */
};

struct cache {
	struct ffio_layer base;      /* first: the layer */
	struct cache_conf conf;
	struct cache_pages pages;
	struct cache_bufs bufs;
	struct cache_size size;
	struct cache_ra ra;
	struct cache_hot hot;
	struct cache_hot_write hotw;
	struct cache_run run;
	struct cache_evict evict;
	struct cache_async async;
	struct cache_big big;
	struct cache_guard guard;
	struct cache_aside aside;
	struct cache_stats stats;
};

/* A request of the cache in flight below: a write-behind run or a read. */
struct areq {
	struct ffio_req r;
	struct cache *c;
	struct areq *prev, *next;    /* c->async.reqs */
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

/* Is the read (or write) of n bytes at off the one h armed, with no call
 * into the stack since and the shared pool not starved? */
static inline int cache_hot_due(const struct cache *c, const struct cache_hot *h, off_t off, size_t n)
{
	return off == h->off && n == h->len && h->calls == c->base.file->stack_calls &&
	       !__atomic_load_n(&c->pages.pool->starved, __ATOMIC_RELAXED);
}

#define CACHE(l) ((struct cache *)(l))

/* page.c: the written map of a sieve hull (used by the helpers below) */
int cache_hull_map(struct cache *c, struct cpage *p);
void cache_wmap_drop(struct cache *c, struct cpage *p);

/* ---- helpers on the hot paths ------------------------------------------ */

static inline int is_sieve(const struct cache *c)
{
	return (c->conf.flags & FFIO_CACHE_SIEVE) || (c->base.file->glue_flags & FFIO_FILE_SIEVE);
}

/* The first dirty extent that ends after lo (next_ext: none). */
static inline uint32_t ext_after(const struct cpage *p, uint32_t lo)
{
	uint32_t a = 0, b = p->next_ext;
	while (a < b) {
		uint32_t m = (a + b) / 2;
		if (p->ext[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Is [lo, hi) inside one dirty extent? */
static inline int ext_covers(const struct cpage *p, uint32_t lo, uint32_t hi)
{
	uint32_t a = ext_after(p, lo);
	return a < p->next_ext && p->ext[a].lo <= lo && p->ext[a].hi >= hi;
}

/* Is [lo, hi) inside one valid range?  The range holding lo (or ending at
 * it) is returned in *at, else -1. */
static inline int valid_covers(const struct cpage *p, uint32_t lo, uint32_t hi, int *at)
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
static inline int pg_holds(const struct cpage *p, uint32_t lo, uint32_t hi)
{
	int at;
	return p->known || ext_covers(p, lo, hi) || valid_covers(p, lo, hi, &at);
}

/* The mask of bits [lo, hi) within word w of a map (hi > lo): a sieve
 * hull's map is laid out as guarded memory's. */
static inline uint64_t wmap_word_mask(uint32_t w, uint32_t lo, uint32_t hi)
{
	return guard_word_mask(w, lo, hi);
}

/* Records closer than this are not worth a vector entry each with a gap
 * of zeros between them: a sieved page past the end with more extents
 * than PAGE / ZERO_GAP_SPACING is made known (its gaps cleared) as it is
 * written.  Measured with bench/strided, write phase against raw
 * lseek+write: 256 B records at a 4 KiB stride, 5.0-5.2x with zero gaps,
 * 4.3-4.6x cleared; 8 B records at 64 B, 14.6x with zero gaps, 36.5x
 * cleared.  A sieved known page keeps its extents exact up to as many;
 * with more, it keeps a hull and a map of written bytes (page.c): sparse
 * records cost a small array, not a map of PAGE / 8 bytes (256 B records
 * at 4 KiB through cache.sieve:1m:16:2 took 27% longer with a map for
 * every page). */
#define ZERO_GAP_SPACING 2048

static inline int sieve_hull_due(const struct cache *c, const struct cpage *p)
{
	return p->wmap || p->next_ext >= c->conf.page / ZERO_GAP_SPACING;
}

/* Mark [lo, hi) written in p's map. */
static inline void wmap_set(struct cpage *p, uint32_t lo, uint32_t hi)
{
	for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++) {
		uint64_t m = wmap_word_mask(w, lo, hi);
		p->wcount += (uint32_t)__builtin_popcountll(m & ~p->wmap[w]);
		p->wmap[w] |= m;
	}
}

/* Does p's hull (one extent) span a byte its map does not mark? */
static inline void wmap_note_holes(struct cpage *p)
{
	p->holes = p->wcount < p->ext[0].hi - p->ext[0].lo;
}

/* The same, p's hull already spanning it: and whether the hull still has
 * holes. */
static inline void wmap_mark(struct cpage *p, uint32_t lo, uint32_t hi)
{
	wmap_set(p, lo, hi);
	wmap_note_holes(p);
}

static inline size_t hash_of(const struct cache *c, int64_t pno)
{
	return (size_t)(((uint64_t)pno * 0x9E3779B97F4A7C15ull) >> 17) & c->pages.hmask;
}

static inline struct cpage *pg_find(struct cache *c, int64_t pno)
{
	if (c->pages.last && c->pages.last->pno == pno)
		return c->pages.last;
	for (struct cpage *p = c->pages.hash[hash_of(c, pno)]; p; p = p->hnext)
		if (p->pno == pno)
			return c->pages.last = p;
	return NULL;
}

/* What a read at off that keeps the steady pattern changes (see below). */
static inline void cache_ra_keep(struct cache *c, off_t off)
{
	if (c->ra.stride) { /* each read a run of its own */
		c->run.prev_len = c->run.len;
		c->run.len = 0;
		c->run.stride = off - c->run.start;
		c->run.start = off;
	} else {
		c->run.reads++;
	}
	c->ra.hits++;
	c->ra.last_off = off;
}

/* A read at off of n bytes, the file's logical size then size, that keeps
 * a steady pattern: the same length at the same distance (the stride, or
 * the length: sequential), no run, the kernel's read-ahead decided, while
 * the page the read-ahead would probe next is the one found there before
 * (no page has left the cache since) or still past the end, or, reading
 * sequentially over a synchronous stack, the kernel reads ahead:
 * cache_read_ahead would only record it.  Record it so and say 1; else 0,
 * nothing changed.  steady_end is set by cache_read_ahead only, and
 * cleared by any change it does not see (cache_ra_forget,
 * cache_around_ahead). */
static inline int cache_ra_steady(struct cache *c, off_t off, size_t n, off_t size)
{
	if ((uint64_t)off + (uint64_t)c->ra.steady_step >= (uint64_t)c->ra.steady_end || /* none: 0 */
	    off - c->ra.last_off != c->ra.steady_step || n != c->ra.last_len || c->pages.removed != c->ra.steady_removed ||
	    size > c->ra.steady_size)
		return 0;
	cache_ra_keep(c, off);
	return 1;
}

/* Forget the read pattern (after fsync, invalidation, a failed
 * read-ahead). */
static inline void cache_ra_forget(struct cache *c)
{
	c->ra.valid = 0;
	c->ra.steady_end = 0;
}

static inline void lru_unlink(struct cpage *p)
{
	p->prev->next = p->next;
	p->next->prev = p->prev;
}

static inline void lru_append(struct cache *c, struct cpage *p)
{
	p->prev = c->pages.lru.prev;
	p->next = &c->pages.lru;
	c->pages.lru.prev->next = p;
	c->pages.lru.prev = p;
}

static inline void pg_touch(struct cache *c, struct cpage *p)
{
	if (c->pages.lru.prev != p) {
		lru_unlink(p);
		lru_append(c, p);
	}
}

/* p's dirty bytes are below, or dropped: unmarked in guarded memory once
 * no write of them is in flight any more (cache_areq_unlink). */
static inline void pg_set_clean(struct cache *c, struct cpage *p)
{
	p->nwrites = 0;
	if (p->next_ext) {
		p->next_ext = 0;
		c->pages.ndirty--;
	}
	p->holes = 0;
	if (p->wmap)
		cache_wmap_drop(c, p);
	if (p->g) {
		if (p->inflight)
			p->gclear = 1;
		else
			ffio_guard_unmark_all(p->g);
	}
}

static inline off_t pg_start(const struct cache *c, int64_t pno)
{
	return (off_t)pno * (off_t)c->conf.page;
}

/* The part of [o, o + left) within o's page: the page, the offset in it
 * (*lo), and the length returned. */
static inline size_t pg_span(const struct cache *c, off_t o, size_t left, int64_t *pno, uint32_t *lo)
{
	*pno = o / (off_t)c->conf.page;
	*lo = (uint32_t)(o - pg_start(c, *pno));
	return c->conf.page - *lo < left ? c->conf.page - *lo : left;
}

static inline int pg_complete(const struct cache *c, const struct cpage *p)
{
	if (p->next_ext != 1 || p->ext[0].lo != 0 || p->holes)
		return 0;
	return p->ext[0].hi == c->conf.page || pg_start(c, p->pno) + p->ext[0].hi >= c->size.cached_end;
}

/* Written whole by the application: what goes behind before it is needed
 * (cache_write_behind without must).  A page whose bytes merely reach the
 * end of the file's data is still growing: written early, it was written
 * again with every window netCDF added (tiles into a file four times the
 * cache over cache:1m:64:4, uring:64: 3800 extra writes, 0.44 s against
 * 0.31 s over sys). */
static inline int pg_full(const struct cache *c, const struct cpage *p)
{
	return p->next_ext == 1 && p->ext[0].lo == 0 && p->ext[0].hi == c->conf.page && !p->holes;
}

static inline int pg_idle(const struct cpage *p)
{
	return !p->inflight && !p->pin;
}

static inline int aligned(const struct cache *c, const void *buf, size_t n, off_t off)
{
	return !c->conf.direct || (((uintptr_t)buf | n | (size_t)off) & (BLOCK - 1)) == 0;
}

/* The hit path (write_hit, read_hit) takes calls up to this size: beyond
 * it the copy costs more than the full path's checks.  netCDF reads and
 * writes 8 KiB windows (its block, twice the file system's). */
#define HIT_MAX ((size_t)32 << 10)

/* Does a request of n bytes at off go around the cache (straight below)?
 * One of a page or more does; so does one larger than the hit path's
 * (HIT_MAX) inside a range the program holds a record lock on: the
 * program is doing its own read-modify-write there (ROMIO's data sieving
 * locks the extent, reads it, modifies it in its buffer and writes it
 * back), and the cache would only copy each byte once more and load whole
 * pages around bytes it does not need.  Alignment is checked apart
 * (aligned). */
static inline int cache_around(const struct cache *c, size_t n, off_t off)
{
	return n >= c->conf.page || (n > HIT_MAX && ffio_file_app_locked(c->base.file, off, n));
}

/* The cache's passes (struct ffio_layer): writes, while small ones go
 * around it (aside.c) and it holds nothing that would have to learn of
 * one: no page, no request in flight, nothing written behind over a
 * layer below that completes later (a large write would be), no sieving
 * (whose writes around are locked against another process's).  Updated
 * wherever one of these changes; the core clears it when the glue's
 * flags of the file change (sieving among them), and the next write
 * that comes in the full way sets it again (write_around). */
static inline void cache_passes_update(struct cache *c)
{
	c->base.passes = c->aside.on && c->pages.npages == 0 && c->async.nreq == 0 && !c->async.below &&
				 !is_sieve(c) && !c->conf.direct
			 ? FFIO_PASS_WRITE
			 : 0;
}

/* Copy a small record: up to 16 bytes inline, where a call into the C
 * library's memcpy costs more than the copy (25 instructions for 8 bytes,
 * by callgrind). */
static inline void copy_record(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	if (n >= 8 && n <= 16) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

/* Store n bytes (1, 2, 4 or 8) at dst with one instruction: a death
 * leaves them all or none.  0: n is another size, nothing stored. */
static inline int store_one(void *dst, const void *src, size_t n)
{
	typedef uint16_t __attribute__((may_alias, aligned(1))) u16;
	typedef uint32_t __attribute__((may_alias, aligned(1))) u32;
	typedef uint64_t __attribute__((may_alias, aligned(1))) u64;
	switch (n) {
	case 1:
		*(volatile char *)dst = *(const char *)src;
		return 1;
	case 2:
		*(volatile u16 *)dst = *(const u16 *)src;
		return 1;
	case 4:
		*(volatile u32 *)dst = *(const u32 *)src;
		return 1;
	case 8:
		*(volatile u64 *)dst = *(const u64 *)src;
		return 1;
	default:
		return 0;
	}
}

/* The common cases of pg_copy (below) into guarded page g, no intent
 * begun: bytes within one word of the map, none marked yet (copied, then
 * marked by one store); or all marked already and stored by one
 * instruction (a value of 1, 2, 4 or 8 bytes written again).  1 done, 0
 * not (nothing changed). */
static inline __attribute__((always_inline)) int pg_copy_fast(const struct cache *c, struct guard_page *g,
							      char *data, uint32_t lo, const void *src, size_t n)
{
	uint32_t w = lo >> 6, hi = lo + (uint32_t)n;
	if (!n || w != (hi - 1) >> 6 || c->guard.begun)
		return 0;
	uint64_t m = wmap_word_mask(w, lo, hi), marked = g->map[w] & m;
	if (!marked) {
		copy_record(data + lo, src, n);
		__asm__ __volatile__("" ::: "memory"); /* copied, then marked */
		g->map[w] |= m;
		if (lo < g->span_lo)
			g->span_lo = lo;
		if (hi > g->span_hi)
			g->span_hi = hi;
		return 1;
	}
	return marked == m && store_one(data + lo, src, n);
}

/* Copy n bytes from src into p at lo, the application's: marked in
 * guarded memory too, whole or not at all if the process dies meanwhile
 * (pg_copy_fast, else ffio_guard_copy under the file's intent). */
static inline __attribute__((always_inline)) void pg_copy(struct cache *c, struct cpage *p, uint32_t lo,
							   const void *src, size_t n)
{
	if (!p->g)
		copy_record(p->data + lo, src, n);
	else if (n && !pg_copy_fast(c, p->g, p->data, lo, src, n))
		ffio_guard_copy(c->guard.file, p->g, p->data, lo, src, n);
}

static inline int disk_size(struct cache *c, off_t *size)
{
	if (!c->size.below_known) {
		int err = ffio_below_size(&c->base, &c->size.below);
		if (err < 0)
			return err;
		c->size.below_known = 1;
	}
	*size = c->size.below;
	return 0;
}

static inline off_t logical_size(struct cache *c, int *err)
{
	off_t d = 0;
	*err = disk_size(c, &d);
	return d > c->size.cached_end ? d : c->size.cached_end;
}

/* ---- functions shared between the parts -------------------------------- */

/* page.c */
int cache_ext_add(struct cpage *p, uint32_t lo, uint32_t hi);
int cache_ext_remove(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi);
void cache_wmaps_release(struct cache *c);
int cache_valid_add(struct cpage *p, uint32_t lo, uint32_t hi);
void cache_valid_cut(struct cpage *p, uint32_t cut);
void cache_pg_free(struct cache *c, struct cpage *p);
void cache_pool_shrink(struct cache *c);
int cache_pg_new_fresh(struct cache *c, int64_t pno, struct cpage **out, int *fresh);
int cache_pg_new(struct cache *c, int64_t pno, struct cpage **out);

/* buffer.c */
char *cache_buf_get(struct cache *c, struct cpage *p, int *fresh);
void cache_buf_put(struct cache *c, struct cpage *p);
void cache_guard_start(struct cache *c);
int cache_buf_guard(struct cache *c, struct cpage *p);
int cache_buf_warm(const struct cache *c);
void cache_bufs_release(struct cache *c);
int cache_get_scratch(struct cache *c);

/* async.c */
struct areq *cache_areq_new(struct cache *c, int npg, int cnt);
void cache_areq_unlink(struct cache *c, struct areq *a);
int cache_areq_submit(struct cache *c, struct areq *a);
void cache_write_done(struct ffio_req *r);
void cache_read_done(struct ffio_req *r);
int cache_reap_one(struct cache *c);
int cache_pg_wait(struct cache *c, struct cpage *p);
int cache_wait_all(struct cache *c);

/* evict.c */
long cache_write_behind(struct cache *c, int must);
void cache_ghost_note(struct cache *c, int64_t pno);
struct cpage *cache_clean_victim(struct cache *c, int keep_ra);
struct cpage *cache_write_victim(struct cache *c);
struct cpage *cache_pick_victim(struct cache *c);
void cache_evict_open(struct cache *c);
void cache_evict_release(struct cache *c);

/* below.c */
int cache_below_readv(struct cache *c, struct iovec *iov, int cnt, off_t off, size_t *got);
int cache_pg_load(struct cache *c, struct cpage *p);
int cache_load_missing(struct cache *c, const int64_t *pnos, int n, int ra);
int cache_pg_load_range(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi);
int cache_pg_fill(struct cache *c, struct cpage *p);

/* sieve.c */
int cache_sieve_lock(struct cache *c, off_t off, off_t len, short type);
int cache_sieve_prepare(struct cache *c, struct cpage **set, size_t n, int *locked);
void cache_sieve_unlock(struct cache *c);
void cache_sieve_span(const struct cache *c, struct cpage **set, size_t n, size_t i, uint32_t *lo,
		      uint32_t *hi);
int cache_sieve_run(const struct cpage *p, uint32_t at, uint32_t hi, int written, uint32_t *a, uint32_t *b);

/* flush.c */
int cache_flush_set(struct cache *c, struct cpage **set, size_t n);
int cache_flush_set_waited(struct cache *c, struct cpage **set, size_t n);
int cache_flush_pages(struct cache *c, int64_t lo_pno, int64_t hi_pno);
int cache_flush_all(struct cache *c);
void cache_drop_clean(struct cache *c);

/* aside.c: a page written back made pieces requests of the writes that
 * went into it; does a small write at off go around the cache (1)? */
void cache_aside_sample(struct cache *c, uint32_t writes, uint32_t pieces);
int cache_aside_takes(struct cache *c, size_t n, off_t off);
/* A write that passed the stack (struct ffio_layer's passes). */
void cache_passed(struct ffio_layer *l, int write, off_t off, size_t n, ssize_t r);
/* aside.c: a load for reads of n bytes took ns (fresh: into a buffer
 * never touched, cache_buf_get); does a read of n bytes
 * at off into a page to be loaded whole go around (1)?  If so, its time (t0 from
 * cache_aside_clock, 0: not timed) is told to cache_aside_timed.  Is
 * nothing to be loaded ahead of reads of n bytes now (1)? */
void cache_aside_load(struct cache *c, off_t n, uint64_t ns, int fresh);
int cache_aside_read(struct cache *c, size_t n, off_t off);
int cache_aside_holds_ahead(const struct cache *c, size_t n);
uint64_t cache_aside_clock(const struct cache *c);
void cache_aside_timed(struct cache *c, size_t n, uint64_t t0);

/* write.c */
ssize_t cache_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off);
ssize_t cache_write_hit(struct ffio_layer *l, const void *buf, size_t n, off_t off);

/* readahead.c */
void cache_note_load(struct cache *c, off_t n, uint64_t t0);
int cache_ra_sparse(const struct cache *c);
int cache_ra_runs(const struct cache *c);
void cache_kernel_readahead_arm(struct cache *c);
int cache_kernel_readahead_lift(struct cache *c, size_t n); /* 1: call _drop after the read */
void cache_kernel_readahead_drop(struct cache *c);
void cache_read_ahead(struct cache *c, off_t off, size_t n, off_t size); /* after cache_ra_steady */
int cache_run_load(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi, off_t start);
void cache_around_ahead(struct cache *c, off_t off, size_t n);

/* read.c */
ssize_t cache_pread(struct ffio_layer *l, void *buf, size_t n, off_t off);
ssize_t cache_read_hit(struct ffio_layer *l, void *buf, size_t n, off_t off);

#endif
