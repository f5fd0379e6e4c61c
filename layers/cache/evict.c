/* layers/cache/evict.c -- making room: write-behind of the least recently
 * used dirty runs, the choice of a victim page (clean first, pages whose
 * gaps are still being filled last), and the ghost ring that recognises
 * loops larger than the cache and decides how far the cache grows.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

/* ---- write-behind ------------------------------------------------------- */

/* The most pages that may be in flight at once. */
static long busy_limit(const struct cache *c)
{
	return c->conf.limit / 2 > 0 ? c->conf.limit / 2 : 1;
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
long cache_write_behind(struct cache *c, int must)
{
	enum { MAXRUN = 256 };
	struct cpage *set[MAXRUN];
	long sent = 0;
	int err = 0;

	for (int pass = 0; pass < 2 && err == 0; pass++) {
		if (pass == 1 && (sent > 0 || !must || c->async.nreq > 0))
			break;
		struct cpage *p = c->pages.lru.next;
		while (p != &c->pages.lru && c->async.busy_pages < busy_limit(c)) {
			struct cpage *next = p->next;
			if (p->next_ext && pg_idle(p) && (pass == 1 || (must ? pg_complete(c, p) : pg_full(c, p)))) {
				long room = busy_limit(c) - c->async.busy_pages;
				size_t n = run_around(c, p, set, room < MAXRUN ? (size_t)room : MAXRUN);
				int complete = pass == 0;
				for (size_t i = 0; i < n; i++) {
					if (complete)
						c->stats.ev_complete++;
					else
						c->stats.ev_gaps++;
					set[i]->evicted = 1;
				}
				/* pages with gaps go only when a page is needed now */
				err = pass == 1 ? cache_flush_set_waited(c, set, n) : cache_flush_set(c, set, n);
				sent += (long)n;
				/* over a synchronous stack one run per eviction, as the
				 * pages are clean again at once */
				if (err < 0 || pass == 1 || !c->async.below)
					break;
				next = p->next; /* cache_flush_set leaves the list as it is */
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
 * comes back (a larger cache would have kept it), or, once loads are
 * slow, when the new page's memory is warm (cache_pg_new).  A program
 * that reads a
 * file once (every worker reading its tile) no longer touches PAGES x PAGE
 * of fresh memory for pages that are used once: one worker's tile of a
 * 216 MB file, through cache:1m:64:4, took 0.04-0.24 s against 0.034 s
 * raw, the time going into the first touch of 64 MiB; with 8 pages, 0.034
 * s.  Six fresh processes each reading its tile of the 13.8 MB seed file
 * once: 0.072 s in all with 64 pages, 0.061 s starting from 2, 0.058 s raw.
 * For a page to write into (cache_pg_new_fresh) the rule holds over a
 * synchronous stack, where a page the program wrote whole is written and
 * reused as well (cache_write_victim); pages with gaps make the cache
 * grow, so that gaps are filled in the cache.  Over an asynchronous stack
 * a page for a write is taken as needed, up to PAGES: write-behind has its
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
	return (size_t)(((uint64_t)pno * 0x9E3779B97F4A7C15ull) >> (64 - c->evict.ghost_bits));
}

static long ghost_find(const struct cache *c, int64_t pno)
{
	size_t mask = ((size_t)1 << c->evict.ghost_bits) - 1;
	for (size_t i = ghost_hash(c, pno);; i = (i + 1) & mask) {
		if (c->evict.ghost_at[i] < 0)
			return -1;
		if (c->evict.ghost[c->evict.ghost_at[i]] == pno)
			return (long)i;
	}
}

static void ghost_unindex(struct cache *c, size_t i)
{
	size_t mask = ((size_t)1 << c->evict.ghost_bits) - 1, j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (c->evict.ghost_at[j] < 0)
			break;
		size_t k = ghost_hash(c, c->evict.ghost[c->evict.ghost_at[j]]);
		/* the entry at j may move to i if its home is not in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			c->evict.ghost_at[i] = c->evict.ghost_at[j];
			i = j;
		}
	}
	c->evict.ghost_at[i] = -1;
}

static void ghost_add(struct cache *c, int64_t pno)
{
	if (!c->evict.ghost)
		return;
	size_t mask = ((size_t)1 << c->evict.ghost_bits) - 1;
	int32_t slot = (int32_t)(c->evict.ghost_seq++ % (uint64_t)c->evict.ghost_cap);
	long i;
	if (c->evict.ghost[slot] >= 0 && (i = ghost_find(c, c->evict.ghost[slot])) >= 0)
		ghost_unindex(c, (size_t)i); /* the oldest one leaves the ring */
	if ((i = ghost_find(c, pno)) >= 0) { /* evicted twice: the newer slot */
		c->evict.ghost[c->evict.ghost_at[i]] = -1;
		ghost_unindex(c, (size_t)i);
	}
	c->evict.ghost[slot] = pno;
	size_t j = ghost_hash(c, pno);
	while (c->evict.ghost_at[j] >= 0)
		j = (j + 1) & mask;
	c->evict.ghost_at[j] = slot;
}

/* Page pno is about to be loaded (it is not cached): was it evicted lately,
 * just after the last one that came back?  Decide the mode every window. */
void cache_ghost_note(struct cache *c, int64_t pno)
{
	long i;
	int at = -1;

	if (!c->evict.ghost)
		return;
	if ((i = ghost_find(c, pno)) >= 0) {
		at = c->evict.ghost_at[i];
		ghost_unindex(c, (size_t)i);
	}
	if (at >= 0) {
		int64_t d = c->evict.ghost_prev < 0 ? -1
			    : (at - c->evict.ghost_prev + c->evict.ghost_cap) % c->evict.ghost_cap;
		if (d >= 1 && d <= LOOP_STEP)
			c->evict.loop_in_order++;
		c->evict.ghost[at] = -1; /* found once */
		c->evict.ghost_prev = at;
		if (c->evict.grow_limit < c->conf.limit) {
			c->evict.grow_limit += c->evict.grow_limit / 4 + 1;
			if (c->evict.grow_limit > c->conf.limit)
				c->evict.grow_limit = c->conf.limit;
		}
	}
	if (++c->evict.loop_new == LOOP_WINDOW) {
		if (4 * c->evict.loop_in_order >= 3 * LOOP_WINDOW)
			c->evict.loop_mode = 1;
		else if (4 * c->evict.loop_in_order < LOOP_WINDOW)
			c->evict.loop_mode = 0;
		c->evict.loop_new = c->evict.loop_in_order = 0;
	}
}

/* Victim p is taken: counted as a clean page unless it was written to
 * make room (counted then), and remembered as evicted. */
static struct cpage *victim_taken(struct cache *c, struct cpage *p)
{
	if (p->evicted)
		p->evicted = 0;
	else
		c->stats.ev_clean++;
	ghost_add(c, p->pno);
	return p;
}

/* Make the dirty victim p clean now: written alone, and waited for, its
 * eviction counted.  0 when it is clean and idle; -1 when it is not
 * (its write failed: the error is the file's). */
static int victim_clean_now(struct cache *c, struct cpage *p)
{
	if (pg_complete(c, p))
		c->stats.ev_complete++;
	else
		c->stats.ev_gaps++;
	p->evicted = 1;
	struct cpage *set[1] = {p};
	int err = cache_flush_set_waited(c, set, 1);
	if (err == 0)
		err = ffio_below_commit(&c->base);
	if (err == 0)
		err = cache_pg_wait(c, p);
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

	for (p = c->pages.lru.prev->prev; p != &c->pages.lru && (!pg_idle(p) || p->ra); p = p->prev)
		;
	if (p == &c->pages.lru || (p->next_ext && victim_clean_now(c, p) < 0))
		return NULL;
	c->stats.ev_loop++;
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
struct cpage *cache_clean_victim(struct cache *c, int keep_ra)
{
	int walked = 0;
	if (c->pages.ndirty >= c->pages.npages)
		return NULL;
	for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru && walked++ < CLEAN_WALK; p = p->next)
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
struct cpage *cache_write_victim(struct cache *c)
{
	if (c->async.below)
		return NULL;
	struct cpage *v = cache_clean_victim(c, 1);
	int walked = 0;

	if (v || c->conf.page < WRITE_REUSE_PAGE)
		return v;
	for (struct cpage *p = c->pages.lru.next; p != &c->pages.lru && walked++ < CLEAN_WALK; p = p->next)
		if (p->next_ext && pg_idle(p) && pg_full(c, p))
			return victim_clean_now(c, p) < 0 ? NULL : victim_taken(c, p);
	return NULL;
}

/* Choose a victim among this file's pages: in a loop, loop_victim; else a
 * clean page not in flight (least recently used first).  When there is
 * none, dirty runs are written behind (complete pages first, then pages
 * with gaps) and the oldest request in flight is waited for.  Returns the
 * victim, still linked, or NULL (nothing can be had). */
struct cpage *cache_pick_victim(struct cache *c)
{
	struct cpage *v;

	if (c->evict.loop_mode && c->pages.npages >= 2 && (v = loop_victim(c)))
		return v;
	for (;;) {
		if ((v = cache_clean_victim(c, 0)))
			return v;
		long sent = cache_write_behind(c, 1);
		if (sent < 0) {
			ffio_file_set_error(c->base.file, (int)sent);
			sent = 0;
		}
		if (c->async.nreq > 0) {
			int err = cache_reap_one(c);
			if (err < 0) {
				ffio_file_set_error(c->base.file, err);
				return NULL;
			}
		} else if (sent == 0) {
			return NULL;
		}
	}
}

/* At open: the ghost ring (for caches of LOOP_MIN_PAGES or more) and the
 * first grow limit. */
void cache_evict_open(struct cache *c)
{
	c->evict.ghost_prev = -1;
	c->evict.grow_limit = c->conf.limit;
	if (c->conf.limit >= LOOP_MIN_PAGES) {
		long cap = GHOSTS_PER_PAGE * c->conf.limit;
		c->evict.ghost_cap = cap < GHOST_MAX ? (int)cap : GHOST_MAX;
		/* none: LRU only, and every page taken as needed */
		c->evict.ghost_bits = 1;
		while (((size_t)1 << c->evict.ghost_bits) < 2 * (size_t)c->evict.ghost_cap)
			c->evict.ghost_bits++;
		c->evict.ghost = malloc((size_t)c->evict.ghost_cap * sizeof *c->evict.ghost);
		c->evict.ghost_at = malloc(((size_t)1 << c->evict.ghost_bits) * sizeof *c->evict.ghost_at);
		if (!c->evict.ghost || !c->evict.ghost_at) {
			free(c->evict.ghost);
			free(c->evict.ghost_at);
			c->evict.ghost = NULL;
			c->evict.ghost_at = NULL;
		} else {
			/* -1: none */
			memset(c->evict.ghost, 0xff, (size_t)c->evict.ghost_cap * sizeof *c->evict.ghost);
			memset(c->evict.ghost_at, 0xff,
			       ((size_t)1 << c->evict.ghost_bits) * sizeof *c->evict.ghost_at);
			if (GROW_START < c->conf.limit)
				c->evict.grow_limit = GROW_START;
		}
	}
}

void cache_evict_release(struct cache *c)
{
	free(c->evict.ghost);
	free(c->evict.ghost_at);
}
