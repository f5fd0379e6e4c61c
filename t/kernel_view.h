/* t/kernel_view.h -- the file as the kernel has it, for tests that check
 * what reached the file system from inside a process using ffio, or
 * change it as another process would: raw
 * system calls, which ffio leaves to the kernel for an open and for a
 * descriptor it does not manage (an open() of a file ffio has open would
 * join its cache, as it must; ffio(7), SEMANTICS). */
#ifndef FFIO_KERNEL_VIEW_H
#define FFIO_KERNEL_VIEW_H

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One pread64 or pwrite64 (sysno) of path's bytes [off, off + n), by
 * the kernel alone: the count or -1. */
static inline ssize_t kernel_at(const char *path, int flags, long sysno, void *buf, size_t n, off_t off)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = syscall(sysno, fd, buf, n, off);
	syscall(SYS_close, fd);
	return r;
}

static inline ssize_t kernel_pread(const char *path, void *buf, size_t n, off_t off)
{
	return kernel_at(path, O_RDONLY, SYS_pread64, buf, n, off);
}

/* As another process without ffio would write. */
static inline ssize_t kernel_pwrite(const char *path, const void *buf, size_t n, off_t off)
{
	return kernel_at(path, O_WRONLY, SYS_pwrite64, (void *)buf, n, off);
}

/* Do the kernel's files a and b hold the same bytes, the same length? */
static inline int kernel_same(const char *a, const char *b)
{
	static char x[1 << 16], y[1 << 16];
	for (off_t off = 0;;) {
		ssize_t n = kernel_pread(a, x, sizeof x, off), m = kernel_pread(b, y, sizeof y, off);
		if (n != m || n < 0 || memcmp(x, y, (size_t)n) != 0)
			return 0;
		if (n == 0)
			return 1;
		off += n;
	}
}

#endif
