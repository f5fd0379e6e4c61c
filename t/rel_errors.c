/* t/rel_errors.c -- every error of a deferred write reaches the application:
 * a fault layer at each position of the stack (above the cache, under it,
 * between the cache and uring, under an event layer) fails writes with
 * ENOSPC, EIO, EDQUOT or EFBIG; the error must come back from the next
 * write, fsync or close of that file, exactly once for a one-shot fault,
 * and the bytes on disk must be bytes the application wrote.
 *
 * Scenarios per stack and errno:
 *   close:  small write (cached), close           -> close fails with it
 *   fsync:  small write, fsync, close             -> fsync fails, close 0
 *   evict:  one-page cache, a one-shot fault; write pages 0..3, fsync,
 *           close -> exactly one call fails with it; the file then holds
 *           the pattern except the failed range, which holds zeros (a hole:
 *           the failed data is dropped, never retried, never replaced).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio.h"
#include "tap.h"

#define PAGE 4096
#define NPAGES 4

static char dir[] = "/tmp/ffio-relerr.XXXXXX";
static char path[256];

static unsigned char pat(long o)
{
	return (unsigned char)(o * 7 + o / 251 + 1) | 1; /* never zero */
}

static const char *const errnames[] = {"ENOSPC", "EIO", "EDQUOT", "EFBIG"};
static const int errnums[] = {ENOSPC, EIO, EDQUOT, EFBIG};

/* The stacks; %s is the fault layer. */
static const char *const stacks[] = {
	"%s, cache:4k:1:0",
	"cache:4k:1:0, %s",
	"cache.sieve:4k:1:0, %s",
	"cache:4k:1:0, %s, uring:4",
	"event.summary, cache:4k:1:0, event.notrace, %s",
	"cache.wt:4k:1:0, %s",
	"%s, uring:4",
};

static int is_above_cache(const char *stack)
{
	return strncmp(stack, "%s", 2) == 0;
}

static void fill(unsigned char *b, long off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(off + (long)i);
}

/* Read the file back with plain calls; count bytes that are neither the
 * pattern nor (where allowed) zero. */
static long bad_bytes(long size, long *zeros)
{
	unsigned char b[PAGE * NPAGES];
	int fd = open(path, O_RDONLY);
	long bad = 0;
	ssize_t r;

	*zeros = 0;
	if (fd < 0) {
		tap_diag("  cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	r = read(fd, b, sizeof b);
	close(fd);
	if (r != size) {
		tap_diag("  the file has %zd bytes, expected %ld", r, size);
		return -1;
	}
	for (long i = 0; i < r; i++) {
		if (b[i] == 0)
			(*zeros)++;
		else if (b[i] != pat(i))
			bad++;
	}
	return bad;
}

static void scenario_close(const char *fmt, const char *stack, int e, const char *ename)
{
	unsigned char b[100];
	int fd = ffopen(path, O_CREAT | O_TRUNC | O_RDWR, 0644, stack);
	if (!tap_ok(fd >= 0, "%s: open", stack))
		return;
	fill(b, 0, sizeof b);
	ssize_t w = ffwrite(fd, b, sizeof b);
	int werr = errno;
	int c = ffclose(fd);
	int cerr = errno;
	if (is_above_cache(fmt) || strstr(fmt, "wt") || !strstr(fmt, "cache"))
		tap_ok(w == -1 && werr == e, "%s: %s at the write itself (nothing deferred)", stack, ename);
	else
		tap_ok(w == (ssize_t)sizeof b && c == -1 && cerr == e, "%s: %s deferred, reported by close (write %zd, close %d %s)",
		       stack, ename, w, c, c < 0 ? strerror(cerr) : "");
}

static void scenario_fsync(const char *stack, int e, const char *ename)
{
	unsigned char b[100];
	int fd = ffopen(path, O_CREAT | O_TRUNC | O_RDWR, 0644, stack);
	if (!tap_ok(fd >= 0, "%s: open", stack))
		return;
	fill(b, 0, sizeof b);
	ssize_t w = ffwrite(fd, b, sizeof b);
	int werr = errno;
	int s = fffsync(fd);
	int serr = errno;
	int c = ffclose(fd);
	if (w < 0) {
		tap_ok(werr == e && s == 0 && c == 0, "%s: %s: the write failed at once, fsync and close 0",
		       stack, ename);
		return;
	}
	tap_ok(s == -1 && serr == e && c == 0, "%s: %s reported by fsync, then close 0 (fsync %d %s, close %d)",
	       stack, ename, s, s < 0 ? strerror(serr) : "", c);
}

/* One-shot fault after two writes below: exactly one call reports it. */
static void scenario_evict(const char *stack_fmt, int e, const char *ename)
{
	char fault[64], stack[256];
	unsigned char b[PAGE];
	int fails = 0, other = 0;

	snprintf(fault, sizeof fault, "fault.once:write:%s:1", ename);
	snprintf(stack, sizeof stack, stack_fmt, fault);
	int fd = ffopen(path, O_CREAT | O_TRUNC | O_RDWR, 0644, stack);
	if (!tap_ok(fd >= 0, "%s: open", stack))
		return;
	for (int i = 0; i < 2 * NPAGES; i++) { /* half pages: they stay in the cache */
		const size_t h = PAGE / 2;
		fill(b, (long)i * (long)h, h);
		ssize_t w = ffpwrite(fd, b, h, (off_t)i * (off_t)h);
		if (w < 0) {
			if (errno == e)
				fails++;
			else
				other++;
			/* the application saw the error: it writes this piece again */
			if (ffpwrite(fd, b, h, (off_t)i * (off_t)h) != (ssize_t)h)
				other++;
		} else if (w != (ssize_t)h) {
			other++;
		}
	}
	if (fffsync(fd) < 0)
		*(errno == e ? &fails : &other) += 1;
	if (ffclose(fd) < 0)
		*(errno == e ? &fails : &other) += 1;
	tap_ok(fails == 1 && other == 0, "%s: %s reported exactly once (%d times, %d other errors)", stack,
	       ename, fails, other);
	long zeros, bad = bad_bytes(PAGE * NPAGES, &zeros);
	tap_ok(bad == 0, "%s: %s: the file holds only bytes written (%ld foreign bytes, %ld zero bytes dropped)",
	       stack, ename, bad, zeros);
}

int main(void)
{
	char stack[256], fault[64];
	int nstacks = (int)(sizeof stacks / sizeof stacks[0]);

	if (!mkdtemp(dir))
		tap_skip_all("cannot create a scratch directory");
	snprintf(path, sizeof path, "%s/f.dat", dir);
	for (int s = 0; s < nstacks; s++) {
		for (int k = 0; k < 4; k++) {
			snprintf(fault, sizeof fault, "fault:write:%s:0", errnames[k]);
			snprintf(stack, sizeof stack, stacks[s], fault);
			scenario_close(stacks[s], stack, errnums[k], errnames[k]);
			scenario_fsync(stack, errnums[k], errnames[k]);
			scenario_evict(stacks[s], errnums[k], errnames[k]);
		}
	}
	unlink(path);
	rmdir(dir);
	return tap_done();
}
