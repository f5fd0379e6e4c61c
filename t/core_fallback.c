/* t/core_fallback.c -- the wrappers' fallbacks: before the C library's
 * functions are known (ffio_real.NAME still NULL, as while dlsym calls
 * back into a wrapper), a wrapper makes the system call itself, and its
 * failure must reach the program as the kernel's errno.  Each check
 * empties one entry of the table, makes a call the kernel refuses, and
 * puts the entry back. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

#define WITHOUT(name, call, want_errno, what)                                          \
	do {                                                                           \
		__typeof__(ffio_real.name) kept = ffio_real.name;                      \
		ffio_real.name = NULL;                                                 \
		errno = 0;                                                             \
		long rc_ = (long)(call);                                               \
		int e_ = errno;                                                        \
		ffio_real.name = kept;                                                 \
		tap_ok(rc_ == -1 && e_ == want_errno, "%s without the C library's: -1 %s (got %ld %s)", \
		       what, strerrorname_np(want_errno), rc_, strerrorname_np(e_));   \
	} while (0)

int main(void)
{
	char c = 0;
	struct stat st;
	struct timespec bad = {0, -1};
	ffio_real_init();
	tap_plan(8);
	WITHOUT(close, close(-1), EBADF, "close");
	WITHOUT(read, read(-1, &c, 1), EBADF, "read");
	WITHOUT(pwrite, pwrite(-1, &c, 1, 0), EBADF, "pwrite");
	WITHOUT(lseek, lseek(-1, 0, SEEK_SET), EBADF, "lseek");
	WITHOUT(fstat, fstat(-1, &st), EBADF, "fstat");
	WITHOUT(dup, dup(-1), EBADF, "dup");
	WITHOUT(openat, open("/nonexistent-ffio/x", O_RDONLY), ENOENT, "open");
	WITHOUT(nanosleep, nanosleep(&bad, NULL), EINVAL, "nanosleep");
	return tap_done();
}
