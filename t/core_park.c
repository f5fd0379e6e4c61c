/* t/core_park.c -- where ffio's own descriptors go (ffio_fd_park): each to
 * the highest free number below min(the soft RLIMIT_NOFILE, 1024), one
 * after another, whatever the soft limit (above 1024, the kernel would
 * hand out 1024 and up to a search that stops at the first number it
 * finds); none when there is no room above the descriptor. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

static int park_new(void)
{
	int fd = ffio_real.dup(0);
	return fd < 0 ? -errno : ffio_fd_park(fd);
}

/* The highest free number below top, found one by one. */
static int free_below(int top)
{
	for (int n = top - 1; n > 2; n--)
		if (fcntl(n, F_GETFD) < 0 && errno == EBADF)
			return n;
	return -1;
}

static int set_soft(rlim_t n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < n)
		return -1;
	rl.rlim_cur = n;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	ffio_fd_top_refresh();
	return 0;
}

int main(void)
{
	ffio_init();
	ffio_real_init();
	if (set_soft(4096) < 0)
		tap_skip_all("cannot set the soft RLIMIT_NOFILE to 4096");
	tap_plan(8);
	int want = free_below(1024);
	tap_is(park_new(), want, "soft limit 4096: the first at the highest free number below 1024 (%d)", want);
	want = free_below(1024);
	tap_is(park_new(), want, "the second at the next one down (%d), not 1024", want);
	want = free_below(1024);
	tap_is(park_new(), want, "the third at the next one down (%d)", want);
	tap_ok(fcntl(1024, F_GETFD) < 0 && errno == EBADF, "nothing at 1024");
	tap_is(set_soft(1024), 0, "soft limit 1024");
	want = free_below(1024);
	tap_is(park_new(), want, "the next below the others (%d)", want);
	tap_is(set_soft(100), 0, "soft limit 100");
	want = free_below(100);
	tap_is(park_new(), want, "the next at the highest free number below 100 (%d)", want);
	return tap_done();
}
