/* layers/cache/readahead.c -- read-ahead: following the application's
 * pattern (sequential, constant stride, runs), fetching the pages or
 * records ahead, the kernel's own read-ahead switched to suit, and advice
 * to the kernel for files that come from the device.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

/* A record read that takes longer than this came from the device, not the
 * kernel's page cache (about 1-2 us here; a device read, 60 us). */
#define COLD_READ_NS 20000

/* A load of n bytes from below, begun at t0, has ended.  Slower than
 * 2 GB/s (and 20 us) twice in a row: the file comes from the device, and
 * the records, pages or runs ahead are worth advice to the kernel
 * (ra_advise_records, ra_advise_pages, ra_advise_runs).  Twice, since the first
 * touch of a fresh cache buffer (a huge page cleared) is as slow as one
 * device read: on one slow record, warm 256 B records 64 KiB apart were
 * all advised, 0.71x raw.  Advice on data the kernel holds already costs a
 * system call and a walk of its pages: 58 us for 1 MiB, half as much as
 * loading the page. */
void cache_note_load(struct cache *c, off_t n, uint64_t t0)
{
	uint64_t ns = ffio_now_ns() - t0;
	cache_aside_load(c, n, ns, c->bufs.fresh_ns >= t0);
	if (ns > COLD_READ_NS + (uint64_t)n / 2)
		c->ra.from_device |= ++c->ra.slow_loads >= 2;
	else
		c->ra.slow_loads = 0;
}

/* The k-th page ahead along the pattern from offset next. */
static int64_t ra_page(const struct cache *c, off_t next, off_t step, int k)
{
	if (step >= (off_t)c->conf.page)
		return (next + (off_t)k * step) / (off_t)c->conf.page;
	return next / (off_t)c->conf.page + k;
}

/* Is the pattern strided with records much smaller than a page, one
 * record per page at most?  Then only the records' bytes are fetched.  A
 * stride is a step seen twice in a row (ra.hits): one long step forward
 * is half of all random reads. */
int cache_ra_sparse(const struct cache *c)
{
	return !c->conf.direct && c->ra.valid && c->ra.hits >= 1 && c->ra.stride >= (off_t)c->conf.page &&
	       c->ra.last_len * 4 <= c->conf.page;
}

/* Runs: sequential reads that jump ahead between runs, as netCDF reads a
 * worker's tile of a 3-D array, window after window through the part of
 * each plane that is the worker's, then on to the next plane.  Follow
 * them: the length of the last two runs (of two reads or more each) and
 * the distance between run starts. */
static void run_track(struct cache *c, off_t off)
{
	if (c->ra.valid && off == c->ra.last_off + (off_t)c->ra.last_len) {
		c->run.reads++;
		return;
	}
	if (c->ra.valid) {
		off_t end = c->ra.last_off + (off_t)c->ra.last_len;
		c->run.prev_len = c->run.len;
		c->run.len = c->run.reads >= 2 && end > c->run.start ? end - c->run.start : 0;
		c->run.stride = off - c->run.start;
		if (off < c->run.start)
			c->run.advised = 0; /* back to an earlier part of the file */
	}
	c->run.start = off;
	c->run.reads = 1;
}

/* Do runs hold: the last two of about the same length (within a quarter),
 * at most half a page, and the next run starting at least half a run past
 * the end of the last?  Then whole pages would mostly hold bytes the
 * application skips (a 1 MiB page holds four planes of a tile read of
 * which the worker needs half), and a miss fetches only what the run
 * still needs of the page (cache_run_load). */
int cache_ra_runs(const struct cache *c)
{
	off_t len = c->run.len, d = len - c->run.prev_len;
	return !c->conf.direct && len > 0 && c->run.prev_len > 0 && d * 4 <= len && -d * 4 <= len &&
	       len * 2 <= (off_t)c->conf.page && c->run.stride * 2 >= len * 3;
}

/* Submit reads of the absent pages pnos[0..m) (ascending, adjacent ones in
 * one request) into new pages; they arrive later (cache_read_done). */
static void ra_pages(struct cache *c, const int64_t *pnos, int m)
{
	struct cpage *pg[LOAD_BATCH];
	int i = 0;

	while (i < m) {
		int k = 0, starved = 0;
		while (i + k < m && k < LOAD_BATCH && (k == 0 || pnos[i + k] == pnos[i + k - 1] + 1)) {
			if (cache_pg_new(c, pnos[i + k], &pg[k]) < 0) {
				starved = 1;
				break;
			}
			pg[k++]->pin = 1; /* not a victim of the pages after it */
		}
		if (k == 0)
			break;
		struct areq *a = cache_areq_new(c, k, k);
		for (int j = 0; j < k; j++) {
			pg[j]->pin = 0;
			if (a) {
				a->pg[j] = pg[j];
				a->iov[j] = (struct iovec){pg[j]->data, c->conf.page};
				pg[j]->reading = 1;
			}
		}
		if (a) {
			a->start = pg_start(c, pnos[i]);
			a->len = a->left = (size_t)k * c->conf.page;
			a->r = (struct ffio_req){.op = FFIO_OP_READ, .off = a->start, .done = cache_read_done};
			c->stats.below_reads++;
			c->stats.async_reads++;
			if (cache_areq_submit(c, a) < 0) {
				for (int j = 0; j < k; j++)
					pg[j]->reading = 0;
				free(a);
				a = NULL;
			}
		}
		if (!a) { /* no request: give the pages back */
			for (int j = 0; j < k; j++)
				cache_pg_free(c, pg[j]);
			break;
		}
		i += k;
		if (starved)
			break;
	}
}

/* Fetch just the records [ro, ro + n) ahead (sparse strided): requests
 * submitted together, or one read each over a synchronous stack. */
static void ra_records(struct cache *c, off_t next, off_t stride, size_t n, int window, off_t size)
{
	for (int k = 0; k < window; k++) {
		off_t ro = next + (off_t)k * stride;
		if (ro >= size)
			break;
		int64_t pno = ro / (off_t)c->conf.page;
		uint32_t lo = (uint32_t)(ro - pg_start(c, pno));
		if (lo + n > c->conf.page || pg_find(c, pno))
			continue;
		struct cpage *p;
		if (cache_pg_new(c, pno, &p) < 0)
			break;
		if (!c->async.below) { /* one read now, as the application would */
			uint64_t t0 = ffio_now_ns();
			if (cache_pg_load_range(c, p, lo, lo + (uint32_t)n) < 0) {
				cache_pg_free(c, p);
				break;
			}
			p->ra = 1;
			cache_note_load(c, (off_t)n, t0);
			if (c->ra.from_device)
				break; /* advise the rest (ra_advise_records) */
			continue;
		}
		struct areq *a = cache_areq_new(c, 1, 1);
		if (!a) {
			cache_pg_free(c, p);
			break;
		}
		a->pg[0] = p;
		a->iov[0] = (struct iovec){p->data + lo, n};
		a->sparse = 1;
		a->lo = lo;
		a->hi = lo + (uint32_t)n;
		a->start = ro;
		a->len = a->left = n;
		a->r = (struct ffio_req){.op = FFIO_OP_READ, .off = ro, .done = cache_read_done};
		p->reading = 1;
		c->stats.below_reads++;
		c->stats.async_reads++;
		if (cache_areq_submit(c, a) < 0) {
			p->reading = 0;
			free(a);
			cache_pg_free(c, p);
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
 * record of the file (cache_kernel_readahead_arm), turns it on while the
 * pattern is sequential (it streams better than any advice: it reads into
 * large folios; advice of the same window were 1.5x slower), and off again
 * when a strided pattern holds: then the cache tells the kernel what to
 * read next (WILLNEED starts the reads and returns) and loads each page or
 * record when the application asks for it, from the kernel's page cache. */
static void kernel_readahead(struct cache *c, int on)
{
	c->ra.kernel_armed = 0; /* decided */
	if (c->ra.no_advise || c->ra.kernel_off == !on)
		return;
	int err = ffio_below_advise(&c->base, 0, 0, on ? POSIX_FADV_NORMAL : POSIX_FADV_RANDOM);
	if (err == -EOPNOTSUPP)
		c->ra.no_advise = 1;
	else if (err == 0)
		c->ra.kernel_off = !on;
}

/* Before the cache reads its first page or record of the file below: a
 * cache that reads ahead turns the kernel's read-ahead off (see
 * kernel_readahead), unless the pattern decided otherwise already.  Not at
 * open: a file only written, or read in large requests around the cache
 * (Program I), pays no system call for it. */
void cache_kernel_readahead_arm(struct cache *c)
{
	if (c->ra.kernel_armed)
		kernel_readahead(c, 0);
}

/* A read of a page or more around the cache, while the kernel's
 * read-ahead is off for the cache's loads: the kernel reads such a request
 * as one run, and with its read-ahead off it fetches it in synchronous
 * pieces of its read-ahead window, without overlap.  Measured on the
 * development machine, 13.8 MB read at once from a file not in the page
 * cache: 25.0 ms with read-ahead on and 30.1 ms off on the GlusterFS
 * volume of make bench-dfs, 7.8 and 9.2 ms on the local disk.  PnetCDF's
 * collective reads do this after a header read that loaded a page.  So
 * it is turned on for that read alone (two system calls that touch no
 * device): 1 when it was, and cache_kernel_readahead_drop turns it off
 * again after. */
int cache_kernel_readahead_lift(struct cache *c, size_t n)
{
	if (n < c->conf.page || c->ra.no_advise || !c->ra.kernel_off)
		return 0;
	return ffio_below_advise(&c->base, 0, 0, POSIX_FADV_NORMAL) == 0;
}

void cache_kernel_readahead_drop(struct cache *c)
{
	if (ffio_below_advise(&c->base, 0, 0, POSIX_FADV_RANDOM) < 0)
		c->ra.kernel_off = 0; /* on: the loads cost more, nothing is lost */
}

/* Advice: the kernel starts reading [off, off + len).  Returns 0, or
 * -EOPNOTSUPP when nothing below takes advice. */
static int ra_advise(struct cache *c, off_t off, off_t len)
{
	int err;

	if (c->ra.no_advise || !c->ra.kernel_off)
		return -EOPNOTSUPP;
	err = ffio_below_advise(&c->base, off, len, POSIX_FADV_WILLNEED);
	if (err == -EOPNOTSUPP)
		c->ra.no_advise = 1;
	else if (err == 0)
		c->stats.ra_advice++;
	return err == -EOPNOTSUPP ? err : 0; /* advice: a failure loses nothing */
}

/* Sparse strided records from the device: advice for each record of the
 * window not yet advised; each is read when the application asks for it.
 * Measured with 256-byte records 64 KiB apart, cold: 70 us a record one
 * pread at a time, 13 us with the next 32 advised; reading them ahead into
 * the cache at queue depth over uring, 25 us. */
static int ra_advise_records(struct cache *c, off_t next, off_t stride, size_t n, int window, off_t size)
{
	off_t ro = c->ra.advised > next ? c->ra.advised : next;

	for (; ro < next + (off_t)window * stride && ro < size; ro += stride)
		if (ra_advise(c, ro, (off_t)n) < 0)
			return -EOPNOTSUPP;
	c->ra.advised = ro;
	return 0;
}

/* The pages pnos[0..m) (ascending) ahead along the pattern: advice for
 * each run of adjacent ones. */
static int ra_advise_pages(struct cache *c, const int64_t *pnos, int m, off_t size)
{
	for (int i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && pnos[j] == pnos[j - 1] + 1;)
			j++;
		off_t lo = pg_start(c, pnos[i]), hi = pg_start(c, pnos[j - 1]) + (off_t)c->conf.page;
		if (ra_advise(c, lo, (hi < size ? hi : size) - lo) < 0)
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
	off_t d = c->run.len > c->run.prev_len ? c->run.len - c->run.prev_len : c->run.prev_len - c->run.len;
	return d > c->run.len / 32 ? d : c->run.len / 32;
}

/* Runs ahead, once runs come from the device (cache_note_load): advice for
 * each of the next AHEAD runs not advised yet and not cached, with the
 * kernel's own read-ahead off (it would read the gaps between them too);
 * each run's part of a page is fetched when the application gets to it
 * (cache_run_load).  A file in the page cache gets no advice: advice costs
 * a system call and a walk of the kernel's pages (2134 of them made a warm
 * tile + record run 2.5 times as slow). */
static void ra_advise_runs(struct cache *c, off_t size)
{
	off_t len = c->run.len + run_spare(c);

	if (!c->ra.from_device)
		return;
	kernel_readahead(c, 0);
	for (int k = 1; k <= c->conf.ahead; k++) {
		off_t ro = c->run.start + (off_t)k * c->run.stride;
		if (ro >= size)
			break;
		if (ro < c->run.advised)
			continue;
		off_t n = len < size - ro ? len : size - ro;
		if (!cached(c, ro, n) && ra_advise(c, ro, n) < 0)
			return;
		c->run.advised = ro + 1;
	}
}

/* The strided read of n bytes has found the probe page of the read-ahead
 * (the window's middle, from the page at next) in the cache, or past the
 * end while the size stays at most size_max: while the reads keep the
 * stride within next's page, they find the same (cache_ra_steady; a
 * stride of a page or more leaves it at once).  Not with a stride of n
 * (the next read would continue this one: a run), nor with the kernel's
 * read-ahead still on (its advice failed). */
static void ra_steady_note(struct cache *c, size_t n, off_t next, off_t size_max)
{
	if (c->ra.stride > 0 && c->ra.stride != (off_t)n && (c->ra.kernel_off || c->ra.no_advise)) {
		c->ra.steady_end = pg_start(c, next / (off_t)c->conf.page) + (off_t)c->conf.page;
		c->ra.steady_removed = c->pages.removed;
		c->ra.steady_size = size_max;
		c->ra.steady_step = c->ra.stride;
	}
}

/* Follow the access pattern: remember it, and when it holds, make sure the
 * next AHEAD pages (or records, sparse) along it are cached or on their
 * way: requests submitted together and committed in one batch, topped up
 * when the one half-way ahead is missing. */
void cache_read_ahead(struct cache *c, off_t off, size_t n, off_t size)
{
	off_t step;

	c->ra.steady_end = 0;
	run_track(c, off);
	if (c->ra.valid && off == c->ra.last_off + (off_t)c->ra.last_len) {
		c->ra.stride = 0;
		c->ra.hits++;
	} else if (c->ra.valid && off - c->ra.last_off == c->ra.stride && c->ra.stride > 0) {
		c->ra.hits++;
	} else {
		c->ra.stride = c->ra.valid ? off - c->ra.last_off : 0;
		c->ra.hits = 0;
		c->ra.advised = 0;
	}
	c->ra.valid = 1;
	c->ra.last_off = off;
	c->ra.last_len = n;
	if (c->conf.ahead <= 0 || !c->conf.can_read)
		return;
	if (cache_ra_runs(c)) {
		ra_advise_runs(c, size);
		return;
	}
	if (c->ra.hits < 1)
		return;
	kernel_readahead(c, c->ra.stride == 0);
	if (c->ra.stride == 0 && !c->async.below && !c->ra.kernel_off && !c->ra.no_advise) {
		/* sequential over a synchronous stack: the kernel reads ahead,
		 * pages load on demand; so for every read that continues this
		 * one with as many bytes (cache_ra_steady) */
		c->ra.steady_end = INT64_MAX;
		c->ra.steady_removed = c->pages.removed;
		c->ra.steady_size = INT64_MAX;
		c->ra.steady_step = (off_t)n;
		return;
	}
	off_t next = c->ra.stride ? off + c->ra.stride : off + (off_t)n;
	step = c->ra.stride ? c->ra.stride : (off_t)c->conf.page;
	int window = c->conf.ahead;
	if (window > c->conf.limit / 2)
		window = (int)(c->conf.limit / 2);
	if (window < 1)
		return;
	int64_t probe = ra_page(c, next, step, window / 2);
	off_t probe_at = pg_start(c, probe);
	if (probe_at >= size || pg_find(c, probe)) {
		ra_steady_note(c, n, next, probe_at >= size ? probe_at : INT64_MAX);
		return;
	}
	if (c->ra.advised > next + (off_t)(window / 2) * step)
		return; /* advised far enough ahead */
	if (cache_aside_holds_ahead(c, n))
		return; /* small reads go around, or are yet to be weighed (aside.c) */
	if (cache_ra_sparse(c) && c->ra.from_device &&
	    ra_advise_records(c, next, c->ra.stride, n, window, size) == 0) {
		return;
	} else if (cache_ra_sparse(c)) {
		ra_records(c, next, c->ra.stride, n, window, size);
	} else {
		/* the missing pages of the window along the pattern */
		int64_t pnos[RA_WINDOW_MAX];
		int m = 0;
		for (int k = 0; k < window && m < RA_WINDOW_MAX; k++) {
			int64_t pno = ra_page(c, next, step, k);
			if (pg_start(c, pno) >= size)
				break;
			if (!pg_find(c, pno) && (m == 0 || pnos[m - 1] != pno))
				pnos[m++] = pno;
		}
		if (!c->async.below && c->ra.stride && !c->ra.no_advise && c->ra.from_device) {
			int k = 0; /* those not advised yet */
			while (k < m && pg_start(c, pnos[k]) < c->ra.advised)
				k++;
			if (ra_advise_pages(c, pnos + k, m - k, size) == 0) {
				/* advised up to the end of the window's last page (with a
				 * stride under a page, the next records' offsets are still
				 * in this page: every record advised the next page again,
				 * 15 times as slow as raw for 256 B records 4 KiB apart) */
				off_t end = m > 0 ? pg_start(c, pnos[m - 1]) + (off_t)c->conf.page
						  : next + (off_t)window * step;
				if (end > c->ra.advised)
					c->ra.advised = end;
				return;
			}
		}
		if (!c->async.below) { /* no advice: read them now */
			uint64_t t0 = ffio_now_ns();
			if (m > 0 && cache_load_missing(c, pnos, m, 1) < 0)
				cache_ra_forget(c);
			else if (m > 0)
				cache_note_load(c, (off_t)m * (off_t)c->conf.page, t0);
			return;
		}
		ra_pages(c, pnos, m);
	}
	if (ffio_below_commit(&c->base) < 0)
		cache_ra_forget(c); /* read-ahead is advice */
}

/* A miss at [lo, hi) of page p (no dirty bytes) while runs hold: fetch
 * up to where the current run, begun at start, should end (its length as
 * the last one's, and run_spare; past that, a quarter run at a time),
 * within the page; from the end of the valid range lo is in, if any (the
 * range grows).  When that range holds an earlier run's bytes, the
 * application reads the page through, run after run (tiles side by side):
 * the whole page is loaded. */
int cache_run_load(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi, off_t start)
{
	off_t ps = pg_start(c, p->pno), end = start + c->run.len + run_spare(c);
	int err;

	if ((err = cache_pg_wait(c, p)) < 0)
		return err;
	if (end < ps + (off_t)hi)
		end = ps + (off_t)hi + c->run.len / 4;
	if (end > ps + (off_t)c->conf.page)
		end = ps + (off_t)c->conf.page;
	int at;
	if (valid_covers(p, lo, hi, &at))
		return 0; /* arrived while waiting */
	if (at >= 0 && ps + (off_t)p->valid[at].lo < start) { /* this run goes on from an earlier one's bytes: */
		uint64_t t0 = ffio_now_ns();                 /* all of the page is wanted */
		if ((err = cache_pg_fill(c, p)) == 0)
			cache_note_load(c, (off_t)c->conf.page, t0);
		return err;
	}
	c->stats.run_loads++;
	uint32_t from = at >= 0 ? p->valid[at].hi : lo;
	uint64_t t0 = ffio_now_ns();
	if ((err = cache_pg_load_range(c, p, from, (uint32_t)(end - ps))) == 0)
		cache_note_load(c, end - ps - from, t0);
	return err;
}

/* A large read that goes around the cache: when it continues the one
 * before it, the kernel reads ahead (see kernel_readahead). */
void cache_around_ahead(struct cache *c, off_t off, size_t n)
{
	c->ra.steady_end = 0;
	run_track(c, off);
	if (c->ra.valid && off == c->ra.last_off + (off_t)c->ra.last_len)
		kernel_readahead(c, 1);
	c->ra.advised = 0;
	c->ra.valid = 1;
	c->ra.last_off = off;
	c->ra.last_len = n;
	c->ra.stride = 0;
}
