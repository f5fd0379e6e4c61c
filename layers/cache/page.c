/* layers/cache/page.c -- the cache's pages: their dirty extents (byte
 * ranges the application wrote, not yet below) and clean valid ranges (of
 * a page not wholly known), the hash table and LRU list they are found
 * and aged in, and taking a page for a page number within the page budget
 * (a new one, or a victim's, see evict.c) and giving it back.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

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

/* ---- the written map of a sieve hull ------------------------------------ */

/* A sieved page that is known keeps one hull extent: from the first byte
 * the application wrote to the last.  While every byte of the hull was
 * written, the hull says it all; once it spans a byte that was not, the
 * page gets a map with a bit for each byte written (wmap, wcount), kept
 * until the page is clean.  Writing back, the sieve fills the unmarked
 * bytes from below under a lock, or writes the marked ones alone
 * (sieve.c): no byte goes below that the application did not write,
 * unless it was read under a lock that kept other writers out. */

static size_t wmap_bytes(const struct cache *c)
{
	return (c->conf.page + 63) / 64 * sizeof(uint64_t);
}

/* Give p a map of its written bytes (its extents, exact until it has
 * one) and make them one hull.  -ENOMEM: nothing changed. */
int cache_hull_map(struct cache *c, struct cpage *p)
{
	uint32_t n = p->next_ext;

	if (n == 0)
		return 0;
	if (!p->wmap) { /* the extents are exact: they are what was written */
		if (c->pages.spare_maps) {
			p->wmap = c->pages.spare_maps;
			c->pages.spare_maps = (uint64_t *)(uintptr_t)p->wmap[0];
		} else if (!(p->wmap = ffio_buf_alloc(wmap_bytes(c), 64))) {
			return -ENOMEM;
		}
		memset(p->wmap, 0, wmap_bytes(c));
		p->wcount = 0;
		for (uint32_t i = 0; i < n; i++)
			wmap_set(p, p->ext[i].lo, p->ext[i].hi);
	}
	p->ext[0].hi = p->ext[n - 1].hi;
	p->next_ext = 1;
	wmap_note_holes(p);
	return 0;
}

/* Give p's map back for the next page that needs one.  Maps come from
 * the buffer pool, as page buffers do: a map of a 1 MiB page is 128 KiB,
 * and from malloc each would be mapped and unmapped again, its memory
 * faulted in every time. */
void cache_wmap_drop(struct cache *c, struct cpage *p)
{
	p->wmap[0] = (uint64_t)(uintptr_t)c->pages.spare_maps;
	c->pages.spare_maps = p->wmap;
	p->wmap = NULL;
	p->wcount = 0;
}

void cache_wmaps_release(struct cache *c)
{
	while (c->pages.spare_maps) {
		uint64_t *m = c->pages.spare_maps;
		c->pages.spare_maps = (uint64_t *)(uintptr_t)m[0];
		ffio_buf_free(m, wmap_bytes(c));
	}
}

/* Unmark [lo, hi) of p's map: those bytes are no longer the page's to
 * write (written below directly, or cut off). */
static void wmap_unmark(struct cpage *p, uint32_t lo, uint32_t hi)
{
	for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++) {
		uint64_t m = wmap_word_mask(w, lo, hi);
		p->wcount -= (uint32_t)__builtin_popcountll(m & p->wmap[w]);
		p->wmap[w] &= ~m;
	}
}

/* Mark [lo, hi) dirty, merging with touching extents. */
int cache_ext_add(struct cpage *p, uint32_t lo, uint32_t hi)
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

/* Unmark [lo, hi): those bytes are no longer dirty (written below directly,
 * or cut off).  A page left with no extent keeps no map. */
int cache_ext_remove(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi)
{
	int err = ext_remove(p, lo, hi);

	if (err == 0 && p->wmap && hi > lo) {
		wmap_unmark(p, lo, hi);
		p->holes = 1; /* until the hull is made again (cache_hull_map) */
	}
	if (p->next_ext == 0 && p->wmap) {
		cache_wmap_drop(c, p);
		p->holes = 0;
	}
	return err;
}

/* ---- clean valid ranges of an unknown page ------------------------------ */

/* Remember [lo, hi) as valid, merging with the ranges it touches.
 * -ENOSPC when that would make more than MAX_VALID ranges. */
int cache_valid_add(struct cpage *p, uint32_t lo, uint32_t hi)
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

/* The file ends at cut within the page: nothing valid past it. */
void cache_valid_cut(struct cpage *p, uint32_t cut)
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

/* ---- pages: hash, LRU, pool -------------------------------------------- */

static void hash_remove(struct cache *c, struct cpage *p)
{
	struct cpage **pp = &c->pages.hash[hash_of(c, p->pno)];
	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	if (c->pages.last == p)
		c->pages.last = NULL;
	c->pages.removed++; /* see cache_ra_steady */
}

/* Unlink p and give its memory back to the pool. */
void cache_pg_free(struct cache *c, struct cpage *p)
{
	if (p->ra)
		c->stats.ra_wasted++;
	pg_set_clean(c, p); /* (its map too) */
	hash_remove(c, p);
	lru_unlink(p);
	cache_buf_put(c, p);
	free(p->ext);
	free(p);
	c->pages.npages--;
	cache_passes_update(c);
	pthread_mutex_lock(&c->pages.pool->lock);
	c->pages.pool->used--;
	pthread_mutex_unlock(&c->pages.pool->lock);
}

/* Take p's memory for page pno. */
static void pg_reuse(struct cache *c, struct cpage *p, int64_t pno)
{
	if (p->ra)
		c->stats.ra_wasted++;
	hash_remove(c, p);
	p->pno = pno;
	if (p->g)
		ffio_guard_bind(c->guard.file, p->g, pno);
	p->known = p->ra = p->pin = p->failed = p->reading = p->holes = p->evicted = p->zeros = 0;
	p->nvalid = 0;
	p->next_ext = 0;
	size_t h = hash_of(c, pno);
	p->hnext = c->pages.hash[h];
	c->pages.hash[h] = p;
	pg_touch(c, p);
}

/* Give pages back while a starved file of the shared pool waits. */
void cache_pool_shrink(struct cache *c)
{
	struct cpool *pool = c->pages.pool;
	long share;

	pthread_mutex_lock(&pool->lock);
	share = pool->limit / (pool->nfiles ? pool->nfiles : 1);
	if (share < 1)
		share = 1;
	int starved = pool->starved;
	pthread_mutex_unlock(&pool->lock);
	while (starved && c->pages.npages > share) {
		struct cpage *v = cache_pick_victim(c);
		if (!v)
			break;
		cache_pg_free(c, v);
	}
	if (starved && c->pages.npages <= share) {
		pthread_mutex_lock(&pool->lock);
		__atomic_store_n(&pool->starved, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&pool->lock);
	}
}

/* A new page for pno (not present), linked most recent; reading: for data
 * to be read into it (see cache_pg_new).  -EAGAIN: no page can be had now
 * (the caller goes around the cache). */
static int pg_take(struct cache *c, int64_t pno, struct cpage **out, int *fresh, int reading)
{
	struct cpool *pool = c->pages.pool;
	int take;

	*fresh = 0;
	cache_ghost_note(c, pno);
	struct cpage *v;
	if (c->pages.npages >= c->evict.grow_limit && !(reading && c->ra.from_device && cache_buf_warm(c)) &&
	    (v = reading ? cache_clean_victim(c, 1) : cache_write_victim(c))) {
		pg_reuse(c, v, pno);
		*out = v;
		return 0;
	}
	pthread_mutex_lock(&pool->lock);
	long share = pool->limit / (pool->nfiles ? pool->nfiles : 1);
	take = pool->used < pool->limit;
	if (take)
		pool->used++;
	else if (c->pages.npages == 0 || (c->pages.npages < share && pool->nfiles > 1))
		__atomic_store_n(&pool->starved, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pool->lock);

	if (!take) {
		v = c->pages.npages ? cache_pick_victim(c) : NULL;
		if (!v)
			return -EAGAIN;
		pg_reuse(c, v, pno);
		*out = v;
		return 0;
	}
	struct cpage *p = calloc(1, sizeof *p);
	if (p)
		p->data = cache_buf_get(c, p, fresh);
	if (!p || !p->data) {
		free(p);
		pthread_mutex_lock(&pool->lock);
		pool->used--;
		pthread_mutex_unlock(&pool->lock);
		return -ENOMEM;
	}
	p->pno = pno;
	if (p->g)
		ffio_guard_bind(c->guard.file, p->g, pno);
	size_t h = hash_of(c, pno);
	p->hnext = c->pages.hash[h];
	c->pages.hash[h] = p;
	lru_append(c, p);
	if (++c->pages.npages > c->pages.npages_peak)
		c->pages.npages_peak = c->pages.npages;
	cache_passes_update(c);
	*out = p;
	return 0;
}

/* A page for a write: over an asynchronous stack taken as needed, up to
 * PAGES (write-behind wants its pages: O_DIRECT writes 4 MiB at a time
 * overlapped 5-10 points less with the computation when they had to reuse
 * clean ones); over a synchronous one, see cache_write_victim. */
int cache_pg_new_fresh(struct cache *c, int64_t pno, struct cpage **out, int *fresh)
{
	return pg_take(c, pno, out, fresh, 0);
}

/* A page to read into: a clean one is reused before the cache grows
 * (cache_ghost_note says when it grows), unless loads are slow (the file
 * comes from the device or the network: cache_note_load) and the new
 * page's memory was touched before (cache_buf_warm).  The limit on growth
 * spares a program fresh faults for pages it uses once, and a warm page
 * costs none; but a reused page is also one the processor's caches still
 * hold, where a warm one long unused is not: 8-byte records 64 bytes
 * apart read back through cache.sieve:1m:16:2 took 8% longer with every
 * page new (bench/strided).  So only where a page given up costs a slow
 * load again: the netCDF tile + record program's read over
 * delay:200us:1g, in the process that wrote the file (its cache's chunks
 * spare), evicted 12 pages of a 14-page file and loaded them again, 130
 * requests and 22.9 MB for 14.6 MB; 75 and 18.4 MB so, 54 ms -> 39 ms. */
int cache_pg_new(struct cache *c, int64_t pno, struct cpage **out)
{
	int fresh;
	return pg_take(c, pno, out, &fresh, 1);
}
