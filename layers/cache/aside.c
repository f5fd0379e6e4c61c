/* layers/cache/aside.c -- the cache steps aside for small writes that it
 * cannot gain on.  Without .sieve, a page's dirty bytes go below as one
 * request per run of adjacent bytes: the cache pays for itself by merging
 * writes into fewer requests, or by taking a write over bytes still
 * cached.  Where the application's writes leave gaps it never fills
 * (records at a stride, blocks between other ranks' blocks), every write
 * becomes a request of its own anyway, and the copy, the page and the
 * guard's marks are cost alone: bench/strided's 256 B records at 4 KiB
 * ran at 0.86x of raw, ROMIO's noncontiguous writes without data sieving
 * at 0.74x.
 *
 * So the write-backs are watched: pages written back give, together,
 * the application's writes that went into them (cpage.nwrites, hits
 * included) against the requests they made.  Over a window of
 * ASIDE_WINDOW requests with fewer than 9 writes per 8 requests, small
 * writes of the file go around the cache from then on (write_around: the
 * kernel has them at once, and cached pages learn of them).  While aside,
 * each write is compared with the one before: where a quarter of a window
 * of writes would have merged (a write beginning where the last ended, or
 * inside it), the cache takes writes in again, and the watch starts over.
 * The event layer's summary says when the cache stepped aside and back
 * (ffio_layer_note).  Not with .sieve (which fills the gaps), O_DIRECT (no
 * unaligned write goes around) or write-through (which goes around
 * already).
 */
#include "config.h"
#include <inttypes.h>
#include "cache.h"

#define ASIDE_WINDOW 256 /* requests (writes, while aside) judged together */

/* The layer as the spec wrote it, for the notes. */
static const char *spec_text(const struct cache *c)
{
	return c->base.spec ? c->base.spec->text : "cache";
}

void cache_aside_sample(struct cache *c, uint32_t writes, uint32_t pieces)
{
	struct cache_aside *a = &c->aside;

	if (a->on || is_sieve(c) || c->conf.direct || (c->conf.flags & FFIO_CACHE_WT))
		return;
	a->writes += writes;
	a->pieces += pieces;
	if (a->pieces < ASIDE_WINDOW)
		return;
	if (a->writes * 8 < a->pieces * 9) {
		a->on = 1;
		ffio_layer_note(&c->base, "%s: small writes go around it from write %" PRIu64
			       " on: %" PRIu64 " writes made %" PRIu64 " requests below (no gain in caching them)",
			       spec_text(c), c->stats.n_write, a->writes, a->pieces);
	}
	a->writes = a->pieces = 0;
	a->seen = a->merging = 0;
}

int cache_aside_takes(struct cache *c, size_t n, off_t off)
{
	struct cache_aside *a = &c->aside;
	off_t end = off + (off_t)n;

	if (!a->on || n == 0)
		return 0;
	a->seen++;
	if (off >= a->prev_off && off <= a->prev_end)
		a->merging++;
	a->prev_off = off;
	a->prev_end = end;
	if (a->seen < ASIDE_WINDOW)
		return 1;
	if (a->merging * 4 >= a->seen) {
		a->on = 0;
		ffio_layer_note(&c->base, "%s: writes taken in again from write %" PRIu64 " on: %" PRIu64
			       " of the last %" PRIu64 " would have merged",
			       spec_text(c), c->stats.n_write, a->merging, a->seen);
	}
	a->seen = a->merging = 0;
	return a->on;
}
