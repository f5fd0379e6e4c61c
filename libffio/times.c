/* libffio/times.c -- the calls that set a file's times (futimens,
 * utimensat, utimes, futimes, lutimes, futimesat, utime): on a file ffio
 * holds, its cached writes go to the kernel first.  Without ffio they
 * reached the file before the call; written back after it, they would
 * move the modification time the program has just set (as cp -p does, a
 * program may set it on the file it wrote, then close it).  A failed
 * write-back is reported by the file's next write, fsync or close, as at
 * exec. */
#include "config.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <utime.h>
#include "ffio-internal.h"
#include "interpose.h"

static void flush_file(struct ffio_file *f)
{
	defer_error(f, IN_LIB(ffio_file_flush(f)));
}

/* The file behind descriptor fd, if ffio holds it. */
static void flush_fd(int fd)
{
	struct ffio_ofd *o = managed(fd);
	if (o != NULL)
		flush_file(o->file);
}

/* The file path names from dirfd (the link itself with nofollow), if
 * ffio holds it; one stat more while ffio holds any file. */
static void flush_path(int dirfd, const char *path, int nofollow)
{
	struct stat st;

	if (ffio_in_lib || path == NULL || !ffio_any_open() || !ffio_real_ready() ||
	    ffio_kernel_stat_at(dirfd, path, nofollow ? AT_SYMLINK_NOFOLLOW : 0, &st) != 0)
		return;
	struct ffio_file *f = file_of_stat(&st);
	if (f != NULL) {
		flush_file(f);
		ffio_file_put(f);
	}
}

FFIO_EXPORT int futimens(int fd, const struct timespec times[2])
{
	NEED(futimens, NOSYS);
	flush_fd(fd);
	return ffio_real.futimens(fd, times);
}

/* A path the C library declares nonnull, which a program may still pass
 * as NULL: the test for it must not be optimised away. */
static const char *maybe_null(const char *path)
{
	__asm__("" : "+r"(path));
	return path;
}

/* path NULL is the C library's EINVAL; "" with AT_EMPTY_PATH is dirfd. */
FFIO_EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	const char *name = maybe_null(path);
	NEED(utimensat, NOSYS);
	if (name != NULL && (flags & AT_EMPTY_PATH) && name[0] == '\0')
		flush_fd(dirfd);
	else if (name != NULL)
		flush_path(dirfd, name, flags & AT_SYMLINK_NOFOLLOW);
	return ffio_real.utimensat(dirfd, path, times, flags);
}

FFIO_EXPORT int futimes(int fd, const struct timeval tv[2])
{
	NEED(futimes, NOSYS);
	flush_fd(fd);
	return ffio_real.futimes(fd, tv);
}

FFIO_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
	NEED(utimes, NOSYS);
	flush_path(AT_FDCWD, path, 0);
	return ffio_real.utimes(path, tv);
}

FFIO_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	NEED(lutimes, NOSYS);
	flush_path(AT_FDCWD, path, 1);
	return ffio_real.lutimes(path, tv);
}

FFIO_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	const char *name = maybe_null(path); /* NULL: dirfd itself */
	NEED(futimesat, NOSYS);
	if (name == NULL)
		flush_fd(dirfd);
	else
		flush_path(dirfd, name, 0);
	return ffio_real.futimesat(dirfd, path, tv);
}

FFIO_EXPORT int utime(const char *path, const struct utimbuf *times)
{
	NEED(utime, NOSYS);
	flush_path(AT_FDCWD, path, 0);
	return ffio_real.utime(path, times);
}
