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
 * (ffio_layer_note).
 *
 * A file written by several processes at once (FFIO_FILE_SHARED, which
 * the MPI glue sets for a file opened for writing by more ranks than
 * one) starts aside: the bytes between one rank's writes are most likely
 * another rank's, which no write of this process fills, and a window of
 * write-backs comes only at a flush, after every write was copied in
 * (PnetCDF's independent tile writes under Open MPI's OMPIO, 14400
 * writes of 320 B per rank between the others' rows: the cache held them
 * all, and wrote back as many requests at the close).  Its first window
 * is SHARED_WINDOW writes, so that a rank writing its own bytes in
 * order (each write beginning where the last ended) is taken in after
 * a few writes.  Not with .sieve (which fills the gaps), O_DIRECT (no
 * unaligned write goes around) or write-through (which goes around
 * already).
 *
 * Reads.  A page loaded for a small read pays for itself by the reads it
 * then serves.  Where the reads are sparse and the file below answers
 * quickly (records of 1000 B at a stride of 4000 B from the kernel's page
 * cache, pages dropped after each barrier as another rank may have
 * written them), a load copies four times the bytes wanted and costs more
 * than the reads it serves: ROMIO's noncontiguous reads without data
 * sieving ran at 0.72x of raw, bench/strided's 256 B records at 4 KiB at
 * 0.78x.  So the loads made for reads are timed, and a window of them
 * (one load along a forward pattern, which does not come back to its
 * pages; READ_WINDOW loads otherwise, so that some reuse can show) is weighed
 * against what the reads made meanwhile, hits included, would have cost
 * going around: their count times what a small read costs below beyond
 * its bytes (the median of READ_PROBES small reads timed going around)
 * plus their bytes at the loads' cost per byte.  Where that is under 4/5 of the loads'
 * time, small reads into absent pages go around the cache (read_around:
 * pages held are still read from; nothing is loaded ahead).
 *
 * A load into memory never touched (a process's first pages) is timed
 * with the faults of that first touch, which a buffer touched before does
 * not pay: 1.5 to 5.7 ms for a page of 1 MiB against 0.2 ms warm.  Reads
 * that went aside on such a window are weighed again as soon as a buffer
 * touched before is free (the pages dropped at a barrier, the MPI glue's
 * sync): ROMIO's reads without data sieving went aside on their first page
 * in some ranks, and stayed aside in every iteration after.
 *
 * Until the first window is weighed, nothing is loaded ahead either: on
 * a synchronous stack a page loaded ahead costs what it costs when the
 * read needs it, and a page the reads find absent is where they are
 * weighed.  After READ_RETRY reads around, the cache loads again and
 * weighs a new window (after twice as many the next time, while the
 * windows keep saying the same); at once, and for good, when the reads
 * (READ_BACK_MIN of them at least) go back to bytes they read before,
 * within a span the cache can hold,
 * and neither a page nor the clean data was dropped meanwhile (an
 * eviction; another process's writes after a barrier): loaded then, the
 * bytes would be read from memory the next time round.  Reads that each
 * follow such a drop never come back to bytes a cache would still hold:
 * PnetCDF's gets under Open MPI's OMPIO, whose every set_view waits on a
 * shared semaphore (a message heard, the clean data dropped), went back
 * to loading a page for each read of a few bytes (PnetCDF's nc_test: 736
 * MB below for 3.7 MB read).  Only over a synchronous stack (with requests in
 * flight below, loads ahead are out of the reads' way), for reads of at
 * most a quarter of a page that neither follow runs nor fetch only their
 * records (cache_ra_runs, cache_ra_sparse: those loads carry no spare
 * bytes), not under O_DIRECT, and not once loads came from the device
 * (cache_note_load): there a small read timed going around would cost a
 * device's round trip, and loads ahead are the kernel's to overlap.
 */
#include "config.h"
#include <inttypes.h>
#include "cache.h"

#define ASIDE_WINDOW 256 /* requests (writes, while aside) judged together */
#define SHARED_WINDOW 16 /* writes judged first, for a file of several writers */
#define READ_WINDOW 4    /* loads weighed together, but along a forward pattern (1) */
#define READ_BACK_MIN 64 /* reads around before going back to earlier bytes may mean reuse */
#define READ_RETRY 4096  /* reads around before loads are tried again ... */
#define READ_RETRY_MAX (1u << 20) /* ... twice as many after each retry that stays aside, up to this */

/* The layer as the spec wrote it, for the notes. */
static const char *spec_text(const struct cache *c)
{
	return c->base.spec ? c->base.spec->text : "cache";
}

/* May small writes go around c?  Not with .sieve (which fills the gaps),
 * O_DIRECT (no unaligned write goes around) or write-through (which goes
 * around already). */
static int may_go_aside(const struct cache *c)
{
	return !is_sieve(c) && !c->conf.direct && !(c->conf.flags & FFIO_CACHE_WT);
}

void cache_aside_sample(struct cache *c, uint32_t writes, uint32_t pieces)
{
	struct cache_aside *a = &c->aside;

	if (a->on || !may_go_aside(c))
		return;
	a->writes += writes;
	a->pieces += pieces;
	if (a->pieces < ASIDE_WINDOW)
		return;
	if (a->writes * 8 < a->pieces * 9) {
		a->on = 1;
		cache_passes_update(c);
		ffio_layer_note(&c->base, "%s: small writes go around it from write %" PRIu64
			       " on: %" PRIu64 " writes made %" PRIu64 " requests below (no gain in caching them)",
			       spec_text(c), c->stats.n_write, a->writes, a->pieces);
	}
	a->writes = a->pieces = 0;
	a->seen = a->merging = 0;
}

/* A file of several writers (FFIO_FILE_SHARED), seen at its first write
 * into the cache: small writes go around from now on, judged after
 * SHARED_WINDOW of them. */
static void shared_start(struct cache *c)
{
	struct cache_aside *a = &c->aside;

	a->shared_seen = 1;
	if (!may_go_aside(c))
		return;
	a->on = 1;
	cache_passes_update(c);
	a->window = SHARED_WINDOW;
	a->seen = a->merging = 0;
	a->prev_off = a->prev_end = -1;
	ffio_layer_note(&c->base, "%s: small writes go around it from write %" PRIu64
		       " on: the file is written by several processes (taken in once they merge)",
		       spec_text(c), c->stats.n_write);
}

FFIO_HOT int cache_aside_takes(struct cache *c, size_t n, off_t off)
{
	struct cache_aside *a = &c->aside;
	off_t end = off + (off_t)n;

	if (!a->on && !a->shared_seen && (c->base.file->glue_flags & FFIO_FILE_SHARED))
		shared_start(c);
	if (!a->on || n == 0)
		return 0;
	a->seen++;
	if (off >= a->prev_off && off <= a->prev_end)
		a->merging++;
	a->prev_off = off;
	a->prev_end = end;
	if (a->seen < (a->window ? a->window : ASIDE_WINDOW))
		return 1;
	a->window = 0;
	if (a->merging * 4 >= a->seen) {
		a->on = 0;
		cache_passes_update(c);
		ffio_layer_note(&c->base, "%s: writes taken in again from write %" PRIu64 " on: %" PRIu64
			       " of the last %" PRIu64 " would have merged",
			       spec_text(c), c->stats.n_write, a->merging, a->seen);
	}
	a->seen = a->merging = 0;
	return a->on;
}

/* ---- reads --------------------------------------------------------------- */

/* A new window of loads, from the reads made so far. */
static void read_window_start(struct cache *c)
{
	struct cache_aside *a = &c->aside;
	a->loads = 0;
	a->load_ns = a->load_bytes = 0;
	a->load_fresh = 0;
	a->reads0 = c->stats.n_read;
	a->bytes0 = c->stats.b_read;
}

void cache_aside_load(struct cache *c, off_t n, uint64_t ns, int fresh)
{
	struct cache_aside *a = &c->aside;
	if (a->loads == 0) { /* the window's reads begin with the read that needed this load */
		a->reads0 = c->stats.n_read - 1;
		a->bytes0 = c->stats.b_read;
	}
	a->load_fresh |= fresh;
	a->loads++;
	a->load_ns += ns;
	a->load_bytes += (uint64_t)n;
}

/* What a small read costs below beyond its bytes: the median of the
 * reads timed going around (one preempted, or one the device served, says
 * nothing of the others), less their bytes at per_byte. */
static double probe_fixed(const struct cache_aside *a, double per_byte)
{
	double f[READ_PROBES];
	int n = a->probes < READ_PROBES ? a->probes : READ_PROBES;
	for (int i = 0; i < n; i++) {
		double x = (double)a->probe_ns[i] - (double)a->probe_len[i] * per_byte;
		int j = i;
		for (; j > 0 && f[j - 1] > x; j--)
			f[j] = f[j - 1];
		f[j] = x;
	}
	double m = n == 0 ? 0 : n % 2 ? f[n / 2] : (f[n / 2 - 1] + f[n / 2]) / 2;
	return m > 0 ? m : 0;
}

/* Do the reads of the window, going around, cost less than 4/5 of the
 * loads made for them? */
static int window_says_aside(const struct cache *c)
{
	const struct cache_aside *a = &c->aside;
	double per_byte = (double)a->load_ns / (double)a->load_bytes;
	double fixed = probe_fixed(a, per_byte);
	double reads = (double)(c->stats.n_read - a->reads0), bytes = (double)(c->stats.b_read - a->bytes0);
	return (reads * fixed + bytes * per_byte) * 5 < (double)a->load_ns * 4;
}

/* May reads of n bytes go around: small ones, over a synchronous stack,
 * no O_DIRECT?  (Loads from the device: cache_aside_read.) */
static int read_may_go_around(const struct cache *c, size_t n)
{
	return !c->conf.direct && !c->async.below && n > 0 && n * 4 <= c->conf.page;
}

int cache_aside_holds_ahead(const struct cache *c, size_t n)
{
	if (cache_ra_sparse(c) || cache_ra_runs(c)) /* loads of what the reads want, no more */
		return 0;
	return c->aside.reads_on ||
	       (!c->aside.judged && c->aside.loads > 0 && !c->ra.from_device && read_may_go_around(c, n));
}

/* The bytes the cache can hold at once. */
static off_t cache_span(const struct cache *c)
{
	return (off_t)c->conf.limit * (off_t)c->conf.page;
}

/* READ_BACK_MIN reads or more around since the clean data was last
 * dropped, within a span the cache can hold, and no page taken out since
 * they began but by a drop (removed: pages.removed up to now, or up to
 * the last drop): pages loaded for them would have served them all. */
static int dense_reads(const struct cache *c, uint64_t removed)
{
	const struct cache_aside *a = &c->aside;
	return a->reads_kept >= READ_BACK_MIN && removed == a->removed0 && a->read_hi - a->read_lo <= cache_span(c);
}

int cache_aside_read(struct cache *c, size_t n, off_t off)
{
	struct cache_aside *a = &c->aside;

	if (a->reuse || !read_may_go_around(c, n))
		return 0;
	if (a->reads_on) { /* (until the retry, whatever the loads' speed became) */
		/* told to drop its clean data since (a barrier, a lock, a
		 * message heard): pages loaded for the reads before would be
		 * gone now, so reuse counts from here; but reads that were
		 * dense between two drops (ROMIO's blocks of a rank between
		 * barriers) load again */
		int dropped = c->pages.drops != a->drops0;
		int back = dense_reads(c, dropped ? c->pages.removed_at_drop : c->pages.removed) &&
			   (dropped || off < a->prev_read);
		if (dropped) {
			a->removed0 = c->pages.removed;
			a->drops0 = c->pages.drops;
			a->read_lo = a->read_hi = a->prev_read = off;
			a->reads_kept = 0;
		}
		/* weighed on a load into memory never touched, whose faults a
		 * buffer touched before (free now) does not pay: weighed again */
		int fresh = a->on_fresh && cache_buf_warm(c);
		if (fresh)
			back = 0;
		if (off < a->read_lo)
			a->read_lo = off;
		if (off + (off_t)n > a->read_hi)
			a->read_hi = off + (off_t)n;
		a->prev_read = off;
		a->reads_kept++;
		if (!back && !fresh && ++a->reads_aside < a->retry_after)
			return 1;
		a->reads_on = a->on_fresh = 0;
		a->judged = back;
		a->reuse = back; /* for good */
		if (fresh)
			a->retry_after = 0;
		ffio_layer_note(&c->base, "%s: reads loaded into it again from read %" PRIu64 " on, after %" PRIu64
			       " small reads around it%s", spec_text(c), c->stats.n_read, a->reads_aside,
			       back    ? ", which came back to bytes the cache can hold"
			       : fresh ? ": the loads weighed went into memory never touched before, and memory"
					 " touched before is free now"
				       : "");
		read_window_start(c);
		return 0;
	}
	if (c->ra.from_device)
		return 0; /* a small read timed going around would pay the device's latency */
	int forward = c->ra.valid && c->ra.hits >= 2;
	uint32_t window = forward ? 1 : c->conf.limit < READ_WINDOW ? (uint32_t)c->conf.limit : READ_WINDOW;
	if (a->loads < window || a->load_bytes == 0)
		return 0;
	if (a->probes < READ_PROBES)
		return 1; /* timed (cache_aside_clock), then weighed at the next load */
	a->judged = 1;
	if (window_says_aside(c)) {
		/* after a retry that found the same, twice as many reads around
		 * before the next (a load each time, which is what aside saves) */
		a->retry_after = a->retry_after && a->retry_after < READ_RETRY_MAX ? 2 * a->retry_after : READ_RETRY;
		a->reads_on = 1;
		a->on_fresh = a->load_fresh;
		a->reads_aside = 0;
		a->read_lo = a->read_hi = a->prev_read = off;
		a->reads_kept = 0;
		a->removed0 = c->pages.removed;
		a->drops0 = c->pages.drops;
		ffio_layer_note(&c->base, "%s: small reads go around it from read %" PRIu64 " on: %" PRIu64
			       " reads cost %" PRIu64 " us of loads (%" PRIu64 " bytes); going around: %" PRIu64
			       " ns a read and its bytes",
			       spec_text(c), c->stats.n_read, c->stats.n_read - a->reads0, a->load_ns / 1000,
			       a->load_bytes, (uint64_t)probe_fixed(a, 0));
		return 1;
	}
	a->retry_after = 0;
	read_window_start(c);
	return 0;
}

uint64_t cache_aside_clock(const struct cache *c)
{
	return c->aside.probes < READ_PROBES ? ffio_now_ns() : 0;
}

void cache_aside_timed(struct cache *c, size_t n, uint64_t t0)
{
	struct cache_aside *a = &c->aside;
	if (!t0 || a->probes >= READ_PROBES)
		return;
	a->probe_ns[a->probes] = ffio_now_ns() - t0;
	a->probe_len[a->probes] = n;
	a->probes++;
}
