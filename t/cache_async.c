/* t/cache_async.c -- the cache's asynchronous write-behind and read-ahead
 * over uring (and over sys, where the same requests complete at once):
 * a page whose write is in flight is never modified in place, errors of
 * completed requests reach the next write, fsync or close exactly once,
 * fork with requests in flight (the child never writes the parent's data),
 * strided read-ahead fetching only the records' bytes, and a file written
 * sequentially in pieces that do not fit the pages going below once. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

#define PG 4096

static char dir[] = "/tmp/ffio-cache-async-XXXXXX";
static char path[300];

/* The file as the system sees it (plain calls): n bytes at 0, or -1. */
static ssize_t disk(void *buf, size_t n)
{
	return kernel_pread(path, buf, n, 0);
}

/* Complete whatever is in flight at the bottom of fd's stack. */
static void reap_bottom(int fd)
{
	struct ffio_file *f = ffio_fd_file(fd);
	struct ffio_layer *b = f->top;
	while (b->below)
		b = b->below;
	struct ffio_layer above = {.below = b, .file = f};
	pthread_mutex_lock(&f->lock);
	ffio_below_reap(&above, UINT_MAX);
	pthread_mutex_unlock(&f->lock);
}

/* Bottom layer's counters. */
static struct ffio_stats bottom(int fd)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	struct ffio_stats none = {0};
	return n > 0 ? st[n - 1] : none;
}

/* Eight complete pages written behind, then half of each overwritten
 * while its write may be in flight. */
static void test_in_flight(const char *stack)
{
	enum { N = 8 };
	static char want[N * PG], got[N * PG];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, stack);
	int ok = fd >= 0;

	for (int k = 0; k < N && ok; k++) {
		memset(want + k * PG, 'A' + k, PG);
		ok = ffpwrite(fd, want + k * PG, PG, (off_t)k * PG) == PG;
	}
	for (int k = 0; k < N && ok; k++) {
		char half[PG / 2];
		memset(half, 'a' + k, sizeof half);
		ok = ffpwrite(fd, half, sizeof half, (off_t)k * PG) == (ssize_t)sizeof half;
	}
	tap_ok(ok, "%s: 8 pages, then half of each again", stack);
	reap_bottom(fd);
	ssize_t n = disk(got, sizeof got);
	int old = 1;
	for (ssize_t i = 0; i < n && old; i++) /* written behind: the first bytes, or nothing yet */
		old = got[i] == 'A' + i / PG || got[i] == 0;
	tap_ok(n >= 0 && old, "%s: what reached the file is the first writes' bytes (%zd)", stack, n);
	for (int k = 0; k < N; k++)
		memset(want + k * PG, 'a' + k, PG / 2);
	tap_is(ffflush(fd), 0, "%s: flush", stack);
	tap_ok(disk(got, sizeof got) == (ssize_t)sizeof got && memcmp(got, want, sizeof got) == 0,
	       "%s: the file holds the last bytes written, byte for byte", stack);
	memset(got, 0, sizeof got);
	tap_ok(ffpread(fd, got, sizeof got, 0) == (ssize_t)sizeof got && memcmp(got, want, sizeof got) == 0,
	       "%s: read back through the cache", stack);
	tap_is(ffclose(fd), 0, "%s: close", stack);
}

/* More than fits: 32 pages through an 8-page cache, each page in two
 * halves (the second half completes it), read back while writing. */
static void test_more_than_fits(const char *stack)
{
	enum { N = 32 };
	static char want[N * PG], got[N * PG];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, stack);
	int ok = fd >= 0;

	for (int i = 0; i < N * PG; i++)
		want[i] = (char)(i * 7 + i / PG);
	for (int k = 0; k < N && ok; k++) {
		ok = ffpwrite(fd, want + k * PG + PG / 2, PG / 2, (off_t)k * PG + PG / 2) == PG / 2 &&
		     ffpwrite(fd, want + k * PG, PG / 2, (off_t)k * PG) == PG / 2;
		if (ok && k >= 4) { /* a page written a while ago, probably evicted */
			char b[100];
			ok = ffpread(fd, b, sizeof b, (off_t)(k - 4) * PG + 1000) == sizeof b &&
			     memcmp(b, want + (k - 4) * PG + 1000, sizeof b) == 0;
		}
	}
	tap_ok(ok, "%s: 32 pages through 8, read-your-writes", stack);
	tap_is(ffclose(fd), 0, "%s: close", stack);
	tap_ok(disk(got, sizeof got) == (ssize_t)sizeof got && memcmp(got, want, sizeof got) == 0,
	       "%s: 32 pages byte for byte", stack);
}

/* A file written sequentially in 3000-byte pieces: only pages the
 * application filled whole go behind early, so every byte goes below
 * once and no page in more than one request (a page whose bytes merely
 * reached the end of the file went early, then its rest later: 28
 * requests for 15 pages). */
static void test_growing(const char *stack)
{
	enum { LEN = 15 * PG, PIECE = 3000 };
	static char want[LEN], got[LEN];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, stack);
	int ok = fd >= 0;

	for (int i = 0; i < LEN; i++)
		want[i] = (char)(i * 11 + 3);
	for (int at = 0; at < LEN && ok; at += PIECE) {
		int n = LEN - at < PIECE ? LEN - at : PIECE;
		ok = ffwrite(fd, want + at, (size_t)n) == n;
	}
	tap_ok(ok, "%s: 60 KiB written in 3000-byte pieces", stack);
	tap_is(fffsync(fd), 0, "%s: fsync", stack);
	tap_is((long long)bottom(fd).bytes[FFIO_STAT_WRITE], LEN, "%s: every byte went below once", stack);
	long long reqs = (long long)bottom(fd).count[FFIO_STAT_WRITE];
	tap_ok(reqs >= 1 && reqs <= LEN / PG, "%s: in %lld requests, at most one per page", stack, reqs);
	tap_is(ffclose(fd), 0, "%s: close", stack);
	tap_ok(disk(got, sizeof got) == LEN && memcmp(got, want, LEN) == 0, "%s: the file byte for byte", stack);
}

/* One write below fails (ENOSPC) after three: the error reaches exactly
 * one later call; the file holds our bytes or holes, never other bytes. */
static void test_error(const char *stack)
{
	enum { N = 24 };
	static char want[N * PG], got[N * PG];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, stack);
	int errors = 0, other = 0;

	for (int i = 0; i < N * PG; i++)
		want[i] = (char)('0' + i % 61);
	for (int k = 0; k < N; k++) {
		ssize_t r = ffpwrite(fd, want + k * PG, PG, (off_t)k * PG);
		if (r < 0 && errno == ENOSPC)
			errors++;
		else if (r != PG)
			other++;
	}
	int rc = fffsync(fd);
	if (rc < 0 && errno == ENOSPC)
		errors++;
	else if (rc != 0)
		other++;
	rc = ffclose(fd);
	if (rc < 0 && errno == ENOSPC)
		errors++;
	else if (rc != 0)
		other++;
	tap_ok(errors == 1 && other == 0, "%s: ENOSPC reported once (%d times, %d other)", stack, errors, other);
	ssize_t n = disk(got, sizeof got);
	int clean = n >= 0;
	for (ssize_t i = 0; i < n && clean; i++)
		clean = got[i] == want[i] || got[i] == 0;
	tap_ok(clean, "%s: the file holds our bytes or holes (%zd bytes)", stack, n);
}

/* fork while write-behind and read-ahead are in flight. */
static void test_fork(const char *stack)
{
	enum { N = 8 };
	static char page[PG], got[N * PG];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, stack);
	int go[2], status = 0, ok = fd >= 0;

	for (int k = 0; k < N && ok; k++) {
		memset(page, 'P', PG);
		ok = ffpwrite(fd, page, PG, (off_t)k * PG) == PG;
	}
	ok = ok && ffpwrite(fd, "old!", 4, 0) == 4 && pipe(go) == 0;
	tap_ok(ok, "%s: writes in flight before fork", stack);
	if (!ok)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		char b[PG];
		for (int k = 0; k < N; k++) /* the child reads (read-ahead) and closes */
			if (ffpread(fd, b, 100, (off_t)k * PG) != 100)
				_exit(4);
		_exit(ffclose(fd) == 0 ? 0 : 2);
	}
	close(go[0]);
	tap_is(disk(got, 4), 4, "%s: fork flushed the parent's data", stack);
	tap_ok(memcmp(got, "old!", 4) == 0, "%s: the parent's bytes", stack);
	memset(page, 'Q', PG);
	for (int k = 0; k < N && ok; k++)
		ok = ffpwrite(fd, page, PG, (off_t)k * PG) == PG;
	tap_ok(ok && ffflush(fd) == 0, "%s: the parent rewrites everything and flushes", stack);
	tap_is(write(go[1], "x", 1), 1, "%s: let the child read and close", stack);
	close(go[1]);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child closed its copy", stack);
	ok = disk(got, sizeof got) == (ssize_t)sizeof got;
	for (int i = 0; i < N * PG && ok; i++)
		ok = got[i] == 'Q';
	tap_ok(ok, "%s: the child never wrote the parent's data", stack);
	tap_is(ffclose(fd), 0, "%s: parent close", stack);
}

/* 256-byte records at a 64 KiB stride: read-ahead fetches the records,
 * not whole pages; the bytes are right, also when whole pages are read
 * afterwards and when records are written in between. */
static void test_sparse(const char *stack)
{
	enum { REC = 256, STRIDE = 65536, N = 64 };
	static char file[N * STRIDE];
	char rec[REC];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (size_t i = 0; i < sizeof file; i++)
		file[i] = (char)(i * 13 + i / 4093);
	int ok = fd >= 0 && write(fd, file, sizeof file) == (ssize_t)sizeof file && close(fd) == 0;
	fd = ok ? ffopen(path, O_RDWR, 0, stack) : -1;
	ok = fd >= 0;
	for (int k = 0; k < N && ok; k++) {
		off_t off = (off_t)k * STRIDE + 1000;
		ok = ffpread(fd, rec, REC, off) == REC && memcmp(rec, file + off, REC) == 0;
		if (ok && k % 16 == 5) { /* write a record a little ahead, and read it */
			off_t w = off + 3 * STRIDE + 100;
			memset(file + w, 'W', 50);
			ok = ffpwrite(fd, file + w, 50, w) == 50 && ffpread(fd, rec, REC, w - 100) == REC &&
			     memcmp(rec, file + w - 100, REC) == 0;
		}
	}
	tap_ok(ok, "%s: strided records read back byte for byte", stack);
	struct ffio_stats st = bottom(fd);
	tap_ok(st.bytes[FFIO_STAT_READ] < 16 * 65536, "%s: %" PRIu64 " bytes read below for %d records",
	       stack, st.bytes[FFIO_STAT_READ], N);
	static char all[N * STRIDE];
	ok = ffpread(fd, all, sizeof all, 0) == (ssize_t)sizeof all && memcmp(all, file, sizeof all) == 0;
	for (int k = 0; k < N && ok; k++) { /* pages partly valid, read whole */
		off_t off = (off_t)k * STRIDE + 7;
		ok = ffpread(fd, all, 5000, off) == 5000 && memcmp(all, file + off, 5000) == 0;
	}
	tap_ok(ok, "%s: then whole pages, byte for byte", stack);
	tap_is(ffclose(fd), 0, "%s: close", stack);
	ok = disk(all, sizeof all) == (ssize_t)sizeof all && memcmp(all, file, sizeof all) == 0;
	tap_ok(ok, "%s: the file after close", stack);
}

int main(void)
{
	static const char *const stacks[] = {"cache:4k:8:2, uring:2", "cache:4k:8:2, sys"};
	static const char *const errstacks[] = {"cache:4k:8:2, fault.once:write:ENOSPC:3, uring:2",
						"cache:4k:8:2, fault.once:write:ENOSPC:3, sys"};
	static const char *const sparse[] = {"cache:64k:64:32, uring:64", "cache:64k:64:32, sys"};

	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	snprintf(path, sizeof path, "%s/f", dir);
	setenv("FF_IO_LOGFILE", "/dev/null", 1);
	tap_plan(2 * (4 + 3 + 2 + 8 + 7 + 6));
	for (int i = 0; i < 2; i++) {
		test_in_flight(stacks[i]);
		test_more_than_fits(stacks[i]);
		test_error(errstacks[i]);
		test_fork(stacks[i]);
		test_sparse(sparse[i]);
		test_growing(stacks[i]);
	}
	unlink(path);
	rmdir(dir);
	return tap_failed ? 1 : 0;
}
