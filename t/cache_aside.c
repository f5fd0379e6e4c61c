/* t/cache_aside.c -- the cache steps aside for small writes it cannot gain
 * on (layers/cache/aside.c): records at a stride that leaves gaps make one
 * request each whether cached or not, so after a window of write-backs
 * showing that, writes go straight below (the kernel has each record as
 * its call returns) and the event layer's summary says so; writes that
 * would merge (each beginning where the last ended) bring the cache back;
 * pages cached for reading learn of the writes that went around; .sieve
 * never steps aside; a writev's empty element goes around as nothing
 * (it had failed with EIO); and the file always holds exactly the bytes written,
 * checked against the same writes made with plain system calls. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

#define REC 256
#define STRIDE 4096
#define NREC 4096 /* 16 MiB of span: 256 pages of 64 KiB through a cache of 4 */

static char dir[4096], path[4200], ref[4200], logpath[4200];

/* Record k's bytes: its number and a pattern of it. */
static void record(char *buf, long k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('A' + (k * 7 + (long)i) % 26);
	snprintf(buf, n, "rec %ld", k);
}

/* Writes that reached the bottom layer of fd's stack. */
static long long below_writes(int fd)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	return n > 0 ? (long long)st[n - 1].count[FFIO_STAT_WRITE] : -1;
}

/* The kernel holds record k (REC bytes at off)? */
static int on_disk(long k, off_t off, size_t n)
{
	char want[REC * 2], got[REC * 2];
	record(want, k, n);
	return kernel_pread(path, got, n, off) == (ssize_t)n && memcmp(got, want, n) == 0;
}

/* The file and the reference made with plain calls are the same. */
static int same_as_ref(void)
{
	return kernel_same(path, ref);
}

/* An empty reference file. */
static int ref_reset(void)
{
	int fd = open(ref, O_RDWR | O_CREAT | O_TRUNC, 0644);
	return fd >= 0 && close(fd) == 0;
}

/* Write record k at off, through fd and into the reference. */
static int put(int fd, long k, off_t off, size_t n)
{
	char buf[REC * 2];
	record(buf, k, n);
	return ffpwrite(fd, buf, n, off) == (ssize_t)n && kernel_pwrite(ref, buf, n, off) == (ssize_t)n;
}

static void strided_then_sequential(const char *spec, int sieve)
{
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	int ok = fd >= 0 && ref_reset();
	long k;

	tap_ok(ok, "%s: open", spec);
	for (k = 0; k < NREC && ok; k++)
		ok = put(fd, k, (off_t)k * STRIDE, REC);
	tap_ok(ok, "%s: %d records of %d B at a stride of %d written", spec, NREC, REC, STRIDE);
	if (sieve) {
		tap_ok(!on_disk(NREC - 1, (off_t)(NREC - 1) * STRIDE, REC),
		       "%s: the last record is still cached (.sieve never steps aside)", spec);
	} else {
		tap_ok(on_disk(NREC - 1, (off_t)(NREC - 1) * STRIDE, REC),
		       "%s: the last record is in the file already: the cache stepped aside", spec);
		long cached = 0;
		for (long j = 0; j < NREC; j++)
			cached += !on_disk(j, (off_t)j * STRIDE, REC);
		tap_ok(cached > 0 && cached <= 4 * 16, "%s: %ld records still cached (at most its 4 pages)", spec, cached);
		tap_is(below_writes(fd), NREC - cached, "%s: one request for every other record", spec);
	}

	/* Sequential records of 256 B after the span: they would merge. */
	off_t base = (off_t)NREC * STRIDE;
	long long before = below_writes(fd);
	for (long j = 0; j < 1024 && ok; j++)
		ok = put(fd, NREC + j, base + j * REC, REC);
	tap_ok(ok, "%s: 1024 sequential records after it", spec);
	if (!sieve) {
		tap_ok(!on_disk(NREC + 1023, base + 1023 * REC, REC),
		       "%s: the last of them is cached: the cache took writes in again", spec);
	}
	tap_is(ffflush(fd), 0, "%s: flush", spec);
	/* (aside: a window of 256 went around before the cache took them in;
	 * the strided records still cached went below meanwhile, one request
	 * each: at most 4 pages of 16) */
	tap_ok(below_writes(fd) - before <= (sieve ? 8 : 1024 / 2),
	       "%s: they and the rest went below in %lld requests, not one each", spec, below_writes(fd) - before);
	tap_is(ffclose(fd), 0, "%s: close", spec);
	tap_ok(same_as_ref(), "%s: the file is the reference, byte for byte", spec);
}

/* Pages cached for reading, then written around: reads see the writes. */
static void cached_pages_learn(void)
{
	const char *spec = "cache:64k:4:0";
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	int ok = fd >= 0 && ref_reset();
	char buf[REC], want[REC];
	long k;

	for (k = 0; k < NREC / 2 && ok; k++) /* steps aside */
		ok = put(fd, k, (off_t)k * STRIDE, REC);
	ok = ok && ffflush(fd) == 0;
	/* read a page: cached clean */
	ok = ok && ffpread(fd, buf, REC, 0) == REC;
	long long before = below_writes(fd);
	for (k = 0; k < 16 && ok; k++) /* page 0's records again, new bytes */
		ok = put(fd, NREC + k, (off_t)k * STRIDE, REC);
	tap_ok(ok && below_writes(fd) - before == 16, "writes into a page cached for reading go around (%lld)",
	       below_writes(fd) - before);
	int same = 1;
	for (k = 0; k < 16 && ok; k++) {
		record(want, NREC + k, REC);
		same &= ffpread(fd, buf, REC, (off_t)k * STRIDE) == REC && memcmp(buf, want, REC) == 0;
	}
	tap_ok(ok && same, "and reads of that page return them");
	tap_is(ffclose(fd), 0, "close");
	tap_ok(same_as_ref(), "the file is the reference, byte for byte");
}

/* The event layer above says when the cache stepped aside, and back. */
static void the_summary_says_so(void)
{
	const char *spec = "event.summary, cache:64k:4:0";
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	int ok = fd >= 0 && ref_reset();
	static char log[1 << 16];

	for (long k = 0; k < NREC && ok; k++)
		ok = put(fd, k, (off_t)k * STRIDE, REC);
	for (long j = 0; j < 1024 && ok; j++)
		ok = put(fd, NREC + j, (off_t)NREC * STRIDE + j * REC, REC);
	ok = ok && ffclose(fd) == 0;
	ssize_t n = kernel_pread(logpath, log, sizeof log - 1, 0);
	log[n > 0 ? n : 0] = '\0';
	tap_ok(ok && strstr(log, "note: cache:64k:4:0: small writes go around it from write ") != NULL,
	       "the summary notes that the cache stepped aside");
	tap_ok(strstr(log, "note: cache:64k:4:0: writes taken in again from write ") != NULL,
	       "and that it took writes in again");
	if (!ok || !strstr(log, "taken in again"))
		tap_diag("log: %s", log);
}

/* A writev with an empty element, where writes go around the cache
 * (write-through, or stepped aside): the others are written, no error. */
static void empty_element(const char *spec, int step_aside)
{
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	int ok = fd >= 0 && ref_reset();
	char a[REC], b[REC];

	for (long k = 0; step_aside && k < NREC / 2 && ok; k++)
		ok = put(fd, k, (off_t)k * STRIDE, REC);
	record(a, 1, REC);
	record(b, 2, REC);
	struct iovec iov[3] = {{a, REC}, {b, 0}, {b, REC}};
	off_t at = (off_t)NREC * STRIDE;
	ok = ok && ffseek(fd, at, SEEK_SET) == at;
	ssize_t r = ok ? writev(fd, iov, 3) : -1;
	tap_is(r, 2 * REC, "%s: a writev of %d, 0 and %d bytes%s writes %d", spec, REC, REC,
	       step_aside ? " (stepped aside)" : "", 2 * REC);
	ok = ok && kernel_pwrite(ref, a, REC, at) == REC && kernel_pwrite(ref, b, REC, at + REC) == REC;
	tap_ok(ok && ffclose(fd) == 0 && same_as_ref(), "%s: the file is the reference, byte for byte", spec);
}

int main(void)
{
	tap_tmpdir(dir, sizeof dir, "cache_aside");
	snprintf(path, sizeof path, "%s/a.dat", dir);
	snprintf(ref, sizeof ref, "%s/ref", dir);
	snprintf(logpath, sizeof logpath, "%s/log", dir);
	setenv("FF_IO_LOGFILE", logpath, 1);
	strided_then_sequential("cache:64k:4:0", 0);
	strided_then_sequential("cache.sieve:64k:4:0", 1);
	cached_pages_learn();
	the_summary_says_so();
	empty_element("cache.wt:64k:4:0", 0);
	empty_element("cache:64k:4:0", 1);
	unlink(path);
	unlink(ref);
	unlink(logpath);
	rmdir(dir);
	return tap_done();
}
