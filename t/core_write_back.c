/* t/core_write_back.c -- when ffio writes back and forgets a file's clean
 * data without being asked (a message heard, a second open, the file
 * grown behind the cache), or a read of whole pages writes back the
 * dirty ones first, and the write-back fails: the clean data is still
 * forgotten (the next read shows what the kernel has), the read succeeds,
 * and the failure is kept for close, never lost.  The write-back fails through a
 * fault layer under the cache; the other writer is the kernel alone. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

#define PAGE 4096
#define SPEC "cache:4k:4:0, fault:op=write:errno=EIO"

static char path[64];

/* A file of two pages of 'A'; ffio's descriptor, its second page read
 * and cached, then a byte of the first written (dirty, not yet below). */
static int cached_and_dirty(void)
{
	static char a[2 * PAGE];
	char got[4];
	if (path[0])
		unlink(path);
	memset(a, 'A', sizeof a);
	snprintf(path, sizeof path, "/tmp/ffio-core-wb-XXXXXX");
	int tmp = mkstemp(path);
	if (tmp < 0 || write(tmp, a, sizeof a) != (ssize_t)sizeof a || close(tmp) < 0)
		return -1;
	int ff = ffopen(path, O_RDWR, 0, SPEC);
	if (ff < 0 || ffpread(ff, got, sizeof got, PAGE) != (ssize_t)sizeof got || got[0] != 'A' ||
	    ffpwrite(ff, "x", 1, 0) != 1)
		return -1;
	return ff;
}

/* What the kernel has at PAGE changes to BBBB; then event(); then ffio's
 * read there. */
static char changed_then(int ff, void (*event)(void))
{
	char got[4] = "?";
	if (kernel_pwrite(path, "BBBB", 4, PAGE) != 4)
		return '!';
	event();
	if (ffpread(ff, got, sizeof got, PAGE) != (ssize_t)sizeof got)
		return '?';
	return got[0];
}

/* close: -1 EIO (the failed write-back), as a number to compare. */
static int close_errno(int ff)
{
	errno = 0;
	int rc = ffclose(ff);
	return rc == -1 ? errno : rc == 0 ? 0 : -1;
}

/* The byte goes in with a raw write: a write ffio sees would tell, and
 * write back first by itself. */
static void pipe_read(void)
{
	int p[2];
	char c = 'm';
	if (pipe(p) < 0 || syscall(SYS_write, p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
		tap_diag("pipe: no byte");
	close(p[0]);
	close(p[1]);
}

/* The second descriptor's close comes first: it reports the error (once,
 * through any descriptor of the file). */
static int second_close_errno = -1;
static void second_open(void)
{
	int fd = ffopen(path, O_RDWR, 0, SPEC);
	if (fd < 0)
		tap_diag("second open: %s", strerror(errno));
	second_close_errno = close_errno(fd);
}

int main(void)
{
	int ff;
	tap_plan(12);

	ff = cached_and_dirty();
	tap_is(changed_then(ff, pipe_read), 'B', "a message heard, write-back failing: the kernel's bytes");
	tap_is(close_errno(ff), EIO, "close reports the failed write-back");

	ff = cached_and_dirty();
	tap_is(changed_then(ff, second_open), 'B', "a second open, write-back failing: the kernel's bytes");
	tap_is(second_close_errno, EIO, "the second descriptor's close reports the failed write-back");
	tap_is(close_errno(ff), 0, "the first's close: reported once");

	/* The file grows behind the cache: a short read at the end the
	 * cache knows looks again and finds the new bytes. */
	char got[8] = "";
	ff = cached_and_dirty();
	tap_ok(ff >= 0 && kernel_pwrite(path, "CCCC", 4, 2 * PAGE) == 4, "the kernel appends CCCC");
	tap_is(ffpread(ff, got, sizeof got, 2 * PAGE - 4), (ssize_t)sizeof got,
	       "a read across the old end, write-back failing: every byte");
	tap_ok(memcmp(got, "AAAACCCC", 8) == 0, "the bytes are the kernel's");
	tap_is(close_errno(ff), EIO, "close reports the failed write-back");

	/* A read of whole pages writes back the dirty ones in its range
	 * first: when that fails, the read still succeeds. */
	static char big[2 * PAGE];
	ff = cached_and_dirty();
	tap_is(ffpread(ff, big, sizeof big, 0), (ssize_t)sizeof big, "a read of two pages, write-back failing: every byte");
	tap_ok(big[0] == 'A' && big[PAGE] == 'A', "what the file has (the failed byte forgotten)");
	tap_is(close_errno(ff), EIO, "close reports the failed write-back");
	unlink(path);
	return tap_done();
}
