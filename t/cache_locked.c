/* t/cache_locked.c -- a program's own read-modify-write under a record
 * lock (ROMIO's data sieving: lock the extent, read it, modify it, write
 * it back, unlock): requests larger than the hit path's inside the range
 * the program holds locked reach the file directly, one request each, as
 * without ffio, and stay coherent with the cached pages (dirty bytes they
 * read are flushed first, cached bytes they overwrite take their bytes);
 * smaller requests, and requests outside the range or after the unlock,
 * go through the cache.  And a page loaded at the end of the file is one
 * request, not a second one that finds nothing.  Counts are those of the
 * bottom of the stack (ffgetstats); bytes are checked against the file. */
#include "config.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

#define PAGE (256 * 1024)
#define SPEC "cache:256k:8:0"
#define FILE_LEN (4 * PAGE)
#define PIECE (200 * 1000)  /* one request of the program's (> 32 KiB, < PAGE) */

static char path[300];

/* Requests (and bytes) that reached the bottom of fd's stack. */
static void below(int fd, long long *reads, long long *writes, long long *rbytes, long long *wbytes)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	*reads = n > 0 ? (long long)st[n - 1].count[FFIO_STAT_READ] : -1;
	*writes = n > 0 ? (long long)st[n - 1].count[FFIO_STAT_WRITE] : -1;
	if (rbytes)
		*rbytes = n > 0 ? (long long)st[n - 1].bytes[FFIO_STAT_READ] : -1;
	if (wbytes)
		*wbytes = n > 0 ? (long long)st[n - 1].bytes[FFIO_STAT_WRITE] : -1;
}

static int lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, F_SETLKW, &fl);
}

/* The file as the file system has it, compared with want. */
static int file_is(const char *want, size_t n)
{
	char *got = malloc(n + 1);
	ssize_t r = got ? kernel_pread(path, got, n + 1, 0) : -1;
	int same = r == (ssize_t)n && memcmp(got, want, n) == 0;
	free(got);
	return same;
}

static void fill(char *b, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + (i / 1000 + (size_t)seed) % 26);
}

int main(void)
{
	char dir[256];
	static char want[FILE_LEN], buf[FILE_LEN];
	long long r0, w0, r1, w1, rb0, rb1, wb0, wb1;

	tap_plan(18);
	tap_tmpdir(dir, sizeof dir, "cache-locked");
	snprintf(path, sizeof path, "%s/f", dir);
	fill(want, FILE_LEN, 0);
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (raw < 0 || pwrite(raw, want, FILE_LEN, 0) != FILE_LEN || close(raw) < 0)
		return 99;

	int fd = ffopen(path, O_RDWR, 0, SPEC);
	tap_ok(fd >= 0, "open over " SPEC);
	/* data sieving: lock, read, modify, write, unlock; small writes under
	 * the lock stay cached: one the read will need, one a write covers */
	int ok = lock(fd, F_WRLCK, 0, 0) == 0;
	ok = ok && ffpwrite(fd, "READ-ME", 7, 5000) == 7 && ffpwrite(fd, "STALE", 5, 2 * PAGE + 5000) == 5;
	memcpy(want + 5000, "READ-ME", 7);
	below(fd, &r0, &w0, &rb0, &wb0);
	tap_ok(ok && w0 == 0, "lock; two small writes into the cache");
	ok = ffpread(fd, buf, PIECE, 1000) == PIECE;
	below(fd, &r1, &w1, &rb1, NULL);
	tap_ok(ok && memcmp(buf, want + 1000, PIECE) == 0, "a read of %d bytes under the lock sees the cached dirty bytes",
	       PIECE);
	tap_ok(r1 - r0 == 1 && rb1 - rb0 == PIECE, "it is one read below of exactly its bytes (%lld, %lld bytes)",
	       r1 - r0, rb1 - rb0);
	tap_ok(w1 - w0 == 1, "the dirty bytes of its page went below first (%lld write)", w1 - w0);
	fill(buf, PIECE, 7);
	memcpy(want + 1000, buf, PIECE);
	below(fd, &r0, &w0, NULL, &wb0);
	ok = ffpwrite(fd, buf, PIECE, 1000) == PIECE;
	fill(buf, PIECE, 11);
	memcpy(want + 2 * PAGE, buf, PIECE);
	ok = ok && ffpwrite(fd, buf, PIECE, 2 * PAGE) == PIECE;
	below(fd, &r1, &w1, NULL, &wb1);
	tap_ok(ok && w1 - w0 == 2 && wb1 - wb0 == 2 * PIECE && r1 == r0,
	       "two writes under the lock are two writes below of their %d bytes each (%lld, %lld bytes)", PIECE,
	       w1 - w0, wb1 - wb0);
	tap_ok(file_is(want, FILE_LEN), "the file has them before the unlock");
	/* a small request under the lock is the cache's */
	below(fd, &r0, &w0, NULL, NULL);
	ok = ffpwrite(fd, "small", 5, 400000) == 5;
	memcpy(want + 400000, "small", 5);
	below(fd, &r1, &w1, NULL, NULL);
	tap_ok(ok && w1 == w0, "a write of 5 bytes under the lock stays in the cache");
	ok = lock(fd, F_UNLCK, 0, 0) == 0;
	below(fd, &r1, &w1, NULL, NULL);
	tap_ok(ok && w1 - w0 == 1, "the unlock writes it (%lld write); the overwritten dirty bytes are not written",
	       w1 - w0);
	tap_ok(file_is(want, FILE_LEN), "the file holds exactly what was written, in order");
	tap_ok(ffpread(fd, buf, FILE_LEN, 0) == FILE_LEN && memcmp(buf, want, FILE_LEN) == 0,
	       "reads through the cache agree");

	/* after the unlock, and outside a held range, the cache again */
	below(fd, &r0, &w0, &rb0, NULL);
	ok = ffpread(fd, buf, PIECE, PAGE + 1000) == PIECE && memcmp(buf, want + PAGE + 1000, PIECE) == 0;
	below(fd, &r1, &w1, &rb1, NULL);
	tap_ok(ok && rb1 - rb0 != PIECE, "unlocked, a read of %d bytes goes through the cache (%lld bytes below)",
	       PIECE, rb1 - rb0);
	ok = lock(fd, F_RDLCK, 3 * PAGE, 1000) == 0;
	/* (the lock dropped the clean pages and the read pattern with them: a
	 * large read with no pattern known would go around for that reason
	 * alone, t/cache_lone_read; a small read before it makes one) */
	ok = ok && ffpread(fd, buf, 10, 2 * PAGE - 10) == 10 && memcmp(buf, want + 2 * PAGE - 10, 10) == 0;
	below(fd, &r0, &w0, &rb0, NULL);
	ok = ok && ffpread(fd, buf, PIECE, 2 * PAGE) == PIECE && memcmp(buf, want + 2 * PAGE, PIECE) == 0;
	below(fd, &r1, &w1, &rb1, NULL);
	tap_ok(ok && rb1 - rb0 != PIECE, "so does one outside the range the program holds (%lld bytes below)",
	       rb1 - rb0);
	ok = lock(fd, F_UNLCK, 0, 0) == 0;
	tap_ok(ok && ffclose(fd) == 0, "unlock, close");

	/* a page loaded at the end of the file: one request */
	raw = open(path, O_RDWR | O_TRUNC);
	if (raw < 0 || pwrite(raw, want, 300000, 0) != 300000 || close(raw) < 0)
		return 99;
	/* (the delay layer, costing nothing here, counts the bytes asked for) */
	fd = ffopen(path, O_RDONLY, 0, "cache:1m:4:0, delay:0:0, sys");
	ok = fd >= 0 && ffpread(fd, buf, 1000, 299000) == 1000 && memcmp(buf, want + 299000, 1000) == 0;
	below(fd, &r0, &w0, NULL, NULL);
	tap_ok(ok && r0 == 1, "the last page of a 300000-byte file is loaded in one read below (%lld)", r0);
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8), asked = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(st[i].layer, "delay") == 0)
			asked = (int)st[i].bytes[FFIO_STAT_READ];
	tap_ok(asked == 300000, "it asks for the 300000 bytes there are, not the page's 1 MiB (%d)", asked);
	ok = ffpread(fd, buf, 1000, 300000) == 0;
	below(fd, &r1, &w1, NULL, NULL);
	tap_ok(ok && r1 == r0, "a read at its end asks nothing below (%lld)", r1 - r0);
	tap_ok(ffclose(fd) == 0, "close");
	unlink(path);
	rmdir(dir);
	return tap_done();
}
