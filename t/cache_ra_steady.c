/* t/cache_ra_steady.c -- the read-ahead's steady stride (cache_ra_steady:
 * a strided read whose read-ahead would only find the same probe page,
 * or a sequential one over a synchronous stack, records itself in a few
 * stores) leaves the cache exactly as the full read-ahead
 * (cache_read_ahead) leaves it.
 *
 * Two managed files, A and B, and a kernel twin K get the same calls: a
 * seeded mix of strided and sequential reads (several strides and
 * lengths, some crossing pages, some past the end), writes that grow the file or land in pages
 * ahead, truncation, fsync, reads around the cache, and writes far away
 * that evict pages while a stride holds.  Before each call on B its steady
 * state is cleared, so that B always takes the full read-ahead.  After
 * each call: the results, errno and bytes of A, B and K agree, and so does
 * every part of A's cache and B's that a later call depends on (the
 * pattern, the runs, the counters, the pages in LRU order and what each
 * holds).  The steady path must have been taken, and over every spec.
 *
 * The armed read (struct cache_hot: the next read of a steady pattern,
 * its hit path's tests passed in advance) is A's too, B never takes it;
 * bytes written over a spell's first reads before it (the page may then
 * hold only them), writes of a few bytes over the next reads, truncation just past the
 * next read or in it, and fsync come between the reads of a spell.
 *
 * Usage: cache_ra_steady [SEED] */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "cache.h"
#include "cache_of.h"
#include "fake_clock.h"
#include "rng.h"
#include "tap.h"

static const char *const specs[] = {
	"cache:4k:4:2", "cache.sieve:4k:8:2", "cache:4k:16:4", "cache:64k:8:2", "cache.sieve:1m:16:2",
};
#define NSPECS (int)(sizeof specs / sizeof specs[0])
#define CALLS 6000
#define MAXREC 200

static char dir[PATH_MAX / 2], pa[PATH_MAX], pb[PATH_MAX], pk[PATH_MAX];
static int A = -1, B = -1, K = -1;
static char bad[400];
static unsigned char wb[1 << 21], rb[3][1 << 21];

/* The first part of A's cache and B's that differs, or NULL.  Not
 * compared: the steady state itself, pages.last (a look-up cache the full
 * read-ahead sets), big (timings of write-behind). */
static const char *differ(const struct cache *a, const struct cache *b)
{
#define SAME(x) if (memcmp(&a->x, &b->x, sizeof a->x) != 0) return #x
	SAME(ra.last_off); SAME(ra.last_len); SAME(ra.stride); SAME(ra.hits); SAME(ra.valid); SAME(ra.advised);
	SAME(ra.no_advise); SAME(ra.kernel_off); SAME(ra.kernel_armed); SAME(ra.slow_loads); SAME(ra.from_device);
	SAME(run.start); SAME(run.reads); SAME(run.len); SAME(run.prev_len); SAME(run.stride); SAME(run.advised); SAME(stats); SAME(size); SAME(pages.npages); SAME(pages.ndirty); SAME(pages.removed);
#undef SAME
	const struct cpage *p = a->pages.lru.next, *q = b->pages.lru.next;
	for (; p != &a->pages.lru && q != &b->pages.lru; p = p->next, q = q->next) {
		if (p->pno != q->pno)
			return "the pages in LRU order";
		if (p->known != q->known || p->ra != q->ra || p->reading != q->reading || p->holes != q->holes ||
		    p->nvalid != q->nvalid ||
		    p->next_ext != q->next_ext || memcmp(p->valid, q->valid, p->nvalid * sizeof *p->valid) != 0 ||
		    (p->next_ext && memcmp(p->ext, q->ext, p->next_ext * sizeof *p->ext) != 0))
			return "a page's state";
	}
	return p == &a->pages.lru && q == &b->pages.lru ? NULL : "the number of pages";
}

/* Would A's next read of n bytes at off take the steady path?  Asked of a
 * copy, with the size the read sees (only fields of the struct itself are
 * touched). */
static int steady_next(const struct cache *c, off_t off, size_t n)
{
	struct cache copy = *c;
	off_t size = c->size.below > c->size.cached_end ? c->size.below : c->size.cached_end;
	return c->size.below_known && cache_ra_steady(&copy, off, n, size);
}

static long steady_taken, hot_taken, hotw_taken;


/* One call on A, B and K: kind 0 pread, 1 lseek+read, 2 pwrite, 3
 * ftruncate, 4 fsync, 5 a read around the cache (two pages), 6
 * lseek+write.  Writes take their bytes from wb at the offset (mod 64 KiB),
 * so records differ.  Results, errno and bytes compared, then the caches. */
static void call(int kind, off_t off, size_t n, long i)
{
	int fds[3] = {A, B, K};
	ssize_t r[3];
	int e[3];

	if (bad[0])
		return;
	if (kind == 0 || kind == 1) {
		steady_taken += steady_next(cache_of(A), off, n);
		hot_taken += cache_hot_due(cache_of(A), &cache_of(A)->hot, off, n);
	} else if (kind == 2 || kind == 6) {
		hotw_taken += cache_hot_due(cache_of(A), &cache_of(A)->hotw.at, off, n);
	}
	cache_of(B)->ra.steady_end = 0; /* B: the full read-ahead, always, */
	cache_of(B)->hot.off = -1;      /* and the hit paths' tests */
	cache_of(B)->hotw.at.off = -1;
	const unsigned char *src = wb + off % 65536;
	for (int k = 0; k < 3; k++) {
		errno = 0;
		switch (kind) {
		case 0: case 5:
			r[k] = ffpread(fds[k], rb[k], n, off);
			break;
		case 1:
			r[k] = ffseek(fds[k], off, SEEK_SET) == off ? ffread(fds[k], rb[k], n) : -2;
			break;
		case 2:
			r[k] = ffpwrite(fds[k], src, n, off);
			break;
		case 6:
			r[k] = ffseek(fds[k], off, SEEK_SET) == off ? ffwrite(fds[k], src, n) : -2;
			break;
		case 3:
			r[k] = ftruncate(fds[k], off);
			break;
		default:
			r[k] = fffsync(fds[k]);
		}
		e[k] = errno;
	}
	const char *d = NULL;
	if (r[0] != r[2] || r[1] != r[2] || (r[2] < 0 && (e[0] != e[2] || e[1] != e[2])))
		d = "the results";
	else if ((kind == 0 || kind == 1 || kind == 5) && r[2] > 0 &&
		 (memcmp(rb[0], rb[2], (size_t)r[2]) != 0 || memcmp(rb[1], rb[2], (size_t)r[2]) != 0))
		d = "the bytes read";
	else
		d = differ(cache_of(A), cache_of(B));
	if (d)
		snprintf(bad, sizeof bad, "call %ld (kind %d, %zu bytes at %lld): %s differ (A %zd, B %zd, K %zd)", i,
			 kind, n, (long long)off, d, r[0], r[1], r[2]);
}

/* The file comes from the device, or not, for both caches. */
static void fix_device(int from_device)
{
	struct cache *c[2] = {cache_of(A), cache_of(B)};
	for (int k = 0; k < 2; k++)
		c[k]->ra.from_device = from_device;
}

/* One spec, one seed: a file of a few pages, then CALLS calls in spells
 * of one pattern each. */
static void run(const char *spec, uint64_t seed, int from_device)
{
	long s0 = steady_taken, h0 = hot_taken, w0 = hotw_taken;

	bad[0] = 0;
	rs = seed;
	A = ffopen(pa, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	B = ffopen(pb, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	K = open(pk, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!tap_ok(A >= 0 && B >= 0 && K >= 0 && cache_of(A) && cache_of(B), "%s: open", spec))
		goto out;
	size_t page = cache_of(A)->conf.page;
	off_t span = (off_t)page * 12;
	for (size_t i = 0; i < sizeof wb; i++)
		wb[i] = (unsigned char)(rnd64() | 1);
	for (off_t o = 0; o < span; o += (off_t)page) /* the file: 12 pages written and flushed */
		call(2, o, page, -1);
	call(4, 0, 0, -1);
	fix_device(from_device);
	/* Page 0: a sieve hull that ends past the write before the armed one,
	 * then records 16 apart: the armed write leaves the first gap (holes).
	 * Page 1: records 10 apart inside a hull, the next one across its end:
	 * not armed (it leaves no gap). */
	static const off_t hull_at[2][7] = {{0, 8, 16, 4, 20, 36, 52}, {0, 8, 16, 2, 12, 22, 32}};
	for (int pg = 0; pg < 2; pg++) {
		call(0, (off_t)pg * (off_t)page, 8, -1); /* loaded: known */
		for (int k = 0; k < 7; k++)
			call(2, (off_t)pg * (off_t)page + hull_at[pg][k], 8, -1);
	}
	for (long i = 0; i < CALLS && !bad[0];) {
		int what = (int)rnd(12);
		if (what < 6) { /* a spell of strided reads */
			int shape = (int)rnd(8);
			off_t stride = shape == 0 ? (off_t)page : shape == 1 ? (off_t)page / 3 : (off_t)16 << rnd(8);
			stride += rnd(4) == 0 ? rnd(8) : 0;
			size_t n = (size_t)(1 + rnd(stride < MAXREC ? stride : MAXREC));
			if (shape == 7) /* sequential */
				stride = (off_t)n;
			off_t off = rnd(span + (off_t)page);
			int kind = (int)rnd(2), len = (int)(50 + rnd(400));
			int turn = (int)rnd(2 * len); /* where the length changes, if it does */
			if (rnd(3) == 0) /* bytes written over the spell's first reads: a page held in part */
				call(2, off + (off_t)rnd((size_t)stride), (size_t)(stride < 4096 ? stride : 4096) * (1 + rnd(12)), i);
			for (int k = 0; k < len && i < CALLS && !bad[0]; k++, i++, off += stride) {
				if (k == turn) /* to the stride (a run from the next read on), or another */
					n = rnd(2) && stride <= MAXREC ? (size_t)stride : (size_t)(1 + rnd(MAXREC));
				call(kind, off, n, i);
				if (rnd(200) == 0) /* now and then, a write far away: evictions */
					call(2, span + 4 * (off_t)page + rnd(8 * (off_t)page), MAXREC, i);
				if (rnd(300) == 0) /* or one in the pages ahead */
					call(2, off + (off_t)page + rnd((off_t)page), 1 + (size_t)rnd(MAXREC), i);
				if (rnd(100) == 0) /* or a few bytes over the next reads */
					call(2, off + rnd(4 * stride), 1 + (size_t)rnd(16), i);
				if (rnd(200) == 0) /* the file cut short just past the next read, or in it */
					call(3, off + stride + (off_t)rnd(2 * n + 2), 0, i);
				if (rnd(200) == 0) /* or synced: the pages dropped */
					call(4, 0, 0, i);
			}
		} else if (what < 8) { /* a spell of strided writes: records, or one after the other */
			off_t stride = rnd(2) ? 0 : (off_t)16 << rnd(7);
			size_t n = (size_t)(1 + rnd(stride && stride < MAXREC ? stride : MAXREC));
			if (stride == 0)
				stride = (off_t)n;
			off_t off = rnd(span + (off_t)page);
			int kind = rnd(2) ? 2 : 6, len = (int)(50 + rnd(300));
			for (int k = 0; k < len && i < CALLS && !bad[0]; k++, i++, off += stride) {
				call(kind, off, n, i);
				if (rnd(60) == 0) /* a read between: it disarms the write */
					call((int)rnd(2), off - (off_t)rnd((size_t)stride + 1), 1 + (size_t)rnd(MAXREC), i);
				for (int j = 0, m = rnd(60) == 0 ? 4 : 0; j < m; j++) /* reads a page apart: */
					call(0, off + (off_t)(j + 1) * (off_t)page, 8, i); /* read-ahead moves pages */
				if (rnd(200) == 0) /* or a write far away: evictions */
					call(2, span + 4 * (off_t)page + rnd(8 * (off_t)page), MAXREC, i);
				if (rnd(200) == 0)
					call(4, 0, 0, i);
			}
		} else if (what == 8) { /* the file grows (past a probe at the end, too) */
			call(2, span + rnd((off_t)page), (size_t)(1 + rnd(MAXREC)), i++);
		} else if (what == 9) {
			call(3, span / 2 + rnd(span), 0, i++);
		} else if (what == 10) {
			call(4, 0, 0, i++);
		} else {
			call(5, rnd(span), 2 * page, i++);
		}
	}
	tap_ok(!bad[0], "%s%s: %d calls, A and B and the kernel agree%s%s", spec,
	       from_device ? ", from the device" : "", CALLS, bad[0] ? ": " : "", bad);
	tap_ok(steady_taken - s0 >= 50, "%s%s: %ld reads took the steady path", spec,
	       from_device ? ", from the device" : "", steady_taken - s0);
	tap_ok(hot_taken - h0 >= 50, "%s%s: %ld reads were the armed one", spec,
	       from_device ? ", from the device" : "", hot_taken - h0);
	tap_ok(hotw_taken - w0 >= 50, "%s%s: %ld writes were the armed one", spec,
	       from_device ? ", from the device" : "", hotw_taken - w0);
	if (!bad[0] && fffsync(A) == 0 && fffsync(B) == 0) { /* what the files hold, read by the kernel */
		off_t end = lseek(K, 0, SEEK_END);
		int same = end == lseek(A, 0, SEEK_END) && end == lseek(B, 0, SEEK_END);
		for (off_t o = 0; same && o < end; o += (off_t)sizeof rb[0]) {
			ssize_t want = pread(K, rb[2], sizeof rb[0], o);
			same = want > 0 && pread(ffio_fd_get(A)->file->fd, rb[0], sizeof rb[0], o) == want &&
			       pread(ffio_fd_get(B)->file->fd, rb[1], sizeof rb[0], o) == want &&
			       memcmp(rb[0], rb[2], (size_t)want) == 0 && memcmp(rb[1], rb[2], (size_t)want) == 0;
		}
		tap_ok(same, "%s%s: the files hold the same bytes", spec, from_device ? ", from the device" : "");
	}
out:
	if (A >= 0)
		ffclose(A);
	if (B >= 0)
		ffclose(B);
	if (K >= 0)
		close(K);
	A = B = K = -1;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;

	fake_clock = 1; /* the device's verdict is the test's (fix_device), the same for A and B */
	tap_tmpdir(dir, sizeof dir, "ffio-ra-steady");
	snprintf(pa, sizeof pa, "%s/a", dir);
	snprintf(pb, sizeof pb, "%s/b", dir);
	snprintf(pk, sizeof pk, "%s/k", dir);
	tap_diag("seed %llu", (unsigned long long)seed);
	for (int s = 0; s < NSPECS; s++)
		for (int dev = 0; dev < 2; dev++)
			run(specs[s], seed + 31 * (uint64_t)s + (uint64_t)dev, dev);
	unlink(pa);
	unlink(pb);
	unlink(pk);
	rmdir(dir);
	return tap_done();
}
