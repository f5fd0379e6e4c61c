/* t/core_hints.c -- hints set on an open file by glue that knows more than
 * the spec: FFIO_FILE_WRITETHROUGH (MPI atomic mode) makes a cache write
 * through; cleared, write-behind resumes. */
#include "config.h"
#include <fcntl.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

/* Writes that reached the bottom layer (the last statistics entry). */
static long long writes_below(int fd)
{
	struct ffio_stats st[FFIO_MAX_LAYERS];
	int n = ffgetstats(fd, st, FFIO_MAX_LAYERS);
	return n > 0 ? (long long)st[n - 1].count[FFIO_STAT_WRITE] : -1;
}

int main(void)
{
	char path[] = "/tmp/ffio-core-hints-XXXXXX";
	int tmp = mkstemp(path), fd;
	struct ffio_file *f;

	if (tmp < 0)
		return 99;
	close(tmp);
	tap_plan(8);
	fd = ffopen(path, O_RDWR | O_TRUNC, 0644, "cache:64k:4:1, sys");
	tap_ok(fd >= 0 && (f = ffio_fd_file(fd)) != NULL, "open over cache");
	tap_is(ffpwrite(fd, "abc", 3, 0), 3, "a cached write");
	tap_is(writes_below(fd), 0, "stays in the cache");
	ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, 1);
	tap_is(ffpwrite(fd, "def", 3, 100), 3, "a write in write-through mode");
	tap_ok(writes_below(fd) >= 1, "reaches the file at once (%lld writes below)", writes_below(fd));
	long long before = writes_below(fd);
	ffio_file_set_flag(f, FFIO_FILE_WRITETHROUGH, 0);
	tap_is(ffpwrite(fd, "ghi", 3, 200), 3, "write-behind again");
	tap_is(writes_below(fd), before, "nothing more below until a flush");
	tap_is(ffclose(fd), 0, "close");
	unlink(path);
	return tap_done();
}
