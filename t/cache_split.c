/* t/cache_split.c -- large aligned writes over cache, uring with time
 * between them (the application computing): such a write is copied in
 * part and its last pages go below at once from the caller's buffer (over
 * O_DIRECT all of it is copied and written behind).
 * The file holds exactly the bytes written, in order, also where later
 * writes cover cached pages again, and reads through the cache agree. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ffio.h"
#include "tap.h"

#define MIB (1u << 20)
#define BLK (4 * MIB)
#define STEPS 12

static char dir[] = "/tmp/ffio-cache-split-XXXXXX";
static char path[300];

/* Stay away for about ms (busy, as computing): the cache writes behind. */
static void away(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
}

static void fill(char *b, size_t n, int step)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i / 4096 * 7 + (size_t)step * 31 + i % 251);
}

/* Paced 4 MiB writes over spec: new blocks, then blocks over what was
 * written two steps before; the caller's buffer is scribbled on after
 * each write.  Reads through the cache and the file agree with them. */
static void paced(const char *spec, char *buf, char *want, char *got)
{
	memset(want, 0, (size_t)STEPS * BLK);
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	if (fd < 0 && errno == EINVAL && strstr(spec, "direct")) {
		for (int i = 0; i < 4; i++)
			tap_skip("O_DIRECT not supported here");
		return;
	}
	int ok = fd >= 0;
	for (int s = 0; s < STEPS && ok; s++) {
		off_t at = s < 8 ? (off_t)s * BLK : (off_t)(s - 6) * BLK - MIB;
		away(3);
		fill(buf, BLK, s);
		ok = ffpwrite(fd, buf, BLK, at) == (ssize_t)BLK;
		memcpy(want + at, buf, BLK);
		memset(buf, 0x5a, BLK); /* the caller's buffer is its own again */
	}
	tap_ok(ok, "%s: 12 writes of 4 MiB each return their full count", spec);
	size_t size = 8 * (size_t)BLK;
	tap_ok(ffpread(fd, got, size, 0) == (ssize_t)size && memcmp(got, want, size) == 0,
	       "%s: reads through the cache see every byte written", spec);
	tap_ok(ffclose(fd) == 0, "close reports no error");
	int pfd = open(path, O_RDONLY);
	ssize_t r = pfd >= 0 ? pread(pfd, got, (size_t)STEPS * BLK, 0) : -1;
	tap_ok(r == (ssize_t)size && memcmp(got, want, size) == 0, "%s: the file holds exactly the bytes written (%zd)",
	       spec, r);
	if (pfd >= 0)
		close(pfd);
	unlink(path);
}

int main(void)
{
	tap_plan(10);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/f", dir);
	/* aligned, so that O_DIRECT stacks take the same path */
	char *buf = aligned_alloc(4096, BLK), *want = malloc((size_t)STEPS * BLK), *got = aligned_alloc(4096, (size_t)STEPS * BLK);
	if (!buf || !want || !got)
		return 1;
	paced("cache:1m:16:0, uring:64", buf, want, got);
	paced("cache.direct:1m:16:0, uring.direct:64", buf, want, got);

	/* A write whose length is not a multiple of the page, over a page that
	 * holds older dirty bytes: after fsync the file holds the newer ones
	 * (the split once sent the tail below and left the old bytes cached
	 * for a later flush to write over it). */
	const size_t small_page = 4096, len = 12 * small_page + 1019;
	const off_t old_at = 12 * (off_t)small_page + 97;
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:4k:64:0, uring:8");
	int ok = fd >= 0;
	for (int s = 0; s < 6 && ok; s++) { /* paced large writes: the cache learns its costs */
		away(3);
		fill(buf, 16 * small_page, s);
		ok = ffpwrite(fd, buf, 16 * small_page, (off_t)(16 + 16 * s) * (off_t)small_page) ==
		     (ssize_t)(16 * small_page);
	}
	ok = ok && ffpwrite(fd, "old bytes, older", 16, old_at) == 16;
	away(3);
	fill(buf, len, 9);
	ok = ok && ffpwrite(fd, buf, len, 0) == (ssize_t)len;
	memcpy(want, buf, len);
	ok = ok && fffsync(fd) == 0;
	tap_ok(ok, "paced writes, a small one, then a %zu-byte one over it, fsync", len);
	int pfd = open(path, O_RDONLY);
	ssize_t r = pfd >= 0 ? pread(pfd, got, len, 0) : -1;
	tap_ok(r == (ssize_t)len && memcmp(got, want, len) == 0, "the file holds the newer bytes");
	if (pfd >= 0)
		close(pfd);
	ffclose(fd);
	unlink(path);
	rmdir(dir);
	free(buf);
	free(want);
	free(got);
	return tap_done();
}
