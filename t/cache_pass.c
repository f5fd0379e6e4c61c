/* t/cache_pass.c -- a request that every layer hands down unchanged goes
 * to the kernel from the core (struct ffio_layer's passes, stack.c): a
 * file written by several processes (FFIO_FILE_SHARED) has its cache
 * step aside from the first write, and while the cache holds no page each
 * write after it is one kernel call, made as the program made it (a
 * pwritev of three buffers is one request below, not one per buffer),
 * counted by the cache and by the bottom, its bytes in the file as the
 * call returns.  A page loaded for a read ends it: a write into that page
 * goes the cache's way, and the read after it sees the new bytes.  With
 * the pages dropped the writes pass again.  The glue's flags changing
 * (sieving, whose writes around are locked) send the next write the full
 * way, and the one after passes only once the cache could pass it again.
 * Every byte is checked against the same writes made with plain calls. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio.h"
#include "ffio_ext.h"
#include "kernel_view.h"
#include "tap.h"

#define REC 256
#define STRIDE 4096
#define SPEC "cache:64k:4:0"

static char dir[4096], path[4200], ref[4200];

/* Record k's bytes: its number and a pattern of it. */
static void record(char *buf, long k)
{
	for (size_t i = 0; i < REC; i++)
		buf[i] = (char)('a' + (k * 5 + (long)i) % 26);
	snprintf(buf, REC, "record %ld", k);
}

/* Counts of fd's layer at index i (0: the cache; 1: the bottom). */
static long long count_of(int fd, int i, int bytes)
{
	struct ffio_stats st[4];
	int n = ffgetstats(fd, st, 4);
	if (n != 2)
		return -1;
	return (long long)(bytes ? st[i].bytes[FFIO_STAT_WRITE] : st[i].count[FFIO_STAT_WRITE]);
}

/* Record k at k * STRIDE, as a pwritev of three buffers (half, nothing,
 * half), through fd and into the reference. */
static int put(int fd, long k)
{
	char buf[REC];
	record(buf, k);
	struct iovec iov[3] = {{buf, REC / 2}, {buf, 0}, {buf + REC / 2, REC / 2}};
	return pwritev(fd, iov, 3, (off_t)k * STRIDE) == REC && kernel_pwrite(ref, buf, REC, (off_t)k * STRIDE) == REC;
}

/* The kernel holds record k already? */
static int in_kernel(long k)
{
	char want[REC], got[REC];
	record(want, k);
	return kernel_pread(path, got, REC, (off_t)k * STRIDE) == REC && memcmp(got, want, REC) == 0;
}

static struct ffio_file *file_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? ffio_file_find_inode(st.st_dev, st.st_ino) : NULL;
}

int main(void)
{
	tap_tmpdir(dir, sizeof dir, "cache_pass");
	snprintf(path, sizeof path, "%s/shared.dat", dir);
	snprintf(ref, sizeof ref, "%s/ref", dir);
	int r = open(ref, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, SPEC);
	struct ffio_file *f = fd >= 0 ? file_of(fd) : NULL;
	if (r < 0 || fd < 0 || !f || close(r) != 0)
		tap_skip_all("cannot open the test files");
	ffio_file_set_flag(f, FFIO_FILE_SHARED, 1);

	/* The first write steps aside, each buffer a request of its own
	 * (the cache's way); every write after it passes. */
	enum { N = 600 };
	int ok = 1;
	long k;
	for (k = 0; k < N && ok; k++)
		ok = put(fd, k) && in_kernel(k);
	tap_ok(ok, "%d records of %d B at a stride of %d, each in the kernel as its call returns", N, REC, STRIDE);
	tap_is(count_of(fd, 1, 0), N + 1, "%d requests below: the first write's two buffers, then one per call", N + 1);
	tap_is(count_of(fd, 1, 1), (long long)N * REC, "their bytes, counted by the bottom");
	tap_is(count_of(fd, 0, 1), (long long)N * REC, "and by the cache");

	/* A page loaded for a read: writes into it take the cache's way. */
	char buf[REC], want[REC];
	tap_ok(ffpread(fd, buf, 16, 0) == 16 && memcmp(buf, "record 0", 8) == 0, "a read of record 0");
	long long below = count_of(fd, 1, 0);
	record(want, 7 * N); /* new bytes for record 1, in the same page */
	struct iovec iov[3] = {{want, REC / 2}, {want, 0}, {want + REC / 2, REC / 2}};
	tap_is(pwritev(fd, iov, 3, STRIDE), REC, "a pwritev into the page cached for reading");
	tap_ok(kernel_pwrite(ref, want, REC, STRIDE) == REC, "(and into the reference)");
	tap_is(count_of(fd, 1, 0) - below, 2, "goes the cache's way: one request per buffer, not passed");
	tap_ok(ffpread(fd, buf, REC, STRIDE) == REC && memcmp(buf, want, REC) == 0,
	       "and a read of it returns the new bytes");

	/* The pages dropped: writes pass again. */
	tap_is(ffio_file_invalidate(f), 0, "the cache's pages dropped");
	below = count_of(fd, 1, 0);
	ok = 1;
	for (k = N + 16; k < N + 116 && ok; k++)
		ok = put(fd, k);
	tap_ok(ok, "100 more records");
	tap_is(count_of(fd, 1, 0) - below, 100, "one request each: passed again");

	/* Sieving turned on: the full way; off again: the first write the
	 * full way, then passed. */
	ffio_file_set_flag(f, FFIO_FILE_SIEVE, 1);
	below = count_of(fd, 1, 0);
	ok = put(fd, N + 200) && put(fd, N + 201);
	tap_ok(ok && count_of(fd, 1, 0) - below == 4, "with sieving on, two writes the full way (%lld requests)",
	       count_of(fd, 1, 0) - below);
	ffio_file_set_flag(f, FFIO_FILE_SIEVE, 0);
	below = count_of(fd, 1, 0);
	ok = put(fd, N + 202) && put(fd, N + 203);
	tap_ok(ok && count_of(fd, 1, 0) - below == 3, "sieving off: the first write the full way, the next passed "
	       "(%lld requests)", count_of(fd, 1, 0) - below);

	tap_is(ffclose(fd), 0, "close");
	tap_ok(kernel_same(path, ref), "the file is the reference, byte for byte");
	unlink(path);
	unlink(ref);
	rmdir(dir);
	return tap_done();
}
