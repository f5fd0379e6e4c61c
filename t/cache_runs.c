/* t/cache_runs.c -- the cache following runs (TAP): sequential reads that
 * jump ahead between runs, as netCDF reads a worker's tile of a 3-D array.
 * Once two runs of the same length hold, a page miss fetches only what the
 * current run needs of the page, each run's bytes once, and the next runs
 * are hinted to the kernel; a run that goes on from an earlier run's bytes
 * (tiles side by side) loads the whole page from the device, or what
 * the page lacks from memory.  Hints are given only once
 * loads come from the device (a delay layer makes each read slow).
 * Reads, writes and truncation mixed with
 * runs are checked byte for byte against a shadow copy.  An event layer
 * below the cache traces every read and hint. */
#include "layer_common.h"
#include "fake_clock.h"

#define PAGE 262144
#define FILE_LEN (8 << 20)
#define READ 4096
#define NREAD 6                   /* reads in a run: a run of 24 KiB */
#define RUN (NREAD * READ)
#define STRIDE 98304              /* from run start to run start */
#define NRUNS 80
#define FETCH (RUN + RUN / 32)    /* what a run fetches: its length, a 32nd to spare */

/* Read run k (shifted by skew) in NREAD sequential reads; 1 if exact. */
static int read_run(int fd, int k, off_t skew)
{
	static unsigned char buf[READ];
	int good = 1;

	for (int i = 0; i < NREAD; i++) {
		off_t o = (off_t)k * STRIDE + skew + (off_t)i * READ;
		if (ffpread(fd, buf, READ, o) != READ || !lt_bytes_ok(buf, READ, o))
			good = 0;
	}
	return good;
}

/* The reads below in log, in order: offsets and sizes (at most max). */
static int reads_below(const char *log, long *off, long *size, int max)
{
	int n = 0;
	for (const char *p = log; (p = strstr(p, "trace: read off=")) != NULL && n < max; p++) {
		long res;
		if (sscanf(p, "trace: read off=%ld size=%ld res=%ld", &off[n], &size[n], &res) == 3 && res == size[n])
			n++;
		else
			return -1;
	}
	return n;
}

static void test_runs(const char *path)
{
	static long off[1024], size[1024];
	char needle[128];
	int fd, good = 1;

	fd = ffopen(path, O_RDONLY, 0, "cache:256k:32:4, event.trace, delay:1ms:0, sys");
	tap_ok(fd >= 0, "runs: ffopen");
	for (int k = 0; k < NRUNS; k++)
		good &= read_run(fd, k, 0);
	tap_ok(good, "runs: %d runs of %d KiB, %d KiB apart, read back exactly", NRUNS, RUN >> 10, STRIDE >> 10);
	tap_is(ffclose(fd), 0, "runs: ffclose");
	char *log = lt_log_new();
	int n = reads_below(log, off, size, 1024);
	tap_ok(n > 1, "runs: the reads below traced (%d)", n);
	tap_ok(n > 0 && off[0] == 0 && size[0] == PAGE, "runs: the first page loaded whole (the runs not known yet)");
	/* every later read below lies within one run's fetch, and each run
	 * from the fourth on is fetched once, whole: pieces that add up to
	 * FETCH bytes, split only at a page boundary */
	long got[NRUNS] = {0}, total = 0;
	int inside = 1;
	for (int i = 1; i < n; i++) {
		int k = (int)(off[i] / STRIDE);
		long s = (long)k * STRIDE;
		total += size[i];
		if (k < 3 || k >= NRUNS || off[i] < s || off[i] + size[i] > s + FETCH) {
			inside = 0;
			continue;
		}
		if (off[i] != s + got[k] || (got[k] > 0 && off[i] % PAGE != 0))
			inside = 0; /* not in order, or split elsewhere than at a page */
		got[k] += size[i];
	}
	tap_ok(inside, "runs: every later read below is a piece of one run's fetch, in order");
	int whole = 1;
	for (int k = 3; k < NRUNS; k++)
		whole &= got[k] == FETCH;
	tap_ok(whole, "runs: each run from the fourth on fetched once, %d bytes", FETCH);
	tap_ok(total + PAGE < FILE_LEN / 3, "runs: %ld bytes read below, not the %d of whole pages", total + PAGE,
	       FILE_LEN - FILE_LEN % PAGE);
	/* hints, once two loads were slow (the first page, run 3's fetch):
	 * each run from the fifth on hinted once, before its read */
	int hinted = 1, before = 1;
	for (int k = 4; k < NRUNS; k++) {
		snprintf(needle, sizeof needle, "trace: willneed off=%ld size=%d res=0", (long)k * STRIDE, FETCH);
		char rd[128];
		snprintf(rd, sizeof rd, "trace: read off=%ld ", (long)k * STRIDE);
		hinted &= lt_count(log, needle) == 1;
		const char *h = strstr(log, needle), *r = strstr(log, rd);
		before &= h && r && h < r;
	}
	tap_ok(hinted, "runs: each run from the fifth on hinted exactly once");
	tap_ok(before, "runs: each hint before the run's read");
	int hints = lt_count(log, "trace: willneed ");
	tap_ok(hints >= NRUNS - 4 && hints <= NRUNS - 4 + 4, "runs: at most AHEAD runs hinted past the last (%d hints)", hints);
	const char *last_on = NULL;
	for (const char *p = log; (p = strstr(p, "trace: advise normal")) != NULL; p++)
		last_on = p;
	tap_ok(last_on && strstr(last_on, "trace: advise random res=0"),
	       "runs: the kernel's read-ahead turned off once runs hold");
	free(log);

	/* the same runs from a file in memory: fetched the same way */
	fd = ffopen(path, O_RDONLY, 0, "cache:256k:32:4, event.trace, sys");
	good = fd >= 0;
	for (int k = 0; k < NRUNS; k++)
		good &= read_run(fd, k, 0);
	good &= ffclose(fd) == 0;
	tap_ok(good, "runs in memory: read back exactly");
	/* (whether hints follow depends on timing here: not asserted) */
	log = lt_log_new();
	n = reads_below(log, off, size, 1024);
	total = 0;
	for (int i = 0; i < n; i++)
		total += size[i];
	tap_ok(n > 0 && total < FILE_LEN / 3, "runs in memory: fetched along runs all the same (%ld bytes below)", total);
	free(log);
}

static int by_offset(const void *a, const void *b)
{
	const long *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Tiles side by side: a second pass reads the runs just after the first
 * pass's, going on from their bytes: each page the runs cross is wanted
 * whole.  From the device (a delay layer below) it is loaded whole, once;
 * a run's first bytes in a page it enters may come before.  From memory
 * only the gaps between the bytes the page holds are fetched: the second
 * pass's reads below are disjoint and none is a whole page, and then the
 * pages the runs cross are all in the cache.  The first pass is read
 * twice: the cache takes more than its first 2 pages only when pages it
 * gave up come back (cache_ghost_note), so the second time round it grows
 * to hold every page the runs cross. */
static void test_side_by_side(const char *path, int device)
{
	static long off[1024], size[1024], span[1024][2];
	static unsigned char buf[PAGE / 2];
	const char *how = device ? "side by side, from the device" : "side by side, in memory";
	int fd, good = 1, npages = NRUNS * STRIDE / PAGE;

	fake_clock = !device;
	fd = ffopen(path, O_RDONLY, 0,
		    device ? "cache:256k:32:4, event.trace, delay:1ms:0, sys" : "cache:256k:32:4, event.trace, sys");
	tap_ok(fd >= 0, "%s: ffopen", how);
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < NRUNS; k++)
			good &= read_run(fd, k, 0);
	free(lt_log_new());
	for (int k = 0; k < NRUNS; k++)
		good &= read_run(fd, k, RUN);
	tap_ok(good, "%s: both passes read back exactly", how);
	char *log = lt_log_new();
	int n = reads_below(log, off, size, 1024);
	free(log);
	if (!device) { /* every page the runs cross is in the cache now: read again, nothing below */
		for (int i = 0; i < 2 * npages; i++) /* (halves: a page or more goes around the cache) */
			good &= ffpread(fd, buf, PAGE / 2, (off_t)i * PAGE / 2) == PAGE / 2 &&
				lt_bytes_ok(buf, PAGE / 2, (off_t)i * PAGE / 2);
		log = lt_log_new();
		tap_ok(good && lt_count(log, "trace: read ") == 0, "%s: then the %d pages the runs cross are all cached",
		       how, npages);
		free(log);
	}
	tap_is(ffclose(fd), 0, "%s: ffclose", how);
	fake_clock = 0;
	if (device) {
		int whole = 0, at_page = 1, twice = 0;
		for (int i = 0; i < n; i++) {
			if (size[i] == PAGE && off[i] % PAGE == 0) {
				whole++;
				for (int j = 0; j < i; j++)
					twice += off[j] == off[i] && size[j] == PAGE;
			} else {
				at_page &= off[i] % PAGE == 0 && size[i] < FETCH;
			}
		}
		/* page 0 is whole since the first pass */
		tap_is(whole, npages - 1, "%s: each page the runs cross after the first loaded whole", how);
		tap_is(twice, 0, "%s: none twice", how);
		tap_ok(at_page && n - whole < npages, "%s: the other %d reads are runs entering a page", how, n - whole);
		return;
	}
	int whole = 0;
	for (int i = 0; i < n; i++) {
		span[i][0] = off[i], span[i][1] = off[i] + size[i];
		whole += size[i] >= PAGE;
	}
	qsort(span, (size_t)(n > 0 ? n : 0), sizeof span[0], by_offset);
	long at = 0, twice = 0;
	for (int i = 0; i < n; i++) {
		twice += span[i][0] < at;
		if (span[i][1] > at)
			at = span[i][1];
	}
	tap_ok(n > 0 && twice == 0 && whole == 0, "%s: the second pass's %d reads below are disjoint, none a whole page",
	       how, n);
}

/* Runs mixed with writes and truncation: every read checked against a
 * shadow copy of the file. */
static void test_mixed(const char *path)
{
	static unsigned char shadow[FILE_LEN], buf[READ];
	int fd, good = 1;
	off_t len = FILE_LEN;

	for (off_t o = 0; o < FILE_LEN; o++)
		shadow[o] = lt_byte_at(o);
	fd = ffopen(path, O_RDWR, 0, "cache:256k:32:4, event, sys");
	tap_ok(fd >= 0, "mixed: ffopen");
	for (int k = 0; k < NRUNS && good; k++) {
		for (int i = 0; i < NREAD; i++) {
			off_t o = (off_t)k * STRIDE + (off_t)i * READ;
			ssize_t want = o >= len ? 0 : (o + READ > len ? (ssize_t)(len - o) : READ);
			ssize_t r = ffpread(fd, buf, READ, o);
			if (r != want || memcmp(buf, shadow + o, (size_t)want) != 0) {
				tap_diag("read of run %d at %lld: %zd bytes, %zd wanted", k, (long long)o, r, want);
				good = 0;
			}
		}
		if (k % 7 == 3) { /* write into the gap after this run and into the next run */
			off_t w = (off_t)k * STRIDE + RUN + 100, n = STRIDE;
			if (w + n > len)
				n = len - w;
			if (n > 0) {
				for (off_t i = 0; i < n; i++)
					buf[i % READ] = shadow[w + i] = (unsigned char)(k + i * 7);
				for (off_t i = 0; i < n; i += READ) {
					off_t m = n - i < READ ? n - i : READ;
					for (off_t j = 0; j < m; j++)
						buf[j] = shadow[w + i + j];
					if (ffpwrite(fd, buf, (size_t)m, w + i) != m)
						good = 0;
				}
			}
		}
		if (k == 50) { /* cut the file inside a run ahead, then read on past it */
			len = (off_t)60 * STRIDE + RUN / 2;
			if (ffio_file_truncate(ffio_fd_file(fd), len) != 0)
				good = 0;
		}
	}
	tap_ok(good, "mixed: reads after writes into runs and gaps, and a truncation, match the shadow");
	tap_is(ffclose(fd), 0, "mixed: ffclose");
	/* what reached the file */
	int rfd = open(path, O_RDONLY);
	static unsigned char disk[FILE_LEN];
	ssize_t got = rfd >= 0 ? pread(rfd, disk, FILE_LEN, 0) : -1;
	if (rfd >= 0)
		close(rfd);
	tap_ok(got == (ssize_t)len && memcmp(disk, shadow, (size_t)len) == 0, "mixed: the file holds exactly the shadow's %lld bytes",
	       (long long)len);
}

int main(void)
{
	lt_setup("cache-runs");
	const char *path = lt_path("runs.dat");
	lt_make_file(path, FILE_LEN);
	free(lt_log_new());
	test_runs(path);
	test_side_by_side(path, 1);
	test_side_by_side(path, 0);
	test_mixed(path);
	return tap_done();
}
