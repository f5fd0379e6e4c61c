/* t/cache_aside_read.c -- the cache steps aside for small reads it cannot
 * gain on (layers/cache/aside.c, reads): a page loaded whole for sparse
 * records costs more than the reads it serves would cost going around,
 * so after one page the records of absent pages are read straight from
 * below, one request each, and nothing is loaded ahead; dense reads keep
 * loading pages; reads that come back to bytes the cache can hold bring
 * it back; random records go around too; pages the cache holds (dirty
 * or loaded) are still read from, and every byte read is the kernel's
 * view of the same calls.
 *
 * The weighing is the cache's own (loads timed against a small read going
 * around); the clock is fake_clock.h's (1 us a reading: no load looks
 * like the device's) and the small read's cost is set, not timed, to 1 ns
 * (struct cache_aside's probe): what is tested is the decision's
 * arithmetic and its effects, not this machine's speed. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "cache.h"
#include "cache_of.h"
#include "fake_clock.h"
#include "kernel_view.h"
#include "tap.h"

#define PAGE 65536
#define FILE_LEN (4 << 20) /* 64 pages */
#define REC 100

static char dir[PATH_MAX / 2], path[PATH_MAX], logpath[PATH_MAX];
static unsigned char want[FILE_LEN];

/* Reads that reached the bottom layer of fd's stack (bytes: their bytes). */
static long long below(int fd, int bytes)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	return n <= 0 ? -1 : (long long)(bytes ? st[n - 1].bytes : st[n - 1].count)[FFIO_STAT_READ];
}
#define below_reads(fd) below(fd, 0)
#define below_bytes(fd) below(fd, 1)

/* The file, written with plain calls: a byte pattern that differs at
 * every offset within a record's reach. */
static int make_file(void)
{
	for (size_t i = 0; i < FILE_LEN; i++)
		want[i] = (unsigned char)((i * 131 + i / 251) & 0xff);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, want, FILE_LEN);
	return close(fd) == 0 && n == FILE_LEN ? 0 : -1;
}

/* Open the file through the cache, the small read's cost set to 1 ns. */
static int open_cached(const char *spec)
{
	int fd = ffopen(path, O_RDWR, 0, spec);
	struct cache *c = fd >= 0 ? cache_of(fd) : NULL;
	if (!c)
		return -1;
	c->aside.probes = READ_PROBES; /* no read is timed */
	for (int i = 0; i < READ_PROBES; i++) {
		c->aside.probe_ns[i] = 1;
		c->aside.probe_len[i] = 1;
	}
	return fd;
}

/* Read REC bytes every stride bytes over [from, to) through fd; 1 if each
 * is the kernel's (want). */
static int read_pass(int fd, off_t from, off_t to, off_t stride)
{
	unsigned char buf[REC];
	int good = 1;
	for (off_t off = from; off + REC <= to; off += stride) {
		ssize_t n = ffpread(fd, buf, REC, off);
		if (n != REC || memcmp(buf, want + off, REC) != 0) {
			tap_diag("read at %lld: %zd, %s", (long long)off, n, n == REC ? "other bytes" : strerror(errno));
			good = 0;
		}
	}
	return good;
}

static const char *log_text(void)
{
	static char log[1 << 16];
	ssize_t n = kernel_pread(logpath, log, sizeof log - 1, 0);
	log[n > 0 ? n : 0] = 0;
	return log;
}

/* Sparse records, 100 B at 4 KiB: 16 in a page of 64 KiB.  The first
 * page is loaded; at the second, the window (one page: the reads go
 * forward) says the 16 reads would have cost less going around, so the
 * other 63 pages' records are one request each. */
static void sparse(void)
{
	int fd = open_cached("event.summary, cache:64k:16:2");
	tap_ok(fd >= 0, "sparse: open");
	if (fd < 0)
		return;
	tap_ok(read_pass(fd, 0, FILE_LEN, 4096), "sparse: every record is the file's");
	long long n = below_reads(fd);
	tap_is(n, 1 + 63 * 16, "sparse: one page loaded, then a request for each record (%lld)", n);
	struct cache *c = cache_of(fd);
	tap_ok(c && c->aside.reads_on && c->pages.npages == 1, "sparse: reads are aside; one page held");

	/* A page the cache holds is read from; a dirty one too. */
	unsigned char w[300];
	memset(w, 'w', sizeof w);
	tap_is(ffpwrite(fd, w, sizeof w, 40 * PAGE + 4096), (ssize_t)sizeof w, "sparse: a write into page 40");
	memcpy(want + 40 * PAGE + 4096, w, sizeof w);
	long long before = below_reads(fd);
	tap_ok(read_pass(fd, 0, PAGE, 4096), "sparse: page 0 read again: its bytes");
	tap_is(below_reads(fd) - before, 0, "sparse: from the cache, no request");
	tap_ok(read_pass(fd, 40 * PAGE, 41 * PAGE, 4096), "sparse: page 40, partly written: the written bytes and the file's");
	tap_ok(ffclose(fd) == 0, "sparse: close");
	ssize_t k = kernel_pread(path, w, sizeof w, 40 * PAGE + 4096);
	tap_ok(k == (ssize_t)sizeof w && memcmp(w, want + 40 * PAGE + 4096, sizeof w) == 0,
	       "sparse: the write is in the file");
	tap_ok(strstr(log_text(), "note: cache:64k:16:2: small reads go around it from read 17 on: ") != NULL,
	       "sparse: the summary notes that the cache stepped aside for reads");
}

/* The first load of a process goes into memory never touched: its time
 * holds the faults of the first touch, which a buffer touched before
 * does not pay.  The reads go aside on it; once the pages are dropped (as
 * the MPI glue drops them at a barrier) a buffer touched before is free,
 * so the next small read loads again and the window is weighed anew, on
 * a load into that buffer; weighed so, the reads stay aside after the
 * next drop.  First in main: no cache of this process has closed, so
 * there is no spare chunk. */
static void first_touch(void)
{
	int fd = open_cached("event.summary, cache:64k:16:2");
	tap_ok(fd >= 0, "first touch: open");
	if (fd < 0)
		return;
	struct ffio_file *f = ffio_fd_get(fd)->file;
	struct cache *c = cache_of(fd);
	int good = read_pass(fd, 0, 2 * PAGE, 4096);
	long long n = below_reads(fd);
	tap_is(n, 1 + 16, "first touch: page 0 loaded, page 1's records around (%lld)", n);
	tap_ok(c->aside.reads_on && c->aside.on_fresh, "first touch: aside, weighed on a load into fresh memory");
	tap_is(ffio_file_invalidate(f), 0, "first touch: pages dropped");
	long long before = below_reads(fd);
	good &= read_pass(fd, 2 * PAGE, 3 * PAGE, 4096);
	n = below_reads(fd) - before;
	tap_is(n, 1, "first touch: page 2 loaded into the freed buffer, its records from it (%lld)", n);
	before = below_reads(fd);
	good &= read_pass(fd, 3 * PAGE, 4 * PAGE, 4096);
	n = below_reads(fd) - before;
	tap_ok(n == 16 && c->aside.reads_on && !c->aside.on_fresh,
	       "first touch: weighed again on that load: page 3's records around (%lld)", n);
	tap_is(ffio_file_invalidate(f), 0, "first touch: pages dropped again");
	before = below_reads(fd);
	good &= read_pass(fd, 4 * PAGE, 5 * PAGE, 4096);
	n = below_reads(fd) - before;
	tap_is(n, 16, "first touch: no load after that drop: page 4's records around (%lld)", n);
	tap_ok(good, "first touch: every record is the file's");
	tap_ok(ffclose(fd) == 0, "first touch: close");
	const char *log = log_text(), *note = "the loads weighed went into memory never touched before";
	const char *at = strstr(log, note);
	tap_ok(at && !strstr(at + 1, note), "first touch: the summary notes the load again, once");
}

/* Dense records, 100 B one after another: a page serves 655 reads, which
 * would cost more going around than its load: pages are loaded. */
static void dense(void)
{
	int fd = open_cached("cache:64k:16:2");
	tap_ok(fd >= 0, "dense: open");
	if (fd < 0)
		return;
	tap_ok(read_pass(fd, 0, 16 * PAGE, REC), "dense: every record is the file's");
	long long n = below_reads(fd);
	struct cache *c = cache_of(fd);
	tap_ok(n >= 1 && n <= 17, "dense: the pages loaded, a request each at most (%lld)", n);
	tap_ok(c && !c->aside.reads_on, "dense: reads are not aside");
	tap_ok(ffclose(fd) == 0, "dense: close");
}

/* Sparse records over 512 KiB, three times: in the first pass the cache
 * steps aside; the second comes back to bytes a cache of 16 pages holds,
 * with none of them dropped: the cache loads them again and stays. */
static void again(void)
{
	int fd = open_cached("event.summary, cache:64k:16:2");
	tap_ok(fd >= 0, "again: open");
	if (fd < 0)
		return;
	int good = read_pass(fd, 0, 8 * PAGE, 4096);
	long long first = below_reads(fd);
	good &= read_pass(fd, 0, 8 * PAGE, 4096);
	long long second = below_reads(fd) - first;
	good &= read_pass(fd, 0, 8 * PAGE, 4096);
	struct cache *c = cache_of(fd);
	tap_ok(good, "again: every record is the file's, three times");
	tap_is(first, 1 + 7 * 16, "again: first pass: one page, then each record around (%lld)", first);
	tap_ok(second >= 7 && second <= 16, "again: second pass: pages loaded, not 112 records (%lld requests)", second);
	tap_ok(c && !c->aside.reads_on && c->aside.reuse, "again: reads are loaded again, for good");
	tap_ok(ffclose(fd) == 0, "again: close");
	tap_ok(strstr(log_text(), "which came back to bytes the cache can hold") != NULL,
	       "again: the summary notes that the cache came back");
}

/* The same three passes, the clean data dropped before every read (as
 * after a message heard: PnetCDF's gets under OMPIO wait on a shared
 * semaphore at each set_view).  Coming back to bytes read before, the
 * reads would find nothing a cache could have kept: they stay around.
 * Taken for reuse, every read of 100 B loaded a page of 64 KiB. */
static void dropped(void)
{
	int fd = open_cached("cache:64k:16:2, event.summary");
	tap_ok(fd >= 0, "dropped: open");
	if (fd < 0)
		return;
	struct ffio_file *f = ffio_fd_get(fd)->file;
	unsigned char buf[REC];
	int good = 1, dropped = 1;
	for (int pass = 0; pass < 3; pass++)
		for (off_t off = 0; off + REC <= 8 * PAGE; off += 4096) {
			dropped &= ffio_file_invalidate(f) == 0;
			good &= ffpread(fd, buf, REC, off) == REC && memcmp(buf, want + off, REC) == 0;
		}
	tap_ok(good && dropped, "dropped: every record is the file's, three times, each after a drop");
	struct cache *c = cache_of(fd);
	long long n = below_reads(fd), b = below_bytes(fd);
	tap_is(n, 3 * 128, "dropped: a request per read (%lld)", n);
	tap_is(b, 4LL * PAGE + (3 * 128 - 4) * REC, "dropped: the window's 4 pages, then the records alone (%lld bytes)", b);
	tap_ok(c && c->aside.reads_on && !c->aside.reuse, "dropped: reads stay aside");
	tap_ok(ffclose(fd) == 0, "dropped: close");
	/* Going around, nothing written: the size is not asked below (it was,
	 * after each drop: a statx a read) */
	const char *at = log_text(), *last = NULL;
	while ((at = strstr(at, "summary: ")) != NULL) /* this file's summary: the last one */
		last = at++;
	at = last ? strstr(last, "\n  size ") : NULL;
	long sizes = -1;
	if (!at || sscanf(at, " size %ld", &sizes) != 1)
		sizes = at ? -1 : 0;
	tap_ok(sizes >= 0 && sizes <= 8, "dropped: the size asked below %ld times for 384 reads", sizes);
}

/* The three passes again, the clean data dropped before each pass (as
 * after a barrier: ROMIO's reads of a rank's blocks, iteration after
 * iteration): 128 reads between two drops, in 8 pages the cache can
 * hold, which pages loaded for them would have served.  The cache loads
 * again, for good, at the second pass. */
static void dropped_dense(void)
{
	int fd = open_cached("cache:64k:16:2");
	tap_ok(fd >= 0, "dropped, dense: open");
	if (fd < 0)
		return;
	struct ffio_file *f = ffio_fd_get(fd)->file;
	int good = 1;
	long long at[3];
	for (int pass = 0; pass < 3; pass++) {
		good &= ffio_file_invalidate(f) == 0;
		at[pass] = below_reads(fd);
		good &= read_pass(fd, 0, 8 * PAGE, 4096);
	}
	long long third = below_reads(fd) - at[2], second = at[2] - at[1];
	struct cache *c = cache_of(fd);
	tap_ok(good, "dropped, dense: every record is the file's, three times");
	tap_ok(second >= 7 && second <= 16 && third >= 7 && third <= 16,
	       "dropped, dense: the second and third passes load pages (%lld and %lld requests, not 128)", second, third);
	tap_ok(c && !c->aside.reads_on && c->aside.reuse, "dropped, dense: reads are loaded again, for good");
	tap_ok(ffclose(fd) == 0, "dropped, dense: close");
}

/* count records of REC bytes at random offsets (xorshift from seed: a
 * fixed sequence) through fd; 1 if each is the kernel's (want). */
static int random_pass(int fd, int count, uint64_t seed)
{
	unsigned char buf[REC];
	uint64_t x = seed;
	int good = 1;
	for (int i = 0; i < count; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		off_t off = (off_t)(x % (FILE_LEN - REC));
		good &= ffpread(fd, buf, REC, off) == REC && memcmp(buf, want + off, REC) == 0;
	}
	return good;
}

/* Records at random offsets (a fixed sequence), forward and back: after
 * a window of 4 loads the records go around, and a page that holds a
 * record fetched alone is not filled whole for the next record in it. */
static void random_records(void)
{
	int fd = open_cached("cache:64k:16:2");
	tap_ok(fd >= 0, "random: open");
	if (fd < 0)
		return;
	tap_ok(random_pass(fd, 4000, 88172645463325252u), "random: every record is the file's");
	long long b = below_bytes(fd);
	tap_ok(b >= 4000LL * REC && b < 4000LL * REC + 16LL * PAGE,
	       "random: %lld bytes read below: the records, and a few pages", b);
	tap_ok(ffclose(fd) == 0, "random: close");
}

/* Random records over a file the cache can hold (64 pages of 64 KiB),
 * read again and again: aside after the first window, then back for good
 * as soon as the reads come back to bytes read before.  A single long step
 * forward (half of all random steps) is not a stride: had it been taken
 * for one, such reads would have fetched their records alone into pages
 * taken from others, and the pages so dropped kept the cache from coming
 * back: every read went around until the retry, 4096 reads later. */
static void random_fits(void)
{
	int fd = open_cached("cache:64k:64:0");
	tap_ok(fd >= 0, "random, fits: open");
	if (fd < 0)
		return;
	tap_ok(random_pass(fd, 3000, 2463534242u), "random, fits: every record is the file's");
	struct cache *c = cache_of(fd);
	long long n = below_reads(fd);
	tap_ok(c && c->aside.reuse && !c->aside.reads_on, "random, fits: loaded again, for good");
	tap_ok(n <= 64 + 200, "random, fits: %lld requests below for 3000 reads (the pages, and the reads aside)", n);
	tap_ok(ffclose(fd) == 0, "random, fits: close");
}

/* .sieve steps aside for reads as well: they go around absent pages only,
 * and the pages its writes made are read from. */
static void sieve(void)
{
	int fd = open_cached("cache.sieve:64k:16:2");
	tap_ok(fd >= 0, "sieve: open");
	if (fd < 0)
		return;
	unsigned char w[REC];
	memset(w, 's', sizeof w);
	int good = 1;
	for (long k = 0; k < 64; k++) { /* a sieved write into every 16th record's page */
		off_t off = k * PAGE + 8192;
		good &= ffpwrite(fd, w, sizeof w, off) == (ssize_t)sizeof w;
		memcpy(want + off, w, sizeof w);
	}
	tap_ok(good, "sieve: writes into every page");
	tap_ok(read_pass(fd, 0, FILE_LEN, 4096), "sieve: every record is the file's or the write's");
	tap_ok(ffclose(fd) == 0, "sieve: close");
	unsigned char back[REC];
	tap_ok(kernel_pread(path, back, REC, 63 * PAGE + 8192) == REC && memcmp(back, w, REC) == 0,
	       "sieve: the last write is in the file");
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/ffio-aside-read.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof path, "%s/f.dat", dir);
	snprintf(logpath, sizeof logpath, "%s/log", dir);
	setenv("FF_IO_LOGFILE", logpath, 1);
	fake_clock = 1;
	if (make_file() < 0) {
		perror(path);
		return 1;
	}
	first_touch();
	sparse();
	dense();
	again();
	dropped();
	dropped_dense();
	random_records();
	random_fits();
	sieve();
	unlink(path);
	unlink(logpath);
	rmdir(dir);
	return tap_done();
}
