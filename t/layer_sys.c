/* t/layer_sys.c -- buffered writes of the bottom layers (sys, and uring's
 * synchronous path) longer than 1 MiB go to the kernel in pieces of at
 * most 512 KiB, shorter ones in one call: exact call counts for one
 * buffer of 1 MiB and of 1.25 MiB + 1 and for a flushed cache run whose
 * vector entries straddle the piece boundaries, the bytes exact either way; a
 * piece cut short (RLIMIT_FSIZE) ends the call with the bytes written so
 * far; O_DIRECT writes stay whole.  On FUSE (TMPDIR on a FUSE mount: t/dfs.sh
 * runs it on its GlusterFS volume), whose writes go to the server as they
 * come, every write goes in one call. */
#include "layer_common.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/vfs.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

static int whole; /* the scratch directory is on FUSE */

#define PIECE (512 * 1024)
#define LEN (5 * PIECE / 2 + 1) /* 1.25 MiB + 1: three pieces */

static char want[LEN], got[LEN + 1];

static long long sys_writes(int fd)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	return n > 0 ? (long long)st[n - 1].count[FFIO_STAT_WRITE] : -1;
}

static int file_is(const char *path, const char *bytes, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r = fd >= 0 ? pread(fd, got, sizeof got, 0) : -1;
	if (fd >= 0)
		close(fd);
	return r == (ssize_t)n && memcmp(got, bytes, n) == 0;
}

static void test_one_buffer(const char *bottom)
{
	const char *p = lt_path("one.dat");
	int fd = ffopen(p, O_RDWR | O_CREAT | O_TRUNC, 0644, bottom);

	tap_is(ffpwrite(fd, want, 2 * PIECE, 0), 2 * PIECE, "%s: one write of 1 MiB", bottom);
	tap_is(sys_writes(fd), 1, "%s: went to the kernel in one call, as the program made it", bottom);
	tap_is(ffpwrite(fd, want, LEN, 0), LEN, "%s: one write of 1.25 MiB + 1", bottom);
	if (whole)
		tap_is(sys_writes(fd), 1 + 1, "%s: on FUSE, went to the kernel in one call", bottom);
	else
		tap_is(sys_writes(fd), 1 + 3, "%s: went to the kernel as 3 pieces", bottom);
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(p, want, LEN), "the file holds the bytes");
}

static void test_vector(const char *bottom)
{
	const char *p = lt_path("vec.dat");
	char spec[64];
	/* 3000-byte pages: the flushed run is one vector whose entries do not
	 * end on the 512 KiB boundaries */
	snprintf(spec, sizeof spec, "cache:3000:1024:0, %s", bottom);
	int fd = ffopen(p, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	int ok = 1;

	for (size_t at = 0; at < LEN && ok; at += 1000) { /* under a page: cached */
		size_t n = LEN - at < 1000 ? LEN - at : 1000;
		ok = ffpwrite(fd, want + at, n, (off_t)at) == (ssize_t)n;
	}
	tap_ok(ok, "1.25 MiB + 1 written in 1000-byte pieces into a cache of 3000-byte pages");
	tap_is(ffflush(fd), 0, "flush");
	/* over sys: one run of 1.25 MiB + 1, three pieces; over uring the cache
	 * writes its first 256 pages (768000 bytes) behind, one request of two
	 * SQEs, and the other 542721 bytes at once, under 1 MiB: one call; on
	 * FUSE, over sys, one call */
	int calls = strcmp(bottom, "sys") == 0 ? (whole ? 1 : 3) : 2;
	tap_is(sys_writes(fd), calls, "%s: the run of %d pages went to the kernel in %d requests", bottom,
	       (LEN + 2999) / 3000, calls);
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(p, want, LEN), "the file holds the bytes");
}

static void test_short_piece(void)
{
	const char *p = lt_path("short.dat");
	struct rlimit old, lim = {.rlim_cur = 700000, .rlim_max = RLIM_INFINITY};
	int fd = ffopen(p, O_RDWR | O_CREAT | O_TRUNC, 0644, "sys");

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0) {
		for (int i = 0; i < 4; i++)
			tap_skip("setrlimit failed");
		ffclose(fd);
		return;
	}
	tap_is(ffpwrite(fd, want, LEN, 0), 700000, "a write past the size limit returns what was written");
	errno = 0;
	tap_ok(ffpwrite(fd, want, 10, 700000) == -1 && errno == EFBIG, "the next one fails with EFBIG");
	setrlimit(RLIMIT_FSIZE, &old);
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(p, want, 700000), "the file holds the first 700000 bytes");
}

static void test_direct(void)
{
	const char *p = lt_path("direct.dat");
	int fd = ffopen(p, O_RDWR | O_CREAT | O_TRUNC, 0644, "sys.direct");
	void *buf = NULL;

	if (fd < 0 || posix_memalign(&buf, 4096, 2 * PIECE) != 0) {
		for (int i = 0; i < 4; i++)
			tap_skip("O_DIRECT not available here");
		if (fd >= 0)
			ffclose(fd);
		return;
	}
	memcpy(buf, want, 2 * PIECE);
	tap_is(ffpwrite(fd, buf, 2 * PIECE, 0), 2 * PIECE, "1 MiB with O_DIRECT");
	tap_is(sys_writes(fd), 1, "in one request");
	tap_is(ffclose(fd), 0, "close");
	tap_ok(file_is(p, want, 2 * PIECE), "the file holds the bytes");
	free(buf);
}

int main(void)
{
	struct statfs fs;
	lt_setup("layer-sys");
	whole = statfs(lt_dir, &fs) == 0 && (unsigned long)fs.f_type == FUSE_SUPER_MAGIC;
	if (whole)
		tap_diag("%s is on FUSE: long writes go in one call", lt_dir);
	for (size_t i = 0; i < LEN; i++)
		want[i] = (char)(i * 7 + i / 4093);
	tap_plan(2 * (6 + 5) + 4 + 4);
	test_one_buffer("sys");
	test_vector("sys");
	test_one_buffer("uring"); /* its synchronous path (or sys where no ring) */
	test_vector("uring");
	test_short_piece();
	test_direct();
	return tap_done();
}
